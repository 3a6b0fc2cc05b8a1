/* fuzz_csv.c - libFuzzer harness: the input bytes as a CSV file through
 * data_load_csv_stream (data_load_csv without the fopen). Invariants: see
 * fuzz_data_util.h. */

#include "fuzz_data_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_data_input(data, size, data_load_csv_stream, "fuzz.csv");
  return 0;
}

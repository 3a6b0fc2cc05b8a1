/* fuzz_libsvm.c - libFuzzer harness: the input bytes as a LIBSVM file through
 * data_load_libsvm_stream (data_load_libsvm without the fopen). Invariants: see
 * fuzz_data_util.h. */

#include "fuzz_data_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_data_input(data, size, data_load_libsvm_stream, "fuzz.svm");
  return 0;
}

/* fuzz_scenario.c - libFuzzer harness: the input bytes as a scenario file, through what
 * `dtsim run FILE` does before the engine starts (defaults, scenario_load_stream,
 * scenario_validate). Invariants besides not crashing:
 *  - an error is one non-empty line starting with the file name;
 *  - without NUL bytes, reading the bytes as a string gives the same outcome, error
 *    message and values as reading them as a file;
 *  - a scenario that validates round-trips: its effective values written as an INI file
 *    ("[section]" lines, "key=value") and as --set assignments parse and validate again
 *    into the same values. */

#include "fuzz_scenario_util.h"

#define NAME "fuzz.ini"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  scenario a, b;
  char err[512], err2[512];
  FILE *f = fuzz_stream(data, size);
  scenario_defaults(&a);
  int rc = scenario_load_stream(&a, f, NAME, err, sizeof err);
  fclose(f);

  if (!memchr(data, '\0', size)) {
    char *text = malloc(size + 1);
    FUZZ_CHECK(text != NULL, "out of memory");
    memcpy(text, data, size);
    text[size] = '\0';
    scenario_defaults(&b);
    int rc2 = scenario_load_string(&b, text, NAME, err2, sizeof err2);
    free(text);
    FUZZ_CHECK(rc == rc2, "file and string readers disagree: %d (%s) and %d (%s)", rc, rc ? err : "",
               rc2, rc2 ? err2 : "");
    if (rc != 0)
      FUZZ_CHECK(strcmp(err, err2) == 0, "file and string readers report '%s' and '%s'", err, err2);
    else
      check_same(&a, &b, "file and string readers");
  }
  if (rc != 0) {
    FUZZ_CHECK(rc == -1, "scenario_load_stream returned %d", rc);
    fuzz_check_error(err, NAME ":");
    return 0;
  }
  rc = scenario_validate(&a, NAME, err, sizeof err);
  if (rc != 0) {
    FUZZ_CHECK(rc == -1, "scenario_validate returned %d", rc);
    fuzz_check_error(err, NAME ": ");
    return 0;
  }
  check_round_trip(&a, 1);
  return 0;
}

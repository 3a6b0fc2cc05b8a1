#ifndef TESTS_SCENARIO_UTIL_H
#define TESTS_SCENARIO_UTIL_H
/* scenario_util.h - what check_scenario.c and check_scenario_validate.c share: scenario
 * files written to /tmp and read back, and Downpour's section of a scenario. */

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algorithms/downpour.h"
#include "sim/scenario.h"

#define ERRLEN 1024

/* Downpour's section of scenario s, writable, as its descriptor's key table fills it. */
#define DPW(s) ((downpour_params *)algorithm_params_mut(&(s), &downpour_algorithm))

/* Writes text to a fresh file under /tmp; path receives its name. */
static inline void write_temp(const char *text, char *path, size_t len)
{
  snprintf(path, len, "/tmp/check_scenario_XXXXXX");
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  FILE *f = fdopen(fd, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

/* Loads text from a temporary file; returns scenario_load_file's result. */
static inline int load_temp(scenario *s, const char *text, char *path, size_t pathlen, char *err)
{
  write_temp(text, path, pathlen);
  int rc = scenario_load_file(s, path, err, ERRLEN);
  unlink(path);
  return rc;
}

#endif

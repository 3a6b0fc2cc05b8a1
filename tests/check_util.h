#ifndef TESTS_CHECK_UTIL_H
#define TESTS_CHECK_UTIL_H
/* check_util.h - the Check boilerplate every suite (check_ and sim_) shares: a TCase made
 * from a list of tests, and a main that runs one suite and fails if a test failed (Check's
 * money example). */

#include <check.h>
#include <stddef.h>
#include <stdlib.h>

/* Adds to s a TCase `name` holding the n tests, with a 60 s timeout (Check's default
 * of 4 s is too short for the larger numeric cases on a shared, sanitized build). */
static inline void check_add_tcase(Suite *s, const char *name, const TTest *const *tests, size_t n)
{
  TCase *tc = tcase_create(name);
  tcase_set_timeout(tc, 60);
  for (size_t i = 0; i < n; i++)
    tcase_add_test(tc, tests[i]);
  suite_add_tcase(s, tc);
}

/* ADD_TCASE(s, "name", test_a, test_b, ...) */
#define ADD_TCASE(s, name, ...)                                          \
  do {                                                                   \
    const TTest *tests_[] = {__VA_ARGS__};                               \
    check_add_tcase(s, name, tests_, sizeof tests_ / sizeof tests_[0]); \
  } while (0)

/* The main of a suite's binary: runs suite_fn() in fork mode (Check reads CK_RUN_CASE,
 * CK_FORK and CK_DEFAULT_TIMEOUT itself), exits with EXIT_FAILURE if any test failed (a
 * failure count could wrap to 0 as an exit status). */
#define CHECK_MAIN(suite_fn)                     \
  int main(void)                                 \
  {                                              \
    SRunner *sr = srunner_create(suite_fn());    \
    srunner_run_all(sr, CK_NORMAL);              \
    int failed = srunner_ntests_failed(sr);      \
    srunner_free(sr);                            \
    return failed ? EXIT_FAILURE : EXIT_SUCCESS; \
  }

#endif

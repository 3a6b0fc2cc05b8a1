/* sim_keys.c - defaults and keys as a user meets them: an empty scenario is the built-in
 * one and says how long it will run; keys that would change nothing are refused with
 * the reason; relative paths in a scenario file are the file's. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli_util.h"

/* The progress line off a terminal with --progress: the simulated time against the bound,
 * the steps; without --progress nothing on stderr. An empty file runs with the built-in
 * scenario's bound of 8 s. */
START_TEST(test_keys_empty_file_and_progress)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "empty.ini", "");
  const char *args[] = {"run", "empty.ini", "--set", "run.algorithm=sgd", "--set", "run.max_sim_time=0.002",
                        "--set", "run.eval_every=0.001", "--progress", "--out", "out", NULL};
  ck_assert_int_eq(cli_run(dir, args), 0);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(strstr(err, "dtsim: sim 0.001 / 0.002 s (50%), ") && strstr(err, " steps, loss "), "%s", err);
  free(err);
  const char *quiet[] = {"run", "empty.ini", "--set", "run.algorithm=sgd", "--set", "run.max_sim_time=0.002",
                         "--set", "run.eval_every=0.001", "--out", "out2", NULL};
  ck_assert_int_eq(cli_run(dir, quiet), 0);
  err = cli_read(dir, "stderr");
  ck_assert_msg(strcmp(err, "") == 0, "stderr is not a terminal: %s", err);
  free(err);
  json_t *j = NULL;
  const char *empty[] = {"run", "empty.ini", "--set", "run.max_steps=3", "--quiet", "--out", "e", NULL};
  j = cli_summary(dir, empty, "e");
  const json_t *run = json_object_get(json_object_get(j, "scenario"), "run");
  ck_assert_str_eq(json_string_value(json_object_get(run, "max_sim_time")), "8");
  ck_assert_str_eq(json_string_value(json_object_get(run, "eval_every")), "0.25");
  json_decref(j);
  free(dir);
}
END_TEST

static Suite *keys_suite(void)
{
  Suite *s = suite_create("keys");
  ADD_TCASE(s, "defaults", test_keys_empty_file_and_progress);
  return s;
}

CHECK_MAIN(keys_suite)

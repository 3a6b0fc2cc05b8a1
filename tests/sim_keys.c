/* sim_keys.c - defaults and keys as a user meets them: an empty scenario is the built-in
 * one and says how long it will run; keys that would change nothing are refused with
 * the reason; relative paths in a scenario file are the file's. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli_util.h"

/* The progress line off a terminal with --progress: the simulated time against the bound,
 * the steps; without --progress nothing on stderr, and the same result files. An empty file
 * runs with the built-in scenario's bound of 8 s. */
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
  /* the line's wall-clock estimate reaches stderr alone: the result files are the same */
  const char *files[] = {"summary.json", "progress.csv", "breakdown.csv"};
  cli_assert_same_files(dir, "out", "out2", files, sizeof files / sizeof *files);
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

/* A key that would change nothing for this algorithm or mode: exit 2, one line naming it
 * and why. */
START_TEST(test_keys_no_effect_refused)
{
  static const char *const cases[][4] = {
      {"downpour.lr=0.1", NULL, NULL, "downpour.lr: has no effect with downpour.adagrad = on"},
      {"downpour.adagrad=off", "downpour.adagrad_gamma=0.3", NULL, "downpour.adagrad_gamma: has no effect"},
      {"run.algorithm=collective", "data.train=100", NULL, "data.train: has no effect: run.algorithm = collective"},
      {"run.algorithm=tensor", "model.layers=8,8,2", NULL, "model.layers: has no effect: run.algorithm = tensor"},
      {"run.algorithm=consensus", "run.max_steps=3", "consensus.p=0.3", "consensus.p: has no effect with"},
      {"run.algorithm=collective", "collective.root=1", NULL, "collective.root: has no effect on allreduce"},
      {"run.algorithm=pipeline", "pipeline.scatter_gather=off", NULL, "pipeline.scatter_gather: has no effect"},
      {"model.warmstart_lr=0.3", NULL, NULL, "model.warmstart_lr: has no effect without a warmstart"},
      {"model.numerics=off", "run.target_accuracy=0.5", NULL, "run.target_accuracy: a timing-only run"},
  };
  char *dir = cli_tmpdir();
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    const char *args[16] = {"run"};
    size_t n = 1;
    for (int k = 0; k < 3 && cases[c][k]; k++) {
      args[n++] = "--set";
      args[n++] = cases[c][k];
    }
    args[n++] = "--out";
    args[n++] = "out";
    args[n] = NULL;
    cli_assert_bad_input(dir, args, cases[c][3]);
  }
  free(dir);
}
END_TEST

/* tensor.steps is run.max_steps's old name: read into it, shown under both names in
 * summary.json's scenario block; giving both in one file is refused as a key set twice. */
START_TEST(test_keys_tensor_steps_alias)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "t.ini", "[run]\nalgorithm = tensor\n[tensor]\nsteps = 3\n");
  const char *args[] = {"run", "t.ini", "--quiet", "--out", "a", NULL};
  json_t *j = cli_summary(dir, args, "a");
  ck_assert_int_eq(json_integer_value(json_object_get(j, "steps")), 3);
  const json_t *sc = json_object_get(j, "scenario");
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(sc, "run"), "max_steps")), "3");
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(sc, "tensor"), "steps")), "3");
  json_decref(j);
  /* run.max_steps counts a tensor run's steps (it used to be ignored) */
  const char *set[] = {"run", "--set", "run.algorithm=tensor", "--set", "run.max_steps=2", "--quiet", "--out", "b",
                       NULL};
  j = cli_summary(dir, set, "b");
  ck_assert_int_eq(json_integer_value(json_object_get(j, "steps")), 2);
  json_decref(j);
  cli_write(dir, "both.ini", "[run]\nalgorithm = tensor\nmax_steps = 2\n[tensor]\nsteps = 3\n");
  const char *both[] = {"run", "both.ini", "--out", "c", NULL};
  cli_assert_bad_input(dir, both, "both.ini:5: tensor.steps is an old name of run.max_steps, which is set twice");
  free(dir);
}
END_TEST

/* Relative paths in a scenario file are the file's folder's (platform.file, a data file),
 * whatever folder dtsim runs from; --set's stay the current folder's. */
START_TEST(test_keys_paths_from_the_file)
{
  char *dir = cli_tmpdir();
  char exp[1100];
  snprintf(exp, sizeof exp, "%s/exp", dir);
  ck_assert_int_eq(mkdir(exp, 0777), 0);
  const char *gen[] = {"platform", "--hosts", "2", "--topology", "star", "-o", "exp/p.xml", NULL};
  ck_assert_int_eq(cli_run(dir, gen), 0);
  char *csv = cli_read(TEST_DATA_DIR, "small.csv");
  cli_write(dir, "exp/d.csv", csv);
  free(csv);
  cli_write(dir, "exp/a.ini", "[run]\nalgorithm = sgd\nmax_steps = 3\n[platform]\nfile = p.xml\n[model]\n"
                              "layers = 2,8,8\n[data]\nsource = csv:d.csv\n");
  const char *args[] = {"run", "exp/a.ini", "--quiet", "--out", "a", NULL};
  json_t *j = cli_summary(dir, args, "a");
  const json_t *sc = json_object_get(j, "scenario");
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(sc, "platform"), "file")), "exp/p.xml");
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(sc, "data"), "source")), "csv:exp/d.csv");
  json_decref(j);
  const char *set[] = {"run", "exp/a.ini", "--set", "platform.file=p.xml", "--out", "b", NULL};
  cli_assert_bad_input(dir, set, "p.xml: cannot open");
  free(dir);
}
END_TEST

/* What a name could mislead on is said: *_gbps are GB/s, and a run may end past
 * run.max_sim_time. */
START_TEST(test_keys_units_documented)
{
  char *dir = cli_tmpdir();
  const char *help[] = {"run", "--help", NULL};
  ck_assert_int_eq(cli_run(dir, help), 0);
  char *out = cli_read(dir, "stdout");
  ck_assert_msg(strstr(out, "algbw_gbps and busbw_gbps are GB/s (10^9") && strstr(out, "nccl-tests), not gigabits"),
                "%s", out);
  free(out);
  const char *keys[] = {"list", "keys", NULL};
  ck_assert_int_eq(cli_run(dir, keys), 0);
  out = cli_read(dir, "stdout");
  ck_assert_msg(strstr(out, "so `sim_time_s` may end a little past it"), "run.max_sim_time's doc");
  ck_assert_msg(strstr(out, "`tensor.steps` is an old name of `run.max_steps`"), "the alias is documented");
  free(out);
  free(dir);
}
END_TEST

static Suite *keys_suite(void)
{
  Suite *s = suite_create("keys");
  ADD_TCASE(s, "defaults", test_keys_empty_file_and_progress, test_keys_units_documented);
  ADD_TCASE(s, "effect", test_keys_no_effect_refused, test_keys_tensor_steps_alias);
  ADD_TCASE(s, "paths", test_keys_paths_from_the_file);
  return s;
}

CHECK_MAIN(keys_suite)

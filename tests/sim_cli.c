/* sim_cli.c - the command line end to end: bad input gives exit 2 and one clear
 * line with no result folder and no core dump; same seed gives byte-identical
 * files (also with two SimGrid threads); --expect catches a changed result. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "check_util.h"

/* A small, fast Downpour run: 4 replicas, 2 shards, 30 steps each. */
static const char small_ini[] =
    "[run]\nalgorithm = downpour\nmax_steps = 30\neval_every = 0.002\n"
    "[model]\nlayers = 16,32,4\n"
    "[data]\ntrain = 2000\ntest = 500\n"
    "[downpour]\nreplicas = 4\nps_shards = 2\n";

/* Runs dtsim with args in a fresh folder holding small.ini; checks exit 2, exactly
 * one line on stderr containing `needle`, and no result folder. */
static void expect_bad_input(const char *const *args, const char *needle)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "small.ini", small_ini);
  cli_assert_bad_input(dir, args, needle);
  free(dir);
}

START_TEST(test_cli_missing_scenario)
{
  const char *args[] = {"run", "nope.ini", "--out", "out", NULL};
  expect_bad_input(args, "nope.ini");
}
END_TEST

START_TEST(test_cli_malformed_scenario)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "bad.ini", "[run]\nseed = 3\nthis line has no equals sign\n");
  const char *args[] = {"run", "bad.ini", "--out", "out", NULL};
  int rc = cli_run(dir, args);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 2 && cli_lines(err) == 1 && strstr(err, "bad.ini:3") != NULL, "rc %d: %s", rc, err);
  ck_assert(!cli_exists(dir, "out"));
  free(err);
  free(dir);
}
END_TEST

START_TEST(test_cli_unknown_key)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "bad.ini", "[run]\nseed = 3\n\n[downpour]\nreplica = 4\n");
  const char *args[] = {"run", "bad.ini", "--out", "out", NULL};
  int rc = cli_run(dir, args);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 2 && cli_lines(err) == 1, "rc %d: %s", rc, err);
  ck_assert_msg(strstr(err, "bad.ini:5") && strstr(err, "replica"), "%s", err);
  ck_assert(!cli_exists(dir, "out"));
  free(err);
  free(dir);
}
END_TEST

START_TEST(test_cli_malformed_platform)
{
  const char *args[] = {"run", "small.ini", "--set", "platform.file=" TEST_DATA_DIR "/cli-malformed.xml",
                        "--out", "out", NULL};
  expect_bad_input(args, "cli-malformed.xml");
}
END_TEST

START_TEST(test_cli_missing_platform)
{
  const char *args[] = {"run", "small.ini", "--set", "platform.file=/nonexistent/p.xml", "--out", "out", NULL};
  expect_bad_input(args, "/nonexistent/p.xml");
}
END_TEST

START_TEST(test_cli_missing_data)
{
  const char *args[] = {"run", "small.ini", "--set", "data.source=libsvm:/nonexistent/d.svm", "--out", "out", NULL};
  expect_bad_input(args, "/nonexistent/d.svm");
}
END_TEST

/* A platform file cut short (a copy interrupted) says so and where it ends: SimGrid's own
 * words blame the attribute the cut fell in ("Bad attribute `lat' in `cluster' element"),
 * which reads like a typo. cli-twelve-hosts.xml's first 195 bytes end inside "lat". */
START_TEST(test_cli_truncated_platform)
{
  char *dir = cli_tmpdir(), *xml = cli_read(TEST_DATA_DIR, "cli-twelve-hosts.xml");
  ck_assert_ptr_nonnull(xml);
  xml[195] = '\0';
  cli_write(dir, "cut.xml", xml);
  cli_write(dir, "small.ini", small_ini);
  const char *args[] = {"run", "small.ini", "--set", "platform.file=cut.xml", "--out", "out", NULL};
  cli_assert_bad_input(dir, args, "cut.xml: looks truncated: it ends at line 4, column 87 without </platform>");
  free(xml);
  free(dir);
}
END_TEST

START_TEST(test_cli_malformed_libsvm)
{
  /* cli-malformed.svm: line 3 has a feature without a value */
  const char *args[] = {"run", "small.ini", "--set", "data.source=libsvm:" TEST_DATA_DIR "/cli-malformed.svm",
                        "--set", "model.layers=4,8,2", "--out", "out", NULL};
  expect_bad_input(args, "cli-malformed.svm:3");
}
END_TEST

START_TEST(test_cli_too_few_hosts)
{
  /* cli-four-hosts.xml has 4 hosts; 4 replicas + 2 shards need 6 */
  const char *args[] = {"run", "small.ini", "--set", "platform.file=" TEST_DATA_DIR "/cli-four-hosts.xml",
                        "--out", "out", NULL};
  expect_bad_input(args, "needs 6");
}
END_TEST

START_TEST(test_cli_bad_values)
{
  const char *lr[] = {"run", "small.ini", "--set", "downpour.lr=-1", "--out", "out", NULL};
  expect_bad_input(lr, "downpour.lr");
  const char *batch[] = {"run", "small.ini", "--set", "downpour.batch=0", "--out", "out", NULL};
  expect_bad_input(batch, "downpour.batch");
  const char *hosts[] = {"run", "small.ini", "--set", "downpour.replicas=0", "--out", "out", NULL};
  expect_bad_input(hosts, "downpour.replicas");
  const char *eval[] = {"run", "small.ini", "--set", "run.eval_every=0", "--out", "out", NULL};
  expect_bad_input(eval, "run.eval_every");
  /* distbelief-2012 hosts have 16 cores: found only once the platform is loaded */
  const char *cores[] = {"run", "small.ini", "--set", "platform.cores=32", "--out", "out", NULL};
  expect_bad_input(cores, "platform.cores");
}
END_TEST

/* Another algorithm's section: refused when the file chose the algorithm (its keys would
 * change nothing), allowed when --set run.algorithm picks one of a file's algorithms. */
START_TEST(test_cli_foreign_section)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "dp.ini",
            "[run]\nalgorithm = dataparallel\nmax_steps = 3\neval_every = 0.002\n"
            "[model]\nlayers = 16,32,4\n[data]\ntrain = 2000\ntest = 500\n"
            "[dataparallel]\nreplicas = 2\n[downpour]\nlr = 0.5\n");
  const char *refused[] = {"run", "dp.ini", "--out", "out", NULL};
  cli_assert_bad_input(dir, refused, "dp.ini:13: downpour.lr: has no effect: run.algorithm = dataparallel reads only "
                                     "[dataparallel]");
  const char *chosen[] = {"run", "dp.ini", "--set", "run.algorithm=dataparallel", "--quiet", "--out", "out", NULL};
  int rc = cli_run(dir, chosen);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
  free(err);
  free(dir);
}
END_TEST

/* A rate of 1000 without Adagrad blows the loss up to thousands of times a guess's (ln 4
 * here) while it stays finite: diverged, exit 1, not ok. */
START_TEST(test_cli_diverged)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "small.ini", small_ini);
  const char *args[] = {"run", "small.ini", "--set", "downpour.adagrad=off", "--set", "downpour.lr=1000", "--out", "out",
                        NULL};
  int rc = cli_run(dir, args);
  char *out = cli_read(dir, "stdout");
  ck_assert_msg(rc == 1 && strstr(out, "dtsim: downpour diverged:"), "exit %d: %s", rc, out);
  free(out);
  free(dir);
}
END_TEST

/* Options that contradict each other are refused before the run: --quiet --progress
 * printed nothing, and two --sets naming a preset and a platform file ran the file (the
 * later --set won), where the same pair in one INI file is refused. */
START_TEST(test_cli_contradictions)
{
  const char *qp[] = {"run", "small.ini", "--quiet", "--progress", "--out", "out", NULL};
  expect_bad_input(qp, "dtsim run: --quiet and --progress contradict each other");
  const char *pf[] = {"run", "small.ini", "--set", "platform.preset=selene", "--set",
                      "platform.file=" TEST_DATA_DIR "/cli-twelve-hosts.xml", "--out", "out", NULL};
  expect_bad_input(pf, "platform.file: platform.preset is also set (--set platform.preset=selene); give a preset or a "
                       "file, not both");
  const char *fp[] = {"run", "small.ini", "--set", "platform.file=" TEST_DATA_DIR "/cli-twelve-hosts.xml", "--set",
                      "platform.preset=selene", "--out", "out", NULL};
  expect_bad_input(fp, "--set platform.preset=selene: platform.preset: platform.file is also set");
  char *dir = cli_tmpdir();
  cli_write(dir, "both.ini", "[platform]\npreset = selene\nfile = x.xml\n");
  const char *ini[] = {"run", "both.ini", "--out", "out", NULL};
  cli_assert_bad_input(dir, ini, "both.ini:3: platform.file: platform.preset is also set (line 2); give a preset or a "
                                 "file, not both");
  free(dir);
}
END_TEST

/* A missed target's closing line says which target and how far the run got (it said only
 * target_not_reached); summary.json's status stays the bare name scripts compare. sgd on
 * small.ini's data ends near accuracy 0.74 (tests/golden/sgd), far from 0.99. */
START_TEST(test_cli_target_missed_says_target)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "small.ini", small_ini);
  const char *args[] = {"run", "small.ini", "--set", "run.algorithm=sgd", "--set", "run.target_accuracy=0.99",
                        "--out", "out", NULL};
  int rc = cli_run(dir, args);
  char *out = cli_read(dir, "stdout"), *sum = cli_read(dir, "out/summary.json");
  ck_assert_msg(rc == 1 && strstr(out, "dtsim: sgd target_not_reached (accuracy 0.") && strstr(out, " < target 0.99):"),
                "exit %d: %s", rc, out);
  ck_assert_msg(strstr(sum, "\"status\": \"target_not_reached\","), "%s", sum);
  free(sum);
  free(out);
  free(dir);
}
END_TEST

/* A check across keys blames the key to change and where its value came from (it said
 * `<default>` or the scenario file whatever set the key): a pipeline of more stages than
 * layers names model.layers, set on small.ini's line 6, by a --set, or left at its default. */
START_TEST(test_cli_blames_source)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "small.ini", small_ini);
  cli_write(dir, "bare.ini", "[run]\nalgorithm = pipeline\n");
  static const char need[] = "model.layers: the model has 2 layers, fewer than the 4 that pipeline.stages x "
                             "pipeline.chunks = 4 x 1 need";
  static const char *const cases[][6] = {
      {"small.ini", "run.algorithm=pipeline", "pipeline.stages=4", NULL, NULL, "small.ini:6: "},
      {"small.ini", "run.algorithm=pipeline", "model.layers=8,8,4", "pipeline.stages=4", NULL,
       "--set model.layers=8,8,4: "},
      {"bare.ini", "pipeline.stages=4", NULL, NULL, NULL, "bare.ini, which leaves model.layers at its default: "},
      {NULL, "run.algorithm=pipeline", "pipeline.stages=4", NULL, NULL,
       "the built-in scenario (dtsim run --print-default), line "},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *args[16] = {"run", "--out", "out"};
    size_t n = 3;
    if (cases[i][0])
      args[n++] = cases[i][0];
    for (size_t k = 1; k < 5 && cases[i][k]; k++) {
      args[n++] = "--set";
      args[n++] = cases[i][k];
    }
    args[n] = NULL;
    cli_assert_bad_input(dir, args, need);
    char *err = cli_read(dir, "stderr");
    ck_assert_msg(strncmp(err, "dtsim: ", 7) == 0 && strncmp(err + 7, cases[i][5], strlen(cases[i][5])) == 0,
                  "case %zu: %s", i, err);
    free(err);
  }
  free(dir);
}
END_TEST

START_TEST(test_cli_bad_options)
{
  const char *opt[] = {"run", "small.ini", "--frobnicate", NULL};
  expect_bad_input(opt, "--frobnicate");
  const char *cmd[] = {"frobnicate", NULL};
  expect_bad_input(cmd, "frobnicate");
  const char *expect[] = {"run", "small.ini", "--expect", "missing.json", "--out", "out", NULL};
  expect_bad_input(expect, "missing.json");
  const char *outfile[] = {"run", "small.ini", "--out", "small.ini/x", NULL};
  expect_bad_input(outfile, "small.ini");
  /* an assignment the shell split at its blanks: said so, not taken for a second scenario
   * file ("only one scenario file can be given") */
  const char *spaced[] = {"run", "small.ini", "--set", "downpour.replicas", "=", "4", NULL};
  expect_bad_input(spaced, "--set downpour.replicas = 4: the shell split the assignment at its blanks");
  const char *trailing[] = {"run", "--set", "downpour.replicas=", "4", NULL};
  expect_bad_input(trailing, "--set downpour.replicas= 4: the shell split");
  const char *leading[] = {"run", "--set", "downpour.replicas", "=4", NULL};
  expect_bad_input(leading, "--set downpour.replicas =4: the shell split");
}
END_TEST

/* Runs the small scenario with extra arguments into dir/out_name; asserts success. */
static void run_small(const char *dir, const char *out_name, const char *extra1, const char *extra2)
{
  const char *args[] = {"run", "small.ini", "--quiet", "--out", out_name, extra1, extra2, NULL};
  int rc = cli_run(dir, args);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
  free(err);
}

static void assert_same_file(const char *dir, const char *a, const char *b, const char *name, int same)
{
  char pa[256], pb[256];
  snprintf(pa, sizeof(pa), "%s/%s", a, name);
  snprintf(pb, sizeof(pb), "%s/%s", b, name);
  char *x = cli_read(dir, pa), *y = cli_read(dir, pb);
  ck_assert_msg(x && y, "missing %s", name);
  if (same)
    ck_assert_msg(strcmp(x, y) == 0, "%s differs between %s and %s", name, a, b);
  else
    ck_assert_msg(strcmp(x, y) != 0, "%s is the same in %s and %s", name, a, b);
  free(x);
  free(y);
}

START_TEST(test_cli_determinism)
{
  static const char *files[] = {"summary.json", "progress.csv", "staleness.csv", "links.csv"};
  char *dir = cli_tmpdir();
  cli_write(dir, "small.ini", small_ini);
  run_small(dir, "a", NULL, NULL);
  run_small(dir, "b", NULL, NULL);
  run_small(dir, "c", "--cfg=contexts/nthreads:2", NULL);
  run_small(dir, "d", "--seed", "2");
  for (int i = 0; i < 4; i++) {
    assert_same_file(dir, "a", "b", files[i], 1);
    assert_same_file(dir, "a", "c", files[i], 1);
  }
  assert_same_file(dir, "a", "d", "summary.json", 0);
  assert_same_file(dir, "a", "d", "progress.csv", 0);
  free(dir);
}
END_TEST

START_TEST(test_cli_expect)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "small.ini", small_ini);
  run_small(dir, "a", NULL, NULL);
  const char *same[] = {"run", "small.ini", "--quiet", "--out", "b", "--expect", "a/summary.json", NULL};
  ck_assert_int_eq(cli_run(dir, same), 0);
  const char *same_csv[] = {"run", "small.ini", "--quiet", "--out", "b", "--expect", "a/progress.csv", NULL};
  ck_assert_int_eq(cli_run(dir, same_csv), 0);
  /* a scenario unlike the saved one's is refused before the run (it was reported after the
   * whole run): exit 2, one line naming the first differing key, no result folder */
  const char *other[] = {"run", "small.ini", "--quiet", "--out", "out", "--seed", "7", "--expect", "a/summary.json", NULL};
  cli_assert_bad_input(dir, other, "--expect a/summary.json: MISMATCH before the run, in the scenario: summary.json: "
                                   "scenario.run.seed: expected \"1\", got \"7\" (nothing was run)");
  const char *gamma[] = {"run", "small.ini", "--out", "out", "--set", "downpour.adagrad_gamma=0.2", "--expect",
                         "a/summary.json", NULL};
  cli_assert_bad_input(dir, gamma, "scenario.downpour.adagrad_gamma: expected \"0.1\", got \"0.2\"");
  char *out = cli_read(dir, "stdout");
  ck_assert_msg(strcmp(out, "") == 0, "stdout of a refused run: %s", out);
  free(out);
  char *err;
  const char *other_csv[] = {"run", "small.ini", "--quiet", "--out", "c", "--seed", "7", "--expect", "a/progress.csv", NULL};
  ck_assert_int_eq(cli_run(dir, other_csv), 1);
  err = cli_read(dir, "stderr");
  ck_assert_msg(strstr(err, "progress.csv line 2"), "%s", err);
  free(err);
  free(dir);
}
END_TEST

/* --assert: bounds on summary.json's figures, absolute or relative to the --expect file's.
 * small.ini's Downpour ends at accuracy 0.886 (run "a" below; any figure under 0.886 and over
 * it would do): bounds that hold print one line after the closing line; broken ones exit 1,
 * one line each on stderr with the figure, the bound and the value; bad expressions and
 * names are refused before the run. */
START_TEST(test_cli_assert)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "small.ini", small_ini);
  run_small(dir, "a", NULL, NULL);
  const char *hold[] = {"run", "small.ini", "--out", "b", "--expect", "a/summary.json", "--assert",
                        "final_accuracy>=0.8", "--assert", "performance.step_time_s <= 1.02*expected", "--assert",
                        "steps==expected", NULL};
  int rc = cli_run(dir, hold);
  char *out = cli_read(dir, "stdout"), *err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 0 && cli_lines(out) == 2 && strstr(out, "-> b/\ndtsim: --assert: all 3 bounds hold\n"),
                "exit %d: %s%s", rc, out, err);
  free(out);
  free(err);
  const char *broken[] = {"run", "small.ini", "--out", "c", "--expect", "a/summary.json", "--assert",
                          "final_accuracy>=0.95", "--assert", "performance.step_time_s<0.5*expected", "--assert",
                          "steps>0", NULL};
  rc = cli_run(dir, broken);
  out = cli_read(dir, "stdout");
  err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 1 && strcmp(out, "") == 0 && cli_lines(err) == 2, "exit %d: %s%s", rc, out, err);
  ck_assert_msg(strstr(err, "dtsim: --assert 'final_accuracy>=0.95' failed: final_accuracy = 0.886, bound >= 0.95\n"),
                "%s", err);
  ck_assert_msg(strstr(err, "--assert 'performance.step_time_s<0.5*expected' failed: performance.step_time_s = ") &&
                    strstr(err, ", bound < ") && strstr(err, " (0.5 x expected "), "%s", err);
  free(out);
  free(err);
  static const char *const refused[][2] = {
      {"final_accuracy=>0.9", "--assert 'final_accuracy=>0.9': expected NAME OP BOUND"},
      {"final_accuracy>=", "expected NAME OP BOUND"},
      {"final_accuracy>=0.9*expectd", "expected NAME OP BOUND"},
      {"final_acuracy>=0.9", "final_acuracy is not a figure a downpour run's summary.json has"},
      {"performance.mfu_pct<=1", "performance.mfu_pct is not a figure"},
      {"sgd.steps<=1", "sgd.steps is not a figure a downpour run's"},
      {"final_accuracy>=expected", "--assert 'final_accuracy>=expected': expected needs --expect FILE"},
  };
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    const char *args[] = {"run", "small.ini", "--out", "out", "--assert", "steps>0", "--assert", refused[i][0], NULL};
    cli_assert_bad_input(dir, args, refused[i][1]);
  }
  const char *nothing[] = {"run", "small.ini", "--out", "out", "--expect", "a/summary.json", "--assert",
                           "downpour.x>=1", NULL};
  cli_assert_bad_input(dir, nothing, "--assert 'downpour.x>=1': the --expect file has nothing at downpour.x");
  const char *null[] = {"run", "small.ini", "--out", "out", "--expect", "a/summary.json", "--assert",
                        "time_to_target_s<=expected", NULL};
  cli_assert_bad_input(dir, null, "the --expect file has no number at time_to_target_s");
  const char *csv[] = {"run", "small.ini", "--out", "out", "--expect", "a/progress.csv", "--assert", "steps>0", NULL};
  cli_assert_bad_input(dir, csv, "--expect a/progress.csv: beside --assert, a saved summary.json");
  const char *rtol[] = {"run", "small.ini", "--out", "out", "--expect", "a/summary.json", "--rtol", "1e-9",
                        "--assert", "steps>0", NULL};
  cli_assert_bad_input(dir, rtol, "--rtol: has no effect with --assert");
  free(dir);
}
END_TEST

/* platform.placement on cli-twelve-hosts.xml (node-0..11): 2 replicas + 1 shard take
 * hosts 0, 1, 2 packed and 0, 4, 8 spread (actor i on host floor(i * 12 / 3)); the
 * links that carried traffic are those hosts' private links. */
START_TEST(test_cli_placement)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "small.ini", small_ini);
  static const char *expect[2][2] = {{"c_link_1_UP", "c_link_2_UP"}, {"c_link_4_UP", "c_link_8_UP"}};
  static const char *how[2] = {"platform.placement=packed", "platform.placement=spread"};
  for (int k = 0; k < 2; k++) {
    const char *args[] = {"run", "small.ini", "--quiet", "--out", "out", "--set",
                          "platform.file=" TEST_DATA_DIR "/cli-twelve-hosts.xml", "--set", how[k], "--set",
                          "downpour.replicas=2", "--set", "downpour.ps_shards=1", NULL};
    ck_assert_int_eq(cli_run(dir, args), 0);
    char *links = cli_read(dir, "out/links.csv");
    ck_assert_msg(strstr(links, expect[k][0]) && strstr(links, expect[k][1]), "%s: %s", how[k], links);
    ck_assert_msg(!strstr(links, expect[1 - k][0]), "%s: %s", how[k], links);
    free(links);
  }
  free(dir);
}
END_TEST

START_TEST(test_cli_help_and_list)
{
  char *dir = cli_tmpdir();
  const char *help[] = {"--help", NULL};
  ck_assert_int_eq(cli_run(dir, help), 0);
  /* the help names every reproduction a wrong NAME lists as available (it once left gemm out) */
  char *usage = cli_read(dir, "stdout");
  const char *nosuch[] = {"reproduce", "nosuch", NULL};
  ck_assert_int_eq(cli_run(dir, nosuch), 2);
  char *err = cli_read(dir, "stderr");
  char *names = strstr(err, "(available: ");
  ck_assert_ptr_nonnull(names);
  names += strlen("(available: ");
  names[strcspn(names, ")")] = '\0';
  ck_assert_ptr_nonnull(strstr(names, "gemm"));
  ck_assert_msg(strstr(usage, names) != NULL, "dtsim --help does not list %s:\n%s", names, usage);
  free(err);
  free(usage);
  const char *run_help[] = {"run", "--help", NULL};
  ck_assert_int_eq(cli_run(dir, run_help), 0);
  char *out = cli_read(dir, "stdout");
  ck_assert_ptr_nonnull(strstr(out, "--expect"));
  free(out);
  const char *version[] = {"--version", NULL};
  ck_assert_int_eq(cli_run(dir, version), 0);
  out = cli_read(dir, "stdout");
  ck_assert_ptr_nonnull(strstr(out, "BLAS"));
  free(out);
  const char *list[] = {"list", NULL};
  ck_assert_int_eq(cli_run(dir, list), 0);
  out = cli_read(dir, "stdout");
  ck_assert_ptr_nonnull(strstr(out, "distbelief-2012"));
  ck_assert_ptr_nonnull(strstr(out, "speech-42m"));
  free(out);
  free(dir);
}
END_TEST

static Suite *cli_suite(void)
{
  Suite *s = suite_create("cli");
  TCase *tc = tcase_create("errors");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_cli_missing_scenario);
  tcase_add_test(tc, test_cli_malformed_scenario);
  tcase_add_test(tc, test_cli_unknown_key);
  tcase_add_test(tc, test_cli_malformed_platform);
  tcase_add_test(tc, test_cli_truncated_platform);
  tcase_add_test(tc, test_cli_missing_platform);
  tcase_add_test(tc, test_cli_missing_data);
  tcase_add_test(tc, test_cli_malformed_libsvm);
  tcase_add_test(tc, test_cli_too_few_hosts);
  tcase_add_test(tc, test_cli_bad_values);
  tcase_add_test(tc, test_cli_bad_options);
  tcase_add_test(tc, test_cli_foreign_section);
  tcase_add_test(tc, test_cli_diverged);
  tcase_add_test(tc, test_cli_blames_source);
  tcase_add_test(tc, test_cli_contradictions);
  tcase_add_test(tc, test_cli_target_missed_says_target);
  suite_add_tcase(s, tc);
  tc = tcase_create("determinism");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_cli_determinism);
  tcase_add_test(tc, test_cli_expect);
  tcase_add_test(tc, test_cli_assert);
  tcase_add_test(tc, test_cli_placement);
  suite_add_tcase(s, tc);
  tc = tcase_create("help");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_cli_help_and_list);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(cli_suite)

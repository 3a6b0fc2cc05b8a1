/* sim_noise_scale.c - `run.noise_scale_examples`: progress.csv gains the gradient noise
 * scale's three columns, measured at every evaluation, byte-identical on a second run, with
 * the noise scale their ratio; refused where there is no gradient to measure or too few
 * examples for two batches. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli_util.h"

/* noise_scale = trace_sigma / grad_sq as printed: both at 17 significant digits. */
#define RATIO_RTOL 1e-12

/* Sequential SGD of a small MLP on a streamed noisy teacher: 60 steps of 26 ns, 3 evaluations. */
static const char *const args[] = {"run", "--set", "run.algorithm=sgd", "--set", "platform.preset=gpu-2012",
                                   "--set", "sgd.partitions=1", "--set", "model.type=mlp", "--set",
                                   "model.layers=8,16,3", "--set", "data.source=synthetic-teacher", "--set",
                                   "data.stream=on", "--set", "data.label_noise=0.3", "--set", "run.max_steps=60",
                                   "--set", "run.eval_every=5e-7", "--set", "run.noise_scale_examples=4000",
                                   "--quiet", "--out", "out", NULL};

START_TEST(test_noise_scale_columns)
{
  char *dir = cli_tmpdir();
  ck_assert_int_eq(cli_run(dir, args), 0);
  char *csv = cli_read(dir, "out/progress.csv");
  ck_assert_ptr_nonnull(csv);
  ck_assert_msg(strncmp(csv, "sim_time_s,step,loss,accuracy,noise_scale,grad_sq,trace_sigma\n", 62) == 0, "%s", csv);
  int rows = 0;
  for (const char *c = strchr(csv, '\n'); c && c[1]; c = strchr(c + 1, '\n')) {
    double t, loss, acc, b, g2, tr;
    long step;
    ck_assert_int_eq(sscanf(c + 1, "%lf,%ld,%lf,%lf,%lf,%lf,%lf", &t, &step, &loss, &acc, &b, &g2, &tr), 7);
    ck_assert_msg(tr > 0 && isfinite(b), "row %d: %s", rows, c + 1);
    if (g2 > 0)
      ck_assert_double_eq_tol(b, tr / g2, RATIO_RTOL * b);
    rows++;
  }
  ck_assert_int_ge(rows, 2);
  /* again: the same bytes (the noise rows come from their own generator) */
  char *again = cli_tmpdir();
  ck_assert_int_eq(cli_run(again, args), 0);
  char *csv2 = cli_read(again, "out/progress.csv");
  ck_assert_str_eq(csv, csv2);
  free(csv2);
  free(csv);
  free(again);
  free(dir);
}
END_TEST

/* Measuring changes nothing else: the first four columns are the run's without it. */
START_TEST(test_noise_scale_changes_nothing_else)
{
  char *dir = cli_tmpdir(), *plain = cli_tmpdir();
  ck_assert_int_eq(cli_run(dir, args), 0);
  const char *a[64];
  size_t n = 0;
  for (size_t i = 0; args[i]; i++)
    if (!(args[i][0] != '-' && strncmp(args[i], "run.noise_scale_examples", 24) == 0) &&
        !(strcmp(args[i], "--set") == 0 && args[i + 1] && strncmp(args[i + 1], "run.noise", 9) == 0))
      a[n++] = args[i];
  a[n] = NULL;
  ck_assert_int_eq(cli_run(plain, a), 0);
  char *with = cli_read(dir, "out/progress.csv"), *without = cli_read(plain, "out/progress.csv");
  char *w = with, *o = without;
  while (*w && *o) { /* line by line: the first four fields */
    size_t lw = strcspn(w, "\n"), lo = strcspn(o, "\n"), k = 0, fields = 0;
    while (k < lw && fields < 4)
      fields += w[k++] == ',';
    ck_assert_msg(strncmp(w, o, k ? k - 1 : 0) == 0 && (lo == k - 1 || o[k - 1] == ','), "%.*s vs %.*s", (int)lw, w,
                  (int)lo, o);
    w += lw + (w[lw] != 0);
    o += lo + (o[lo] != 0);
  }
  ck_assert(*w == 0 && *o == 0);
  free(with);
  free(without);
  free(plain);
  free(dir);
}
END_TEST

START_TEST(test_noise_scale_refused)
{
  char *dir = cli_tmpdir();
  const char *off[] = {"run", "--set", "model.numerics=off", "--set", "run.noise_scale_examples=1000", "--out", "out",
                       NULL};
  cli_assert_bad_input(dir, off, "run.noise_scale_examples: a timing-only run");
  const char *few[] = {"run", "--set", "run.noise_scale_examples=40", "--out", "out", NULL};
  cli_assert_bad_input(dir, few, "fewer than two batches of 32");
  free(dir);
}
END_TEST

Suite *noise_scale_cli_suite(void)
{
  Suite *s = suite_create("noise_scale_cli");
  ADD_TCASE(s, "runs", test_noise_scale_columns, test_noise_scale_changes_nothing_else, test_noise_scale_refused);
  return s;
}

CHECK_MAIN(noise_scale_cli_suite)

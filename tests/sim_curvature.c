/* sim_curvature.c - `run.curvature_examples`: progress.csv gains the column lambda_max,
 * empty but in the last row, where it is the top Hessian eigenvalue of the held-out loss
 * (positive, finite, the same bytes on a second run); measuring changes no other column;
 * refused where there is no loss to measure. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli_util.h"

/* Sequential SGD of a small MLP on a streamed noisy teacher: 60 steps, 3 evaluations. */
#define ARGS_COMMON                                                                                              \
  "run", "--set", "run.algorithm=sgd", "--set", "platform.preset=gpu-2012", "--set", "sgd.partitions=1", "--set", \
      "model.type=mlp", "--set", "model.layers=8,16,3", "--set", "data.source=synthetic-teacher", "--set",        \
      "data.stream=on", "--set", "data.label_noise=0.3", "--set", "run.max_steps=60", "--set", "run.eval_every=5e-7"
static const char *const args[] = {ARGS_COMMON, "--set", "run.curvature_examples=2000", "--quiet", "--out", "out",
                                   NULL};
static const char *const plain_args[] = {ARGS_COMMON, "--quiet", "--out", "out", NULL};

START_TEST(test_curvature_column)
{
  char *dir = cli_tmpdir(), *again = cli_tmpdir(), *plain = cli_tmpdir();
  ck_assert_int_eq(cli_run(dir, args), 0);
  char *csv = cli_read(dir, "out/progress.csv");
  ck_assert_msg(strncmp(csv, "sim_time_s,step,loss,accuracy,lambda_max\n", 41) == 0, "%s", csv);
  int rows = 0, measured = 0;
  double lambda = NAN;
  for (const char *c = strchr(csv, '\n'); c && c[1]; c = strchr(c + 1, '\n')) {
    const char *last = strchr(c + 1, '\n');
    const char *field = c + 1;
    for (int k = 0; k < 4; k++)
      field = strchr(field, ',') + 1;
    int empty = *field == '\n';
    if (!empty) {
      measured++;
      lambda = atof(field);
      ck_assert_msg(last == NULL || last[1] == 0, "measured before the last row: %s", c + 1);
    }
    rows++;
  }
  ck_assert_int_ge(rows, 2);
  ck_assert_int_eq(measured, 1);
  ck_assert_msg(lambda > 0 && isfinite(lambda), "lambda_max %g", lambda);
  ck_assert_int_eq(cli_run(again, args), 0);
  char *csv2 = cli_read(again, "out/progress.csv");
  ck_assert_str_eq(csv, csv2);
  /* without it: the same rows but the last column */
  ck_assert_int_eq(cli_run(plain, plain_args), 0);
  char *without = cli_read(plain, "out/progress.csv");
  for (const char *w = csv, *o = without; *w || *o;) {
    size_t lw = strcspn(w, "\n"), lo = strcspn(o, "\n");
    size_t comma = lw;
    while (comma > 0 && w[comma - 1] != ',')
      comma--;
    ck_assert_msg(comma > 0 && comma - 1 == lo && strncmp(w, o, lo) == 0, "%.*s vs %.*s", (int)lw, w, (int)lo,
                  o);
    w += lw + (w[lw] != 0);
    o += lo + (o[lo] != 0);
  }
  free(without);
  free(csv2);
  free(csv);
  free(plain);
  free(again);
  free(dir);
}
END_TEST

START_TEST(test_curvature_refused)
{
  char *dir = cli_tmpdir();
  const char *off[] = {"run", "--set", "model.numerics=off", "--set", "run.curvature_examples=1000", "--out", "out",
                       NULL};
  cli_assert_bad_input(dir, off, "run.curvature_examples: a timing-only run");
  free(dir);
}
END_TEST

Suite *curvature_cli_suite(void)
{
  Suite *s = suite_create("curvature_cli");
  ADD_TCASE(s, "runs", test_curvature_column, test_curvature_refused);
  return s;
}

CHECK_MAIN(curvature_cli_suite)

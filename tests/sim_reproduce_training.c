/* sim_reproduce_training.c - the reproductions of training claims, beside sim_reproduce.c's
 * (each tcase is its own ctest entry, sim_reproduce_NAME, as there): `dtsim reproduce moe
 * --quick`: its rows those of results/moe, --check, and the committed grid's targets;
 * `dtsim reproduce compression --quick`: dense and top-k on google-2004, each message's exact
 * bytes, the target, and --check against results/compression. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli_util.h"

/* ---- moe: expert parallelism with the load-balancing loss off and on ---- */
#define MOE_HEADER                                                                                                   \
  "top_k,capacity_factor,aux_loss,imbalance,kept_imbalance,dropped_fraction,dropped_fraction_run,step_s,"            \
  "alltoall_s_per_step,alltoall_bytes_per_step,final_loss\n"
typedef struct moe_row {
  int top_k;
  double cap, aux, imb, kept, drop, drop_run, step, a2a_s, bytes, loss;
} moe_row;

/* The rows of a moe.csv text, in its order; returns how many. */
static size_t moe_rows(const char *csv, moe_row *rows, size_t max)
{
  size_t n = 0;
  for (const char *p = strchr(csv, '\n'); p && p[1] && n < max; p = strchr(p + 1, '\n')) {
    moe_row *r = &rows[n];
    ck_assert_int_eq(sscanf(p + 1, "%d,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &r->top_k, &r->cap, &r->aux, &r->imb,
                            &r->kept, &r->drop, &r->drop_run, &r->step, &r->a2a_s, &r->bytes, &r->loss),
                     11);
    n++;
  }
  return n;
}

/* The committed grid (results/moe/moe.csv) meets issue 32's targets as its README states them:
 * 12 runs, top-1 and top-2 x capacity 1.0, 1.25, 2.0 x the auxiliary loss off (0) and on (0.01);
 * for each top_k and capacity the end-of-training imbalance without the auxiliary loss is above
 * the run with it, and the step time is ordered as the kept imbalance (the slowest expert sets
 * the step); for each top_k and coefficient capacity 1.0 drops more than 2.0 and sends fewer
 * all-to-all bytes; the held-out loss of every run falls (moe_loss.csv). */
START_TEST(test_reproduce_moe_committed)
{
  char *csv = cli_read("", RESULTS_DIR "/moe/moe.csv");
  ck_assert_ptr_nonnull(csv);
  ck_assert(strncmp(csv, MOE_HEADER, strlen(MOE_HEADER)) == 0);
  moe_row r[13];
  ck_assert_uint_eq(moe_rows(csv, r, 13), 12);
  static const double cap[] = {1.0, 1.25, 2.0};
  for (int i = 0; i < 12; i++) /* grid order: top_k, capacity, coefficient */
    ck_assert(r[i].top_k == 1 + i / 6 && r[i].cap == cap[i / 2 % 3] && r[i].aux == (i % 2 ? 0.01 : 0));
  for (int i = 0; i < 12; i += 2) {
    const moe_row *off = &r[i], *on = &r[i + 1];
    ck_assert_msg(off->imb > on->imb, "top-%d capacity %g: imbalance %g without the aux loss, %g with", off->top_k,
                  off->cap, off->imb, on->imb);
    ck_assert_msg((off->step > on->step) == (off->kept > on->kept),
                  "top-%d capacity %g: step %g against %g, kept imbalance %g against %g", off->top_k, off->cap,
                  off->step, on->step, off->kept, on->kept);
  }
  for (int i = 0; i < 12; i++)
    if (r[i].cap == 1.0) {
      const moe_row *hi = &r[i + 4]; /* capacity 2.0, same top_k and coefficient */
      ck_assert_msg(r[i].drop > hi->drop && r[i].bytes < hi->bytes,
                    "top-%d aux %g: capacity 1.0 drops %g and sends %g, 2.0 %g and %g", r[i].top_k, r[i].aux,
                    r[i].drop, r[i].bytes, hi->drop, hi->bytes);
    }
  free(csv);
  char *loss = cli_read("", RESULTS_DIR "/moe/moe_loss.csv");
  ck_assert_ptr_nonnull(loss);
  for (int i = 0; i < 12; i++) {
    char key[64];
    snprintf(key, sizeof(key), "\n%d,%s,%s,", r[i].top_k, i / 2 % 3 == 0 ? "1.0" : i / 2 % 3 == 1 ? "1.25" : "2.0",
             i % 2 ? "0.01" : "0");
    double first = -1, last = -1, t_prev = -1;
    for (const char *p = strstr(loss, key); p; p = strstr(p + 1, key)) {
      long step;
      double t, l;
      ck_assert_int_eq(sscanf(p + strlen(key), "%ld,%lf,%lf", &step, &t, &l), 3);
      ck_assert(t > t_prev);
      t_prev = t;
      first = first < 0 ? l : first;
      last = l;
    }
    ck_assert_msg(first > 0 && last < first, "%s: held-out loss %g -> %g", key + 1, first, last);
  }
  free(loss);
}
END_TEST

#ifndef DTSIM_SANITIZE /* moe --quick: Release only (see reproduce_suite) */
/* moe --quick: top-1 at capacity 1.0 and 2.0, the auxiliary loss off and on: its files, its rows
 * those of the committed grid (byte for byte: another process, --jobs 2 there), and --check
 * passing moe.csv and finding a changed moe_loss.csv. */
START_TEST(test_reproduce_moe_quick)
{
  char *dir = cli_tmpdir();
  const char *args[] = {"reproduce", "moe", "--quick", "--quiet", "--jobs", "1", "--out", "m", NULL};
  ck_assert_int_eq(cli_run(dir, args), 0);
  ck_assert(cli_exists(dir, "m/moe.png") && cli_exists(dir, "m/moe.ini") && cli_exists(dir, "m/README.md"));
  char *csv = cli_read(dir, "m/moe.csv"), *loss = cli_read(dir, "m/moe_loss.csv");
  ck_assert(strncmp(csv, MOE_HEADER, strlen(MOE_HEADER)) == 0);
  ck_assert_int_eq(cli_lines(csv), 5);
  char *full = cli_read("", RESULTS_DIR "/moe/moe.csv"), *lfull = cli_read("", RESULTS_DIR "/moe/moe_loss.csv");
  cli_assert_rows_within(csv, full);
  cli_assert_rows_within(loss, lfull);
  free(csv);
  free(loss);
  char *row = strstr(lfull, "\n1,2.0,0.01,"); /* a quick row's loss, last digit changed */
  ck_assert_ptr_nonnull(row);
  char *end = strchr(row + 1, '\n');
  end[-1] = end[-1] == '9' ? '8' : '9';
  cli_mkdir(dir, "moe");
  cli_write(dir, "moe/moe.csv", full);
  cli_write(dir, "moe/moe_loss.csv", lfull);
  free(full);
  free(lfull);
  const char *changed[] = {"reproduce", "moe", "--quick", "--quiet", "--jobs", "1", "--check", "--results", ".", NULL};
  ck_assert_int_eq(cli_run(dir, changed), 1);
  free(dir);
}
END_TEST
#endif

#ifndef DTSIM_SANITIZE /* compression: Release only (see reproduce_suite) */
/* compression --quick: google-2004, dense by ring and top-k at 1% and 0.1%, 8 replicas of the
 * 64-512-512-10 MLP on the digits. Dense's message is the fp32 gradient, 4 x 301,066 bytes;
 * top-k's is 8 bytes (index and value) per entry sent, ceil(ratio n) of each of the six tensors
 * (512 x 64, 512, 512 x 512, 512, 10 x 512, 10): 3,015 entries at 1%, 305 at 0.1%. The target
 * is dense's final accuracy less a point; top-k at 0.1% gets there sooner than dense (the
 * issue's 1-GbE target); the rows equal the committed full grid's (--check). */
#define COMP_DENSE_BYTES (4.0 * 301066)
START_TEST(test_reproduce_compression_quick)
{
  char *dir = cli_tmpdir();
  const char *args[] = {"reproduce", "compression", "--quick", "--quiet", "--jobs", "1", "--out", "c", NULL};
  ck_assert_int_eq(cli_run(dir, args), 0);
  ck_assert(cli_exists(dir, "c/compression.png") && cli_exists(dir, "c/compression.ini") &&
            cli_exists(dir, "c/README.md") && cli_exists(dir, "c/digits.csv"));
  char *csv = cli_read(dir, "c/compression.csv");
  static const char header[] = "method,platform,ratio,bytes_per_step,final_accuracy,time_to_target_s,setting,"
                               "network_bytes_per_step,step_time_s,compress_compute_s,target_accuracy,steps_to_target\n";
  ck_assert_msg(strncmp(csv, header, sizeof header - 1) == 0, "%.160s", csv);
  ck_assert_int_eq(cli_lines(csv), 4);
  static const char *const setting[] = {"-", "ratio=0.01", "ratio=0.001"};
  static const double bytes[] = {COMP_DENSE_BYTES, 8 * 3015.0, 8 * 305.0};
  double dense_acc = 0, dense_t = 0;
  const char *q = strchr(csv, '\n') + 1;
  for (int k = 0; k < 3; k++, q = strchr(q, '\n') + 1) {
    char meth[16], set[32], plat[32];
    double ratio, b, net, step, comp, acc, target, t;
    long st;
    ck_assert_int_eq(sscanf(q, "%15[^,],%31[^,],%lf,%lf,%lf,%lf,%31[^,],%lf,%lf,%lf,%lf,%ld", meth, plat, &ratio, &b,
                            &acc, &t, set, &net, &step, &comp, &target, &st),
                     12);
    ck_assert_str_eq(meth, k ? "topk" : "dense");
    ck_assert_str_eq(set, setting[k]);
    ck_assert_str_eq(plat, "google-2004");
    ck_assert_msg(b == bytes[k] && ratio == COMP_DENSE_BYTES / bytes[k], "row %d: %g bytes, ratio %g", k, b, ratio);
    ck_assert(step > 0 && acc > 0.9 && t > 0 && st > 0);
    ck_assert(k ? comp > 0 : comp == 0); /* dense executes no compression */
    if (k == 0) {
      dense_acc = acc;
      dense_t = t;
    }
    ck_assert(target == dense_acc - 0.01);
    /* The target on 1 GbE: top-k at 0.1% (493x fewer bytes) within a point of dense,
     * and there sooner in simulated time. */
    if (k == 2)
      ck_assert_msg(acc >= dense_acc - 0.01 && t < dense_t, "top-k 0.1%%: %g at %g s, dense %g at %g s", acc, t,
                    dense_acc, dense_t);
  }
  free(csv);
  const char *check[] = {"reproduce", "compression", "--quick", "--quiet", "--jobs", "1", "--check", "--results",
                         RESULTS_DIR, NULL};
  ck_assert_int_eq(cli_run(dir, check), 0);
  free(dir);
}
END_TEST
#endif

/* Each tcase is its own ctest entry (tests/CMakeLists.txt reads their names from here and
 * runs them with CK_RUN_CASE), so ctest -j spreads the reproductions over the cores. */
static Suite *reproduce_training_suite(void)
{
  Suite *s = suite_create("reproduce_training");
  TCase *tc;
  /* moe --quick: Release only. Its four runs, twice (the second --check), are about 150 s of CPU
   * in Release (the MoE GPT's numerics, about 19 s a run), which the sanitizers' 5 to 11 times
   * would put past the 900-s timeout; the committed grid's targets are checked in both builds, and
   * the algorithm runs under the sanitizers in sim_moe. */
  tc = tcase_create("moe");
  tcase_set_timeout(tc, 900);
  tcase_add_test(tc, test_reproduce_moe_committed);
#ifndef DTSIM_SANITIZE
  tcase_add_test(tc, test_reproduce_moe_quick);
#endif
  suite_add_tcase(s, tc);
  /* compression --quick: Release only, as zero. Three runs of real training (200 steps of 8
   * replicas), twice with --check, are about 4 minutes of CPU in Release; the compressed
   * exchange's numerics run under the sanitizers in sim_compress. */
  tc = tcase_create("compression");
  tcase_set_timeout(tc, 900);
#ifndef DTSIM_SANITIZE
  tcase_add_test(tc, test_reproduce_compression_quick);
#endif
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(reproduce_training_suite)

/* sim_reproduce.c - `dtsim reproduce fig3 --quick`: the CSV, plot, scenario and
 * README it writes, the speech net's curve peaking at 8 machines (Dean et al. 2012,
 * sec. 3), --check against a saved CSV, and bad names; `dtsim reproduce consensus
 * --quick`: its files, its claims (Nedic and Ozdaglar 2009, results/consensus/README.md),
 * --check against the committed results/consensus/consensus.csv, and the targets that
 * committed grid meets; `dtsim reproduce fig4 --quick` and `fig5 --quick`:
 * files, a proxy that learns, and --check against results/fig4 and results/fig5, and the
 * committed fig4 grid's SGD curve still rising at the horizon;
 * `dtsim reproduce megatron --quick`: its rows and --check against results/megatron;
 * `dtsim reproduce pipeline --quick`: its rows against their formula, the PTD-P Table 1 rows
 * (ptdp.csv), and --check against results/pipeline; `dtsim reproduce gemm --quick`: the
 * kernel model against DeepBench, and --check against results/gemm; `dtsim reproduce zero
 * --quick`: PTD-P Table 2's 384-GPU rows, ZeRO-3's exact bytes, and --check against
 * results/zero. The reproductions of training claims (moe, compression) are sim_reproduce_training.c's. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli_util.h"

/* Tolerances and bounds, each with where it comes from (measured: the committed results). */
/* SPEECH8_MIN, SPEECH8_MAX: Dean et al. 2012 Fig. 3 show the speech net fastest at 8
 * machines, about 2.2x; the band accepted around it (results/fig3/README.md; measured 2.19). */
#define SPEECH8_MIN 1.8
#define SPEECH8_MAX 2.6
/* FIG4_WARM_MIN, FIG4_WARM_MAX: the GPU's first evaluation (15 simulated s) starts from the
 * shared warmstart (measured 0.2194 on the --quick grid); FIG4_GAIN: it learns from there
 * (0.4155 at the 900-s horizon, +0.196); FIG4_CEILING: no accuracy above what 20% label noise
 * allows on 10 classes (1 - 0.2 + 0.02 = 0.82) plus 5 standard errors of a 20,000-example
 * held-out estimate (5 x 0.0027). */
#define FIG4_WARM_MIN 0.15
#define FIG4_WARM_MAX 0.30
#define FIG4_GAIN 0.1
#define FIG4_CEILING (0.82 + 0.014)
/* FIG4_TEST: the held-out examples of every fig4 evaluation (fig4.ini's data.test);
 * FIG4_RISE_SE: the criterion that the curves rise: the SGD baseline's accuracy at the
 * 900-s horizon exceeds that at 90 s by at least 10 standard errors of the estimate. */
#define FIG4_TEST 20000
#define FIG4_RISE_SE 10
/* TOL_CALIBRATED_TF: model.efficiency is chosen for the 1.2B row's 39 Tflop/s to 1e-5,
 * 39e-5 Tflop/s (measured 39.000016). */
#define TOL_CALIBRATED_TF 39e-5
/* EFF_MIN: the weak-scaling efficiency falls with the model-parallel width: measured 0.983,
 * 0.877 and 0.813 at 2, 4 and 8 GPUs. */
#define EFF_MIN 0.5
/* TOL_FORMULA: (p-1) / (v m + p - 1) is one correctly rounded division of small integers,
 * printed with 17 digits: < 1e-16 apart. */
#define TOL_FORMULA 1e-15
/* BUBBLE_OVER_MAX: on selene the messages cost a few percent of a stage's compute: the
 * bubble is at or above its formula, measured at most 5.2% above on the quick rows. */
#define BUBBLE_OVER_MAX 1.1
/* TOL_ERROR_COLUMN: error = tflops / paper - 1 recomputed from the 17-digit columns of
 * values ~0.05: rounding ~1e-16. */
#define TOL_ERROR_COLUMN 1e-12
/* PAPER_BAND: dtsim's Tflop/s per GPU within 50% of PTD-P Table 1's (measured -0.0001%,
 * -1.3% and -5.2% on the quick rows). */
#define PAPER_BAND 0.5
/* TOL_CALIBRATED_ERROR: model.efficiency is calibrated on the 1.7B row: 137 Tflop/s to 0.1%
 * (measured error -2.7e-7). */
#define TOL_CALIBRATED_ERROR 1e-3
/* CONS_QUICK_GAP: with --quick (300 rounds, lazy Metropolis weights) the harmonic step keeps
 * the gap below 2 from round 12 on the complete graph and 160 on the ring (measured; the
 * ring never gets below 1.66). */
#define CONS_QUICK_GAP 2
/* CONS_TARGET, CONS_ORDER_GAP, CONS_FLOOR_RATIO_MIN, CONS_FLOOR_RATIO_MAX: what the committed
 * consensus grid claims (results/consensus/README.md): the harmonic step below 1e-3 on the
 * complete graph and the torus, the graphs ordered at a gap of 0.1, and the floors of
 * constant steps 4 times apart 2 to 8 times apart (O(alpha), loosely). */
#define CONS_TARGET 1e-3
#define CONS_ORDER_GAP 0.1
#define CONS_FLOOR_RATIO_MIN 2
#define CONS_FLOOR_RATIO_MAX 8
/* CONS_NEVER: what reach() returns for a gap that is still above the tolerance at the end. */
#define CONS_NEVER 1000000
/* GEMM_BAND: the kernel model against DeepBench's compute-bound V100 GEMMs (as stored, M, N
 * and K >= 2048): measured within 6% (results/gemm/README.md); accepted 10%. */
#define GEMM_BAND 0.10

/* Speed-up of `model` on `machines` from fig3.csv text, or -1. */
static double speedup(const char *csv, const char *model, int machines)
{
  const char *p = strchr(csv, '\n');
  while (p && *++p) {
    char m[64];
    int n;
    double t, s;
    if (sscanf(p, "%63[^,],%d,%lf,%lf", m, &n, &t, &s) == 4 && strcmp(m, model) == 0 && n == machines)
      return s;
    p = strchr(p, '\n');
  }
  return -1;
}

START_TEST(test_reproduce_fig3_quick)
{
  char *dir = cli_tmpdir();
  const char *args[] = {"reproduce", "fig3", "--quick", "--quiet", "--out", "fig3", NULL};
  int rc = cli_run(dir, args);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
  free(err);
  ck_assert(cli_exists(dir, "fig3/fig3.png") && cli_exists(dir, "fig3/fig3.ini") &&
            cli_exists(dir, "fig3/README.md"));
  char *csv = cli_read(dir, "fig3/fig3.csv");
  ck_assert_ptr_nonnull(csv);
  ck_assert(strncmp(csv, "model,machines,step_time_s,speedup\n", 35) == 0);
  /* Dean et al. 2012 Fig. 3: the fully connected speech net is fastest at 8 machines (2.2x,
   * accepted SPEECH8_MIN to SPEECH8_MAX) and slower above */
  double s8 = speedup(csv, "speech-42m", 8);
  ck_assert_msg(s8 >= SPEECH8_MIN && s8 <= SPEECH8_MAX, "speech at 8: %.3f", s8);
  ck_assert(speedup(csv, "speech-42m", 4) < s8 && speedup(csv, "speech-42m", 16) < s8);
  ck_assert(speedup(csv, "speech-42m", 1) == 1.0);
  /* the larger, locally connected net gains more from the same machines (Fig. 3's caption) */
  ck_assert(speedup(csv, "image-80m", 8) > s8 && speedup(csv, "image-80m", 16) > speedup(csv, "speech-42m", 16));
  free(csv);
  /* --check: the same run matches what it wrote, a changed value does not */
  const char *check[] = {"reproduce", "fig3", "--quick", "--quiet", "--check", "--results", ".", NULL};
  ck_assert_int_eq(cli_run(dir, check), 0);
  char *pristine = cli_read(dir, "fig3/fig3.csv");
  csv = cli_read(dir, "fig3/fig3.csv");
  char *one = strstr(csv, "speech-42m,2,");
  one[strlen("speech-42m,2,")] = one[strlen("speech-42m,2,")] == '9' ? '8' : '9';
  cli_write(dir, "fig3/fig3.csv", csv);
  free(csv);
  ck_assert_int_eq(cli_run(dir, check), 1);
  err = cli_read(dir, "stderr");
  ck_assert_msg(strstr(err, "line 3") != NULL, "%s", err);
  free(err);
  /* --quick --check against a full grid's CSV compares the rows both have */
  size_t n = strlen(pristine);
  char *full = malloc(n + 64);
  snprintf(full, n + 64, "%sspeech-42m,144,0.5,0.4\n", pristine);
  cli_write(dir, "fig3/fig3.csv", full);
  ck_assert_int_eq(cli_run(dir, check), 0);
  char *row = strstr(full, "image-80m,16,");
  memmove(row, row + strcspn(row, "\n") + 1, strlen(row + strcspn(row, "\n") + 1) + 1); /* drop a row */
  cli_write(dir, "fig3/fig3.csv", full);
  ck_assert_int_eq(cli_run(dir, check), 1);
  err = cli_read(dir, "stderr");
  ck_assert_msg(strstr(err, "no line for 'image-80m,16,") != NULL, "%s", err);
  free(err);
  free(full);
  free(pristine);
  free(dir);
}
END_TEST

/* consensus.csv's rows: topology,weights,step_rule,alpha0, then iteration,sim_time_s,
 * consensus_error,optimality_gap, then mode, then ergodic_gap,agent_gap_max,
 * agent_ergodic_gap_max. */
#define CONS_HEADER                                                                                                 \
  "topology,weights,step_rule,alpha0,iteration,sim_time_s,consensus_error,optimality_gap,mode,ergodic_gap,"        \
  "agent_gap_max,agent_ergodic_gap_max\n"

/* Gaps F(xbar) - f* of one configuration of consensus.csv text (key = its first four
 * fields and a comma), in file order: iterations into it[] and gaps into gap[] (at most
 * cap); returns the count. */
static size_t cons_trace(const char *csv, const char *key, const char *mode, long *it, double *gap, size_t cap)
{
  size_t n = 0, klen = strlen(key);
  for (const char *p = strchr(csv, '\n'); p && p[1] && n < cap; p = strchr(p + 1, '\n')) {
    const char *row = p + 1;
    double t, e;
    char m[8];
    if (strncmp(row, key, klen) == 0 && sscanf(row + klen, "%ld,%lf,%lf,%lf,%7[a-z]", &it[n], &t, &e, &gap[n], m) == 5 &&
        strcmp(m, mode) == 0)
      n++;
  }
  return n;
}

/* Mean gap over the second half of the iterations (the plateau). */
static double plateau(const char *csv, const char *key)
{
  static long it[4096];
  static double gap[4096];
  size_t n = cons_trace(csv, key, "sync", it, gap, 4096), c = 0;
  double s = 0;
  for (size_t i = 0; i < n; i++)
    if (it[i] > it[n - 1] / 2) {
      s += gap[i];
      c++;
    }
  ck_assert_msg(c > 0, "no rows for %s", key);
  return s / (double)c;
}

/* The first iteration from which the gap stays <= tol in mode; a large number if never. */
static long reach_mode(const char *csv, const char *key, const char *mode, double tol)
{
  static long it[4096];
  static double gap[4096];
  size_t n = cons_trace(csv, key, mode, it, gap, 4096), i = n;
  ck_assert_msg(n > 0, "no %s rows for %s", mode, key);
  while (i > 0 && gap[i - 1] <= tol)
    i--;
  return i == n ? CONS_NEVER : it[i];
}

static long reach(const char *csv, const char *key, double tol)
{
  return reach_mode(csv, key, "sync", tol);
}

START_TEST(test_reproduce_consensus_quick)
{
  char *dir = cli_tmpdir();
  const char *args[] = {"reproduce", "consensus", "--quick", "--quiet", "--out", "cons", NULL};
  int rc = cli_run(dir, args);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
  free(err);
  ck_assert(cli_exists(dir, "cons/consensus.png") && cli_exists(dir, "cons/consensus.ini") &&
            cli_exists(dir, "cons/consensus-16.xml") && cli_exists(dir, "cons/README.md"));
  char *csv = cli_read(dir, "cons/consensus.csv");
  ck_assert_ptr_nonnull(csv);
  /* the documented columns first, then mode and the averaged and worst-agent gaps */
  ck_assert(strncmp(csv, CONS_HEADER, strlen(CONS_HEADER)) == 0);
  /* a diminishing step ends below the constant step's plateau, the plateau shrinks with
   * alpha, and the complete graph reaches a gap of 2 before the ring (measured with
   * --quick, 300 rounds, lazy Metropolis weights: complete 12, ring 160) */
  static long it[4096];
  static double gap[4096];
  for (int t = 0; t < 2; t++) {
    char h[64], c1[64], c2[64];
    const char *topo = t ? "complete" : "ring";
    snprintf(h, sizeof(h), "%s,lazy-metropolis,harmonic,0.2,", topo);
    snprintf(c1, sizeof(c1), "%s,lazy-metropolis,constant,0.02,", topo);
    snprintf(c2, sizeof(c2), "%s,lazy-metropolis,constant,0.005,", topo);
    size_t n = cons_trace(csv, h, "sync", it, gap, 4096);
    ck_assert(n > 10);
    double big = plateau(csv, c1), small = plateau(csv, c2);
    ck_assert_msg(gap[n - 1] < big, "%s: harmonic ends at %g, the constant 0.02 plateau is %g", topo, gap[n - 1], big);
    ck_assert_msg(small < big, "%s: plateau %g at alpha 0.005, %g at 0.02", topo, small, big);
  }
  long ring = reach(csv, "ring,lazy-metropolis,harmonic,0.2,", CONS_QUICK_GAP),
       complete = reach(csv, "complete,lazy-metropolis,harmonic,0.2,", CONS_QUICK_GAP);
  ck_assert_msg(complete < ring && ring < 300, "complete %ld, ring %ld", complete, ring);
  ck_assert(cons_trace(csv, "complete,lazy-metropolis,harmonic,0.2,", "async", it, gap, 4096) > 10);
  free(csv);
  /* --quick --check against the committed full grid compares the rows both have */
  const char *check[] = {"reproduce", "consensus", "--quick", "--quiet", "--check", "--results", RESULTS_DIR,
                         NULL};
  rc = cli_run(dir, check);
  err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
  free(err);
  /* and a changed value is found: the last digit of a gap, before ",sync," */
  char *full = cli_read("", RESULTS_DIR "/consensus/consensus.csv"); /* "/" + an absolute path */
  ck_assert_ptr_nonnull(full);
  char *row = strstr(full, "\ncomplete,lazy-metropolis,harmonic,0.2,40,");
  ck_assert_ptr_nonnull(row);
  char *last = strstr(row, ",sync,") - 1;
  *last = *last == '9' ? '8' : '9';
  cli_mkdir(dir, "consensus");
  cli_write(dir, "consensus/consensus.csv", full);
  free(full);
  const char *changed[] = {"reproduce", "consensus", "--quick", "--quiet", "--check", "--results", ".", NULL};
  ck_assert_int_eq(cli_run(dir, changed), 1);
  err = cli_read(dir, "stderr");
  ck_assert_msg(strstr(err, "expected 'complete,lazy-metropolis,harmonic,0.2,40,") != NULL, "%s", err);
  free(err);
  free(dir);
}
END_TEST

/* The committed full grid (results/consensus/consensus.csv, lazy Metropolis weights)
 * meets what its README claims: the harmonic step keeps the gap below 1e-3 on the
 * complete graph and the torus; for both diminishing rules the complete graph reaches
 * 0.1 before the torus and the torus before the ring; the constant steps' floors at
 * 0.02 and 0.005 are 2 to 8 times apart on the torus and the complete graph (the ring's
 * are not: its README explains why); and every async run ends below where it started.
 * Regenerating the results with a change that breaks one of these fails here. */
START_TEST(test_reproduce_consensus_committed)
{
  char *csv = cli_read("", RESULTS_DIR "/consensus/consensus.csv"); /* "/" + an absolute path */
  ck_assert_ptr_nonnull(csv);
  ck_assert(strncmp(csv, CONS_HEADER, strlen(CONS_HEADER)) == 0);
  static const char *const topo[] = {"complete", "torus", "ring"};
  for (int t = 0; t < 2; t++) {
    char key[64];
    snprintf(key, sizeof(key), "%s,lazy-metropolis,harmonic,0.2,", topo[t]);
    ck_assert_msg(reach(csv, key, CONS_TARGET) < CONS_NEVER, "%s: the harmonic step does not keep the gap below %g",
                  topo[t], CONS_TARGET);
  }
  static const char *const rules[] = {"harmonic,0.2", "sqrt,0.01"};
  for (int r = 0; r < 2; r++) {
    long at[3];
    for (int t = 0; t < 3; t++) {
      char key[64];
      snprintf(key, sizeof(key), "%s,lazy-metropolis,%s,", topo[t], rules[r]);
      at[t] = reach(csv, key, CONS_ORDER_GAP);
    }
    ck_assert_msg(at[0] < at[1] && at[1] < at[2] && at[2] < CONS_NEVER, "%s to %g: complete %ld, torus %ld, ring %ld",
                  rules[r], CONS_ORDER_GAP, at[0], at[1], at[2]);
  }
  for (int t = 0; t < 2; t++) {
    char a[64], b[64];
    snprintf(a, sizeof(a), "%s,lazy-metropolis,constant,0.02,", topo[t]);
    snprintf(b, sizeof(b), "%s,lazy-metropolis,constant,0.005,", topo[t]);
    double q = plateau(csv, a) / plateau(csv, b);
    ck_assert_msg(q >= CONS_FLOOR_RATIO_MIN && q <= CONS_FLOOR_RATIO_MAX, "%s: floors %g times apart", topo[t], q);
  }
  static long it[4096];
  static double gap[4096];
  static const char *const steps[] = {"constant,0.02", "constant,0.005", "harmonic,0.2", "sqrt,0.01"};
  for (int t = 0; t < 3; t++)
    for (int r = 0; r < 4; r++) {
      char key[64];
      snprintf(key, sizeof(key), "%s,lazy-metropolis,%s,", topo[t], steps[r]);
      size_t n = cons_trace(csv, key, "async", it, gap, 4096);
      ck_assert_msg(n > 10 && gap[n - 1] < gap[0], "%s async: %zu samples, gap %g -> %g", key, n, gap[0],
                    n ? gap[n - 1] : 0.0);
    }
  free(csv);
}
END_TEST

START_TEST(test_reproduce_fig3_committed)
{
  /* the quick grid's rows equal the same rows of the committed full grid
   * (results/fig3/fig3.csv): any change to the simulation that moves a speed-up shows */
  char *dir = cli_tmpdir();
  const char *check[] = {"reproduce", "fig3", "--quick", "--quiet", "--check", "--results", RESULTS_DIR, NULL};
  ck_assert_int_eq(cli_run(dir, check), 0);
  char *full = cli_read("", RESULTS_DIR "/fig3/fig3.csv"); /* "/" + an absolute path */
  char *readme = cli_read("", RESULTS_DIR "/fig3/README.md");
  /* the README names the command that wrote the CSV: the full grid (header + 4 nets x 10
   * machine counts, less image-80m on 128: its last pooled grid, 12 wide, cannot be tiled
   * 128 ways) or --quick's (2 nets x 5) */
  int quick = strstr(readme, "`dtsim reproduce fig3 --quick`") != NULL;
  ck_assert_msg(quick || strstr(readme, "`dtsim reproduce fig3`"), "%.200s", readme);
  ck_assert_int_eq(cli_lines(full), quick ? 11 : 40);
  free(readme);
  free(full);
  free(dir);
}
END_TEST

START_TEST(test_reproduce_bad_input)
{
  char *dir = cli_tmpdir();
  const char *none[] = {"reproduce", NULL};
  ck_assert_int_eq(cli_run(dir, none), 2);
  const char *unknown[] = {"reproduce", "fig9", NULL};
  ck_assert_int_eq(cli_run(dir, unknown), 2);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(strstr(err, "'fig9' is not available") && cli_lines(err) == 1, "%s", err);
  free(err);
  const char *jobs[] = {"reproduce", "fig3", "--jobs", "0", NULL};
  ck_assert_int_eq(cli_run(dir, jobs), 2);
  ck_assert(!cli_exists(dir, "results"));
  free(dir);
}
END_TEST

/* Accuracy of method/replicas/rate at sim_time_h from fig4.csv text, or -1. */
static double fig4_accuracy(const char *csv, const char *method, int replicas, const char *rate, double hours)
{
  for (const char *p = strchr(csv, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
    char m[64], r[16];
    int n;
    double t, acc;
    if (sscanf(p + 1, "%63[^,],%lf,%lf,%d,%15[^\n]", m, &t, &acc, &n, r) == 5 && strcmp(m, method) == 0 &&
        n == replicas && strcmp(r, rate) == 0 && t == hours)
      return acc;
  }
  return -1;
}

/* The committed fig4 grid's curves rise (the criterion, FIG4_RISE_SE): the SGD
 * baseline's chosen rate (its README's Results row) gains at least FIG4_RISE_SE standard
 * errors of a FIG4_TEST-example estimate from a tenth of the horizon (90 s) to the horizon. */
START_TEST(test_reproduce_fig4_committed)
{
  char *csv = cli_read("", RESULTS_DIR "/fig4/fig4.csv"), *readme = cli_read("", RESULTS_DIR "/fig4/README.md");
  ck_assert_ptr_nonnull(csv);
  ck_assert_ptr_nonnull(readme);
  char rate[16] = "";
  const char *row = strstr(readme, "| sgd (1 replica, 8 partitions) | ");
  ck_assert_msg(row && sscanf(row + strlen("| sgd (1 replica, 8 partitions) | "), "%15[^ |]", rate) == 1, "%.300s",
                readme);
  double early = fig4_accuracy(csv, "sgd", 1, rate, 90.0 / 3600), late = fig4_accuracy(csv, "sgd", 1, rate, 0.25);
  double se = sqrt(late * (1 - late) / FIG4_TEST);
  ck_assert_msg(early > 0 && late > early + FIG4_RISE_SE * se, "sgd at rate %s: %g at 90 s, %g at 900 s (SE %g)", rate,
                early, late, se);
  free(csv);
  free(readme);
}
END_TEST

#ifndef DTSIM_SANITIZE /* fig4 and fig5: Release only (see reproduce_suite) */
/* fig4 --quick: its files; the proxy starts from the warmstart on the GPU and learns, no
 * accuracy beats the label noise's ceiling, every run's evaluations lie on the 15-s grid
 * within the 900-s horizon; the README lists the configurations of more than 50 replicas as
 * not simulated; and its rows are rows of the committed grid (one run: the second that
 * `--quick --check` would make costs as much again). */
START_TEST(test_reproduce_fig4_quick)
{
  char *dir = cli_tmpdir();
  const char *args[] = {"reproduce", "fig4", "--quick", "--quiet", "--out", "fig4", NULL};
  ck_assert_int_eq(cli_run(dir, args), 0);
  ck_assert(cli_exists(dir, "fig4/fig4.png") && cli_exists(dir, "fig4/fig4.ini") && cli_exists(dir, "fig4/README.md"));
  char *csv = cli_read(dir, "fig4/fig4.csv");
  ck_assert_msg(strncmp(csv, "method,sim_time_h,accuracy,replicas,rate\n", 41) == 0, "%.80s", csv);
  /* the GPU and Downpour-Adagrad 20, each at the ladder's middle starting rung, 60 evaluations at most */
  ck_assert_int_gt(cli_lines(csv), 2);
  ck_assert_int_le(cli_lines(csv), 1 + 2 * 60);
  double first = fig4_accuracy(csv, "gpu", 1, "0.1", 15.0 / 3600), last = -1;
  for (int k = 60; k > 0 && last < 0; k--)
    last = fig4_accuracy(csv, "gpu", 1, "0.1", 15.0 * k / 3600);
  ck_assert_msg(first > FIG4_WARM_MIN && first < FIG4_WARM_MAX && last > first + FIG4_GAIN,
                "gpu: %g after 15 s, %g at its last evaluation", first, last);
  for (const char *p = strchr(csv, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
    double t, acc;
    ck_assert(sscanf(strchr(p + 1, ',') + 1, "%lf,%lf", &t, &acc) == 2);
    ck_assert_msg(acc <= FIG4_CEILING && t > 0 && t <= 0.25 + 1e-12, "%.60s", p + 1);
    double k = t * 3600 / 15;
    ck_assert_msg(fabs(k - floor(k + 0.5)) < 1e-9, "off the 15-s grid: %.60s", p + 1);
  }
  free(csv);
  char *readme = cli_read(dir, "fig4/README.md");
  ck_assert(strstr(readme, "## Paper vs dtsim") && strstr(readme, "## Rules"));
  /* rule 9: the paper's configurations of more than 50 replicas are listed, not simulated */
  ck_assert_msg(strstr(readme, "| sandblaster 2000 | - | - | not simulated (rule 9) |") &&
                    strstr(readme, "| downpour-adagrad 200 | - | - | not simulated (rule 9) |") &&
                    strstr(readme, "; not simulated (rule 9): sandblaster 2000, downpour-adagrad 200 |"),
                "%s", readme);
  free(readme);
  /* its rows are rows of the committed grid (what `--quick --check` checks, without a second run) */
  csv = cli_read(dir, "fig4/fig4.csv");
  char *full = cli_read(RESULTS_DIR "/fig4", "fig4.csv");
  ck_assert_ptr_nonnull(full);
  cli_assert_rows_within(csv, full);
  free(csv);
  free(full);
  free(dir);
}
END_TEST

/* fig5 --quick in write mode, from a folder outside the source tree (cli_run starts it in a
 * fresh /tmp folder, as a user would): it ends normally (it once crashed writing its README,
 * which --check never writes), writes its four files, and its points are points of the
 * committed full grid (the same whole runs). */
START_TEST(test_reproduce_fig5_quick)
{
  char *dir = cli_tmpdir();
  const char *args[] = {"reproduce", "fig5", "--quick", "--quiet", "--out", "fig5", NULL};
  int rc = cli_run(dir, args);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
  ck_assert_msg(cli_lines(err) == 0, "%s", err);
  free(err);
  ck_assert(cli_exists(dir, "fig5/fig5.png") && cli_exists(dir, "fig5/fig5.ini") && cli_exists(dir, "fig5/README.md"));
  char *readme = cli_read(dir, "fig5/README.md");
  ck_assert(strstr(readme, "## Paper vs dtsim") && strstr(readme, "## Rules"));
  ck_assert_msg(strstr(readme, "| sandblaster | 2000 | - | - | - | not simulated (rule 9) |") &&
                    strstr(readme, "| downpour | 200 | - | - | - | not simulated (rule 9) |"),
                "%s", readme);
  free(readme);
  char *csv = cli_read(dir, "fig5/fig5.csv"), *full = cli_read(RESULTS_DIR "/fig5", "fig5.csv");
  ck_assert_ptr_nonnull(csv);
  ck_assert_ptr_nonnull(full);
  ck_assert_int_gt(cli_lines(csv), 1);
  cli_assert_rows_within(csv, full);
  free(csv);
  free(full);
  free(dir);
}
END_TEST
#endif

/* megatron --quick: the rows of one node: the four model-parallel rows of weak scaling (the
 * 1.2B single-GPU row at the calibrated 39 Tflop/s, model.efficiency chosen for it to 1e-5,
 * efficiency falling with the model-parallel width), Table 7's two other head counts (the
 * efficiency falling with the heads, as the paper's) and Table 8's strong scaling (a
 * speed-up that rises with the GPUs, below their count); the rows equal the committed full
 * grid's (--check), which finds a change. */
START_TEST(test_reproduce_megatron_quick)
{
  char *dir = cli_tmpdir();
  const char *args[] = {"reproduce", "megatron", "--quick", "--quiet", "--jobs", "1", "--out", "meg", NULL};
  ck_assert_int_eq(cli_run(dir, args), 0);
  ck_assert(cli_exists(dir, "meg/megatron.png") && cli_exists(dir, "meg/megatron.ini") &&
            cli_exists(dir, "meg/README.md"));
  char *csv = cli_read(dir, "meg/megatron.csv");
  static const char header[] = "set,params_b,heads,gpus,mp,dp,ddp,variant,tflops_per_gpu,efficiency,step_s,speedup,"
                               "gemm_share\n";
  ck_assert_msg(strncmp(csv, header, sizeof header - 1) == 0, "%.120s", csv);
  ck_assert_int_eq(cli_lines(csv), 10);
  double prev = 2, eff8 = 0, prev_speedup = 1;
  const char *p = strchr(csv, '\n') + 1;
  for (int k = 0; k < 9; k++, p = strchr(p, '\n') + 1) {
    char set[16], ddp[16], variant[32];
    double pb, tf, eff, step, sp = 0;
    long heads, gpus, mp, dp;
    int got = sscanf(p, "%15[^,],%lf,%ld,%ld,%ld,%ld,%15[^,],%31[^,],%lf,%lf,%lf,%lf", set, &pb, &heads, &gpus, &mp,
                     &dp, ddp, variant, &tf, &eff, &step, &sp);
    ck_assert_msg(got >= 11, "row %d: %.80s", k, p);
    ck_assert(mp == gpus && dp == 1 && strcmp(ddp, "none") == 0 && strcmp(variant, "committed") == 0);
    if (k < 4) { /* weak scaling, 1 to 8 GPUs */
      ck_assert_str_eq(set, "weak");
      ck_assert_int_eq(gpus, 1L << k);
      if (k == 0)
        ck_assert_msg(fabs(tf - 39) <= TOL_CALIBRATED_TF && eff == 1, "1 GPU: %g Tflop/s", tf);
      ck_assert_msg(eff < prev && eff > EFF_MIN, "%ld GPUs: efficiency %g after %g", gpus, eff, prev);
      prev = eff;
      eff8 = eff;
    } else if (k < 6) { /* Table 7: 16 then 24 heads, each above the next, the 32-head row last */
      ck_assert_str_eq(set, "heads");
      ck_assert_int_eq(heads, k == 4 ? 16 : 24);
      ck_assert_msg(eff > eff8, "%ld heads: efficiency %g, 32 heads %g", heads, eff, eff8);
      if (k == 4)
        prev = eff;
      else
        ck_assert_msg(eff < prev, "24 heads: %g, 16 heads %g", eff, prev);
    } else { /* Table 8: 2, 4, 8 GPUs */
      ck_assert_str_eq(set, "strong");
      ck_assert_int_eq(gpus, 2L << (k - 6));
      ck_assert_msg(got == 12 && sp > prev_speedup && sp < (double)gpus, "%ld GPUs: speed-up %g", gpus, sp);
      prev_speedup = sp;
    }
  }
  free(csv);
  const char *check[] = {"reproduce", "megatron", "--quick", "--quiet", "--jobs", "1", "--check", "--results",
                         RESULTS_DIR, NULL};
  ck_assert_int_eq(cli_run(dir, check), 0);
  char *full = cli_read("", RESULTS_DIR "/megatron/megatron.csv"); /* "/" + an absolute path */
  /* header + the 9 rows of one node + 4 MP x 64 DP rows (torch DDP) + 1 (own DDP) + 3 x 4 robustness runs */
  ck_assert_int_eq(cli_lines(full), 27);
  static const char row8[] = "\nweak,8.3170,32,8,8,1,none,committed,";
  char *row = strstr(full, row8);
  ck_assert_ptr_nonnull(row);
  char *digit = row + sizeof row8; /* the 8-GPU row's Tflop/s, second digit */
  *digit = *digit == '9' ? '8' : '9';
  cli_mkdir(dir, "megatron");
  cli_write(dir, "megatron/megatron.csv", full);
  free(full);
  const char *changed[] = {"reproduce", "megatron", "--quick", "--quiet", "--jobs", "1", "--check", "--results", ".", NULL};
  ck_assert_int_eq(cli_run(dir, changed), 1);
  free(dir);
}
END_TEST

/* gemm --quick (the model alone, instant): DeepBench's 160 V100 rows, the calibration row
 * fitted (error 0 to 1e-9), the compute-bound rows (M, N, K >= 2048, as stored) within
 * GEMM_BAND of their measurements; the guide's examples; both CSVs equal the committed
 * ones (--check), which finds a change. */
START_TEST(test_reproduce_gemm_quick)
{
  char *dir = cli_tmpdir();
  const char *args[] = {"reproduce", "gemm", "--quick", "--quiet", "--out", "g", NULL};
  ck_assert_int_eq(cli_run(dir, args), 0);
  ck_assert(cli_exists(dir, "g/gemm.png") && cli_exists(dir, "g/guide.csv") && cli_exists(dir, "g/README.md"));
  char *csv = cli_read(dir, "g/gemm.csv");
  ck_assert_int_eq(cli_lines(csv), 161);
  int calibrated = 0, big = 0;
  for (const char *p = strchr(csv, '\n') + 1; *p; p = strchr(p, '\n') + 1) {
    char kernel[32], at, bt, role[16];
    double m, n, k, ms, meas, model, err, waves;
    char tile[16], bound[16];
    size_t split;
    ck_assert_int_eq(sscanf(p, "%31[^,],%lf,%lf,%lf,%c,%c,%lf,%lf,%lf,%lf,%15[^,],%zu,%lf,%15[^,],%15[^\n]", kernel, &m,
                            &n, &k, &at, &bt, &ms, &meas, &model, &err, tile, &split, &waves, bound, role),
                     15);
    ck_assert_msg(fabs(err - (model / meas - 1)) < TOL_ERROR_COLUMN, "%g x %g x %g: error %g", m, n, k, err);
    if (strcmp(role, "calibration") == 0) {
      calibrated++;
      ck_assert_msg(fabs(err) < 1e-9, "the calibration row is %g off", err);
    }
    if (at == 'N' && bt == 'N' && m >= 2048 && n >= 2048 && k >= 2048) {
      big++;
      ck_assert_msg(fabs(err) < GEMM_BAND, "%g x %g x %g: %g Tflop/s, measured %g", m, n, k, model, meas);
    }
  }
  ck_assert_int_eq(calibrated, 1);
  ck_assert_int_ge(big, 10);
  free(csv);
  const char *check[] = {"reproduce", "gemm", "--quick", "--quiet", "--check", "--results", RESULTS_DIR, NULL};
  ck_assert_int_eq(cli_run(dir, check), 0);
  char *guide = cli_read("", RESULTS_DIR "/gemm/guide.csv"), *full = cli_read("", RESULTS_DIR "/gemm/gemm.csv");
  cli_mkdir(dir, "gemm");
  cli_write(dir, "gemm/gemm.csv", full);
  char *row = strstr(guide, "\nwave,2304,1536,");
  ck_assert_ptr_nonnull(row);
  row[16] = row[16] == '9' ? '8' : '9'; /* the k column's first digit: 4096 becomes 9096 */
  cli_write(dir, "gemm/guide.csv", guide);
  free(guide);
  free(full);
  const char *changed[] = {"reproduce", "gemm", "--quick", "--quiet", "--check", "--results", ".", NULL};
  ck_assert_int_eq(cli_run(dir, changed), 1);
  free(dir);
}
END_TEST

/* pipeline --quick: 16 rows (gpipe and 1f1b at p in {2, 4}, m in {1, 4, 8}; interleaved v = 2
 * where p divides m), each bubble at or above its formula and within 10% of it (on selene the
 * messages cost a few percent of a stage's compute), GPipe's stash m and 1F1B's p; the rows
 * equal the committed full grid's (--check, Release only), which finds a change. */
START_TEST(test_reproduce_pipeline_quick)
{
  char *dir = cli_tmpdir();
  const char *args[] = {"reproduce", "pipeline", "--quick", "--quiet", "--jobs", "1", "--out", "pp", NULL};
  ck_assert_int_eq(cli_run(dir, args), 0);
  ck_assert(cli_exists(dir, "pp/pipeline.png") && cli_exists(dir, "pp/pipeline.ini") && cli_exists(dir, "pp/README.md"));
  char *csv = cli_read(dir, "pp/pipeline.csv");
  ck_assert_msg(strncmp(csv, "schedule,stages,microbatches,chunks,bubble_fraction,formula,peak_stashed\n", 73) == 0,
                "%.80s", csv);
  ck_assert_int_eq(cli_lines(csv), 17);
  const char *p = strchr(csv, '\n') + 1;
  for (int k = 0; k < 16; k++, p = strchr(p, '\n') + 1) {
    char sched[16];
    long st, m, v, peak;
    double bubble, formula;
    ck_assert_int_eq(sscanf(p, "%15[^,],%ld,%ld,%ld,%lf,%lf,%ld", sched, &st, &m, &v, &bubble, &formula, &peak), 7);
    double want = (double)(st - 1) / ((double)(v * m) + (double)(st - 1));
    ck_assert_msg(fabs(formula - want) < TOL_FORMULA, "%s p %ld m %ld: formula %g", sched, st, m, formula);
    ck_assert_msg(bubble >= formula && bubble < BUBBLE_OVER_MAX * formula, "%s p %ld m %ld: bubble %g, formula %g",
                  sched, st, m, bubble, formula);
    if (strcmp(sched, "gpipe") == 0)
      ck_assert_int_eq(peak, m);
    else if (strcmp(sched, "1f1b") == 0)
      ck_assert_int_eq(peak, m < st ? m : st);
    else
      ck_assert(strcmp(sched, "interleaved") == 0 && v == 2 && m % st == 0);
  }
  free(csv);
  /* PTD-P Table 1, --quick: the three smallest rows (1.7B, 3.6B, 7.5B), the paper's 137, 138
   * and 142 Tflop/s per GPU beside dtsim's; model.efficiency is calibrated on the first, so it
   * gives 137 to 0.1%; error = dtsim / paper - 1. */
  ck_assert(cli_exists(dir, "pp/ptdp.png") && cli_exists(dir, "pp/ptdp.ini"));
  char *pt = cli_read(dir, "pp/ptdp.csv");
  static const char pheader[] = "params_b,variant,hidden,heads,layers,t,p,d,gpus,batch,microbatch,microbatches,"
                                "chunks,paper_tflops_per_gpu,tflops_per_gpu,error,";
  ck_assert_msg(strncmp(pt, pheader, sizeof pheader - 1) == 0, "%.120s", pt);
  ck_assert_int_eq(cli_lines(pt), 4);
  static const double paper[] = {137, 138, 142};
  static const long tp[] = {1, 2, 4};
  const char *q = strchr(pt, '\n') + 1;
  for (int k = 0; k < 3; k++, q = strchr(q, '\n') + 1) {
    double pb, pap, tf, err;
    long h, a, l, t, pp, d, g, bt, b, m, v;
    char variant[32];
    ck_assert_int_eq(sscanf(q, "%lf,%31[^,],%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%lf,%lf,%lf", &pb, variant, &h,
                            &a, &l, &t, &pp, &d, &g, &bt, &b, &m, &v, &pap, &tf, &err), 16);
    ck_assert_str_eq(variant, "committed");
    ck_assert(pap == paper[k] && t == tp[k] && pp == 1 && d == 32 && b == 16 && m == 1);
    ck_assert_msg(fabs(err - (tf / pap - 1)) < TOL_ERROR_COLUMN, "row %d: error %g", k, err);
    ck_assert_msg(tf > (1 - PAPER_BAND) * pap && tf < (1 + PAPER_BAND) * pap, "row %d: %g Tflop/s per GPU", k, tf);
    if (k == 0)
      ck_assert_msg(fabs(err) < TOL_CALIBRATED_ERROR, "the calibrated row gives %g Tflop/s per GPU", tf);
  }
  free(pt);
  /* The rows a grid leaves out are named in its README, so no table row is missing silently. */
  char *readme = cli_read(dir, "pp/README.md");
  char *notrun = strstr(readme, "- Not run in this grid");
  ck_assert_ptr_nonnull(notrun);
  ck_assert_ptr_nonnull(strstr(notrun, "18.4B (256 GPUs)"));
  ck_assert_ptr_nonnull(strstr(notrun, "1008.0B (3072 GPUs)"));
  free(readme);
#ifndef DTSIM_SANITIZE /* four quick reproductions take minutes under ASan's thread contexts: Release only */
  /* The committed README names as not run every Table 1 row that the committed ptdp.csv lacks. */
  char *cptdp = cli_read("", RESULTS_DIR "/pipeline/ptdp.csv"), *creadme = cli_read("", RESULTS_DIR "/pipeline/README.md");
  static const char *const big[][2] = {{"\n145.6,committed,", "145.6B (1536 GPUs)"},
                                       {"\n310.1,committed,", "310.1B (1920 GPUs)"},
                                       {"\n529.6,committed,", "529.6B (2520 GPUs)"},
                                       {"\n1008.0,committed,", "1008.0B (3072 GPUs)"}};
  for (size_t k = 0; k < sizeof big / sizeof big[0]; k++)
    if (strstr(cptdp, big[k][0]) == NULL) {
      const char *line = strstr(creadme, "- Not run in this grid");
      ck_assert_msg(line && strstr(line, big[k][1]), "%s is not in ptdp.csv nor named as not run", big[k][1]);
    }
  free(cptdp);
  free(creadme);
  /* --check: the committed full results match, and a changed pipeline.csv value, or a changed
   * ptdp.csv value when pipeline.csv matches, is found. */
  const char *check[] = {"reproduce", "pipeline", "--quick", "--quiet", "--jobs", "1", "--check", "--results",
                         RESULTS_DIR, NULL};
  ck_assert_int_eq(cli_run(dir, check), 0);
  char *full = cli_read("", RESULTS_DIR "/pipeline/pipeline.csv"); /* "/" + an absolute path */
  ck_assert_int_eq(cli_lines(full), 42); /* header + 15 gpipe + 15 1f1b + 11 interleaved */
  char *row = strstr(full, "\n1f1b,4,8,1,0.");
  ck_assert_ptr_nonnull(row);
  row[15] = row[15] == '9' ? '8' : '9'; /* the bubble's second decimal */
  cli_mkdir(dir, "pipeline");
  cli_write(dir, "pipeline/pipeline.csv", full);
  free(full);
  char *ptdp0 = cli_read("", RESULTS_DIR "/pipeline/ptdp.csv"); /* both CSVs are found before the runs */
  cli_write(dir, "pipeline/ptdp.csv", ptdp0);
  free(ptdp0);
  const char *changed[] = {"reproduce", "pipeline", "--quick", "--quiet", "--jobs", "1", "--check", "--results", ".", NULL};
  ck_assert_int_eq(cli_run(dir, changed), 1);
  char *fullpp = cli_read("", RESULTS_DIR "/pipeline/pipeline.csv"), *ptdp = cli_read("", RESULTS_DIR "/pipeline/ptdp.csv");
  cli_write(dir, "pipeline.csv", fullpp);
  char *row2 = strstr(ptdp, "\n3.6,committed,");
  ck_assert_ptr_nonnull(row2);
  char *tfield = row2;
  for (int c = 0; c < 14; c++) /* to the 15th field, tflops_per_gpu */
    tfield = strchr(tfield + 1, ',');
  tfield[1] = tfield[1] == '9' ? '8' : '9';
  cli_write(dir, "ptdp.csv", ptdp);
  free(fullpp);
  free(ptdp);
  ck_assert_int_eq(cli_run(dir, changed), 1);
#endif
  free(dir);
}
END_TEST

#ifndef DTSIM_SANITIZE /* zero: Release only (see reproduce_suite) */
/* zero --quick: PTD-P Table 2's 174.6B rows on 384 GPUs, ZeRO-3 (t = p = 1, d = 384, b = 4) and
 * PTD-P (t = 8, p = 12, d = 4, b = 1, m = 384), the paper's 144 and 153 beside dtsim's. A ZeRO-3
 * GPU sends, per step of one microbatch, two gathers and one reduce-scatter of every parameter:
 * 3 x 2 bytes x P x (d-1)/d with P Megatron's count, 174,615,822,336 (TOL_ZERO_BYTES); the rows
 * equal the committed full grid's (--check), which finds a change. */
#define ZERO_P 174615822336.0
/* TOL_ZERO_BYTES: the messages' 64-byte headers (a GPU's 291 collectives, 96 layers x 3 and
 * the embedding's 3, of 383 ring steps each: 7.1 MB) and the entries Megatron's count leaves
 * out (the final LayerNorm's), over 1.04e12 bytes: measured 7.0e-6. */
#define TOL_ZERO_BYTES 1e-5
START_TEST(test_reproduce_zero_quick)
{
  char *dir = cli_tmpdir();
  const char *args[] = {"reproduce", "zero", "--quick", "--quiet", "--jobs", "1", "--out", "z", NULL};
  ck_assert_int_eq(cli_run(dir, args), 0);
  ck_assert(cli_exists(dir, "z/zero.png") && cli_exists(dir, "z/zero.ini") && cli_exists(dir, "z/README.md"));
  char *csv = cli_read(dir, "z/zero.csv");
  static const char header[] = "params_b,method,variant,gpus,t,p,d,batch,microbatch,microbatches,paper_tflops_per_gpu,"
                               "tflops_per_gpu,error,step_s,bytes_per_gpu,memory_gb\n";
  ck_assert_msg(strncmp(csv, header, sizeof header - 1) == 0, "%.160s", csv);
  ck_assert_int_eq(cli_lines(csv), 3);
  static const char *const method[] = {"zero3", "ptdp"};
  static const long want[2][6] = {{1, 1, 384, 1536, 4, 1}, {8, 12, 4, 1536, 1, 384}};
  static const double paper[] = {144, 153};
  const char *q = strchr(csv, '\n') + 1;
  for (int k = 0; k < 2; k++, q = strchr(q, '\n') + 1) {
    char meth[16], variant[32];
    double pb, pap, tf, err, step, bytes, mem;
    long g, t, pp, d, bt, b, m;
    ck_assert_int_eq(sscanf(q, "%lf,%15[^,],%31[^,],%ld,%ld,%ld,%ld,%ld,%ld,%ld,%lf,%lf,%lf,%lf,%lf,%lf", &pb, meth,
                            variant, &g, &t, &pp, &d, &bt, &b, &m, &pap, &tf, &err, &step, &bytes, &mem),
                     16);
    ck_assert_str_eq(meth, method[k]);
    ck_assert_str_eq(variant, "committed");
    ck_assert(g == 384 && t == want[k][0] && pp == want[k][1] && d == want[k][2] && bt == want[k][3] &&
              b == want[k][4] && m == want[k][5] && pap == paper[k]);
    ck_assert_msg(fabs(err - (tf / pap - 1)) < TOL_ERROR_COLUMN, "row %d: error %g", k, err);
    ck_assert_msg(tf > (1 - PAPER_BAND) * pap && tf < (1 + PAPER_BAND) * pap, "row %d: %g Tflop/s per GPU", k, tf);
    ck_assert(step > 0 && mem > 0 && mem < 80); /* an A100 80GB holds it */
    if (k == 0) {
      double zb = 3 * 2 * ZERO_P * 383.0 / 384.0;
      ck_assert_msg(fabs(bytes / zb - 1) < TOL_ZERO_BYTES, "ZeRO-3 sends %.17g bytes per GPU, want %.17g", bytes, zb);
    }
  }
  free(csv);
  const char *check[] = {"reproduce", "zero", "--quick", "--quiet", "--jobs", "1", "--check", "--results",
                         RESULTS_DIR, NULL};
  ck_assert_int_eq(cli_run(dir, check), 0);
  char *full = cli_read("", RESULTS_DIR "/zero/zero.csv");
  char *row = strstr(full, "\n174.6,ptdp,committed,384,");
  ck_assert_ptr_nonnull(row);
  char *tfield = row;
  for (int c = 0; c < 12; c++) /* to the 12th field, tflops_per_gpu */
    tfield = strchr(tfield + 1, ',');
  tfield[1] = tfield[1] == '9' ? '8' : '9';
  cli_mkdir(dir, "zero");
  cli_write(dir, "zero/zero.csv", full);
  free(full);
  const char *changed[] = {"reproduce", "zero", "--quick", "--quiet", "--jobs", "1", "--check", "--results", ".", NULL};
  ck_assert_int_eq(cli_run(dir, changed), 1);
  free(dir);
}
END_TEST
#endif


/* Each tcase is its own ctest entry (tests/CMakeLists.txt reads their names from here and
 * runs them with CK_RUN_CASE), so ctest -j spreads the reproductions over the cores. */
static Suite *reproduce_suite(void)
{
  Suite *s = suite_create("reproduce");
  TCase *tc = tcase_create("fig3");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_reproduce_fig3_quick);
  tcase_add_test(tc, test_reproduce_fig3_committed);
  tcase_add_test(tc, test_reproduce_bad_input);
  suite_add_tcase(s, tc);
  tc = tcase_create("consensus");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_reproduce_consensus_quick);
  tcase_add_test(tc, test_reproduce_consensus_committed);
  suite_add_tcase(s, tc);
  /* fig4 and fig5 --quick: Release only. Each is about 4 minutes of CPU in Release, and the
   * sanitizer build runs sim suites 5 to 11 times slower (its thread contexts), past their
   * 900-s timeout. */
  tc = tcase_create("fig4");
  tcase_set_timeout(tc, 900);
  tcase_add_test(tc, test_reproduce_fig4_committed);
#ifndef DTSIM_SANITIZE
  tcase_add_test(tc, test_reproduce_fig4_quick);
#endif
  suite_add_tcase(s, tc);
  tc = tcase_create("fig5");
  tcase_set_timeout(tc, 900);
#ifndef DTSIM_SANITIZE
  tcase_add_test(tc, test_reproduce_fig5_quick);
#endif
  suite_add_tcase(s, tc);
  tc = tcase_create("megatron");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_reproduce_megatron_quick);
  suite_add_tcase(s, tc);
  tc = tcase_create("gemm");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_reproduce_gemm_quick);
  suite_add_tcase(s, tc);
  tc = tcase_create("pipeline"); /* 4 quick reproductions: about 160 s alone under ASan's thread contexts */
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_reproduce_pipeline_quick);
  suite_add_tcase(s, tc);
  /* zero --quick: Release only. Two 384-GPU runs twice (--check) are about 2 minutes of CPU in
   * Release; the first two alone ran past the 900-s timeout under the sanitizers. pipeline.zero's
   * code runs under them in sim_pipeline3d (zero3_bytes, 8 GPUs). */
  tc = tcase_create("zero");
  tcase_set_timeout(tc, 900);
#ifndef DTSIM_SANITIZE
  tcase_add_test(tc, test_reproduce_zero_quick);
#endif
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(reproduce_suite)

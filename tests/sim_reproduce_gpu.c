/* sim_reproduce_gpu.c - the reproductions of GPU training at scale:
 * `dtsim reproduce megatron --quick`: its rows and --check against results/megatron;
 * `dtsim reproduce pipeline --quick`: its rows against their formula, the PTD-P Table 1 rows
 * (ptdp.csv), and --check against results/pipeline; `dtsim reproduce gemm --quick`: the
 * kernel model against DeepBench, and --check against results/gemm; `dtsim reproduce zero
 * --quick`: PTD-P Table 2's 384-GPU rows, ZeRO-3's exact bytes, and --check against
 * results/zero. Dean et al.'s and the consensus reproductions are sim_reproduce.c's. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli_util.h"

/* Tolerances and bounds, each with where it comes from (measured: the committed results). */
/* TOL_CALIBRATED_TF: model.efficiency is chosen for the 1.2B row's 39 Tflop/s to 1e-6,
 * 39e-5 Tflop/s (measured 39.000048). */
#define TOL_CALIBRATED_TF 39e-5
/* EFF_MIN: the weak-scaling efficiency falls with the model-parallel width: measured 0.954,
 * 0.825 and 0.754 at 2, 4 and 8 GPUs. */
#define EFF_MIN 0.5
/* WEAK_POINTS: issue 49's band for the 8.3B rows against the paper's 77% and 74%: 3 points
 * (measured -1.6 and -1.1). */
#define WEAK_POINTS 0.03
/* STRONG_BAND: issue 49's target for Table 8's speed-ups against the paper's 1.64, 2.34, 2.98:
 * 10% (measured +0.8%, +2.6% and +4.8% with the framework's host and its pageable RNG copies;
 * +2.5%, +6.5% and +10.9% with the copies at PCIe's line rate; without the host +9.7%, +27% and
 * +51%). */
#define STRONG_BAND 0.10
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
/* GEMM_BAND: the kernel model against DeepBench's compute-bound V100 GEMMs (as stored, M, N
 * and K >= 2048): measured within 6% (results/gemm/README.md); accepted 10%. */
#define GEMM_BAND 0.10

/* The efficiency and speed-up (0 when empty) of the row of csv whose first eight columns are key. */
static void meg_row(const char *csv, const char *key, double *eff, double *sp)
{
  const char *r = strstr(csv, key);
  ck_assert_msg(r != NULL, "no row %s", key);
  *sp = 0;
  ck_assert_int_ge(sscanf(r + strlen(key), "%*[^,],%lf,%*[^,],%lf", eff, sp), 1);
}

/* The committed full grid's rows beyond one node: torch DDP's 512 GPUs within WEAK_POINTS of
 * 74%, the 64-GPU row faster without HBM taken, Table 8 at 8 GPUs further from the paper
 * without the host thread, and further with the RNG copies pinned. */
static void meg_full_rows(const char *full)
{
  double eff, sp, eff64, eff_hbm, sp8, sp_host, sp_pinned;
  meg_row(full, "\nweak,8.3170,32,512,8,64,torch,committed,", &eff, &sp);
  ck_assert_msg(fabs(eff - 0.74) <= WEAK_POINTS, "512 GPUs: efficiency %g, paper 0.74", eff);
  meg_row(full, "\nweak,1.2135,16,64,1,64,torch,committed,", &eff64, &sp);
  meg_row(full, "\nweak,1.2135,16,64,1,64,torch,no-comm-hbm,", &eff_hbm, &sp);
  ck_assert_msg(eff_hbm > eff64, "64 GPUs: %g without HBM taken, %g with", eff_hbm, eff64);
  meg_row(full, "\nstrong,1.2135,16,8,8,1,none,committed,", &eff, &sp8);
  meg_row(full, "\nstrong,1.2135,16,8,8,1,none,no-host,", &eff, &sp_host);
  ck_assert_msg(sp_host > sp8 * (1 + STRONG_BAND), "8 GPUs: speed-up %g without the host thread, %g with", sp_host, sp8);
  meg_row(full, "\nstrong,1.2135,16,8,8,1,none,pinned-rng,", &eff, &sp_pinned);
  ck_assert_msg(sp_pinned > sp8, "8 GPUs: speed-up %g with pinned RNG copies, %g pageable", sp_pinned, sp8);
}

/* megatron --quick: the rows of one node: the four model-parallel rows of weak scaling (the
 * 1.2B single-GPU row at the calibrated 39 Tflop/s, model.efficiency chosen for it to 1e-6,
 * efficiency falling with the model-parallel width, the 8.3B row within WEAK_POINTS of the
 * paper's 77%), Table 7's two other head counts (the efficiency falling with the heads, as the
 * paper's) and Table 8's strong scaling (a speed-up that rises with the GPUs, below their count,
 * within STRONG_BAND of the paper's, the GPU waiting longer for its thread than on one); the rows
 * equal the committed full grid's (--check), which finds a change. In the committed full grid:
 * torch DDP's 512 GPUs within WEAK_POINTS of 74%, and the robustness runs without the host thread
 * and with pinned RNG copies (Table 8 at 8 GPUs further from the paper) and without HBM taken
 * (64 GPUs faster). */
START_TEST(test_reproduce_megatron_quick)
{
  char *dir = cli_tmpdir();
  const char *args[] = {"reproduce", "megatron", "--quick", "--quiet", "--jobs", "1", "--out", "meg", NULL};
  ck_assert_int_eq(cli_run(dir, args), 0);
  ck_assert(cli_exists(dir, "meg/megatron.png") && cli_exists(dir, "meg/megatron.ini") &&
            cli_exists(dir, "meg/README.md"));
  char *csv = cli_read(dir, "meg/megatron.csv");
  static const char header[] = "set,params_b,heads,gpus,mp,dp,ddp,variant,tflops_per_gpu,efficiency,step_s,speedup,"
                               "gemm_share,gpu_idle\n";
  ck_assert_msg(strncmp(csv, header, sizeof header - 1) == 0, "%.120s", csv);
  ck_assert_int_eq(cli_lines(csv), 10);
  static const double paper_speedup[] = {1.64, 2.34, 2.98};
  double prev = 2, eff8 = 0, prev_speedup = 1, idle1 = 0;
  const char *p = strchr(csv, '\n') + 1;
  for (int k = 0; k < 9; k++, p = strchr(p, '\n') + 1) {
    char set[16], ddp[16], variant[32];
    double pb, tf, eff, step, sp = 0, gemm, idle = 0;
    long heads, gpus, mp, dp;
    int got = sscanf(p, "%15[^,],%lf,%ld,%ld,%ld,%ld,%15[^,],%31[^,],%lf,%lf,%lf,%lf,%lf,%lf", set, &pb, &heads, &gpus,
                     &mp, &dp, ddp, variant, &tf, &eff, &step, &sp, &gemm, &idle);
    ck_assert_msg(got >= 11, "row %d: %.80s", k, p);
    ck_assert(mp == gpus && dp == 1 && strcmp(ddp, "none") == 0 && strcmp(variant, "committed") == 0);
    if (k < 4) { /* weak scaling, 1 to 8 GPUs */
      ck_assert_str_eq(set, "weak");
      ck_assert_int_eq(gpus, 1L << k);
      if (k == 0)
        ck_assert_msg(fabs(tf - 39) <= TOL_CALIBRATED_TF && eff == 1, "1 GPU: %g Tflop/s", tf);
      if (k == 0) /* the only weak row with a speed-up, so sscanf reads on to gpu_idle */
        idle1 = idle;
      if (k == 3)
        ck_assert_msg(fabs(eff - 0.77) <= WEAK_POINTS, "8.3B on 8 GPUs: efficiency %g, paper 0.77", eff);
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
      ck_assert_msg(got == 14 && sp > prev_speedup && sp < (double)gpus, "%ld GPUs: speed-up %g", gpus, sp);
      ck_assert_msg(fabs(sp / paper_speedup[k - 6] - 1) <= STRONG_BAND, "%ld GPUs: speed-up %g, paper %g", gpus, sp,
                    paper_speedup[k - 6]);
      ck_assert_msg(idle > idle1, "%ld GPUs: the GPU waits %g of the step for its thread, %g on one", gpus, idle, idle1);
      prev_speedup = sp;
    }
  }
  free(csv);
  const char *check[] = {"reproduce", "megatron", "--quick", "--quiet", "--jobs", "1", "--check", "--results",
                         RESULTS_DIR, NULL};
  ck_assert_int_eq(cli_run(dir, check), 0);
  char *full = cli_read("", RESULTS_DIR "/megatron/megatron.csv"); /* "/" + an absolute path */
  /* header + the 9 rows of one node + 4 MP x 64 DP rows (torch DDP) + 1 (own DDP) + the robustness runs:
   * 3 x 4, 5 without the host thread, 2 without HBM taken, 5 with pinned RNG copies */
  ck_assert_int_eq(cli_lines(full), 39);
  meg_full_rows(full);
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

/* pipeline.csv of a --quick run in dir: each bubble at or above its formula and within
 * BUBBLE_OVER_MAX of it, GPipe's stash m and 1F1B's p. */
static void check_bubble_rows(const char *dir)
{
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
}

/* PTD-P Table 1, --quick: the three smallest rows (1.7B, 3.6B, 7.5B), the paper's 137, 138
 * and 142 Tflop/s per GPU beside dtsim's; model.efficiency is calibrated on the first, so it
 * gives 137 to 0.1%; error = dtsim / paper - 1. */
static void check_ptdp_rows(const char *dir)
{
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
}

/* The rows a grid leaves out are named in its README, so no table row is missing silently:
 * the --quick run's in dir, and the committed README for every Table 1 row the committed
 * ptdp.csv lacks. */
static void check_not_run(const char *dir)
{
  char *readme = cli_read(dir, "pp/README.md");
  char *notrun = strstr(readme, "- Not run in this grid");
  ck_assert_ptr_nonnull(notrun);
  ck_assert_ptr_nonnull(strstr(notrun, "18.4B (256 GPUs)"));
  ck_assert_ptr_nonnull(strstr(notrun, "1008.0B (3072 GPUs)"));
  free(readme);
#ifndef DTSIM_SANITIZE /* the committed grid is checked in Release only, with --check below */
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
#endif
}

#ifndef DTSIM_SANITIZE /* four quick reproductions take minutes under ASan's thread contexts: Release only */
/* --check: the committed full results match, and a changed pipeline.csv value, or a changed
 * ptdp.csv value when pipeline.csv matches, is found. */
static void check_against_committed(const char *dir)
{
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
}
#endif

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
  check_bubble_rows(dir);
  check_ptdp_rows(dir);
  check_not_run(dir);
#ifndef DTSIM_SANITIZE
  check_against_committed(dir);
#endif
  free(dir);
}
END_TEST

#ifndef DTSIM_SANITIZE /* zero: Release only (see reproduce_suite) */
/* zero --quick: PTD-P Table 2's 174.6B rows on 384 GPUs, ZeRO-3 as DeepSpeed 0.3 ran it (t = p =
 * 1, d = 384, b = 4) and PTD-P (t = 8, p = 12, d = 4, b = 1, m = 384, interleaved v = 4, mirrored
 * replicas), the paper's 144 and 153 beside dtsim's. A ZeRO-3 GPU sends, per step of one
 * microbatch, in fp16: its share of 3 gathers of every layer's four weights (forward,
 * recomputation, backward: 3 x 96 x 12h^2) and 2 of the word and position embeddings, (d-1)/d
 * of them; a ring allreduce, 2 (d-1)/d, of every gradient (psi = 96 (12h^2 + 13h) + Vh + sh +
 * 2h); and, after the step, d-1 of the 40,000 elements of the persistent tensors' partitions
 * (per layer 6 of h and one each of 3h and 4h, at h / d = 32 elements each per 12,288, and the
 * final LayerNorm's two) (TOL_ZERO_BYTES); the rows equal the committed full grid's (--check),
 * which finds a change. */
#define ZERO_H 12288.0
#define ZERO_PSI (96 * (12 * ZERO_H * ZERO_H + 13 * ZERO_H) + 51200 * ZERO_H + 2048 * ZERO_H + 2 * ZERO_H)
/* TOL_ZERO_BYTES: the messages' 64-byte headers (a GPU's 292 rounds of 383 ring steps, the
 * allreduces' twice that: measured 5.5e-6) over 1.74e12 bytes. */
#define TOL_ZERO_BYTES 1e-5
START_TEST(test_reproduce_zero_quick)
{
  char *dir = cli_tmpdir();
  const char *args[] = {"reproduce", "zero", "--quick", "--quiet", "--jobs", "1", "--out", "z", NULL};
  ck_assert_int_eq(cli_run(dir, args), 0);
  ck_assert(cli_exists(dir, "z/zero.png") && cli_exists(dir, "z/zero.ini") && cli_exists(dir, "z/README.md"));
  char *csv = cli_read(dir, "z/zero.csv");
  static const char header[] = "params_b,method,variant,gpus,t,p,d,batch,microbatch,microbatches,chunks,"
                               "paper_tflops_per_gpu,tflops_per_gpu,error,step_s,bytes_per_gpu,memory_gb\n";
  ck_assert_msg(strncmp(csv, header, sizeof header - 1) == 0, "%.160s", csv);
  ck_assert_int_eq(cli_lines(csv), 3);
  static const char *const method[] = {"zero3", "ptdp"};
  static const long want[2][7] = {{1, 1, 384, 1536, 4, 1, 1}, {8, 12, 4, 1536, 1, 384, 4}};
  static const double paper[] = {144, 153};
  const char *q = strchr(csv, '\n') + 1;
  for (int k = 0; k < 2; k++, q = strchr(q, '\n') + 1) {
    char meth[16], variant[32];
    double pb, pap, tf, err, step, bytes, mem;
    long g, t, pp, d, bt, b, m, v;
    ck_assert_int_eq(sscanf(q, "%lf,%15[^,],%31[^,],%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%lf,%lf,%lf,%lf,%lf,%lf", &pb, meth,
                            variant, &g, &t, &pp, &d, &bt, &b, &m, &v, &pap, &tf, &err, &step, &bytes, &mem),
                     17);
    ck_assert_str_eq(meth, method[k]);
    ck_assert_str_eq(variant, "committed");
    ck_assert(g == 384 && t == want[k][0] && pp == want[k][1] && d == want[k][2] && bt == want[k][3] &&
              b == want[k][4] && m == want[k][5] && v == want[k][6] && pap == paper[k]);
    ck_assert_msg(fabs(err - (tf / pap - 1)) < TOL_ERROR_COLUMN, "row %d: error %g", k, err);
    ck_assert_msg(tf > (1 - PAPER_BAND) * pap && tf < (1 + PAPER_BAND) * pap, "row %d: %g Tflop/s per GPU", k, tf);
    ck_assert(step > 0 && mem > 0 && mem < 80); /* an A100 80GB holds it */
    if (k == 0) {
      double h = ZERO_H, f = 383.0 / 384.0;
      double zb = 2 * (f * (3 * 96 * 12 * h * h + 2 * (51200 * h + 2048 * h)) + 2 * f * ZERO_PSI + 383.0 * 40000);
      ck_assert_msg(fabs(bytes / zb - 1) < TOL_ZERO_BYTES, "ZeRO-3 sends %.17g bytes per GPU, want %.17g", bytes, zb);
    } else
      ck_assert(isnan(bytes)); /* mirrored replicas: no per-GPU total */
  }
  free(csv);
  const char *check[] = {"reproduce", "zero", "--quick", "--quiet", "--jobs", "1", "--check", "--results",
                         RESULTS_DIR, NULL};
  ck_assert_int_eq(cli_run(dir, check), 0);
  char *full = cli_read("", RESULTS_DIR "/zero/zero.csv");
  char *row = strstr(full, "\n174.6,ptdp,committed,384,");
  ck_assert_ptr_nonnull(row);
  char *tfield = row;
  for (int c = 0; c < 12; c++) /* past the 12th comma: the 13th field, tflops_per_gpu */
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
static Suite *reproduce_gpu_suite(void)
{
  Suite *s = suite_create("reproduce_gpu");
  TCase *tc = tcase_create("megatron");
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

CHECK_MAIN(reproduce_gpu_suite)

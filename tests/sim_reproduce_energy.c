/* sim_reproduce_energy.c - `dtsim reproduce energy` (its ctest entry is sim_reproduce_energy,
 * as every sim_reproduce_ case): the --quick grid's two rows (GPT-3 175B on 9,984 V100s,
 * Llama 2 7B on 128 A100s), each column against the ones it is made from, --check against
 * results/energy and a changed value found; and the committed full grid's claims, which its
 * README and results/README.md state. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli_util.h"

#define ENERGY_HEADER                                                                                                \
  "anchor,model,variant,gpus,t,p,d,microbatch,microbatches,step_s,tflops_per_gpu,memory_gb,steps,gpu_hours,"        \
  "days,power_per_gpu_w,energy_mwh,co2e_t,paper_gpu_hours,paper_power_w,paper_energy_mwh,paper_co2e_t,"             \
  "energy_error\n"

/* TOL_DERIVED: a column recomputed here from other 17-digit columns (products and quotients
 * of a few doubles): rounding ~1e-15 relative. */
#define TOL_DERIVED 1e-12
/* ENERGY_BAND: issue 50's target, each anchor's energy within 20% of the paper where it gives
 * the power it assumed (measured: +10.6% GPT-3, -2.7% to -10.9% Llama 2). */
#define ENERGY_BAND 0.20
/* The carbon intensities the runs are given (kg per kWh = t per MWh): Patterson et al. Table 4,
 * and Llama 2 Table 2's tCO2e over its GPU-hours x power. */
#define CI_PATTERSON 0.429
#define CI_LLAMA 0.4235

typedef struct energy_row {
  char anchor[16], model[16], variant[16];
  long gpus, t, p, d, b, m;
  double step, tflops, mem, steps, gpuh, days, watts, mwh, co2, p_gpuh, p_watts, p_mwh, p_co2, err;
} energy_row;

/* The rows of an energy.csv text, in its order; returns how many. */
static size_t energy_rows(const char *csv, energy_row *rows, size_t max)
{
  ck_assert_msg(strncmp(csv, ENERGY_HEADER, strlen(ENERGY_HEADER)) == 0, "%.200s", csv);
  size_t n = 0;
  for (const char *q = strchr(csv, '\n'); q && q[1] && n < max; q = strchr(q + 1, '\n'), n++) {
    energy_row *r = &rows[n];
    ck_assert_int_eq(sscanf(q + 1,
                            "%15[^,],%15[^,],%15[^,],%ld,%ld,%ld,%ld,%ld,%ld,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,"
                            "%lf,%lf,%lf",
                            r->anchor, r->model, r->variant, &r->gpus, &r->t, &r->p, &r->d, &r->b, &r->m, &r->step,
                            &r->tflops, &r->mem, &r->steps, &r->gpuh, &r->days, &r->watts, &r->mwh, &r->co2,
                            &r->p_gpuh, &r->p_watts, &r->p_mwh, &r->p_co2, &r->err),
                     23);
  }
  return n;
}

static void assert_rel(double got, double want, const char *what)
{
  ck_assert_msg(fabs(got - want) <= TOL_DERIVED * fabs(want), "%s: %.17g, want %.17g", what, got, want);
}

/* A row's columns against what they are made from: the steps from the paper's tokens, the
 * GPU-hours and days from the step, the energy from the devices' average power (no fabric is
 * given: the facility's joules are the devices' x PUE, 1.1 and 1, switched in the `pue` rows),
 * the emissions from the energy, the error from the paper's energy; a committed row's power
 * between the GPUs' idle and busy figures. */
static void assert_row(const energy_row *r)
{
  int gpt = strcmp(r->anchor, "patterson") == 0, switched = strcmp(r->variant, "pue") == 0;
  double tokens = gpt ? 300e9 : 2e12, per_step = gpt ? 1560.0 * 2048 : 1024.0 * 4096;
  double pue = gpt != switched ? 1.1 : 1;
  ck_assert_int_eq(r->gpus, r->t * r->p * r->d);
  assert_rel(r->steps, tokens / per_step, "steps");
  assert_rel(r->gpuh, (double)r->gpus * r->step * r->steps / 3600, "GPU-hours");
  assert_rel(r->days, r->step * r->steps / 86400, "days");
  assert_rel(r->mwh, r->watts * (double)r->gpus * r->step * pue * r->steps / 3.6e9, "MWh");
  assert_rel(r->co2, r->mwh * (gpt ? CI_PATTERSON : CI_LLAMA), "tCO2e");
  assert_rel(r->err, r->mwh / r->p_mwh - 1, "energy_error");
  /* busy: GPU limit + the node's share (DGX-1: 137.5 W; the Llama boundary: none); idle: a
   * tenth of the limit + half the share */
  double busy = gpt ? 437.5 : r->p_watts, idle = gpt ? 30 + 68.75 : r->p_watts / 10;
  if (strcmp(r->variant, "committed") == 0)
    ck_assert_msg(r->watts > idle && r->watts < busy, "%s: %g W per GPU", r->model, r->watts);
}

#ifndef DTSIM_SANITIZE /* Release only: see reproduce_energy_suite */
/* energy --quick: the committed GPT-3 row (8 x 16 x 78 GPUs, 20 microbatches of 1, the paper's
 * 10,000 x 14.8 days x 24 GPU-hours, 330 W, 1,287 MWh, 552 t) and Llama 2 7B's (1 x 4 x 32, 4
 * microbatches of 8; 184,320 GPU-hours at 400 W, 31.22 t), each column coherent, within the
 * target band, and equal to the committed full grid's row (--check), which finds a change. */
START_TEST(test_reproduce_energy_quick)
{
  char *dir = cli_tmpdir();
  const char *args[] = {"reproduce", "energy", "--quick", "--quiet", "--jobs", "1", "--out", "en", NULL};
  ck_assert_int_eq(cli_run(dir, args), 0);
  ck_assert(cli_exists(dir, "en/energy.png") && cli_exists(dir, "en/gpt3-v100.ini") &&
            cli_exists(dir, "en/llama2-a100.ini") && cli_exists(dir, "en/README.md"));
  char *csv = cli_read(dir, "en/energy.csv");
  energy_row r[3];
  ck_assert_uint_eq(energy_rows(csv, r, 3), 2);
  free(csv);
  ck_assert(strcmp(r[0].model, "gpt3-175b") == 0 && strcmp(r[0].variant, "committed") == 0);
  ck_assert(r[0].gpus == 9984 && r[0].t == 16 && r[0].p == 8 && r[0].d == 78 && r[0].b == 1 && r[0].m == 20);
  ck_assert(r[0].p_gpuh == 10000 * 14.8 * 24 && r[0].p_watts == 330 && r[0].p_mwh == 1287 && r[0].p_co2 == 552);
  ck_assert(r[0].mem < 32); /* a V100's 32 GB hold it */
  ck_assert(strcmp(r[1].model, "llama2-7b") == 0 && strcmp(r[1].variant, "committed") == 0);
  ck_assert(r[1].gpus == 128 && r[1].t == 4 && r[1].p == 1 && r[1].d == 32 && r[1].b == 8 && r[1].m == 4);
  ck_assert(r[1].p_gpuh == 184320 && r[1].p_watts == 400 && r[1].p_co2 == 31.22);
  assert_rel(r[1].p_mwh, 184320 * 400 / 1e6, "Llama 2 7B's MWh");
  for (int k = 0; k < 2; k++) {
    assert_row(&r[k]);
    ck_assert_msg(fabs(r[k].err) <= ENERGY_BAND, "%s: energy %+.1f%% from the paper's", r[k].model, 100 * r[k].err);
  }
  const char *check[] = {"reproduce", "energy", "--quick", "--quiet", "--jobs", "1", "--check", "--results",
                         RESULTS_DIR, NULL};
  ck_assert_int_eq(cli_run(dir, check), 0);
  char *full = cli_read("", RESULTS_DIR "/energy/energy.csv");
  char *row = strstr(full, "\nllama2,llama2-7b,committed,");
  ck_assert_ptr_nonnull(row);
  char *field = row;
  for (int c = 0; c < 10; c++) /* to the 10th field, step_s */
    field = strchr(field + 1, ',');
  field[1] = field[1] == '9' ? '8' : '9';
  cli_mkdir(dir, "energy");
  cli_write(dir, "energy/energy.csv", full);
  free(full);
  const char *changed[] = {"reproduce", "energy", "--quick", "--quiet", "--jobs", "1", "--check", "--results", ".",
                           NULL};
  ck_assert_int_eq(cli_run(dir, changed), 1);
  free(dir);
}
END_TEST
#endif

/* The committed full grid (results/energy/energy.csv) as its README and results/README.md state
 * it: GPT-3 and the four Llama 2 models, every column coherent, each energy within the target
 * band; one run per assumption switched for GPT-3 and Llama 2 70B, seven each, and the node's
 * power the one that moves the energy most for both. */
START_TEST(test_reproduce_energy_committed)
{
  char *csv = cli_read("", RESULTS_DIR "/energy/energy.csv");
  ck_assert_ptr_nonnull(csv);
  energy_row r[24];
  size_t n = energy_rows(csv, r, 24);
  free(csv);
  ck_assert_uint_eq(n, 19);
  int published = 0;
  double base[2] = {0, 0}, most[2] = {0, 0};
  const char *most_name[2] = {"", ""};
  for (size_t k = 0; k < n; k++) {
    assert_row(&r[k]);
    int g = strcmp(r[k].anchor, "llama2") == 0;
    if (strcmp(r[k].variant, "committed") == 0) {
      ck_assert_msg(fabs(r[k].err) <= ENERGY_BAND, "%s: energy %+.1f%%", r[k].model, 100 * r[k].err);
      published++;
      if (!g || strcmp(r[k].model, "llama2-70b") == 0)
        base[g] = r[k].mwh;
      continue;
    }
    ck_assert(base[g] > 0); /* the committed run comes first */
    double c = fabs(r[k].mwh / base[g] - 1);
    if (c > most[g])
      most[g] = c, most_name[g] = r[k].variant;
  }
  ck_assert_int_eq(published, 5);
  ck_assert_str_eq(most_name[0], "node");
  ck_assert_str_eq(most_name[1], "node");
}
END_TEST

static Suite *reproduce_energy_suite(void)
{
  Suite *s = suite_create("reproduce_energy");
  /* the quick grid twice (--check): about 15 s of CPU in Release; Release only, as zero: its
   * 9,984-GPU platform is generated and loaded twice, which the sanitizers' 20-60x would put
   * near the timeout. energy.c and platform.power run under them in sim_energy. */
  TCase *tc = tcase_create("energy");
  tcase_set_timeout(tc, 600);
#ifndef DTSIM_SANITIZE
  tcase_add_test(tc, test_reproduce_energy_quick);
#endif
  tcase_add_test(tc, test_reproduce_energy_committed);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(reproduce_energy_suite)

/* sim_energy_whatif.c - the figures platforms/energy.md quotes, each a run of the dtsim binary
 * on tests/scenarios/gpt175b-h100.ini: the what-if study of one GPT on four GPU generations,
 * and the power-cap table on H100s. Label repro (the two GB200 runs simulate every replica:
 * about 40 s of CPU each). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli_util.h"

/* TOL_QUOTED: energy.md prints 3 to 4 significant digits; half a unit of the last is at most
 * 0.005 / 2.89 = 1.7e-3 of the figure. */
#define TOL_QUOTED 2e-3

/* One row as energy.md prints it. */
typedef struct quoted_row {
  const char *name;
  const char *sets[4];
  double step_s, mfu_pct, compute_pct, exposed_pct, w_per_gpu, kwh, j_per_token;
} quoted_row;

#ifndef DTSIM_SANITIZE /* Release only: see energy_whatif_suite */
static void near(double got, double want, const char *row, const char *what)
{
  ck_assert_msg(fabs(got - want) <= TOL_QUOTED * fabs(want), "%s %s: %.6g, energy.md says %g", row, what, got, want);
}

static void check_row(const char *dir, const quoted_row *r)
{
  const char *args[16] = {"run", SCENARIO_DIR "/gpt175b-h100.ini", "--quiet", "--out", r->name};
  int n = 5;
  for (int i = 0; r->sets[i]; i++) {
    args[n++] = "--set";
    args[n++] = r->sets[i];
  }
  args[n] = NULL;
  json_t *j = cli_summary(dir, args, r->name);
  const json_t *p = json_object_get(j, "performance"), *e = json_object_get(j, "energy");
  near(json_number_value(json_object_get(p, "step_time_s")), r->step_s, r->name, "step");
  near(100 * json_number_value(json_object_get(p, "mfu")), r->mfu_pct, r->name, "MFU");
  if (r->compute_pct > 0) {
    near(json_number_value(json_object_get(p, "compute_pct")), r->compute_pct, r->name, "compute");
    near(json_number_value(json_object_get(p, "exposed_comm_pct")), r->exposed_pct, r->name, "exposed");
  }
  near(json_number_value(json_object_get(json_object_get(e, "avg_power_w"), "per_device")), r->w_per_gpu, r->name,
       "W per GPU");
  near(json_number_value(json_object_get(e, "facility_kwh")), r->kwh, r->name, "kWh");
  if (r->j_per_token > 0)
    near(json_number_value(json_object_get(e, "facility_j_per_example")) / 2048, r->j_per_token, r->name, "J/token");
  json_decref(j);
}

/* energy.md, What-if: the same GPT on four generations. */
START_TEST(test_energy_whatif_generations)
{
  char *dir = cli_tmpdir();
  const char *gen[] = {"platform", "selene", "--hosts", "512", "--power", "400,100,812.5,140", "-o", "selene.xml", NULL};
  ck_assert_int_eq(cli_run(dir, gen), 0);
  static const quoted_row rows[] = {
      {"selene", {"platform.preset=", "platform.file=selene.xml", NULL}, 59.99, 47.1, 89.8, 7.28, 761, 7.302, 8.36},
      {"h100", {NULL}, 22.77, 39.1, 85.6, 11.8, 1155, 4.241, 4.85},
      {"b200", {"platform.preset=dgx-b200", NULL}, 10.85, 36.1, 83.1, 14.3, 1589, 2.757, 3.16},
      {"gb200", {"platform.preset=gb200-nvl72", "pipeline.mirror_replicas=off", NULL}, 10.36, 34.0, 84.3, 13.0, 1479,
       2.525, 2.89},
      {"h100fp8", {"model.dtype=fp8", NULL}, 16.35, 27.2, 81.1, 16.5, 1120, 2.954, 3.38},
      {"gb200fp8", {"platform.preset=gb200-nvl72", "pipeline.mirror_replicas=off", "model.dtype=fp8", NULL}, 7.12, 24.8,
       77.1, 20.5, 1395, 1.641, 1.88},
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
    check_row(dir, &rows[i]);
  free(dir);
}
END_TEST

/* energy.md, Power caps: the 175B scenario on H100s under each cap. */
START_TEST(test_energy_whatif_caps)
{
  char *dir = cli_tmpdir();
  static const quoted_row rows[] = {
      {"c600", {"platform.power_cap=600", NULL}, 23.60, 37.7, 0, 0, 1071, 4.085, 0},
      {"c500", {"platform.power_cap=500", NULL}, 24.67, 36.1, 0, 0, 986.8, 3.944, 0},
      {"c400", {"platform.power_cap=400", NULL}, 26.14, 34.1, 0, 0, 902.1, 3.833, 0},
      {"c300", {"platform.power_cap=300", NULL}, 28.36, 31.4, 0, 0, 817.3, 3.782, 0},
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
    check_row(dir, &rows[i]);
  free(dir);
}
END_TEST

#endif

/* Release builds only, as the fig4 and fig5 reproductions: 147 s of wall with -j2 in Release,
 * and the sanitizer build runs sim suites 5 to 11 times slower (it timed out at 900 s). */
static Suite *energy_whatif_suite(void)
{
  Suite *s = suite_create("energy_whatif");
#ifndef DTSIM_SANITIZE
  TCase *tc = tcase_create("generations");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_energy_whatif_generations);
  suite_add_tcase(s, tc);
  tc = tcase_create("caps");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_energy_whatif_caps);
  suite_add_tcase(s, tc);
#endif
  return s;
}

CHECK_MAIN(energy_whatif_suite)

/* check_sweep_metric.c - --plot-metric names (sim/lab/sweep_metric.c): which names a sweep
 * can plot at all, which a point of a given scenario reports (so that a sweep refuses the
 * others before any point runs), and the default metric. */
#include <check.h>
#include <string.h>

#include "check_util.h"
#include "sim/lab/sweep_metric.h"
#include "sim/scenario.h"

START_TEST(test_sweep_metric_check)
{
  char err[600];
  ck_assert_int_eq(sweep_metric_check("sim_time_s", err, sizeof(err)), 0);
  ck_assert_int_eq(sweep_metric_check("busbw_gbps", err, sizeof(err)), 0);
  ck_assert_int_eq(sweep_metric_check("collective.busbw_gbps", err, sizeof(err)), 0);
  ck_assert_int_eq(sweep_metric_check("staleness.p99", err, sizeof(err)), 0);
  ck_assert_int_eq(sweep_metric_check("pipeline.memory_per_gpu.total_bytes", err, sizeof(err)), 0);
  ck_assert_int_eq(sweep_metric_check("status", err, sizeof(err)), -1);
  ck_assert_int_eq(sweep_metric_check("nosuchblock.x", err, sizeof(err)), -1);
  ck_assert_int_eq(sweep_metric_check("collective..x", err, sizeof(err)), -1);
  ck_assert_int_eq(sweep_metric_check("bus bw", err, sizeof(err)), -1);
  ck_assert_int_eq(sweep_metric_check("", err, sizeof(err)), -1);
}
END_TEST

/* The built-in scenario with the assignments applied. */
static scenario with(const char *const *sets)
{
  scenario s;
  char err[600];
  scenario_defaults(&s);
  ck_assert_int_eq(scenario_load_string(&s, scenario_default_ini, "<default>", err, sizeof err), 0);
  for (; *sets; sets++)
    ck_assert_msg(scenario_set(&s, *sets, err, sizeof err) == 0, "%s", err);
  return s;
}

START_TEST(test_sweep_metric_reported)
{
  scenario downpour = with((const char *const[]){NULL});
  scenario timing = with((const char *const[]){"run.algorithm=pipeline", "model.numerics=off", NULL});
  scenario numeric = with((const char *const[]){"run.algorithm=pipeline", NULL});
  scenario coll = with((const char *const[]){"run.algorithm=collective", NULL});
  scenario target = with((const char *const[]){"run.target_accuracy=0.8", NULL});
  /* every run has a step time and time shares; the default metric is one of them */
  ck_assert(sweep_metric_reported("step_time_s", &timing) && sweep_metric_reported("step_time_s", &coll));
  ck_assert(sweep_metric_reported("comm_pct", &coll) && sweep_metric_reported("idle_pct", &coll));
  /* a timing-only run measures no accuracy nor loss (issue 47: `accuracy` of such a sweep) */
  ck_assert(sweep_metric_reported("final_accuracy", &numeric) && !sweep_metric_reported("final_accuracy", &timing));
  ck_assert(!sweep_metric_reported("final_loss", &timing) && !sweep_metric_reported("accuracy", &timing));
  ck_assert(!sweep_metric_reported("accuracy", &numeric)); /* no block member of that name */
  /* the time to a target only where one is set */
  ck_assert(!sweep_metric_reported("time_to_target_s", &downpour) && sweep_metric_reported("time_to_target_s", &target));
  /* staleness where updates can be stale (Downpour), not for a synchronous pipeline */
  ck_assert(sweep_metric_reported("staleness.p99", &downpour) && !sweep_metric_reported("staleness.p99", &numeric));
  ck_assert(sweep_metric_reported("p99", &downpour) && !sweep_metric_reported("p99", &numeric));
  /* an algorithm's own block: by whole name or by the member's last name, for its runs only */
  ck_assert(sweep_metric_reported("collective.busbw_gbps", &coll) && sweep_metric_reported("busbw_gbps", &coll));
  ck_assert(sweep_metric_reported("collective.check.max_rel_error", &coll));
  ck_assert(!sweep_metric_reported("busbw_gbps", &downpour) && !sweep_metric_reported("collective.busbw_gbps", &numeric));
  ck_assert(sweep_metric_reported("pipeline.memory_per_gpu.total_bytes", &timing));
  ck_assert(sweep_metric_reported("bubble_fraction", &timing));
  /* a collective trains nothing: no examples, no model flops */
  ck_assert(!sweep_metric_reported("examples_per_s", &coll) && !sweep_metric_reported("mfu", &coll));
  ck_assert(sweep_metric_reported("mfu", &downpour));
  /* [faults]' counters only with faults */
  scenario faulty = with((const char *const[]){"faults.host_failures=host-3@1", NULL});
  ck_assert(!sweep_metric_reported("faults.lost_updates", &downpour) &&
            sweep_metric_reported("faults.lost_updates", &faulty));
}
END_TEST

START_TEST(test_sweep_metric_default)
{
  ck_assert_str_eq(sweep_metric_default(0), "step_time_s");
  ck_assert_str_eq(sweep_metric_default(1), "time_to_target_s");
  size_t m;
  ck_assert_int_eq(sweep_metric_find("step_time_s", &m), 0);
  ck_assert_int_eq(sweep_metric_find("time_to_target_s", &m), 0);
  ck_assert_int_eq(sweep_metric_find("status", &m), -1);
}
END_TEST

static Suite *sweep_metric_suite(void)
{
  Suite *s = suite_create("sweep_metric");
  ADD_TCASE(s, "names", test_sweep_metric_check);
  ADD_TCASE(s, "reported", test_sweep_metric_reported, test_sweep_metric_default);
  return s;
}

CHECK_MAIN(sweep_metric_suite)

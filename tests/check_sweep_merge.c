/* check_sweep_merge.c - sweep.png's choice of logarithmic axes (sim/lab/sweep_merge.c):
 * an axis is logarithmic when its values are all positive and span a factor of 100. */
#include <check.h>
#include <math.h>

#include "check_util.h"
#include "sim/lab/sweep_merge.h"

START_TEST(test_sweep_merge_decades)
{
  /* a size sweep of an allreduce: 1 KiB to 64 MiB, busbw from 1e-4 to 1 GB/s */
  static const double sizes[] = {1024, 65536, 4194304, 67108864};
  static const double busbw[] = {9.8e-5, 6.3e-3, 0.30, 0.97};
  ck_assert_int_eq(sweep_spans_decades(sizes, 4), 1);
  ck_assert_int_eq(sweep_spans_decades(busbw, 4), 1);
  /* exactly a factor of 100 is enough, 99 is not */
  ck_assert_int_eq(sweep_spans_decades((const double[]){1, 100}, 2), 1);
  ck_assert_int_eq(sweep_spans_decades((const double[]){1, 99}, 2), 0);
  /* a zero, a negative value, a NaN or a single value keeps the axis linear */
  ck_assert_int_eq(sweep_spans_decades((const double[]){0, 1000}, 2), 0);
  ck_assert_int_eq(sweep_spans_decades((const double[]){-1, 1000}, 2), 0);
  ck_assert_int_eq(sweep_spans_decades((const double[]){1, NAN, 1000}, 3), 0);
  ck_assert_int_eq(sweep_spans_decades((const double[]){5}, 1), 0);
}
END_TEST

START_TEST(test_sweep_merge_metric_check)
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

static Suite *sweep_merge_suite(void)
{
  Suite *s = suite_create("sweep_merge");
  TCase *tc = tcase_create("axes");
  tcase_add_test(tc, test_sweep_merge_decades);
  suite_add_tcase(s, tc);
  tc = tcase_create("metric");
  tcase_add_test(tc, test_sweep_merge_metric_check);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(sweep_merge_suite)

/* check_sweep_plot.c - sweep.png (sim/lab/sweep_plot.c): an axis is logarithmic when its
 * values are all positive and span a decade; lines that lie on one another are all seen. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "sim/lab/sweep_plot.h"

START_TEST(test_sweep_plot_decades)
{
  /* a size sweep of an allreduce: 1 KiB to 64 MiB, busbw from 1e-4 to 1 GB/s */
  static const double sizes[] = {1024, 65536, 4194304, 67108864};
  static const double busbw[] = {9.8e-5, 6.3e-3, 0.30, 0.97};
  ck_assert_int_eq(sweep_spans_decades(sizes, 4), 1);
  ck_assert_int_eq(sweep_spans_decades(busbw, 4), 1);
  /* issue 47's bandwidth sweep (platform.bw_factor 0.1, 1, 10 of speech-42m): step times
   * 15.19, 1.548 and 0.169 s span two decades */
  ck_assert_int_eq(sweep_spans_decades((const double[]){15.19, 1.548, 0.169}, 3), 1);
  /* exactly a factor of 10 is enough, 9.9 is not */
  ck_assert_int_eq(sweep_spans_decades((const double[]){1, 10}, 2), 1);
  ck_assert_int_eq(sweep_spans_decades((const double[]){1, 9.9}, 2), 0);
  /* a zero, a negative value, a NaN or a single value keeps the axis linear */
  ck_assert_int_eq(sweep_spans_decades((const double[]){0, 1000}, 2), 0);
  ck_assert_int_eq(sweep_spans_decades((const double[]){-1, 1000}, 2), 0);
  ck_assert_int_eq(sweep_spans_decades((const double[]){1, NAN, 1000}, 3), 0);
  ck_assert_int_eq(sweep_spans_decades((const double[]){5}, 1), 0);
}
END_TEST

/* The style of the plot clause of datablock $sN in script (what follows "using 1:2 "), into
 * out. */
static void clause_style(const char *script, int series, char *out, size_t len)
{
  char head[32];
  snprintf(head, sizeof head, "$s%d using 1:2 ", series);
  const char *p = strstr(script, head);
  ck_assert_msg(p != NULL, "no clause for $s%d in:\n%s", series, script);
  p += strlen(head);
  const char *end = strstr(p, "title"); /* "title ..." or "notitle" */
  ck_assert_ptr_nonnull(end);
  snprintf(out, len, "%.*s", (int)(end - p), p);
}

/* Issue 47: two pipeline schedules with the same step times drew two lines, the second
 * hiding the first. Each line now has its own point type, size, dash and width. */
START_TEST(test_sweep_plot_overlap)
{
  static const char *const keys[] = {"pipeline.microbatches", "pipeline.schedule"};
  static const char *const values[] = {"4", "gpipe", "4", "1f1b", "4", "interleaved",
                                       "8", "gpipe", "8", "1f1b", "8", "interleaved"};
  static const double y[] = {0.5, 0.5, 0.5, 0.7, 0.7, 0.7};
  sweep_plot_data d = {.n = 6, .nk = 2, .keys = keys, .values = values, .y = y, .metric = "step_time_s",
                       .label = "step time"};
  char *script = sweep_plot_script("out", &d);
  char a[128], b[128], c[128];
  clause_style(script, 0, a, sizeof a);
  clause_style(script, 1, b, sizeof b);
  clause_style(script, 2, c, sizeof c);
  ck_assert_msg(strcmp(a, b) != 0 && strcmp(b, c) != 0 && strcmp(a, c) != 0, "styles: [%s] [%s] [%s]", a, b, c);
  /* each differs in every respect: point type, its size, dash type and line width */
  static const char *const parts[] = {" pt ", " ps ", " dt ", " lw "};
  for (size_t i = 0; i < 4; i++) {
    const char *pa = strstr(a, parts[i]), *pb = strstr(b, parts[i]);
    ck_assert_msg(pa && pb, "no%s in [%s] [%s]", parts[i], a, b);
    ck_assert_msg(strtod(pa + 4, NULL) != strtod(pb + 4, NULL), "same%s: [%s] [%s]", parts[i], a, b);
  }
  free(script);
}
END_TEST

static Suite *sweep_plot_suite(void)
{
  Suite *s = suite_create("sweep_plot");
  ADD_TCASE(s, "axes", test_sweep_plot_decades);
  ADD_TCASE(s, "lines", test_sweep_plot_overlap);
  return s;
}

CHECK_MAIN(sweep_plot_suite)

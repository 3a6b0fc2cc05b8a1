/* check_progress.c - Check suite for sim/progress: the progress line's text from one
 * evaluation's figures and the wall time spent, and the long run's estimate from its pace
 * (no clock read here). */

#include <check.h>
#include <math.h>
#include <string.h>

#include "sim/progress.h"

#include "check_util.h"

/* A quarter of the bound in 10 wall seconds: 30 more at that pace. */
START_TEST(test_progress_estimate)
{
  char line[256];
  progress_point p = {.t = 2, .bound = 8, .steps = 100, .loss = 0.5, .acc = 0.9, .spent = 10};
  progress_line(line, sizeof line, &p);
  ck_assert_str_eq(line, "dtsim: sim 2 / 8 s (25%), 100 steps, loss 0.5, accuracy 0.9, about 30 s of wall time to go");
  /* run.max_steps or a target may end the run before the bound: the estimate is then an upper bound */
  p.may_end_sooner = 1;
  progress_line(line, sizeof line, &p);
  ck_assert_str_eq(line, "dtsim: sim 2 / 8 s (25%), 100 steps, loss 0.5, accuracy 0.9, "
                         "at most about 30 s of wall time to go");
}
END_TEST

/* What the run does not measure is not shown (a timing-only run, consensus's accuracy); the
 * loss goes by its algorithm's name. */
START_TEST(test_progress_unmeasured)
{
  char line[256];
  progress_point p = {.t = 4, .bound = 8, .steps = 7, .loss = NAN, .acc = NAN, .spent = 3};
  progress_line(line, sizeof line, &p);
  ck_assert_str_eq(line, "dtsim: sim 4 / 8 s (50%), 7 steps, about 3 s of wall time to go");
  p.loss = 0.25;
  progress_line(line, sizeof line, &p);
  ck_assert_str_eq(line, "dtsim: sim 4 / 8 s (50%), 7 steps, loss 0.25, about 3 s of wall time to go");
  /* consensus records its optimality gap as the loss: the line names it so */
  p.loss_name = "gap";
  progress_line(line, sizeof line, &p);
  ck_assert_str_eq(line, "dtsim: sim 4 / 8 s (50%), 7 steps, gap 0.25, about 3 s of wall time to go");
}
END_TEST

/* No estimate in the first wall second (the pace says little yet), nor at or past the bound
 * (the steps under way finish: the share stays 100%). */
START_TEST(test_progress_no_estimate)
{
  char line[256];
  progress_point p = {.t = 0.001, .bound = 0.002, .steps = 3, .loss = NAN, .acc = NAN, .spent = 0.5};
  progress_line(line, sizeof line, &p);
  ck_assert_str_eq(line, "dtsim: sim 0.001 / 0.002 s (50%), 3 steps");
  p.t = 0.0021;
  p.spent = 5;
  progress_line(line, sizeof line, &p);
  ck_assert_str_eq(line, "dtsim: sim 0.0021 / 0.002 s (100%), 3 steps");
}
END_TEST

/* A short buffer holds the line's start, terminated, and nothing is written past it. */
START_TEST(test_progress_truncated)
{
  char line[32];
  memset(line, 'x', sizeof line);
  progress_point p = {.t = 2, .bound = 8, .steps = 100, .loss = 0.5, .acc = 0.9, .spent = 10};
  progress_line(line, 20, &p);
  ck_assert_str_eq(line, "dtsim: sim 2 / 8 s ");
  for (size_t i = 20; i < sizeof line; i++)
    ck_assert_int_eq(line[i], 'x');
}
END_TEST

/* A sweep's time left: the pace of the points finished so far times the points left. */
START_TEST(test_progress_sweep)
{
  char line[80];
  progress_sweep_left(line, sizeof line, 2, 4, 10); /* 5 s a point, 4 to go */
  ck_assert_str_eq(line, ", about 20 s of wall time to go");
  progress_sweep_left(line, sizeof line, 3, 0, 10); /* the last point: nothing left */
  ck_assert_str_eq(line, "");
  progress_sweep_left(line, sizeof line, 0, 4, 10); /* no pace yet */
  ck_assert_str_eq(line, "");
  progress_sweep_left(line, sizeof line, 1, 4, 0.5); /* the first wall second */
  ck_assert_str_eq(line, "");
}
END_TEST

/* Issue 47: `run --set run.algorithm=sgd` with the defaults ran 21 minutes without a word.
 * Its pace here, 0.0127 simulated s in its first 2 wall s, puts the 8 s bound at 1260 s: 21
 * minutes, said in the first line. */
START_TEST(test_progress_long_run)
{
  char line[400];
  ck_assert_int_eq(progress_estimate(line, sizeof line, 0.0127, 8, 0, 2), 1);
  ck_assert_str_eq(line, "dtsim: this run will take about 21 min of wall time: an estimate, at its pace over its "
                         "first 2 wall s (0.00635 simulated s per wall s) up to run.max_sim_time = 8 s");
  /* a target may end it first: an upper bound */
  ck_assert_int_eq(progress_estimate(line, sizeof line, 0.0127, 8, 1, 2), 1);
  ck_assert_msg(strstr(line, "will take at most about 21 min") && strstr(line, "unless run.target_accuracy ends it "
                                                                              "sooner"),
                "%s", line);
  /* past two hours, in hours: 0.1 simulated s per wall s to 3600 s */
  ck_assert_int_eq(progress_estimate(line, sizeof line, 0.2, 3600, 0, 2), 1);
  ck_assert_msg(strstr(line, "about 10.0 h of wall time"), "%s", line);
}
END_TEST

/* A run within PROGRESS_LONG (the built-in scenario: 8 simulated s in about 10 wall s), one
 * that has not advanced yet, and one past its bound say nothing. */
START_TEST(test_progress_short_run)
{
  char line[400] = "x";
  ck_assert_int_eq(progress_estimate(line, sizeof line, 1.6, 8, 0, 2), 0);
  ck_assert_str_eq(line, "");
  /* exactly PROGRESS_LONG is not over it */
  ck_assert_int_eq(progress_estimate(line, sizeof line, 8 * 2 / PROGRESS_LONG, 8, 0, 2), 0);
  ck_assert_int_eq(progress_estimate(line, sizeof line, 0, 8, 0, 2), 0);
  ck_assert_int_eq(progress_estimate(line, sizeof line, 9, 8, 0, 2), 0);
}
END_TEST

/* Between evaluations the line has the simulated time and no steps (steps < 0). */
START_TEST(test_progress_between_evaluations)
{
  char line[256];
  progress_point p = {.t = 0.02, .bound = 8, .steps = -1, .loss = NAN, .acc = NAN, .spent = 2};
  progress_line(line, sizeof line, &p);
  ck_assert_str_eq(line, "dtsim: sim 0.02 / 8 s (0%), about 798 s of wall time to go");
}
END_TEST

Suite *progress_suite(void)
{
  Suite *s = suite_create("progress");
  ADD_TCASE(s, "estimate", test_progress_estimate);
  ADD_TCASE(s, "unmeasured", test_progress_unmeasured);
  ADD_TCASE(s, "no_estimate", test_progress_no_estimate);
  ADD_TCASE(s, "truncated", test_progress_truncated);
  ADD_TCASE(s, "sweep", test_progress_sweep);
  ADD_TCASE(s, "long_run", test_progress_long_run, test_progress_short_run, test_progress_between_evaluations);
  return s;
}

CHECK_MAIN(progress_suite)

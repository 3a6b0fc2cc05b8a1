/* check_corepool.c - Check suite for models/corepool: equal tasks list-scheduled over a
 * machine's cores (the per-message CPU of a partitioned replica, platform.msg_cores). */

#include <check.h>
#include <stddef.h>

#include "models/corepool.h"

#include "check_util.h"

/* Costs and times are multiples of 1/4, exact in binary, so every expected value below is
 * exact (no tolerance): each is worked out by hand in the comment beside it. */

START_TEST(test_corepool_create)
{
  ck_assert_ptr_null(corepool_create(0));
  corepool_free(NULL);
  corepool *p = corepool_create(3);
  ck_assert_ptr_nonnull(p);
  ck_assert_double_eq(corepool_end(p), 0); /* all free at 0, nothing scheduled */
  corepool_free(p);
}
END_TEST

/* k tasks of cost o ready together on C cores end after ceil(k/C) o: Dean'12's 16 cores
 * (platforms/README) sending a fully connected layer's 7, 16, 17 and 31 messages. */
START_TEST(test_corepool_rounds)
{
  static const struct {
    size_t k, rounds;
  } cases[] = {{1, 1}, {7, 1}, {16, 1}, {17, 2}, {31, 2}, {32, 2}, {33, 3}, {143, 9}};
  corepool *p = corepool_create(16);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    corepool_reset(p, 5.0);
    double last = 0;
    for (size_t j = 0; j < cases[i].k; j++)
      last = corepool_add(p, 5.0, 0.25);
    ck_assert_double_eq(corepool_end(p), 5.0 + 0.25 * (double)cases[i].rounds);
    ck_assert_double_eq(last, corepool_end(p)); /* the last task is in the last round */
  }
  corepool_free(p);
}
END_TEST

/* One core is processing one after another: end_i = max(t_i, end_{i-1}) + o, the
 * recurrence of receiving a message and then spending o on it before the next. */
START_TEST(test_corepool_one_core)
{
  static const double ready[] = {1.0, 1.0, 3.5, 3.75, 10.0};
  static const double expect[] = {1.5, 2.0, 4.0, 4.5, 10.5}; /* o = 0.5 */
  corepool *p = corepool_create(1);
  corepool_reset(p, 1.0);
  for (size_t i = 0; i < 5; i++)
    ck_assert_double_eq(corepool_add(p, ready[i], 0.5), expect[i]);
  ck_assert_double_eq(corepool_end(p), 10.5);
  corepool_free(p);
}
END_TEST

/* Tasks that arrive one by one on 2 cores, cost 1, from a reset at 10: 10 -> 11 (core 0),
 * 10.5 -> 11.5 (core 1), 11 -> 12 (core 0, free at 11), 11.25 -> 12.5 (core 1, free at
 * 11.5); a late one at 20 starts at once on core 0 (free at 12) -> 21. */
START_TEST(test_corepool_arrivals)
{
  static const double ready[] = {10.0, 10.5, 11.0, 11.25, 20.0};
  static const double expect[] = {11.0, 11.5, 12.0, 12.5, 21.0};
  corepool *p = corepool_create(2);
  corepool_reset(p, 10.0);
  for (size_t i = 0; i < 5; i++)
    ck_assert_double_eq(corepool_add(p, ready[i], 1.0), expect[i]);
  ck_assert_double_eq(corepool_end(p), 21.0);
  corepool_reset(p, 30.0); /* a new phase forgets the old one */
  ck_assert_double_eq(corepool_end(p), 30.0);
  ck_assert_double_eq(corepool_add(p, 29.0, 1.0), 31.0); /* ready before the phase: starts at it */
  corepool_free(p);
}
END_TEST

Suite *corepool_suite(void)
{
  Suite *s = suite_create("corepool");
  ADD_TCASE(s, "create", test_corepool_create);
  ADD_TCASE(s, "rounds", test_corepool_rounds);
  ADD_TCASE(s, "one_core", test_corepool_one_core);
  ADD_TCASE(s, "arrivals", test_corepool_arrivals);
  return s;
}

CHECK_MAIN(corepool_suite)

/* check_dataparallel.c - algorithms/dataparallel in process: the gradient buckets of DDP
 * (dataparallel_buckets), filled from the last layer backwards up to a byte cap. The
 * algorithm's runs through the CLI are in sim_dataparallel.c. */
#include <check.h>

#include "algorithms/dataparallel.h"
#include "check_util.h"
#include "models/arch.h"

START_TEST(test_dataparallel_buckets)
{
  /* 64-256-256-256-10: layers of 16640, 65792, 65792 and 2570 parameters (weights and
   * biases), filled from the last layer backwards. */
  arch *a = arch_create();
  arch_add_input(a, 64, 1, 1);
  arch_add_dense(a, 256);
  arch_add_dense(a, 256);
  arch_add_dense(a, 256);
  arch_add_dense(a, 10);
  size_t first[5];
  double elems[5];
  /* 262144 bytes of fp32: {2570 + 65792} reaches it, {65792} alone too, {16640} is the rest */
  ck_assert_uint_eq(dataparallel_buckets(a, 262144, 4, first, elems), 3);
  ck_assert_uint_eq(first[0], 3);
  ck_assert_uint_eq(first[1], 2);
  ck_assert_uint_eq(first[2], 1);
  ck_assert_double_eq(elems[0], 68362);
  ck_assert_double_eq(elems[1], 65792);
  ck_assert_double_eq(elems[2], 16640);
  /* fp16 halves the bytes: 2570 + 65792 + 65792 = 134154 elements are the first 262144-byte bucket */
  ck_assert_uint_eq(dataparallel_buckets(a, 262144, 2, first, elems), 2);
  ck_assert_double_eq(elems[0], 134154);
  ck_assert_double_eq(elems[1], 16640);
  /* 0: one bucket; 1 byte: one bucket per layer; counting only (NULL arrays) */
  ck_assert_uint_eq(dataparallel_buckets(a, 0, 4, first, elems), 1);
  ck_assert_double_eq(elems[0], 150794);
  ck_assert_uint_eq(dataparallel_buckets(a, 1, 4, NULL, NULL), 4);
  arch_free(a);
}
END_TEST

static Suite *dataparallel_suite(void)
{
  Suite *s = suite_create("dataparallel");
  TCase *tc = tcase_create("buckets");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_dataparallel_buckets);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(dataparallel_suite)

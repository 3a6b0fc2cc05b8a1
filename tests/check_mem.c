/* check_mem.c - models/mem's model state per GPU under ZeRO (mem_zero_state) against the
 * ZeRO paper's own numbers (Rajbhandari et al., SC'20, Table 1 and sec. 5.3: 7.5B
 * parameters on 64 GPUs, mixed-precision Adam). */
#include <check.h>

#include "check_util.h"
#include "models/mem.h"

/* GB as the paper counts them: 1e9 bytes. */
#define GB 1e9
/* PAPER_ROUNDING_GB: the paper prints 31.4, 16.6 and 1.88 GB (three significant figures):
 * half a unit of the last printed digit, 0.05 GB, bounds its rounding. */
#define PAPER_ROUNDING_GB 0.05

START_TEST(test_mem_zero_paper)
{
  /* psi = 7.5e9, N_d = 64, 2-byte parameters and gradients, K = 12: baseline (2 + 2 + K) psi
   * = 120 GB; stage 1 2 psi + 2 psi + K psi / N_d = 15 + 15 + 1.40625; stage 2 2 psi +
   * (2 + K) psi / N_d = 15 + 1.640625; stage 3 (2 + 2 + K) psi / N_d = 1.875. */
  const double psi = 7.5e9, nd = 64, want[4] = {120, 31.40625, 16.640625, 1.875}, paper[4] = {120, 31.4, 16.6, 1.88};
  for (int stage = 0; stage < 4; stage++) {
    mem_zero m = mem_zero_state(stage, psi, nd, 2, 12);
    double total = mem_zero_total(&m);
    ck_assert_msg(total == want[stage] * GB, "stage %d: %.17g bytes", stage, total);
    ck_assert_double_eq_tol(total / GB, paper[stage], PAPER_ROUNDING_GB);
  }
  /* what each stage shards: stage 1 the optimizer state, 2 the gradients too, 3 the parameters */
  mem_zero s1 = mem_zero_state(1, psi, nd, 2, 12), s2 = mem_zero_state(2, psi, nd, 2, 12);
  mem_zero s3 = mem_zero_state(3, psi, nd, 2, 12);
  ck_assert_double_eq(s1.params, 2 * psi);
  ck_assert_double_eq(s1.grads, 2 * psi);
  ck_assert_double_eq(s1.optimizer, 12 * psi / nd);
  ck_assert_double_eq(s2.params, 2 * psi);
  ck_assert_double_eq(s2.grads, 2 * psi / nd);
  ck_assert_double_eq(s3.params, 2 * psi / nd);
  /* one rank: every stage holds everything */
  for (int stage = 0; stage < 4; stage++) {
    mem_zero m = mem_zero_state(stage, psi, 1, 2, 12);
    ck_assert_double_eq(mem_zero_total(&m), 120 * GB);
  }
}
END_TEST

static Suite *mem_suite(void)
{
  Suite *s = suite_create("mem");
  TCase *tc = tcase_create("zero");
  tcase_add_test(tc, test_mem_zero_paper);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(mem_suite)

/* check_cost.c - Check suite for models/cost: element sizes, dense and
 * transformer flops, parameter-server update flops and the virtual networks. */

#include <check.h>
#include <stddef.h>

#include "models/cost.h"

#include "check_util.h"

/* Tolerances, each with where it comes from. */
/* TOL_PAPER_REL: Dean et al. 2012 sec. 5 give the speech net as "about 42 million"
 * parameters; the count must be 41.8e6 within 0.5% (it is 0.05% below). */
#define TOL_PAPER_REL 0.005

START_TEST(test_cost_dtype)
{
  cost_dtype t;
  ck_assert_uint_eq(cost_dtype_bytes(COST_FP32), 4);
  ck_assert_uint_eq(cost_dtype_bytes(COST_FP16), 2);
  ck_assert_uint_eq(cost_dtype_bytes(COST_BF16), 2);
  ck_assert_int_eq(cost_dtype_parse("bf16", &t), 0);
  ck_assert_int_eq(t, COST_BF16);
  ck_assert_int_eq(cost_dtype_parse("fp32", &t), 0);
  ck_assert_int_eq(t, COST_FP32);
  ck_assert_str_eq(cost_dtype_name(COST_FP16), "fp16");
  ck_assert_int_eq(cost_dtype_parse("fp64", &t), -1);
  ck_assert_int_eq(cost_dtype_parse("FP32", &t), -1);
}
END_TEST

/* By hand: a 3 -> 4 layer has 12 weights; 2 flops each forward, 4 backward. */
START_TEST(test_cost_dense)
{
  ck_assert_double_eq(cost_dense_fwd_flops(3, 4), 24.0);
  ck_assert_double_eq(cost_dense_bwd_flops(3, 4), 48.0);
}
END_TEST

/* By hand for 2-3-1: weights 2*3 + 3*1 = 9, biases 3 + 1 = 4; flops 6 * 9 = 54. */
START_TEST(test_cost_mlp)
{
  static const size_t sizes[] = {2, 3, 1};
  ck_assert_double_eq(cost_mlp_params(3, sizes), 13.0);
  ck_assert_double_eq(cost_mlp_train_flops(3, sizes), 54.0);
  ck_assert_double_eq(cost_mlp_params(1, sizes), 0.0);
}
END_TEST

/* By hand: b=1, s=2, h=3 gives 24*1*2*9 + 4*1*4*3 = 432 + 48 = 480. */
START_TEST(test_cost_transformer)
{
  ck_assert_double_eq(cost_transformer_fwd_flops(1, 2, 3), 480.0);
  /* Linear in b: the formula has no batch-independent term. */
  ck_assert_double_eq(cost_transformer_fwd_flops(8, 2, 3), 8 * 480.0);
}
END_TEST

/* Dean et al., NIPS 2012, sec. 5: 440 inputs, 4 x 2560 sigmoid, 8192 softmax,
 * "about 42 million" parameters: 440*2560 + 3*2560^2 + 2560*8192 weights plus
 * 4*2560 + 8192 biases = 41,777,152 (models/arch.c builds speech-42m from these). */
START_TEST(test_cost_speech_shapes)
{
  static const size_t sizes[] = {440, 2560, 2560, 2560, 2560, 8192};
  ck_assert_double_eq(cost_mlp_params(6, sizes), 41777152.0);
  ck_assert_double_eq_tol(cost_mlp_params(6, sizes), 41.8e6, TOL_PAPER_REL * 41.8e6);
  ck_assert_double_eq(cost_mlp_train_flops(6, sizes), 6.0 * (440.0 * 2560 + 3.0 * 2560 * 2560 + 2560.0 * 8192));
}
END_TEST

/* Rates from cost.h: SGD 2 flops per parameter, Adagrad 6. */
START_TEST(test_cost_update)
{
  ck_assert_double_eq(cost_update_flops(1000, 0), 2000.0);
  ck_assert_double_eq(cost_update_flops(1000, 1), 6000.0);
  ck_assert_double_eq(cost_update_flops(0, 1), 0.0);
}
END_TEST

Suite *cost_suite(void)
{
  Suite *s = suite_create("cost");
  ADD_TCASE(s, "dtype", test_cost_dtype);
  ADD_TCASE(s, "dense", test_cost_dense);
  ADD_TCASE(s, "mlp", test_cost_mlp);
  ADD_TCASE(s, "transformer", test_cost_transformer);
  ADD_TCASE(s, "speech", test_cost_speech_shapes);
  ADD_TCASE(s, "update", test_cost_update);
  return s;
}

CHECK_MAIN(cost_suite)

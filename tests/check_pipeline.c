/* check_pipeline.c - algorithms/pipeline in process: the pure schedule generator (every
 * operation once, dependencies, 1F1B warm-up, Megatron's interleaved order), the balanced
 * split, and the layer-range passes behind the MLP stage kernel. The algorithm's runs
 * through the CLI are in sim_pipeline.c. */
#include <check.h>
#include <stdlib.h>

#include "algorithms/pipeline.h"
#include "check_util.h"
#include "models/arch.h"
#include "models/data.h"
#include "models/minibatch.h"
#include "models/net.h"
#include "models/rng.h"

/* Tolerances, each with where it comes from. */
/* TOL_FORMULA: (p-1) / (v m + p - 1) is one division of small integers, correctly rounded
 * (<= u = 1.1e-16 relative), against 3/19 or 0.75 written here; 1e-15 leaves a margin. */
#define TOL_FORMULA 1e-15

/* ---- the schedule generator (pure) ----------------------------------------- */

/* Runs the p devices' lists as a pipeline would, with unbounded buffers: a device
 * executes its next operation once its input exists (forward (j, c): forward (j, c-1)
 * done; backward (j, c): forward (j, c) done on this device and backward (j, c+1) done).
 * Checks every (direction, microbatch, chunk) of each device appears once and that a
 * chunk's forwards and backwards each come in microbatch order. Returns 1 if every list
 * runs to its end (no deadlock), 0 otherwise. */
static int schedule_runs(pipeline_schedule s, size_t p, long m, size_t v)
{
  size_t K = p * v, n = 2 * (size_t)m * v;
  pipeline_op **ops = malloc(p * sizeof(*ops));
  size_t *next = calloc(p, sizeof(size_t));
  char *fdone = calloc(K * (size_t)m, 1), *bdone = calloc(K * (size_t)m, 1);
  long *nextf = calloc(K, sizeof(long)), *nextb = calloc(K, sizeof(long));
  for (size_t d = 0; d < p; d++) {
    ops[d] = malloc(n * sizeof(pipeline_op));
    ck_assert_uint_eq(pipeline_schedule_ops(s, p, m, v, d, ops[d]), n);
    ck_assert_uint_eq(pipeline_schedule_ops(s, p, m, v, d, NULL), n);
    for (size_t i = 0; i < n; i++) {
      const pipeline_op *o = &ops[d][i];
      ck_assert_uint_eq(o->chunk % p, d); /* device d holds chunks d, d+p, ... */
      ck_assert(o->microbatch >= 0 && o->microbatch < m && o->chunk < K);
      long *want = o->backward ? &nextb[o->chunk] : &nextf[o->chunk];
      ck_assert_int_eq(o->microbatch, *want); /* once each, in microbatch order */
      (*want)++;
    }
  }
  for (size_t c = 0; c < K; c++)
    ck_assert(nextf[c] == m && nextb[c] == m);
  int progress = 1;
  while (progress) {
    progress = 0;
    for (size_t d = 0; d < p; d++)
      while (next[d] < n) {
        const pipeline_op *o = &ops[d][next[d]];
        size_t at = o->chunk * (size_t)m + (size_t)o->microbatch;
        int ready = o->backward ? fdone[at] && (o->chunk + 1 == K || bdone[at + (size_t)m])
                                : o->chunk == 0 || fdone[at - (size_t)m];
        if (!ready)
          break;
        (o->backward ? bdone : fdone)[at] = 1;
        next[d]++;
        progress = 1;
      }
  }
  int all = 1;
  for (size_t d = 0; d < p; d++) {
    all &= next[d] == n;
    free(ops[d]);
  }
  free(ops);
  free(next);
  free(fdone);
  free(bdone);
  free(nextf);
  free(nextb);
  return all;
}

START_TEST(test_pipeline_schedule_complete)
{
  for (size_t p = 1; p <= 8; p++)
    for (long m = 1; m <= 17; m++) {
      ck_assert_msg(schedule_runs(PIPELINE_GPIPE, p, m, 1), "gpipe p %zu m %ld", p, m);
      ck_assert_msg(schedule_runs(PIPELINE_1F1B, p, m, 1), "1f1b p %zu m %ld", p, m);
      for (size_t v = 2; v <= 4 && m % (long)p == 0; v++)
        ck_assert_msg(schedule_runs(PIPELINE_INTERLEAVED, p, m, v), "interleaved p %zu m %ld v %zu", p, m, v);
    }
}
END_TEST

/* The most forwards a device has done whose backward it has not: its stash. */
static long in_flight(const pipeline_op *ops, size_t n)
{
  long cur = 0, peak = 0;
  for (size_t i = 0; i < n; i++) {
    cur += ops[i].backward ? -1 : 1;
    peak = cur > peak ? cur : peak;
  }
  return peak;
}

START_TEST(test_pipeline_schedule_warmup)
{
  /* PipeDream-Flush (Narayanan et al. 2021 Fig. 4 top): stage s runs p-s-1 forwards, then
   * alternates forward and backward, then drains; GPipe runs all m forwards first. */
  pipeline_op ops[64];
  size_t p = 4;
  long m = 8;
  for (size_t s = 0; s < p; s++) {
    ck_assert_uint_eq(pipeline_schedule_ops(PIPELINE_1F1B, p, m, 1, s, ops), 16);
    size_t w = p - s - 1;
    for (size_t i = 0; i < w; i++)
      ck_assert_msg(!ops[i].backward && ops[i].microbatch == (long)i, "stage %zu op %zu", s, i);
    for (size_t i = 0; i < (size_t)m - w; i++) {
      ck_assert(!ops[w + 2 * i].backward && ops[w + 2 * i].microbatch == (long)(w + i));
      ck_assert(ops[w + 2 * i + 1].backward && ops[w + 2 * i + 1].microbatch == (long)i);
    }
    for (size_t i = w + 2 * ((size_t)m - w); i < 16; i++)
      ck_assert(ops[i].backward);
    ck_assert_int_eq(in_flight(ops, 16), (long)(p - s));
    ck_assert_uint_eq(pipeline_schedule_ops(PIPELINE_GPIPE, p, m, 1, s, ops), 16);
    for (size_t i = 0; i < 16; i++)
      ck_assert(ops[i].backward == (i >= 8) && ops[i].microbatch == (long)(i % 8));
    ck_assert_int_eq(in_flight(ops, 16), m);
  }
  /* fewer microbatches than stages: the warm-up is cut at m */
  ck_assert_uint_eq(pipeline_schedule_ops(PIPELINE_1F1B, 8, 2, 1, 0, ops), 4);
  ck_assert(!ops[0].backward && !ops[1].backward && ops[2].backward && ops[3].backward);
}
END_TEST

START_TEST(test_pipeline_schedule_interleaved)
{
  /* p = 2, v = 2, m = 4, device 0 (chunks 0 and 2). Expected order worked out by hand from
   * Megatron-LM's schedules.py (forward_backward_pipelining_with_interleaving): warm-up
   * (p-s-1)*2 + (v-1)*p = 4 forwards; the k-th forward runs microbatch (k / pv) p + k mod p
   * on local chunk (k mod pv) / p, the k-th backward local chunk v-1 - (k mod pv) / p. */
  static const int want[16][3] = {{0, 0, 0}, {0, 1, 0}, {0, 0, 2}, {0, 1, 2}, {0, 2, 0}, {1, 0, 2},
                                  {0, 3, 0}, {1, 1, 2}, {0, 2, 2}, {1, 0, 0}, {0, 3, 2}, {1, 1, 0},
                                  {1, 2, 2}, {1, 3, 2}, {1, 2, 0}, {1, 3, 0}};
  pipeline_op ops[16];
  ck_assert_uint_eq(pipeline_schedule_ops(PIPELINE_INTERLEAVED, 2, 4, 2, 0, ops), 16);
  for (size_t i = 0; i < 16; i++)
    ck_assert_msg(ops[i].backward == want[i][0] && ops[i].microbatch == want[i][1] &&
                      ops[i].chunk == (size_t)want[i][2],
                  "op %zu: got (%d, %ld, %zu)", i, ops[i].backward, ops[i].microbatch, ops[i].chunk);
  /* refusals: chunks without interleaving, m not a multiple of p, zeros */
  ck_assert_uint_eq(pipeline_schedule_ops(PIPELINE_1F1B, 2, 4, 2, 0, ops), 0);
  ck_assert_uint_eq(pipeline_schedule_ops(PIPELINE_GPIPE, 2, 4, 2, 0, ops), 0);
  ck_assert_uint_eq(pipeline_schedule_ops(PIPELINE_INTERLEAVED, 4, 6, 2, 0, ops), 0);
  ck_assert_uint_eq(pipeline_schedule_ops(PIPELINE_1F1B, 2, 4, 1, 2, ops), 0);
  ck_assert_uint_eq(pipeline_schedule_ops(PIPELINE_1F1B, 0, 4, 1, 0, ops), 0);
  pipeline_schedule s;
  ck_assert_int_eq(pipeline_schedule_parse("interleaved", &s), 0);
  ck_assert_int_eq(s, PIPELINE_INTERLEAVED);
  ck_assert_int_eq(pipeline_schedule_parse("zb-h1", &s), -1);
}
END_TEST

START_TEST(test_pipeline_formula_and_split)
{
  /* GPipe sec. 2.3's example: K = 4 partitions, M = 16 micro-batches: 3/19 = 15.8% idle;
   * PTD-P sec. 2.2.2: interleaving divides the bubble time by v. */
  ck_assert_double_eq_tol(pipeline_bubble_formula(PIPELINE_GPIPE, 4, 16, 1), 3.0 / 19, TOL_FORMULA);
  ck_assert_double_eq_tol(pipeline_bubble_formula(PIPELINE_1F1B, 4, 1, 1), 0.75, TOL_FORMULA);
  ck_assert_double_eq_tol(pipeline_bubble_formula(PIPELINE_INTERLEAVED, 4, 8, 2), 3.0 / 19, TOL_FORMULA);
  /* 16 inputs, layers of 64, 64, 64, 64 units: flops per example 2x16x64, then 2x64x64
   * three times (x3 for training); into 2 chunks the largest is smallest as {2, 2}
   * (2048 + 8192 vs 16384); into 4, one each; 5 chunks of 4 layers: impossible. */
  arch *a = arch_create();
  arch_add_input(a, 16, 1, 1);
  for (int i = 0; i < 4; i++)
    arch_add_dense(a, 64);
  size_t c[5];
  ck_assert_int_eq(pipeline_split_balanced(a, 2, c), 0);
  ck_assert(c[0] == 2 && c[1] == 2);
  ck_assert_int_eq(pipeline_split_balanced(a, 3, c), 0);
  ck_assert(c[0] + c[1] + c[2] == 4 && c[0] == 2); /* {2,1,1}: the first two layers weigh one 64x64 */
  ck_assert_int_eq(pipeline_split_balanced(a, 4, c), 0);
  ck_assert(c[0] == 1 && c[1] == 1 && c[2] == 1 && c[3] == 1);
  ck_assert_int_eq(pipeline_split_balanced(a, 5, c), -1);
  arch_free(a);
}
END_TEST

START_TEST(test_pipeline_layer_ranges)
{
  /* The MLP stage kernel's passes: a 16-32-32-32-4 tanh softmax net split as layers
   * {0}, {1, 2}, {3}, chained by hand, gives net_loss_grad's gradient on the same 8 rows
   * bit for bit (the same BLAS calls per layer), and the same loss. */
  size_t sizes[] = {16, 32, 32, 32, 4}, b = 8;
  net *n = net_create(5, sizes, NET_ACT_TANH, NET_LOSS_SOFTMAX);
  gsl_rng *r = rng_create(3, RNG_ROLE_DATA, 0);
  dataset *d = data_synthetic_teacher(64, 16, 8, 4, r);
  gsl_matrix *X = gsl_matrix_alloc(b, 16);
  double y[8], loss, lsum;
  data_sample_batch(d, 0, 64, r, b, X, y);
  gsl_vector *w = minibatch_initial_params(n, 5), *g = gsl_vector_alloc(w->size), *h = gsl_vector_alloc(w->size);
  net_ws *ws = net_ws_create(n, b);
  ck_assert_int_eq(net_loss_grad(n, w, X, y, ws, &loss, g), 0);
  size_t first[] = {0, 1, 3}, last[] = {1, 3, 4};
  gsl_matrix *out[4], *D[4], *din[3];
  for (size_t l = 0; l < 4; l++) {
    out[l] = gsl_matrix_alloc(b, sizes[l + 1]);
    D[l] = gsl_matrix_alloc(b, sizes[l + 1]);
  }
  for (size_t k = 0; k < 3; k++) {
    din[k] = gsl_matrix_alloc(b, sizes[first[k]]);
    ck_assert_int_eq(net_forward_layers(n, w, first[k], last[k], k ? out[first[k] - 1] : X, out + first[k]), 0);
  }
  ck_assert_int_eq(net_output_delta(n, out[3], y, D[3], &lsum), 0);
  ck_assert(lsum / (double)b == loss);
  for (size_t k = 3; k-- > 0;) {
    if (k < 2) /* the next stage's input gradient is this stage's top delta */
      gsl_matrix_memcpy(D[last[k] - 1], din[k + 1]);
    ck_assert_int_eq(net_backward_layers(n, w, first[k], last[k], k ? out[first[k] - 1] : X, out + first[k],
                                         D + first[k], k ? din[k] : NULL, h),
                     0);
  }
  for (size_t i = 0; i < w->size; i++)
    ck_assert_msg(g->data[i] == h->data[i], "entry %zu: %.17g vs %.17g", i, g->data[i], h->data[i]);
  /* a range that does not fit is refused */
  ck_assert_int_eq(net_forward_layers(n, w, 1, 3, X, out + 1), -1);
  ck_assert_int_eq(net_forward_layers(n, w, 2, 2, out[1], out + 2), -1);
  for (size_t l = 0; l < 4; l++) {
    gsl_matrix_free(out[l]);
    gsl_matrix_free(D[l]);
  }
  for (size_t k = 0; k < 3; k++)
    gsl_matrix_free(din[k]);
  net_ws_free(ws);
  gsl_vector_free(w);
  gsl_vector_free(g);
  gsl_vector_free(h);
  gsl_matrix_free(X);
  data_free(d);
  gsl_rng_free(r);
  net_free(n);
}
END_TEST

static Suite *pipeline_suite(void)
{
  Suite *s = suite_create("pipeline");
  TCase *tc = tcase_create("schedule");
  tcase_add_test(tc, test_pipeline_schedule_complete);
  tcase_add_test(tc, test_pipeline_schedule_warmup);
  tcase_add_test(tc, test_pipeline_schedule_interleaved);
  tcase_add_test(tc, test_pipeline_formula_and_split);
  tcase_add_test(tc, test_pipeline_layer_ranges);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(pipeline_suite)

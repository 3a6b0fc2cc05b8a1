/* check_moe.c - Check suite for models/moe: the capacity, routing worked by hand (top-1 and
 * top-2 choices, gates, the order in which a full expert drops assignments, groups, the
 * auxiliary loss), a dropped token's zero output, and a whole MoE layer's gradient (every
 * parameter and the input, the router's through the gates and the auxiliary loss, with tokens
 * dropped) against central differences, top-1 and top-2. */

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_rng.h>

#include "models/moe.h"
#include "models/transformer.h"

#include "check_util.h"

/* Central differences, as check_transformer.c: step 1e-6, truncation ~1e-12 x the third
 * derivative, rounding ~1e-16 / 1e-6 = 1e-10 of the loss; relative 1e-5 with a floor of 1e-8.
 * The routing is piecewise constant: a step of 1e-6 moves no choice unless two probabilities
 * are within ~1e-6, which the test checks does not happen. */
#define FD_STEP 1e-6
#define FD_RTOL 1e-5
#define FD_ATOL 1e-8
/* Values the test recomputes with the same operations in another order (a softmax of three
 * terms, sums of four): a few ulps; 1e-14 relative. */
#define HAND_RTOL 1e-14

START_TEST(test_moe_capacity)
{
  moe_config c = {4, 1, 1.0, 0.0, 1};
  ck_assert_int_eq(moe_config_check(&c), 0);
  ck_assert_uint_eq(moe_capacity(&c, 16), 4);
  c.capacity_factor = 1.25;
  ck_assert_uint_eq(moe_capacity(&c, 16), 5);
  c.capacity_factor = 2.0;
  c.top_k = 2;
  ck_assert_uint_eq(moe_capacity(&c, 10), 10); /* 2 x 10 x 2 / 4 */
  c.capacity_factor = 1.0;
  ck_assert_uint_eq(moe_capacity(&c, 3), 2); /* 1.5 up */
  moe_config e2 = {2, 1, 1.1, 0.0, 1};
  ck_assert_uint_eq(moe_capacity(&e2, 20), 11); /* 1.1 x 20 / 2 = 11.000000000000002 in doubles */
  moe_config bad[] = {{1, 1, 1.0, 0.0, 1}, {4, 3, 1.0, 0.0, 1}, {4, 0, 1.0, 0.0, 1}, {4, 1, 0.0, 0.0, 1},
                      {4, 1, 1.0, -1.0, 1}, {4, 1, NAN, 0.0, 1}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_int_eq(moe_config_check(&bad[i]), -1);
  /* h = 8, E = 4: Wr 32, each expert 8 h^2 + 5 h = 552 */
  ck_assert_uint_eq(moe_n_params(8, 4), 32 + 4 * 552);
  ck_assert_uint_eq(moe_expert_offset(8, 4, 2), 32 + 2 * 552);
  transformer_layout l;
  transformer_layout_of(8, &l);
  ck_assert_uint_eq(moe_layer_n_params(8, 4), l.W1 + 32 + 4 * 552);
}
END_TEST

/* Wr = I (h = E = 3): the logits are the rows themselves. */
static const double WR_I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

static double softmax_of(const double *x, size_t e)
{
  double m = fmax(x[0], fmax(x[1], x[2]));
  return exp(x[e] - m) / (exp(x[0] - m) + exp(x[1] - m) + exp(x[2] - m));
}

START_TEST(test_moe_route_top1)
{
  /* rows 0..2 choose expert 0, row 3 expert 1; capacity ceil(1.0 x 4 / 3) = 2: row 2 is dropped */
  double xs[12] = {3, 0, 0, 2, 0, 0, 1, 0, 0, 0, 3, 0};
  gsl_matrix_view X = gsl_matrix_view_array(xs, 4, 3);
  moe_config c = {3, 1, 1.0, 0.5, 1};
  moe_routing *r = moe_route(&c, WR_I3, &X.matrix, 4);
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(r->capacity, 2);
  size_t choice[4] = {0, 0, 0, 1};
  long slot[4] = {0, 1, -1, 0};
  for (size_t i = 0; i < 4; i++) {
    ck_assert_uint_eq(r->choice[i], choice[i]);
    ck_assert_int_eq(r->slot[i], slot[i]);
    ck_assert_double_eq_tol(r->gate[i], softmax_of(xs + 3 * i, choice[i]), HAND_RTOL);
  }
  ck_assert_uint_eq(r->kept[0], 2);
  ck_assert_uint_eq(r->kept[1], 1);
  ck_assert_uint_eq(r->kept[2], 0);
  ck_assert_uint_eq(r->routed[0], 3);
  ck_assert_uint_eq(r->dropped, 1);
  ck_assert_uint_eq(r->dropped_tokens, 1);
  /* aux = 0.5 x 3 x (3/4 P0 + 1/4 P1), P the mean probabilities */
  double P0 = 0.0, P1 = 0.0;
  for (size_t i = 0; i < 4; i++) {
    P0 += softmax_of(xs + 3 * i, 0) / 4;
    P1 += softmax_of(xs + 3 * i, 1) / 4;
  }
  ck_assert_double_eq_tol(r->aux, 0.5 * 3 * (0.75 * P0 + 0.25 * P1), HAND_RTOL);
  size_t tok[4];
  ck_assert_uint_eq(moe_expert_rows(r, 0, tok), 2);
  ck_assert_uint_eq(tok[0], 0);
  ck_assert_uint_eq(tok[1], 1);
  /* per (shard, expert): shard 0 (rows 0, 1) sends expert 0 two tokens; shard 1 sends expert 1
     row 3 (row 2 was dropped) */
  size_t counts[6], want[6] = {2, 0, 0, 0, 1, 0};
  ck_assert_int_eq(moe_shard_counts(r, 2, counts), 0);
  for (size_t q = 0; q < 6; q++)
    ck_assert_uint_eq(counts[q], want[q]);
  ck_assert_int_eq(moe_shard_counts(r, 3, counts), -1);
  moe_routing_free(r);

  /* two groups (examples 0-1, 2-3), capacity ceil(2 / 3) = 1 each: row 1 is dropped, row 2 is not */
  c.groups = 2;
  r = moe_route(&c, WR_I3, &X.matrix, 4);
  ck_assert_uint_eq(r->capacity, 1);
  long gslot[4] = {0, -1, 0, 0};
  for (size_t i = 0; i < 4; i++)
    ck_assert_int_eq(r->slot[i], gslot[i]);
  ck_assert_uint_eq(r->kept[0 * 3 + 0], 1);
  ck_assert_uint_eq(r->kept[1 * 3 + 0], 1);
  ck_assert_uint_eq(r->kept[1 * 3 + 1], 1);
  ck_assert_uint_eq(moe_expert_rows(r, 0, tok), 2);
  ck_assert_uint_eq(tok[1], 2);
  moe_routing_free(r);
  c.groups = 3; /* does not divide the 4 examples */
  ck_assert_ptr_null(moe_route(&c, WR_I3, &X.matrix, 4));
}
END_TEST

START_TEST(test_moe_route_top2)
{
  /* choices (first, second): row 0 (0, 1), row 1 (0, 1), row 2 (1, 0), row 3 (1, 2); capacity
     ceil(0.75 x 4 x 2 / 3) = 2. First choices take the slots first, in row order: e0 <- rows 0,
     1; e1 <- rows 2, 3; then the second choices: rows 0, 1 find e1 full, row 2 finds e0 full,
     row 3 takes e2. (Row by row, both choices at once, rows 0 and 1 would fill e1 instead.) */
  double xs[12] = {3, 1, 0, 2, 1, 0, 1, 3, 0, 0, 2, 1};
  gsl_matrix_view X = gsl_matrix_view_array(xs, 4, 3);
  moe_config c = {3, 2, 0.75, 0.0, 1};
  moe_routing *r = moe_route(&c, WR_I3, &X.matrix, 1);
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(r->capacity, 2);
  size_t choice[8] = {0, 1, 0, 1, 1, 0, 1, 2};
  long slot[8] = {0, -1, 1, -1, 0, -1, 1, 0};
  for (size_t q = 0; q < 8; q++) {
    ck_assert_uint_eq(r->choice[q], choice[q]);
    ck_assert_int_eq(r->slot[q], slot[q]);
  }
  ck_assert_uint_eq(r->dropped, 3);
  ck_assert_uint_eq(r->dropped_tokens, 0);
  /* gates renormalised over the two chosen */
  double pa = softmax_of(xs + 9, 1), pb = softmax_of(xs + 9, 2);
  ck_assert_double_eq_tol(r->gate[6], pa / (pa + pb), HAND_RTOL);
  ck_assert_double_eq_tol(r->gate[7], pb / (pa + pb), HAND_RTOL);
  ck_assert_double_eq_tol(r->gate[6] + r->gate[7], 1.0, HAND_RTOL);
  ck_assert_double_eq(r->aux, 0.0);
  moe_routing_free(r);
}
END_TEST

/* A mixture whose expert outputs are non-zero: a dropped token's output row is exactly 0. */
START_TEST(test_moe_dropped_zero)
{
  size_t h = 3, E = 3;
  double *w = calloc(moe_n_params(h, E), sizeof(double));
  memcpy(w, WR_I3, sizeof WR_I3);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 5);
  for (size_t i = h * E; i < moe_n_params(h, E); i++)
    w[i] = 2.0 * gsl_rng_uniform(rng) - 1.0;
  double xs[12] = {3, 0, 0, 2, 0, 0, 1, 0, 0, 0, 3, 0};
  gsl_matrix_view X = gsl_matrix_view_array(xs, 4, 3);
  gsl_matrix *M = gsl_matrix_alloc(4, 3);
  moe_config c = {3, 1, 1.0, 0.0, 1};
  moe_routing *r = NULL;
  ck_assert_int_eq(moe_forward(&c, h, w, &X.matrix, 4, M, &r), 0);
  ck_assert_int_eq(r->slot[2], -1);
  for (size_t col = 0; col < h; col++) {
    ck_assert_double_eq(gsl_matrix_get(M, 2, col), 0.0);
    ck_assert(gsl_matrix_get(M, 0, col) != 0.0);
  }
  moe_routing_free(r);
  gsl_matrix_free(M);
  gsl_rng_free(rng);
  free(w);
}
END_TEST

/* L = sum(dZ .* Z) + aux: moe_layer_backward's dX and grad are its exact gradient. */
static double probe_loss(const transformer_dims *d, const moe_config *c, const double *w, const gsl_matrix *X,
                         const gsl_matrix *dZ, moe_routing **keep)
{
  gsl_matrix *Z = gsl_matrix_alloc(X->size1, X->size2);
  moe_routing *r = NULL;
  ck_assert_int_eq(moe_layer_forward(d, c, w, X, Z, &r), 0);
  double L = r->aux;
  for (size_t i = 0; i < Z->size1 * Z->size2; i++)
    L += Z->data[i] * dZ->data[i];
  gsl_matrix_free(Z);
  if (keep)
    *keep = r;
  else
    moe_routing_free(r);
  return L;
}

/* The smallest gap between two of a row's probabilities, over the rows. */
static double min_gap(const moe_routing *r)
{
  double g = INFINITY;
  for (size_t i = 0; i < r->n; i++)
    for (size_t a = 0; a < r->experts; a++)
      for (size_t b = a + 1; b < r->experts; b++)
        g = fmin(g, fabs(r->prob[i * r->experts + a] - r->prob[i * r->experts + b]));
  return g;
}

static void check_layer_gradient(size_t top_k)
{
  transformer_dims d = {4, 3, 8, 2};
  size_t n = d.b * d.s, E = 4;
  moe_config c = {E, top_k, 1.0, 0.1, 2};
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 17 + top_k);
  size_t np = moe_layer_n_params(d.h, E);
  double *w = malloc(np * sizeof(double)), *g = malloc(np * sizeof(double));
  moe_layer_init_params(d.h, E, rng, w);
  transformer_layout l;
  transformer_layout_of(d.h, &l);
  for (size_t i = 0; i < d.h; i++) /* LayerNorm 2 not at its initial values, so its gradient is exercised */
    w[l.ln2_b + i] = 0.2 * (2.0 * gsl_rng_uniform(rng) - 1.0);
  for (size_t i = 0; i < d.h * E; i++) /* a router that decides: logits of order 1 */
    w[l.W1 + i] *= 3.0;
  gsl_matrix *X = gsl_matrix_alloc(n, d.h), *dZ = gsl_matrix_alloc(n, d.h), *dX = gsl_matrix_alloc(n, d.h);
  for (size_t i = 0; i < n * d.h; i++) {
    X->data[i] = 2.0 * gsl_rng_uniform(rng) - 1.0;
    dZ->data[i] = 2.0 * gsl_rng_uniform(rng) - 1.0;
  }
  moe_routing *r = NULL;
  probe_loss(&d, &c, w, X, dZ, &r);
  ck_assert_msg(r->dropped > 0, "top-%zu: no assignment dropped, the test would not exercise dropping", top_k);
  ck_assert_msg(r->aux > 0.0, "no auxiliary loss");
  ck_assert_msg(min_gap(r) > 1e-4, "two probabilities within %.3g: a step could move a choice", min_gap(r));
  moe_routing_free(r);
  ck_assert_int_eq(moe_layer_backward(&d, &c, w, X, dZ, dX, g), 0);
  for (size_t i = 0; i < np; i++) {
    double w0 = w[i];
    w[i] = w0 + FD_STEP;
    double lp = probe_loss(&d, &c, w, X, dZ, NULL);
    w[i] = w0 - FD_STEP;
    double lm = probe_loss(&d, &c, w, X, dZ, NULL);
    w[i] = w0;
    double fd = (lp - lm) / (2.0 * FD_STEP);
    ck_assert_msg(fabs(fd - g[i]) <= FD_RTOL * fabs(fd) + FD_ATOL, "top-%zu grad[%zu] = %.12g, fd %.12g", top_k, i,
                  g[i], fd);
  }
  for (size_t i = 0; i < n * d.h; i++) {
    double x0 = X->data[i];
    X->data[i] = x0 + FD_STEP;
    double lp = probe_loss(&d, &c, w, X, dZ, NULL);
    X->data[i] = x0 - FD_STEP;
    double lm = probe_loss(&d, &c, w, X, dZ, NULL);
    X->data[i] = x0;
    double fd = (lp - lm) / (2.0 * FD_STEP);
    ck_assert_msg(fabs(fd - dX->data[i]) <= FD_RTOL * fabs(fd) + FD_ATOL, "top-%zu dX[%zu] = %.12g, fd %.12g",
                  top_k, i, dX->data[i], fd);
  }
  gsl_matrix_free(X);
  gsl_matrix_free(dZ);
  gsl_matrix_free(dX);
  free(w);
  free(g);
  gsl_rng_free(rng);
}

START_TEST(test_moe_gradient_top1) { check_layer_gradient(1); }
END_TEST

START_TEST(test_moe_gradient_top2) { check_layer_gradient(2); }
END_TEST

/* Expert parallelism, driven as an expert-parallel run drives it, its all-to-alls done here in
 * memory in rank order: P = 2 ranks, each holding data shard g (examples [g b/P, (g+1) b/P))
 * routed alone and experts [g E/P, (g+1) E/P); against the serial mixture routed in P groups:
 * the same routing and drops, outputs, input gradients, expert and router gradients, aux.
 * The expert GEMMs see the same rows in the same order and the combine adds the same terms,
 * so most values agree exactly; the auxiliary loss's weight is 1/P on a rank and 1/G in the
 * serial routing, multiplied in another order, and the router's gradient sums the ranks' rows
 * in two parts: rounding of a few ulps, bounded by 1e-12 of the quantity's largest entry. */
#define EP_RTOL 1e-12

static void assert_close(const char *what, const double *x, const double *ref, size_t n)
{
  double scale = 0.0;
  for (size_t i = 0; i < n; i++)
    scale = fmax(scale, fabs(ref[i]));
  ck_assert_msg(scale > 0.0, "%s: reference all zero", what);
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(fabs(x[i] - ref[i]) <= EP_RTOL * scale, "%s[%zu] = %.17g, serial %.17g", what, i, x[i], ref[i]);
}

/* Global row of shard g's local row q (rows in [s, b] order). */
static size_t global_row(size_t b, size_t P, size_t g, size_t q)
{
  size_t bl = b / P;
  return (q / bl) * b + g * bl + q % bl;
}

#define EP_P 2
#define EP_E 4
#define EP_H 8
#define EP_B 4 /* examples */
#define EP_S 3 /* positions */
#define EP_N (EP_B * EP_S)
#define EP_NL (EP_N / EP_P)

/* Two ranks' state: their shards, routings, the rows each sends each expert, and per expert
 * the outputs, output gradients and input gradients of those rows. */
typedef struct ep_rank {
  gsl_matrix *X, *dM;
  moe_routing *r;
  size_t *tok[EP_E], m[EP_E];
  gsl_matrix *y[EP_E], *dy[EP_E], *dx[EP_E];
  double dgate[EP_NL * 2];
} ep_rank;

/* Rank g's shard of the serial rows and its own routing (groups 1). */
static void ep_route(const moe_config *c1, const double *w, const gsl_matrix *X, const gsl_matrix *dM, size_t g,
                     ep_rank *rk)
{
  rk->X = gsl_matrix_alloc(EP_NL, EP_H);
  rk->dM = gsl_matrix_alloc(EP_NL, EP_H);
  for (size_t q = 0; q < EP_NL; q++) {
    gsl_vector_const_view xr = gsl_matrix_const_row(X, global_row(EP_B, EP_P, g, q));
    gsl_matrix_set_row(rk->X, q, &xr.vector);
    gsl_vector_const_view dr = gsl_matrix_const_row(dM, global_row(EP_B, EP_P, g, q));
    gsl_matrix_set_row(rk->dM, q, &dr.vector);
  }
  rk->r = moe_route(c1, w, rk->X, EP_B / EP_P);
  ck_assert_ptr_nonnull(rk->r);
  for (size_t e = 0; e < EP_E; e++) {
    rk->tok[e] = malloc((EP_NL + 1) * sizeof(size_t));
    rk->m[e] = moe_expert_rows(rk->r, e, rk->tok[e]);
    rk->y[e] = rk->m[e] ? gsl_matrix_alloc(rk->m[e], EP_H) : NULL;
    rk->dy[e] = rk->m[e] ? gsl_matrix_alloc(rk->m[e], EP_H) : NULL;
    rk->dx[e] = rk->m[e] ? gsl_matrix_alloc(rk->m[e], EP_H) : NULL;
  }
}

static void ep_free(ep_rank *rk)
{
  for (size_t e = 0; e < EP_E; e++) {
    free(rk->tok[e]);
    gsl_matrix_free(rk->y[e]);
    gsl_matrix_free(rk->dy[e]);
    gsl_matrix_free(rk->dx[e]);
  }
  gsl_matrix_free(rk->X);
  gsl_matrix_free(rk->dM);
  moe_routing_free(rk->r);
}

/* Expert e's owner: the shards' rows (src: 0 the inputs, 1 the output gradients dy) stacked
 * in rank order into out, or (scatter) out's rows handed back to the shards' y (0) or dx (1). */
static void ep_stack(ep_rank *rk, size_t e, int src, gsl_matrix *out)
{
  for (size_t g = 0, o = 0; g < EP_P; o += rk[g].m[e], g++)
    for (size_t q = 0; q < rk[g].m[e]; q++) {
      gsl_vector_const_view v =
          src == 0 ? gsl_matrix_const_row(rk[g].X, rk[g].tok[e][q]) : gsl_matrix_const_row(rk[g].dy[e], q);
      gsl_matrix_set_row(out, o + q, &v.vector);
    }
}

static void ep_scatter(ep_rank *rk, size_t e, int dst, const gsl_matrix *in)
{
  for (size_t g = 0, o = 0; g < EP_P; o += rk[g].m[e], g++)
    for (size_t q = 0; q < rk[g].m[e]; q++) {
      gsl_vector_const_view v = gsl_matrix_const_row(in, o + q);
      gsl_matrix_set_row(dst == 0 ? rk[g].y[e] : rk[g].dx[e], q, &v.vector);
    }
}

/* Expert e's owner runs it on the stacked rows: forward (the combine's y) or, once every shard's
 * dy is in, backward (adding the expert's gradient into ge, the dispatch's dx). */
static void ep_expert(ep_rank *rk, const double *w, size_t e, int backward, double *ge)
{
  size_t me = rk[0].m[e] + rk[1].m[e];
  if (me == 0)
    return;
  gsl_matrix *xe = gsl_matrix_alloc(me, EP_H), *ue = gsl_matrix_alloc(me, 4 * EP_H), *ye = gsl_matrix_alloc(me, EP_H);
  ep_stack(rk, e, 0, xe);
  const double *we = w + moe_expert_offset(EP_H, EP_E, e);
  moe_expert_forward(EP_H, we, xe, ue, ye);
  if (!backward)
    ep_scatter(rk, e, 0, ye);
  else {
    gsl_matrix *dye = gsl_matrix_alloc(me, EP_H), *dxe = gsl_matrix_alloc(me, EP_H);
    ep_stack(rk, e, 1, dye);
    moe_expert_backward(EP_H, we, xe, ue, dye, dxe, ge);
    ep_scatter(rk, e, 1, dxe);
    gsl_matrix_free(dye);
    gsl_matrix_free(dxe);
  }
  gsl_matrix_free(xe);
  gsl_matrix_free(ue);
  gsl_matrix_free(ye);
}

static void check_expert_parallel(size_t top_k)
{
  size_t h = EP_H, E = EP_E, P = EP_P;
  moe_config c = {E, top_k, 1.0, 0.1, P}, c1 = c;
  c1.groups = 1;
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 29 + top_k);
  size_t np = moe_n_params(h, E);
  double *w = malloc(np * sizeof(double)), *gser = malloc(np * sizeof(double)), *gep = calloc(np, sizeof(double));
  moe_init_params(h, E, rng, w);
  for (size_t i = 0; i < h * E; i++)
    w[i] *= 3.0;
  gsl_matrix *X = gsl_matrix_alloc(EP_N, h), *dM = gsl_matrix_alloc(EP_N, h), *M = gsl_matrix_alloc(EP_N, h),
             *dX = gsl_matrix_alloc(EP_N, h), *Ml = gsl_matrix_alloc(EP_NL, h), *dXl = gsl_matrix_alloc(EP_NL, h);
  for (size_t i = 0; i < EP_N * h; i++) {
    X->data[i] = 2.0 * gsl_rng_uniform(rng) - 1.0;
    dM->data[i] = 2.0 * gsl_rng_uniform(rng) - 1.0;
  }
  moe_routing *rs = NULL;
  ck_assert_int_eq(moe_forward(&c, h, w, X, EP_B, M, &rs), 0);
  ck_assert_int_eq(moe_backward(&c, h, w, X, EP_B, dM, dX, gser), 0);
  ck_assert_msg(rs->dropped > 0, "top-%zu: nothing dropped", top_k);

  /* each rank routes its shard: the serial routing's group, token for token */
  ep_rank rk[EP_P];
  double aux = 0.0;
  size_t dropped = 0;
  for (size_t g = 0; g < P; g++) {
    ep_route(&c1, w, X, dM, g, &rk[g]);
    aux += rk[g].r->aux / (double)P;
    dropped += rk[g].r->dropped;
    for (size_t e = 0; e < E; e++) /* the tokens shard g sends expert e */
      ck_assert_uint_eq(rk[g].m[e], rs->kept[g * E + e]);
  }
  ck_assert_uint_eq(dropped, rs->dropped);
  ck_assert_double_eq_tol(aux, rs->aux, EP_RTOL * rs->aux);

  /* forward: dispatch, experts on their owners, combine */
  for (size_t e = 0; e < E; e++)
    ep_expert(rk, w, e, 0, NULL);
  for (size_t g = 0; g < P; g++) {
    moe_combine(rk[g].r, (const gsl_matrix *const *)rk[g].y, Ml);
    for (size_t q = 0; q < EP_NL; q++)
      for (size_t col = 0; col < h; col++)
        ck_assert_msg(gsl_matrix_get(Ml, q, col) == gsl_matrix_get(M, global_row(EP_B, P, g, q), col),
                      "top-%zu rank %zu row %zu: output differs from the serial mixture's", top_k, g, q);
    moe_combine_backward(rk[g].r, (const gsl_matrix *const *)rk[g].y, rk[g].dM, rk[g].dy, rk[g].dgate);
  }
  /* backward: the experts on their owners, then each rank's router with aux weighted 1/P; the
     router's gradient summed in rank order */
  for (size_t e = 0; e < E; e++)
    ep_expert(rk, w, e, 1, gep + moe_expert_offset(h, E, e));
  for (size_t g = 0; g < P; g++) {
    double *dWr = calloc(h * E, sizeof(double));
    moe_router_backward(&c1, rk[g].r, w, rk[g].X, (const gsl_matrix *const *)rk[g].dx, rk[g].dgate,
                        1.0 / (double)P, dWr, dXl);
    for (size_t i = 0; i < h * E; i++)
      gep[i] += dWr[i];
    for (size_t q = 0; q < EP_NL; q++) {
      gsl_vector_const_view ref = gsl_matrix_const_row(dX, global_row(EP_B, P, g, q));
      gsl_vector_const_view got = gsl_matrix_const_row(dXl, q);
      assert_close("dX row", got.vector.data, ref.vector.data, h);
    }
    free(dWr);
    ep_free(&rk[g]);
  }
  assert_close("router gradient", gep, gser, h * E);
  for (size_t i = h * E; i < np; i++)
    ck_assert_msg(gep[i] == gser[i], "top-%zu expert gradient [%zu] differs", top_k, i);
  moe_routing_free(rs);
  gsl_matrix *fm[] = {X, dM, M, dX, Ml, dXl};
  for (size_t i = 0; i < sizeof fm / sizeof fm[0]; i++)
    gsl_matrix_free(fm[i]);
  free(w);
  free(gser);
  free(gep);
  gsl_rng_free(rng);
}

START_TEST(test_moe_expert_parallel_top1) { check_expert_parallel(1); }
END_TEST

START_TEST(test_moe_expert_parallel_top2) { check_expert_parallel(2); }
END_TEST

static Suite *moe_suite(void)
{
  Suite *s = suite_create("moe");
  ADD_TCASE(s, "routing", test_moe_capacity, test_moe_route_top1, test_moe_route_top2, test_moe_dropped_zero);
  ADD_TCASE(s, "gradient", test_moe_gradient_top1, test_moe_gradient_top2);
  ADD_TCASE(s, "expert-parallel", test_moe_expert_parallel_top1, test_moe_expert_parallel_top2);
  return s;
}

CHECK_MAIN(moe_suite)

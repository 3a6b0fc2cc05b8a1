/* check_gpt.c - Check suite for models/gpt (and the pieces of transformer, data and optim it
 * brings): the layout, the serial GPT's gradient against central differences in every
 * parameter block, the BLAS evaluation against the plain-loop reference, the
 * vocabulary-parallel embedding and cross-entropy of t = 2 and 4 ranks (their sums done here in
 * rank order, as the collectives would) against one rank, with and without sequence-parallel
 * rows, a layer's shard ranges covering it exactly once, the synthetic token language and its
 * loss floor, Adam's first steps worked by hand, and a GPT of mixture-of-experts layers (top-1
 * and top-2): its gradient against central differences and its evaluation. */

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_rng.h>

#include "models/data.h"
#include "models/gpt.h"
#include "models/optim.h"
#include "models/rng.h"
#include "models/transformer.h"

#include "check_util.h"

/* Central differences, as check_transformer.c: step 1e-6, truncation ~1e-12 x the third
 * derivative, rounding ~1e-16 / 1e-6 = 1e-10 of the loss; relative 1e-5 with a floor of 1e-8. */
#define FD_STEP 1e-6
#define FD_RTOL 1e-5
#define FD_ATOL 1e-8
/* The BLAS evaluation and the plain loops sum the same products in other orders: rounding
 * only, a few ulps of each dot product of h terms; 1e-12 of the loss is far above that. */
#define EVAL_RTOL 1e-12
/* t ranks' vocabulary-parallel pieces against one rank: the partial sums over V/t tokens,
 * then over the ranks, reorder sums of at most V terms: a few ulps, bounded by 1e-12 of the
 * quantity's largest entry. The lookup copies values: exact. */
#define VOCAB_RTOL 1e-12

static const gpt_dims small = {8, 4, 8, 2, 2, {0}};

static double *draw_seqs(const gpt_dims *d, size_t b, unsigned long seed)
{
  gsl_rng *r = rng_create(seed, RNG_ROLE_DATA, 9);
  double *q = malloc(b * (d->seq + 1) * sizeof(double));
  for (size_t i = 0; i < b * (d->seq + 1); i++)
    q[i] = (double)gsl_rng_uniform_int(r, d->vocab);
  gsl_rng_free(r);
  return q;
}

static gsl_vector *init(const gpt_dims *d, unsigned long seed)
{
  gsl_vector *w = gsl_vector_alloc(gpt_n_params(d));
  gsl_rng *r = rng_create(seed, RNG_ROLE_INIT, 0);
  gpt_init_params(d, r, w);
  gsl_rng_free(r);
  /* spread E and P so that logits and positions matter beyond rounding */
  gpt_layout l;
  gpt_layout_of(d, &l);
  for (size_t i = l.embed; i < l.layer0; i++)
    w->data[i] *= 25;
  return w;
}

static double max_abs(const double *x, size_t n)
{
  double m = 0.0;
  for (size_t i = 0; i < n; i++)
    m = fabs(x[i]) > m ? fabs(x[i]) : m;
  return m;
}

static void assert_close(const char *what, const double *x, const double *ref, size_t n, double rtol)
{
  double scale = max_abs(ref, n);
  ck_assert_msg(scale > 0.0, "%s: reference all zero", what);
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(fabs(x[i] - ref[i]) <= rtol * scale, "%s[%zu] = %.17g, reference %.17g (max %.3g)", what, i, x[i],
                  ref[i], scale);
}

START_TEST(test_gpt_layout)
{
  gpt_layout l;
  gpt_layout_of(&small, &l);
  /* E 8 x 8, P 4 x 8, two layers of 12 h^2 + 13 h = 872, lnf 2 x 8 */
  ck_assert_uint_eq(l.pos, 64);
  ck_assert_uint_eq(l.layer0, 96);
  ck_assert_uint_eq(l.layer_size, 872);
  ck_assert_uint_eq(l.lnf_g, 96 + 2 * 872);
  ck_assert_uint_eq(l.total, 96 + 2 * 872 + 16);
  ck_assert_uint_eq(gpt_n_params(&small), l.total);
  gpt_dims bad = small;
  bad.heads = 3;
  ck_assert_int_eq(gpt_dims_check(&bad), -1);
  bad = small;
  bad.vocab = 1;
  ck_assert_int_eq(gpt_dims_check(&bad), -1);
  ck_assert_int_eq(gpt_dims_check(&small), 0);
  /* a token not below V is refused */
  gsl_vector *w = init(&small, 1);
  double *q = draw_seqs(&small, 1, 1), loss;
  q[2] = 8;
  ck_assert_int_eq(gpt_loss_grad(&small, w, 1, q, &loss, NULL), -1);
  ck_assert_int_eq(gpt_evaluate(&small, w, 1, q, &loss, &loss), -1);
  free(q);
  gsl_vector_free(w);
}
END_TEST

/* Checks g, the gradient gpt_loss_grad gave at w, against central differences at three
 * entries from each of the n block starts; returns how many of them have a gradient above
 * 1e-6 (a check of zeros would prove nothing). what prefixes the failure message. */
static size_t check_central_differences(const gpt_dims *d, gsl_vector *w, size_t b, const double *q,
                                        const gsl_vector *g, const size_t *blocks, size_t n, const char *what)
{
  size_t checked = 0;
  for (size_t k = 0; k < n; k++)
    for (size_t j = 0; j < 3; j++) {
      size_t i = blocks[k] + j;
      double keep = w->data[i], lp, lm;
      w->data[i] = keep + FD_STEP;
      gpt_loss_grad(d, w, b, q, &lp, NULL);
      w->data[i] = keep - FD_STEP;
      gpt_loss_grad(d, w, b, q, &lm, NULL);
      w->data[i] = keep;
      double fd = (lp - lm) / (2 * FD_STEP);
      ck_assert_msg(fabs(fd - g->data[i]) <= FD_RTOL * fabs(fd) + FD_ATOL,
                    "%sentry %zu: gradient %.10g, differences %.10g", what, i, g->data[i], fd);
      checked += fabs(g->data[i]) > 1e-6;
    }
  return checked;
}

START_TEST(test_gpt_gradient)
{
  /* three entries of every block, each triple inside its block (small: h = 8, so a bias starts at most at
     +5): E, P, each layer's LayerNorms, Q, K, V, Wo, W1, W2 and biases, lnf */
  size_t b = 2;
  gsl_vector *w = init(&small, 3), *g = gsl_vector_alloc(gpt_n_params(&small));
  double *q = draw_seqs(&small, b, 3), loss;
  ck_assert_int_eq(gpt_loss_grad(&small, w, b, q, &loss, g), 0);
  ck_assert(isfinite(loss) && loss > 0);
  gpt_layout l;
  gpt_layout_of(&small, &l);
  transformer_layout tl;
  transformer_layout_of(small.hidden, &tl);
  size_t blocks[] = {l.embed,           l.embed + 5 * 8 + 3, l.pos + 9,       l.layer0 + tl.ln1_g + 2,
                     l.layer0 + tl.Wq + 17, l.layer0 + tl.Wk + 40, l.layer0 + tl.Wv + 61, l.layer0 + tl.bq + 1,
                     l.layer0 + tl.Wo + 30, l.layer0 + tl.bo + 4, l.layer0 + tl.ln2_b + 5, l.layer0 + tl.W1 + 100,
                     l.layer0 + tl.b1 + 20, l.layer0 + tl.W2 + 200, l.layer0 + tl.b2 + 5,
                     l.layer0 + l.layer_size + tl.Wq + 5, l.layer0 + l.layer_size + tl.W2 + 31, l.lnf_g + 3,
                     l.lnf_b + 5};
  size_t checked = check_central_differences(&small, w, b, q, g, blocks, sizeof blocks / sizeof blocks[0], "");
  ck_assert_msg(checked > 40, "only %zu of the checked entries have a gradient above 1e-6", checked);
  free(q);
  gsl_vector_free(w);
  gsl_vector_free(g);
}
END_TEST

START_TEST(test_gpt_evaluate)
{
  size_t n = 5;
  gsl_vector *w = init(&small, 4);
  double *q = draw_seqs(&small, n, 4), loss, acc, ref = 0, one;
  ck_assert_int_eq(gpt_evaluate(&small, w, n, q, &loss, &acc), 0);
  for (size_t i = 0; i < n; i++) {
    ck_assert_int_eq(gpt_loss_grad(&small, w, 1, q + i * (small.seq + 1), &one, NULL), 0);
    ref += one / (double)n;
  }
  ck_assert_msg(fabs(loss - ref) <= EVAL_RTOL * ref, "evaluation %.17g, reference %.17g", loss, ref);
  /* the batch of five is the mean of the five */
  ck_assert_int_eq(gpt_loss_grad(&small, w, n, q, &one, NULL), 0);
  ck_assert_msg(fabs(one - ref) <= EVAL_RTOL * ref, "batch %.17g, mean of sequences %.17g", one, ref);
  ck_assert(acc >= 0 && acc <= 1);
  /* a model whose logits all equal the target's: E = 0 gives loss ln V and, ties going to
   * token 0, accuracy = the share of targets that are 0 */
  gpt_layout l;
  gpt_layout_of(&small, &l);
  for (size_t i = l.embed; i < l.pos; i++)
    w->data[i] = 0;
  ck_assert_int_eq(gpt_evaluate(&small, w, n, q, &loss, &acc), 0);
  ck_assert_msg(fabs(loss - log(8.0)) < 1e-14, "loss %.17g, ln 8 = %.17g", loss, log(8.0));
  size_t zeros = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t k = 1; k <= small.seq; k++)
      zeros += q[i * (small.seq + 1) + k] == 0;
  ck_assert_double_eq(acc, (double)zeros / (double)(n * small.seq));
  free(q);
  gsl_vector_free(w);
}
END_TEST

/* A GPT whose MLPs are mixtures of E = 4 experts (models/moe.h), two groups of one sequence
 * each, capacity factor 1.0 so that tokens are dropped, aux coefficient 0.05: the loss (cross-
 * entropy + both layers' auxiliary losses) against central differences in the router, experts,
 * attention, embeddings and final LayerNorm; the routing handed out matches; the evaluation
 * (each sequence routed alone) equals the reference's cross-entropy of one sequence, aux off. */
static void moe_gpt(size_t top_k)
{
  gpt_dims d = small;
  d.moe = (moe_config){4, top_k, 1.0, 0.05, 2};
  size_t b = 2;
  gsl_vector *w = init(&d, 7 + top_k), *g = gsl_vector_alloc(gpt_n_params(&d));
  double *q = draw_seqs(&d, b, 7), loss, plain;
  gpt_layout l;
  gpt_layout_of(&d, &l);
  ck_assert_uint_eq(l.layer_size, moe_layer_n_params(8, 4));
  moe_routing *routes[2] = {NULL, NULL};
  ck_assert_int_eq(gpt_loss_grad_routed(&d, w, b, q, &loss, g, routes), 0);
  ck_assert_int_eq(gpt_loss_grad(&d, w, b, q, &plain, NULL), 0);
  ck_assert_double_eq(loss, plain);
  size_t dropped = 0;
  for (size_t k = 0; k < 2; k++) {
    ck_assert_ptr_nonnull(routes[k]);
    ck_assert_uint_eq(routes[k]->groups, 2);
    ck_assert(routes[k]->aux > 0);
    dropped += routes[k]->dropped;
    moe_routing_free(routes[k]);
  }
  ck_assert_msg(dropped > 0, "top-%zu: nothing dropped", top_k);
  transformer_layout tl;
  transformer_layout_of(d.hidden, &tl);
  size_t mix = l.layer0 + tl.W1, mix1 = mix + l.layer_size;
  size_t blocks[] = {l.embed + 3,  l.pos + 9,    l.layer0 + tl.Wq + 17, l.layer0 + tl.ln2_g + 2,
                     mix,          mix + 13,     mix + moe_expert_offset(8, 4, 0) + 40,
                     mix + moe_expert_offset(8, 4, 1) + 260, mix + moe_expert_offset(8, 4, 2) + 520,
                     mix + moe_expert_offset(8, 4, 3) + 300, mix1 + 5, mix1 + moe_expert_offset(8, 4, 1) + 100,
                     l.lnf_g + 3};
  char what[16];
  snprintf(what, sizeof what, "top-%zu ", top_k);
  size_t checked = check_central_differences(&d, w, b, q, g, blocks, sizeof blocks / sizeof blocks[0], what);
  ck_assert_msg(checked > 25, "only %zu of the checked entries have a gradient above 1e-6", checked);
  /* evaluation: each sequence alone, cross-entropy only */
  d.moe.aux_coef = 0.0;
  double eval, acc, ref = 0.0, one;
  ck_assert_int_eq(gpt_evaluate(&d, w, b, q, &eval, &acc), 0);
  d.moe.groups = 1;
  for (size_t i = 0; i < b; i++) {
    ck_assert_int_eq(gpt_loss_grad(&d, w, 1, q + i * (d.seq + 1), &one, NULL), 0);
    ref += one / (double)b;
  }
  ck_assert_msg(fabs(eval - ref) <= EVAL_RTOL * ref, "evaluation %.17g, reference %.17g", eval, ref);
  d.moe.groups = 3; /* does not divide b */
  ck_assert_int_eq(gpt_loss_grad(&d, w, b, q, &one, NULL), -1);
  free(q);
  gsl_vector_free(w);
  gsl_vector_free(g);
}

START_TEST(test_gpt_moe_top1) { moe_gpt(1); }
END_TEST

START_TEST(test_gpt_moe_top2) { moe_gpt(2); }
END_TEST

/* t ranks' embedding and head on one microbatch, the reductions summed in rank order here,
 * against one rank; rows split t ways (sequence parallelism) when sp. */
/* vocab_parallel's embedding: the t ranks' lookups summed are one rank's, exactly; then
 * the positions added to the second half of the rows are the same as to all of them. */
static void vocab_embed(const gpt_dims *dp, size_t t, const gsl_vector *w, const gpt_layout *lp, size_t b,
                        const double *q)
{
  gpt_dims d = *dp;
  size_t n = d.seq * b, h = d.hidden, vl = d.vocab / t;
  const double *E = w->data + lp->embed, *P = w->data + lp->pos;
  gsl_matrix *x1 = gsl_matrix_alloc(n, h), *xt = gsl_matrix_alloc(n, h);
  gpt_embed_lookup(&d, 1, 0, E, b, q, x1);
  gsl_matrix_set_zero(xt);
  for (size_t k = 0; k < t; k++) {
    gsl_matrix *part = gsl_matrix_alloc(n, h);
    gpt_embed_lookup(&d, t, k, E + k * vl * h, b, q, part);
    gsl_matrix_add(xt, part);
    gsl_matrix_free(part);
  }
  ck_assert_int_eq(memcmp(x1->data, xt->data, n * h * sizeof(double)), 0);
  gsl_matrix_view top = gsl_matrix_submatrix(xt, n / 2, 0, n - n / 2, h);
  gpt_embed_positions(&d, P, b, n / 2, &top.matrix);
  gpt_embed_positions(&d, P, b, 0, x1);
  ck_assert_int_eq(memcmp(gsl_matrix_ptr(x1, n / 2, 0), top.matrix.data, (n - n / 2) * h * sizeof(double)), 0);

  gsl_matrix_free(x1);
  gsl_matrix_free(xt);
}

/* The head's mean loss by its definition: over rows, log(sum exp(logits)) - the target's
 * logit, from the head's normalised rows and the embedding E. */
static double vocab_loss_by_definition(const gpt_dims *dp, gpt_head *one, const double *E, const double *q, size_t b)
{
  gpt_dims d = *dp;
  size_t n = d.seq * b, h = d.hidden;
  double ref = 0;
  for (size_t i = 0; i < n; i++) {
    double lg[16] = {0}, mx = -INFINITY, zs = 0;
    for (size_t v = 0; v < d.vocab; v++) {
      lg[v] = 0;
      for (size_t c = 0; c < h; c++)
        lg[v] += gpt_head_x(one)[i * h + c] * E[v * h + c];
      mx = fmax(mx, lg[v]);
    }
    for (size_t v = 0; v < d.vocab; v++)
      zs += exp(lg[v] - mx);
    ref += (log(zs) + mx - lg[(size_t)q[(i % b) * (d.seq + 1) + i / b + 1]]) / (double)n;
  }
  return ref;
}

/* vocab_parallel's t ranks' heads, forward: each normalises its rows, gathers every rank's
 * (sp), takes its vocabulary slice's logits, the targets and the sums of exponentials, each
 * reduced over the ranks as the allreduces would. Returns the heads (caller frees). */
static gpt_head **vocab_heads_forward(const gpt_dims *dp, size_t t, int sp, size_t b, gsl_matrix *z,
                                      const gsl_vector *w, const gpt_layout *lp, const double *q, gpt_head *one)
{
  gpt_dims d = *dp;
  size_t n = d.seq * b, h = d.hidden, vl = d.vocab / t, rows = sp ? n / t : n;
  const double *E = w->data + lp->embed, *g = w->data + lp->lnf_g, *bb = w->data + lp->lnf_b;
  gpt_head **hd = malloc(t * sizeof(gpt_head *));
  double *red = calloc(n, sizeof(double));
  for (size_t k = 0; k < t; k++) {
    size_t row0 = sp ? k * rows : 0;
    hd[k] = gpt_head_create(&d, t, k, b, row0, rows);
    ck_assert_ptr_nonnull(hd[k]);
    gsl_matrix_view zr = gsl_matrix_submatrix(z, row0, 0, rows, h);
    gpt_head_norm(hd[k], g, bb, &zr.matrix);
  }
  if (sp) /* allgather: every rank gets every rank's rows */
    for (size_t k = 0; k < t; k++)
      for (size_t j = 0; j < t; j++)
        memcpy(gpt_head_x(hd[k]) + j * rows * h, gpt_head_x(hd[j]) + j * rows * h, rows * h * sizeof(double));
  for (size_t k = 0; k < t; k++)
    ck_assert_int_eq(memcmp(gpt_head_x(hd[k]), gpt_head_x(one), n * h * sizeof(double)), 0);
  void (*step[])(gpt_head *) = {NULL, gpt_head_sumexp};
  for (int s = 0; s < 3; s++) {
    for (size_t k = 0; k < t; k++) {
      if (s == 0)
        gpt_head_logits(hd[k], E + k * vl * h);
      else if (s == 1)
        gpt_head_targets(hd[k], q);
      else
        step[1](hd[k]);
    }
    memset(red, 0, n * sizeof(double));
    for (size_t k = 0; k < t; k++)
      for (size_t i = 0; i < n; i++)
        red[i] += gpt_head_red(hd[k])[i];
    for (size_t k = 0; k < t; k++)
      memcpy(gpt_head_red(hd[k]), red, n * sizeof(double));
  }
  free(red);
  return hd;
}

/* The lookup's backward: t ranks' rows of dE are one rank's, exactly, and position k's
 * gradient is the sum of its b rows. */
static void vocab_lookup_backward(const gpt_dims *dp, size_t t, size_t b, const double *q, const gsl_matrix *dz1)
{
  gpt_dims d = *dp;
  size_t h = d.hidden, vl = d.vocab / t;
  double *eb1 = calloc(d.vocab * h, sizeof(double)), *ebt = calloc(d.vocab * h, sizeof(double));
  double *pb1 = calloc(d.seq * h, sizeof(double));
  gpt_embed_backward(&d, 1, 0, b, q, dz1, eb1, pb1);
  for (size_t k = 0; k < t; k++)
    gpt_embed_backward(&d, t, k, b, q, dz1, ebt + k * vl * h, NULL);
  ck_assert_int_eq(memcmp(eb1, ebt, d.vocab * h * sizeof(double)), 0);
  /* position k's gradient is the sum of its b rows */
  double p0 = 0;
  for (size_t i = 0; i < b; i++)
    p0 += gsl_matrix_get(dz1, 1 * b + i, 3);
  ck_assert_double_eq_tol(pb1[1 * h + 3], p0, 1e-15);

  free(eb1);
  free(ebt);
  free(pb1);
}

static void vocab_parallel(size_t t, int sp)
{
  gpt_dims d = {16, 4, 8, 2, 1, {0}};
  size_t b = 3, n = d.seq * b, h = d.hidden, vl = d.vocab / t;
  gsl_vector *w = init(&d, 5);
  gpt_layout l;
  gpt_layout_of(&d, &l);
  double *q = draw_seqs(&d, b, 5);
  gsl_rng *r = rng_create(5, RNG_ROLE_DATA, 7);
  gsl_matrix *z = gsl_matrix_alloc(n, h);
  for (size_t i = 0; i < n * h; i++)
    z->data[i] = 2 * gsl_rng_uniform(r) - 1;
  gsl_rng_free(r);
  const double *E = w->data + l.embed, *g = w->data + l.lnf_g, *bb = w->data + l.lnf_b;

  vocab_embed(&d, t, w, &l, b, q);

  /* head: one rank */
  gpt_head *one = gpt_head_create(&d, 1, 0, b, 0, n);
  gpt_head_norm(one, g, bb, z);
  gpt_head_logits(one, E);
  gpt_head_targets(one, q);
  gpt_head_sumexp(one);
  double loss1 = gpt_head_loss(one);
  double *dE1 = calloc(d.vocab * h, sizeof(double)), *dg1 = calloc(h, sizeof(double)), *db1 = calloc(h, sizeof(double));
  gpt_head_backward(one, E, dE1);
  gsl_matrix *dz1 = gsl_matrix_alloc(n, h);
  gpt_head_norm_backward(one, g, dg1, db1, dz1);
  double ref = vocab_loss_by_definition(&d, one, E, q, b);
  ck_assert_msg(fabs(loss1 - ref) <= VOCAB_RTOL * ref, "head loss %.17g, by definition %.17g", loss1, ref);

  /* t ranks */
  size_t rows = sp ? n / t : n;
  double *dx = calloc(n * h, sizeof(double));
  double *dE = calloc(d.vocab * h, sizeof(double)), *dg = calloc(h, sizeof(double)), *db = calloc(h, sizeof(double));
  gpt_head **hd = vocab_heads_forward(&d, t, sp, b, z, w, &l, q, one);
  for (size_t k = 0; k < t; k++) {
    double lk = gpt_head_loss(hd[k]);
    ck_assert_msg(fabs(lk - loss1) <= VOCAB_RTOL * loss1, "rank %zu: loss %.17g, one rank %.17g", k, lk, loss1);
    gpt_head_backward(hd[k], E + k * vl * h, dE + k * vl * h);
    for (size_t i = 0; i < n * h; i++)
      dx[i] += gpt_head_dx(hd[k])[i];
  }
  assert_close("dE", dE, dE1, d.vocab * h, VOCAB_RTOL);
  assert_close("dX", dx, gpt_head_dx(one), n * h, VOCAB_RTOL);
  gsl_matrix *dz = gsl_matrix_alloc(n, h);
  for (size_t k = 0; k < t; k++) {
    memcpy(gpt_head_dx(hd[k]), dx, n * h * sizeof(double));
    gsl_matrix_view dzr = gsl_matrix_submatrix(dz, sp ? k * rows : 0, 0, rows, h);
    double *dgk = sp || k == 0 ? dg : calloc(h, sizeof(double)), *dbk = sp || k == 0 ? db : calloc(h, sizeof(double));
    gpt_head_norm_backward(hd[k], g, dgk, dbk, &dzr.matrix);
    if (dgk != dg) {
      free(dgk);
      free(dbk);
    }
  }
  assert_close("dz", dz->data, dz1->data, n * h, VOCAB_RTOL);
  assert_close("dlnf_g", dg, dg1, h, VOCAB_RTOL);
  assert_close("dlnf_b", db, db1, h, VOCAB_RTOL);

  vocab_lookup_backward(&d, t, b, q, dz1);

  for (size_t k = 0; k < t; k++)
    gpt_head_free(hd[k]);
  free(hd);
  gpt_head_free(one);
  gpt_head_free(NULL);
  free(dx);
  free(dE);
  free(dE1);
  free(dg);
  free(db);
  free(dg1);
  free(db1);
  gsl_matrix_free(z);
  gsl_matrix_free(dz);
  gsl_matrix_free(dz1);
  gsl_vector_free(w);
  free(q);
}

START_TEST(test_gpt_vocab_parallel)
{
  vocab_parallel(2, 0);
  vocab_parallel(4, 0);
  vocab_parallel(2, 1);
  vocab_parallel(4, 1);
  gpt_dims d = {15, 4, 8, 2, 1, {0}};
  ck_assert_ptr_null(gpt_head_create(&d, 2, 0, 1, 0, 4)); /* t does not divide V */
  d.vocab = 16;
  ck_assert_ptr_null(gpt_head_create(&d, 2, 0, 1, 2, 3)); /* rows beyond n */
}
END_TEST

START_TEST(test_gpt_composed)
{
  /* One rank's pieces composed as a stage would run them (lookup, positions, the reference
   * layers, the head forward and backward, the lookup's backward) give the serial
   * reference's loss and every block of its gradient: the head's and the embedding's
   * backward are checked here, the layers by check_transformer. */
  gpt_dims d = {8, 4, 8, 2, 2, {0}};
  size_t b = 2, n = d.seq * b, h = d.hidden;
  gsl_vector *w = init(&d, 6), *gref = gsl_vector_alloc(gpt_n_params(&d)), *g = gsl_vector_calloc(gpt_n_params(&d));
  double *q = draw_seqs(&d, b, 6), lref;
  ck_assert_int_eq(gpt_loss_grad(&d, w, b, q, &lref, gref), 0);
  gpt_layout l;
  gpt_layout_of(&d, &l);
  transformer_dims td = {b, d.seq, h, d.heads};
  gsl_matrix *X[3], *dz = gsl_matrix_alloc(n, h), *dx = gsl_matrix_alloc(n, h);
  for (size_t k = 0; k < 3; k++)
    X[k] = gsl_matrix_alloc(n, h);
  gpt_embed_lookup(&d, 1, 0, w->data + l.embed, b, q, X[0]);
  gpt_embed_positions(&d, w->data + l.pos, b, 0, X[0]);
  for (size_t k = 0; k < 2; k++) {
    gsl_vector_const_view wk = gsl_vector_const_subvector(w, l.layer0 + k * l.layer_size, l.layer_size);
    ck_assert_int_eq(transformer_layer_forward(&td, &wk.vector, X[k], X[k + 1]), 0);
  }
  gpt_head *hd = gpt_head_create(&d, 1, 0, b, 0, n);
  gpt_head_norm(hd, w->data + l.lnf_g, w->data + l.lnf_b, X[2]);
  gpt_head_logits(hd, w->data + l.embed);
  gpt_head_targets(hd, q);
  gpt_head_sumexp(hd);
  double loss = gpt_head_loss(hd);
  ck_assert_msg(fabs(loss - lref) <= EVAL_RTOL * lref, "composed loss %.17g, reference %.17g", loss, lref);
  gpt_head_backward(hd, w->data + l.embed, g->data + l.embed);
  gpt_head_norm_backward(hd, w->data + l.lnf_g, g->data + l.lnf_g, g->data + l.lnf_b, dz);
  for (size_t k = 2; k-- > 0;) {
    gsl_vector_const_view wk = gsl_vector_const_subvector(w, l.layer0 + k * l.layer_size, l.layer_size);
    gsl_vector_view gk = gsl_vector_subvector(g, l.layer0 + k * l.layer_size, l.layer_size);
    ck_assert_int_eq(transformer_layer_backward(&td, &wk.vector, X[k], dz, dx, &gk.vector), 0);
    gsl_matrix_memcpy(dz, dx);
  }
  gpt_embed_backward(&d, 1, 0, b, q, dz, g->data + l.embed, g->data + l.pos);
  const char *names[] = {"E", "P", "layers", "lnf"};
  size_t from[] = {l.embed, l.pos, l.layer0, l.lnf_g}, to[] = {l.pos, l.layer0, l.lnf_g, l.total};
  for (size_t k = 0; k < 4; k++)
    assert_close(names[k], g->data + from[k], gref->data + from[k], to[k] - from[k], EVAL_RTOL);
  gpt_head_free(hd);
  for (size_t k = 0; k < 3; k++)
    gsl_matrix_free(X[k]);
  gsl_matrix_free(dz);
  gsl_matrix_free(dx);
  gsl_vector_free(w);
  gsl_vector_free(g);
  gsl_vector_free(gref);
  free(q);
}
END_TEST

START_TEST(test_gpt_shard_ranges)
{
  /* every entry of a layer: held by every rank (replicated) or by exactly one (split) */
  size_t h = 8;
  transformer_layout tl;
  transformer_layout_of(h, &tl);
  for (size_t t = 1; t <= 4; t *= 2) {
    int *owners = calloc(tl.total, sizeof(int));
    transformer_range rr[8], sr[4 * 8 + 6];
    size_t nr = transformer_shard_ranges(h, t, 0, 1, rr, 8);
    ck_assert_uint_eq(nr, 4);
    size_t rep = 0;
    for (size_t k = 0; k < nr; k++)
      for (size_t i = rr[k].off; i < rr[k].off + rr[k].len; i++, rep++)
        owners[i] += (int)t;
    ck_assert_uint_eq(rep, 6 * h);
    for (size_t r = 0; r < t; r++) {
      size_t ns = transformer_shard_ranges(h, t, r, 0, sr, sizeof sr / sizeof sr[0]), split = 0;
      ck_assert_uint_eq(ns, 4 * h + 6);
      ck_assert_uint_eq(transformer_shard_ranges(h, t, r, 0, NULL, 0), ns);
      for (size_t k = 0; k < ns; k++) {
        if (k > 0)
          ck_assert_uint_gt(sr[k].off, sr[k - 1].off); /* layout order */
        for (size_t i = sr[k].off; i < sr[k].off + sr[k].len; i++, split++)
          owners[i]++;
      }
      ck_assert_uint_eq(split, (12 * h * h + 7 * h) / t);
    }
    for (size_t i = 0; i < tl.total; i++)
      ck_assert_msg(owners[i] == (int)t || owners[i] == 1, "t = %zu: entry %zu held %d times", t, i, owners[i]);
    /* a split entry is held once: the replicated ones count t, so the total count is
     * t x 6h + (12h^2 + 7h) */
    size_t total = 0;
    for (size_t i = 0; i < tl.total; i++)
      total += (size_t)owners[i];
    ck_assert_uint_eq(total, t * 6 * h + 12 * h * h + 7 * h);
    free(owners);
  }
  /* rank 1 of 2 owns the second half of Wq's first row and W2's second half of rows */
  transformer_range sr[38];
  transformer_shard_ranges(h, 2, 1, 0, sr, 38);
  ck_assert_uint_eq(sr[0].off, tl.Wq + 4);
  ck_assert_uint_eq(sr[0].len, 4);
  ck_assert_uint_eq(sr[37].off, tl.W2 + 16 * h);
  ck_assert_uint_eq(sr[37].len, 16 * h);
  ck_assert_uint_eq(transformer_shard_ranges(h, 3, 0, 0, NULL, 0), 0); /* t does not divide h */
  ck_assert_uint_eq(transformer_shard_ranges(h, 2, 2, 1, NULL, 0), 0);
}
END_TEST

START_TEST(test_gpt_tokens)
{
  size_t n = 4000, len = 9, V = 8;
  gsl_rng *r = rng_create(11, RNG_ROLE_DATA, 0), *r2 = rng_create(11, RNG_ROLE_DATA, 0);
  dataset *a = data_synthetic_tokens(n, len, V, r), *b = data_synthetic_tokens(n, len, V, r2);
  ck_assert_ptr_nonnull(a);
  ck_assert_uint_eq(data_n(a), n);
  ck_assert_uint_eq(data_dim(a), len);
  ck_assert_uint_eq(a->n_classes, V);
  ck_assert_int_eq(memcmp(a->X->data, b->X->data, n * len * sizeof(double)), 0);
  /* successors per context: at most 4 distinct, and the empirical conditional entropy of
   * positions 2.. near H = 1.1369 nats (4000 x 7 draws over 64 contexts: the plug-in
   * estimate's bias is about (4-1)/(2 x 437) = 0.003 per context, its spread ~0.01) */
  static size_t count[8][8][8];
  memset(count, 0, sizeof count);
  for (size_t i = 0; i < n; i++) {
    const double *x = gsl_matrix_const_ptr(a->X, i, 0);
    for (size_t k = 0; k < len; k++)
      ck_assert(x[k] >= 0 && x[k] < (double)V && x[k] == floor(x[k]));
    for (size_t k = 2; k < len; k++)
      count[(size_t)x[k - 2]][(size_t)x[k - 1]][(size_t)x[k]]++;
  }
  double H = 0, total = 0;
  for (size_t u = 0; u < V; u++)
    for (size_t v = 0; v < V; v++) {
      size_t distinct = 0, sum = 0;
      for (size_t c = 0; c < V; c++) {
        distinct += count[u][v][c] > 0;
        sum += count[u][v][c];
      }
      ck_assert_uint_le(distinct, 4);
      for (size_t c = 0; c < V; c++)
        if (count[u][v][c])
          H -= (double)count[u][v][c] * log((double)count[u][v][c] / (double)sum);
      total += (double)sum;
    }
  H /= total;
  ck_assert_msg(fabs(H - 1.1369165918330009) < 0.03, "empirical entropy %.4f, chain's 1.1369", H);
  /* (ln 8 + 7 x 1.1369...) / 8 */
  ck_assert_double_eq_tol(data_tokens_loss_floor(len, V), (log(8.0) + 7 * 1.1369165918330009) / 8, 1e-12);
  ck_assert_ptr_null(data_synthetic_tokens(0, len, V, r));
  ck_assert_ptr_null(data_synthetic_tokens(2, 1, V, r));
  ck_assert_ptr_null(data_synthetic_tokens(2, len, 3, r));
  data_free(a);
  data_free(b);
  gsl_rng_free(r);
  gsl_rng_free(r2);
}
END_TEST

START_TEST(test_gpt_adam)
{
  /* step 1: m = 0.1 g, v = 0.001 g^2, mhat = g, vhat = g^2: w -= lr g / (|g| + eps) */
  double w[3] = {1, -2, 0.5}, m[3] = {0}, v[3] = {0}, g[3] = {0.5, -4, 0};
  optim_adam_apply(w, m, v, g, 3, 0.01, OPTIM_ADAM_B1, OPTIM_ADAM_B2, OPTIM_ADAM_EPS, 1);
  ck_assert_double_eq_tol(w[0], 1 - 0.01 * 0.5 / (0.5 + 1e-8), 1e-15);
  ck_assert_double_eq_tol(w[1], -2 + 0.01 * 4 / (4 + 1e-8), 1e-15);
  ck_assert_double_eq(w[2], 0.5); /* a zero gradient moves nothing */
  /* step 2 with the same g: m = 0.19 g, v = 0.001999 g^2, mhat = m / 0.19 = g, vhat = g^2 */
  optim_adam_apply(w, m, v, g, 3, 0.01, OPTIM_ADAM_B1, OPTIM_ADAM_B2, OPTIM_ADAM_EPS, 2);
  ck_assert_double_eq_tol(m[0], 0.19 * 0.5, 1e-15);
  ck_assert_double_eq_tol(v[1], 0.001999 * 16, 1e-15);
  ck_assert_double_eq_tol(w[0], 1 - 0.02 * 0.5 / (0.5 + 1e-8), 1e-14);
}
END_TEST

static Suite *gpt_suite(void)
{
  Suite *s = suite_create("gpt");
  ADD_TCASE(s, "layout", test_gpt_layout, test_gpt_shard_ranges);
  ADD_TCASE(s, "numerics", test_gpt_gradient, test_gpt_evaluate, test_gpt_composed, test_gpt_vocab_parallel);
  ADD_TCASE(s, "data", test_gpt_tokens, test_gpt_adam);
  ADD_TCASE(s, "moe", test_gpt_moe_top1, test_gpt_moe_top2);
  return s;
}

CHECK_MAIN(gpt_suite)

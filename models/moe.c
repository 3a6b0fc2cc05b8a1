/* moe.c - a mixture-of-experts layer: the router, capacity and dropping, the experts, the
 * auxiliary load-balancing loss, forward and backward (moe.h says what each is). */
#include "models/moe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_blas.h>

#include "models/mem.h"

int moe_config_check(const moe_config *c)
{
  if (c == NULL || c->experts < 2 || (c->top_k != 1 && c->top_k != 2) || c->top_k > c->experts ||
      !(c->capacity_factor > 0.0) || !isfinite(c->capacity_factor) || !(c->aux_coef >= 0.0) ||
      !isfinite(c->aux_coef))
    return -1;
  return 0;
}

size_t moe_capacity(const moe_config *c, size_t tokens)
{
  /* less 1e-9: a product that rounding puts just above an integer (1.1 x 10 = 11.000000000000002)
     is that integer */
  double x = c->capacity_factor * (double)tokens * (double)c->top_k / (double)c->experts;
  return (size_t)ceil(x - 1e-9);
}

size_t moe_expert_size(size_t h) { return 8 * h * h + 5 * h; }
size_t moe_expert_offset(size_t h, size_t experts, size_t e) { return h * experts + e * moe_expert_size(h); }
size_t moe_n_params(size_t h, size_t experts) { return moe_expert_offset(h, experts, experts); }
double moe_expert_flops(size_t h, size_t m) { return 16.0 * (double)m * (double)h * (double)h; }

/* Offsets inside an expert's block: W1 [h x 4h], b1 [4h], W2 [4h x h], b2 [h]. */
#define EW1(h) 0
#define EB1(h) (4 * (h) * (h))
#define EW2(h) (4 * (h) * (h) + 4 * (h))
#define EB2(h) (8 * (h) * (h) + 4 * (h))

static void fill_uniform(gsl_rng *r, double *x, size_t n, double g)
{
  for (size_t i = 0; i < n; i++)
    x[i] = (2.0 * gsl_rng_uniform(r) - 1.0) * g;
}

void moe_init_params(size_t h, size_t experts, gsl_rng *r, double *w)
{
  fill_uniform(r, w, h * experts, sqrt(6.0 / (double)(h + experts)));
  double g4 = sqrt(6.0 / (5.0 * (double)h));
  for (size_t e = 0; e < experts; e++) {
    double *we = w + moe_expert_offset(h, experts, e);
    fill_uniform(r, we + EW1(h), 4 * h * h, g4);
    fill_uniform(r, we + EB1(h), 4 * h, 0.1);
    fill_uniform(r, we + EW2(h), 4 * h * h, g4);
    fill_uniform(r, we + EB2(h), h, 0.1);
  }
}

/* ---- routing ---- */

void moe_routing_free(moe_routing *r)
{
  if (r == NULL)
    return;
  free(r->prob);
  free(r->choice);
  free(r->gate);
  free(r->slot);
  free(r->group_of);
  free(r->kept);
  free(r->routed);
  free(r->first);
  free(r);
}

/* p = softmax(X Wr) row by row, shifted by the row's largest logit. */
static void router_probs(const double *Wr, const gsl_matrix *X, size_t E, double *prob)
{
  size_t h = X->size2;
  for (size_t i = 0; i < X->size1; i++) {
    const double *x = gsl_matrix_const_ptr(X, i, 0);
    double *p = prob + i * E, mx = -INFINITY, z = 0.0;
    for (size_t e = 0; e < E; e++) {
      double a = 0.0;
      for (size_t c = 0; c < h; c++)
        a += x[c] * Wr[c * E + e];
      p[e] = a;
      mx = a > mx ? a : mx;
    }
    for (size_t e = 0; e < E; e++) {
      p[e] = exp(p[e] - mx);
      z += p[e];
    }
    for (size_t e = 0; e < E; e++)
      p[e] /= z;
  }
}

/* The top-k of row i (likeliest first, ties the lowest id) and their gates. */
static void choose(moe_routing *r, size_t i)
{
  const double *p = r->prob + i * r->experts;
  size_t a = 0;
  for (size_t e = 1; e < r->experts; e++)
    a = p[e] > p[a] ? e : a;
  r->choice[i * r->top_k] = a;
  if (r->top_k == 1) {
    r->gate[i] = p[a];
    return;
  }
  size_t b = a == 0 ? 1 : 0;
  for (size_t e = 0; e < r->experts; e++)
    b = e != a && p[e] > p[b] ? e : b;
  r->choice[i * 2 + 1] = b;
  r->gate[i * 2] = p[a] / (p[a] + p[b]);
  r->gate[i * 2 + 1] = p[b] / (p[a] + p[b]);
}

/* Slots, counts, drops and the auxiliary loss, group by group (moe.h's order). */
static void assign(const moe_config *c, moe_routing *r)
{
  size_t n = r->n, E = r->experts, k = r->top_k, G = r->groups, per = n / G;
  for (size_t g = 0; g < G; g++) {
    size_t *kept = r->kept + g * E, *routed = r->routed + g * E, *first = r->first + g * E;
    for (size_t j = 0; j < k; j++)
      for (size_t i = 0; i < n; i++) {
        if (r->group_of[i] != g)
          continue;
        size_t e = r->choice[i * k + j];
        routed[e]++;
        first[e] += j == 0;
        r->slot[i * k + j] = kept[e] < r->capacity ? (long)kept[e]++ : -1;
        r->dropped += r->slot[i * k + j] < 0;
      }
    double sum = 0.0;
    for (size_t e = 0; e < E; e++) {
      double P = 0.0;
      for (size_t i = 0; i < n; i++)
        P += r->group_of[i] == g ? r->prob[i * E + e] : 0.0;
      sum += ((double)first[e] / (double)per) * (P / (double)per);
    }
    r->aux += c->aux_coef * (double)E * sum / (double)G;
  }
  for (size_t i = 0; i < n; i++) {
    size_t lost = 0;
    for (size_t j = 0; j < k; j++)
      lost += r->slot[i * k + j] < 0;
    r->dropped_tokens += lost == k;
  }
}

moe_routing *moe_route(const moe_config *c, const double *Wr, const gsl_matrix *X, size_t b)
{
  size_t n = X->size1, G = c->groups > 1 ? c->groups : 1;
  if (moe_config_check(c) != 0 || n == 0 || b == 0 || n % b != 0 || b % G != 0)
    return NULL;
  size_t E = c->experts, k = c->top_k;
  moe_routing *r = mem_calloc(1, sizeof(*r));
  r->n = n;
  r->b = b;
  r->experts = E;
  r->top_k = k;
  r->groups = G;
  r->capacity = moe_capacity(c, n / G);
  r->prob = mem_alloc(n * E * sizeof(double));
  r->choice = mem_alloc(n * k * sizeof(size_t));
  r->gate = mem_alloc(n * k * sizeof(double));
  r->slot = mem_alloc(n * k * sizeof(long));
  r->group_of = mem_alloc(n * sizeof(size_t));
  r->kept = mem_calloc(G * E, sizeof(size_t));
  r->routed = mem_calloc(G * E, sizeof(size_t));
  r->first = mem_calloc(G * E, sizeof(size_t));
  router_probs(Wr, X, E, r->prob);
  for (size_t i = 0; i < n; i++) {
    r->group_of[i] = (i % b) / (b / G);
    choose(r, i);
  }
  assign(c, r);
  return r;
}

size_t moe_expert_rows(const moe_routing *r, size_t e, size_t *tok)
{
  size_t m = 0, k = r->top_k;
  for (size_t g = 0; g < r->groups; g++)
    for (size_t j = 0; j < k; j++)
      for (size_t i = 0; i < r->n; i++)
        if (r->group_of[i] == g && r->choice[i * k + j] == e && r->slot[i * k + j] >= 0) {
          if (tok)
            tok[m] = i;
          m++;
        }
  return m;
}

int moe_shard_counts(const moe_routing *r, size_t shards, size_t *counts)
{
  if (shards == 0 || r->b % shards != 0)
    return -1;
  size_t E = r->experts, k = r->top_k;
  memset(counts, 0, shards * E * sizeof(size_t));
  for (size_t i = 0; i < r->n; i++)
    for (size_t j = 0; j < k; j++)
      if (r->slot[i * k + j] >= 0)
        counts[((i % r->b) / (r->b / shards)) * E + r->choice[i * k + j]]++;
  return 0;
}

/* ---- one expert ---- */

void moe_expert_forward(size_t h, const double *we, const gsl_matrix *x, gsl_matrix *u, gsl_matrix *y)
{
  size_t m = x->size1;
  if (m == 0)
    return;
  gsl_matrix_const_view W1 = gsl_matrix_const_view_array(we + EW1(h), h, 4 * h);
  gsl_matrix_const_view W2 = gsl_matrix_const_view_array(we + EW2(h), 4 * h, h);
  gsl_matrix *gl = mem_matrix(m, 4 * h);
  for (size_t i = 0; i < m; i++) {
    memcpy(gsl_matrix_ptr(u, i, 0), we + EB1(h), 4 * h * sizeof(double));
    memcpy(gsl_matrix_ptr(y, i, 0), we + EB2(h), h * sizeof(double));
  }
  gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, x, &W1.matrix, 1.0, u);
  for (size_t i = 0; i < m; i++)
    for (size_t c = 0; c < 4 * h; c++)
      gsl_matrix_set(gl, i, c, transformer_gelu(gsl_matrix_get(u, i, c)));
  gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, gl, &W2.matrix, 1.0, y);
  gsl_matrix_free(gl);
}

void moe_expert_backward(size_t h, const double *we, const gsl_matrix *x, const gsl_matrix *u, const gsl_matrix *dy,
                         gsl_matrix *dx, double *ge)
{
  size_t m = x->size1;
  if (m == 0)
    return;
  gsl_matrix_const_view W1 = gsl_matrix_const_view_array(we + EW1(h), h, 4 * h);
  gsl_matrix_const_view W2 = gsl_matrix_const_view_array(we + EW2(h), 4 * h, h);
  gsl_matrix_view dW1 = gsl_matrix_view_array(ge + EW1(h), h, 4 * h);
  gsl_matrix_view dW2 = gsl_matrix_view_array(ge + EW2(h), 4 * h, h);
  gsl_matrix *gl = mem_matrix(m, 4 * h), *du = mem_matrix(m, 4 * h);
  for (size_t i = 0; i < m; i++)
    for (size_t c = 0; c < 4 * h; c++)
      gsl_matrix_set(gl, i, c, transformer_gelu(gsl_matrix_get(u, i, c)));
  gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, gl, dy, 1.0, &dW2.matrix);
  gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, dy, &W2.matrix, 0.0, du);
  for (size_t i = 0; i < m; i++) {
    for (size_t c = 0; c < h; c++)
      ge[EB2(h) + c] += gsl_matrix_get(dy, i, c);
    for (size_t c = 0; c < 4 * h; c++) {
      double v = gsl_matrix_get(du, i, c) * transformer_gelu_grad(gsl_matrix_get(u, i, c));
      gsl_matrix_set(du, i, c, v);
      ge[EB1(h) + c] += v;
    }
  }
  gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, x, du, 1.0, &dW1.matrix);
  gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, du, &W1.matrix, 0.0, dx);
  gsl_matrix_free(gl);
  gsl_matrix_free(du);
}

/* ---- the serial mixture ---- */

/* Every expert's buffer: its token rows, inputs, pre-activations and outputs. */
typedef struct moe_acts {
  size_t **tok, *m;
  gsl_matrix **x, **u, **y;
} moe_acts;

static gsl_matrix *rows_matrix(size_t m, size_t cols) { return m > 0 ? mem_matrix(m, cols) : NULL; }

static void acts_forward(size_t h, const double *w, const gsl_matrix *X, const moe_routing *r, moe_acts *a)
{
  size_t E = r->experts;
  a->tok = mem_calloc(E, sizeof(size_t *));
  a->m = mem_calloc(E, sizeof(size_t));
  a->x = mem_calloc(E, sizeof(gsl_matrix *));
  a->u = mem_calloc(E, sizeof(gsl_matrix *));
  a->y = mem_calloc(E, sizeof(gsl_matrix *));
  for (size_t e = 0; e < E; e++) {
    size_t m = moe_expert_rows(r, e, NULL);
    a->m[e] = m;
    a->tok[e] = mem_alloc((m + 1) * sizeof(size_t));
    moe_expert_rows(r, e, a->tok[e]);
    a->x[e] = rows_matrix(m, h);
    a->u[e] = rows_matrix(m, 4 * h);
    a->y[e] = rows_matrix(m, h);
    for (size_t q = 0; q < m; q++) {
      size_t i = a->tok[e][q];
      memcpy(gsl_matrix_ptr(a->x[e], q, 0), gsl_matrix_const_ptr(X, i, 0), h * sizeof(double));
    }
    if (m > 0)
      moe_expert_forward(h, w + moe_expert_offset(h, E, e), a->x[e], a->u[e], a->y[e]);
  }
}

static void acts_free(moe_acts *a, size_t E)
{
  for (size_t e = 0; e < E; e++) {
    free(a->tok[e]);
    gsl_matrix_free(a->x[e]);
    gsl_matrix_free(a->u[e]);
    gsl_matrix_free(a->y[e]);
  }
  free(a->tok);
  free(a->m);
  free(a->x);
  free(a->u);
  free(a->y);
}

static int shapes_ok(const moe_config *c, size_t h, const gsl_matrix *X, const gsl_matrix *Y)
{
  return moe_config_check(c) == 0 && X->size2 == h && Y->size1 == X->size1 && Y->size2 == h;
}

static void pos_of(const moe_routing *r, size_t e, const size_t *tok, size_t m, long *pos)
{
  size_t k = r->top_k;
  for (size_t q = 0; q < m; q++)
    for (size_t j = 0; j < k; j++)
      if (r->choice[tok[q] * k + j] == e)
        pos[tok[q] * k + j] = (long)q;
}

/* pos (n x k) for every expert, from the routing alone. */
static long *positions(const moe_routing *r)
{
  size_t k = r->top_k;
  long *pos = mem_alloc(r->n * k * sizeof(long));
  size_t *tok = mem_alloc((r->n * k + 1) * sizeof(size_t));
  for (size_t i = 0; i < r->n * k; i++)
    pos[i] = -1;
  for (size_t e = 0; e < r->experts; e++)
    pos_of(r, e, tok, moe_expert_rows(r, e, tok), pos);
  free(tok);
  return pos;
}

void moe_combine(const moe_routing *r, const gsl_matrix *const *y, gsl_matrix *M)
{
  size_t k = r->top_k, h = M->size2;
  long *pos = positions(r);
  gsl_matrix_set_zero(M);
  for (size_t i = 0; i < r->n; i++)
    for (size_t j = 0; j < k; j++) {
      long q = pos[i * k + j];
      if (q < 0)
        continue;
      const double *yr = gsl_matrix_const_ptr(y[r->choice[i * k + j]], (size_t)q, 0);
      double *mi = gsl_matrix_ptr(M, i, 0), gt = r->gate[i * k + j];
      for (size_t col = 0; col < h; col++)
        mi[col] += gt * yr[col];
    }
  free(pos);
}

void moe_combine_backward(const moe_routing *r, const gsl_matrix *const *y, const gsl_matrix *dM, gsl_matrix *const *dy,
                          double *dgate)
{
  size_t k = r->top_k, h = dM->size2;
  long *pos = positions(r);
  for (size_t i = 0; i < r->n; i++)
    for (size_t j = 0; j < k; j++) {
      long q = pos[i * k + j];
      dgate[i * k + j] = 0.0;
      if (q < 0)
        continue;
      size_t e = r->choice[i * k + j];
      const double *dm = gsl_matrix_const_ptr(dM, i, 0), *yr = gsl_matrix_const_ptr(y[e], (size_t)q, 0);
      double *d = gsl_matrix_ptr(dy[e], (size_t)q, 0), dot = 0.0;
      for (size_t col = 0; col < h; col++) {
        d[col] = r->gate[i * k + j] * dm[col];
        dot += dm[col] * yr[col];
      }
      dgate[i * k + j] = dot;
    }
  free(pos);
}

/* The routing of the rows of X and, when it succeeds, every expert's activations on its
 * tokens into a: what the forward and the backward pass both begin with; NULL on failure. */
static moe_routing *route_forward(const moe_config *c, size_t h, const double *w, const gsl_matrix *X, size_t b,
                                  moe_acts *a)
{
  moe_routing *r = moe_route(c, w, X, b);
  if (r)
    acts_forward(h, w, X, r, a);
  return r;
}

int moe_forward(const moe_config *c, size_t h, const double *w, const gsl_matrix *X, size_t b, gsl_matrix *M,
                moe_routing **rout)
{
  moe_acts a;
  moe_routing *r = shapes_ok(c, h, X, M) ? route_forward(c, h, w, X, b, &a) : NULL;
  if (r == NULL)
    return -1;
  moe_combine(r, (const gsl_matrix *const *)a.y, M);
  acts_free(&a, r->experts);
  if (rout)
    *rout = r;
  else
    moe_routing_free(r);
  return 0;
}

/* dL/dp of row i from its gates' gradients dg (k entries) and the auxiliary loss. */
static void prob_grad(const moe_config *c, const moe_routing *r, size_t i, const double *dg, double aux_weight,
                      double *dp)
{
  size_t E = r->experts, k = r->top_k, g = r->group_of[i], per = r->n / r->groups;
  const double *p = r->prob + i * E;
  for (size_t e = 0; e < E; e++)
    dp[e] = aux_weight * c->aux_coef * (double)E * ((double)r->first[g * E + e] / (double)per) / (double)per /
            (double)r->groups;
  size_t a = r->choice[i * k];
  if (k == 1) {
    dp[a] += dg[0];
    return;
  }
  size_t b = r->choice[i * k + 1];
  double s = p[a] + p[b];
  /* g_a = p_a / s, g_b = p_b / s: dg_a/dp_a = p_b / s^2, dg_a/dp_b = -p_a / s^2 */
  dp[a] += (dg[0] * p[b] - dg[1] * p[b]) / (s * s);
  dp[b] += (dg[1] * p[a] - dg[0] * p[a]) / (s * s);
}

void moe_router_backward(const moe_config *c, const moe_routing *r, const double *Wr, const gsl_matrix *X,
                         const gsl_matrix *const *dx, const double *dgate, double aux_weight, double *dWr,
                         gsl_matrix *dX)
{
  size_t E = r->experts, h = X->size2;
  size_t *tok = mem_alloc((r->n * r->top_k + 1) * sizeof(size_t));
  gsl_matrix_set_zero(dX);
  for (size_t e = 0; e < E; e++) { /* a token's rows add in expert order */
    size_t m = moe_expert_rows(r, e, tok);
    for (size_t q = 0; q < m; q++) {
      double *d = gsl_matrix_ptr(dX, tok[q], 0);
      const double *s = gsl_matrix_const_ptr(dx[e], q, 0);
      for (size_t col = 0; col < h; col++)
        d[col] += s[col];
    }
  }
  free(tok);
  /* dlogits = p (dp - p . dp) row by row; dWr += X^T dlogits; dX += dlogits Wr^T */
  double *dp = mem_alloc(E * sizeof(double)), *dl = mem_alloc(E * sizeof(double));
  for (size_t i = 0; i < r->n; i++) {
    const double *p = r->prob + i * E;
    prob_grad(c, r, i, dgate + i * r->top_k, aux_weight, dp);
    double dot = 0.0;
    for (size_t e = 0; e < E; e++)
      dot += p[e] * dp[e];
    for (size_t e = 0; e < E; e++)
      dl[e] = p[e] * (dp[e] - dot);
    const double *x = gsl_matrix_const_ptr(X, i, 0);
    double *dxi = gsl_matrix_ptr(dX, i, 0);
    for (size_t col = 0; col < h; col++) {
      double acc = 0.0;
      for (size_t e = 0; e < E; e++) {
        dWr[col * E + e] += x[col] * dl[e];
        acc += dl[e] * Wr[col * E + e];
      }
      dxi[col] += acc;
    }
  }
  free(dp);
  free(dl);
}

int moe_backward(const moe_config *c, size_t h, const double *w, const gsl_matrix *X, size_t b,
                 const gsl_matrix *dM, gsl_matrix *dX, double *grad)
{
  moe_acts a;
  moe_routing *r = shapes_ok(c, h, X, dM) && shapes_ok(c, h, X, dX) ? route_forward(c, h, w, X, b, &a) : NULL;
  if (r == NULL)
    return -1;
  size_t E = r->experts;
  memset(grad, 0, moe_n_params(h, E) * sizeof(double));
  double *dgate = mem_alloc((r->n * r->top_k + 1) * sizeof(double));
  gsl_matrix **dy = mem_calloc(E, sizeof(gsl_matrix *)), **dx = mem_calloc(E, sizeof(gsl_matrix *));
  for (size_t e = 0; e < E; e++) {
    dy[e] = rows_matrix(a.m[e], h);
    dx[e] = rows_matrix(a.m[e], h);
  }
  moe_combine_backward(r, (const gsl_matrix *const *)a.y, dM, dy, dgate);
  for (size_t e = 0; e < E; e++)
    if (a.m[e] > 0)
      moe_expert_backward(h, w + moe_expert_offset(h, E, e), a.x[e], a.u[e], dy[e], dx[e],
                          grad + moe_expert_offset(h, E, e));
  moe_router_backward(c, r, w, X, (const gsl_matrix *const *)dx, dgate, 1.0, grad, dX);
  for (size_t e = 0; e < E; e++) {
    gsl_matrix_free(dy[e]);
    gsl_matrix_free(dx[e]);
  }
  free(dy);
  free(dx);
  free(dgate);
  acts_free(&a, E);
  moe_routing_free(r);
  return 0;
}

/* ---- a whole layer ---- */

static size_t attn_size(size_t h)
{
  transformer_layout l;
  transformer_layout_of(h, &l);
  return l.W1; /* ln1_g .. ln2_b */
}

size_t moe_layer_n_params(size_t h, size_t experts) { return attn_size(h) + moe_n_params(h, experts); }

void moe_layer_init_params(size_t h, size_t experts, gsl_rng *r, double *w)
{
  double *dense = mem_alloc(transformer_n_params(h) * sizeof(double));
  gsl_vector_view v = gsl_vector_view_array(dense, transformer_n_params(h));
  transformer_init_params(h, r, &v.vector);
  memcpy(w, dense, attn_size(h) * sizeof(double));
  free(dense);
  moe_init_params(h, experts, r, w + attn_size(h));
}

/* Y = X + Attn(LN1(X)), Yn = LN2(Y) (xhat, rstd kept). */
static int layer_front(const transformer_dims *d, const double *w, const gsl_matrix *X, gsl_matrix *Y,
                       gsl_matrix *xhat, double *rstd, gsl_matrix *Yn)
{
  transformer_layout l;
  transformer_layout_of(d->h, &l);
  if (transformer_attn_forward(d, w, X, Y) != 0)
    return -1;
  transformer_ln_forward(Y, w + l.ln2_g, w + l.ln2_b, xhat, rstd, Yn);
  return 0;
}

int moe_layer_forward(const transformer_dims *d, const moe_config *c, const double *w, const gsl_matrix *X,
                      gsl_matrix *Z, moe_routing **r)
{
  size_t n = d->b * d->s, h = d->h;
  if (transformer_dims_check(d) != 0 || X->size1 != n || X->size2 != h || Z->size1 != n || Z->size2 != h)
    return -1;
  gsl_matrix *Y = mem_matrix(n, h), *xhat = mem_matrix(n, h), *Yn = mem_matrix(n, h);
  double *rstd = mem_alloc(n * sizeof(double));
  int rc = layer_front(d, w, X, Y, xhat, rstd, Yn);
  if (rc == 0)
    rc = moe_forward(c, h, w + attn_size(h), Yn, d->b, Z, r);
  if (rc == 0)
    gsl_matrix_add(Z, Y);
  gsl_matrix_free(Y);
  gsl_matrix_free(xhat);
  gsl_matrix_free(Yn);
  free(rstd);
  return rc;
}

int moe_layer_backward(const transformer_dims *d, const moe_config *c, const double *w, const gsl_matrix *X,
                       const gsl_matrix *dZ, gsl_matrix *dX, double *grad)
{
  size_t n = d->b * d->s, h = d->h;
  if (transformer_dims_check(d) != 0 || X->size1 != n || X->size2 != h || dZ->size1 != n || dZ->size2 != h ||
      dX->size1 != n || dX->size2 != h)
    return -1;
  transformer_layout l;
  transformer_layout_of(h, &l);
  gsl_matrix *Y = mem_matrix(n, h), *xhat = mem_matrix(n, h), *Yn = mem_matrix(n, h), *dYn = mem_matrix(n, h),
             *dY = mem_matrix(n, h);
  double *rstd = mem_alloc(n * sizeof(double));
  int rc = layer_front(d, w, X, Y, xhat, rstd, Yn);
  if (rc == 0)
    rc = moe_backward(c, h, w + attn_size(h), Yn, d->b, dZ, dYn, grad + attn_size(h));
  if (rc == 0) {
    memset(grad + l.ln2_g, 0, 2 * h * sizeof(double)); /* ln2_g, ln2_b: the LayerNorm adds into them */
    transformer_ln_backward(dYn, xhat, rstd, w + l.ln2_g, grad + l.ln2_g, grad + l.ln2_b, dY);
    gsl_matrix_add(dY, dZ);
    rc = transformer_attn_backward(d, w, X, dY, dX, grad);
  }
  gsl_matrix *fm[] = {Y, xhat, Yn, dYn, dY};
  for (size_t i = 0; i < sizeof fm / sizeof fm[0]; i++)
    gsl_matrix_free(fm[i]);
  free(rstd);
  return rc;
}

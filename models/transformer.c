/* transformer.c - one GPT layer (pre-LayerNorm), serial and Megatron tensor-parallel.
 *
 * The serial reference and the ranks share only the per-row and per-head kernels
 * (LayerNorm, GeLU, causal attention of one head); every GEMM, every split and every
 * reduction is written twice, so the partition test compares two computations. The
 * layer's shapes and costs (layout, shards, flops, GEMMs) are in transformer_shape.c. */
#include "models/transformer.h"

#include <math.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <stdlib.h>

#include "models/mem.h"

#define LN_EPS 1e-5
/* GPT-2 / Megatron-LM gelu: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
#define GELU_K 0.7978845608028654
#define GELU_C 0.044715

static void fill_uniform(gsl_rng *r, double *x, size_t n, double g)
{
  for (size_t i = 0; i < n; i++)
    x[i] = (2.0 * gsl_rng_uniform(r) - 1.0) * g;
}

void transformer_init_params(size_t h, gsl_rng *r, gsl_vector *w)
{
  transformer_layout l;
  transformer_layout_of(h, &l);
  if (w->size != l.total || w->stride != 1)
    mem_die("transformer_init_params", "w must hold transformer_n_params(h) contiguous entries");
  double *p = w->data;
  double gh = sqrt(6.0 / (2.0 * h)), g4 = sqrt(6.0 / (5.0 * h));
  for (size_t i = 0; i < h; i++) {
    p[l.ln1_g + i] = 1.0;
    p[l.ln1_b + i] = 0.0;
    p[l.ln2_g + i] = 1.0;
    p[l.ln2_b + i] = 0.0;
  }
  fill_uniform(r, p + l.Wq, 3 * h * h, gh);
  fill_uniform(r, p + l.bq, 3 * h, 0.1);
  fill_uniform(r, p + l.Wo, h * h, gh);
  fill_uniform(r, p + l.bo, h, 0.1);
  fill_uniform(r, p + l.W1, 4 * h * h, g4);
  fill_uniform(r, p + l.b1, 4 * h, 0.1);
  fill_uniform(r, p + l.W2, 4 * h * h, g4);
  fill_uniform(r, p + l.b2, h, 0.1);
}

/* ---- Shared kernels ---- */

/* y = g * xhat + b per row, xhat = (x - mean) * rstd; keeps xhat and rstd. */
static void ln_fwd(const gsl_matrix *x, const double *g, const double *b, gsl_matrix *xhat, double *rstd,
                   gsl_matrix *y)
{
  size_t h = x->size2;
  for (size_t i = 0; i < x->size1; i++) {
    const double *xi = gsl_matrix_const_ptr(x, i, 0);
    double mu = 0.0, var = 0.0;
    for (size_t c = 0; c < h; c++)
      mu += xi[c];
    mu /= (double)h;
    for (size_t c = 0; c < h; c++)
      var += (xi[c] - mu) * (xi[c] - mu);
    var /= (double)h;
    rstd[i] = 1.0 / sqrt(var + LN_EPS);
    double *xh = gsl_matrix_ptr(xhat, i, 0), *yi = gsl_matrix_ptr(y, i, 0);
    for (size_t c = 0; c < h; c++) {
      xh[c] = (xi[c] - mu) * rstd[i];
      yi[c] = g[c] * xh[c] + b[c];
    }
  }
}

/* dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)), dxhat = dy * g; adds the
 * rows' dgamma and dbeta in row order. */
static void ln_bwd(const gsl_matrix *dy, const gsl_matrix *xhat, const double *rstd, const double *g,
                   double *dg, double *db, gsl_matrix *dx)
{
  size_t h = dy->size2;
  for (size_t i = 0; i < dy->size1; i++) {
    const double *dyi = gsl_matrix_const_ptr(dy, i, 0), *xh = gsl_matrix_const_ptr(xhat, i, 0);
    double m1 = 0.0, m2 = 0.0;
    for (size_t c = 0; c < h; c++) {
      dg[c] += dyi[c] * xh[c];
      db[c] += dyi[c];
      m1 += dyi[c] * g[c];
      m2 += dyi[c] * g[c] * xh[c];
    }
    m1 /= (double)h;
    m2 /= (double)h;
    double *dxi = gsl_matrix_ptr(dx, i, 0);
    for (size_t c = 0; c < h; c++)
      dxi[c] = rstd[i] * (dyi[c] * g[c] - m1 - xh[c] * m2);
  }
}

static double gelu(double x)
{
  return 0.5 * x * (1.0 + tanh(GELU_K * (x + GELU_C * x * x * x)));
}

static double gelu_grad(double x)
{
  double th = tanh(GELU_K * (x + GELU_C * x * x * x));
  return 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * GELU_K * (1.0 + 3.0 * GELU_C * x * x);
}

double transformer_gelu(double x) { return gelu(x); }
double transformer_gelu_grad(double x) { return gelu_grad(x); }

/* Causal attention of `nh` heads of width hd over b examples of s positions: columns
 * [k*hd, (k+1)*hd) of Q, K, V, ctx are head k; P holds b*nh*s*s probabilities. */
static void attn_fwd(size_t b, size_t s, size_t nh, size_t hd, const gsl_matrix *Q, const gsl_matrix *K,
                     const gsl_matrix *V, double *P, gsl_matrix *ctx)
{
  double scale = 1.0 / sqrt((double)hd);
  for (size_t e = 0; e < b; e++)
    for (size_t k = 0; k < nh; k++) {
      double *Pk = P + (e * nh + k) * s * s;
      for (size_t i = 0; i < s; i++) {
        const double *q = gsl_matrix_const_ptr(Q, i * b + e, k * hd);
        double *p = Pk + i * s, mx = -INFINITY, z = 0.0;
        for (size_t j = 0; j <= i; j++) {
          const double *kk = gsl_matrix_const_ptr(K, j * b + e, k * hd);
          double dot = 0.0;
          for (size_t c = 0; c < hd; c++)
            dot += q[c] * kk[c];
          p[j] = dot * scale;
          if (p[j] > mx)
            mx = p[j];
        }
        for (size_t j = 0; j <= i; j++) {
          p[j] = exp(p[j] - mx);
          z += p[j];
        }
        for (size_t j = 0; j < s; j++)
          p[j] = j <= i ? p[j] / z : 0.0;
        double *o = gsl_matrix_ptr(ctx, i * b + e, k * hd);
        for (size_t c = 0; c < hd; c++)
          o[c] = 0.0;
        for (size_t j = 0; j <= i; j++) {
          const double *v = gsl_matrix_const_ptr(V, j * b + e, k * hd);
          for (size_t c = 0; c < hd; c++)
            o[c] += p[j] * v[c];
        }
      }
    }
}

/* Backward of attn_fwd: dQ, dK, dV (overwritten) from dctx. */
static void attn_bwd(size_t b, size_t s, size_t nh, size_t hd, const gsl_matrix *Q, const gsl_matrix *K,
                     const gsl_matrix *V, const double *P, const gsl_matrix *dctx, gsl_matrix *dQ, gsl_matrix *dK,
                     gsl_matrix *dV)
{
  double scale = 1.0 / sqrt((double)hd);
  double *dS = mem_alloc(s * sizeof(double));
  gsl_matrix_set_zero(dQ);
  gsl_matrix_set_zero(dK);
  gsl_matrix_set_zero(dV);
  for (size_t e = 0; e < b; e++)
    for (size_t k = 0; k < nh; k++) {
      const double *Pk = P + (e * nh + k) * s * s;
      for (size_t i = 0; i < s; i++) {
        const double *p = Pk + i * s, *dc = gsl_matrix_const_ptr(dctx, i * b + e, k * hd);
        double sum = 0.0;
        for (size_t j = 0; j <= i; j++) {
          const double *v = gsl_matrix_const_ptr(V, j * b + e, k * hd);
          double *dv = gsl_matrix_ptr(dV, j * b + e, k * hd);
          double dp = 0.0;
          for (size_t c = 0; c < hd; c++) {
            dp += dc[c] * v[c];
            dv[c] += p[j] * dc[c];
          }
          dS[j] = dp;
          sum += p[j] * dp;
        }
        const double *q = gsl_matrix_const_ptr(Q, i * b + e, k * hd);
        double *dq = gsl_matrix_ptr(dQ, i * b + e, k * hd);
        for (size_t j = 0; j <= i; j++) {
          double ds = p[j] * (dS[j] - sum) * scale;
          const double *kk = gsl_matrix_const_ptr(K, j * b + e, k * hd);
          double *dk = gsl_matrix_ptr(dK, j * b + e, k * hd);
          for (size_t c = 0; c < hd; c++) {
            dq[c] += ds * kk[c];
            dk[c] += ds * q[c];
          }
        }
      }
    }
  free(dS);
}

/* ---- Serial reference ---- */

static _gsl_matrix_const_view cmat(const gsl_vector *w, size_t off, size_t rows, size_t cols)
{
  return gsl_matrix_const_view_array(w->data + off, rows, cols);
}

static gsl_matrix_view mat(gsl_vector *w, size_t off, size_t rows, size_t cols)
{
  return gsl_matrix_view_array(w->data + off, rows, cols);
}

/* y = x W + bias (overwrites y). Plain loops: the reference does not share the ranks' GEMMs. */
static void ref_linear(const gsl_matrix *x, const double *W, const double *bias, gsl_matrix *y)
{
  size_t in = x->size2, out = y->size2;
  for (size_t i = 0; i < x->size1; i++)
    for (size_t o = 0; o < out; o++) {
      double a = bias != NULL ? bias[o] : 0.0;
      for (size_t c = 0; c < in; c++)
        a += gsl_matrix_get(x, i, c) * W[c * out + o];
      gsl_matrix_set(y, i, o, a);
    }
}

/* dx = dy W^T (overwrite or add), dW = x^T dy, db = colsum(dy). */
static void ref_linear_bwd(const gsl_matrix *x, const double *W, const gsl_matrix *dy, gsl_matrix *dx, int add,
                           double *dW, double *db)
{
  size_t in = x->size2, out = dy->size2, n = x->size1;
  for (size_t c = 0; c < in; c++)
    for (size_t o = 0; o < out; o++) {
      double a = 0.0;
      for (size_t i = 0; i < n; i++)
        a += gsl_matrix_get(x, i, c) * gsl_matrix_get(dy, i, o);
      dW[c * out + o] = a;
    }
  for (size_t o = 0; o < out; o++) {
    double a = 0.0;
    for (size_t i = 0; i < n; i++)
      a += gsl_matrix_get(dy, i, o);
    db[o] = a;
  }
  for (size_t i = 0; i < n; i++)
    for (size_t c = 0; c < in; c++) {
      double a = 0.0;
      for (size_t o = 0; o < out; o++)
        a += gsl_matrix_get(dy, i, o) * W[c * out + o];
      gsl_matrix_set(dx, i, c, (add ? gsl_matrix_get(dx, i, c) : 0.0) + a);
    }
}

typedef struct ref_acts {
  gsl_matrix *xh1, *Xn, *Q, *K, *V, *ctx, *Y, *xh2, *Yn, *U, *G;
  double *rstd1, *rstd2, *P;
} ref_acts;

static void ref_acts_free(ref_acts *a)
{
  gsl_matrix *m[] = {a->xh1, a->Xn, a->Q, a->K, a->V, a->ctx, a->Y, a->xh2, a->Yn, a->U, a->G};
  for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
    gsl_matrix_free(m[i]);
  free(a->rstd1);
  free(a->rstd2);
  free(a->P);
}

/* The attention half: Y = X + Attn(LN1(X)) Wo + bo, keeping what its backward needs. p is
 * the layer's parameters (layout above; only the entries before ln2_g are read). */
static void ref_attn_forward(const transformer_dims *d, const double *p, const gsl_matrix *X, ref_acts *a)
{
  size_t n = d->b * d->s, h = d->h;
  transformer_layout l;
  transformer_layout_of(h, &l);
  gsl_matrix **hm[] = {&a->xh1, &a->Xn, &a->Q, &a->K, &a->V, &a->ctx, &a->Y};
  for (size_t i = 0; i < sizeof hm / sizeof hm[0]; i++)
    *hm[i] = mem_matrix(n, h);
  a->rstd1 = mem_alloc(n * sizeof(double));
  a->P = mem_alloc(d->b * d->heads * d->s * d->s * sizeof(double));
  ln_fwd(X, p + l.ln1_g, p + l.ln1_b, a->xh1, a->rstd1, a->Xn);
  ref_linear(a->Xn, p + l.Wq, p + l.bq, a->Q);
  ref_linear(a->Xn, p + l.Wk, p + l.bk, a->K);
  ref_linear(a->Xn, p + l.Wv, p + l.bv, a->V);
  attn_fwd(d->b, d->s, d->heads, h / d->heads, a->Q, a->K, a->V, a->P, a->ctx);
  ref_linear(a->ctx, p + l.Wo, p + l.bo, a->Y);
  gsl_matrix_add(a->Y, X);
}

/* Backward of ref_attn_forward: given dY (the whole gradient at Y), sets the attention's
 * entries of g and dX = dY + the gradient through the attention; dn is n x h scratch. */
static void ref_attn_backward(const transformer_dims *d, const double *p, double *g, const ref_acts *a,
                              const gsl_matrix *dY, gsl_matrix *dn, gsl_matrix *dX)
{
  size_t n = d->b * d->s, h = d->h;
  transformer_layout l;
  transformer_layout_of(h, &l);
  gsl_matrix *dctx = mem_matrix(n, h), *dQ = mem_matrix(n, h), *dK = mem_matrix(n, h), *dV = mem_matrix(n, h);
  memset(g + l.ln1_g, 0, 2 * h * sizeof(double)); /* ln1_g, ln1_b: ln_bwd adds into them */
  ref_linear_bwd(a->ctx, p + l.Wo, dY, dctx, 0, g + l.Wo, g + l.bo);
  attn_bwd(d->b, d->s, d->heads, h / d->heads, a->Q, a->K, a->V, a->P, dctx, dQ, dK, dV);
  ref_linear_bwd(a->Xn, p + l.Wq, dQ, dn, 0, g + l.Wq, g + l.bq);
  ref_linear_bwd(a->Xn, p + l.Wk, dK, dn, 1, g + l.Wk, g + l.bk);
  ref_linear_bwd(a->Xn, p + l.Wv, dV, dn, 1, g + l.Wv, g + l.bv);
  ln_bwd(dn, a->xh1, a->rstd1, p + l.ln1_g, g + l.ln1_g, g + l.ln1_b, dX);
  gsl_matrix_add(dX, dY);
  gsl_matrix *fm[] = {dctx, dQ, dK, dV};
  for (size_t i = 0; i < sizeof fm / sizeof fm[0]; i++)
    gsl_matrix_free(fm[i]);
}

static int ref_forward(const transformer_dims *d, const gsl_vector *w, const gsl_matrix *X, ref_acts *a, gsl_matrix *Z)
{
  size_t n = d->b * d->s, h = d->h;
  transformer_layout l;
  transformer_layout_of(h, &l);
  if (transformer_dims_check(d) != 0 || w->size != l.total || w->stride != 1 || X->size1 != n || X->size2 != h ||
      Z->size1 != n || Z->size2 != h)
    return -1;
  const double *p = w->data;
  ref_attn_forward(d, p, X, a);
  a->xh2 = mem_matrix(n, h);
  a->Yn = mem_matrix(n, h);
  a->U = mem_matrix(n, 4 * h);
  a->G = mem_matrix(n, 4 * h);
  a->rstd2 = mem_alloc(n * sizeof(double));
  ln_fwd(a->Y, p + l.ln2_g, p + l.ln2_b, a->xh2, a->rstd2, a->Yn);
  ref_linear(a->Yn, p + l.W1, p + l.b1, a->U);
  for (size_t i = 0; i < n; i++)
    for (size_t c = 0; c < 4 * h; c++)
      gsl_matrix_set(a->G, i, c, gelu(gsl_matrix_get(a->U, i, c)));
  ref_linear(a->G, p + l.W2, p + l.b2, Z);
  gsl_matrix_add(Z, a->Y);
  return 0;
}

int transformer_layer_forward(const transformer_dims *d, const gsl_vector *w, const gsl_matrix *X, gsl_matrix *Z)
{
  ref_acts a;
  memset(&a, 0, sizeof a);
  int rc = ref_forward(d, w, X, &a, Z);
  ref_acts_free(&a);
  return rc;
}

int transformer_layer_backward(const transformer_dims *d, const gsl_vector *w, const gsl_matrix *X,
                               const gsl_matrix *dZ, gsl_matrix *dX, gsl_vector *grad)
{
  size_t n = d->b * d->s, h = d->h;
  transformer_layout l;
  transformer_layout_of(h, &l);
  if (transformer_dims_check(d) != 0 || dZ->size1 != n || dZ->size2 != h || dX->size1 != n || dX->size2 != h ||
      grad->size != l.total || grad->stride != 1)
    return -1;
  ref_acts a;
  memset(&a, 0, sizeof a);
  gsl_matrix *Z = mem_matrix(n, h);
  int rc = ref_forward(d, w, X, &a, Z);
  gsl_matrix_free(Z);
  if (rc != 0) {
    ref_acts_free(&a);
    return rc;
  }
  const double *p = w->data;
  double *g = grad->data;
  gsl_vector_set_zero(grad);
  gsl_matrix *dU = mem_matrix(n, 4 * h), *dY = mem_matrix(n, h), *dn = mem_matrix(n, h);

  /* MLP: Z = Y + GeLU(Yn W1 + b1) W2 + b2 */
  ref_linear_bwd(a.G, p + l.W2, dZ, dU, 0, g + l.W2, g + l.b2);
  for (size_t i = 0; i < n; i++)
    for (size_t c = 0; c < 4 * h; c++)
      gsl_matrix_set(dU, i, c, gsl_matrix_get(dU, i, c) * gelu_grad(gsl_matrix_get(a.U, i, c)));
  ref_linear_bwd(a.Yn, p + l.W1, dU, dn, 0, g + l.W1, g + l.b1);
  ln_bwd(dn, a.xh2, a.rstd2, p + l.ln2_g, g + l.ln2_g, g + l.ln2_b, dY);
  gsl_matrix_add(dY, dZ);
  /* attention: Y = X + Attn(Xn) Wo + bo */
  ref_attn_backward(d, p, g, &a, dY, dn, dX);

  gsl_matrix_free(dU);
  gsl_matrix_free(dY);
  gsl_matrix_free(dn);
  ref_acts_free(&a);
  return 0;
}

static int attn_shapes_ok(const transformer_dims *d, const gsl_matrix *a, const gsl_matrix *b)
{
  size_t n = d->b * d->s;
  return transformer_dims_check(d) == 0 && a->size1 == n && a->size2 == d->h && b->size1 == n && b->size2 == d->h;
}

int transformer_attn_forward(const transformer_dims *d, const double *w, const gsl_matrix *X, gsl_matrix *Y)
{
  if (!attn_shapes_ok(d, X, Y))
    return -1;
  ref_acts a;
  memset(&a, 0, sizeof a);
  ref_attn_forward(d, w, X, &a);
  gsl_matrix_memcpy(Y, a.Y);
  ref_acts_free(&a);
  return 0;
}

int transformer_attn_backward(const transformer_dims *d, const double *w, const gsl_matrix *X, const gsl_matrix *dY,
                              gsl_matrix *dX, double *grad)
{
  if (!attn_shapes_ok(d, X, dY) || !attn_shapes_ok(d, X, dX))
    return -1;
  ref_acts a;
  memset(&a, 0, sizeof a);
  ref_attn_forward(d, w, X, &a);
  gsl_matrix *dn = mem_matrix(X->size1, d->h);
  ref_attn_backward(d, w, grad, &a, dY, dn, dX);
  gsl_matrix_free(dn);
  ref_acts_free(&a);
  return 0;
}

/* ---- Tensor-parallel rank ---- */

struct transformer_part {
  transformer_dims d;
  size_t t, r, n, row0, rows;
  size_t hl, fl, c0, f0; /* local attention columns [c0, c0+hl), MLP columns [f0, f0+fl) */
  int sp;
  transformer_layout l;
  gsl_matrix *X, *xh1, *Y, *xh2, *dZ, *dY;    /* rows x h */
  gsl_matrix *Xn, *Yn, *red, *dfull;          /* n x h */
  gsl_matrix *Q, *K, *V, *ctx, *dQ, *dK, *dV, *dctx; /* n x hl */
  gsl_matrix *U, *G, *dU;                     /* n x fl */
  double *rstd1, *rstd2, *P;
};

transformer_part *transformer_part_create(const transformer_dims *d, size_t t, size_t r, int seqpar)
{
  if (transformer_dims_check(d) != 0 || t == 0 || r >= t || d->heads % t != 0 || (seqpar && d->s % t != 0))
    return NULL;
  transformer_part *p = mem_calloc(1, sizeof *p);
  p->d = *d;
  p->t = t;
  p->r = r;
  p->sp = seqpar != 0;
  p->n = d->b * d->s;
  p->rows = p->sp ? p->n / t : p->n;
  p->row0 = p->sp ? r * p->rows : 0;
  p->hl = d->h / t;
  p->fl = 4 * d->h / t;
  p->c0 = r * p->hl;
  p->f0 = r * p->fl;
  transformer_layout_of(d->h, &p->l);
  gsl_matrix **loc[] = {&p->X, &p->xh1, &p->Y, &p->xh2, &p->dZ, &p->dY};
  for (size_t i = 0; i < sizeof loc / sizeof loc[0]; i++)
    *loc[i] = mem_matrix(p->rows, d->h);
  gsl_matrix **full[] = {&p->Xn, &p->Yn, &p->red, &p->dfull};
  for (size_t i = 0; i < sizeof full / sizeof full[0]; i++)
    {
    *full[i] = mem_matrix(p->n, d->h);
    gsl_matrix_set_zero(*full[i]);
  }
  gsl_matrix **att[] = {&p->Q, &p->K, &p->V, &p->ctx, &p->dQ, &p->dK, &p->dV, &p->dctx};
  for (size_t i = 0; i < sizeof att / sizeof att[0]; i++)
    *att[i] = mem_matrix(p->n, p->hl);
  p->U = mem_matrix(p->n, p->fl);
  p->G = mem_matrix(p->n, p->fl);
  p->dU = mem_matrix(p->n, p->fl);
  p->rstd1 = mem_alloc(p->rows * sizeof(double));
  p->rstd2 = mem_alloc(p->rows * sizeof(double));
  p->P = mem_alloc(d->b * (d->heads / t) * d->s * d->s * sizeof(double));
  return p;
}

void transformer_part_free(transformer_part *p)
{
  if (p == NULL)
    return;
  gsl_matrix *m[] = {p->X, p->xh1, p->Y, p->xh2, p->dZ, p->dY, p->Xn, p->Yn, p->red, p->dfull, p->Q, p->K,
                     p->V, p->ctx, p->dQ, p->dK, p->dV, p->dctx, p->U, p->G, p->dU};
  for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
    gsl_matrix_free(m[i]);
  free(p->rstd1);
  free(p->rstd2);
  free(p->P);
  free(p);
}

double *transformer_part_buf(transformer_part *p, transformer_buf which)
{
  switch (which) {
  case TRANSFORMER_XN: return p->Xn->data;
  case TRANSFORMER_YN: return p->Yn->data;
  case TRANSFORMER_RED: return p->red->data;
  case TRANSFORMER_DFULL: return p->dfull->data;
  }
  mem_die("transformer_part_buf", "no such buffer");
}

void transformer_part_rows(const transformer_part *p, size_t *row0, size_t *rows)
{
  *row0 = p->row0;
  *rows = p->rows;
}

/* Rows [row0, row0+rows) of an n x h buffer. */
static gsl_matrix_view local_rows(const transformer_part *p, gsl_matrix *m)
{
  return gsl_matrix_submatrix(m, p->row0, 0, p->rows, m->size2);
}

static void check_local(const transformer_part *p, const gsl_matrix *m)
{
  if (m->size1 != p->rows || m->size2 != p->d.h)
    mem_die("transformer", "a local matrix must be transformer_part_rows x h");
}

/* y = x W[:, cols] + b[cols] with W (in x out) at off in w: a column-parallel GEMM. */
static void col_linear(const gsl_vector *w, size_t off, size_t out, size_t col0, const double *bias,
                       const gsl_matrix *x, gsl_matrix *y)
{
  gsl_matrix_const_view W = cmat(w, off, x->size2, out);
  gsl_matrix_const_view Wc = gsl_matrix_const_submatrix(&W.matrix, 0, col0, x->size2, y->size2);
  for (size_t i = 0; i < y->size1; i++)
    memcpy(gsl_matrix_ptr(y, i, 0), bias + col0, y->size2 * sizeof(double));
  gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, x, &Wc.matrix, 1.0, y);
}

static void add_bias_rows(gsl_matrix *y, const double *bias)
{
  for (size_t i = 0; i < y->size1; i++)
    for (size_t c = 0; c < y->size2; c++)
      *gsl_matrix_ptr(y, i, c) += bias[c];
}

static void colsum_into(const gsl_matrix *m, double *out)
{
  for (size_t i = 0; i < m->size1; i++)
    for (size_t c = 0; c < m->size2; c++)
      out[c] += gsl_matrix_get(m, i, c);
}

void transformer_fwd_ln1(transformer_part *p, const gsl_vector *w, const gsl_matrix *X_local)
{
  check_local(p, X_local);
  gsl_matrix_memcpy(p->X, X_local);
  gsl_matrix_view xn = local_rows(p, p->Xn);
  ln_fwd(p->X, w->data + p->l.ln1_g, w->data + p->l.ln1_b, p->xh1, p->rstd1, &xn.matrix);
}

void transformer_fwd_attn(transformer_part *p, const gsl_vector *w)
{
  size_t h = p->d.h;
  col_linear(w, p->l.Wq, h, p->c0, w->data + p->l.bq, p->Xn, p->Q);
  col_linear(w, p->l.Wk, h, p->c0, w->data + p->l.bk, p->Xn, p->K);
  col_linear(w, p->l.Wv, h, p->c0, w->data + p->l.bv, p->Xn, p->V);
  attn_fwd(p->d.b, p->d.s, p->d.heads / p->t, h / p->d.heads, p->Q, p->K, p->V, p->P, p->ctx);
  /* row-parallel output projection: rows [c0, c0+hl) of Wo, no bias (added after g) */
  gsl_matrix_const_view Wo = cmat(w, p->l.Wo, h, h);
  gsl_matrix_const_view Wr = gsl_matrix_const_submatrix(&Wo.matrix, p->c0, 0, p->hl, h);
  gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, p->ctx, &Wr.matrix, 0.0, p->red);
}

void transformer_fwd_ln2(transformer_part *p, const gsl_vector *w)
{
  gsl_matrix_view a = local_rows(p, p->red);
  gsl_matrix_memcpy(p->Y, &a.matrix);
  add_bias_rows(p->Y, w->data + p->l.bo);
  gsl_matrix_add(p->Y, p->X);
  gsl_matrix_view yn = local_rows(p, p->Yn);
  ln_fwd(p->Y, w->data + p->l.ln2_g, w->data + p->l.ln2_b, p->xh2, p->rstd2, &yn.matrix);
}

void transformer_fwd_mlp(transformer_part *p, const gsl_vector *w)
{
  size_t h = p->d.h;
  col_linear(w, p->l.W1, 4 * h, p->f0, w->data + p->l.b1, p->Yn, p->U);
  for (size_t i = 0; i < p->n; i++)
    for (size_t c = 0; c < p->fl; c++)
      gsl_matrix_set(p->G, i, c, gelu(gsl_matrix_get(p->U, i, c)));
  gsl_matrix_const_view W2 = cmat(w, p->l.W2, 4 * h, h);
  gsl_matrix_const_view Wr = gsl_matrix_const_submatrix(&W2.matrix, p->f0, 0, p->fl, h);
  gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, p->G, &Wr.matrix, 0.0, p->red);
}

void transformer_fwd_out(transformer_part *p, const gsl_vector *w, gsl_matrix *Z_local)
{
  check_local(p, Z_local);
  gsl_matrix_view m = local_rows(p, p->red);
  gsl_matrix_memcpy(Z_local, &m.matrix);
  add_bias_rows(Z_local, w->data + p->l.b2);
  gsl_matrix_add(Z_local, p->Y);
}

void transformer_bwd_out(transformer_part *p, const gsl_matrix *dZ_local, gsl_vector *grad)
{
  check_local(p, dZ_local);
  gsl_matrix_memcpy(p->dZ, dZ_local);
  colsum_into(p->dZ, grad->data + p->l.b2);
  gsl_matrix_view df = local_rows(p, p->dfull);
  gsl_matrix_memcpy(&df.matrix, p->dZ);
}

/* Column-parallel backward's weight gradient: dW[:, cols] = x^T dy, db[cols] = colsum(dy). */
static void col_wgrad(const gsl_matrix *x, const gsl_matrix *dy, gsl_vector *grad, size_t off, size_t out,
                      size_t col0, size_t boff)
{
  gsl_matrix_view dW = mat(grad, off, x->size2, out);
  gsl_matrix_view dWc = gsl_matrix_submatrix(&dW.matrix, 0, col0, x->size2, dy->size2);
  gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, x, dy, 0.0, &dWc.matrix);
  colsum_into(dy, grad->data + boff + col0);
}

void transformer_bwd_mlp(transformer_part *p, const gsl_vector *w, gsl_vector *grad)
{
  size_t h = p->d.h;
  /* row-parallel W2: dW2[rows] = G^T dM, dG = dM W2[rows]^T */
  gsl_matrix_const_view W2 = cmat(w, p->l.W2, 4 * h, h);
  gsl_matrix_const_view Wr = gsl_matrix_const_submatrix(&W2.matrix, p->f0, 0, p->fl, h);
  gsl_matrix_view dW2 = mat(grad, p->l.W2, 4 * h, h);
  gsl_matrix_view dWr = gsl_matrix_submatrix(&dW2.matrix, p->f0, 0, p->fl, h);
  gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, p->G, p->dfull, 0.0, &dWr.matrix);
  gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, p->dfull, &Wr.matrix, 0.0, p->dU);
  for (size_t i = 0; i < p->n; i++)
    for (size_t c = 0; c < p->fl; c++)
      *gsl_matrix_ptr(p->dU, i, c) *= gelu_grad(gsl_matrix_get(p->U, i, c));
  /* column-parallel W1: partial dYn = dU W1[:, cols]^T (f' sums it), then the weight grad */
  gsl_matrix_const_view W1 = cmat(w, p->l.W1, h, 4 * h);
  gsl_matrix_const_view Wc = gsl_matrix_const_submatrix(&W1.matrix, 0, p->f0, h, p->fl);
  gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, p->dU, &Wc.matrix, 0.0, p->red);
  col_wgrad(p->Yn, p->dU, grad, p->l.W1, 4 * h, p->f0, p->l.b1);
}

void transformer_bwd_ln2(transformer_part *p, const gsl_vector *w, gsl_vector *grad)
{
  gsl_matrix_view dn = local_rows(p, p->red);
  ln_bwd(&dn.matrix, p->xh2, p->rstd2, w->data + p->l.ln2_g, grad->data + p->l.ln2_g, grad->data + p->l.ln2_b,
         p->dY);
  gsl_matrix_add(p->dY, p->dZ);
  colsum_into(p->dY, grad->data + p->l.bo);
  gsl_matrix_view df = local_rows(p, p->dfull);
  gsl_matrix_memcpy(&df.matrix, p->dY);
}

void transformer_bwd_attn(transformer_part *p, const gsl_vector *w, gsl_vector *grad)
{
  size_t h = p->d.h;
  gsl_matrix_const_view Wo = cmat(w, p->l.Wo, h, h);
  gsl_matrix_const_view Wr = gsl_matrix_const_submatrix(&Wo.matrix, p->c0, 0, p->hl, h);
  gsl_matrix_view dWo = mat(grad, p->l.Wo, h, h);
  gsl_matrix_view dWr = gsl_matrix_submatrix(&dWo.matrix, p->c0, 0, p->hl, h);
  gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, p->ctx, p->dfull, 0.0, &dWr.matrix);
  gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, p->dfull, &Wr.matrix, 0.0, p->dctx);
  attn_bwd(p->d.b, p->d.s, p->d.heads / p->t, h / p->d.heads, p->Q, p->K, p->V, p->P, p->dctx, p->dQ, p->dK,
           p->dV);
  const gsl_matrix *dqkv[] = {p->dQ, p->dK, p->dV};
  size_t woff[] = {p->l.Wq, p->l.Wk, p->l.Wv}, boff[] = {p->l.bq, p->l.bk, p->l.bv};
  for (size_t k = 0; k < 3; k++) {
    gsl_matrix_const_view W = cmat(w, woff[k], h, h);
    gsl_matrix_const_view Wc = gsl_matrix_const_submatrix(&W.matrix, 0, p->c0, h, p->hl);
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, dqkv[k], &Wc.matrix, k == 0 ? 0.0 : 1.0, p->red);
  }
  for (size_t k = 0; k < 3; k++)
    col_wgrad(p->Xn, dqkv[k], grad, woff[k], h, p->c0, boff[k]);
}

void transformer_bwd_ln1(transformer_part *p, const gsl_vector *w, gsl_vector *grad, gsl_matrix *dX_local)
{
  check_local(p, dX_local);
  gsl_matrix_view dn = local_rows(p, p->red);
  ln_bwd(&dn.matrix, p->xh1, p->rstd1, w->data + p->l.ln1_g, grad->data + p->l.ln1_g, grad->data + p->l.ln1_b,
         dX_local);
  gsl_matrix_add(dX_local, p->dY);
}

void transformer_grad_combine(size_t h, size_t t, int seqpar, const gsl_vector *const *parts, gsl_vector *out)
{
  transformer_layout l;
  transformer_layout_of(h, &l);
  if (out->size != l.total || t == 0 || h % t != 0)
    mem_die("transformer_grad_combine", "shapes do not fit");
  /* replicated blocks: [ln1_g, ln1_b], bo, [ln2_g, ln2_b], b2 */
  size_t rep[][2] = {{l.ln1_g, 2 * h}, {l.bo, h}, {l.ln2_g, 2 * h}, {l.b2, h}};
  gsl_vector_set_zero(out);
  for (size_t r = 0; r < t; r++)
    for (size_t i = 0; i < l.total; i++)
      out->data[i] += gsl_vector_get(parts[r], i);
  if (seqpar)
    return;
  for (size_t k = 0; k < sizeof rep / sizeof rep[0]; k++)
    for (size_t i = rep[k][0]; i < rep[k][0] + rep[k][1]; i++)
      out->data[i] = gsl_vector_get(parts[0], i);
}

void transformer_ln_forward(const gsl_matrix *x, const double *g, const double *b, gsl_matrix *xhat, double *rstd,
                            gsl_matrix *y)
{
  ln_fwd(x, g, b, xhat, rstd, y);
}

void transformer_ln_backward(const gsl_matrix *dy, const gsl_matrix *xhat, const double *rstd, const double *g,
                             double *dg, double *db, gsl_matrix *dx)
{
  ln_bwd(dy, xhat, rstd, g, dg, db, dx);
}

int transformer_gather_columns(size_t t, const gsl_matrix *const *parts, gsl_matrix *out)
{
  if (t == 0 || out->size2 % t != 0)
    return -1;
  size_t w = out->size2 / t;
  for (size_t r = 0; r < t; r++) {
    if (parts[r]->size1 != out->size1 || parts[r]->size2 != w)
      return -1;
    gsl_matrix_view o = gsl_matrix_submatrix(out, 0, r * w, out->size1, w);
    gsl_matrix_memcpy(&o.matrix, parts[r]);
  }
  return 0;
}

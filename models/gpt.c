/* gpt.c - a small GPT: embeddings, transformer.h's layers, final LayerNorm, tied logits and
 * the next-token cross-entropy; the serial reference, the evaluation, and the
 * vocabulary-parallel pieces of one tensor rank.
 *
 * The reference writes its GEMMs as plain loops, as transformer.c's reference does; the
 * evaluation and the vocabulary-parallel head use BLAS. */
#include "models/gpt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_randist.h>

#include "models/mem.h"
#include "models/transformer.h"

#define GPT_INIT_STD 0.02

int gpt_dims_check(const gpt_dims *d)
{
  if (d == NULL || d->vocab < 2 || d->seq == 0 || d->hidden == 0 || d->heads == 0 || d->layers == 0 ||
      d->hidden % d->heads != 0 || (d->moe.experts != 0 && moe_config_check(&d->moe) != 0))
    return -1;
  return 0;
}

void gpt_layout_of(const gpt_dims *d, gpt_layout *l)
{
  size_t h = d->hidden;
  l->embed = 0;
  l->pos = d->vocab * h;
  l->layer0 = l->pos + d->seq * h;
  l->layer_size = d->moe.experts ? moe_layer_n_params(h, d->moe.experts) : transformer_n_params(h);
  l->lnf_g = l->layer0 + d->layers * l->layer_size;
  l->lnf_b = l->lnf_g + h;
  l->total = l->lnf_b + h;
}

size_t gpt_n_params(const gpt_dims *d)
{
  gpt_layout l;
  gpt_layout_of(d, &l);
  return l.total;
}

void gpt_init_params(const gpt_dims *d, gsl_rng *r, gsl_vector *w)
{
  gpt_layout l;
  gpt_layout_of(d, &l);
  if (w->size != l.total || w->stride != 1)
    mem_die("gpt_init_params", "w must hold gpt_n_params contiguous entries");
  for (size_t i = l.embed; i < l.layer0; i++)
    w->data[i] = gsl_ran_gaussian(r, GPT_INIT_STD);
  for (size_t k = 0; k < d->layers; k++) {
    gsl_vector_view v = gsl_vector_subvector(w, l.layer0 + k * l.layer_size, l.layer_size);
    if (d->moe.experts)
      moe_layer_init_params(d->hidden, d->moe.experts, r, v.vector.data);
    else
      transformer_init_params(d->hidden, r, &v.vector);
  }
  for (size_t c = 0; c < d->hidden; c++) {
    w->data[l.lnf_g + c] = 1.0;
    w->data[l.lnf_b + c] = 0.0;
  }
}

/* Token k of sequence i. */
static size_t token(const gpt_dims *d, const double *seqs, size_t i, size_t k)
{
  return (size_t)seqs[i * (d->seq + 1) + k];
}

static int tokens_ok(const gpt_dims *d, size_t b, const double *seqs)
{
  for (size_t i = 0; i < b * (d->seq + 1); i++)
    if (!(seqs[i] >= 0 && seqs[i] < (double)d->vocab && seqs[i] == floor(seqs[i])))
      return 0;
  return 1;
}

/* ---- serial reference ---- */

/* Layer k forward (X[k] -> X[k+1]); adds a mixture's auxiliary loss into *aux and hands out its
 * routing into *route when route is not NULL. */
static void layer_forward(const gpt_dims *d, const transformer_dims *td, const gsl_vector *w, const gpt_layout *l,
                          size_t k, gsl_matrix **X, double *aux, moe_routing **route)
{
  gsl_vector_const_view wk = gsl_vector_const_subvector(w, l->layer0 + k * l->layer_size, l->layer_size);
  if (d->moe.experts == 0) {
    if (transformer_layer_forward(td, &wk.vector, X[k], X[k + 1]) != 0)
      mem_die("gpt_loss_grad", "layer shapes");
    return;
  }
  moe_routing *r = NULL;
  if (moe_layer_forward(td, &d->moe, wk.vector.data, X[k], X[k + 1], &r) != 0)
    mem_die("gpt_loss_grad", "layer shapes");
  *aux += r->aux;
  if (route)
    *route = r;
  else
    moe_routing_free(r);
}

static void layer_backward(const gpt_dims *d, const transformer_dims *td, const gsl_vector *w, gsl_vector *grad,
                           const gpt_layout *l, size_t k, const gsl_matrix *X, const gsl_matrix *dZ, gsl_matrix *dX)
{
  gsl_vector_const_view wk = gsl_vector_const_subvector(w, l->layer0 + k * l->layer_size, l->layer_size);
  gsl_vector_view gk = gsl_vector_subvector(grad, l->layer0 + k * l->layer_size, l->layer_size);
  int rc = d->moe.experts ? moe_layer_backward(td, &d->moe, wk.vector.data, X, dZ, dX, gk.vector.data)
                          : transformer_layer_backward(td, &wk.vector, X, dZ, dX, &gk.vector);
  if (rc != 0)
    mem_die("gpt_loss_grad", "layer shapes");
}

int gpt_loss_grad(const gpt_dims *d, const gsl_vector *w, size_t b, const double *seqs, double *loss,
                  gsl_vector *grad)
{
  return gpt_loss_grad_routed(d, w, b, seqs, loss, grad, NULL);
}

/* X0 = the rows' token embeddings plus their positions' (row k b + i: sequence i,
 * position k). */
static void embed_forward(const gpt_dims *d, const gpt_layout *l, const double *p, size_t b, const double *seqs,
                          gsl_matrix *X0)
{
  size_t h = d->hidden;
  for (size_t k = 0; k < d->seq; k++)
    for (size_t i = 0; i < b; i++)
      for (size_t c = 0; c < h; c++)
        gsl_matrix_set(X0, k * b + i, c, p[l->embed + token(d, seqs, i, k) * h + c] + p[l->pos + k * h + c]);
}

/* The tied logits Xf E^T into P, each row turned into its softmax (the largest logit as
 * the shift); returns the sum of the rows' cross-entropies against the next tokens. */
static double logits_softmax(const gpt_dims *d, const gpt_layout *l, const double *p, size_t b, const double *seqs,
                             const gsl_matrix *Xf, gsl_matrix *P)
{
  size_t h = d->hidden, V = d->vocab, n = d->seq * b;
  double sum = 0.0;
  for (size_t row = 0; row < n; row++) {
    double *pr = gsl_matrix_ptr(P, row, 0), mx = -INFINITY, z = 0.0;
    for (size_t v = 0; v < V; v++) {
      double a = 0.0;
      for (size_t c = 0; c < h; c++)
        a += gsl_matrix_get(Xf, row, c) * p[l->embed + v * h + c];
      pr[v] = a;
      mx = a > mx ? a : mx;
    }
    for (size_t v = 0; v < V; v++)
      z += exp(pr[v] - mx);
    size_t tgt = token(d, seqs, row % b, row / b + 1);
    sum += log(z) - (pr[tgt] - mx);
    for (size_t v = 0; v < V; v++)
      pr[v] = exp(pr[v] - mx) / z;
  }
  return sum;
}

/* Backward through the tied logits: P (the softmax) becomes dlogits = (softmax -
 * onehot) / n in place, dlogits^T Xf is added to the embedding's gradient in g, and
 * dXf = dlogits E. */
static void logits_backward(const gpt_dims *d, const gpt_layout *l, const double *p, size_t b, const double *seqs,
                            const gsl_matrix *Xf, gsl_matrix *P, double *g, gsl_matrix *dXf)
{
  size_t h = d->hidden, V = d->vocab, n = d->seq * b;
  for (size_t row = 0; row < n; row++) {
    size_t tgt = token(d, seqs, row % b, row / b + 1);
    for (size_t v = 0; v < V; v++)
      gsl_matrix_set(P, row, v, (gsl_matrix_get(P, row, v) - (v == tgt ? 1.0 : 0.0)) / (double)n);
  }
  for (size_t v = 0; v < V; v++)
    for (size_t c = 0; c < h; c++) {
      double a = 0.0;
      for (size_t row = 0; row < n; row++)
        a += gsl_matrix_get(P, row, v) * gsl_matrix_get(Xf, row, c);
      g[l->embed + v * h + c] += a;
    }
  for (size_t row = 0; row < n; row++)
    for (size_t c = 0; c < h; c++) {
      double a = 0.0;
      for (size_t v = 0; v < V; v++)
        a += gsl_matrix_get(P, row, v) * p[l->embed + v * h + c];
      gsl_matrix_set(dXf, row, c, a);
    }
}

/* The first layer's input gradient dX0 added to the token and position embeddings'
 * gradients in g. */
static void embed_backward(const gpt_dims *d, const gpt_layout *l, size_t b, const double *seqs,
                           const gsl_matrix *dX0, double *g)
{
  size_t h = d->hidden, n = d->seq * b;
  for (size_t row = 0; row < n; row++) {
    size_t tok = token(d, seqs, row % b, row / b), pos = row / b;
    for (size_t c = 0; c < h; c++) {
      g[l->embed + tok * h + c] += gsl_matrix_get(dX0, row, c);
      g[l->pos + pos * h + c] += gsl_matrix_get(dX0, row, c);
    }
  }
}

int gpt_loss_grad_routed(const gpt_dims *d, const gsl_vector *w, size_t b, const double *seqs, double *loss,
                         gsl_vector *grad, moe_routing **routes)
{
  gpt_layout l;
  gpt_layout_of(d, &l);
  if (gpt_dims_check(d) != 0 || b == 0 || w->size != l.total || w->stride != 1 ||
      (grad && (grad->size != l.total || grad->stride != 1)) || !tokens_ok(d, b, seqs) ||
      (d->moe.experts && d->moe.groups > 1 && b % d->moe.groups != 0))
    return -1;
  size_t s = d->seq, h = d->hidden, V = d->vocab, L = d->layers, n = s * b;
  const double *p = w->data;
  transformer_dims td = {b, s, h, d->heads};
  gsl_matrix **X = mem_alloc((L + 1) * sizeof(gsl_matrix *));
  for (size_t k = 0; k <= L; k++)
    X[k] = mem_matrix(n, h);
  embed_forward(d, &l, p, b, seqs, X[0]);
  double aux = 0.0;
  for (size_t k = 0; k < L; k++)
    layer_forward(d, &td, w, &l, k, X, &aux, routes && d->moe.experts ? &routes[k] : NULL);
  gsl_matrix *xhat = mem_matrix(n, h), *Xf = mem_matrix(n, h), *P = mem_matrix(n, V);
  double *rstd = mem_alloc(n * sizeof(double));
  transformer_ln_forward(X[L], p + l.lnf_g, p + l.lnf_b, xhat, rstd, Xf);
  *loss = logits_softmax(d, &l, p, b, seqs, Xf, P) / (double)n + aux;
  if (grad) {
    gsl_vector_set_zero(grad);
    gsl_matrix *dXf = mem_matrix(n, h), *dZ = mem_matrix(n, h), *dX = mem_matrix(n, h);
    logits_backward(d, &l, p, b, seqs, Xf, P, grad->data, dXf);
    transformer_ln_backward(dXf, xhat, rstd, p + l.lnf_g, grad->data + l.lnf_g, grad->data + l.lnf_b, dZ);
    for (size_t k = L; k-- > 0;) {
      layer_backward(d, &td, w, grad, &l, k, X[k], dZ, dX);
      gsl_matrix_memcpy(dZ, dX);
    }
    embed_backward(d, &l, b, seqs, dZ, grad->data);
    gsl_matrix_free(dXf);
    gsl_matrix_free(dZ);
    gsl_matrix_free(dX);
  }
  for (size_t k = 0; k <= L; k++)
    gsl_matrix_free(X[k]);
  free(X);
  gsl_matrix_free(xhat);
  gsl_matrix_free(Xf);
  gsl_matrix_free(P);
  free(rstd);
  return 0;
}

/* ---- the vocabulary-parallel pieces ---- */

void gpt_embed_lookup(const gpt_dims *d, size_t t, size_t r, const double *E_r, size_t b, const double *seqs,
                      gsl_matrix *x)
{
  size_t h = d->hidden, vl = d->vocab / t, v0 = r * vl;
  if (x->size1 != d->seq * b || x->size2 != h)
    mem_die("gpt_embed_lookup", "x must be (seq x b) x hidden");
  for (size_t k = 0; k < d->seq; k++)
    for (size_t i = 0; i < b; i++) {
      size_t tok = token(d, seqs, i, k);
      double *row = gsl_matrix_ptr(x, k * b + i, 0);
      if (tok >= v0 && tok < v0 + vl)
        memcpy(row, E_r + (tok - v0) * h, h * sizeof(double));
      else
        memset(row, 0, h * sizeof(double));
    }
}

void gpt_embed_positions(const gpt_dims *d, const double *P, size_t b, size_t row0, gsl_matrix *x)
{
  size_t h = d->hidden;
  for (size_t i = 0; i < x->size1; i++) {
    const double *pk = P + ((row0 + i) / b) * h;
    double *row = gsl_matrix_ptr(x, i, 0);
    for (size_t c = 0; c < h; c++)
      row[c] += pk[c];
  }
}

void gpt_embed_backward(const gpt_dims *d, size_t t, size_t r, size_t b, const double *seqs, const gsl_matrix *dx,
                        double *dE_r, double *dP)
{
  size_t h = d->hidden, vl = d->vocab / t, v0 = r * vl;
  for (size_t row = 0; row < dx->size1; row++) {
    size_t tok = token(d, seqs, row % b, row / b);
    const double *g = gsl_matrix_const_ptr(dx, row, 0);
    if (tok >= v0 && tok < v0 + vl)
      for (size_t c = 0; c < h; c++)
        dE_r[(tok - v0) * h + c] += g[c];
    if (dP)
      for (size_t c = 0; c < h; c++)
        dP[(row / b) * h + c] += g[c];
  }
}

struct gpt_head {
  gpt_dims d;
  size_t t, r, b, n, row0, rows, vl, v0;
  gsl_matrix *x, *dx;    /* n x h */
  gsl_matrix *xhat;      /* rows x h */
  double *rstd;          /* rows */
  gsl_matrix *logits;    /* n x vl */
  double *red, *shift, *tgt, *sum; /* n */
  size_t *target;        /* n */
};

gpt_head *gpt_head_create(const gpt_dims *d, size_t t, size_t r, size_t b, size_t row0, size_t rows)
{
  size_t n = d->seq * b;
  if (gpt_dims_check(d) != 0 || t == 0 || r >= t || d->vocab % t != 0 || b == 0 || rows == 0 || row0 + rows > n)
    return NULL;
  gpt_head *hd = mem_calloc(1, sizeof(*hd));
  hd->d = *d;
  hd->t = t;
  hd->r = r;
  hd->b = b;
  hd->n = n;
  hd->row0 = row0;
  hd->rows = rows;
  hd->vl = d->vocab / t;
  hd->v0 = r * hd->vl;
  hd->x = mem_matrix(n, d->hidden);
  hd->dx = mem_matrix(n, d->hidden);
  gsl_matrix_set_zero(hd->x);
  gsl_matrix_set_zero(hd->dx);
  hd->xhat = mem_matrix(rows, d->hidden);
  hd->rstd = mem_alloc(rows * sizeof(double));
  hd->logits = mem_matrix(n, hd->vl);
  double **v[] = {&hd->red, &hd->shift, &hd->tgt, &hd->sum};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    *v[i] = mem_calloc(n, sizeof(double));
  hd->target = mem_calloc(n, sizeof(size_t));
  return hd;
}

void gpt_head_free(gpt_head *hd)
{
  if (hd == NULL)
    return;
  gsl_matrix_free(hd->x);
  gsl_matrix_free(hd->dx);
  gsl_matrix_free(hd->xhat);
  gsl_matrix_free(hd->logits);
  free(hd->rstd);
  free(hd->red);
  free(hd->shift);
  free(hd->tgt);
  free(hd->sum);
  free(hd->target);
  free(hd);
}

double *gpt_head_x(gpt_head *hd) { return hd->x->data; }
double *gpt_head_dx(gpt_head *hd) { return hd->dx->data; }
double *gpt_head_red(gpt_head *hd) { return hd->red; }

void gpt_head_norm(gpt_head *hd, const double *g, const double *b, const gsl_matrix *z)
{
  if (z->size1 != hd->rows || z->size2 != hd->d.hidden)
    mem_die("gpt_head_norm", "z must be the rank's rows x hidden");
  gsl_matrix_view y = gsl_matrix_submatrix(hd->x, hd->row0, 0, hd->rows, hd->d.hidden);
  transformer_ln_forward(z, g, b, hd->xhat, hd->rstd, &y.matrix);
}

void gpt_head_logits(gpt_head *hd, const double *E_r)
{
  gsl_matrix_const_view E = gsl_matrix_const_view_array(E_r, hd->vl, hd->d.hidden);
  gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, hd->x, &E.matrix, 0.0, hd->logits);
  for (size_t i = 0; i < hd->n; i++) {
    const double *li = gsl_matrix_const_ptr(hd->logits, i, 0);
    double mx = li[0];
    for (size_t v = 1; v < hd->vl; v++)
      mx = li[v] > mx ? li[v] : mx;
    hd->red[i] = mx;
  }
}

void gpt_head_targets(gpt_head *hd, const double *seqs)
{
  for (size_t i = 0; i < hd->n; i++) {
    hd->shift[i] = hd->red[i] / (double)hd->t;
    hd->target[i] = token(&hd->d, seqs, i % hd->b, i / hd->b + 1);
    size_t tg = hd->target[i];
    hd->red[i] = tg >= hd->v0 && tg < hd->v0 + hd->vl ? gsl_matrix_get(hd->logits, i, tg - hd->v0) - hd->shift[i] : 0.0;
  }
}

void gpt_head_sumexp(gpt_head *hd)
{
  for (size_t i = 0; i < hd->n; i++) {
    const double *li = gsl_matrix_const_ptr(hd->logits, i, 0);
    double z = 0.0;
    hd->tgt[i] = hd->red[i];
    for (size_t v = 0; v < hd->vl; v++)
      z += exp(li[v] - hd->shift[i]);
    hd->red[i] = z;
  }
}

double gpt_head_loss(gpt_head *hd)
{
  double s = 0.0;
  for (size_t i = 0; i < hd->n; i++) {
    hd->sum[i] = hd->red[i];
    s += log(hd->sum[i]) - hd->tgt[i];
  }
  return s / (double)hd->n;
}

void gpt_head_backward(gpt_head *hd, const double *E_r, double *dE_r)
{
  size_t h = hd->d.hidden;
  gsl_matrix *dl = mem_matrix(hd->n, hd->vl);
  for (size_t i = 0; i < hd->n; i++)
    for (size_t v = 0; v < hd->vl; v++) {
      double pv = exp(gsl_matrix_get(hd->logits, i, v) - hd->shift[i]) / hd->sum[i];
      gsl_matrix_set(dl, i, v, (pv - (hd->v0 + v == hd->target[i] ? 1.0 : 0.0)) / (double)hd->n);
    }
  gsl_matrix_view dE = gsl_matrix_view_array(dE_r, hd->vl, h);
  gsl_matrix_const_view E = gsl_matrix_const_view_array(E_r, hd->vl, h);
  gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, dl, hd->x, 1.0, &dE.matrix);
  gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, dl, &E.matrix, 0.0, hd->dx);
  gsl_matrix_free(dl);
}

void gpt_head_norm_backward(gpt_head *hd, const double *g, double *dg, double *db, gsl_matrix *dz)
{
  if (dz->size1 != hd->rows || dz->size2 != hd->d.hidden)
    mem_die("gpt_head_norm_backward", "dz must be the rank's rows x hidden");
  gsl_matrix_view dy = gsl_matrix_submatrix(hd->dx, hd->row0, 0, hd->rows, hd->d.hidden);
  transformer_ln_backward(&dy.matrix, hd->xhat, hd->rstd, g, dg, db, dz);
}

/* ---- evaluation ---- */

int gpt_evaluate(const gpt_dims *d, const gsl_vector *w, size_t n, const double *seqs, double *loss,
                 double *accuracy)
{
  gpt_layout l;
  gpt_layout_of(d, &l);
  if (gpt_dims_check(d) != 0 || n == 0 || w->size != l.total || w->stride != 1 || !tokens_ok(d, n, seqs))
    return -1;
  size_t s = d->seq, h = d->hidden, L = d->layers;
  transformer_dims td = {1, s, h, d->heads};
  transformer_part **parts = mem_calloc(L, sizeof(transformer_part *));
  moe_config one = d->moe; /* a held-out sequence is routed alone */
  one.groups = 1;
  for (size_t k = 0; k < L && d->moe.experts == 0; k++)
    parts[k] = transformer_part_create(&td, 1, 0, 0);
  gpt_head *hd = gpt_head_create(d, 1, 0, 1, 0, s);
  gsl_matrix *x = mem_matrix(s, h), *z = mem_matrix(s, h);
  double sum = 0.0;
  size_t right = 0;
  for (size_t i = 0; i < n; i++) {
    const double *q = seqs + i * (s + 1);
    gpt_embed_lookup(d, 1, 0, w->data + l.embed, 1, q, x);
    gpt_embed_positions(d, w->data + l.pos, 1, 0, x);
    for (size_t k = 0; k < L; k++) { /* one rank: the partial results are the sums */
      gsl_vector_const_view wk = gsl_vector_const_subvector(w, l.layer0 + k * l.layer_size, l.layer_size);
      if (d->moe.experts) {
        if (moe_layer_forward(&td, &one, wk.vector.data, x, z, NULL) != 0)
          mem_die("gpt_evaluate", "layer shapes");
        gsl_matrix_memcpy(x, z);
        continue;
      }
      transformer_fwd_ln1(parts[k], &wk.vector, x);
      transformer_fwd_attn(parts[k], &wk.vector);
      transformer_fwd_ln2(parts[k], &wk.vector);
      transformer_fwd_mlp(parts[k], &wk.vector);
      transformer_fwd_out(parts[k], &wk.vector, z);
      gsl_matrix_memcpy(x, z);
    }
    gpt_head_norm(hd, w->data + l.lnf_g, w->data + l.lnf_b, x);
    gpt_head_logits(hd, w->data + l.embed);
    gpt_head_targets(hd, q);
    gpt_head_sumexp(hd);
    sum += gpt_head_loss(hd);
    for (size_t row = 0; row < s; row++) {
      const double *lr = gsl_matrix_const_ptr(hd->logits, row, 0);
      size_t best = 0;
      for (size_t v = 1; v < d->vocab; v++)
        best = lr[v] > lr[best] ? v : best;
      right += best == hd->target[row];
    }
  }
  *loss = sum / (double)n;
  *accuracy = (double)right / (double)(n * s);
  for (size_t k = 0; k < L; k++)
    transformer_part_free(parts[k]);
  free(parts);
  gpt_head_free(hd);
  gsl_matrix_free(x);
  gsl_matrix_free(z);
  return 0;
}

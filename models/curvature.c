/* curvature.c - the top Hessian eigenvalue by power iteration on central-difference
 * Hessian-vector products (curvature.h says why and what it bounds). */
#include "models/curvature.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_math.h>
#include <math.h>

/* The power iteration's state: the function, w, the shift mu (H - mu I is iterated) and
 * scratch of w's size. */
typedef struct curvature_pass {
  curvature_grad_fn f;
  void *ctx;
  const gsl_vector *w;
  double h;
  gsl_vector *wp, *gp, *gm;
} curvature_pass;

/* hv = (H - mu I) v by central differences; 0 or -1. */
static int curvature_hvp(curvature_pass *p, double mu, const gsl_vector *v, gsl_vector *hv)
{
  gsl_vector_memcpy(p->wp, p->w);
  gsl_blas_daxpy(p->h, v, p->wp);
  if (p->f(p->ctx, p->wp, p->gp) != 0)
    return -1;
  gsl_vector_memcpy(p->wp, p->w);
  gsl_blas_daxpy(-p->h, v, p->wp);
  if (p->f(p->ctx, p->wp, p->gm) != 0)
    return -1;
  gsl_vector_memcpy(hv, p->gp);
  gsl_vector_sub(hv, p->gm);
  gsl_vector_scale(hv, 0.5 / p->h);
  gsl_blas_daxpy(-mu, v, hv);
  return 0;
}

/* The dominant eigenvalue of H - mu I by power iteration from v (unit, overwritten). */
static int curvature_power(curvature_pass *p, double mu, gsl_vector *v, gsl_vector *hv, double *out)
{
  double q = 0;
  for (int it = 0; it < CURVATURE_ITERS; it++) {
    if (curvature_hvp(p, mu, v, hv) != 0)
      return -1;
    double next;
    gsl_blas_ddot(v, hv, &next); /* the Rayleigh quotient of unit v */
    double norm = gsl_blas_dnrm2(hv);
    if (!(norm > 0) || !isfinite(norm)) {
      q = next;
      break;
    }
    gsl_vector_memcpy(v, hv);
    gsl_vector_scale(v, 1.0 / norm);
    int done = it > 0 && fabs(next - q) <= CURVATURE_REL_TOL * fabs(next);
    q = next;
    if (done)
      break;
  }
  *out = q;
  return 0;
}

/* The fixed start: every coordinate nonzero, no two alike, unit length. */
static void curvature_start(gsl_vector *v)
{
  for (size_t i = 0; i < v->size; i++)
    gsl_vector_set(v, i, sin(1.0 + (double)i));
  gsl_vector_scale(v, 1.0 / gsl_blas_dnrm2(v));
}

int curvature_top(curvature_grad_fn f, void *ctx, const gsl_vector *w, double *lambda)
{
  if (w == NULL || w->size == 0)
    return -1;
  double wn = gsl_blas_dnrm2(w);
  curvature_pass p = {f, ctx, w, CURVATURE_STEP * (wn > 1 ? wn : 1), gsl_vector_alloc(w->size),
                      gsl_vector_alloc(w->size), gsl_vector_alloc(w->size)};
  gsl_vector *v = gsl_vector_alloc(w->size), *hv = gsl_vector_alloc(w->size);
  double mu = 0;
  curvature_start(v);
  int rc = curvature_power(&p, 0, v, hv, &mu);
  if (rc == 0 && mu < 0) { /* the dominant one is negative: the largest is mu + that of H - mu I */
    double top;
    curvature_start(v);
    rc = curvature_power(&p, mu, v, hv, &top);
    mu += top;
  }
  if (rc == 0)
    *lambda = mu;
  gsl_vector_free(v);
  gsl_vector_free(hv);
  gsl_vector_free(p.wp);
  gsl_vector_free(p.gp);
  gsl_vector_free(p.gm);
  return rc;
}

/* A net's mean loss gradient over all rows, in batches: the context of curvature_top. */
typedef struct curvature_net_ctx {
  const net *n;
  const gsl_matrix *X;
  const double *y;
  size_t b;
  net_ws *ws;
  gsl_vector *g;
} curvature_net_ctx;

static int curvature_net_grad(void *ctx, const gsl_vector *w, gsl_vector *g)
{
  curvature_net_ctx *c = ctx;
  size_t rows = c->X->size1;
  gsl_vector_set_zero(g);
  for (size_t k = 0; k < rows; k += c->b) {
    size_t m = rows - k < c->b ? rows - k : c->b;
    gsl_matrix_const_view part = gsl_matrix_const_submatrix(c->X, k, 0, m, c->X->size2);
    double loss;
    if (net_loss_grad(c->n, w, &part.matrix, c->y + k, c->ws, &loss, c->g) != 0)
      return -1;
    gsl_blas_daxpy((double)m / (double)rows, c->g, g); /* each batch's mean, weighted by its rows */
  }
  return 0;
}

int curvature_net_top(const net *n, const gsl_vector *w, const gsl_matrix *X, const double *y, size_t b,
                      net_ws *ws, double *lambda)
{
  if (b == 0 || X->size1 == 0 || w->size != net_n_params(n))
    return -1;
  curvature_net_ctx c = {n, X, y, b, ws, gsl_vector_alloc(w->size)};
  int rc = curvature_top(curvature_net_grad, &c, w, lambda);
  gsl_vector_free(c.g);
  return rc;
}

double curvature_delay_bound(long tau)
{
  return 2 * sin(M_PI / (2.0 * (2.0 * (double)(tau > 0 ? tau : 0) + 1.0)));
}

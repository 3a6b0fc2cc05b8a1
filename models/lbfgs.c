/* lbfgs.c - L-BFGS through slot commands, its sequential reference and a net driver.
 *
 * References: Nocedal & Wright, Numerical Optimization, 2nd ed. (2006), "N&W" below;
 * Dennis & Schnabel, Numerical Methods for Unconstrained Optimization (1983), "D&S".
 *
 * One iteration from x_k holding k pairs, with t trial points in the line search,
 * issues exactly
 *   dot 2k + 4, axpy 2k + t + 2, scale 1, copy t + 5, evaluate t:
 * the two-loop recursion 1 copy, 2k dots, 2k axpys and 1 scale; d.g 1 dot; each
 * trial 1 copy, 1 axpy and 1 evaluate; s and y 1 copy and 1 axpy each; s.y, y.y and
 * g.g 3 dots; accepting x and g 2 copies. The first lbfgs_step also issues the
 * evaluate and g.g at x_0. */
#include "models/lbfgs.h"
#include "models/mem.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_matrix.h>

struct lbfgs_state {
  const lbfgs_ops *ops;
  void *ctx;
  lbfgs_params p;
  lbfgs_status status;
  int started;
  int k;         /* pairs held */
  int *order;    /* order[0..k-1]: couples of the kept pairs, oldest first; order[k..m]: free */
  double *rho;   /* rho[j] = 1 / (s.y) of couple j (N&W 7.2) */
  double *alpha; /* the two-loop's alpha_i, by position in order */
  double gamma;  /* H_0 = gamma I, from the newest kept pair (N&W eq. 7.20) */
  double f, gnorm, step;
  long iter, skipped;
  lbfgs_counts last, total;
};

void lbfgs_params_default(lbfgs_params *p)
{
  p->m = 10;          /* N&W 7.2: a modest m, between 3 and 20, usually suffices */
  p->max_iter = 1000;
  p->gtol = 1e-5;
  p->c1 = 1e-4;       /* N&W 3.1 suggests a small c1 such as 1e-4 */
  p->ls_lo = 0.1;     /* D&S Alg. A6.3.1 keeps each backtrack within [0.1 t, 0.5 t] */
  p->ls_hi = 0.5;
  p->ls_max = 40;     /* steps down to at most 0.5^39 ~ 2e-12 of the first */
  p->skip_eps = DBL_EPSILON;
}

int lbfgs_slot_s(int j)
{
  return LBFGS_SLOT_GT + 1 + 2 * j;
}

int lbfgs_slot_y(int j)
{
  return LBFGS_SLOT_GT + 2 + 2 * j;
}

int lbfgs_n_slots(int m)
{
  return lbfgs_slot_y(m) + 1;
}

static int params_valid(const lbfgs_params *p)
{
  return p != NULL && p->m >= 1 && p->m <= INT_MAX / 4 && p->max_iter >= 0 && p->gtol >= 0 && p->c1 > 0 &&
         p->c1 < 1 && p->ls_lo > 0 && p->ls_lo <= p->ls_hi && p->ls_hi < 1 && p->ls_max >= 1 && p->skip_eps >= 0;
}

static int ops_valid(const lbfgs_ops *o)
{
  return o != NULL && o->dot && o->axpy && o->scale && o->copy && o->evaluate;
}

lbfgs_state *lbfgs_create(const lbfgs_ops *ops, void *ctx, const lbfgs_params *p)
{
  if (!ops_valid(ops) || !params_valid(p))
    return NULL;
  lbfgs_state *st = mem_calloc(1, sizeof(*st));
  st->ops = ops;
  st->ctx = ctx;
  st->p = *p;
  st->status = LBFGS_RUNNING;
  st->order = mem_alloc(((size_t)p->m + 1) * sizeof(*st->order));
  st->rho = mem_calloc((size_t)p->m + 1, sizeof(*st->rho));
  st->alpha = mem_calloc((size_t)p->m, sizeof(*st->alpha));
  for (int j = 0; j <= p->m; j++)
    st->order[j] = j;
  return st;
}

void lbfgs_free(lbfgs_state *st)
{
  if (st == NULL)
    return;
  free(st->order);
  free(st->rho);
  free(st->alpha);
  free(st);
}

/* ---- the commands, counted ---- */

static double cmd_dot(lbfgs_state *st, int a, int b)
{
  st->last.dot++;
  return st->ops->dot(st->ctx, a, b);
}

static void cmd_axpy(lbfgs_state *st, double alpha, int x, int y)
{
  st->last.axpy++;
  st->ops->axpy(st->ctx, alpha, x, y);
}

static void cmd_scale(lbfgs_state *st, double alpha, int x)
{
  st->last.scale++;
  st->ops->scale(st->ctx, alpha, x);
}

static void cmd_copy(lbfgs_state *st, int src, int dst)
{
  st->last.copy++;
  st->ops->copy(st->ctx, src, dst);
}

static int cmd_evaluate(lbfgs_state *st, int x, int g, double *f)
{
  st->last.evaluate++;
  return st->ops->evaluate(st->ctx, x, g, f);
}

/* ---- one iteration ---- */

static lbfgs_status evaluate_start(lbfgs_state *st)
{
  if (cmd_evaluate(st, LBFGS_SLOT_X, LBFGS_SLOT_G, &st->f) < 0)
    return LBFGS_ERR_EVALUATE;
  st->gnorm = sqrt(cmd_dot(st, LBFGS_SLOT_G, LBFGS_SLOT_G));
  return isfinite(st->f) && isfinite(st->gnorm) ? LBFGS_RUNNING : LBFGS_ERR_NONFINITE;
}

/* d = -H g by N&W Alg. 7.4. The recursion is linear in q, so the sign is folded into
 * the H_0 scaling: the first loop runs on q = g, r = -gamma q, and the second loop adds
 * (-alpha_i - beta_i) s_i, which makes every later quantity the negative of Alg. 7.4's.
 * With no pair, H_0 = I / ||g|| so that the first trial step has unit length.
 * Returns d.g. */
static double direction(lbfgs_state *st)
{
  cmd_copy(st, LBFGS_SLOT_G, LBFGS_SLOT_D);
  for (int i = st->k - 1; i >= 0; i--) {
    int j = st->order[i];
    st->alpha[i] = st->rho[j] * cmd_dot(st, lbfgs_slot_s(j), LBFGS_SLOT_D);
    cmd_axpy(st, -st->alpha[i], lbfgs_slot_y(j), LBFGS_SLOT_D);
  }
  cmd_scale(st, -(st->k > 0 ? st->gamma : 1.0 / st->gnorm), LBFGS_SLOT_D);
  for (int i = 0; i < st->k; i++) {
    int j = st->order[i];
    double beta = st->rho[j] * cmd_dot(st, lbfgs_slot_y(j), LBFGS_SLOT_D);
    cmd_axpy(st, -st->alpha[i] - beta, lbfgs_slot_s(j), LBFGS_SLOT_D);
  }
  return cmd_dot(st, LBFGS_SLOT_G, LBFGS_SLOT_D);
}

/* The next trial step after t failed: the minimizer of the quadratic interpolating
 * f, d.g and f(x + t d) (N&W eq. 3.58), kept within [ls_lo t, ls_hi t] (D&S A6.3.1).
 * The denominator is > (1 - c1) t |d.g| > 0 because t failed the Armijo test. A
 * non-finite f(x + t d) gives nothing to interpolate: plain shrink by ls_hi. */
static double next_step(const lbfgs_params *p, double f, double dg, double t, double ft)
{
  double lo = p->ls_lo * t, hi = p->ls_hi * t;
  if (!isfinite(ft))
    return hi;
  double tq = -dg * t * t / (2 * (ft - f - dg * t));
  if (!(tq > lo))
    return lo;
  return tq > hi ? hi : tq;
}

/* Backtracking (N&W Alg. 3.1) from t = 1, the step quasi-Newton methods should always
 * try first (N&W 3.5), until the Armijo condition f(x + t d) <= f + c1 t d.g (N&W eq.
 * 3.4) holds at a finite value. Near a minimum, f + c1 t d.g rounds to f, and the test
 * would accept f(x + t d) = f, even a t d below the ulps of x that leaves x where it
 * is; so a strict decrease is required as well, and a run asked for a gradient norm
 * below what f's rounding lets it see ends with LBFGS_ERR_LINESEARCH instead of
 * churning to max_iter. Leaves the trial point and its gradient in XT, GT. */
static lbfgs_status line_search(lbfgs_state *st, double dg, double *t_out, double *ft_out)
{
  double t = 1.0, ft = NAN;
  for (int trial = 0; trial < st->p.ls_max; trial++) {
    if (trial > 0)
      t = next_step(&st->p, st->f, dg, t, ft);
    cmd_copy(st, LBFGS_SLOT_X, LBFGS_SLOT_XT);
    cmd_axpy(st, t, LBFGS_SLOT_D, LBFGS_SLOT_XT);
    if (cmd_evaluate(st, LBFGS_SLOT_XT, LBFGS_SLOT_GT, &ft) < 0)
      return LBFGS_ERR_EVALUATE;
    if (isfinite(ft) && ft <= st->f + st->p.c1 * t * dg && ft < st->f) {
      *t_out = t;
      *ft_out = ft;
      return LBFGS_RUNNING;
    }
  }
  return isfinite(ft) ? LBFGS_ERR_LINESEARCH : LBFGS_ERR_NONFINITE;
}

/* Commits the candidate pair in couple order[k]; when the history is full, the oldest
 * couple becomes the free one. */
static void keep_pair(lbfgs_state *st, double sy, double yy)
{
  int m = st->p.m, j = st->order[st->k];
  st->rho[j] = 1.0 / sy;
  st->gamma = sy / yy;
  if (st->k < m) {
    st->k++;
    return;
  }
  int oldest = st->order[0];
  memmove(st->order, st->order + 1, (size_t)m * sizeof(*st->order));
  st->order[m] = oldest;
}

/* s = x_{k+1} - x_k and y = g_{k+1} - g_k (N&W 6.1) into the free couple; then
 * x and g move to the trial point. Backtracking does not enforce the curvature
 * condition s.y > 0 (N&W eq. 6.7) as the Wolfe conditions would, so a pair is kept
 * only if s.y > skip_eps y.y: this keeps H positive definite and bounds the curvature
 * y.y / s.y that one pair adds by 1 / skip_eps, the quantity the BFGS convergence proof
 * needs bounded (N&W 6.4). */
static lbfgs_status accept(lbfgs_state *st, double t, double ft)
{
  int j = st->order[st->k], s = lbfgs_slot_s(j), y = lbfgs_slot_y(j);
  cmd_copy(st, LBFGS_SLOT_XT, s);
  cmd_axpy(st, -1.0, LBFGS_SLOT_X, s);
  cmd_copy(st, LBFGS_SLOT_GT, y);
  cmd_axpy(st, -1.0, LBFGS_SLOT_G, y);
  double sy = cmd_dot(st, s, y), yy = cmd_dot(st, y, y);
  double gg = cmd_dot(st, LBFGS_SLOT_GT, LBFGS_SLOT_GT);
  if (!isfinite(sy) || !isfinite(yy) || !isfinite(gg))
    return LBFGS_ERR_NONFINITE;
  cmd_copy(st, LBFGS_SLOT_XT, LBFGS_SLOT_X);
  cmd_copy(st, LBFGS_SLOT_GT, LBFGS_SLOT_G);
  if (sy > st->p.skip_eps * yy)
    keep_pair(st, sy, yy);
  else
    st->skipped++;
  st->f = ft;
  st->gnorm = sqrt(gg);
  st->step = t;
  return LBFGS_RUNNING;
}

/* N&W Alg. 7.5, one pass of its loop: direction, line search, history update. Every
 * kept pair has s.y > 0, so H is positive definite and d.g < 0 in exact arithmetic;
 * a d.g >= 0 that rounding produced leaves nothing to search along. */
static lbfgs_status iterate(lbfgs_state *st)
{
  double dg = direction(st), t, ft;
  if (!isfinite(dg))
    return LBFGS_ERR_NONFINITE;
  if (!(dg < 0))
    return LBFGS_ERR_LINESEARCH;
  lbfgs_status s = line_search(st, dg, &t, &ft);
  if (s == LBFGS_RUNNING)
    s = accept(st, t, ft);
  if (s == LBFGS_RUNNING)
    st->iter++;
  return s;
}

static lbfgs_status stop_test(const lbfgs_state *st)
{
  if (st->gnorm <= st->p.gtol)
    return LBFGS_CONVERGED;
  return st->iter >= st->p.max_iter ? LBFGS_MAX_ITER : LBFGS_RUNNING;
}

static lbfgs_status run_step(lbfgs_state *st)
{
  lbfgs_status s;
  if (!st->started) {
    st->started = 1;
    if ((s = evaluate_start(st)) != LBFGS_RUNNING || (s = stop_test(st)) != LBFGS_RUNNING)
      return s;
  }
  if ((s = iterate(st)) != LBFGS_RUNNING)
    return s;
  return stop_test(st);
}

static void counts_add(lbfgs_counts *to, const lbfgs_counts *c)
{
  to->dot += c->dot;
  to->axpy += c->axpy;
  to->scale += c->scale;
  to->copy += c->copy;
  to->evaluate += c->evaluate;
}

lbfgs_status lbfgs_step(lbfgs_state *st)
{
  if (st->status != LBFGS_RUNNING)
    return st->status;
  memset(&st->last, 0, sizeof(st->last));
  st->status = run_step(st);
  counts_add(&st->total, &st->last);
  return st->status;
}

void lbfgs_get_result(const lbfgs_state *st, lbfgs_result *r)
{
  r->status = st->status;
  r->iterations = st->iter;
  r->evaluations = st->total.evaluate;
  r->skipped = st->skipped;
  r->n_pairs = st->k;
  r->f = st->f;
  r->gnorm = st->gnorm;
  r->step = st->step;
  r->last = st->last;
  r->total = st->total;
}

static lbfgs_status invalid(lbfgs_result *r)
{
  memset(r, 0, sizeof(*r));
  r->status = LBFGS_ERR_PARAMS;
  return r->status;
}

lbfgs_status lbfgs_minimize(const lbfgs_ops *ops, void *ctx, const lbfgs_params *p, lbfgs_result *r)
{
  lbfgs_state *st = lbfgs_create(ops, ctx, p);
  if (st == NULL)
    return invalid(r);
  while (lbfgs_step(st) == LBFGS_RUNNING)
    ;
  lbfgs_get_result(st, r);
  lbfgs_free(st);
  return r->status;
}

const char *lbfgs_status_name(lbfgs_status st)
{
  switch (st) {
  case LBFGS_CONVERGED: return "converged";
  case LBFGS_RUNNING: return "running";
  case LBFGS_MAX_ITER: return "max_iter";
  case LBFGS_ERR_LINESEARCH: return "linesearch_failed";
  case LBFGS_ERR_NONFINITE: return "nonfinite";
  case LBFGS_ERR_EVALUATE: return "evaluate_failed";
  case LBFGS_ERR_PARAMS: return "invalid_params";
  }
  return "unknown";
}

/* ---- the sequential reference ---- */

struct lbfgs_local {
  gsl_matrix *slots; /* one row per slot */
  gsl_vector_view *rows;
  int n_slots;
  lbfgs_fdf fdf;
  void *params;
};

lbfgs_local *lbfgs_local_create(size_t n, int m, lbfgs_fdf fdf, void *params)
{
  if (n == 0 || m < 1 || m > INT_MAX / 4 || fdf == NULL)
    return NULL;
  lbfgs_local *lo = mem_calloc(1, sizeof(*lo));
  lo->n_slots = lbfgs_n_slots(m);
  lo->slots = mem_matrix((size_t)lo->n_slots, n);
  gsl_matrix_set_zero(lo->slots);
  lo->rows = mem_alloc((size_t)lo->n_slots * sizeof(*lo->rows));
  for (int i = 0; i < lo->n_slots; i++)
    lo->rows[i] = gsl_matrix_row(lo->slots, (size_t)i);
  lo->fdf = fdf;
  lo->params = params;
  return lo;
}

void lbfgs_local_free(lbfgs_local *lo)
{
  if (lo == NULL)
    return;
  gsl_matrix_free(lo->slots);
  free(lo->rows);
  free(lo);
}

gsl_vector *lbfgs_local_slot(lbfgs_local *lo, int slot)
{
  if (slot < 0 || slot >= lo->n_slots)
    mem_die("lbfgs", "lbfgs_local: slot id out of range");
  return &lo->rows[slot].vector;
}

static double local_dot(void *ctx, int a, int b)
{
  double r;
  gsl_blas_ddot(lbfgs_local_slot(ctx, a), lbfgs_local_slot(ctx, b), &r);
  return r;
}

static void local_axpy(void *ctx, double alpha, int x, int y)
{
  gsl_blas_daxpy(alpha, lbfgs_local_slot(ctx, x), lbfgs_local_slot(ctx, y));
}

static void local_scale(void *ctx, double alpha, int x)
{
  gsl_blas_dscal(alpha, lbfgs_local_slot(ctx, x));
}

static void local_copy(void *ctx, int src, int dst)
{
  gsl_blas_dcopy(lbfgs_local_slot(ctx, src), lbfgs_local_slot(ctx, dst));
}

static int local_evaluate(void *ctx, int x, int g, double *f)
{
  lbfgs_local *lo = ctx;
  return lo->fdf(lo->params, lbfgs_local_slot(lo, x), f, lbfgs_local_slot(lo, g)) < 0 ? -1 : 0;
}

const lbfgs_ops *lbfgs_local_ops(void)
{
  static const lbfgs_ops ops = {local_dot, local_axpy, local_scale, local_copy, local_evaluate};
  return &ops;
}

lbfgs_status lbfgs_local_minimize(lbfgs_fdf fdf, void *params, const lbfgs_params *p, gsl_vector *x,
                                  lbfgs_result *r)
{
  if (x->size == 0 || fdf == NULL || !params_valid(p))
    return invalid(r);
  lbfgs_local *lo = lbfgs_local_create(x->size, p->m, fdf, params);
  gsl_vector_memcpy(lbfgs_local_slot(lo, LBFGS_SLOT_X), x);
  lbfgs_status s = lbfgs_minimize(lbfgs_local_ops(), lo, p, r);
  gsl_vector_memcpy(x, lbfgs_local_slot(lo, LBFGS_SLOT_X));
  lbfgs_local_free(lo);
  return s;
}

/* ---- full-batch L-BFGS on a net ---- */

struct lbfgs_net {
  const net *m;
  const dataset *d;
  size_t portion;
  net_ws *ws;
  gsl_vector *gc; /* one portion's mean gradient */
};

lbfgs_net *lbfgs_net_create(const net *m, const dataset *d, size_t portion)
{
  size_t n = data_n(d);
  if (n == 0 || data_dim(d) != net_n_inputs(m))
    return NULL;
  lbfgs_net *ln = mem_calloc(1, sizeof(*ln));
  ln->m = m;
  ln->d = d;
  ln->portion = portion == 0 || portion > n ? n : portion;
  ln->ws = net_ws_create(m, ln->portion);
  ln->gc = gsl_vector_alloc(net_n_params(m));
  if (ln->ws == NULL || ln->gc == NULL)
    mem_die("lbfgs", "out of memory");
  return ln;
}

void lbfgs_net_free(lbfgs_net *ln)
{
  if (ln == NULL)
    return;
  net_ws_free(ln->ws);
  gsl_vector_free(ln->gc);
  free(ln);
}

/* With one portion the weight is exactly 1 and 0 + 1 * v = v, so the result is
 * net_loss_grad's own bits. */
int lbfgs_net_fdf(void *ctx, const gsl_vector *w, double *f, gsl_vector *grad)
{
  lbfgs_net *ln = ctx;
  size_t n = data_n(ln->d), p = net_n_params(ln->m), dim = data_dim(ln->d);
  if (w->size != p || grad->size != p)
    return -1;
  double sum = 0;
  gsl_vector_set_zero(grad);
  for (size_t b = 0; b < n; b += ln->portion) {
    size_t rows = n - b < ln->portion ? n - b : ln->portion;
    gsl_matrix_const_view X = gsl_matrix_const_submatrix(ln->d->X, b, 0, rows, dim);
    double loss, weight = (double)rows / (double)n;
    if (net_loss_grad(ln->m, w, &X.matrix, ln->d->y + b, ln->ws, &loss, ln->gc) != 0)
      return -1;
    sum += weight * loss;
    gsl_blas_daxpy(weight, ln->gc, grad);
  }
  *f = sum;
  return 0;
}

lbfgs_status lbfgs_net_minimize(const net *m, const dataset *d, size_t portion, const lbfgs_params *p,
                                gsl_vector *w, lbfgs_result *r)
{
  lbfgs_net *ln = lbfgs_net_create(m, d, portion);
  if (ln == NULL || w->size != net_n_params(m)) {
    lbfgs_net_free(ln);
    return invalid(r);
  }
  lbfgs_status s = lbfgs_local_minimize(lbfgs_net_fdf, ln, p, w, r);
  lbfgs_net_free(ln);
  return s;
}

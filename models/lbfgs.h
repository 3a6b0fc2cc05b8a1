#ifndef MODELS_LBFGS_H
#define MODELS_LBFGS_H
/* lbfgs.h - L-BFGS that touches vectors only through a table of commands on named
 * slots, so that Sandblaster's coordinator (Dean'12 4.2) runs this very code while the
 * slots live sliced on parameter-server shards; plus the sequential reference (every
 * slot a gsl_vector in this process) and a full-batch driver for a net. */

#include <stddef.h>
#include <gsl/gsl_vector.h>

#include "models/data.h"
#include "models/net.h"

/* Vector slots. Pair j (0 <= j <= m) is the slot couple lbfgs_slot_s(j), lbfgs_slot_y(j):
 * m + 1 couples for a history of m, so that a candidate pair is formed in a free couple
 * and a rejected one never overwrites a kept one. */
enum {
  LBFGS_SLOT_X = 0,  /* the iterate x_k (the caller puts x_0 here) */
  LBFGS_SLOT_G = 1,  /* the gradient at x_k */
  LBFGS_SLOT_D = 2,  /* the search direction d_k */
  LBFGS_SLOT_XT = 3, /* the trial point x_k + t d_k */
  LBFGS_SLOT_GT = 4  /* the gradient at the trial point */
};

/* The commands. Each names slots by id; every one but evaluate is something a shard
 * runs on its own slice, answering at most a scalar (dot: the slice's partial sum).
 * evaluate is the batch pass the replicas do, leaving the gradient in a slot. Dean'12
 * also lists coefficient-wise multiplication: only a diagonal H_0 would need it, and
 * H_0 here is gamma I. The algorithm never passes one slot twice to a command, except
 * to dot (a . a). */
typedef struct lbfgs_ops {
  double (*dot)(void *ctx, int a, int b);              /* returns a . b */
  void (*axpy)(void *ctx, double alpha, int x, int y); /* y += alpha * x */
  void (*scale)(void *ctx, double alpha, int x);       /* x *= alpha */
  void (*copy)(void *ctx, int src, int dst);           /* dst = src */
  /* *f = f(slot x), slot g = grad f(slot x). Returns 0, or a negative value when f
   * cannot be evaluated there (reported as LBFGS_ERR_EVALUATE). A non-finite f or
   * gradient is not an error of evaluate: the algorithm sees it and reacts. */
  int (*evaluate)(void *ctx, int x, int g, double *f);
} lbfgs_ops;

/* Commands issued, one counter per entry of lbfgs_ops. */
typedef struct lbfgs_counts {
  long dot, axpy, scale, copy, evaluate;
} lbfgs_counts;

typedef enum lbfgs_status {
  LBFGS_CONVERGED = 0,         /* ||g||_2 <= gtol */
  LBFGS_RUNNING = 1,           /* an iteration was done; not converged yet */
  LBFGS_MAX_ITER = 2,          /* max_iter iterations done, not converged */
  LBFGS_ERR_LINESEARCH = -1,   /* ls_max trial points without sufficient decrease,
                                  or (rounding) a direction that is not of descent */
  LBFGS_ERR_NONFINITE = -2,    /* f or the gradient NaN or infinite at x_0 or at the
                                  accepted point, or f at the last of ls_max trials */
  LBFGS_ERR_EVALUATE = -3,     /* ops->evaluate returned a negative value */
  LBFGS_ERR_PARAMS = -4        /* lbfgs_minimize was given invalid parameters */
} lbfgs_status;

typedef struct lbfgs_params {
  int m;           /* (s, y) pairs kept, >= 1 */
  long max_iter;   /* iterations before LBFGS_MAX_ITER, >= 0 */
  double gtol;     /* converged when ||g||_2 <= gtol, >= 0 */
  double c1;       /* Armijo constant of sufficient decrease, in (0, 1) */
  double ls_lo;    /* each backtrack puts the new step in [ls_lo t, ls_hi t], */
  double ls_hi;    /* 0 < ls_lo <= ls_hi < 1; ls_lo = ls_hi = 0.5 is plain halving */
  int ls_max;      /* trial points per line search, >= 1 */
  double skip_eps; /* a pair is kept only if s.y > skip_eps * y.y, >= 0 */
} lbfgs_params;

typedef struct lbfgs_result {
  lbfgs_status status;
  long iterations;   /* iterations completed */
  long evaluations;  /* evaluate commands, the one at x_0 included */
  long skipped;      /* pairs rejected by the s.y test */
  int n_pairs;       /* pairs held now */
  double f;          /* f at the iterate */
  double gnorm;      /* ||g||_2 at the iterate */
  double step;       /* last accepted step length t (0 before the first) */
  lbfgs_counts last; /* commands issued by the last lbfgs_step */
  lbfgs_counts total;/* commands issued since lbfgs_create */
} lbfgs_result;

typedef struct lbfgs_state lbfgs_state;

/* Defaults: m = 10, max_iter = 1000, gtol = 1e-5, c1 = 1e-4, ls_lo = 0.1, ls_hi = 0.5,
 * ls_max = 40, skip_eps = DBL_EPSILON. */
void lbfgs_params_default(lbfgs_params *p);

/* Slot ids of pair j, and the number of slots a history of m needs (5 + 2 (m + 1)). */
int lbfgs_slot_s(int j);
int lbfgs_slot_y(int j);
int lbfgs_n_slots(int m);

/* A minimization from the x_0 the caller left in slot LBFGS_SLOT_X; issues no command.
 * ops and ctx must outlive it; p is copied. Returns NULL if p is invalid (see
 * lbfgs_params). Caller frees with lbfgs_free. */
lbfgs_state *lbfgs_create(const lbfgs_ops *ops, void *ctx, const lbfgs_params *p);
void lbfgs_free(lbfgs_state *st);

/* Runs one iteration (Nocedal & Wright Alg. 7.5 steps: direction, line search, update);
 * the first call first evaluates f and g at x_0 and stops there if x_0 already
 * converged. Returns LBFGS_RUNNING, or the final status, which later calls return again
 * without issuing a command. On a negative status the iterate is the last accepted one. */
lbfgs_status lbfgs_step(lbfgs_state *st);

/* The state's counters and scalars into *r. */
void lbfgs_get_result(const lbfgs_state *st, lbfgs_result *r);

/* Steps until a final status and returns it, with the result in *r (status
 * LBFGS_ERR_PARAMS and zeros if p is invalid). The solution is left in LBFGS_SLOT_X. */
lbfgs_status lbfgs_minimize(const lbfgs_ops *ops, void *ctx, const lbfgs_params *p, lbfgs_result *r);

/* "converged", "running", "max_iter", "linesearch_failed", "nonfinite", "evaluate_failed",
 * "invalid_params". */
const char *lbfgs_status_name(lbfgs_status st);

/* ---- the sequential reference: every slot a gsl_vector in this process ---- */

/* f(x) into *f and its gradient into grad. Returns 0 or a negative value. */
typedef int (*lbfgs_fdf)(void *params, const gsl_vector *x, double *f, gsl_vector *grad);

typedef struct lbfgs_local lbfgs_local;

/* lbfgs_n_slots(m) zeroed vectors of size n, evaluated through fdf(params, ...); params
 * must outlive it. Returns NULL if n == 0, m < 1 or fdf is NULL. Free with
 * lbfgs_local_free. A slot id out of range in a command aborts (a bug). */
lbfgs_local *lbfgs_local_create(size_t n, int m, lbfgs_fdf fdf, void *params);
void lbfgs_local_free(lbfgs_local *lo);

/* The ops table whose ctx is an lbfgs_local. */
const lbfgs_ops *lbfgs_local_ops(void);

/* Slot `slot` as a vector owned by lo (write x_0 into LBFGS_SLOT_X, read the iterate
 * back). Aborts on an id out of range. */
gsl_vector *lbfgs_local_slot(lbfgs_local *lo, int slot);

/* Minimizes fdf from x (overwritten with the final iterate); returns the status with
 * the result in *r, or LBFGS_ERR_PARAMS if x is empty, fdf NULL or p invalid. */
lbfgs_status lbfgs_local_minimize(lbfgs_fdf fdf, void *params, const lbfgs_params *p, gsl_vector *x,
                                  lbfgs_result *r);

/* ---- full-batch L-BFGS on a net ---- */

typedef struct lbfgs_net lbfgs_net;

/* The mean loss of m over every row of d, computed in portions of `portion` rows (0: one
 * portion of all rows) and combined as sum_c (n_c / N) * mean_c in row order, so a
 * distributed version summing the same portions in the same order gets the same bits.
 * m and d must outlive it. Returns NULL if d's dimension is not m's input size or d is
 * empty. Free with lbfgs_net_free. */
lbfgs_net *lbfgs_net_create(const net *m, const dataset *d, size_t portion);
void lbfgs_net_free(lbfgs_net *ln);

/* An lbfgs_fdf whose params is an lbfgs_net: the mean loss at w and its gradient.
 * Returns 0, or -1 if w or grad does not have net_n_params entries. */
int lbfgs_net_fdf(void *ln, const gsl_vector *w, double *f, gsl_vector *grad);

/* Full-batch L-BFGS of m on d from w (overwritten with the final iterate), in portions
 * as in lbfgs_net_create. Returns the status with the result in *r; LBFGS_ERR_PARAMS
 * if the shapes do not fit or p is invalid. */
lbfgs_status lbfgs_net_minimize(const net *m, const dataset *d, size_t portion, const lbfgs_params *p,
                                gsl_vector *w, lbfgs_result *r);

#endif

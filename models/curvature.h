#ifndef MODELS_CURVATURE_H
#define MODELS_CURVATURE_H
/* curvature.h - the top eigenvalue lambda_max of a loss's Hessian at given parameters, by
 * power iteration on Hessian-vector products taken by central differences of the real
 * gradient: H v ~ (g(w + h v) - g(w - h v)) / (2 h), |v| = 1, no Hessian ever formed.
 * Power iteration finds the eigenvalue of largest magnitude; when that one is negative (a
 * saddle's direction), a second pass on H - mu I finds the largest one. lambda_max bounds
 * the rates a gradient method may take: plain gradient descent on a quadratic is stable
 * only for rate x lambda_max < 2, and one whose gradients are tau updates stale only for
 * rate x lambda_max < 2 sin(pi / (2 (2 tau + 1))) (curvature_delay_bound). */

#include <stddef.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "models/net.h"

/* Power iterations per pass: the estimate stops earlier once two successive Rayleigh
 * quotients agree to CURVATURE_REL_TOL. */
#define CURVATURE_ITERS 60
#define CURVATURE_REL_TOL 1e-4
/* The central difference's step along a unit vector, relative to max(1, |w|): its
 * truncation error is O(h^2) of the third derivative, its rounding O(eps |g| / h). */
#define CURVATURE_STEP 1e-4

/* The gradient at w into g; 0, or -1 on failure. */
typedef int (*curvature_grad_fn)(void *ctx, const gsl_vector *w, gsl_vector *g);

/* lambda_max of the Hessian of the function whose gradient f gives, at w, into *lambda.
 * Deterministic (a fixed start vector). Returns 0, or -1 if f fails or w is empty. */
int curvature_top(curvature_grad_fn f, void *ctx, const gsl_vector *w, double *lambda);

/* lambda_max of net n's mean loss over the rows of X (labels y) at w, the gradient summed
 * over batches of at most b rows through net_loss_grad with workspace ws (which must take
 * b rows). Returns 0, or -1 if a shape does not fit or b is 0. */
int curvature_net_top(const net *n, const gsl_vector *w, const gsl_matrix *X, const double *y, size_t b,
                      net_ws *ws, double *lambda);

/* The largest rate x lambda for which x_{t+1} = x_t - rate lambda x_{t - tau}, gradient
 * descent on a quadratic of curvature lambda with gradients tau updates stale, is
 * asymptotically stable: 2 sin(pi / (2 (2 tau + 1))) (Levin and May 1976, "A note on
 * difference-delay equations"); 2 at tau = 0, about pi / (2 tau) for large tau. */
double curvature_delay_bound(long tau);

#endif

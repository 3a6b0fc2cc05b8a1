#ifndef MODELS_OPTIM_H
#define MODELS_OPTIM_H
/* optim.h - the parameter update rules, on raw slices so that a whole model and
 * a parameter-server shard apply exactly the same arithmetic, element by element. */

#include <stddef.h>

/* w[i] -= lr * g[i] for i < n. */
void optim_sgd_apply(double *w, const double *g, size_t n, double lr);

/* Adagrad as in Dean et al. 2012, section 4.1: acc[i] += g[i]^2, then
 * w[i] -= gamma / sqrt(acc[i]) * g[i]. A coordinate whose accumulated squares are
 * still 0 has seen only zero gradients and is left alone (the formula is 0/0). */
void optim_adagrad_apply(double *w, double *acc, const double *g, size_t n, double gamma);

/* Adam (Kingma and Ba 2015, Algorithm 1), step `step` >= 1 of the run: m[i] = b1 m[i] +
 * (1-b1) g[i], v[i] = b2 v[i] + (1-b2) g[i]^2, then w[i] -= lr mhat / (sqrt(vhat) + eps) with
 * mhat = m[i] / (1 - b1^step), vhat = v[i] / (1 - b2^step). m and v start at 0. */
void optim_adam_apply(double *w, double *m, double *v, const double *g, size_t n, double lr, double b1, double b2,
                      double eps, long step);
/* The paper's defaults: b1 0.9, b2 0.999, eps 1e-8. */
#define OPTIM_ADAM_B1 0.9
#define OPTIM_ADAM_B2 0.999
#define OPTIM_ADAM_EPS 1e-8

#endif

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

#endif

/* optim.c - fixed-rate SGD and Adagrad updates. */
#include "models/optim.h"

#include <math.h>

void optim_sgd_apply(double *w, const double *g, size_t n, double lr)
{
  for (size_t i = 0; i < n; i++)
    w[i] -= lr * g[i];
}

void optim_adagrad_apply(double *w, double *acc, const double *g, size_t n, double gamma)
{
  for (size_t i = 0; i < n; i++) {
    acc[i] += g[i] * g[i];
    if (acc[i] > 0)
      w[i] -= gamma / sqrt(acc[i]) * g[i];
  }
}

/* optim.c - fixed-rate SGD, Adagrad and Adam updates. */
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

void optim_adam_apply(double *w, double *m, double *v, const double *g, size_t n, double lr, double b1, double b2,
                      double eps, long step)
{
  double c1 = 1.0 - pow(b1, (double)step), c2 = 1.0 - pow(b2, (double)step);
  for (size_t i = 0; i < n; i++) {
    m[i] = b1 * m[i] + (1.0 - b1) * g[i];
    v[i] = b2 * v[i] + (1.0 - b2) * g[i] * g[i];
    w[i] -= lr * (m[i] / c1) / (sqrt(v[i] / c2) + eps);
  }
}

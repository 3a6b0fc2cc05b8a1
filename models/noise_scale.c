/* noise_scale.c - the gradient noise scale estimated from batch gradients (noise_scale.h
 * says which estimators and why they are unbiased). */
#include "models/noise_scale.h"

#include <gsl/gsl_blas.h>
#include <math.h>

int noise_scale_estimate(const net *n, const gsl_vector *w, const gsl_matrix *X, const double *y, size_t b,
                         net_ws *ws, gsl_vector *g, noise_scale *out)
{
  size_t m = b ? X->size1 / b : 0;
  if (m < 2 || g->size != net_n_params(n))
    return -1;
  gsl_vector *sum = gsl_vector_calloc(g->size);
  double small_sq = 0; /* sum over batches of |g_b|^2 */
  int rc = 0;
  for (size_t k = 0; k < m && rc == 0; k++) {
    gsl_matrix_const_view rows = gsl_matrix_const_submatrix(X, k * b, 0, b, X->size2);
    double loss;
    rc = net_loss_grad(n, w, &rows.matrix, y + k * b, ws, &loss, g);
    if (rc == 0) {
      double norm = gsl_blas_dnrm2(g);
      small_sq += norm * norm;
      gsl_vector_add(sum, g);
    }
  }
  if (rc == 0) {
    gsl_vector_scale(sum, 1.0 / (double)m); /* the mean of equal batches: the gradient of all B rows */
    double big_norm = gsl_blas_dnrm2(sum), big_sq = big_norm * big_norm;
    double bs = (double)b, B = (double)(m * b);
    small_sq /= (double)m;
    out->grad_sq = (B * big_sq - bs * small_sq) / (B - bs);
    out->trace_sigma = (small_sq - big_sq) / (1.0 / bs - 1.0 / B);
    out->b_simple = out->grad_sq > 0 ? out->trace_sigma / out->grad_sq : INFINITY;
  }
  gsl_vector_free(sum);
  return rc;
}

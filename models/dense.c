/* dense.c - the dense-layer and loss kernels of net and archnet.
 *
 * A dense block is one dgemm forward (Z = 1 b^T + X W^T) and two backward
 * (gW = D^T X, dX = D W). With GSL's CBLAS each dgemm entry is one loop in input
 * order, so a block of a layer's units computes the same bits as the whole layer,
 * which is what makes archnet's partitioned passes equal its reference. */

#include "models/dense.h"
#include "models/mem.h"

#include <math.h>
#include <stdlib.h>
#include <gsl/gsl_blas.h>

int dense_loss_fits(net_loss loss, size_t n_out)
{
  switch (loss) {
  case NET_LOSS_MSE:
  case NET_LOSS_LOGISTIC:
    return n_out == 1;
  case NET_LOSS_SOFTMAX:
    return n_out >= 2;
  default:
    return 0;
  }
}

gsl_matrix **dense_mats_create(size_t L, const size_t *units, size_t rows)
{
  gsl_matrix **m = mem_calloc(L + 1, sizeof *m);
  for (size_t l = 1; l <= L; l++)
    m[l] = mem_matrix(rows, units[l]);
  return m;
}

void dense_mats_free(gsl_matrix **m, size_t L)
{
  if (m == NULL) return;
  for (size_t l = 1; l <= L; l++)
    gsl_matrix_free(m[l]);
  free(m);
}

void dense_forward(const gsl_matrix *X, const gsl_matrix *W, const gsl_vector *b, gsl_matrix *Z)
{
  for (size_t i = 0; i < Z->size1; i++) {
    gsl_vector_view zi = gsl_matrix_row(Z, i);
    gsl_vector_memcpy(&zi.vector, b);
  }
  gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, X, W, 1.0, Z);
}

void dense_bias_grad(const gsl_matrix *D, gsl_vector *gb)
{
  for (size_t j = 0; j < D->size2; j++) {
    double s = 0.0;
    for (size_t i = 0; i < D->size1; i++)
      s += D->data[i * D->tda + j];
    gsl_vector_set(gb, j, s);
  }
}

void dense_backward(const gsl_matrix *X, const gsl_matrix *W, const gsl_matrix *D, gsl_matrix *gW, gsl_vector *gb,
                    double beta, gsl_matrix *dX)
{
  dense_bias_grad(D, gb);
  gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, D, X, 0.0, gW);
  if (dX != NULL) gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, D, W, beta, dX);
}

/* Softmax cross-entropy of one row of logits z (k of them, class c), log-sum-exp
 * shifted by the max; columns [j0, j1) of d, if not NULL, receive (p - onehot) * inv. */
static double softmax_row(const double *z, size_t k, size_t c, double inv, size_t j0, size_t j1, double *d)
{
  double m = z[0], s = 0.0;
  for (size_t j = 1; j < k; j++)
    if (z[j] > m) m = z[j];
  for (size_t j = 0; j < k; j++)
    s += exp(z[j] - m);
  for (size_t j = j0; d != NULL && j < j1; j++) {
    d[j] = exp(z[j] - m) / s;
    if (j == c) d[j] -= 1.0;
    d[j] *= inv;
  }
  return m + log(s) - z[c];
}

double dense_loss(net_loss loss, const gsl_matrix *Z, const double *y, size_t j0, size_t j1, gsl_matrix *D)
{
  size_t rows = Z->size1, k = Z->size2;
  double inv = 1.0 / (double)rows, sum = 0.0;
  for (size_t i = 0; i < rows; i++) {
    const double *z = Z->data + i * Z->tda;
    double *d = D != NULL && j0 < j1 ? D->data + i * D->tda : NULL;
    switch (loss) {
    case NET_LOSS_MSE:
      sum += 0.5 * (z[0] - y[i]) * (z[0] - y[i]);
      if (d) d[0] = (z[0] - y[i]) * inv;
      break;
    case NET_LOSS_LOGISTIC:
      sum += act_bce_from_logit(z[0], y[i]);
      if (d) d[0] = (act_sigmoid(z[0]) - y[i]) * inv;
      break;
    case NET_LOSS_SOFTMAX:
      sum += softmax_row(z, k, act_class_of(y[i], k), inv, j0, j1, d);
      break;
    }
  }
  return sum;
}

int dense_evaluate(net_loss loss, dense_logits_fn logits, void *model, size_t max_batch, const gsl_matrix *X,
                   const double *y, double *mean_loss, double *accuracy)
{
  size_t total = X->size1;
  if (total == 0 || max_batch == 0) return -1;
  double ymean = 0.0;
  if (loss == NET_LOSS_MSE) {
    for (size_t i = 0; i < total; i++)
      ymean += y[i];
    ymean /= (double)total;
  }
  double sum = 0.0, sse = 0.0, sst = 0.0;
  size_t correct = 0;
  for (size_t begin = 0; begin < total; begin += max_batch) {
    size_t rows = total - begin < max_batch ? total - begin : max_batch;
    gsl_matrix_const_view Xc = gsl_matrix_const_submatrix(X, begin, 0, rows, X->size2);
    gsl_matrix_view Z;
    if (logits(model, &Xc.matrix, &Z) != 0) return -1;
    sum += dense_loss(loss, &Z.matrix, y + begin, 0, 0, NULL);
    if (loss != NET_LOSS_MSE) {
      correct += act_count_correct(loss, &Z.matrix, y + begin);
      continue;
    }
    for (size_t i = 0; i < rows; i++) {
      double r = gsl_matrix_get(&Z.matrix, i, 0) - y[begin + i], t = y[begin + i] - ymean;
      sse += r * r;
      sst += t * t;
    }
  }
  *mean_loss = sum / (double)total;
  if (loss != NET_LOSS_MSE)
    *accuracy = (double)correct / (double)total;
  else /* constant targets: R^2 is 1 for an exact fit and 0 otherwise (as in scikit-learn) */
    *accuracy = sst > 0 ? 1.0 - sse / sst : (sse == 0 ? 1.0 : 0.0);
  return 0;
}

/* act.c - activations, the logistic loss and accuracy counting. */
#include "models/act.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

double act_sigmoid(double z)
{
  if (z >= 0)
    return 1.0 / (1.0 + exp(-z));
  double e = exp(z);
  return e / (1.0 + e);
}

void act_apply(net_act act, gsl_matrix *A, size_t u0, size_t u1)
{
  if (act == NET_ACT_IDENTITY)
    return;
  for (size_t i = 0; i < A->size1; i++) {
    double *z = A->data + i * A->tda;
    for (size_t j = u0; j < u1; j++) {
      switch (act) {
      case NET_ACT_SIGMOID: z[j] = act_sigmoid(z[j]); break;
      case NET_ACT_TANH: z[j] = tanh(z[j]); break;
      case NET_ACT_RELU: z[j] = z[j] > 0 ? z[j] : 0.0; break;
      case NET_ACT_IDENTITY: break;
      }
    }
  }
}

void act_mul_deriv(net_act act, const gsl_matrix *A, gsl_matrix *D, size_t u0, size_t u1)
{
  if (act == NET_ACT_IDENTITY)
    return;
  for (size_t i = 0; i < D->size1; i++) {
    const double *a = A->data + i * A->tda;
    double *d = D->data + i * D->tda;
    for (size_t j = u0; j < u1; j++) {
      switch (act) {
      case NET_ACT_SIGMOID: d[j] *= a[j] * (1.0 - a[j]); break;
      case NET_ACT_TANH: d[j] *= 1.0 - a[j] * a[j]; break;
      case NET_ACT_RELU: d[j] = a[j] > 0 ? d[j] : 0.0; break;
      case NET_ACT_IDENTITY: break;
      }
    }
  }
}

double act_bce_from_logit(double z, double y)
{
  return (z > 0 ? z : 0.0) - y * z + log1p(exp(-fabs(z)));
}

size_t act_class_of(double y, size_t k)
{
  if (!(y >= 0 && y < (double)k) || y != floor(y)) {
    fprintf(stderr, "models: softmax label is not a class index 0..k-1\n");
    abort();
  }
  return (size_t)y;
}

size_t act_count_correct(net_loss loss, const gsl_matrix *Z, const double *y)
{
  size_t correct = 0, k = Z->size2;
  for (size_t i = 0; i < Z->size1; i++) {
    const double *z = Z->data + i * Z->tda;
    if (loss == NET_LOSS_LOGISTIC) {
      correct += (z[0] >= 0 ? 1.0 : 0.0) == y[i]; /* p >= 0.5 exactly when the logit is >= 0 */
    } else {
      size_t best = 0;
      for (size_t j = 1; j < k; j++)
        if (z[j] > z[best])
          best = j;
      correct += best == act_class_of(y[i], k);
    }
  }
  return correct;
}

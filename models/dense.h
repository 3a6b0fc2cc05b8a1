#ifndef MODELS_DENSE_H
#define MODELS_DENSE_H
/* dense.h - the one MLP engine that net and archnet share: a dense layer's forward
 * and backward passes on a block of units, the output loss and its delta, and the
 * evaluation over a data set, so that both compute every number the same way. */

#include <stddef.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "models/act.h" /* net_loss */

/* 1 if a last layer of n_out units fits the loss (MSE and logistic: 1 unit; softmax:
 * 2 or more), 0 otherwise and for a value that is no loss. */
int dense_loss_fits(net_loss loss, size_t n_out);

/* A workspace's per-layer matrices m[1..L], rows x units[l] (m[0] is NULL); aborts
 * if out of memory. dense_mats_free(m, L) frees them; NULL is a no-op. */
gsl_matrix **dense_mats_create(size_t L, const size_t *units, size_t rows);
void dense_mats_free(gsl_matrix **m, size_t L);

/* Z = 1 b^T + X W^T for a block of units: Z (rows x units) starts at the biases b (one
 * per unit, any stride), then one dgemm adds each entry's dot product in input order.
 * W is units x inputs with any row stride. Shapes are the caller's to check. */
void dense_forward(const gsl_matrix *X, const gsl_matrix *W, const gsl_vector *b, gsl_matrix *Z);

/* The bias gradient of a block from its deltas D (rows x units): gb[j] = the sum of
 * column j of D from 0 in row order, which is what dgemv of D^T against a ones vector
 * computes with GSL's CBLAS (each product 1.0 * D[i][j] is exact). */
void dense_bias_grad(const gsl_matrix *D, gsl_vector *gb);

/* From the block's deltas D (rows x units, dLoss/dZ) and its input X: the weight
 * gradient gW = D^T X, the bias gradient gb (dense_bias_grad), and, if dX is not NULL,
 * dX = D W + beta dX (beta 0 overwrites, 1 adds the block's terms). */
void dense_backward(const gsl_matrix *X, const gsl_matrix *W, const gsl_matrix *D, gsl_matrix *gW, gsl_vector *gb,
                    double beta, gsl_matrix *dX);

/* Sum over the rows of the logits Z of the per-example losses against the labels y
 * (act.h says what each loss reads). If D is not NULL, its columns [j0, j1) receive
 * d(mean loss)/dZ = (prediction - target) / rows; for MSE and logistic, j0 < j1 means
 * column 0. Softmax shifts each row by its max so that exp never overflows. */
double dense_loss(net_loss loss, const gsl_matrix *Z, const double *y, size_t j0, size_t j1, gsl_matrix *D);

/* The logits of the rows of X (at most the evaluation's batch) through a model into
 * *Z, a view the model owns; returns 0, or -1 if X does not fit. */
typedef int (*dense_logits_fn)(void *model, const gsl_matrix *X, gsl_matrix_view *Z);

/* Mean loss and accuracy of a model over the rows of X in batches of max_batch rows:
 * accuracy is the fraction of right classes (softmax: argmax; logistic: p >= 0.5), and
 * for MSE the coefficient of determination R^2 = 1 - SSE/SST. Returns 0, or -1 if X
 * has no rows, max_batch is 0 or logits fails. */
int dense_evaluate(net_loss loss, dense_logits_fn logits, void *model, size_t max_batch, const gsl_matrix *X,
                   const double *y, double *mean_loss, double *accuracy);

#endif

#ifndef MODELS_ACT_H
#define MODELS_ACT_H
/* act.h - the element-wise pieces that net.c and archnet.c share: activations and
 * their derivatives on a range of columns, the stable logistic loss, and accuracy
 * counting, so that the two implementations cannot drift apart. */

#include <stddef.h>
#include <gsl/gsl_matrix.h>

/* Hidden-layer activations (net.h, archnet.h). */
typedef enum net_act { NET_ACT_IDENTITY, NET_ACT_SIGMOID, NET_ACT_TANH, NET_ACT_RELU } net_act;

/* Output layer and loss:
 *  NET_LOSS_MSE      identity output, 0.5*(f(x)-y)^2, y real (linear regression; needs 1 output)
 *  NET_LOSS_LOGISTIC sigmoid output, binary cross-entropy, y in {0,1} (needs 1 output)
 *  NET_LOSS_SOFTMAX  softmax output, cross-entropy, y = class index 0..k-1 (k >= 2 outputs) */
typedef enum net_loss { NET_LOSS_MSE, NET_LOSS_LOGISTIC, NET_LOSS_SOFTMAX } net_loss;


/* 1 / (1 + e^-z), computed without overflow for either sign of z. */
double act_sigmoid(double z);

/* A := act(A) on columns [u0, u1) of every row. */
void act_apply(net_act act, gsl_matrix *A, size_t u0, size_t u1);

/* D *= act'(z) on columns [u0, u1), with the derivative written in terms of the
 * output a = act(z), which is what the callers keep (relu: a > 0 iff z > 0). */
void act_mul_deriv(net_act act, const gsl_matrix *A, gsl_matrix *D, size_t u0, size_t u1);

/* Binary cross-entropy from the logit z: -y log s(z) - (1-y) log(1 - s(z))
 * = max(z, 0) - y z + log1p(exp(-|z|)), which neither overflows nor loses the tail
 * (log of a rounded 1 - s(z)) for large |z|. */
double act_bce_from_logit(double z, double y);

/* The class index of a softmax label y; aborts unless y is an integer in [0, k). */
size_t act_class_of(double y, size_t k);

/* Examples of the logits Z (rows) whose prediction is right: logistic p >= 0.5
 * (the logit is >= 0) against y in {0, 1}; softmax argmax against the class y. */
size_t act_count_correct(net_loss loss, const gsl_matrix *Z, const double *y);

#endif

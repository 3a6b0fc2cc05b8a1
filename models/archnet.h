#ifndef MODELS_ARCHNET_H
#define MODELS_ARCHNET_H
/* archnet.h - exact numerics of an arch (dense and locally connected layers):
 * the unpartitioned reference gradient, and the per-partition forward, loss and
 * backward steps that DistBelief model parallelism runs (Dean et al. 2012, sec. 3).
 *
 * Parameter layout: for each layer l = 1..L in order, for each unit u of l in unit
 * order ((y*gx + x)*ch + c), the unit's fan-in weights in increasing input-unit
 * order, then its bias. A dense unit's fan-in is all of layer l-1; an LC unit
 * (x, y, c) sees input cells [x*sx, x*sx + rx) x [y*sy, y*sy + ry), all input
 * channels, weight k = (dy*rx + dx)*ch_in + ci (no sharing between units). So the
 * units [u0, u1) of a layer own one contiguous range (archnet_param_range), and a
 * partition's parameters in a layer are one range per run of arch_plan_run.
 * A dense layer is W (n_out x n_in, row stride n_in + 1) interleaved with b: the
 * same numbers as net.h's layout, in a different order. */

#include <stddef.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_vector.h>

#include "models/arch.h"
#include "models/net.h"

typedef struct archnet archnet;
typedef struct archnet_ws archnet_ws;

/* Numerics of a, whose layers after the input use `hidden` except the last, whose
 * units are the logits of `loss` (net.h: MSE and logistic need 1 output unit,
 * softmax 2 or more). Returns NULL if a has no layer after the input, a pooling or
 * LCN layer (timed only), `hidden` is not an activation, or the output does not fit
 * the loss. a must outlive the net
 * and not change while it lives; caller frees with archnet_free. */
archnet *archnet_create(const arch *a, net_act hidden, net_loss loss);
void archnet_free(archnet *n);

const arch *archnet_arch(const archnet *n);
net_loss archnet_get_loss(const archnet *n);
size_t archnet_n_params(const archnet *n);
/* Start of layer l's parameters, 1 <= l <= L; l = L + 1 gives archnet_n_params.
 * Other l abort. */
size_t archnet_layer_offset(const archnet *n, size_t l);
/* Parameters of units [u0, u1) of layer l >= 1 into [*begin, *end); a unit u is
 * [u, u + 1). Aborts if l or the units are out of range or u0 > u1. */
void archnet_param_range(const archnet *n, size_t l, size_t u0, size_t u1, size_t *begin, size_t *end);

/* Glorot-uniform weights U(-g, g), g = sqrt(6 / (fan_in + fan_out)) (Glorot and
 * Bengio 2010, eq. 16), zero biases, drawn from r in parameter order. fan_in is a
 * unit's inputs; fan_out is the mean out-degree of layer l-1's units into layer l,
 * units(l)*fan_in/units(l-1): units(l) for a dense layer, as net_init_params, whose
 * draws this reproduces for dense layers. w has archnet_n_params entries. */
void archnet_init_params(const archnet *n, gsl_rng *r, gsl_vector *w);

/* Scratch for the reference on batches of up to max_batch rows; NULL if n is NULL
 * or max_batch is 0. Caller frees with archnet_ws_free (NULL is a no-op). */
archnet_ws *archnet_ws_create(const archnet *n, size_t max_batch);
void archnet_ws_free(archnet_ws *ws);

/* Unpartitioned reference: mean loss over the batch (rows of X, batch x units(0);
 * labels y as net.h) into *loss and its exact gradient into grad (NULL: loss only).
 * Never allocates. Returns 0, or -1 if a shape does not fit (w and grad must be
 * contiguous). */
int archnet_loss_grad(const archnet *n, const gsl_vector *w, const gsl_matrix *X, const double *y,
                      archnet_ws *ws, double *loss, gsl_vector *grad);
/* Mean loss and accuracy over a data set in batches of the workspace size, as
 * net_evaluate (accuracy: argmax or p >= 0.5; R^2 for MSE). Returns 0 or -1. */
int archnet_evaluate(const archnet *n, const gsl_vector *w, const gsl_matrix *X, const double *y,
                     archnet_ws *ws, double *loss, double *accuracy);

/* ---- Partitioned steps ----
 * Each acts for partition p of plan (made for archnet_arch(n); anything else
 * aborts, as do out-of-range l or p) on full-width matrices: rows = examples,
 * column u = unit u of the layer, all with the same number of rows. p reads only
 * the columns it needs, writes only its own, never allocates, and returns 0, or
 * -1 if a shape does not fit. A matrix holds, per layer l >= 1, A_l = act(Z_l)
 * for hidden layers and A_L = Z_L (the logits) for the output layer; Z is not
 * kept, as activation derivatives are functions of act(z) (net.c does the same).
 * The actors call, for one batch:
 *   forward:  for l = 1..L, every p: archnet_forward_part (after receiving the
 *             halo of A_{l-1}: its columns arch_plan_halo counts);
 *   loss:     gather A_L onto every partition that owns output units (a real
 *             message: softmax needs every logit of a row), then archnet_output_part;
 *   backward: for l = L..1, every p: archnet_backward_part, then each q sums the
 *             contributions to its columns of dA_{l-1} with archnet_sum_parts. */

/* Columns of p's units of layer l (1 <= l <= L) of A_l from A_prev = A_{l-1}
 * (A_0 = X). Reads of A_prev: p's receptive fields (for an LC layer, the units
 * arch_plan_halo counts plus p's own), all of it for a dense layer. Each entry is
 * computed as by archnet_loss_grad, so the forward pass is bit-identical to it. */
int archnet_forward_part(const archnet *n, const arch_plan *plan, size_t l, size_t p, const gsl_vector *w,
                         const gsl_matrix *A_prev, gsl_matrix *A_l);

/* From the gathered logits A_L (all columns), the mean loss of the batch into *loss
 * (the same on every partition, bit-identical to archnet_loss_grad's), and
 * d(mean loss)/dZ_L into p's columns of D_L (only those). */
int archnet_output_part(const archnet *n, const arch_plan *plan, size_t p, const gsl_matrix *A_L,
                        const double *y, double *loss, gsl_matrix *D_L);

/* Backward through p's units of layer l. D_l on entry: p's columns of dLoss/dA_l
 * for a hidden layer, or of dLoss/dZ_L for the output layer (as archnet_output_part
 * leaves them); on return those columns hold dLoss/dZ_l. Writes the gradient of
 * p's units' parameters into grad (only those entries). If dA_prev_part is not
 * NULL (it may be for l = 1) it is overwritten with p's contribution to dLoss/dA_{l-1}:
 * sum over p's units of dZ times their weights, 0 outside p's receptive fields.
 * Reads A_prev as archnet_forward_part does, and p's columns of A_l and D_l. */
int archnet_backward_part(const archnet *n, const arch_plan *plan, size_t l, size_t p, const gsl_vector *w,
                          const gsl_matrix *A_prev, const gsl_matrix *A_l, gsl_matrix *D_l, gsl_vector *grad,
                          gsl_matrix *dA_prev_part);

/* The owner q of units of layer l-1 (2 <= l <= L) adds the contributions parts[p]
 * (full-width, from archnet_backward_part of layer l) into its columns of D_prev,
 * which then hold dLoss/dA_{l-1}, ready for archnet_backward_part: the sum over
 * p = 0..P-1 in rank order (so that sums do not depend on arrival order) of those p that sent one, that is p == q or
 * arch_plan_halo(plan, l, p, q) > 0; parts[p] may be NULL for the others. The
 * first term is copied, so P = 1 reproduces archnet_loss_grad bit for bit. */
int archnet_sum_parts(const archnet *n, const arch_plan *plan, size_t l, size_t q,
                      const gsl_matrix *const *parts, gsl_matrix *D_prev);

#endif

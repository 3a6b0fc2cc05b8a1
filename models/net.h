#ifndef MODELS_NET_H
#define MODELS_NET_H
/* net.h - feed-forward networks (linear, logistic, softmax, MLP) over one
 * contiguous parameter vector, with exact minibatch gradients through BLAS.
 * Parameter layout: for each layer l in order, W_l (n_out x n_in, row-major)
 * followed by b_l (n_out). Any slice of the vector is a valid shard. */

#include <stddef.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_vector.h>

#include "models/act.h" /* net_act, net_loss */

typedef struct net net;
typedef struct net_ws net_ws;

/* Creates a network with n_sizes-1 dense layers: sizes[0] inputs, sizes[n_sizes-1]
 * outputs, hidden layers use `hidden`. Returns NULL if n_sizes < 2, a size is 0, or
 * the output size does not fit the loss (see net_loss). Caller frees with net_free. */
net *net_create(size_t n_sizes, const size_t *sizes, net_act hidden, net_loss loss);
void net_free(net *n);

size_t net_n_params(const net *n);
size_t net_n_layers(const net *n);            /* dense layers = n_sizes - 1 */
size_t net_layer_size(const net *n, size_t i); /* sizes[i], 0 <= i <= n_layers */
size_t net_n_inputs(const net *n);
size_t net_n_outputs(const net *n);
net_loss net_get_loss(const net *n);
/* Offset of layer l's weights in the parameter vector (biases follow the weights). */
size_t net_layer_offset(const net *n, size_t l);

/* Glorot-uniform weights, zero biases, drawn from r in layer order. w has net_n_params. */
void net_init_params(const net *n, gsl_rng *r, gsl_vector *w);

/* Scratch space for batches of up to max_batch examples; one per actor. */
net_ws *net_ws_create(const net *n, size_t max_batch);
void net_ws_free(net_ws *ws);

/* Mean loss over the batch (rows of X, labels y[0..rows-1]) into *loss, and its exact
 * gradient into grad (may be NULL: loss only). Returns 0, or -1 if X's shape does not
 * fit the network or the workspace. */
int net_loss_grad(const net *n, const gsl_vector *w, const gsl_matrix *X, const double *y,
                  net_ws *ws, double *loss, gsl_vector *grad);

/* Mean loss and accuracy over a whole data set, in batches of the workspace size.
 * Accuracy: fraction of correct classes (softmax: argmax; logistic: p >= 0.5); for
 * MSE it is the coefficient of determination R^2 = 1 - SSE/SST. Returns 0 or -1. */
int net_evaluate(const net *n, const gsl_vector *w, const gsl_matrix *X, const double *y,
                 net_ws *ws, double *loss, double *accuracy);

/* Layer-range passes, for pipeline stages that each hold dense layers [first, last)
 * (0 <= first < last <= net_n_layers) of one parameter vector. They run the same BLAS
 * calls per layer as net_loss_grad, so chaining ranges over the whole network gives
 * its gradient bit for bit. Each returns 0, or -1 if a shape does not fit.
 * net_forward_layers: `in` is the range's input (rows x sizes[first]); layer l's output
 * goes into out[l - first] (rows x sizes[l+1]), activated unless l is the network's last
 * layer (then the logits). */
int net_forward_layers(const net *n, const gsl_vector *w, size_t first, size_t last, const gsl_matrix *in,
                       gsl_matrix *const *out);
/* The loss of the logits Z (rows x n_outputs) against y: the sum of the per-example
 * losses into *loss_sum, and d(mean loss over Z's rows)/dZ into D (same shape). */
int net_output_delta(const net *n, const gsl_matrix *Z, const double *y, gsl_matrix *D, double *loss_sum);
/* Backward through [first, last): D[l - first] (rows x sizes[l+1]) is scratch for layer
 * l's delta, and D[last - 1 - first] must hold d(loss)/d(pre-activation of layer last-1)
 * on entry; in and out are as net_forward_layers left them. Writes the range's weight
 * and bias gradients into grad (net_n_params long; other entries untouched) and, when din
 * is not NULL and first > 0, d(loss)/d(pre-activation of layer first-1) into din
 * (rows x sizes[first]), whose activation derivative is taken from in. */
int net_backward_layers(const net *n, const gsl_vector *w, size_t first, size_t last, const gsl_matrix *in,
                        gsl_matrix *const *out, gsl_matrix *const *D, gsl_matrix *din, gsl_vector *grad);

/* Parses "sigmoid|tanh|relu|identity" into *act; returns 0 or -1. */
int net_act_parse(const char *s, net_act *act);
const char *net_act_name(net_act act);

#endif

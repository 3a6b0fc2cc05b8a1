/* net.c - feed-forward networks over one contiguous parameter vector.
 *
 * A batch is the rows of a matrix, so every layer is one dense block of dense.c
 * (one dgemm forward, two backward) over the views of its weights and biases. The
 * workspace holds one activation and one delta matrix per layer for max_batch rows;
 * smaller batches use the top rows through submatrix views, so net_loss_grad never
 * allocates. Losses are means over the batch. */

#include "models/act.h"
#include "models/dense.h"
#include "models/mem.h"
#include "models/net.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

struct net {
  size_t n_layers;  /* dense layers */
  size_t *sizes;    /* n_layers + 1 unit counts */
  size_t *offsets;  /* n_layers + 1: start of W_l; offsets[n_layers] = n_params */
  net_act hidden;
  net_loss loss;
};

struct net_ws {
  size_t max_batch;
  size_t n_layers;
  gsl_matrix **A;  /* A[l], l = 1..n_layers: layer l's output (logits for the last) */
  gsl_matrix **D;  /* D[l]: d(mean loss)/d(pre-activation of layer l) */
};

/* ---- creation and accessors ---- */

net *net_create(size_t n_sizes, const size_t *sizes, net_act hidden, net_loss loss)
{
  if (n_sizes < 2 || sizes == NULL) return NULL;
  if ((unsigned)hidden > NET_ACT_RELU) return NULL;
  for (size_t i = 0; i < n_sizes; i++)
    if (sizes[i] == 0) return NULL;
  if (!dense_loss_fits(loss, sizes[n_sizes - 1])) return NULL;

  net *n = mem_alloc(sizeof *n);
  n->n_layers = n_sizes - 1;
  n->hidden = hidden;
  n->loss = loss;
  n->sizes = mem_alloc(n_sizes * sizeof *n->sizes);
  memcpy(n->sizes, sizes, n_sizes * sizeof *n->sizes);
  n->offsets = mem_alloc(n_sizes * sizeof *n->offsets);
  n->offsets[0] = 0;
  for (size_t l = 0; l < n->n_layers; l++)
    n->offsets[l + 1] = n->offsets[l] + sizes[l + 1] * (sizes[l] + 1);
  return n;
}

void net_free(net *n)
{
  if (n == NULL) return;
  free(n->sizes);
  free(n->offsets);
  free(n);
}

size_t net_n_params(const net *n) { return n->offsets[n->n_layers]; }
size_t net_n_layers(const net *n) { return n->n_layers; }
size_t net_n_inputs(const net *n) { return n->sizes[0]; }
size_t net_n_outputs(const net *n) { return n->sizes[n->n_layers]; }
net_loss net_get_loss(const net *n) { return n->loss; }

size_t net_layer_size(const net *n, size_t i)
{
  if (i > n->n_layers) mem_die("net", "net_layer_size: layer index out of range");
  return n->sizes[i];
}

/* l == n_layers is accepted and gives net_n_params, the end of the last layer. */
size_t net_layer_offset(const net *n, size_t l)
{
  if (l > n->n_layers) mem_die("net", "net_layer_offset: layer index out of range");
  return n->offsets[l];
}

/* Glorot and Bengio, AISTATS 2010, eq. 16: U(-a, a), a = sqrt(6 / (n_in + n_out)). */
void net_init_params(const net *n, gsl_rng *r, gsl_vector *w)
{
  if (w->size != net_n_params(n)) mem_die("net", "net_init_params: w has the wrong size");
  for (size_t l = 0; l < n->n_layers; l++) {
    size_t n_in = n->sizes[l], n_out = n->sizes[l + 1];
    size_t off = n->offsets[l];
    double a = sqrt(6.0 / (double)(n_in + n_out));
    for (size_t k = 0; k < n_in * n_out; k++)
      gsl_vector_set(w, off + k, gsl_ran_flat(r, -a, a));
    for (size_t k = 0; k < n_out; k++)
      gsl_vector_set(w, off + n_in * n_out + k, 0.0);
  }
}

/* ---- workspace ---- */

net_ws *net_ws_create(const net *n, size_t max_batch)
{
  if (n == NULL || max_batch == 0) return NULL;
  net_ws *ws = mem_alloc(sizeof *ws);
  ws->max_batch = max_batch;
  ws->n_layers = n->n_layers;
  ws->A = dense_mats_create(n->n_layers, n->sizes, max_batch);
  ws->D = dense_mats_create(n->n_layers, n->sizes, max_batch);
  return ws;
}

void net_ws_free(net_ws *ws)
{
  if (ws == NULL) return;
  dense_mats_free(ws->A, ws->n_layers);
  dense_mats_free(ws->D, ws->n_layers);
  free(ws);
}

/* ---- forward ---- */

/* Const views are const-qualified typedefs, so helpers return GSL's underlying
 * struct types, as GSL's own view functions do. */
static _gsl_matrix_const_view layer_weights(const net *n, const gsl_vector *w, size_t l)
{
  return gsl_matrix_const_view_array(w->data + n->offsets[l], n->sizes[l + 1], n->sizes[l]);
}

static _gsl_vector_const_view layer_bias(const net *n, const gsl_vector *w, size_t l)
{
  size_t n_in = n->sizes[l], n_out = n->sizes[l + 1];
  return gsl_vector_const_view_array(w->data + n->offsets[l] + n_in * n_out, n_out);
}

/* The top `rows` rows of a workspace matrix. */
static gsl_matrix_view top_rows(gsl_matrix *m, size_t rows)
{
  return gsl_matrix_submatrix(m, 0, 0, rows, m->size2);
}

/* What layer l reads: X for the first layer, layer l-1's output after that. */
static _gsl_matrix_const_view layer_input(const gsl_matrix *X, const net_ws *ws, size_t l)
{
  const gsl_matrix *m = l == 0 ? X : ws->A[l];
  return gsl_matrix_const_submatrix(m, 0, 0, X->size1, m->size2);
}

/* Layer l of the network from its input x into its output o (the logits for the
 * last layer, activated otherwise). */
static void layer_forward(const net *n, const gsl_vector *w, size_t l, const gsl_matrix *x, gsl_matrix *o)
{
  gsl_matrix_const_view W = layer_weights(n, w, l);
  gsl_vector_const_view b = layer_bias(n, w, l);
  dense_forward(x, &W.matrix, &b.vector, o);
  if (l + 1 < n->n_layers) act_apply(n->hidden, o, 0, o->size2);
}

/* Runs X through the network; leaves each layer's output in the workspace and
 * returns a view of the logits (rows x n_outputs). */
static gsl_matrix_view forward(const net *n, const gsl_vector *w, const gsl_matrix *X, net_ws *ws)
{
  size_t rows = X->size1;
  for (size_t l = 0; l < n->n_layers; l++) {
    gsl_matrix_view out = top_rows(ws->A[l + 1], rows);
    gsl_matrix_const_view in = layer_input(X, ws, l);
    layer_forward(n, w, l, &in.matrix, &out.matrix);
  }
  return top_rows(ws->A[n->n_layers], rows);
}

/* ---- backward ---- */

static gsl_matrix_view grad_weights(const net *n, gsl_vector *g, size_t l)
{
  return gsl_matrix_view_array(g->data + n->offsets[l], n->sizes[l + 1], n->sizes[l]);
}

static gsl_vector_view grad_bias(const net *n, gsl_vector *g, size_t l)
{
  size_t n_in = n->sizes[l], n_out = n->sizes[l + 1];
  return gsl_vector_view_array(g->data + n->offsets[l] + n_in * n_out, n_out);
}

/* Layer l's weight and bias gradients from its delta D and input x into grad; then,
 * if Dprev is not NULL, the delta of layer l-1 (whose output x is) into Dprev. */
static void layer_backward(const net *n, const gsl_vector *w, size_t l, const gsl_matrix *x, const gsl_matrix *D,
                           gsl_matrix *Dprev, gsl_vector *grad)
{
  gsl_matrix_view gW = grad_weights(n, grad, l);
  gsl_vector_view gb = grad_bias(n, grad, l);
  gsl_matrix_const_view W = layer_weights(n, w, l);
  dense_backward(x, &W.matrix, D, &gW.matrix, &gb.vector, 0.0, Dprev);
  if (Dprev != NULL) act_mul_deriv(n->hidden, x, Dprev, 0, Dprev->size2);
}

/* Expects D[n_layers] to hold d(mean loss)/d(logits); fills grad layer by layer
 * from the top, overwriting D[l] with the delta of each hidden layer. */
static void backward(const net *n, const gsl_vector *w, const gsl_matrix *X, net_ws *ws, gsl_vector *grad)
{
  size_t rows = X->size1;
  for (size_t l = n->n_layers; l-- > 0;) {
    gsl_matrix_view D = top_rows(ws->D[l + 1], rows);
    gsl_matrix_const_view in = layer_input(X, ws, l);
    gsl_matrix_view Dprev = top_rows(ws->D[l > 0 ? l : 1], rows);
    layer_backward(n, w, l, &in.matrix, &D.matrix, l > 0 ? &Dprev.matrix : NULL, grad);
  }
}

/* ---- layer ranges (pipeline stages) ---- */

static int range_fits(const net *n, const gsl_vector *w, size_t first, size_t last, const gsl_matrix *in)
{
  return first < last && last <= n->n_layers && w->size == net_n_params(n) && w->stride == 1 && in->size1 > 0 &&
         in->size2 == n->sizes[first];
}

int net_forward_layers(const net *n, const gsl_vector *w, size_t first, size_t last, const gsl_matrix *in,
                       gsl_matrix *const *out)
{
  if (!range_fits(n, w, first, last, in)) return -1;
  size_t rows = in->size1;
  for (size_t l = first; l < last; l++)
    if (out[l - first]->size1 != rows || out[l - first]->size2 != n->sizes[l + 1]) return -1;
  for (size_t l = first; l < last; l++)
    layer_forward(n, w, l, l == first ? in : out[l - 1 - first], out[l - first]);
  return 0;
}

int net_output_delta(const net *n, const gsl_matrix *Z, const double *y, gsl_matrix *D, double *loss_sum)
{
  if (Z->size2 != net_n_outputs(n) || D->size1 != Z->size1 || D->size2 != Z->size2) return -1;
  *loss_sum = dense_loss(n->loss, Z, y, 0, Z->size2, D);
  return 0;
}

int net_backward_layers(const net *n, const gsl_vector *w, size_t first, size_t last, const gsl_matrix *in,
                        gsl_matrix *const *out, gsl_matrix *const *D, gsl_matrix *din, gsl_vector *grad)
{
  if (!range_fits(n, w, first, last, in) || grad->size != net_n_params(n) || grad->stride != 1) return -1;
  size_t rows = in->size1;
  for (size_t l = first; l < last; l++)
    if (D[l - first]->size1 != rows || D[l - first]->size2 != n->sizes[l + 1] || out[l - first]->size1 != rows)
      return -1;
  if (din != NULL && (din->size1 != rows || din->size2 != n->sizes[first])) return -1;
  for (size_t l = last; l-- > first;) {
    gsl_matrix *Dprev = l > first ? D[l - 1 - first] : din;
    layer_backward(n, w, l, l == first ? in : out[l - 1 - first], D[l - first], l > 0 ? Dprev : NULL, grad);
  }
  return 0;
}

/* ---- public entry points ---- */

static int shapes_fit(const net *n, const gsl_vector *w, const gsl_matrix *X, const net_ws *ws,
                      const gsl_vector *grad)
{
  if (ws == NULL || ws->n_layers != n->n_layers) return 0;
  for (size_t l = 1; l <= n->n_layers; l++)
    if (ws->A[l]->size2 != n->sizes[l]) return 0;
  if (X->size1 == 0 || X->size1 > ws->max_batch || X->size2 != n->sizes[0]) return 0;
  /* Layer views index w->data directly, so the vectors must be contiguous. */
  if (w->size != net_n_params(n) || w->stride != 1) return 0;
  if (grad != NULL && (grad->size != net_n_params(n) || grad->stride != 1)) return 0;
  return 1;
}

int net_loss_grad(const net *n, const gsl_vector *w, const gsl_matrix *X, const double *y,
                  net_ws *ws, double *loss, gsl_vector *grad)
{
  if (!shapes_fit(n, w, X, ws, grad)) return -1;
  gsl_matrix_view Z = forward(n, w, X, ws);
  gsl_matrix_view D = top_rows(ws->D[n->n_layers], X->size1);
  double sum = dense_loss(n->loss, &Z.matrix, y, 0, Z.matrix.size2, grad != NULL ? &D.matrix : NULL);
  *loss = sum / (double)X->size1;
  if (grad != NULL) backward(n, w, X, ws, grad);
  return 0;
}

/* What net_evaluate hands dense_evaluate: the network, its weights and workspace. */
typedef struct eval_ctx {
  const net *n;
  const gsl_vector *w;
  net_ws *ws;
} eval_ctx;

static int eval_logits(void *model, const gsl_matrix *X, gsl_matrix_view *Z)
{
  eval_ctx *c = model;
  if (!shapes_fit(c->n, c->w, X, c->ws, NULL)) return -1;
  *Z = forward(c->n, c->w, X, c->ws);
  return 0;
}

int net_evaluate(const net *n, const gsl_vector *w, const gsl_matrix *X, const double *y,
                 net_ws *ws, double *loss, double *accuracy)
{
  if (ws == NULL || X->size2 != n->sizes[0]) return -1;
  eval_ctx c = {n, w, ws};
  return dense_evaluate(n->loss, eval_logits, &c, ws->max_batch, X, y, loss, accuracy);
}

/* ---- names ---- */

static const char *const act_names[] = {"identity", "sigmoid", "tanh", "relu"};

int net_act_parse(const char *s, net_act *act)
{
  for (int i = NET_ACT_IDENTITY; i <= NET_ACT_RELU; i++) {
    if (strcmp(s, act_names[i]) == 0) {
      *act = (net_act)i;
      return 0;
    }
  }
  return -1;
}

const char *net_act_name(net_act act)
{
  if ((unsigned)act > NET_ACT_RELU) mem_die("net", "invalid activation");
  return act_names[act];
}

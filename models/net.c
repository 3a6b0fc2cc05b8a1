/* net.c - feed-forward networks over one contiguous parameter vector.
 *
 * A batch is the rows of a matrix, so every layer is one dgemm forward
 * (Z = A W^T + 1 b^T) and two backward (dW = D^T A, dA = D W). The workspace
 * holds one activation and one delta matrix per layer for max_batch rows;
 * smaller batches use the top rows through submatrix views, so
 * net_loss_grad never allocates. Losses are means over the batch. */

#include "models/act.h"
#include "models/mem.h"
#include "models/net.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_blas.h>
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
  gsl_vector *ones; /* max_batch ones, to sum delta rows into bias gradients */
};

/* ---- creation and accessors ---- */

net *net_create(size_t n_sizes, const size_t *sizes, net_act hidden, net_loss loss)
{
  if (n_sizes < 2 || sizes == NULL) return NULL;
  if ((unsigned)hidden > NET_ACT_RELU) return NULL;
  for (size_t i = 0; i < n_sizes; i++)
    if (sizes[i] == 0) return NULL;
  size_t n_out = sizes[n_sizes - 1];
  switch (loss) {
  case NET_LOSS_MSE:
  case NET_LOSS_LOGISTIC:
    if (n_out != 1) return NULL;
    break;
  case NET_LOSS_SOFTMAX:
    if (n_out < 2) return NULL;
    break;
  default:
    return NULL;
  }

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
  ws->A = mem_calloc(n->n_layers + 1, sizeof *ws->A);
  ws->D = mem_calloc(n->n_layers + 1, sizeof *ws->D);
  for (size_t l = 1; l <= n->n_layers; l++) {
    ws->A[l] = mem_matrix(max_batch, n->sizes[l]);
    ws->D[l] = mem_matrix(max_batch, n->sizes[l]);
  }
  ws->ones = gsl_vector_alloc(max_batch);
  if (ws->ones == NULL) mem_die("net", "out of memory");
  gsl_vector_set_all(ws->ones, 1.0);
  return ws;
}

void net_ws_free(net_ws *ws)
{
  if (ws == NULL) return;
  for (size_t l = 1; l <= ws->n_layers; l++) {
    gsl_matrix_free(ws->A[l]);
    gsl_matrix_free(ws->D[l]);
  }
  free(ws->A);
  free(ws->D);
  gsl_vector_free(ws->ones);
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

/* Runs X through the network; leaves each layer's output in the workspace and
 * returns a view of the logits (rows x n_outputs). */
static gsl_matrix_view forward(const net *n, const gsl_vector *w, const gsl_matrix *X, net_ws *ws)
{
  size_t rows = X->size1;
  for (size_t l = 0; l < n->n_layers; l++) {
    gsl_matrix_view out = top_rows(ws->A[l + 1], rows);
    gsl_matrix_const_view in = layer_input(X, ws, l);
    gsl_matrix_const_view W = layer_weights(n, w, l);
    gsl_vector_const_view b = layer_bias(n, w, l);
    for (size_t i = 0; i < rows; i++) {
      gsl_vector_view zi = gsl_matrix_row(&out.matrix, i);
      gsl_vector_memcpy(&zi.vector, &b.vector);
    }
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, &in.matrix, &W.matrix, 1.0, &out.matrix);
    if (l + 1 < n->n_layers) act_apply(n->hidden, &out.matrix, 0, out.matrix.size2);
  }
  return top_rows(ws->A[n->n_layers], rows);
}

/* ---- output layer ---- */

/* Softmax cross-entropy of one row of logits, log-sum-exp shifted by the max so
 * exp never overflows. If p is not NULL it receives the softmax of the row. */
static double softmax_xent(const double *z, size_t k, size_t c, double *p)
{
  double m = z[0];
  for (size_t j = 1; j < k; j++)
    if (z[j] > m) m = z[j];
  double s = 0.0;
  for (size_t j = 0; j < k; j++) {
    double e = exp(z[j] - m);
    s += e;
    if (p != NULL) p[j] = e;
  }
  for (size_t j = 0; p != NULL && j < k; j++)
    p[j] /= s;
  return m + log(s) - z[c];
}

/* Sum of the per-example losses of the logits Z. If D is not NULL it receives
 * d(mean loss)/dZ, i.e. (prediction - target) / rows for all three losses. */
static double output_loss(const net *n, const gsl_matrix *Z, const double *y, gsl_matrix *D)
{
  size_t rows = Z->size1, k = Z->size2;
  double inv = 1.0 / (double)rows, sum = 0.0;
  for (size_t i = 0; i < rows; i++) {
    const double *z = Z->data + i * Z->tda;
    double *d = D != NULL ? D->data + i * D->tda : NULL;
    switch (n->loss) {
    case NET_LOSS_MSE:
      sum += 0.5 * (z[0] - y[i]) * (z[0] - y[i]);
      if (d) d[0] = (z[0] - y[i]) * inv;
      break;
    case NET_LOSS_LOGISTIC:
      sum += act_bce_from_logit(z[0], y[i]);
      if (d) d[0] = (act_sigmoid(z[0]) - y[i]) * inv;
      break;
    case NET_LOSS_SOFTMAX: {
      size_t c = act_class_of(y[i], k);
      sum += softmax_xent(z, k, c, d);
      if (d) {
        d[c] -= 1.0;
        for (size_t j = 0; j < k; j++)
          d[j] *= inv;
      }
      break;
    }
    }
  }
  return sum;
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

/* Expects D[n_layers] to hold d(mean loss)/d(logits); fills grad layer by layer
 * from the top, overwriting D[l] with the delta of each hidden layer. */
static void backward(const net *n, const gsl_vector *w, const gsl_matrix *X, net_ws *ws, gsl_vector *grad)
{
  size_t rows = X->size1;
  gsl_vector_const_view ones = gsl_vector_const_subvector(ws->ones, 0, rows);
  for (size_t l = n->n_layers; l-- > 0;) {
    gsl_matrix_view D = top_rows(ws->D[l + 1], rows);
    gsl_matrix_const_view in = layer_input(X, ws, l);
    gsl_matrix_view gW = grad_weights(n, grad, l);
    gsl_vector_view gb = grad_bias(n, grad, l);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &D.matrix, &in.matrix, 0.0, &gW.matrix);
    gsl_blas_dgemv(CblasTrans, 1.0, &D.matrix, &ones.vector, 0.0, &gb.vector);
    if (l == 0) break;
    gsl_matrix_view Dprev = top_rows(ws->D[l], rows);
    gsl_matrix_const_view W = layer_weights(n, w, l);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &D.matrix, &W.matrix, 0.0, &Dprev.matrix);
    act_mul_deriv(n->hidden, &in.matrix, &Dprev.matrix, 0, Dprev.matrix.size2);
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
  for (size_t l = first; l < last; l++) { /* as forward() */
    gsl_matrix *o = out[l - first];
    const gsl_matrix *x = l == first ? in : out[l - 1 - first];
    gsl_matrix_const_view W = layer_weights(n, w, l);
    gsl_vector_const_view b = layer_bias(n, w, l);
    for (size_t i = 0; i < rows; i++) {
      gsl_vector_view zi = gsl_matrix_row(o, i);
      gsl_vector_memcpy(&zi.vector, &b.vector);
    }
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, x, &W.matrix, 1.0, o);
    if (l + 1 < n->n_layers) act_apply(n->hidden, o, 0, o->size2);
  }
  return 0;
}

int net_output_delta(const net *n, const gsl_matrix *Z, const double *y, gsl_matrix *D, double *loss_sum)
{
  if (Z->size2 != net_n_outputs(n) || D->size1 != Z->size1 || D->size2 != Z->size2) return -1;
  *loss_sum = output_loss(n, Z, y, D);
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
  gsl_vector *ones = gsl_vector_alloc(rows);
  if (ones == NULL) mem_die("net", "out of memory");
  gsl_vector_set_all(ones, 1.0);
  for (size_t l = last; l-- > first;) { /* as backward() */
    const gsl_matrix *Dl = D[l - first];
    const gsl_matrix *x = l == first ? in : out[l - 1 - first];
    gsl_matrix_view gW = grad_weights(n, grad, l);
    gsl_vector_view gb = grad_bias(n, grad, l);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, Dl, x, 0.0, &gW.matrix);
    gsl_blas_dgemv(CblasTrans, 1.0, Dl, ones, 0.0, &gb.vector);
    gsl_matrix *Dprev = l > first ? D[l - 1 - first] : din;
    if (l == 0 || Dprev == NULL) break;
    gsl_matrix_const_view W = layer_weights(n, w, l);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, Dl, &W.matrix, 0.0, Dprev);
    act_mul_deriv(n->hidden, x, Dprev, 0, Dprev->size2);
  }
  gsl_vector_free(ones);
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
  double sum = output_loss(n, &Z.matrix, y, grad != NULL ? &D.matrix : NULL);
  *loss = sum / (double)X->size1;
  if (grad != NULL) backward(n, w, X, ws, grad);
  return 0;
}

int net_evaluate(const net *n, const gsl_vector *w, const gsl_matrix *X, const double *y,
                 net_ws *ws, double *loss, double *accuracy)
{
  size_t total = X->size1;
  if (ws == NULL || total == 0 || X->size2 != n->sizes[0]) return -1;
  double ymean = 0.0;
  if (n->loss == NET_LOSS_MSE) {
    for (size_t i = 0; i < total; i++)
      ymean += y[i];
    ymean /= (double)total;
  }
  double sum = 0.0, sse = 0.0, sst = 0.0;
  size_t correct = 0;
  for (size_t begin = 0; begin < total; begin += ws->max_batch) {
    size_t rows = total - begin < ws->max_batch ? total - begin : ws->max_batch;
    gsl_matrix_const_view Xc = gsl_matrix_const_submatrix(X, begin, 0, rows, X->size2);
    if (!shapes_fit(n, w, &Xc.matrix, ws, NULL)) return -1;
    gsl_matrix_view Z = forward(n, w, &Xc.matrix, ws);
    sum += output_loss(n, &Z.matrix, y + begin, NULL);
    if (n->loss != NET_LOSS_MSE) {
      correct += act_count_correct(n->loss, &Z.matrix, y + begin);
      continue;
    }
    for (size_t i = 0; i < rows; i++) {
      double r = gsl_matrix_get(&Z.matrix, i, 0) - y[begin + i], t = y[begin + i] - ymean;
      sse += r * r;
      sst += t * t;
    }
  }
  *loss = sum / (double)total;
  if (n->loss != NET_LOSS_MSE)
    *accuracy = (double)correct / (double)total;
  else /* constant targets: R^2 is 1 for an exact fit and 0 otherwise (as in scikit-learn) */
    *accuracy = sst > 0 ? 1.0 - sse / sst : (sse == 0 ? 1.0 : 0.0);
  return 0;
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

/* archnet.c - exact numerics of dense and locally connected nets, whole or by
 * partition.
 *
 * Every step works on a range of consecutive units [u0, u1) of one layer, and
 * both the reference (one range: the whole layer) and a partition (one range per
 * run of arch_plan_run) call the same kernels. A dense range is net's dense block
 * (dense.c) on views of the interleaved layout (W has row stride n_in + 1);
 * an LC range is plain loops per unit, as LC weights are not shared and these nets
 * are small. Each pre-activation is one dot product in input order, whatever the
 * range, so partitioned forward passes equal the reference bit for bit (with GSL's
 * CBLAS, which computes each dgemm entry as one loop; other BLAS may block
 * differently). Parameter gradients are per unit, so they agree as well, given
 * equal deltas. Only dLoss/dA_{l-1} is a sum across partitions: a partition adds
 * its own units' terms and the owner adds partitions in rank order, which
 * associates the sum differently from the reference's single pass over all units,
 * so below the top layer partitioned gradients differ by rounding (~1e-16 relative)
 * unless P = 1 or no input unit feeds two partitions. */

#include "models/archnet.h"
#include "models/dense.h"
#include "models/mem.h"

#include "models/act.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

struct archnet {
  const arch *a;
  size_t L;        /* layers after the input; layer L is the output */
  size_t *units;   /* L + 1 */
  size_t *fan;     /* L + 1: inputs per unit (fan[0] = 0) */
  size_t *offset;  /* L + 2: offset[l] = start of layer l, offset[L + 1] = n_params */
  net_act hidden;
  net_loss loss;
};

struct archnet_ws {
  size_t max_batch, L;
  gsl_matrix **A; /* A[l], l = 1..L: act(Z_l), the logits for l = L */
  gsl_matrix **D; /* D[l]: dLoss/dA_l, turned into dLoss/dZ_l by the backward pass */
};

/* ---- creation and layout ---- */

archnet *archnet_create(const arch *a, net_act hidden, net_loss loss)
{
  if (a == NULL || arch_n_layers(a) < 2 || (unsigned)hidden > NET_ACT_RELU) return NULL;
  size_t L = arch_n_layers(a) - 1;
  if (!dense_loss_fits(loss, arch_units(a, L))) return NULL;
  for (size_t l = 1; l <= L; l++) { /* no numerics for pooling and LCN (the virtual image nets') */
    arch_kind k = arch_layer_at(a, l)->kind;
    if (k != ARCH_DENSE && k != ARCH_LOCAL) return NULL;
  }
  archnet *n = mem_calloc(1, sizeof *n);
  *n = (archnet){a, L, mem_calloc(L + 1, sizeof(size_t)), mem_calloc(L + 1, sizeof(size_t)),
                 mem_calloc(L + 2, sizeof(size_t)), hidden, loss};
  for (size_t l = 0; l <= L; l++) {
    const arch_layer *A = arch_layer_at(a, l);
    n->units[l] = arch_units(a, l);
    if (l > 0) n->fan[l] = A->kind == ARCH_DENSE ? n->units[l - 1] : A->rx * A->ry * arch_layer_at(a, l - 1)->ch;
  }
  for (size_t l = 1; l <= L; l++)
    n->offset[l + 1] = n->offset[l] + n->units[l] * (n->fan[l] + 1);
  return n;
}

void archnet_free(archnet *n)
{
  if (n == NULL) return;
  free(n->units);
  free(n->fan);
  free(n->offset);
  free(n);
}

const arch *archnet_arch(const archnet *n) { return n->a; }
net_loss archnet_get_loss(const archnet *n) { return n->loss; }
size_t archnet_n_params(const archnet *n) { return n->offset[n->L + 1]; }

size_t archnet_layer_offset(const archnet *n, size_t l)
{
  if (l == 0 || l > n->L + 1) mem_die("archnet", "archnet_layer_offset: layer index out of range");
  return n->offset[l];
}

void archnet_param_range(const archnet *n, size_t l, size_t u0, size_t u1, size_t *begin, size_t *end)
{
  if (l == 0 || l > n->L || u0 > u1 || u1 > n->units[l]) mem_die("archnet", "archnet_param_range: out of range");
  *begin = n->offset[l] + u0 * (n->fan[l] + 1);
  *end = n->offset[l] + u1 * (n->fan[l] + 1);
}

/* Glorot and Bengio, AISTATS 2010, eq. 16, with the layer's mean fan-out (see archnet.h). */
void archnet_init_params(const archnet *n, gsl_rng *r, gsl_vector *w)
{
  if (w->size != archnet_n_params(n)) mem_die("archnet", "archnet_init_params: w has the wrong size");
  for (size_t l = 1; l <= n->L; l++) {
    double fan_in = (double)n->fan[l];
    double fan_out = (double)n->units[l] * fan_in / (double)n->units[l - 1];
    double g = sqrt(6.0 / (fan_in + fan_out));
    size_t at = n->offset[l];
    for (size_t u = 0; u < n->units[l]; u++) {
      for (size_t k = 0; k < n->fan[l]; k++)
        gsl_vector_set(w, at++, gsl_ran_flat(r, -g, g));
      gsl_vector_set(w, at++, 0.0);
    }
  }
}

/* ---- workspace ---- */

archnet_ws *archnet_ws_create(const archnet *n, size_t max_batch)
{
  if (n == NULL || max_batch == 0) return NULL;
  archnet_ws *ws = mem_calloc(1, sizeof *ws);
  ws->max_batch = max_batch;
  ws->L = n->L;
  ws->A = dense_mats_create(n->L, n->units, max_batch);
  ws->D = dense_mats_create(n->L, n->units, max_batch);
  return ws;
}

void archnet_ws_free(archnet_ws *ws)
{
  if (ws == NULL) return;
  dense_mats_free(ws->A, ws->L);
  dense_mats_free(ws->D, ws->L);
  free(ws);
}

/* ---- kernels on units [u0, u1) of layer l ---- */

/* First input unit of LC unit u's window row dy; the row's rx*ch_in inputs are
 * consecutive units, in the order of the unit's weights. */
static size_t lc_window_row(const arch *a, size_t l, size_t u, size_t dy)
{
  const arch_layer *L = arch_layer_at(a, l), *in = arch_layer_at(a, l - 1);
  size_t cell = u / L->ch, x = cell % L->gx, y = cell / L->gx;
  return ((y * L->sy + dy) * in->gx + x * L->sx) * in->ch;
}

/* A columns [u0, u1) = act(Z) (Z for the output layer), Z = A_prev W^T + b. */
static void layer_forward(const archnet *n, size_t l, size_t u0, size_t u1, const double *w,
                          const gsl_matrix *Ap, gsl_matrix *A)
{
  size_t fan = n->fan[l], rows = A->size1, nb = u1 - u0;
  const double *wl = w + n->offset[l] + u0 * (fan + 1);
  if (nb == 0) return;
  if (arch_layer_at(n->a, l)->kind == ARCH_DENSE) {
    gsl_matrix_view Z = gsl_matrix_submatrix(A, 0, u0, rows, nb);
    gsl_matrix_const_view W = gsl_matrix_const_view_array_with_tda(wl, nb, fan, fan + 1);
    gsl_vector_const_view b = gsl_vector_const_view_array_with_stride(wl + fan, fan + 1, nb);
    dense_forward(Ap, &W.matrix, &b.vector, &Z.matrix);
  } else {
    const arch_layer *L = arch_layer_at(n->a, l);
    size_t run = L->rx * arch_layer_at(n->a, l - 1)->ch;
    for (size_t u = u0; u < u1; u++) {
      const double *wu = wl + (u - u0) * (fan + 1);
      for (size_t i = 0; i < rows; i++) {
        const double *a = Ap->data + i * Ap->tda;
        double t = 0.0;
        for (size_t dy = 0; dy < L->ry; dy++) {
          const double *ar = a + lc_window_row(n->a, l, u, dy), *wr = wu + dy * run;
          for (size_t k = 0; k < run; k++)
            t += ar[k] * wr[k];
        }
        A->data[i * A->tda + u] = wu[fan] + t;
      }
    }
  }
  if (l < n->L) act_apply(n->hidden, A, u0, u1);
}

/* Gradients of units [u0, u1) from their deltas D (dLoss/dZ) into grad, and their
 * terms D W added into dAp (if not NULL), unit by unit in increasing order. */
static void layer_backward(const archnet *n, size_t l, size_t u0, size_t u1, const double *w,
                           const gsl_matrix *Ap, const gsl_matrix *D, double *grad, gsl_matrix *dAp)
{
  size_t fan = n->fan[l], rows = D->size1, nb = u1 - u0;
  const double *wl = w + n->offset[l] + u0 * (fan + 1);
  double *gl = grad + n->offset[l] + u0 * (fan + 1);
  if (nb == 0) return;
  gsl_matrix_const_view Db = gsl_matrix_const_submatrix(D, 0, u0, rows, nb);
  gsl_vector_view gb = gsl_vector_view_array_with_stride(gl + fan, fan + 1, nb);
  if (arch_layer_at(n->a, l)->kind == ARCH_DENSE) {
    gsl_matrix_view gW = gsl_matrix_view_array_with_tda(gl, nb, fan, fan + 1);
    gsl_matrix_const_view W = gsl_matrix_const_view_array_with_tda(wl, nb, fan, fan + 1);
    dense_backward(Ap, &W.matrix, &Db.matrix, &gW.matrix, &gb.vector, 1.0, dAp);
    return;
  }
  dense_bias_grad(&Db.matrix, &gb.vector);
  const arch_layer *L = arch_layer_at(n->a, l);
  size_t run = L->rx * arch_layer_at(n->a, l - 1)->ch;
  for (size_t u = u0; u < u1; u++) {
    const double *wu = wl + (u - u0) * (fan + 1);
    double *gu = gl + (u - u0) * (fan + 1);
    for (size_t k = 0; k < fan; k++)
      gu[k] = 0.0;
    for (size_t i = 0; i < rows; i++) {
      double d = D->data[i * D->tda + u];
      const double *a = Ap->data + i * Ap->tda;
      double *da = dAp != NULL ? dAp->data + i * dAp->tda : NULL;
      for (size_t dy = 0; dy < L->ry; dy++) {
        size_t at = lc_window_row(n->a, l, u, dy);
        for (size_t k = 0; k < run; k++) {
          gu[dy * run + k] += d * a[at + k];
          if (da != NULL) da[at + k] += d * wu[dy * run + k];
        }
      }
    }
  }
}

/* ---- reference ---- */

static gsl_matrix_view top_rows(gsl_matrix *m, size_t rows)
{
  return gsl_matrix_submatrix(m, 0, 0, rows, m->size2);
}

static int vector_fits(const archnet *n, const gsl_vector *v)
{
  return v == NULL || (v->size == archnet_n_params(n) && v->stride == 1);
}

static int ws_fits(const archnet *n, const archnet_ws *ws, const gsl_matrix *X)
{
  if (ws == NULL || ws->L != n->L) return 0;
  for (size_t l = 1; l <= n->L; l++)
    if (ws->A[l]->size2 != n->units[l]) return 0;
  return X->size1 > 0 && X->size1 <= ws->max_batch && X->size2 == n->units[0];
}

/* Layer l's input: X for l = 1, the workspace's A[l-1] after that. */
static _gsl_matrix_const_view ws_input(const archnet *n, const gsl_matrix *X, const archnet_ws *ws, size_t l)
{
  const gsl_matrix *m = l == 1 ? X : ws->A[l - 1];
  return gsl_matrix_const_submatrix(m, 0, 0, X->size1, n->units[l - 1]);
}

/* Runs the rows of X through the network; returns a view of the logits. */
static gsl_matrix_view forward(const archnet *n, const gsl_vector *w, const gsl_matrix *X, archnet_ws *ws)
{
  for (size_t l = 1; l <= n->L; l++) {
    gsl_matrix_view out = top_rows(ws->A[l], X->size1);
    gsl_matrix_const_view in = ws_input(n, X, ws, l);
    layer_forward(n, l, 0, n->units[l], w->data, &in.matrix, &out.matrix);
  }
  return top_rows(ws->A[n->L], X->size1);
}

int archnet_loss_grad(const archnet *n, const gsl_vector *w, const gsl_matrix *X, const double *y,
                      archnet_ws *ws, double *loss, gsl_vector *grad)
{
  if (!ws_fits(n, ws, X) || !vector_fits(n, w) || w == NULL || !vector_fits(n, grad)) return -1;
  size_t rows = X->size1;
  gsl_matrix_view Z = forward(n, w, X, ws);
  gsl_matrix_view DL = top_rows(ws->D[n->L], rows);
  *loss = dense_loss(n->loss, &Z.matrix, y, 0, n->units[n->L], grad != NULL ? &DL.matrix : NULL) / (double)rows;
  if (grad == NULL) return 0;
  for (size_t l = n->L; l >= 1; l--) {
    gsl_matrix_view D = top_rows(ws->D[l], rows);
    if (l < n->L) {
      gsl_matrix_view A = top_rows(ws->A[l], rows);
      act_mul_deriv(n->hidden, &A.matrix, &D.matrix, 0, n->units[l]);
    }
    gsl_matrix_const_view in = ws_input(n, X, ws, l);
    /* D[l-1] is zeroed, then receives D_l W: dLoss/dA_{l-1}. */
    gsl_matrix_view Dp = top_rows(ws->D[l > 1 ? l - 1 : l], rows);
    if (l > 1) gsl_matrix_set_zero(&Dp.matrix);
    layer_backward(n, l, 0, n->units[l], w->data, &in.matrix, &D.matrix, grad->data, l > 1 ? &Dp.matrix : NULL);
  }
  return 0;
}

/* What archnet_evaluate hands dense_evaluate: the net, its weights and workspace. */
typedef struct eval_ctx {
  const archnet *n;
  const gsl_vector *w;
  archnet_ws *ws;
} eval_ctx;

static int eval_logits(void *model, const gsl_matrix *X, gsl_matrix_view *Z)
{
  eval_ctx *c = model;
  if (!ws_fits(c->n, c->ws, X)) return -1;
  *Z = forward(c->n, c->w, X, c->ws);
  return 0;
}

int archnet_evaluate(const archnet *n, const gsl_vector *w, const gsl_matrix *X, const double *y,
                     archnet_ws *ws, double *loss, double *accuracy)
{
  if (ws == NULL || X->size2 != n->units[0] || w == NULL || !vector_fits(n, w)) return -1;
  eval_ctx c = {n, w, ws};
  return dense_evaluate(n->loss, eval_logits, &c, ws->max_batch, X, y, loss, accuracy);
}

/* ---- partitioned steps ---- */

static void part_check(const archnet *n, const arch_plan *plan, size_t l, size_t p, const char *who)
{
  if (arch_plan_arch(plan) != n->a || l == 0 || l > n->L || p >= arch_plan_parts(plan)) {
    fprintf(stderr, "archnet: %s: plan of another arch, or layer %zu or partition %zu out of range\n", who, l, p);
    abort();
  }
}

/* Full-width matrices of layers l-1 (may be NULL) and l (may be NULL), equal rows. */
static int widths_fit(const archnet *n, size_t l, const gsl_matrix *prev, const gsl_matrix *cur, size_t rows)
{
  if (rows == 0) return 0;
  if (prev != NULL && (prev->size1 != rows || prev->size2 != n->units[l - 1])) return 0;
  return cur == NULL || (cur->size1 == rows && cur->size2 == n->units[l]);
}

int archnet_forward_part(const archnet *n, const arch_plan *plan, size_t l, size_t p, const gsl_vector *w,
                         const gsl_matrix *A_prev, gsl_matrix *A_l)
{
  part_check(n, plan, l, p, "archnet_forward_part");
  if (w == NULL || !vector_fits(n, w) || !widths_fit(n, l, A_prev, A_l, A_prev->size1)) return -1;
  for (size_t k = 0, runs = arch_plan_runs(plan, l, p); k < runs; k++) {
    size_t u0, u1;
    arch_plan_run(plan, l, p, k, &u0, &u1);
    layer_forward(n, l, u0, u1, w->data, A_prev, A_l);
  }
  return 0;
}

int archnet_output_part(const archnet *n, const arch_plan *plan, size_t p, const gsl_matrix *A_L,
                        const double *y, double *loss, gsl_matrix *D_L)
{
  size_t L = n->L;
  part_check(n, plan, L, p, "archnet_output_part");
  if (!widths_fit(n, L, NULL, A_L, A_L->size1) || !widths_fit(n, L, NULL, D_L, A_L->size1)) return -1;
  size_t j0 = 0, j1 = 0;
  if (arch_plan_runs(plan, L, p) > 0) arch_plan_run(plan, L, p, 0, &j0, &j1);
  if (arch_plan_runs(plan, L, p) > 1) mem_die("archnet", "archnet_output_part: a tiled output layer");
  *loss = dense_loss(n->loss, A_L, y, j0, j1, D_L) / (double)A_L->size1;
  return 0;
}

int archnet_backward_part(const archnet *n, const arch_plan *plan, size_t l, size_t p, const gsl_vector *w,
                          const gsl_matrix *A_prev, const gsl_matrix *A_l, gsl_matrix *D_l, gsl_vector *grad,
                          gsl_matrix *dA_prev_part)
{
  part_check(n, plan, l, p, "archnet_backward_part");
  size_t rows = A_prev->size1;
  if (w == NULL || grad == NULL || !vector_fits(n, w) || !vector_fits(n, grad) ||
      !widths_fit(n, l, A_prev, A_l, rows) || !widths_fit(n, l, dA_prev_part, D_l, rows))
    return -1;
  if (dA_prev_part != NULL) gsl_matrix_set_zero(dA_prev_part);
  for (size_t k = 0, runs = arch_plan_runs(plan, l, p); k < runs; k++) {
    size_t u0, u1;
    arch_plan_run(plan, l, p, k, &u0, &u1);
    if (l < n->L) act_mul_deriv(n->hidden, A_l, D_l, u0, u1);
    layer_backward(n, l, u0, u1, w->data, A_prev, D_l, grad->data, dA_prev_part);
  }
  return 0;
}

int archnet_sum_parts(const archnet *n, const arch_plan *plan, size_t l, size_t q,
                      const gsl_matrix *const *parts, gsl_matrix *D_prev)
{
  part_check(n, plan, l, q, "archnet_sum_parts");
  if (l < 2) mem_die("archnet", "archnet_sum_parts: the input layer has no delta");
  size_t rows = D_prev->size1, P = arch_plan_parts(plan);
  if (!widths_fit(n, l - 1, NULL, D_prev, rows)) return -1;
  for (size_t p = 0; p < P; p++) {
    if (p != q && arch_plan_halo(plan, l, p, q) == 0) continue;
    if (parts[p] == NULL || !widths_fit(n, l - 1, NULL, parts[p], rows)) return -1;
  }
  for (size_t k = 0, runs = arch_plan_runs(plan, l - 1, q); k < runs; k++) {
    size_t u0, u1;
    arch_plan_run(plan, l - 1, q, k, &u0, &u1);
    int first = 1;
    for (size_t p = 0; p < P; p++) {
      if (p != q && arch_plan_halo(plan, l, p, q) == 0) continue;
      for (size_t i = 0; i < rows; i++) {
        const double *s = parts[p]->data + i * parts[p]->tda;
        double *d = D_prev->data + i * D_prev->tda;
        for (size_t u = u0; u < u1; u++)
          d[u] = first ? s[u] : d[u] + s[u];
      }
      first = 0;
    }
  }
  return 0;
}

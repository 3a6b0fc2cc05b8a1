/* pipeline_dense.c - the pipeline's dense-layer chunk kernel: model chunk c is the arch
 * layers [first, last] of the shapes (a virtual network, or model.layers).
 * Costs (models/README.md, Cost model): a chunk's forward costs 2*fan_in flops per unit and
 * example over its layers (arch_layer_train_flops / 3), backward twice that; an activation
 * message carries b x (units of the chunk's last layer) elements, its gradient the same back,
 * each msg_bytes(elements, elem_bytes) on the wire.
 * Numerics: the parameters are one vector; chunk c's layers are a view of it (net.h's layout
 * keeps layers contiguous), computed with net_forward_layers / net_backward_layers. Device 0
 * draws the step's rows; the last chunk reads their labels from the same draw (a data loader
 * at each end of the pipe). */
#include <string.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>
#include <simgrid/engine.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/compute.h"
#include "algorithms/pipeline_impl.h"
#include "models/cost.h"
#include "models/data.h"
#include "models/optim.h"
#include "models/rng.h"

static void dense_costs(const struct pipeline *pl, chunk *c)
{
  c->in_width = (double)arch_units(pl->shapes, c->first - 1);
  c->out_width = (double)arch_units(pl->shapes, c->last);
  c->act_elems = c->in_width; /* backward reads the input and every layer's output */
  for (size_t l = c->first; l <= c->last; l++) {
    c->fwd_flops += arch_layer_train_flops(pl->shapes, l) / 3; /* training flops are 3x the forward */
    c->act_elems += (double)arch_units(pl->shapes, l);
    c->params += arch_layer_params(pl->shapes, l);
  }
  c->bwd_flops = 2 * c->fwd_flops;
}

static void dense_compute(const struct pipeline *pl, device *d, const chunk *c, kernel_phase ph, double examples,
                          const kernel_io *io)
{
  (void)d;
  (void)io; /* the numerics are the kernel's forward and backward, after the time */
  compute_execute(pl->cfg, (ph == PHASE_BACKWARD ? c->bwd_flops : c->fwd_flops) * examples);
}

typedef struct mlp_chunk {
  struct pipeline *pl;
  const net *n;
  size_t first, last, nl; /* net layers [first, last), nl of them */
  size_t b;
  gsl_matrix **in;        /* [mb]: the stashed input (a view of the rows or of in_msg) */
  pipeline_msg **in_msg;  /* [mb]: the message it came in, freed after backward */
  gsl_matrix ***out;      /* [mb][l]: outputs, NULL when not kept */
  gsl_matrix **D;         /* [l]: deltas, scratch */
  double *y;              /* last chunk: labels of the step (pl->y) */
} mlp_chunk;

static gsl_matrix **mlp_outputs(mlp_chunk *k)
{
  gsl_matrix **o = xbt_malloc(k->nl * sizeof(gsl_matrix *));
  for (size_t l = 0; l < k->nl; l++)
    o[l] = gsl_matrix_alloc(k->b, net_layer_size(k->n, k->first + l + 1));
  return o;
}

static void mlp_drop_outputs(mlp_chunk *k, long mb)
{
  for (size_t l = 0; k->out[mb] && l < k->nl; l++)
    gsl_matrix_free(k->out[mb][l]);
  xbt_free(k->out[mb]);
  k->out[mb] = NULL;
}

static void *mlp_create(struct pipeline *pl, const chunk *c)
{
  mlp_chunk *k = xbt_malloc0(sizeof(*k));
  size_t m = (size_t)pl->p->microbatches;
  k->pl = pl;
  k->n = pl->cfg->model;
  k->first = c->first - 1;
  k->last = c->last;
  k->nl = k->last - k->first;
  k->b = (size_t)pl->p->microbatch;
  k->in = xbt_malloc0(m * sizeof(gsl_matrix *));
  k->in_msg = xbt_malloc0(m * sizeof(pipeline_msg *));
  k->out = xbt_malloc0(m * sizeof(gsl_matrix **));
  k->D = mlp_outputs(k);
  return k;
}

static void mlp_forward(void *kp, long mb, const gsl_matrix *in, pipeline_msg *in_msg, double *out, int keep)
{
  mlp_chunk *k = kp;
  gsl_matrix_const_view rows = in ? gsl_matrix_const_submatrix(in, (size_t)mb * k->b, 0, k->b, in->size2)
                                  : gsl_matrix_const_view_array(in_msg->data, k->b, in_msg->n / k->b);
  k->in[mb] = xbt_malloc(sizeof(gsl_matrix));
  *k->in[mb] = rows.matrix;
  k->in_msg[mb] = in_msg;
  k->out[mb] = mlp_outputs(k);
  xbt_assert(net_forward_layers(k->n, k->pl->w, k->first, k->last, k->in[mb], k->out[mb]) == 0,
             "chunk layers %zu..%zu: forward shapes", k->first, k->last);
  gsl_matrix *o = k->out[mb][k->nl - 1];
  if (out)
    memcpy(out, o->data, o->size1 * o->size2 * sizeof(double));
  if (!keep)
    mlp_drop_outputs(k, mb);
}

static void mlp_recompute(void *kp, long mb)
{
  mlp_chunk *k = kp;
  k->out[mb] = mlp_outputs(k);
  xbt_assert(net_forward_layers(k->n, k->pl->w, k->first, k->last, k->in[mb], k->out[mb]) == 0,
             "chunk layers %zu..%zu: recompute shapes", k->first, k->last);
}

/* A chunk's gradient for microbatch j is the mean over its b rows (as net_loss_grad on those
 * rows); the chunk adds them into its accumulator in microbatch order (every schedule runs a
 * chunk's backwards in that order), so the accumulated gradient does not depend on timing,
 * and the update is w -= lr * (sum / m) (dense_flush). */
static void mlp_backward(void *kp, long mb, const double *dout, double *din)
{
  mlp_chunk *k = kp;
  pipeline *pl = k->pl;
  gsl_matrix *top = k->D[k->nl - 1];
  if (dout) {
    memcpy(top->data, dout, top->size1 * top->size2 * sizeof(double));
  } else { /* the last chunk: d(mean loss over the microbatch)/dlogits, as net_loss_grad */
    double loss_sum;
    xbt_assert(net_output_delta(k->n, k->out[mb][k->nl - 1], pl->y + (size_t)mb * k->b, top, &loss_sum) == 0,
               "output delta shapes");
  }
  gsl_matrix_view dv = gsl_matrix_view_array(din ? din : top->data, k->b, net_layer_size(k->n, k->first));
  xbt_assert(net_backward_layers(k->n, pl->w, k->first, k->last, k->in[mb], k->out[mb], k->D, din ? &dv.matrix : NULL,
                                 pl->g) == 0,
             "chunk layers %zu..%zu: backward shapes", k->first, k->last);
  size_t off = net_layer_offset(k->n, k->first), len = net_layer_offset(k->n, k->last) - off;
  gsl_vector_view acc = gsl_vector_subvector(pl->acc, off, len);
  gsl_vector_const_view g = gsl_vector_const_subvector(pl->g, off, len);
  gsl_vector_add(&acc.vector, &g.vector); /* in microbatch order: see above */
  mlp_drop_outputs(k, mb);
  xbt_free(k->in[mb]);
  k->in[mb] = NULL;
  msg_free(k->in_msg[mb]);
  k->in_msg[mb] = NULL;
}

static void mlp_free(void *kp)
{
  mlp_chunk *k = kp;
  if (k == NULL)
    return;
  for (long mb = 0; mb < k->pl->p->microbatches; mb++) {
    mlp_drop_outputs(k, mb);
    xbt_free(k->in[mb]);
    msg_free(k->in_msg[mb]);
  }
  for (size_t l = 0; l < k->nl; l++)
    gsl_matrix_free(k->D[l]);
  xbt_free(k->D);
  xbt_free(k->in);
  xbt_free(k->in_msg);
  xbt_free(k->out);
  xbt_free(k);
}

/* The flush: every chunk of the device applies w -= lr * (accumulated / m). */
static void dense_flush(struct pipeline *pl, device *d)
{
  double params = 0;
  for (size_t c = d->rank; c < pl->K; c += pl->p->stages)
    params += pl->chunks[c].params;
  double t0 = simgrid_get_clock();
  compute_execute(pl->cfg, cost_update_flops((size_t)params, 0));
  d->st.update_s += simgrid_get_clock() - t0;
  for (size_t c = d->rank; pl->numeric && c < pl->K; c += pl->p->stages) {
    const chunk *ch = &pl->chunks[c];
    size_t off = net_layer_offset(pl->cfg->model, ch->first - 1);
    size_t len = net_layer_offset(pl->cfg->model, ch->last) - off;
    gsl_vector_view w = gsl_vector_subvector(pl->w, off, len), acc = gsl_vector_subvector(pl->acc, off, len);
    gsl_vector_scale(&acc.vector, 1.0 / (double)pl->p->microbatches);
    optim_sgd_apply(w.vector.data, acc.vector.data, len, pl->p->lr);
    gsl_vector_set_zero(&acc.vector);
  }
}

/* The MLP of model.layers as one parameter vector; chunk c's layers are a view of it. */
static void dense_numerics(struct pipeline *pl)
{
  const run_config *cfg = pl->cfg;
  size_t rows = (size_t)(pl->p->microbatches * pl->p->microbatch);
  pl->w = run_initial_params(cfg);
  pl->w_pub = gsl_vector_alloc(pl->w->size);
  gsl_vector_memcpy(pl->w_pub, pl->w);
  pl->g = gsl_vector_calloc(pl->w->size);
  pl->acc = gsl_vector_calloc(pl->w->size);
  pl->X = gsl_matrix_alloc(rows, net_n_inputs(cfg->model));
  pl->y = xbt_malloc0(rows * sizeof(double));
  pl->rng = rng_create(cfg->seed, RNG_ROLE_WORKER, 0);
  for (size_t c = 0; c < pl->K; c++)
    pl->chunks[c].k = pl->kernel->create(pl, &pl->chunks[c]);
}

static void dense_publish(struct pipeline *pl) { gsl_vector_memcpy(pl->w_pub, pl->w); }

static void dense_draw(struct pipeline *pl)
{
  data_sample_batch(pl->cfg->train, 0, data_n(pl->cfg->train), pl->rng, pl->X->size1, pl->X, pl->y);
}

const chunk_kernel pipeline_dense_kernel = {dense_costs,   NULL,          NULL,          dense_compute, NULL,
                                           dense_flush,   dense_numerics, dense_publish, dense_draw,    mlp_create,
                                           mlp_forward,   mlp_recompute,  mlp_backward,  mlp_free};


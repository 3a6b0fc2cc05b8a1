/* pipeline.c - pipeline model parallelism with a synchronous flush.
 *
 * The dense layers 1..L-1 of the shapes are cut into K = p*v contiguous model chunks;
 * chunk c lives on device c mod p (Narayanan et al. 2021 sec. 2.2.2: device s holds
 * chunks s, s+p, ...; v = 1 is the plain layout, chunk s on device s). Each step,
 * device 0 (the data loader) draws m*b rows, and every device runs its list of
 * operations from pipeline_schedule_ops in order:
 *   forward (j, c)   receive_activations of microbatch j from chunk c-1 (chunk 0 reads
 *                    its rows), compute_forward, send_activations to chunk c+1 (the last
 *                    chunk computes the loss instead), stash what backward needs;
 *   backward (j, c)  receive_gradients from chunk c+1 (the last chunk starts from its
 *                    loss), recompute the forward from the stashed input if asked,
 *                    compute_backward (accumulating the chunk's gradient), send the
 *                    gradient of its input to chunk c-1;
 * then apply_update (GPipe sec. 2.2: gradients accumulate over the m microbatches and
 * are applied synchronously at the end of the mini-batch). Sends are fire-and-forget to
 * a mailbox per (chunk, direction) that its device listens on, so a transfer overlaps
 * the sender's next computation and the receiver waits only for data it needs.
 *
 * Costs (models/README.md, Cost model): a chunk's forward costs 2*fan_in flops per unit and example over its
 * layers (arch_layer_train_flops / 3), backward twice that; an activation message carries
 * b x (units of the chunk's last layer) elements, its gradient the same back, each
 * msg_bytes(elements, elem_bytes) on the wire.
 *
 * Numerics: the parameters are one vector; chunk c's layers are a view of it (net.h's
 * layout keeps layers contiguous). Everything a chunk computes sits behind chunk_kernel:
 * its costs, the simulated time of a phase, and the numerics, which the layer stack
 * implements with net_forward_layers / net_backward_layers.
 *
 * 3D parallelism (pipeline.model = transformer) is the other kernel: each
 * chunk is a block of GPT layers, each stage a tensor group of t devices (one actor per
 * GPU) running tensor_stage_forward / _backward (tensor.h) with its group's collectives,
 * and d replicas of the whole pipeline. Device (s, j, r) sends its chunk's boundary to
 * device (s+1, j, r): with scatter/gather (PTD-P sec. 4.1) its 1/t slice, which the
 * receiving group allgathers; without, the whole b s h. At the flush each (stage, tensor
 * rank) allreduces its gradients across the d replicas and the first and last stage the
 * tied embedding's. With numerics the stages are models/gpt.h's GPT, each device holding
 * its tensor rank's entries only: the boundary's values are the messages' payload, the
 * collectives sum real buffers, and the flush's optimizer updates the device's entries
 * (packed as its data-parallel allreduce sends them). The numerics change no simulated
 * time: they run between the timing model's collectives, except, with sequence
 * parallelism, two collectives the timing model lacks (tf_sum_replicated, and
 * tensor.c's backward_embedding). Device 0 draws the step's rows; the last chunk reads their
 * labels from the same draw (a data loader at each end of the pipe). A chunk's gradient for
 * microbatch j is the mean over its b rows (as net_loss_grad on those rows); the chunk
 * adds them into its accumulator in microbatch order (every schedule runs a chunk's
 * backwards in that order), so the accumulated gradient does not depend on timing, and
 * the update is w -= lr * (sum / m). */
#include "algorithms/pipeline.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_matrix.h>
#include <simgrid/actor.h>
#include <simgrid/host.h>
#include <simgrid/barrier.h>
#include <simgrid/engine.h>
#include <simgrid/mailbox.h>
#include <simgrid/link.h>
#include <simgrid/mutex.h>
#include <simgrid/semaphore.h>
#include <xbt/asserts.h>
#include <xbt/dynar.h>
#include <xbt/sysdep.h>

#include "algorithms/compute.h"
#include "algorithms/collectives.h"
#include "algorithms/eval.h"
#include "algorithms/pipeline_msg.h"
#include "algorithms/tensor.h"
#include "models/cost.h"
#include "models/data.h"
#include "models/gpt.h"
#include "models/optim.h"
#include "models/rng.h"

/* ---- schedules (pure) ------------------------------------------------------ */

static const char *const schedule_names[] = {"gpipe", "1f1b", "interleaved"};

int pipeline_schedule_parse(const char *s, pipeline_schedule *out)
{
  for (int i = 0; i < 3; i++)
    if (strcmp(s, schedule_names[i]) == 0) {
      *out = (pipeline_schedule)i;
      return 0;
    }
  return -1;
}

const char *pipeline_schedule_name(pipeline_schedule s)
{
  return (unsigned)s < 3 ? schedule_names[s] : "?";
}

/* Megatron-LM's interleaved schedule (schedules.py,
 * forward_backward_pipelining_with_interleaving): the k-th forward of a device runs
 * microbatch (k / pv) p + k mod p on its chunk (k mod pv) / p; the k-th backward the same
 * microbatch on its chunk v-1 - (k mod pv) / p. */
static pipeline_op interleaved_op(size_t p, size_t v, size_t device, long k, int backward)
{
  long group = (long)(p * v);
  size_t local = (size_t)(k % group) / p;
  if (backward)
    local = v - 1 - local;
  return (pipeline_op){backward, (k / group) * (long)p + k % (long)p, local * p + device};
}

size_t pipeline_schedule_ops(pipeline_schedule s, size_t p, long m, size_t v, size_t device, pipeline_op *ops)
{
  if (p == 0 || m <= 0 || v == 0 || device >= p || (s != PIPELINE_INTERLEAVED && v != 1) ||
      (s == PIPELINE_INTERLEAVED && m % (long)p != 0) || (unsigned)s > PIPELINE_INTERLEAVED)
    return 0;
  long total = m * (long)v, warmup;
  if (s == PIPELINE_GPIPE)
    warmup = total; /* GPipe sec. 2.2: every forward, then every backward */
  else if (s == PIPELINE_1F1B)
    warmup = (long)(p - device - 1); /* PipeDream-Flush: fill the pipe below this stage */
  else if (m == (long)p)
    warmup = total; /* Megatron: with m = p every microbatch is warm-up */
  else
    warmup = (long)(p - device - 1) * 2 + (long)((v - 1) * p);
  if (warmup > total)
    warmup = total;
  if (ops == NULL)
    return 2 * (size_t)total;
  size_t n = 0;
  for (long k = 0; k < warmup; k++)
    ops[n++] = interleaved_op(p, v, device, k, 0);
  for (long i = 0; i < total - warmup; i++) { /* steady state: one forward, one backward */
    ops[n++] = interleaved_op(p, v, device, warmup + i, 0);
    ops[n++] = interleaved_op(p, v, device, i, 1);
  }
  for (long i = total - warmup; i < total; i++) /* cool-down */
    ops[n++] = interleaved_op(p, v, device, i, 1);
  return n;
}

double pipeline_bubble_formula(pipeline_schedule s, size_t p, long m, size_t v)
{
  double vm = (double)m * (double)(s == PIPELINE_INTERLEAVED ? v : 1);
  return (double)(p - 1) / (vm + (double)(p - 1));
}

int pipeline_split_balanced(const arch *shapes, size_t k, size_t *counts)
{
  size_t n = arch_n_layers(shapes) - 1;
  if (k == 0 || n < k)
    return -1;
  double *pre = xbt_malloc0((n + 1) * sizeof(double));
  for (size_t i = 0; i < n; i++)
    pre[i + 1] = pre[i] + arch_layer_train_flops(shapes, i + 1);
  /* best[c][j]: the smallest largest chunk over splits of the first j layers into c chunks;
   * cut[c][j]: where the last of those chunks starts */
  double *best = xbt_malloc0((k + 1) * (n + 1) * sizeof(double));
  size_t *cut = xbt_malloc0((k + 1) * (n + 1) * sizeof(size_t));
  for (size_t j = 1; j <= n; j++)
    best[1 * (n + 1) + j] = pre[j];
  for (size_t c = 2; c <= k; c++)
    for (size_t j = c; j <= n; j++) {
      double b = -1;
      for (size_t i = c - 1; i < j; i++) {
        double prev = best[(c - 1) * (n + 1) + i], last = pre[j] - pre[i];
        double worst = prev > last ? prev : last;
        if (b < 0 || worst <= b) {
          b = worst;
          cut[c * (n + 1) + j] = i;
        }
      }
      best[c * (n + 1) + j] = b;
    }
  size_t j = n;
  for (size_t c = k; c >= 2; c--) {
    size_t i = cut[c * (n + 1) + j];
    counts[c - 1] = j - i;
    j = i;
  }
  counts[0] = j;
  xbt_free(pre);
  xbt_free(best);
  xbt_free(cut);
  return 0;
}

/* ---- state ----------------------------------------------------------------- */

typedef struct chunk {
  size_t first, last;     /* arch layers [first, last]: net layers [first-1, last) */
  size_t device;
  double fwd_flops;       /* per example (2 x fan-in per unit) */
  double bwd_flops;       /* per example (twice the forward) */
  double in_width;        /* units of layer first-1: what comes in (and its gradient goes back) */
  double out_width;       /* units of layer last: what goes out */
  double act_elems;       /* per example: its input and every layer's output, what backward reads */
  double params;
  sg_mailbox_t *fwd_in, *bwd_in; /* by lane: one per (replica, tensor rank) of its stage */
  void *k;                /* the kernel's state (numerics), or NULL */
} chunk;

typedef struct device {
  struct pipeline *pl;
  size_t rank;            /* its stage */
  size_t lane;            /* j t + r: replica j, tensor rank r (0 for dense stages) */
  size_t idx;             /* rank x lanes + lane: the device's actor runs on cfg->hosts[idx] */
  void *ks;               /* the kernel's per-device state, or NULL */
  pipeline_op *ops;
  size_t n_ops;
  long stashed;
  double stash_bytes;
  pipeline_stage_stats st;
  sg_sem_t flushing;      /* mirror_replicas, replica 0: released d - 1 times when it reaches a step's flush */
} device;

typedef enum kernel_phase { PHASE_FORWARD, PHASE_RECOMPUTE, PHASE_BACKWARD } kernel_phase;

/* What one phase computes on: its microbatch, the message that came in (NULL for the first
 * chunk's forward, the last chunk's backward and a recomputation) and the one to fill (NULL
 * for the last chunk's forward and the first chunk's backward). */
typedef struct kernel_io {
  long mb;
  const pipeline_msg *in;
  pipeline_msg *out;
} kernel_io;

/* What a model chunk computes for one microbatch (see the top of the file).
 * costs: fills c's fwd_flops, bwd_flops, in_width, out_width, act_elems and params from
 *   its layers [c->first, c->last] (set before the call); in_width and out_width are what
 *   one device sends per example across the chunk's boundaries.
 * attach / detach (may be NULL): create and free d->ks, the device's state, at deployment
 *   and after the run.
 * compute: spends the simulated time of one phase for `examples` examples on the calling
 *   actor's device d (for a tensor-parallel stage, with its group's collectives, and with
 *   numerics the stage's own: it reads io->in and fills io->out).
 * received (may be NULL): what the device does with an incoming boundary message io->in
 *   before computing on it (PTD-P sec. 4.1: the tensor group allgathers its scattered slices).
 * flush: the end of the step on device d: gradient reductions and the update.
 * numerics (with cfg->numerics): sets up the model, the data and the parameters before the
 *   devices attach; publish: device 0, between steps, copies the parameters into w_pub for
 *   the evaluator (under mu); draw: device 0 draws the next step's data.
 * Dense numerics (NULL for transformer stages, whose compute does them): create returns the
 * chunk's state. forward reads the chunk's input (rows of the step's data for chunk 0,
 * in_msg's data otherwise; the kernel keeps in_msg until backward), writes its output into
 * out (NULL for the last chunk, which keeps its logits for the loss) and stashes what
 * backward needs, all of it when keep is set, else only the input; recompute rebuilds what
 * a forward without keep dropped; backward reads dout (NULL for the last chunk: the loss),
 * writes din (NULL for chunk 0), adds the microbatch's gradient into the accumulator and
 * drops the stash. */
typedef struct chunk_kernel {
  void (*costs)(const struct pipeline *pl, chunk *c);
  void (*attach)(struct pipeline *pl, device *d);
  void (*detach)(device *d);
  void (*compute)(const struct pipeline *pl, device *d, const chunk *c, kernel_phase ph, double examples,
                  const kernel_io *io);
  void (*received)(const struct pipeline *pl, device *d, const chunk *c, double examples, const kernel_io *io);
  void (*flush)(struct pipeline *pl, device *d);
  void (*numerics)(struct pipeline *pl);
  void (*publish)(struct pipeline *pl);
  void (*draw)(struct pipeline *pl);
  void *(*create)(struct pipeline *pl, const chunk *c);
  void (*forward)(void *k, long mb, const gsl_matrix *in, pipeline_msg *in_msg, double *out, int keep);
  void (*recompute)(void *k, long mb);
  void (*backward)(void *k, long mb, const double *dout, double *din);
  void (*free)(void *k);
} chunk_kernel;

struct pipeline {
  const run_config *cfg;
  const pipeline_params *p;
  const arch *shapes;
  size_t K;               /* chunks: p * v */
  chunk *chunks;
  device *devs;
  const chunk_kernel *kernel;
  size_t t, dp;           /* tensor ranks per stage, pipeline replicas (1 and 1 for dense) */
  size_t lanes;           /* t x dp devices per stage */
  size_t n_devs;          /* stages x lanes */
  tensor_params tp;       /* transformer: [tensor] with layers = the model's */
  coll_comm **tcomm;      /* transformer: tensor group of stage s, replica j, at s dp + j */
  coll_comm **dcomm;      /* dp > 1: data-parallel group of stage s, tensor rank r, at s t + r */
  coll_comm **ecomm;      /* vocab and stages > 1: by lane, the first and last stage's embedding pair */
  int numeric;            /* the kernel's numerics run (cfg->numerics) */
  /* numerics */
  gsl_vector *w, *g, *acc, *w_pub; /* parameters, one microbatch's gradient, the step's sum, the evaluator's copy */
  gsl_matrix *X;          /* the step's m*b rows, drawn by device 0 */
  double *y;
  gsl_rng *rng;           /* device 0's draws: sgd's stream (worker rank 0) */
  /* 3D numerics: a GPT (models/gpt.h) on the synthetic language (models/data.h) */
  gpt_dims gd;
  dataset *tok_train, *tok_test; /* rows: sequences of seq + 1 tokens */
  gsl_matrix *seqs;       /* the step's m x b x d sequences, replica j's microbatch mb at rows (j m + mb) b */
  double *seq_y;          /* data_sample_batch's labels, unused */
  gsl_vector *w0;         /* the whole model's initial parameters */
  double initial_loss, initial_accuracy; /* held out, before the first step */
  double train_loss;      /* the last step's mean microbatch loss over the replicas */
  sg_bar_t start;
  int go;
  double end;             /* when the last step ended */
  sg_mutex_t mu;          /* guards w_pub */
  metrics_slot *slot;
  eval_ctl *eval;
};

size_t pipeline_hosts_needed(const pipeline_params *p, const tensor_params *t)
{
  return p->transformer ? p->stages * t->ranks * (t->dp > 0 ? t->dp : 1) : p->stages;
}
size_t pipeline_metrics_slots(void) { return 1; }

/* ---- the dense-layer kernel: costs from arch shapes, numerics of models/net.h ---- */

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
  gsl_vector_add(&acc.vector, &g.vector); /* in microbatch order: see the top of the file */
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

static const chunk_kernel dense_kernel = {dense_costs,  NULL,          NULL,       dense_compute, NULL,
                                          dense_flush,  dense_numerics, dense_publish, dense_draw, mlp_create,
                                          mlp_forward, mlp_recompute, mlp_backward, mlp_free};

/* ---- the transformer kernel: each stage a tensor group running tensor.c's GPT layers ---- */

/* A device's state: its tensor rank's share of each of its chunks, and the elements of its
 * data-parallel gradient allreduce (all its chunks, one bucket, as tensor.c). With numerics,
 * its entries of the model packed in that allreduce's order (tensor.h: chunk after chunk),
 * their gradients and the optimizer's state, and the boundary buffers of the phase it runs. */
typedef struct tf_device {
  tensor_stage **ts; /* by local chunk k: chunk k p + stage */
  double dp_elems;
  /* numerics */
  size_t n;          /* packed entries (dp_elems) */
  size_t *off;       /* [k]: local chunk k's first packed entry */
  double *w, *g;     /* packed parameters and gradients */
  double *m1, *m2;   /* Adam's moments */
  long updates;      /* optimizer steps taken */
  double *rep;       /* sequence parallelism: the replicated gradients, gathered for their sum */
  size_t nrep;
  double *bin, *bout; /* n x h: the phase's incoming boundary (after the allgather) and outgoing one */
  double loss;       /* the last chunk's device: the step's microbatch losses, summed */
} tf_device;

static void tf_costs(const struct pipeline *pl, chunk *c)
{
  const tensor_params *q = &pl->tp;
  double sh = (double)q->seq * (double)q->hidden, t = (double)pl->t, n = (double)(c->last - c->first + 1);
  double b = (double)q->microbatch;
  /* PTD-P sec. 4.1: with scatter/gather each rank sends b s h / t of a boundary's b s h */
  c->in_width = c->out_width = pl->p->scatter_gather ? sh / t : sh;
  c->fwd_flops = n * tensor_layer_flops(q) / b / t; /* per example (sequence) and rank */
  c->bwd_flops = 2 * c->fwd_flops;
  /* stash per sequence: with recomputation each layer's input (Megatron's full
   * checkpointing); without, Korthikanti et al. 2022 eq. 2 with tensor parallelism,
   * s h (10 + 24/t + 5 a s/(h t)) bytes per layer at 2 bytes an element */
  double a = (double)q->heads, s = (double)q->seq, h = (double)q->hidden;
  c->act_elems = q->recompute ? n * sh : n * sh * (10 + 24 / t + 5 * a * s / (h * t)) / 2;
  c->params = 0; /* counted per device from tensor_stage_dp_elements (tf_attach) */
}

/* Elements of one stage boundary: b s h. */
static size_t tf_boundary(const struct pipeline *pl)
{
  return pl->tp.microbatch * pl->tp.seq * pl->tp.hidden;
}

/* Numerics of a device: each chunk's stage takes its entries of the initial model; the
 * packed vector is read back from them. */
static void tf_attach_numerics(struct pipeline *pl, device *d, tf_device *k)
{
  size_t p = pl->p->stages, v = pl->p->chunks;
  k->n = (size_t)k->dp_elems;
  k->off = xbt_malloc0(v * sizeof(size_t));
  k->w = xbt_malloc0(k->n * sizeof(double));
  k->g = xbt_malloc0(k->n * sizeof(double));
  k->m1 = xbt_malloc0(k->n * sizeof(double));
  k->m2 = xbt_malloc0(k->n * sizeof(double));
  k->bin = xbt_malloc0(tf_boundary(pl) * sizeof(double));
  k->bout = xbt_malloc0(tf_boundary(pl) * sizeof(double));
  size_t off = 0;
  for (size_t i = 0; i < v; i++) {
    const chunk *ch = &pl->chunks[i * p + d->rank];
    xbt_assert(tensor_stage_numerics(k->ts[i], &pl->gd, ch->first - 1, pl->p->microbatches, pl->w0) == 0,
               "pipeline: a stage refused the GPT's shapes");
    k->off[i] = off;
    tensor_stage_get_params(k->ts[i], k->w + off);
    off += (size_t)tensor_stage_dp_elements(k->ts[i]);
    k->nrep += tensor_stage_replicated(k->ts[i]);
  }
  xbt_assert(off == k->n, "pipeline: packed %zu entries, the allreduce has %zu", off, k->n);
  k->rep = xbt_malloc0(k->nrep * sizeof(double));
}

static void tf_attach(struct pipeline *pl, device *d)
{
  tf_device *k = xbt_malloc0(sizeof(*k));
  size_t p = pl->p->stages, j = d->lane / pl->t, r = d->lane % pl->t;
  k->ts = xbt_malloc0(pl->p->chunks * sizeof(tensor_stage *));
  for (size_t c = d->rank; c < pl->K; c += p) {
    const chunk *ch = &pl->chunks[c];
    tensor_stage *ts = tensor_stage_create(pl->cfg, &pl->tp, pl->tcomm[d->rank * pl->dp + j], r,
                                           ch->last - ch->first + 1, c == 0, c + 1 == pl->K);
    xbt_assert(ts != NULL, "pipeline: tensor_stage_create refused a validated shape");
    k->ts[c / p] = ts;
    k->dp_elems += tensor_stage_dp_elements(ts);
  }
  d->st.params = k->dp_elems;
  d->ks = k;
  if (pl->numeric)
    tf_attach_numerics(pl, d, k);
}

static void tf_detach(device *d)
{
  tf_device *k = d->ks;
  if (k == NULL)
    return;
  for (size_t i = 0; i < d->pl->p->chunks; i++)
    tensor_stage_free(k->ts[i]);
  xbt_free(k->ts);
  double *v[] = {k->w, k->g, k->m1, k->m2, k->rep, k->bin, k->bout};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    xbt_free(v[i]);
  xbt_free(k->off);
  xbt_free(k);
  d->ks = NULL;
}

/* Replica j's microbatch mb: b sequences of the step's draw. */
static const double *tf_seqs(const struct pipeline *pl, size_t j, long mb)
{
  size_t row = (j * (size_t)pl->p->microbatches + (size_t)mb) * pl->tp.microbatch;
  return gsl_matrix_const_ptr(pl->seqs, row, 0);
}

/* With scatter/gather (t > 1) a boundary message is the rank's block of the b s h elements
 * (collectives.h's coll_block: its rows with sequence parallelism); else all of them. */
static void tf_slice(const struct pipeline *pl, size_t r, size_t *off, size_t *len)
{
  if (pl->p->scatter_gather && pl->t > 1)
    coll_block(tf_boundary(pl), pl->t, r, off, len);
  else {
    *off = 0;
    *len = tf_boundary(pl);
  }
}

static void tf_compute(const struct pipeline *pl, device *d, const chunk *c, kernel_phase ph, double examples,
                       const kernel_io *io)
{
  (void)examples; /* the stage's microbatch is tensor.microbatch */
  tf_device *k = d->ks;
  tensor_stage *ts = k->ts[(size_t)(c - pl->chunks) / pl->p->stages];
  xbt_assert(ph != PHASE_RECOMPUTE, "pipeline: transformer stages recompute inside their backward");
  if (!pl->numeric) {
    if (ph == PHASE_FORWARD)
      tensor_stage_forward(ts, 0, NULL, NULL, NULL);
    else
      tensor_stage_backward(ts, 0, NULL, NULL, NULL);
    return;
  }
  const double *seqs = tf_seqs(pl, d->lane / pl->t, io->mb);
  double *out = io->out ? k->bout : NULL;
  if (ph == PHASE_FORWARD)
    tensor_stage_forward(ts, io->mb, seqs, k->bin, out);
  else
    tensor_stage_backward(ts, io->mb, seqs, k->bin, out);
  if (out) {
    size_t off, len;
    tf_slice(pl, d->lane % pl->t, &off, &len);
    xbt_assert(io->out->n == len, "pipeline: a boundary message of %zu elements, the slice has %zu", io->out->n, len);
    memcpy(io->out->data, out + off, len * sizeof(double));
  }
}

/* PTD-P sec. 4.1: the slices that came from the t ranks of the other stage, allgathered
 * so every rank of the group holds the whole b s h. With numerics the message's elements
 * go to their place in the boundary buffer first. (With sequence parallelism the rank's own
 * rows were its slice already: the allgather is kept, as the timing model has it.) */
static void tf_received(const struct pipeline *pl, device *d, const chunk *c, double examples, const kernel_io *io)
{
  (void)c;
  tf_device *k = d->ks;
  size_t j = d->lane / pl->t, r = d->lane % pl->t;
  if (pl->numeric) {
    size_t off, len;
    tf_slice(pl, r, &off, &len);
    xbt_assert(io->in->n == len, "pipeline: a boundary message of %zu elements, the slice has %zu", io->in->n, len);
    memcpy(k->bin + off, io->in->data, len * sizeof(double));
  }
  if (!pl->p->scatter_gather || pl->t == 1)
    return;
  coll_allgather(pl->tcomm[d->rank * pl->dp + j], r, pl->numeric ? k->bin : NULL,
                 (size_t)examples * pl->tp.seq * pl->tp.hidden);
}

/* Numerics only, before the data-parallel allreduce: with sequence parallelism each rank's
 * replicated gradients (LayerNorms, bo, b2) are its rows' share, so its tensor group sums
 * them, one allreduce of all its chunks' (Megatron-LM allreduces the sequence-parallel
 * LayerNorm gradients over the tensor group before the data-parallel one). */
static void tf_sum_replicated(struct pipeline *pl, device *d, tf_device *k)
{
  size_t j = d->lane / pl->t, r = d->lane % pl->t, at = 0;
  for (size_t i = 0; i < pl->p->chunks; i++) {
    size_t n = tensor_stage_replicated(k->ts[i]);
    memcpy(k->rep + at, k->g + k->off[i], n * sizeof(double));
    at += n;
  }
  coll_allreduce(pl->tcomm[d->rank * pl->dp + j], r, k->rep, k->nrep, COLL_RING);
  at = 0;
  for (size_t i = 0; i < pl->p->chunks; i++) {
    size_t n = tensor_stage_replicated(k->ts[i]);
    memcpy(k->g + k->off[i], k->rep + at, n * sizeof(double));
    at += n;
  }
}

/* The tied embedding's gradient entries of local chunk i (its V/t rows), or NULL. */
static double *tf_embedding(tf_device *k, size_t i)
{
  size_t e = tensor_stage_embedding_offset(k->ts[i]);
  return e < (size_t)tensor_stage_dp_elements(k->ts[i]) ? k->g + k->off[i] + e : NULL;
}

/* The optimizer on the packed entries, the same rule as the serial model's element by element
 * (pipeline_serial_check): the step's gradient is the mean over the m d microbatches. */
static void tf_update(struct pipeline *pl, tf_device *k)
{
  double scale = 1.0 / ((double)pl->p->microbatches * (double)pl->dp);
  for (size_t i = 0; i < k->n; i++)
    k->g[i] *= scale;
  k->updates++;
  if (pl->p->optimizer == PIPELINE_OPT_ADAM)
    optim_adam_apply(k->w, k->m1, k->m2, k->g, k->n, pl->p->lr, OPTIM_ADAM_B1, OPTIM_ADAM_B2, OPTIM_ADAM_EPS,
                     k->updates);
  else
    optim_sgd_apply(k->w, k->g, k->n, pl->p->lr);
  for (size_t i = 0; i < pl->p->chunks; i++)
    tensor_stage_set_params(k->ts[i], k->w + k->off[i]);
}

/* The flush (PTD-P sec. 2, Megatron-LM's finalize): each (stage, tensor rank) allreduces
 * its gradients across the d replicas (ring, one bucket), then the first and last stage
 * allreduce the tied embedding's V h / t rows; the optimizer costs no simulated time, as in
 * tensor.c. With numerics these sum the packed gradients, then the optimizer updates them. */
static void tf_flush(struct pipeline *pl, device *d)
{
  tf_device *k = d->ks;
  size_t j = d->lane / pl->t, r = d->lane % pl->t, p = pl->p->stages, v = pl->p->chunks;
  double *g = pl->numeric ? k->g : NULL, *emb = NULL;
  if (pl->numeric) {
    for (size_t i = 0; i < v; i++)
      tensor_stage_take_grads(k->ts[i], k->g + k->off[i]);
    if (d->rank == p - 1 && pl->tp.vocab)
      k->loss = tensor_stage_take_loss(k->ts[v - 1]);
    emb = d->rank == 0 ? tf_embedding(k, 0) : d->rank == p - 1 ? tf_embedding(k, v - 1) : NULL;
    if (p == 1 && v > 1) { /* both ends of the model on this device: their tie is a local sum */
      double *last = tf_embedding(k, v - 1);
      for (size_t i = 0; i < pl->tp.vocab / pl->t * pl->tp.hidden; i++)
        last[i] = emb[i] += last[i];
    }
  }
  if (d->flushing) /* its mirrors join the flush now */
    for (size_t i = 1; i < pl->dp; i++)
      sg_sem_release(d->flushing);
  double t0 = simgrid_get_clock();
  if (pl->numeric && pl->tp.seqpar && pl->t > 1)
    tf_sum_replicated(pl, d, k);
  if (pl->dcomm)
    coll_allreduce(pl->dcomm[d->rank * pl->t + r], j, g, (size_t)k->dp_elems, COLL_RING);
  if (pl->ecomm && (d->rank == 0 || d->rank == p - 1))
    coll_allreduce(pl->ecomm[d->lane], d->rank == 0 ? 0 : 1, emb, pl->tp.vocab * pl->tp.hidden / pl->t, COLL_RING);
  d->st.update_s += simgrid_get_clock() - t0;
  if (pl->numeric)
    tf_update(pl, k);
}

/* The GPT, its language, its initial parameters and held-out measures, and the draws. */
static void tf_numerics(struct pipeline *pl)
{
  const run_config *cfg = pl->cfg;
  const tensor_params *q = &pl->tp;
  const scenario *sc = cfg->sc;
  pl->gd = (gpt_dims){q->vocab, q->seq, q->hidden, q->heads, q->layers};
  size_t ntr = (size_t)sc->data.train, nte = (size_t)sc->data.test;
  gsl_rng *r = rng_create(cfg->seed, RNG_ROLE_DATA, 0);
  dataset *all = data_synthetic_tokens(ntr + nte, q->seq + 1, q->vocab, r);
  gsl_rng_free(r);
  xbt_assert(all, "pipeline: the token language refused validated sizes");
  pl->tok_train = data_slice(all, 0, ntr);
  pl->tok_test = data_slice(all, ntr, ntr + nte);
  data_free(all);
  pl->w0 = gsl_vector_alloc(gpt_n_params(&pl->gd));
  r = rng_create(cfg->seed, RNG_ROLE_INIT, 0);
  gpt_init_params(&pl->gd, r, pl->w0);
  gsl_rng_free(r);
  pl->w_pub = gsl_vector_alloc(pl->w0->size);
  gsl_vector_memcpy(pl->w_pub, pl->w0);
  xbt_assert(gpt_evaluate(&pl->gd, pl->w0, data_n(pl->tok_test), pl->tok_test->X->data, &pl->initial_loss,
                          &pl->initial_accuracy) == 0,
             "pipeline: held-out sequences do not fit the GPT");
  size_t rows = (size_t)pl->p->microbatches * q->microbatch * pl->dp;
  pl->seqs = gsl_matrix_alloc(rows, q->seq + 1);
  pl->seq_y = xbt_malloc0(rows * sizeof(double));
  pl->rng = rng_create(cfg->seed, RNG_ROLE_WORKER, 0);
  pl->train_loss = NAN;
}

/* Replica 0's devices hold every entry once per tensor rank; the replicated ones are equal
 * on every rank (tested: pipeline_copies_diff), so the last writer's are everyone's. */
static void tf_publish(struct pipeline *pl)
{
  double loss = 0;
  for (size_t i = 0; i < pl->n_devs; i++) {
    device *d = &pl->devs[i];
    tf_device *k = d->ks;
    for (size_t c = 0; d->lane < pl->t && c < pl->p->chunks; c++)
      tensor_stage_export(k->ts[c], pl->w_pub);
    if (d->rank == pl->p->stages - 1 && d->lane % pl->t == 0)
      loss += k->loss;
  }
  pl->train_loss = loss / ((double)pl->p->microbatches * (double)pl->dp);
}

static void tf_draw(struct pipeline *pl)
{
  data_sample_batch(pl->tok_train, 0, data_n(pl->tok_train), pl->rng, pl->seqs->size1, pl->seqs, pl->seq_y);
}

static const chunk_kernel transformer_kernel = {tf_costs,  tf_attach, tf_detach, tf_compute, tf_received,
                                                tf_flush,  tf_numerics, tf_publish, tf_draw, NULL,
                                                NULL,      NULL,      NULL,      NULL};

/* The evaluator's measures of the whole model's parameters w. */
static int tf_measure(void *ctx, const gsl_vector *w, double *loss, double *accuracy)
{
  pipeline *pl = ctx;
  return gpt_evaluate(&pl->gd, w, data_n(pl->tok_test), pl->tok_test->X->data, loss, accuracy);
}

/* ---- a device's operations -------------------------------------------------- */

/* Simulated seconds of one phase of chunk c on b examples, after handling the message
 * it computes on (got). */
static double timed_phase(device *d, const chunk *c, kernel_phase ph, double b, const kernel_io *io)
{
  double t0 = simgrid_get_clock();
  if (io->in && d->pl->kernel->received)
    d->pl->kernel->received(d->pl, d, c, b, io);
  d->pl->kernel->compute(d->pl, d, c, ph, b, io);
  return simgrid_get_clock() - t0;
}

static void stash_add(device *d, double elems)
{
  d->stash_bytes += elems * (double)d->pl->cfg->elem_bytes;
  if (d->stash_bytes > d->st.peak_stash_bytes)
    d->st.peak_stash_bytes = d->stash_bytes;
}

static pipeline_msg *receive_from(sg_mailbox_t box, pipeline_msg_kind kind, long step, long mb)
{
  pipeline_msg *in = pipeline_msg_of(msg_recv(box), kind);
  xbt_assert(in->step == step && in->microbatch == mb,
             "pipeline: expected %s of step %ld microbatch %ld, got step %ld microbatch %ld",
             kind == PIPELINE_MSG_ACTIVATIONS ? "activations" : "gradients", step, mb, in->step, in->microbatch);
  return in;
}

/* Sends out, which stands for `elems` elements (its data holds them with numerics). */
static void send_to(device *d, const chunk *to, pipeline_msg *out, double elems)
{
  double bytes = msg_bytes(elems, d->pl->cfg->elem_bytes);
  d->st.bytes_sent += bytes;
  msg_send(out->hdr.kind == PIPELINE_MSG_ACTIVATIONS ? to->fwd_in[d->lane] : to->bwd_in[d->lane],
           d->pl->cfg->hosts[to->device * d->pl->lanes + d->lane], &out->hdr, bytes);
}

/* A message for microbatch mb of step `step` with room for n elements with numerics,
 * and none when timing only. */
static pipeline_msg *message(pipeline *pl, pipeline_msg_kind kind, size_t c, long step, long mb, double n)
{
  return pipeline_msg_create(kind, (int)c, step, mb, pl->numeric ? (size_t)n : 0);
}

static void forward_op(device *d, const pipeline_op *op, long step)
{
  pipeline *pl = d->pl;
  chunk *c = &pl->chunks[op->chunk];
  double b = (double)pl->p->microbatch;
  pipeline_msg *in =
      op->chunk > 0 ? receive_from(c->fwd_in[d->lane], PIPELINE_MSG_ACTIVATIONS, step, op->microbatch) : NULL;
  pipeline_msg *out =
      op->chunk + 1 < pl->K ? message(pl, PIPELINE_MSG_ACTIVATIONS, op->chunk, step, op->microbatch, b * c->out_width)
                            : NULL;
  kernel_io io = {op->microbatch, in, out};
  d->st.forward_s += timed_phase(d, c, PHASE_FORWARD, b, &io);
  if (pl->numeric && pl->kernel->forward)
    pl->kernel->forward(c->k, op->microbatch, in ? NULL : pl->X, in, out ? out->data : NULL, !pl->p->recompute);
  else
    msg_free(in);
  if (out)
    send_to(d, &pl->chunks[op->chunk + 1], out, b * c->out_width);
  d->stashed++;
  if (d->stashed > d->st.peak_stashed)
    d->st.peak_stashed = d->stashed;
  stash_add(d, b * (pl->p->recompute ? c->in_width : c->act_elems));
}

static void backward_op(device *d, const pipeline_op *op, long step)
{
  pipeline *pl = d->pl;
  chunk *c = &pl->chunks[op->chunk];
  double b = (double)pl->p->microbatch;
  pipeline_msg *in =
      op->chunk + 1 < pl->K ? receive_from(c->bwd_in[d->lane], PIPELINE_MSG_GRADIENTS, step, op->microbatch) : NULL;
  if (pl->p->recompute) { /* one more forward, from the stashed input (Chen et al. 2016) */
    kernel_io none = {op->microbatch, NULL, NULL};
    d->st.recompute_s += timed_phase(d, c, PHASE_RECOMPUTE, b, &none);
    if (pl->numeric)
      pl->kernel->recompute(c->k, op->microbatch);
    stash_add(d, b * (c->act_elems - c->in_width));
  }
  pipeline_msg *out =
      op->chunk > 0 ? message(pl, PIPELINE_MSG_GRADIENTS, op->chunk, step, op->microbatch, b * c->in_width) : NULL;
  kernel_io io = {op->microbatch, in, out};
  d->st.backward_s += timed_phase(d, c, PHASE_BACKWARD, b, &io);
  if (pl->numeric && pl->kernel->backward)
    pl->kernel->backward(c->k, op->microbatch, in ? in->data : NULL, out ? out->data : NULL);
  msg_free(in);
  if (out)
    send_to(d, &pl->chunks[op->chunk - 1], out, b * c->in_width);
  d->stashed--;
  stash_add(d, -b * c->act_elems);
}

/* Device 0, between steps, with every device at the barrier: the finished step is
 * published and counted, the run's end decided, and the next step's rows drawn. */
static void between_steps(pipeline *pl, long step)
{
  const run_config *cfg = pl->cfg;
  if (step > 0) {
    if (pl->numeric) {
      sg_mutex_lock(pl->mu);
      pl->kernel->publish(pl);
      sg_mutex_unlock(pl->mu);
    }
    pl->slot->steps++;
    eval_step_done(pl->eval);
  }
  pl->go = !eval_should_stop(pl->eval) && (cfg->max_steps == 0 || step < cfg->max_steps);
  if (!pl->go)
    pl->end = simgrid_get_clock();
  else if (pl->numeric)
    pl->kernel->draw(pl);
}

static int all_go_on(device *d, long step)
{
  pipeline *pl = d->pl;
  sg_barrier_wait(pl->start);
  if (d->idx == 0)
    between_steps(pl, step);
  sg_barrier_wait(pl->start);
  return pl->go;
}

static void listen(device *d)
{
  pipeline *pl = d->pl;
  for (size_t c = d->rank; c < pl->K; c += pl->p->stages) {
    sg_mailbox_set_receiver(sg_mailbox_get_name(pl->chunks[c].fwd_in[d->lane]));
    sg_mailbox_set_receiver(sg_mailbox_get_name(pl->chunks[c].bwd_in[d->lane]));
  }
}

static void pl_flush(device *d) { d->pl->kernel->flush(d->pl, d); }

/* mirror_replicas: replica j >= 1's device mirrors replica 0's twin (same stage, same tensor
 * rank); NULL for replica 0's devices and without mirroring. */
static device *twin_of(device *d)
{
  pipeline *pl = d->pl;
  if (!pl->p->mirror || d->lane < pl->t)
    return NULL;
  return &pl->devs[d->rank * pl->lanes + d->lane % pl->t];
}

static void device_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  device *d = sg_actor_self_get_data();
  device *twin = twin_of(d);
  if (twin == NULL)
    listen(d);
  for (long step = 0; all_go_on(d, step); step++) {
    if (twin) /* its replica computes and sends what replica 0 does, on links of its own: wait for the flush */
      sg_sem_acquire(twin->flushing);
    else
      for (size_t i = 0; i < d->n_ops; i++)
        if (d->ops[i].backward)
          backward_op(d, &d->ops[i], step);
        else
          forward_op(d, &d->ops[i], step);
    pl_flush(d);
  }
  eval_finished(d->pl->eval);
}

/* ---- set-up ---------------------------------------------------------------- */

static void snapshot(void *ctx, gsl_vector *w)
{
  pipeline *pl = ctx;
  sg_mutex_lock(pl->mu);
  gsl_vector_memcpy(w, pl->w_pub);
  sg_mutex_unlock(pl->mu);
}

static int shapes_fit_model(const arch *shapes, const net *model)
{
  if (arch_n_layers(shapes) != net_n_layers(model) + 1)
    return 0;
  for (size_t l = 0; l < arch_n_layers(shapes); l++)
    if (arch_units(shapes, l) != net_layer_size(model, l))
      return 0;
  return 1;
}

static void chunks_init(pipeline *pl, const size_t *counts)
{
  pl->chunks = xbt_malloc0(pl->K * sizeof(chunk));
  size_t l = 1;
  for (size_t c = 0; c < pl->K; c++) {
    chunk *ch = &pl->chunks[c];
    ch->first = l;
    ch->last = l + counts[c] - 1;
    ch->device = c % pl->p->stages;
    pl->kernel->costs(pl, ch);
    l = ch->last + 1;
    ch->fwd_in = xbt_malloc(pl->lanes * sizeof(sg_mailbox_t));
    ch->bwd_in = xbt_malloc(pl->lanes * sizeof(sg_mailbox_t));
    if (pl->lanes == 1) {
      ch->fwd_in[0] = mbox_of("pp-fwd", (int)c);
      ch->bwd_in[0] = mbox_of("pp-bwd", (int)c);
    }
    for (size_t lane = 0; pl->lanes > 1 && lane < pl->lanes; lane++) {
      char fwd[32], bwd[32];
      snprintf(fwd, sizeof(fwd), "pp-fwd-%zu", c);
      snprintf(bwd, sizeof(bwd), "pp-bwd-%zu", c);
      ch->fwd_in[lane] = mbox_of(fwd, (int)lane);
      ch->bwd_in[lane] = mbox_of(bwd, (int)lane);
    }
  }
}

/* Layers the chunks split: the transformer's, or the dense layers of the shapes. */
static size_t model_layers(const pipeline *pl)
{
  return pl->p->transformer ? pl->tp.layers : arch_n_layers(pl->shapes) - 1;
}

/* Megatron-LM's split of transformer layers: the same number on every chunk (the
 * embedding and the logits ride on the first and last); a remainder goes one layer each
 * to the first chunks. */
static void split_uniform(size_t layers, size_t k, size_t *counts)
{
  for (size_t c = 0; c < k; c++)
    counts[c] = layers / k + (c < layers % k ? 1 : 0);
}

static int counts_fit(const pipeline *pl, const size_t *counts)
{
  size_t sum = 0;
  for (size_t c = 0; c < pl->K; c++) {
    if (counts[c] == 0)
      return 0;
    sum += counts[c];
  }
  return sum == model_layers(pl);
}

/* 3D parallelism's communicators, Megatron-LM's order (initialize_model_parallel): device
 * (s, j, r) on hosts[(s dp + j) t + r]; the tensor group of (s, j) is t consecutive hosts,
 * the data-parallel group of (s, r) the hosts r apart by t within stage s's d t hosts, the
 * embedding pair of lane (j, r) its devices on the first and the last stage. */
static void comms_init(pipeline *pl)
{
  const run_config *cfg = pl->cfg;
  size_t p = pl->p->stages, t = pl->t, dp = pl->dp;
  coll_opts o = {cfg->elem_bytes, 0, cfg, 0, coll_mode_of(cfg), cfg->comm_sms};
  pl->tcomm = xbt_malloc0(p * dp * sizeof(coll_comm *));
  for (size_t g = 0; g < p * dp; g++)
    pl->tcomm[g] = coll_comm_create("pp-tensor", cfg->hosts + g * t, t, &o);
  sg_host_t *h = xbt_malloc((dp > 2 ? dp : 2) * sizeof(sg_host_t));
  if (dp > 1) {
    pl->dcomm = xbt_malloc0(p * t * sizeof(coll_comm *));
    for (size_t s = 0; s < p; s++)
      for (size_t r = 0; r < t; r++) {
        for (size_t j = 0; j < dp; j++)
          h[j] = cfg->hosts[(s * dp + j) * t + r];
        pl->dcomm[s * t + r] = coll_comm_create("pp-data", h, dp, &o);
      }
  }
  if (pl->tp.vocab > 0 && p > 1) {
    pl->ecomm = xbt_malloc0(pl->lanes * sizeof(coll_comm *));
    for (size_t lane = 0; lane < pl->lanes; lane++) {
      h[0] = cfg->hosts[lane];
      h[1] = cfg->hosts[(p - 1) * pl->lanes + lane];
      pl->ecomm[lane] = coll_comm_create("pp-embedding", h, 2, &o);
    }
  }
  xbt_free(h);
}

/* The shapes a transformer pipeline can run (as tensor_stage_create checks them). */
static int transformer_fits(const tensor_params *q)
{
  return q->ranks > 0 && q->heads > 0 && q->hidden % q->heads == 0 && q->heads % q->ranks == 0 &&
         (!q->seqpar || q->seq % q->ranks == 0) && (q->vocab % q->ranks == 0);
}

pipeline *pipeline_deploy(const run_config *cfg, const pipeline_params *p, const tensor_params *tp, const arch *shapes,
                          metrics *m)
{
  size_t K = p->stages * p->chunks;
  size_t layers = p->transformer ? tp->layers : arch_n_layers(shapes) - 1;
  if (p->stages == 0 || cfg->n_hosts < pipeline_hosts_needed(p, tp) || K == 0 || layers < K ||
      pipeline_schedule_ops((pipeline_schedule)p->schedule, p->stages, p->microbatches, p->chunks, 0, NULL) == 0 ||
      (cfg->numerics && !p->transformer && !shapes_fit_model(shapes, cfg->model)) ||
      (cfg->numerics && p->transformer && tp->vocab < DATA_TOKENS_SUCCESSORS) ||
      (p->transformer && (p->recompute || !transformer_fits(tp))) ||
      (!p->transformer && p->optimizer != PIPELINE_OPT_SGD))
    return NULL;
  pipeline *pl = xbt_malloc0(sizeof(*pl));
  pl->cfg = cfg;
  pl->p = p;
  pl->shapes = shapes;
  pl->K = K;
  pl->tp = *tp;
  pl->t = p->transformer ? tp->ranks : 1;
  pl->dp = p->transformer && tp->dp > 0 ? tp->dp : 1;
  pl->lanes = pl->t * pl->dp;
  pl->n_devs = p->stages * pl->lanes;
  size_t *counts = xbt_malloc0(K * sizeof(size_t));
  if (p->split)
    memcpy(counts, p->split, K * sizeof(size_t));
  else if (p->transformer)
    split_uniform(layers, K, counts);
  else
    pipeline_split_balanced(shapes, K, counts);
  if (!counts_fit(pl, counts)) {
    xbt_free(counts);
    xbt_free(pl);
    return NULL;
  }
  pl->kernel = p->transformer ? &transformer_kernel : &dense_kernel;
  chunks_init(pl, counts);
  xbt_free(counts);
  if (p->transformer)
    comms_init(pl);
  if (cfg->numerics) {
    pl->numeric = 1;
    pl->kernel->numerics(pl);
  }
  pl->start = sg_barrier_init((unsigned)pl->n_devs);
  pl->mu = sg_mutex_init();
  pl->slot = metrics_slot_at(m, 0);
  pl->eval = eval_ctl_create(cfg, m, (int)pl->n_devs, cfg->numerics ? snapshot : NULL, pl);
  if (cfg->numerics && p->transformer) {
    eval_set_snapshot_size(pl->eval, pl->w_pub->size);
    eval_set_measure(pl->eval, tf_measure, pl);
  }
  pl->devs = xbt_malloc0(pl->n_devs * sizeof(device));
  size_t n_ops = 2 * (size_t)p->microbatches * p->chunks;
  for (size_t i = 0; i < pl->n_devs; i++) {
    device *d = &pl->devs[i];
    char name[48];
    d->pl = pl;
    d->idx = i;
    d->rank = i / pl->lanes;
    d->lane = i % pl->lanes;
    size_t s = d->rank;
    d->ops = xbt_malloc(n_ops * sizeof(pipeline_op));
    d->n_ops = pipeline_schedule_ops((pipeline_schedule)p->schedule, p->stages, p->microbatches, p->chunks, s, d->ops);
    xbt_assert(d->n_ops == n_ops, "device %zu: %zu operations, want %zu", s, d->n_ops, n_ops);
    for (size_t c = s; c < K; c += p->stages)
      d->st.params += pl->chunks[c].params;
    if (pl->kernel->attach)
      pl->kernel->attach(pl, d);
    if (p->mirror && pl->dp > 1 && d->lane < pl->t)
      d->flushing = sg_sem_init(0);
    mbox_name(name, sizeof(name), p->mirror && d->lane >= pl->t ? "pp-mirror" : "pp-device", (int)i);
    sg_actor_t a = sg_actor_init(name, cfg->hosts[i]);
    sg_actor_set_data(a, d);
    sg_actor_start(a, device_actor, 0, NULL);
  }
  eval_start(pl->eval, cfg->hosts[0]);
  return pl;
}

static void comms_free(coll_comm **c, size_t n)
{
  for (size_t i = 0; c && i < n; i++)
    coll_comm_free(c[i]);
  xbt_free(c);
}

void pipeline_free(pipeline *pl)
{
  if (pl == NULL)
    return;
  for (size_t c = 0; pl->numeric && pl->kernel->free && c < pl->K; c++)
    pl->kernel->free(pl->chunks[c].k);
  for (size_t i = 0; i < pl->n_devs; i++) {
    if (pl->kernel->detach)
      pl->kernel->detach(&pl->devs[i]);
    xbt_free(pl->devs[i].ops);
    if (pl->devs[i].flushing)
      sg_sem_destroy(pl->devs[i].flushing);
  }
  for (size_t c = 0; c < pl->K; c++) {
    xbt_free(pl->chunks[c].fwd_in);
    xbt_free(pl->chunks[c].bwd_in);
  }
  comms_free(pl->tcomm, pl->p->stages * pl->dp);
  comms_free(pl->dcomm, pl->p->stages * pl->t);
  comms_free(pl->ecomm, pl->lanes);
  xbt_free(pl->devs);
  xbt_free(pl->chunks);
  if (pl->w) {
    gsl_vector_free(pl->w);
    gsl_vector_free(pl->w_pub);
    gsl_vector_free(pl->g);
    gsl_vector_free(pl->acc);
    gsl_matrix_free(pl->X);
    xbt_free(pl->y);
    gsl_rng_free(pl->rng);
  }
  if (pl->w0) {
    gsl_vector_free(pl->w0);
    gsl_vector_free(pl->w_pub);
    data_free(pl->tok_train);
    data_free(pl->tok_test);
    gsl_matrix_free(pl->seqs);
    xbt_free(pl->seq_y);
    gsl_rng_free(pl->rng);
  }
  eval_ctl_free(pl->eval);
  sg_mutex_destroy(pl->mu);
  sg_barrier_destroy(pl->start);
  xbt_free(pl);
}

void pipeline_stage_get(const pipeline *pl, size_t s, pipeline_stage_stats *st)
{
  xbt_assert(s < pl->p->stages, "stage %zu of %zu", s, pl->p->stages);
  *st = pl->devs[s * pl->lanes].st; /* replica 0's tensor rank 0 */
  st->busy_s = st->forward_s + st->backward_s + st->recompute_s;
  st->idle_s = fmax(0, pl->end - st->busy_s - st->update_s); /* below 0 only by rounding */
}

void pipeline_result_get(const pipeline *pl, pipeline_result *r)
{
  const pipeline_params *p = pl->p;
  memset(r, 0, sizeof(*r));
  r->makespan_s = pl->end;
  r->steps = pl->slot->steps;
  for (size_t s = 0; s < p->stages; s++) {
    pipeline_stage_stats st;
    pipeline_stage_get(pl, s, &st);
    r->bubble_fraction += pl->end > 0 ? st.idle_s / pl->end / (double)p->stages : 0;
  }
  pipeline_schedule sch = (pipeline_schedule)p->schedule;
  r->formula = pipeline_bubble_formula(sch, p->stages, p->microbatches, p->chunks);
  double vm = (double)p->microbatches * (double)(sch == PIPELINE_INTERLEAVED ? p->chunks : 1);
  r->formula_ideal = (double)(p->stages - 1) / vm;
  double mb = (double)r->steps * (double)p->microbatches;
  r->t_forward_s = mb > 0 ? pl->devs[0].st.forward_s / mb : 0;
  r->t_backward_s = mb > 0 ? pl->devs[0].st.backward_s / mb : 0;
  r->gpus = pl->n_devs;
  for (size_t i = 0; i < pl->n_devs; i++) {
    device *twin = twin_of(&pl->devs[i]);
    r->p2p_bytes += (twin ? twin : &pl->devs[i])->st.bytes_sent;
  }
  if (p->transformer) {
    r->model_flops = tensor_microbatch_flops(&pl->tp) * mb * (double)pl->dp;
    r->tflops_per_gpu = pl->end > 0 ? r->model_flops / pl->end / (double)pl->n_devs / 1e12 : 0;
  }
}

const coll_comm *pipeline_tensor_comm(const pipeline *pl, size_t s, size_t j)
{
  xbt_assert(s < pl->p->stages && j < pl->dp, "stage %zu replica %zu", s, j);
  return pl->tcomm ? pl->tcomm[s * pl->dp + j] : NULL;
}

const coll_comm *pipeline_dp_comm(const pipeline *pl, size_t s, size_t r)
{
  xbt_assert(s < pl->p->stages && r < pl->t, "stage %zu tensor rank %zu", s, r);
  return pl->dcomm ? pl->dcomm[s * pl->t + r] : NULL;
}

int pipeline_gpt_get(const pipeline *pl, pipeline_gpt_result *r)
{
  memset(r, 0, sizeof(*r));
  if (pl->w0 == NULL)
    return -1;
  r->dims = &pl->gd;
  r->w = pl->w_pub;
  r->w0 = pl->w0;
  for (size_t i = 0; i < pl->n_devs; i++) {
    const tf_device *k = pl->devs[i].ks;
    for (size_t c = 0; c < pl->p->chunks; c++)
      r->copies_diff = fmax(r->copies_diff, tensor_stage_diff(k->ts[c], pl->w_pub));
  }
  r->initial_loss = pl->initial_loss;
  r->initial_accuracy = pl->initial_accuracy;
  r->train_loss = pl->train_loss;
  r->train_sequences = data_n(pl->tok_train);
  r->test_sequences = data_n(pl->tok_test);
  return 0;
}

void pipeline_gpt_serial(const pipeline *pl, long steps, gsl_vector *ws)
{
  xbt_assert(pl->w0 && ws->size == pl->w0->size, "pipeline_gpt_serial: not a numeric transformer run");
  size_t n = ws->size, b = pl->tp.microbatch, m = (size_t)pl->p->microbatches;
  gsl_vector *g = gsl_vector_alloc(n), *g1 = gsl_vector_alloc(n);
  double *m1 = xbt_malloc0(n * sizeof(double)), *m2 = xbt_malloc0(n * sizeof(double));
  gsl_matrix *X = gsl_matrix_alloc(pl->seqs->size1, pl->seqs->size2);
  double *y = xbt_malloc0(X->size1 * sizeof(double)), loss;
  gsl_rng *r = rng_create(pl->cfg->seed, RNG_ROLE_WORKER, 0); /* device 0's stream: the same draws */
  gsl_vector_memcpy(ws, pl->w0);
  for (long step = 1; step <= steps; step++) {
    data_sample_batch(pl->tok_train, 0, data_n(pl->tok_train), r, X->size1, X, y);
    gsl_vector_set_zero(g);
    for (size_t j = 0; j < pl->dp; j++)
      for (size_t mb = 0; mb < m; mb++) {
        xbt_assert(gpt_loss_grad(&pl->gd, ws, b, gsl_matrix_const_ptr(X, (j * m + mb) * b, 0), &loss, g1) == 0,
                   "pipeline_gpt_serial: shapes");
        gsl_vector_add(g, g1);
      }
    gsl_vector_scale(g, 1.0 / ((double)m * (double)pl->dp));
    if (pl->p->optimizer == PIPELINE_OPT_ADAM)
      optim_adam_apply(ws->data, m1, m2, g->data, n, pl->p->lr, OPTIM_ADAM_B1, OPTIM_ADAM_B2, OPTIM_ADAM_EPS, step);
    else
      optim_sgd_apply(ws->data, g->data, n, pl->p->lr);
  }
  gsl_rng_free(r);
  gsl_vector_free(g);
  gsl_vector_free(g1);
  gsl_matrix_free(X);
  xbt_free(y);
  xbt_free(m1);
  xbt_free(m2);
}

void pipeline_chunk_layers(const pipeline *pl, size_t c, size_t *first, size_t *last)
{
  xbt_assert(c < pl->K, "chunk %zu of %zu", c, pl->K);
  *first = pl->chunks[c].first;
  *last = pl->chunks[c].last;
}

/* ---- the descriptor: run.algorithm = pipeline ----------------------------------- */

static int check_split(const char *v, char *why, size_t len)
{
  char q[KEY_QUOTE_MAX + 8];
  if (strcmp(v, "balanced") == 0 || key_sizes_parse(v, NULL, 0) > 0)
    return 0;
  snprintf(why, len, "%s is neither `balanced` nor a comma-separated list of layer counts (e.g. 2,1,1)",
           key_quote(v, q, sizeof q));
  return -1;
}

static const key_spec pipeline_keys[] = {
  {"pipeline", "stages", KEY_SIZE, KEY_FIELD(pipeline_params, stages), .def = "2", .unit = "hosts",
   .doc = "p: pipeline stages (devices), stage s on host s (with `model = transformer`, t x d GPUs per stage: "
          "see `model`); stages x chunks model chunks need at least as many layers.",
   KEY_GE(1), KEY_LE(4096)},
  {"pipeline", "microbatches", KEY_LONG, KEY_FIELD(pipeline_params, microbatches), .def = "4", .unit = "microbatches",
   .doc = "m: microbatches per step; the interleaved schedule needs a multiple of `stages`.", KEY_GE(1), KEY_LE(100000)},
  {"pipeline", "microbatch", KEY_LONG, KEY_FIELD(pipeline_params, microbatch), .def = "8", .unit = "examples",
   .doc = "b: examples per microbatch; a step trains on microbatches x microbatch examples.", KEY_GE(1)},
  {"pipeline", "schedule", KEY_CHOICE, KEY_FIELD(pipeline_params, schedule), .def = "1f1b", .unit = "",
   .doc = "`gpipe`: every forward, then every backward (Huang et al. 2019); `1f1b`: PipeDream-Flush, "
          "stages - s - 1 warm-up forwards on stage s, then one forward one backward, then the cool-down; "
          "`interleaved`: Megatron's interleaved 1F1B over `chunks` model chunks per device (Narayanan et al. "
          "2021).",
   .choices = "gpipe|1f1b|interleaved"},
  {"pipeline", "chunks", KEY_SIZE, KEY_FIELD(pipeline_params, chunks), .def = "1", .unit = "chunks",
   .doc = "v: model chunks per device; device s holds chunks s, s + stages, ...; 1 for gpipe and 1f1b, at "
          "least 2 for interleaved.",
   KEY_GE(1), KEY_LE(64)},
  {"pipeline", "recompute", KEY_BOOL, KEY_FIELD(pipeline_params, recompute), .def = "off", .unit = "",
   .doc = "`on`: activation recomputation, each stage stashes only its chunks' inputs and runs the forward "
          "again before each backward."},
  {"pipeline", "lr", KEY_DOUBLE, KEY_FIELD(pipeline_params, lr), .def = "0.05", .unit = "",
   .doc = "Learning rate of the synchronous update, applied with the mean gradient of the step's "
          "microbatches x microbatch examples (x data-parallel replicas with transformer stages).",
   KEY_GT(0)},
  {"pipeline", "optimizer", KEY_CHOICE, KEY_FIELD(pipeline_params, optimizer), .def = "sgd", .unit = "",
   .doc = "The update at the flush: `sgd` (w -= lr x gradient) or, with `model = transformer`, `adam` "
          "(Kingma and Ba 2015: b1 0.9, b2 0.999, eps 1e-8, bias-corrected), each device on its own "
          "entries of the model.",
   .choices = "sgd|adam"},
  {"pipeline", "model", KEY_CHOICE, KEY_FIELD(pipeline_params, transformer), .def = "dense", .unit = "",
   .doc = "`dense`: the stages are dense layers of `model.layers` (or `model.virtual`); `transformer`: 3D "
          "parallelism: the stages are GPT layers with the shapes of `[tensor]` (hidden, "
          "heads, layers, seq, microbatch as b, vocab, recompute, sequence_parallel, "
          "async_grad_allreduce, collective), each stage a tensor group of `tensor.ranks` GPUs, "
          "`tensor.data_parallel` pipeline replicas; stage s, replica j, tensor rank r on host "
          "(s x d + j) x t + r; layers split evenly (`split` may set them), the embedding on the first "
          "chunk and the logits on the last; `pipeline.microbatch` is replaced by `tensor.microbatch` and "
          "`pipeline.recompute` by `tensor.recompute`. With `model.numerics = on` the GPT trains on the "
          "synthetic token language (`tensor.vocab` tokens, `data.train` and `data.test` sequences of "
          "`tensor.seq` + 1 tokens), each device holding only its shard.",
   .choices = "dense|transformer"},
  {"pipeline", "serial_check", KEY_BOOL, KEY_FIELD(pipeline_params, serial_check), .def = "off", .unit = "",
   .doc = "Numeric transformer stages: `on`: after the run, train the serial GPT (plain loops, one "
          "process) from the same start on the same batches for the same steps and report in "
          "summary.json how far the 3D run's parameters are from it (`pipeline.check`); five to ten "
          "times the run's CPU (plain loops): for small shapes."},
  {"pipeline", "scatter_gather", KEY_BOOL, KEY_FIELD(pipeline_params, scatter_gather), .def = "on", .unit = "",
   .doc = "Transformer stages: `on`: each tensor rank sends its b x seq x hidden / t slice of a stage "
          "boundary to the same rank of the next stage, which allgathers it in its tensor group (PTD-P "
          "sec. 4.1); `off`: every rank sends the whole b x seq x hidden."},
  {"pipeline", "mirror_replicas", KEY_BOOL, KEY_FIELD(pipeline_params, mirror), .def = "off", .unit = "",
   .doc = "Transformer stages, timing only: `on`: the data-parallel replicas 1 to d-1 do not simulate their "
          "pipeline; each of their devices waits for its twin in replica 0 (same stage, same tensor rank) to "
          "reach the step's flush and runs the flush (the data-parallel and embedding allreduces) with it. "
          "Exact when the replicas are alike and share no link before the flush, which is checked before the "
          "run (same host speeds, routes of the same latency and bandwidth, no link used by two replicas' "
          "tensor groups or stage boundaries, no stragglers, speed spread, jitter or faults; exit 2 "
          "otherwise): d times fewer activities. links.csv and the traffic totals then hold replica 0's "
          "pipeline traffic only (`pipeline.p2p_bytes` counts each mirror as its twin)."},
  {"pipeline", "split", KEY_STR, KEY_FIELD(pipeline_params, split_text), .def = "balanced", .unit = "layers",
   .doc = "Layers of each model chunk in order, `stages x chunks` counts adding up to the dense layers "
          "(e.g. `2,1,1`); `balanced`: contiguous chunks whose largest training flops are smallest.",
   .check = check_split},
};

/* A numeric 3D run holds at most 2^27 doubles (1 GiB), as a numeric tensor run. */
#define TF_NUMERIC_MAX (1.0 * (1L << 27))

/* Dense layers of the network whose shapes the run times: model.virtual's, else model.layers'. */
static size_t shape_layers(const scenario *sc)
{
  const arch *v = sc->model.virtual_net[0] ? arch_virtual_find(sc->model.virtual_net) : NULL;
  if (v)
    return arch_n_layers(v) - 1;
  int n = key_sizes_parse(sc->model.layers, NULL, 0);
  return n > 1 ? (size_t)n - 1 : 0;
}

static const tensor_params *tensor_of(const scenario *sc)
{
  return algorithm_params(sc, &tensor_algorithm);
}

/* Doubles a numeric 3D run holds (tensor_stage_numerics), over every device: per layer and
 * stash slot a transformer_part (rows x h x 6, n x h x 4, n x h/t x 8, n x 4h/t x 3, the
 * attention's b a s^2 / t), the layer's full-layout weights and gradient (12h^2 + 13h each,
 * NaN outside the shard), each microbatch's layer inputs, and on the last stage a head per
 * microbatch (2 n h + n V/t). */
static double tf_numeric_doubles(const pipeline_params *p, const tensor_params *q)
{
  double t = (double)q->ranks, h = (double)q->hidden, b = (double)q->microbatch, s = (double)q->seq;
  double n = b * s, rows = q->seqpar ? n / t : n, m = (double)p->microbatches, lay = (double)q->layers;
  double part = rows * h * 6 + n * h * 4 + n * h / t * 8 + n * 4 * h / t * 3 + b * (double)q->heads * s * s / t;
  double per_layer = part * (q->recompute ? 1 : m) + 2 * (12 * h * h + 13 * h) + m * rows * h;
  double head = m * (2 * n * h + n * (double)q->vocab / t);
  double gpus_per_stage = t * (double)(q->dp > 0 ? q->dp : 1);
  return gpus_per_stage * (lay * per_layer + head);
}

/* Numeric transformer stages: what the GPT and its token language need. */
static int tf_numeric_invalid(const scenario *sc, const pipeline_params *p, const tensor_params *q, char *why,
                              size_t len)
{
  if (q->vocab < DATA_TOKENS_SUCCESSORS)
    snprintf(why, len, "tensor.vocab: a numeric GPT needs a vocabulary of at least %d tokens (the synthetic "
             "language's successors), got %zu", DATA_TOKENS_SUCCESSORS, q->vocab);
  else if (strncmp(sc->data.source, "synthetic-", 10) != 0)
    snprintf(why, len, "data.source: numeric transformer stages train on the synthetic token language; '%s' does "
             "not apply (data.train and data.test give its sequences)", sc->data.source);
  else if (tf_numeric_doubles(p, q) > TF_NUMERIC_MAX)
    snprintf(why, len, "tensor.hidden: a numeric 3D run this large holds about %.3g doubles, more than 2^27; set "
             "model.numerics = off for a timing-only run", tf_numeric_doubles(p, q));
  else
    return 0;
  return 1;
}

static int validate(const scenario *sc, const void *params, char *why, size_t len)
{
  const pipeline_params *p = params;
  const tensor_params *tp = tensor_of(sc);
  int inter = p->schedule == PIPELINE_INTERLEAVED, tf = p->transformer;
  long chunks = (long)(p->stages * p->chunks), layers = tf ? (long)tp->layers : (long)shape_layers(sc);
  if (tf && p->recompute) {
    snprintf(why, len, "pipeline.recompute: transformer stages recompute as tensor.recompute says; set "
             "pipeline.recompute = off and tensor.recompute = on");
    return -1;
  }
  if (tf && (tensor_validate_shapes(tp, why, len) != 0 || tensor_validate_fuse(sc, tp, why, len) != 0))
    return -1;
  if (tf && sc->model.virtual_net[0]) {
    snprintf(why, len, "model.virtual: transformer stages are timed by [tensor]'s GPT shapes; a virtual network "
             "(%s, dense or locally connected layers) cannot time them", sc->model.virtual_net);
    return -1;
  }
  if (!tf && p->optimizer != PIPELINE_OPT_SGD) {
    snprintf(why, len, "pipeline.optimizer: adam updates transformer stages (pipeline.model = transformer); dense "
             "stages update with sgd");
    return -1;
  }
  if (tf && sc->model.numerics && tf_numeric_invalid(sc, p, tp, why, len))
    return -1;
  if (p->mirror && (!tf || sc->model.numerics)) {
    snprintf(why, len, "pipeline.mirror_replicas: mirrors the data-parallel replicas of transformer stages "
             "(pipeline.model = transformer) in timing-only runs (model.numerics = off): each replica trains "
             "on its own data");
    return -1;
  }
  size_t nk = sizeof pipeline_keys / sizeof pipeline_keys[0];
  if (tf && key_changed(pipeline_keys, nk, p, "microbatch")) {
    snprintf(why, len, "pipeline.microbatch: has no effect with pipeline.model = transformer, whose microbatch is "
             "tensor.microbatch sequences");
    return -1;
  }
  if (!tf && key_changed(pipeline_keys, nk, p, "scatter_gather")) {
    snprintf(why, len, "pipeline.scatter_gather: has no effect on dense stages (pipeline.model = dense): it splits a "
             "transformer stage boundary over its tensor ranks");
    return -1;
  }
  size_t counts[SETTINGS_MAX_LAYERS];
  int n = strcmp(p->split_text, "balanced") == 0 ? 0 : key_sizes_parse(p->split_text, counts, SETTINGS_MAX_LAYERS);
  long sum = 0;
  for (int i = 0; i < n; i++)
    sum += (long)counts[i];
  if (!inter && p->chunks != 1)
    snprintf(why, len, "pipeline.chunks: %zu chunks per device need pipeline.schedule = interleaved (%s runs one)",
             p->chunks, pipeline_schedule_name((pipeline_schedule)p->schedule));
  else if (inter && p->chunks < 2)
    snprintf(why, len, "pipeline.chunks: the interleaved schedule needs at least 2 model chunks per device, got %zu",
             p->chunks);
  else if (inter && p->microbatches % (long)p->stages != 0)
    snprintf(why, len, "pipeline.microbatches: the interleaved schedule needs a multiple of pipeline.stages = %zu, "
             "got %ld", p->stages, p->microbatches);
  else if (chunks > layers)
    snprintf(why, len, "pipeline.stages: %zu stages x %zu chunks need at least %ld layers, the %s has %ld", p->stages,
             p->chunks, chunks, tf ? "transformer (tensor.layers)" : sc->model.virtual_net[0] ? "virtual network" : "model",
             layers);
  else if (n < 0 || (n > 0 && (n != chunks || sum != layers)))
    snprintf(why, len, "pipeline.split: '%s' must give %ld layer counts (stages x chunks) adding up to the %ld layers",
             p->split_text, chunks, layers);
  else if (sc->model.numerics && sc->model.virtual_net[0] && !tf)
    snprintf(why, len, "model.virtual: a numeric pipeline splits model.layers; time a virtual network (%s) with "
             "model.numerics = off", sc->model.virtual_net);
  else if (!sc->model.numerics && sc->run.target_accuracy > 0)
    snprintf(why, len, "run.target_accuracy: a timing-only pipeline (model.numerics = off) has no accuracy to reach");
  else
    return 0;
  return -1;
}

static size_t hosts_needed(const scenario *sc, const void *params, const char **why)
{
  const pipeline_params *p = params;
  *why = p->transformer ? "pipeline.stages x tensor.ranks x tensor.data_parallel" : "pipeline.stages";
  return pipeline_hosts_needed(p, tensor_of(sc));
}

typedef struct pipeline_run {
  pipeline_params p;       /* the section, with split parsed and (3D) tensor.microbatch as b */
  const tensor_params *tp;
  size_t split[SETTINGS_MAX_LAYERS];
  const arch *shapes;
  arch *own_shapes;
  pipeline *pl;
  double memory_bytes;     /* the most loaded GPU's estimate (summary.json's memory_per_gpu) */
} pipeline_run;

static void *prepare(const run_config *cfg, char *err, size_t len)
{
  (void)err;
  (void)len;
  pipeline_run *r = xbt_malloc0(sizeof(*r));
  r->p = *(const pipeline_params *)algorithm_params(cfg->sc, &pipeline_algorithm);
  r->tp = tensor_of(cfg->sc);
  r->p.split = NULL;
  if (strcmp(r->p.split_text, "balanced") != 0 && key_sizes_parse(r->p.split_text, r->split, SETTINGS_MAX_LAYERS) > 0)
    r->p.split = r->split; /* checked by validate */
  if (r->p.transformer)
    r->p.microbatch = (long)r->tp->microbatch;
  r->shapes = run_shapes(cfg, &r->own_shapes);
  return r;
}

/* ---- mirror_replicas: when mirroring is exact ------------------------------------------ *
 *
 * Before its flush a replica's devices talk only inside the replica: ring steps (and, for
 * other collectives, any pair) inside a stage's tensor group, boundary messages between a
 * stage's ranks and the next or previous stage's (the last to the first with interleaving),
 * and the embedding's pair of the first and last stages. Replica j then takes exactly replica
 * 0's times when its hosts compute alike (the same speed and cores as their twins, nothing
 * that slows one host: stragglers, speed spread, jitter, faults), every route it uses has the
 * same latency and bandwidth as its twin route, and no link carries two replicas' traffic
 * (SimGrid shares a link's bandwidth among the flows on it). */

typedef struct mirror_link {
  const void *link;
  size_t replica;
} mirror_link;

static int cmp_mirror_link(const void *a, const void *b)
{
  const mirror_link *x = a, *y = b;
  uintptr_t p = (uintptr_t)x->link, q = (uintptr_t)y->link;
  return p < q ? -1 : p > q ? 1 : x->replica < y->replica ? -1 : x->replica > y->replica;
}

static sg_host_t replica_host(const run_config *cfg, size_t dp, size_t t, size_t s, size_t j, size_t r)
{
  return cfg->hosts[(s * dp + j) * t + r];
}

static int check_mirror(const pipeline_run *run, const run_config *cfg, char *err, size_t len)
{
  size_t p = run->p.stages, t = run->tp->ranks, dp = run->tp->dp > 0 ? run->tp->dp : 1;
  if (!run->p.mirror || dp == 1)
    return 0;
  const scenario *sc = cfg->sc;
  if (sc->faults.stragglers[0] || sc->platform.speed_spread > 0 || sc->platform.jitter > 0 ||
      sc->faults.host_failures[0] || sc->faults.link_failures[0] || sc->faults.link_degrade[0]) {
    snprintf(err, len, "pipeline.mirror_replicas: replicas mirror replica 0 only when their hosts compute alike; "
             "stragglers, platform.speed_spread, platform.jitter and [faults] make them differ");
    return -1;
  }
  for (size_t j = 1; j < dp; j++)
    for (size_t s = 0; s < p; s++)
      for (size_t r = 0; r < t; r++) {
        sg_host_t h = replica_host(cfg, dp, t, s, j, r), h0 = replica_host(cfg, dp, t, s, 0, r);
        if (sg_host_get_speed(h) != sg_host_get_speed(h0) || sg_host_core_count(h) != sg_host_core_count(h0)) {
          snprintf(err, len, "pipeline.mirror_replicas: host %s (replica %zu) does not compute as %s (replica 0)",
                   sg_host_get_name(h), j, sg_host_get_name(h0));
          return -1;
        }
      }
  /* the pairs a replica's devices talk over before the flush: (stage, rank) -> (stage, rank) */
  size_t cap = 1024, n_links = 0;
  mirror_link *links = xbt_malloc(cap * sizeof(*links));
  xbt_dynar_t route = xbt_dynar_new(sizeof(sg_link_t), NULL);
  int bad = 0;
  for (size_t s = 0; s < p && !bad; s++)
    for (size_t s2 = 0; s2 < p && !bad; s2++) {
      if (s2 != s && s2 != (s + 1) % p && s != (s2 + 1) % p) /* adjacent, the last and first too */
        continue;
      for (size_t r = 0; r < t && !bad; r++)
        for (size_t r2 = 0; r2 < t && !bad; r2++) {
          if (s2 == s && r2 == r)
            continue;
          sg_host_t a0 = replica_host(cfg, dp, t, s, 0, r), b0 = replica_host(cfg, dp, t, s2, 0, r2);
          double lat0 = sg_host_get_route_latency(a0, b0), bw0 = sg_host_get_route_bandwidth(a0, b0);
          for (size_t j = 0; j < dp && !bad; j++) {
            sg_host_t a = replica_host(cfg, dp, t, s, j, r), b = replica_host(cfg, dp, t, s2, j, r2);
            if (j > 0 && (sg_host_get_route_latency(a, b) != lat0 || sg_host_get_route_bandwidth(a, b) != bw0)) {
              snprintf(err, len, "pipeline.mirror_replicas: the route %s -> %s (replica %zu) differs from its twin "
                       "%s -> %s (replica 0) in latency or bandwidth", sg_host_get_name(a), sg_host_get_name(b), j,
                       sg_host_get_name(a0), sg_host_get_name(b0));
              bad = 1;
              break;
            }
            xbt_dynar_reset(route);
            sg_host_get_route(a, b, route);
            unsigned i;
            sg_link_t l;
            xbt_dynar_foreach (route, i, l) {
              if (n_links == cap)
                links = xbt_realloc(links, (cap *= 2) * sizeof(*links));
              links[n_links++] = (mirror_link){l, j};
            }
          }
        }
    }
  xbt_dynar_free(&route);
  if (!bad) {
    qsort(links, n_links, sizeof(*links), cmp_mirror_link);
    for (size_t i = 1; i < n_links && !bad; i++)
      if (links[i].link == links[i - 1].link && links[i].replica != links[i - 1].replica) {
        snprintf(err, len, "pipeline.mirror_replicas: replicas %zu and %zu both use link %s before the flush, where "
                 "their traffic would meet; mirroring would not be exact", links[i - 1].replica, links[i].replica,
                 sg_link_get_name((const_sg_link_t)links[i].link));
        bad = 1;
      }
  }
  xbt_free(links);
  return bad ? -1 : 0;
}

static int check_hosts(void *state, const run_config *cfg, char *err, size_t len)
{
  pipeline_run *r = state;
  if (!r->p.transformer)
    return 0;
  return tensor_check_mem_bw(r->tp, cfg, err, len) != 0 ? -1 : check_mirror(r, cfg, err, len);
}

static void deploy(void *state, const run_config *cfg, metrics *m)
{
  pipeline_run *r = state;
  r->pl = pipeline_deploy(cfg, &r->p, r->tp, r->shapes, m);
  xbt_assert(r->pl, "pipeline_deploy refused a configuration the scenario checked");
}

/* Host names of a communicator's members in rank order. */
static json_t *comm_hosts(const coll_comm *c)
{
  json_t *a = json_array();
  for (size_t i = 0; i < coll_comm_size(c); i++)
    json_array_append_new(a, json_string(sg_host_get_name(coll_comm_host(c, i))));
  return a;
}

/* The 3D part of the pipeline block: shapes, flop rate, and the groups the run used
 * (tensor_groups[s d + j]: stage s replica j's hosts; dp_groups[s t + r]: stage s tensor
 * rank r's data-parallel hosts). */
static void pipeline3d_json(json_t *o, const pipeline_run *r, const pipeline_result *pr)
{
  const pipeline_params *p = &r->p;
  const tensor_params *tp = r->tp;
  json_object_set_new(o, "model", json_string("transformer"));
  json_object_set_new(o, "scatter_gather", json_boolean(p->scatter_gather));
  json_object_set_new(o, "tensor_ranks", json_integer((json_int_t)tp->ranks));
  json_object_set_new(o, "data_parallel", json_integer((json_int_t)tp->dp));
  json_object_set_new(o, "mirror_replicas", json_boolean(p->mirror && tp->dp > 1));
  json_object_set_new(o, "model_flops", report_num(pr->model_flops));
  json_object_set_new(o, "tflops_per_gpu", report_num(pr->tflops_per_gpu));
  json_t *tg = json_array(), *dg = json_array();
  for (size_t s = 0; s < p->stages; s++)
    for (size_t j = 0; j < tp->dp; j++)
      json_array_append_new(tg, comm_hosts(pipeline_tensor_comm(r->pl, s, j)));
  for (size_t s = 0; tp->dp > 1 && s < p->stages; s++)
    for (size_t k = 0; k < tp->ranks; k++)
      json_array_append_new(dg, comm_hosts(pipeline_dp_comm(r->pl, s, k)));
  json_object_set_new(o, "tensor_groups", tg);
  json_object_set_new(o, "dp_groups", dg);
}

/* Numeric transformer stages: the "gpt" part of the pipeline block (the model, its language,
 * the losses, whether every copy of an entry agrees) and, with serial_check, "check": the
 * largest |difference| between the run's parameters and the serial GPT's after the same steps,
 * and that relative to how far the serial parameters moved from the start. */
/* FNV-1a (Fowler, Noll, Vo) over the bytes of x: equal vectors, bit for bit, give equal hashes. */
static uint64_t fnv1a(const double *x, size_t n)
{
  const unsigned char *b = (const unsigned char *)x;
  uint64_t h = 14695981039346656037ULL;
  for (size_t i = 0; i < n * sizeof(double); i++)
    h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}

static void pipeline_gpt_json(json_t *o, const pipeline_run *r, const metrics *m, long steps)
{
  pipeline_gpt_result g;
  if (pipeline_gpt_get(r->pl, &g) != 0)
    return;
  size_t ne = metrics_n_evals(m);
  double last = ne > 0 ? metrics_eval_at(m, ne - 1)->loss : NAN;
  char hash[24];
  snprintf(hash, sizeof hash, "%016llx", (unsigned long long)fnv1a(g.w->data, g.w->size));
  const gpt_dims *d = g.dims;
  json_t *x = json_object();
  json_object_set_new(x, "vocab", json_integer((json_int_t)d->vocab));
  json_object_set_new(x, "seq", json_integer((json_int_t)d->seq));
  json_object_set_new(x, "hidden", json_integer((json_int_t)d->hidden));
  json_object_set_new(x, "heads", json_integer((json_int_t)d->heads));
  json_object_set_new(x, "layers", json_integer((json_int_t)d->layers));
  json_object_set_new(x, "params", json_integer((json_int_t)gpt_n_params(d)));
  json_object_set_new(x, "optimizer", json_string(r->p.optimizer == PIPELINE_OPT_ADAM ? "adam" : "sgd"));
  json_object_set_new(x, "lr", report_num(r->p.lr));
  json_object_set_new(x, "train_sequences", json_integer((json_int_t)g.train_sequences));
  json_object_set_new(x, "test_sequences", json_integer((json_int_t)g.test_sequences));
  json_object_set_new(x, "loss_floor", report_num(data_tokens_loss_floor(d->seq + 1, d->vocab)));
  json_object_set_new(x, "initial_loss", report_num(g.initial_loss));
  json_object_set_new(x, "initial_accuracy", report_num(g.initial_accuracy));
  json_object_set_new(x, "initial_perplexity", report_num(exp(g.initial_loss)));
  json_object_set_new(x, "final_perplexity", report_num(exp(last)));
  json_object_set_new(x, "train_loss", report_num(g.train_loss));
  json_object_set_new(x, "copies_max_diff", report_num(g.copies_diff));
  json_object_set_new(x, "params_hash", json_string(hash));
  json_object_set_new(o, "gpt", x);
  json_t *ck = json_object();
  json_object_set_new(ck, "serial", json_boolean(r->p.serial_check));
  if (r->p.serial_check) {
    gsl_vector *ws = gsl_vector_alloc(g.w->size);
    pipeline_gpt_serial(r->pl, steps, ws);
    double diff = 0, moved = 0;
    for (size_t i = 0; i < ws->size; i++) {
      diff = fmax(diff, fabs(g.w->data[i] - ws->data[i]));
      moved = fmax(moved, fabs(ws->data[i] - g.w0->data[i]));
    }
    json_object_set_new(ck, "steps", json_integer(steps));
    json_object_set_new(ck, "max_abs_error", report_num(diff));
    json_object_set_new(ck, "max_moved", report_num(moved));
    json_object_set_new(ck, "max_rel_error", moved > 0 ? report_num(diff / moved) : json_null());
    gsl_vector_free(ws);
  }
  json_object_set_new(o, "check", ck);
}

/* summary.json's "pipeline" block (the schedule, the split, the bubble against its
 * formula in both conventions, per-stage busy, idle and stash) and pipeline.csv, one row
 * per stage. */
static void report_run(void *state, const run_config *cfg, metrics *m, report *rep)
{
  pipeline_run *r = state;
  const pipeline_params *p = &r->p;
  pipeline_result pr;
  pipeline_result_get(r->pl, &pr);
  rep->examples = metrics_total_steps(m) * p->microbatches * p->microbatch * (p->transformer ? (long)r->tp->dp : 1);
  rep->step_time_s = pr.steps > 0 ? pr.makespan_s / (double)pr.steps : NAN;
  rep->model_flops = p->transformer ? pr.model_flops : (double)rep->examples * cfg->train_flops;
  rep->flops_time_s = pr.makespan_s;
  rep->devices = pr.gpus;
  rep->worker_role = "pp-device";
  json_t *o = json_object(), *split = json_array(), *stages = json_array();
  json_object_set_new(o, "schedule", json_string(pipeline_schedule_name((pipeline_schedule)p->schedule)));
  json_object_set_new(o, "stages", json_integer((json_int_t)p->stages));
  json_object_set_new(o, "microbatches", json_integer(p->microbatches));
  json_object_set_new(o, "microbatch", json_integer(p->microbatch));
  json_object_set_new(o, "chunks", json_integer((json_int_t)p->chunks));
  json_object_set_new(o, "recompute", json_boolean(p->recompute));
  for (size_t c = 0; c < p->stages * p->chunks; c++) {
    size_t first, last;
    pipeline_chunk_layers(r->pl, c, &first, &last);
    json_t *a = json_array();
    json_array_append_new(a, json_integer((json_int_t)first));
    json_array_append_new(a, json_integer((json_int_t)last));
    json_array_append_new(split, a);
  }
  json_object_set_new(o, "chunk_layers", split);
  json_object_set_new(o, "makespan_s", report_num(pr.makespan_s));
  json_object_set_new(o, "bubble_fraction", report_num(pr.bubble_fraction));
  json_object_set_new(o, "formula", report_num(pr.formula));
  json_object_set_new(o, "formula_ideal", report_num(pr.formula_ideal));
  json_object_set_new(o, "t_forward_s", report_num(pr.t_forward_s));
  json_object_set_new(o, "t_backward_s", report_num(pr.t_backward_s));
  report_text t = {0};
  report_printf(&t, "stage,params,forward_s,backward_s,recompute_s,update_s,busy_s,idle_s,idle_fraction,peak_stashed,"
                "peak_stash_bytes,bytes_sent\n");
  for (size_t s = 0; s < p->stages; s++) {
    pipeline_stage_stats st;
    pipeline_stage_get(r->pl, s, &st);
    json_t *x = json_object();
    json_object_set_new(x, "busy_s", report_num(st.busy_s));
    json_object_set_new(x, "idle_s", report_num(st.idle_s));
    json_object_set_new(x, "peak_stashed", json_integer(st.peak_stashed));
    json_object_set_new(x, "peak_stash_bytes", report_num(st.peak_stash_bytes));
    json_object_set_new(x, "bytes_sent", report_num(st.bytes_sent));
    json_object_set_new(x, "update_s", report_num(st.update_s));
    json_object_set_new(x, "params", report_num(st.params));
    json_array_append_new(stages, x);
    double f[] = {st.params, st.forward_s, st.backward_s, st.recompute_s, st.update_s, st.busy_s, st.idle_s,
                  pr.makespan_s > 0 ? st.idle_s / pr.makespan_s : 0};
    report_printf(&t, "%zu", s);
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
      report_printf(&t, ",");
      report_double(&t, f[i]);
    }
    report_printf(&t, ",%ld,", st.peak_stashed);
    report_double(&t, st.peak_stash_bytes);
    report_printf(&t, ",");
    report_double(&t, st.bytes_sent);
    report_printf(&t, "\n");
  }
  json_object_set_new(o, "per_stage", stages);
  /* What the most loaded GPU would hold: its stage's parameters and gradients in
   * model.dtype, pipeline.optimizer's state (SGD keeps none; Adam as Megatron's, 12 bytes
   * per 16-bit parameter) and its peak stash, the activations kept for backward. */
  double best = -1;
  json_t *mem = json_object();
  for (size_t s = 0; s < p->stages; s++) {
    pipeline_stage_stats st;
    pipeline_stage_get(r->pl, s, &st);
    double eb = (double)cfg->elem_bytes;
    double opt = p->optimizer == PIPELINE_OPT_ADAM ? st.params * tensor_optimizer_bytes_per_param(cfg->elem_bytes) : 0;
    double total = st.params * 2 * eb + opt + st.peak_stash_bytes;
    if (total <= best)
      continue;
    best = total;
    json_object_clear(mem);
    json_object_set_new(mem, "stage", json_integer((json_int_t)s));
    json_object_set_new(mem, "parameters", report_num(st.params));
    json_object_set_new(mem, "parameters_bytes", report_num(st.params * eb));
    json_object_set_new(mem, "gradients_bytes", report_num(st.params * eb));
    json_object_set_new(mem, "optimizer", json_string(p->optimizer == PIPELINE_OPT_ADAM ? "adam" : "sgd (no state)"));
    json_object_set_new(mem, "optimizer_bytes", report_num(opt));
    json_object_set_new(mem, "stash_bytes", report_num(st.peak_stash_bytes));
    json_object_set_new(mem, "total_bytes", report_num(total));
  }
  r->memory_bytes = best;
  json_object_set_new(o, "memory_per_gpu", mem);
  json_object_set_new(o, "gpus", json_integer((json_int_t)pr.gpus));
  json_object_set_new(o, "p2p_bytes", report_num(pr.p2p_bytes));
  if (p->transformer)
    pipeline3d_json(o, r, &pr);
  if (p->transformer && cfg->numerics)
    pipeline_gpt_json(o, r, m, pr.steps);
  report_add_block(rep, "pipeline", o);
  report_add_file(rep, "pipeline.csv", &t);
}

static void closing(void *state, const run_config *cfg, const report_outcome *o, char *line, size_t len)
{
  pipeline_run *r = state;
  pipeline_result pr;
  pipeline_result_get(r->pl, &pr);
  char perf[400], mem[32];
  report_bytes_text(r->memory_bytes, mem, sizeof mem);
  if (!r->p.transformer) {
    report_perf_text(&o->perf, 1, perf, sizeof perf);
    int n = snprintf(line, len, "pipeline %s: %.6g simulated s, %ld steps", o->status, o->sim_time, o->steps);
    if (o->evaluated && o->has_loss)
      n += snprintf(line + n, len - (size_t)n, ", loss %.6g", o->loss);
    if (o->evaluated && o->has_accuracy)
      n += snprintf(line + n, len - (size_t)n, ", accuracy %.6g", o->accuracy);
    snprintf(line + n, len - (size_t)n, ", bubble %.4g, about %s per GPU; %s", pr.bubble_fraction, mem, perf);
    return;
  }
  report_perf_text(&o->perf, 0, perf, sizeof perf);
  double peak = sg_host_get_speed(cfg->hosts[0]) * cfg->speed_factor * cfg->cores;
  int n = snprintf(line, len, "pipeline %s: %zu x %zu x %zu GPUs (p x t x d), %.6g simulated s per step, %.4g Tflop/s "
                   "per GPU (MFU %.3g%%), bubble %.4g, about %s per GPU", o->status, r->p.stages, r->tp->ranks, r->tp->dp,
                   pr.steps > 0 ? pr.makespan_s / (double)pr.steps : 0, pr.tflops_per_gpu,
                   100 * pr.tflops_per_gpu * 1e12 / peak, pr.bubble_fraction, mem);
  pipeline_gpt_result g;
  if (n > 0 && (size_t)n < len && pipeline_gpt_get(r->pl, &g) == 0)
    n += snprintf(line + n, len - (size_t)n, ", held-out loss %.6g (%.6g before training), accuracy %.4g",
                  o->evaluated ? o->loss : NAN, g.initial_loss, o->evaluated ? o->accuracy : NAN);
  if (perf[0] && n > 0 && (size_t)n < len)
    snprintf(line + n, len - (size_t)n, "; %s", perf);
}

static void free_run(void *state)
{
  pipeline_run *r = state;
  pipeline_free(r->pl);
  arch_free(r->own_shapes);
  xbt_free(r);
}

/* Dense numerics: the layers' parameters, gradients and accumulated gradients (split over
 * the stages, all of them once), and the stash: at most every microbatch's activations of
 * every layer, forward and backward. Numeric 3D stages: tf_numeric_doubles. */
static double footprint(const scenario *sc, const void *params, double *actors, const char **what)
{
  const pipeline_params *p = params;
  *actors = (double)pipeline_hosts_needed(p, tensor_of(sc)) + 2;
  *what = "3 copies of model.layers' parameters, and pipeline.microbatches x pipeline.microbatch activations of "
          "every layer";
  if (!sc->model.numerics)
    return 0;
  if (p->transformer)
    return tf_numeric_doubles(p, tensor_of(sc)) * 8;
  size_t sizes[SETTINGS_MAX_LAYERS];
  int n = key_sizes_parse(sc->model.layers, sizes, SETTINGS_MAX_LAYERS);
  double width = 0;
  for (int l = 0; l < n; l++)
    width += (double)sizes[l];
  return (3 * algorithm_layers_params(sc) + 2 * (double)p->microbatches * (double)p->microbatch * width) * 8;
}

const algorithm pipeline_algorithm = {
  .name = "pipeline",
  .summary = "pipeline parallelism: layer stages on hosts, GPipe / 1F1B / interleaved microbatch schedules with a flush",
  .section_doc = "pipeline model parallelism (`run.algorithm = pipeline`): the layers split into stages on `stages` "
                 "hosts, `microbatches` microbatches per step scheduled as GPipe, 1F1B (PipeDream-Flush) or Megatron's "
                 "interleaved 1F1B, one synchronous update per step; `model.numerics` (off: timing only), "
                 "`model.dtype` (wire bytes per element) and `model.efficiency` apply",
  ALGORITHM_SECTION(pipeline_keys, pipeline_params),
  .files = "pipeline.csv",
  .trains_layers = 1,
  .uses_data = 1,
  .fail_stop = 1,
  .validate = validate,
  .hosts_needed = hosts_needed,
  .footprint = footprint,
  .prepare = prepare,
  .check_hosts = check_hosts,
  .deploy = deploy,
  .report = report_run,
  .closing = closing,
  .free = free_run,
};

/* modelpar.c - a model replica partitioned over machines (Dean'12 sec. 3).
 *
 * Partition p owns some units of every layer (models/arch: LC layers tiled, dense
 * layers split by units). Layer 0 is the data: each partition reads the inputs it
 * needs locally. For every later layer l, p needs arch_plan_halo(l, p, q) activations
 * of layer l-1 from each other partition q: they travel q -> p forward (one value per
 * unit and example, whatever the number of edges) and their gradients p -> q
 * backward. Each message goes to a mailbox of its own (layer, direction, receiver),
 * so a partition waits exactly for what the next phase needs. */
#include "algorithms/modelpar.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/mailbox.h>
#include <simgrid/mutex.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/compute.h"
#include "algorithms/eval.h"
#include "algorithms/modelpar_msg.h"
#include "algorithms/modelpar_net.h"
#include "models/corepool.h"
#include "models/cost.h"
#include "models/minibatch.h"
#include "models/optim.h"
#include "models/rng.h"

typedef struct part {
  modelpar_replica *mp;
  int p;
  sg_mailbox_t *fwd_in;   /* [l]: activations of layer l-1 that p needs for layer l */
  sg_mailbox_t *bwd_in;   /* [l]: gradients of p's layer-l units from their users */
  sg_mailbox_t logits_in; /* the other partitions' logits (softmax output) */
  gsl_rng *rng;           /* jitter of this machine's processing time */
  corepool *cpu;          /* cfg->msg_cores > 1: the cores doing per-message work; else NULL */
  modelpar_net *net;      /* cfg->msg_thread: the machine's network thread; else NULL */
  /* numerics: this machine's view of the batch, full width, only its columns valid */
  gsl_matrix **A;         /* [l]: activations (A[0]: the minibatch's inputs) */
  gsl_matrix **D;         /* [l]: gradients with respect to A[l] */
  gsl_matrix **dprev;     /* [l]: p's contribution to dLoss/dA of layer l-1 */
  const gsl_matrix **parts; /* [q]: contributions to p's units, for archnet_sum_parts */
  gsl_matrix_view *views; /* [q]: over the messages they came in */
  modelpar_msg **held;    /* [q]: those messages */
  double *y;              /* the minibatch's labels */
  gsl_rng *batch_rng;     /* the replica's minibatch stream: the same on every machine */
} part;

struct modelpar_replica {
  const run_config *cfg;
  const arch *a;
  const arch_plan *plan;
  size_t L;               /* layers, input included */
  size_t P;
  int rank;               /* of the replica */
  long batch;             /* examples per minibatch */
  const sg_host_t *hosts; /* [p]: partition p's machine */
  size_t rows_begin, rows_end; /* the replica's rows of the training data */
  part *parts;
  double jitter_sigma;    /* of the log of the processing-time factor */
  int gather_logits;
  const archnet *net;     /* numerics, or NULL */
  const gsl_vector *w;    /* the replica's parameters (numerics) */
  gsl_vector *grad;       /* partitions write only their own entries */
  sg_mutex_t stop_lock;   /* guards started and stop_at */
  long started;           /* steps started by the furthest machine */
  long stop_at;           /* steps < stop_at run; -1: not decided */
};

/* sgd on one partitioned replica: every partition updates its own parameters. */
typedef struct sgd_part {
  modelpar *mp;
  int p;
  metrics_slot *slot;
} sgd_part;

struct modelpar {
  const run_config *cfg;
  modelpar_opts p;
  modelpar_replica *rep;
  sgd_part *parts;
  eval_ctl *eval;
  gsl_vector *w, *grad;   /* the replica's parameters; partitions touch only their own */
  sg_mutex_t w_lock;      /* the evaluator never sees half an update */
  archnet_ws *eval_ws;
  minibatch *proxy;       /* a virtual net's run with numerics: the numeric model's stream */
};

size_t modelpar_hosts_needed(const arch_plan *plan) { return arch_plan_parts(plan); }
size_t modelpar_metrics_slots(const arch_plan *plan) { return arch_plan_parts(plan); }

static sg_mailbox_t mbox_at(int replica, char dir, size_t l, size_t p)
{
  char role[32];
  snprintf(role, sizeof(role), "mp%d%c%zu", replica, dir, l);
  return mbox_of(role, (int)p);
}

/* Per-machine variance (Dean'12 sec. 3: speed-ups fall short mainly because all
 * machines wait for the slowest): every compute phase takes its nominal time times a
 * lognormal factor of mean 1 and coefficient of variation cfg->jitter. */
static void compute(part *pt, double flops)
{
  double s = pt->mp->jitter_sigma;
  double factor = s > 0 ? gsl_ran_lognormal(pt->rng, -0.5 * s * s, s) : 1.0;
  compute_execute(pt->mp->cfg, flops * factor);
}

/* Flops per example of p's units in layer l, forward (backward is twice this). */
static double forward_flops(const modelpar_replica *mp, size_t l, size_t p)
{
  double per_unit = arch_layer_train_flops(mp->a, l) / 3.0 / (double)arch_units(mp->a, l);
  return per_unit * (double)arch_plan_units(mp->plan, l, p);
}

/* Dean'12 sec. 3: a machine uses all its cores. With cfg->msg_cores = C > 1 the messages
 * a partition sends after a compute phase are C tasks at a time (corepool): a phase's
 * sends begin with send_phase, and message i leaves when its task ends. With one core
 * (pt->cpu NULL) each message costs msg_overhead before it leaves, one after another. */
static void send_phase(part *pt)
{
  if (pt->cpu)
    corepool_reset(pt->cpu, simgrid_get_clock());
}

/* Keeps the calling machine busy until `t` (the end of its per-message work). */
static void busy_until(double t)
{
  double now = simgrid_get_clock();
  if (t > now)
    compute_busy(t - now);
}

/* One message's CPU work: msg_overhead, plus msg_byte_overhead for each of its bytes. */
static double msg_cpu(const run_config *cfg, double bytes)
{
  return cfg->msg_overhead + cfg->msg_byte_overhead * bytes;
}

static void send_cpu(part *pt, double bytes)
{
  double cost = msg_cpu(pt->mp->cfg, bytes);
  if (pt->cpu)
    busy_until(corepool_add(pt->cpu, 0.0, cost)); /* ready at the phase's start */
  else
    compute_busy(cost);
}

/* With a network thread: the slot of owner's mailbox mb (modelpar_net.h): layer l's
 * forward mailbox l, its backward one L + l, the logits' 0. */
static int box_of(const part *owner, sg_mailbox_t mb)
{
  size_t L = owner->mp->L;
  for (size_t l = 1; l < L; l++) {
    if (owner->fwd_in[l] == mb)
      return (int)l;
    if (owner->bwd_in[l] == mb)
      return (int)(L + l);
  }
  return 0;
}

/* Sends `count` values per example (what the receiver needs) to partition q; with
 * numerics the message carries the matrix M (the sender's block of it is what the
 * receiver reads; the simulated size counts only the values it needs). */
static void send_values(part *pt, modelpar_msg_kind kind, sg_mailbox_t to, size_t q, size_t count,
                        const gsl_matrix *M, long step)
{
  const modelpar_replica *mp = pt->mp;
  size_t n = mp->net && M ? M->size1 * M->size2 : 0;
  modelpar_msg *m = modelpar_msg_create(kind, pt->p, step, n);
  if (n)
    memcpy(m->data, M->data, n * sizeof(double)); /* M is contiguous: tda == size2 */
  double bytes = msg_bytes((double)count * (double)mp->batch, mp->cfg->elem_bytes);
  if (pt->net) { /* the network thread does the message's work: no cost here */
    m->box = box_of(&mp->parts[q], to);
    modelpar_net_send(pt->net, mp->parts[q].net, mp->hosts[q], m, bytes);
    return;
  }
  send_cpu(pt, bytes);
  msg_send(to, mp->hosts[q], &m->hdr, bytes);
}

/* Copies the columns partition q owns in layer l from a message's matrix into M. */
static void install_block(const modelpar_replica *mp, size_t l, size_t q, const modelpar_msg *m, gsl_matrix *M)
{
  for (size_t k = 0; k < arch_plan_runs(mp->plan, l, q); k++) {
    size_t u0, u1;
    arch_plan_run(mp->plan, l, q, k, &u0, &u1);
    for (size_t i = 0; i < M->size1; i++)
      memcpy(gsl_matrix_ptr(M, i, u0), m->data + i * M->size2 + u0, (u1 - u0) * sizeof(double));
  }
}

/* Receives n messages of `kind` of this step; with numerics, installs the senders'
 * columns of layer l into M (M NULL: keep them, by sender, in pt->held). Each message
 * costs msg_cpu of a core: on one core before the next is taken; with msg_cores > 1
 * (pt->cpu) on the core that frees first from its arrival, the phase ending when the
 * last of them is done; with a network thread (pt->net) on that thread as it arrived,
 * so that only the wait for it is left here. */
static void receive_values(part *pt, modelpar_msg_kind kind, sg_mailbox_t from, size_t n, size_t l, gsl_matrix *M,
                           long step)
{
  if (pt->cpu)
    corepool_reset(pt->cpu, simgrid_get_clock());
  int box = pt->net ? box_of(pt, from) : 0;
  for (size_t i = 0; i < n; i++) {
    msg *got = pt->net ? &modelpar_net_recv(pt->net, box)->hdr : msg_recv(from);
    modelpar_msg *m = modelpar_msg_of(got, kind);
    if (pt->cpu)
      corepool_add(pt->cpu, simgrid_get_clock(), msg_cpu(pt->mp->cfg, got->wire_bytes));
    else if (!pt->net) /* a network thread has done the message's work */
      compute_busy(msg_cpu(pt->mp->cfg, got->wire_bytes));
    xbt_assert(m->step == step, "partition message of step %ld arrived during step %ld", m->step, step);
    if (pt->mp->net && M)
      install_block(pt->mp, l, (size_t)m->src, m, M);
    if (pt->mp->net && !M)
      pt->held[m->src] = m;
    else
      msg_free(m);
  }
  if (pt->cpu)
    busy_until(corepool_end(pt->cpu));
}

/* Number of partitions q != p with halo(l, p, q) > 0 (senders to p forward). */
static size_t providers(const modelpar_replica *mp, size_t l, size_t p)
{
  size_t n = 0;
  for (size_t q = 0; q < mp->P; q++)
    n += q != p && arch_plan_halo(mp->plan, l, p, q) > 0;
  return n;
}

/* Number of partitions r != p with halo(l, r, p) > 0 (users of p's layer-(l-1) units). */
static size_t users(const modelpar_replica *mp, size_t l, size_t p)
{
  size_t n = 0;
  for (size_t r = 0; r < mp->P; r++)
    n += r != p && arch_plan_halo(mp->plan, l, r, p) > 0;
  return n;
}

/* Every machine draws the replica's minibatch from the stream an unpartitioned
 * replica of the same rank would use (minibatch.c), so each has the inputs and labels
 * it needs and the replica trains on the same examples. */
static void draw_batch(part *pt)
{
  const modelpar_replica *mp = pt->mp;
  data_sample_batch(mp->cfg->train, mp->rows_begin, mp->rows_end, pt->batch_rng, pt->A[0]->size1, pt->A[0], pt->y);
}

/* Softmax couples the output units: every partition needs every logit of a row. */
static void gather_logits(part *pt, long step)
{
  modelpar_replica *mp = pt->mp;
  size_t p = (size_t)pt->p, L = mp->L - 1;
  send_phase(pt);
  for (size_t r = 0; r < mp->P && arch_plan_units(mp->plan, L, p) > 0; r++)
    if (r != p && arch_plan_units(mp->plan, L, r) > 0)
      send_values(pt, MODELPAR_MSG_ACTIVATIONS, mp->parts[r].logits_in, r, arch_plan_units(mp->plan, L, p),
                  mp->net ? pt->A[L] : NULL, step);
  size_t n = 0; /* a partition with no output unit computes no loss: it needs none */
  for (size_t q = 0; q < mp->P && arch_plan_units(mp->plan, L, p) > 0; q++)
    n += q != p && arch_plan_units(mp->plan, L, q) > 0;
  receive_values(pt, MODELPAR_MSG_ACTIVATIONS, pt->logits_in, n, L, mp->net ? pt->A[L] : NULL, step);
}

static void forward_pass(part *pt, long step)
{
  modelpar_replica *mp = pt->mp;
  size_t p = (size_t)pt->p;
  double batch = (double)mp->batch;
  if (mp->net)
    draw_batch(pt);
  for (size_t l = 1; l < mp->L; l++) {
    if (l > 1)
      receive_values(pt, MODELPAR_MSG_ACTIVATIONS, pt->fwd_in[l], providers(mp, l, p), l - 1,
                     mp->net ? pt->A[l - 1] : NULL, step);
    if (mp->net)
      archnet_forward_part(mp->net, mp->plan, l, p, mp->w, pt->A[l - 1], pt->A[l]);
    compute(pt, forward_flops(mp, l, p) * batch);
    send_phase(pt);
    if (l + 1 < mp->L)
      for (size_t r = 0; r < mp->P; r++)
        if (r != p && arch_plan_halo(mp->plan, l + 1, r, p) > 0)
          send_values(pt, MODELPAR_MSG_ACTIVATIONS, mp->parts[r].fwd_in[l + 1], r,
                      arch_plan_halo(mp->plan, l + 1, r, p), mp->net ? pt->A[l] : NULL, step);
  }
  if (mp->gather_logits)
    gather_logits(pt, step);
}

/* dLoss/dA for p's units of layer l: the sum, in rank order, of p's own contribution
 * (pt->dprev, from its backward step of layer l+1) and those held from the partitions
 * of layer l+1 that use p's units. */
static void add_contributions(part *pt, size_t l)
{
  modelpar_replica *mp = pt->mp;
  size_t p = (size_t)pt->p;
  for (size_t q = 0; q < mp->P; q++) {
    pt->parts[q] = NULL;
    if (q == p)
      pt->parts[q] = pt->dprev[l + 1];
    else if (pt->held[q]) {
      pt->views[q] = gsl_matrix_view_array(pt->held[q]->data, pt->D[l]->size1, pt->D[l]->size2);
      pt->parts[q] = &pt->views[q].matrix;
    }
  }
  archnet_sum_parts(mp->net, mp->plan, l + 1, p, pt->parts, pt->D[l]);
  for (size_t q = 0; q < mp->P; q++) {
    msg_free(pt->held[q]);
    pt->held[q] = NULL;
  }
}

static void backward_pass(part *pt, long step)
{
  modelpar_replica *mp = pt->mp;
  size_t p = (size_t)pt->p;
  double batch = (double)mp->batch;
  if (mp->net && arch_plan_units(mp->plan, mp->L - 1, p) > 0) {
    double loss;
    archnet_output_part(mp->net, mp->plan, p, pt->A[mp->L - 1], pt->y, &loss, pt->D[mp->L - 1]);
  }
  for (size_t l = mp->L - 1; l >= 1; l--) {
    if (l + 1 < mp->L) {
      receive_values(pt, MODELPAR_MSG_GRADIENTS, pt->bwd_in[l], users(mp, l + 1, p), l, NULL, step);
      if (mp->net)
        add_contributions(pt, l);
    }
    if (mp->net)
      archnet_backward_part(mp->net, mp->plan, l, p, mp->w, pt->A[l - 1], pt->A[l], pt->D[l], mp->grad,
                            l > 1 ? pt->dprev[l] : NULL);
    compute(pt, 2.0 * forward_flops(mp, l, p) * batch);
    send_phase(pt);
    if (l > 1)
      for (size_t q = 0; q < mp->P; q++)
        if (q != p && arch_plan_halo(mp->plan, l, p, q) > 0)
          send_values(pt, MODELPAR_MSG_GRADIENTS, mp->parts[q].bwd_in[l - 1], q, arch_plan_halo(mp->plan, l, p, q),
                      mp->net ? pt->dprev[l] : NULL, step);
  }
}

/* ---- one partitioned replica -------------------------------------------- */

void modelpar_replica_listen(modelpar_replica *mp, size_t p)
{
  part *pt = &mp->parts[p];
  for (size_t l = 1; l < mp->L; l++) {
    sg_mailbox_set_receiver(sg_mailbox_get_name(pt->fwd_in[l]));
    sg_mailbox_set_receiver(sg_mailbox_get_name(pt->bwd_in[l]));
  }
  sg_mailbox_set_receiver(sg_mailbox_get_name(pt->logits_in));
}

void modelpar_replica_step(modelpar_replica *mp, size_t p, long step)
{
  forward_pass(&mp->parts[p], step);
  backward_pass(&mp->parts[p], step);
}

static void part_numerics_init(modelpar_replica *mp, part *pt)
{
  size_t B = (size_t)mp->batch;
  pt->A = xbt_malloc0(mp->L * sizeof(gsl_matrix *));
  pt->D = xbt_malloc0(mp->L * sizeof(gsl_matrix *));
  pt->dprev = xbt_malloc0(mp->L * sizeof(gsl_matrix *));
  for (size_t l = 0; l < mp->L; l++) {
    pt->A[l] = gsl_matrix_calloc(B, arch_units(mp->a, l));
    pt->D[l] = gsl_matrix_calloc(B, arch_units(mp->a, l));
    if (l >= 1)
      pt->dprev[l] = gsl_matrix_calloc(B, arch_units(mp->a, l - 1));
  }
  pt->parts = xbt_malloc0(mp->P * sizeof(gsl_matrix *));
  pt->views = xbt_malloc0(mp->P * sizeof(gsl_matrix_view));
  pt->held = xbt_malloc0(mp->P * sizeof(modelpar_msg *));
  pt->y = xbt_malloc0(B * sizeof(double));
  /* every machine draws the replica's minibatch from the same stream (minibatch.c's) */
  pt->batch_rng = rng_create(mp->cfg->seed, RNG_ROLE_WORKER, mp->rank);
}

static void part_numerics_free(modelpar_replica *mp, part *pt)
{
  if (pt->A == NULL)
    return;
  for (size_t l = 0; l < mp->L; l++) {
    gsl_matrix_free(pt->A[l]);
    gsl_matrix_free(pt->D[l]);
    if (pt->dprev[l])
      gsl_matrix_free(pt->dprev[l]);
  }
  for (size_t q = 0; q < mp->P; q++)
    msg_free(pt->held[q]);
  xbt_free(pt->A);
  xbt_free(pt->D);
  xbt_free(pt->dprev);
  xbt_free(pt->parts);
  xbt_free(pt->views);
  xbt_free(pt->held);
  xbt_free(pt->y);
  gsl_rng_free(pt->batch_rng);
}

modelpar_replica *modelpar_replica_create(const run_config *cfg, const arch_plan *plan, const archnet *numeric,
                                          int gather_logits, int rank, long batch, const sg_host_t *hosts,
                                          size_t rows_begin, size_t rows_end, const gsl_vector *w, gsl_vector *grad)
{
  modelpar_replica *mp = xbt_malloc0(sizeof(*mp));
  size_t P = arch_plan_parts(plan);
  mp->cfg = cfg;
  mp->a = arch_plan_arch(plan);
  mp->plan = plan;
  mp->L = arch_n_layers(mp->a);
  mp->P = P;
  mp->rank = rank;
  mp->batch = batch;
  mp->hosts = hosts;
  mp->rows_begin = rows_begin;
  mp->rows_end = rows_end;
  mp->jitter_sigma = sqrt(log1p(cfg->jitter * cfg->jitter));
  mp->gather_logits = gather_logits;
  mp->stop_lock = sg_mutex_init();
  mp->stop_at = -1;
  if (cfg->numerics && numeric) {
    xbt_assert(w && grad && w->size == archnet_n_params(numeric) && grad->size == w->size,
               "a numeric replica needs parameters and a gradient of the net's size");
    mp->net = numeric;
    mp->w = w;
    mp->grad = grad;
  }
  mp->parts = xbt_malloc0(P * sizeof(part));
  for (size_t p = 0; p < P; p++) {
    part *pt = &mp->parts[p];
    pt->mp = mp;
    pt->p = (int)p;
    pt->rng = rng_create(cfg->seed, RNG_ROLE_MACHINE, rank * (int)P + (int)p);
    pt->cpu = cfg->msg_cores > 1 && !cfg->msg_thread ? corepool_create(cfg->msg_cores) : NULL;
    if (cfg->msg_thread) {
      char name[48];
      snprintf(name, sizeof(name), "mp%d-net%zu", rank, p);
      pt->net = modelpar_net_create(hosts[p], name, cfg->msg_overhead, cfg->msg_byte_overhead);
    }
    pt->fwd_in = xbt_malloc0(mp->L * sizeof(sg_mailbox_t));
    pt->bwd_in = xbt_malloc0(mp->L * sizeof(sg_mailbox_t));
    for (size_t l = 1; l < mp->L; l++) {
      pt->fwd_in[l] = mbox_at(rank, 'f', l, p);
      pt->bwd_in[l] = mbox_at(rank, 'b', l, p);
    }
    pt->logits_in = mbox_at(rank, 'o', 0, p);
    if (mp->net)
      part_numerics_init(mp, pt);
  }
  return mp;
}

void modelpar_replica_free(modelpar_replica *mp)
{
  if (mp == NULL)
    return;
  for (size_t p = 0; p < mp->P; p++) {
    part_numerics_free(mp, &mp->parts[p]);
    gsl_rng_free(mp->parts[p].rng);
    corepool_free(mp->parts[p].cpu);
    modelpar_net_free(mp->parts[p].net);
    xbt_free(mp->parts[p].fwd_in);
    xbt_free(mp->parts[p].bwd_in);
  }
  xbt_free(mp->parts);
  sg_mutex_destroy(mp->stop_lock);
  xbt_free(mp);
}

int modelpar_replica_goes_on(modelpar_replica *mp, long step, int stop)
{
  sg_mutex_lock(mp->stop_lock);
  if (mp->stop_at < 0 && stop)
    mp->stop_at = mp->started > step ? mp->started : step;
  int go = mp->stop_at < 0 || step < mp->stop_at;
  if (go && step + 1 > mp->started)
    mp->started = step + 1;
  sg_mutex_unlock(mp->stop_lock);
  return go;
}

/* ---- sgd on one partitioned replica -------------------------------------- */

/* Plain SGD on p's own parameters: one contiguous range per run of units. */
static void apply_update(modelpar *mp, size_t p)
{
  const arch_plan *plan = mp->rep->plan;
  compute_execute(mp->cfg, cost_update_flops((size_t)arch_plan_params(plan, p), 0));
  if (!mp->w || mp->proxy)
    return;
  const archnet *numeric = mp->rep->net;
  sg_mutex_lock(mp->w_lock);
  for (size_t l = 1; l < mp->rep->L; l++)
    for (size_t k = 0; k < arch_plan_runs(plan, l, p); k++) {
      size_t u0, u1, b, e;
      arch_plan_run(plan, l, p, k, &u0, &u1);
      archnet_param_range(numeric, l, u0, u1, &b, &e);
      optim_sgd_apply(mp->w->data + b, mp->grad->data + b, e - b, mp->p.lr);
    }
  sg_mutex_unlock(mp->w_lock);
}

/* A virtual net timed with a small numeric model: the virtual net's partitions take
 * the time, and the numeric model takes the step that sequential SGD would (the same
 * minibatch stream, the same update), once per replica step, in no simulated time. */
static void proxy_step(modelpar *mp)
{
  minibatch_gradient(mp->proxy, mp->w, mp->grad, NULL);
  sg_mutex_lock(mp->w_lock);
  optim_sgd_apply(mp->w->data, mp->grad->data, mp->w->size, mp->p.lr);
  sg_mutex_unlock(mp->w_lock);
}

/* Dean'12 sec. 3: each partition runs its share of every minibatch's forward and
 * backward pass; the replica's step ends when every partition has updated. The
 * machines stop together at max_steps, or when the evaluator asks (max_sim_time,
 * target accuracy). */
static void partition_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  sgd_part *sp = sg_actor_self_get_data();
  modelpar *mp = sp->mp;
  size_t p = (size_t)sp->p;
  long max_steps = mp->cfg->max_steps;
  modelpar_replica_listen(mp->rep, p);
  for (long step = 0;
       modelpar_replica_goes_on(mp->rep, step, eval_should_stop(mp->eval) || (max_steps > 0 && step >= max_steps));
       step++) {
    modelpar_replica_step(mp->rep, p, step);
    apply_update(mp, p);
    if (p == 0 && mp->proxy)
      proxy_step(mp);
    sp->slot->steps += p == 0;
    if (p == 0)
      eval_step_done(mp->eval);
  }
  eval_finished(mp->eval);
}

static void modelpar_snapshot(void *ctx, gsl_vector *w)
{
  modelpar *mp = ctx;
  sg_mutex_lock(mp->w_lock);
  gsl_vector_memcpy(w, mp->w);
  sg_mutex_unlock(mp->w_lock);
}

static int measure(void *ctx, const gsl_vector *w, double *loss, double *accuracy)
{
  modelpar *mp = ctx;
  const dataset *t = mp->cfg->test;
  return archnet_evaluate(mp->rep->net, w, t->X, t->y, mp->eval_ws, loss, accuracy);
}

/* Whether the output layer couples its units, so that the logits must be gathered:
 * a softmax does (the numeric mlp and softmax models, and speech-42m's 8192 states,
 * Dean'12 sec. 5); the image nets' 21k one-vs-all logistic outputs do not. */
static int output_coupled(const scenario *sc)
{
  if (sc->model.virtual_net[0])
    return strcmp(sc->model.virtual_net, "speech-42m") == 0;
  return strcmp(sc->model.type, "mlp") == 0 || strcmp(sc->model.type, "softmax") == 0;
}

modelpar_split *modelpar_split_create(const run_config *cfg, size_t parts, const char *key, char *err, size_t len)
{
  const scenario *sc = cfg->sc;
  modelpar_split *s = xbt_malloc0(sizeof(*s));
  s->shapes = run_shapes(cfg, &s->own_shapes);
  s->gather_logits = output_coupled(sc);
  s->plan = arch_plan_square(s->shapes, parts);
  if (s->plan == NULL) {
    snprintf(err, len, "%s: %s cannot be split over %zu machines (a tile would be empty)", key,
             sc->model.virtual_net[0] ? sc->model.virtual_net : "the model", parts);
    modelpar_split_free(s);
    return NULL;
  }
  xbt_assert(arch_plan_parts(s->plan) == parts, "a plan over %zu machines has other parts", parts);
  if (cfg->numerics && !sc->model.virtual_net[0]) { /* a virtual net is timed; model.layers trains (a proxy) */
    net_act act = NET_ACT_TANH;
    net_act_parse(sc->model.activation, &act);
    s->numeric = archnet_create(s->shapes, act, net_get_loss(cfg->model));
    if (s->numeric == NULL) {
      snprintf(err, len, "model: cannot build the partitioned numerics of this network");
      modelpar_split_free(s);
      return NULL;
    }
  }
  return s;
}

void modelpar_split_free(modelpar_split *s)
{
  if (s == NULL)
    return;
  archnet_free(s->numeric);
  arch_plan_free(s->plan);
  arch_free(s->own_shapes);
  xbt_free(s);
}

modelpar *modelpar_deploy(const run_config *cfg, const modelpar_opts *p, const arch_plan *plan, const archnet *numeric,
                          int gather_logits, metrics *m)
{
  size_t P = arch_plan_parts(plan);
  if (cfg->n_hosts < P)
    return NULL;
  modelpar *mp = xbt_malloc0(sizeof(*mp));
  mp->cfg = cfg;
  mp->p = *p;
  mp->w_lock = sg_mutex_init();
  if (cfg->numerics && numeric) {
    gsl_rng *init = rng_create(cfg->seed, RNG_ROLE_INIT, 0);
    mp->w = gsl_vector_alloc(archnet_n_params(numeric));
    archnet_init_params(numeric, init, mp->w);
    gsl_rng_free(init);
    mp->grad = gsl_vector_calloc(mp->w->size);
    mp->eval_ws = archnet_ws_create(numeric, 1024);
  } else if (cfg->numerics) { /* sequential SGD's parameters and stream (sgd.c) */
    mp->w = run_initial_params(cfg);
    mp->grad = gsl_vector_calloc(mp->w->size);
    mp->proxy = minibatch_create(cfg->model, cfg->train, 0, data_n(cfg->train), (size_t)p->batch, cfg->seed, 0);
    xbt_assert(mp->proxy, "the numeric model has no training rows");
  }
  size_t rows = cfg->numerics ? data_n(cfg->train) : 0; /* sequential SGD's stream: all rows */
  mp->rep = modelpar_replica_create(cfg, plan, mp->proxy ? NULL : numeric, gather_logits, 0, p->batch,
                                    cfg->hosts, 0, rows, mp->w, mp->grad);
  mp->eval = eval_ctl_create(cfg, m, (int)P, mp->w ? modelpar_snapshot : NULL, mp);
  if (mp->eval_ws)
    eval_set_measure(mp->eval, measure, mp);
  mp->parts = xbt_malloc0(P * sizeof(sgd_part));
  for (size_t q = 0; q < P; q++) {
    mp->parts[q] = (sgd_part){mp, (int)q, metrics_slot_at(m, q)};
    char name[32];
    mbox_name(name, sizeof(name), "partition", (int)q);
    sg_actor_t actor = sg_actor_init(name, cfg->hosts[q]);
    sg_actor_set_data(actor, &mp->parts[q]);
    sg_actor_start(actor, partition_actor, 0, NULL);
  }
  eval_start(mp->eval, cfg->hosts[0]);
  return mp;
}

void modelpar_free(modelpar *mp)
{
  if (mp == NULL)
    return;
  modelpar_replica_free(mp->rep);
  xbt_free(mp->parts);
  eval_ctl_free(mp->eval);
  sg_mutex_destroy(mp->w_lock);
  archnet_ws_free(mp->eval_ws);
  minibatch_free(mp->proxy);
  if (mp->w) {
    gsl_vector_free(mp->w);
    gsl_vector_free(mp->grad);
  }
  xbt_free(mp);
}

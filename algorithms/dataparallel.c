/* dataparallel.c - synchronous data-parallel SGD with bucketed, overlapped allreduces
 * (PyTorch DDP, Li et al. VLDB 2020, sec. 3.2.3). Each step every replica
 *   forward_pass    draws its minibatch, computes the real gradient, spends forward flops;
 *   backward_pass   spends each layer's backward flops from the last layer down, handing
 *                   each finished bucket to its communicator, whose allreduce overlaps the
 *                   rest of backward;
 *   wait_reduced    waits until every bucket is reduced;
 *   apply_update    w -= lr * (sum of the k gradients) / k, the same on every replica;
 *   average_models  local SGD (local_steps H > 1): no gradient is exchanged, every H steps
 *                   the replicas' models are allreduced and divided by k instead.
 * With dataparallel.compress a bucket goes through algorithms/compressed.h's exchange.
 * Buckets, their order, and why replicas stay bit-identical: algorithms/doc/dataparallel.md. */
#include "algorithms/dataparallel.h"

#include <stdio.h>
#include <string.h>
#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/mutex.h>
#include <simgrid/semaphore.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/compute.h"
#include "algorithms/account.h"
#include "algorithms/collectives.h"
#include "algorithms/compressed.h"
#include "algorithms/eval.h"
#include "algorithms/msg.h"
#include "models/arch.h"
#include "models/cost.h"
#include "models/minibatch.h"
#include "models/optim.h"

/* Dense layers whose forward GEMMs go into one execution at most (a chunk of the stack). */
#define DP_MAX_GEMM_LAYERS 16

typedef struct replica {
  struct dataparallel *d;
  size_t rank;
  gsl_vector *w, *grad;  /* numerics: parameters and this step's gradient, summed in place */
  minibatch *mb;
  sg_sem_t ready;        /* released once per bucket backward has produced, and once to stop */
  sg_sem_t reduced;      /* released once per step, when every bucket is reduced */
  int stopping;          /* set before the last release of ready */
  long allreduces;       /* bucket allreduces its communicator ran */
  long steps;            /* steps its communicator finished (DGC's warm-up reads it) */
  int has_gpu;           /* its host has a GPU description: dense layers run as GEMMs */
  gemm_device gpu;
} replica;

struct dataparallel {
  const run_config *cfg;
  const dataparallel_params *p;
  size_t n_layers;       /* shapes' layers, input (layer 0) included */
  double fwd_flops;      /* forward flops per example, all layers */
  double *bwd_flops;     /* [l]: layer l's backward flops per example */
  gemm_shape *gemm;      /* [3 l + i], dense layer l on a GPU: forward, input and weight gradient
                            GEMMs of the minibatch (batch 0: not a dense layer) */
  size_t nb;             /* buckets; bucket 0 holds the last layer */
  size_t *first;         /* [b]: bucket b's lowest layer */
  double *elems;         /* [b]: its simulated elements */
  size_t *off, *len;     /* [b]: numerics, its range of the parameter vector */
  coll_comm *comm;
  compressed *cz;        /* the compressed exchange, NULL for compress = none */
  double *avg;           /* local SGD: the buffer the models are averaged in, per replica */
  replica *reps;
  sg_bar_t start;        /* every step starts with every replica */
  int go;                /* replica 0's decision for the step about to start */
  sg_mutex_t mu;         /* guards replica 0's w against the evaluator's snapshot */
  const arch *shapes;    /* outlives the run (dataparallel_deploy's contract) */
  metrics_slot *slot;
  eval_ctl *eval;
};

size_t dataparallel_metrics_slots(void) { return 1; }

size_t dataparallel_buckets(const arch *shapes, double bucket_bytes, size_t elem_bytes, size_t *first,
                            double *elems)
{
  size_t nb = 0;
  double acc = 0;
  for (size_t l = arch_n_layers(shapes) - 1; l >= 1; l--) {
    acc += arch_layer_params(shapes, l);
    if (l == 1 || (bucket_bytes > 0 && acc * (double)elem_bytes >= bucket_bytes)) {
      if (first) {
        first[nb] = l;
        elems[nb] = acc;
      }
      nb++;
      acc = 0;
    }
  }
  return nb;
}

/* ---- a replica's step ------------------------------------------------------ */

static int all_go_on(replica *r, long step)
{
  dataparallel *d = r->d;
  if (r->rank == 0)
    d->go = !eval_should_stop(d->eval) && (d->cfg->max_steps == 0 || step < d->cfg->max_steps);
  sg_barrier_wait(d->start);
  return d->go;
}

/* On a GPU, layers [first, last] forward (which 0) or layer first backward (which 1: its two
 * gradient GEMMs) as GEMMs; layers that are no GEMM (locally connected) at the flat rate. */
static void gpu_layers(replica *r, size_t first, size_t last, int which)
{
  dataparallel *d = r->d;
  gemm_shape g[2 * DP_MAX_GEMM_LAYERS];
  double flat = 0;
  size_t n = 0;
  for (size_t l = first; l <= last; l++) {
    const gemm_shape *x = &d->gemm[3 * l];
    if (x[0].batch == 0)
      flat += (which ? d->bwd_flops[l] : arch_layer_train_flops(d->shapes, l) / 3) * (double)d->p->batch;
    else if (which)
      g[n++] = x[1], g[n++] = x[2];
    else
      g[n++] = x[0];
    if (n + 2 > sizeof g / sizeof *g || l == last) {
      compute_work w = {g, n, 0, 0};
      if (n)
        compute_work_execute(d->cfg, &r->gpu, &w);
      n = 0;
    }
  }
  if (flat > 0)
    compute_execute(d->cfg, flat);
}

static void forward_pass(replica *r)
{
  const run_config *cfg = r->d->cfg;
  if (cfg->numerics)
    minibatch_gradient(r->mb, r->w, r->grad, NULL);
  if (r->has_gpu)
    gpu_layers(r, 1, r->d->n_layers - 1, 0);
  else
    compute_execute(cfg, r->d->fwd_flops * (double)r->d->p->batch);
}

/* Layer l's backward yields its gradient; the bucket whose lowest layer it is is
 * then complete. */
static void backward_pass(replica *r)
{
  dataparallel *d = r->d;
  size_t b = 0;
  for (size_t l = d->n_layers - 1; l >= 1; l--) {
    account_label_push("backward layer %zu", l);
    if (r->has_gpu)
      gpu_layers(r, l, l, 1);
    else
      compute_execute(d->cfg, d->bwd_flops[l] * (double)d->p->batch);
    account_label_pop();
    if (l == d->first[b]) {
      if (d->p->overlap)
        sg_sem_release(r->ready);
      b++;
    }
  }
  for (size_t k = 0; !d->p->overlap && k < d->nb; k++)
    sg_sem_release(r->ready);
}

/* Blocked on the gradient allreduce: communication in the time breakdown (run.h). */
static void wait_reduced(replica *r)
{
  account_comm_begin();
  sg_sem_acquire(r->reduced);
  account_comm_end();
}

static void apply_update(replica *r)
{
  dataparallel *d = r->d;
  const run_config *cfg = d->cfg;
  compute_execute(cfg, cost_update_flops((size_t)cfg->sim_params, 0));
  if (!cfg->numerics)
    return;
  /* the mean of k minibatch means: k = 1 divides exactly; local SGD steps on its own */
  double k = d->p->local_steps > 1 ? 1 : (double)d->p->replicas;
  for (size_t i = 0; i < r->grad->size; i++)
    r->grad->data[i] /= k;
  if (r->rank == 0)
    sg_mutex_lock(d->mu);
  optim_sgd_apply(r->w->data, r->grad->data, r->w->size, d->p->lr);
  if (r->rank == 0)
    sg_mutex_unlock(d->mu);
}

static int local_step(const dataparallel *d, long step)
{
  return d->p->local_steps > 1 && (step + 1) % d->p->local_steps != 0;
}

/* Local SGD (Stich, ICLR 2019): every H-th step ends with the mean of the replicas' models,
 * an allreduce of w (summed in the collective's fixed order) divided by k. */
static void average_models(replica *r, long step)
{
  dataparallel *d = r->d;
  if (d->p->local_steps <= 1 || local_step(d, step))
    return;
  const run_config *cfg = d->cfg;
  size_t n = cfg->numerics ? r->w->size : (size_t)cfg->sim_params;
  double *buf = cfg->numerics ? d->avg + r->rank * n : NULL;
  if (buf)
    memcpy(buf, r->w->data, n * sizeof(double));
  coll_allreduce(d->comm, r->rank, buf, n, (coll_algo)d->p->algo);
  if (!buf)
    return;
  if (r->rank == 0)
    sg_mutex_lock(d->mu);
  for (size_t i = 0; i < n; i++)
    r->w->data[i] = buf[i] / (double)d->p->replicas;
  if (r->rank == 0)
    sg_mutex_unlock(d->mu);
}

static void count_step(replica *r)
{
  if (r->rank != 0)
    return;
  r->d->slot->steps++;
  eval_step_done(r->d->eval); /* counts the step; the stop it may ask for is read by all_go_on */
}

static void stop_communicator(replica *r)
{
  r->stopping = 1;
  sg_sem_release(r->ready);
}

static void replica_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  replica *r = sg_actor_self_get_data();
  for (long step = 0; all_go_on(r, step); step++) {
    account_label_push("forward");
    forward_pass(r);
    account_label_pop();
    backward_pass(r);
    account_label_push("wait for gradients");
    wait_reduced(r);
    account_label_pop();
    account_label_push("update");
    apply_update(r);
    account_label_pop();
    account_label_push("average models");
    average_models(r, step);
    account_label_pop();
    count_step(r);
  }
  stop_communicator(r);
  eval_finished(r->d->eval);
}

/* ---- a replica's communicator ---------------------------------------------- */

static void allreduce_bucket(replica *r, size_t b)
{
  dataparallel *d = r->d;
  double *buf = d->cfg->numerics ? r->grad->data + d->off[b] : NULL;
  size_t n = d->cfg->numerics ? d->len[b] : (size_t)d->elems[b];
  if (d->p->local_steps > 1)
    return; /* local SGD exchanges models, not gradients */
  account_label_push("bucket %zu", b);
  if (d->cz)
    compressed_bucket(d->cz, r->rank, b, buf, r->steps, (coll_algo)d->p->algo);
  else
    coll_allreduce(d->comm, r->rank, buf, n, (coll_algo)d->p->algo);
  account_label_pop();
  r->allreduces++;
}

static void communicator_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  replica *r = sg_actor_self_get_data();
  for (;;) {
    for (size_t b = 0; b < r->d->nb; b++) {
      sg_sem_acquire(r->ready);
      if (r->stopping)
        return;
      allreduce_bucket(r, b);
    }
    r->steps++;
    sg_sem_release(r->reduced);
  }
}

/* ---- set-up ---------------------------------------------------------------- */

static void snapshot(void *ctx, gsl_vector *w)
{
  dataparallel *d = ctx;
  sg_mutex_lock(d->mu);
  gsl_vector_memcpy(w, d->reps[0].w);
  sg_mutex_unlock(d->mu);
}

/* A numeric run reduces net.h's ranges: shapes must be cfg->model's layers. */
static int shapes_fit_model(const arch *shapes, const net *model)
{
  if (arch_n_layers(shapes) != net_n_layers(model) + 1)
    return 0;
  for (size_t l = 1; l < arch_n_layers(shapes); l++)
    if (arch_layer_params(shapes, l) != (double)(net_layer_offset(model, l) - net_layer_offset(model, l - 1)))
      return 0;
  return 1;
}

static void costs_init(dataparallel *d, const arch *shapes)
{
  double mb = (double)d->p->batch;
  d->shapes = shapes;
  d->n_layers = arch_n_layers(shapes);
  d->bwd_flops = xbt_malloc0(d->n_layers * sizeof(double));
  d->gemm = xbt_malloc0(3 * d->n_layers * sizeof(gemm_shape));
  for (size_t l = 1; l < d->n_layers; l++) { /* backward is twice the forward */
    double f = arch_layer_train_flops(shapes, l) / 3;
    d->fwd_flops += f;
    d->bwd_flops[l] = 2 * f;
    if (arch_layer_at(shapes, l)->kind == ARCH_DENSE) {
      /* Y (b x out) = X (b x in) W; dX = dY W^T; dW = X^T dY */
      double in = (double)arch_units(shapes, l - 1), out = (double)arch_units(shapes, l);
      d->gemm[3 * l] = (gemm_shape){mb, out, in, 1};
      d->gemm[3 * l + 1] = (gemm_shape){mb, in, out, 1};
      d->gemm[3 * l + 2] = (gemm_shape){in, out, mb, 1};
    }
  }
  d->first = xbt_malloc0(d->n_layers * sizeof(size_t));
  d->elems = xbt_malloc0(d->n_layers * sizeof(double));
  d->nb = dataparallel_buckets(shapes, d->p->bucket_mb * 1024 * 1024, d->cfg->elem_bytes, d->first, d->elems);
  d->off = xbt_malloc0(d->nb * sizeof(size_t));
  d->len = xbt_malloc0(d->nb * sizeof(size_t));
  for (size_t b = 0; d->cfg->numerics && b < d->nb; b++) {
    size_t last = b == 0 ? d->n_layers - 1 : d->first[b - 1] - 1; /* arch layer l is net layer l - 1 */
    d->off[b] = net_layer_offset(d->cfg->model, d->first[b] - 1);
    d->len[b] = net_layer_offset(d->cfg->model, last) - d->off[b];
  }
}

static void replica_init(dataparallel *d, replica *r, size_t rank)
{
  const run_config *cfg = d->cfg;
  r->d = d;
  r->rank = rank;
  r->ready = sg_sem_init(0);
  r->reduced = sg_sem_init(0);
  r->has_gpu = compute_gpu(cfg, cfg->hosts[rank], &r->gpu);
  if (cfg->numerics) {
    size_t begin, end;
    r->w = run_initial_params(cfg);
    r->grad = gsl_vector_calloc(r->w->size);
    data_shard_bounds(data_n(cfg->train), (size_t)d->p->replicas, rank, &begin, &end);
    r->mb = minibatch_create(cfg->model, cfg->train, begin, end, (size_t)d->p->batch, cfg->seed, (int)rank);
    xbt_assert(r->mb != NULL, "replica %zu has no training rows", rank);
  }
}

static void start_actor(const char *role, size_t rank, sg_host_t host, void *data, void (*fn)(int, char **))
{
  char name[48];
  mbox_name(name, sizeof(name), role, (int)rank);
  sg_actor_t a = sg_actor_init(name, host);
  sg_actor_set_data(a, data);
  sg_actor_start(a, fn, 0, NULL);
}

dataparallel *dataparallel_deploy(const run_config *cfg, const dataparallel_params *p, const arch *shapes,
                                  metrics *m)
{
  size_t k = (size_t)p->replicas;
  if (k == 0 || cfg->n_hosts < k || arch_n_layers(shapes) < 2 ||
      (cfg->numerics && (!shapes_fit_model(shapes, cfg->model) || data_n(cfg->train) < k)))
    return NULL;
  dataparallel *d = xbt_malloc0(sizeof(*d));
  d->cfg = cfg;
  d->p = p;
  costs_init(d, shapes);
  coll_opts o = {cfg->elem_bytes, 0, NULL, 0, coll_mode_of(cfg), cfg->comm_sms}; /* unchunked; additions free */
  d->comm = coll_comm_create("dp", cfg->hosts, k, &o);
  xbt_assert(d->comm != NULL, "a data-parallel communicator of %zu replicas", k);
  compress_params cp = {(compress_method)p->compress, p->compress_ratio, p->compress_momentum,
                        p->compress_warmup, p->compress_levels, p->compress_rank}; /* copied */
  d->cz = compressed_create(cfg, &cp, cfg->hosts, k, shapes, d->nb, d->first, d->comm);
  if (cfg->numerics && p->local_steps > 1)
    d->avg = xbt_malloc0(k * net_n_params(cfg->model) * sizeof(double));
  d->start = sg_barrier_init((unsigned)k);
  d->mu = sg_mutex_init();
  d->slot = metrics_slot_at(m, 0);
  d->reps = xbt_malloc0(k * sizeof(replica));
  for (size_t r = 0; r < k; r++)
    replica_init(d, &d->reps[r], r);
  d->eval = eval_ctl_create(cfg, m, (int)k, snapshot, d);
  for (size_t r = 0; r < k; r++) {
    start_actor("dp-replica", r, cfg->hosts[r], &d->reps[r], replica_actor);
    start_actor("dp-comm", r, cfg->hosts[r], &d->reps[r], communicator_actor);
  }
  eval_start(d->eval, cfg->hosts[0]);
  return d;
}

void dataparallel_free(dataparallel *d)
{
  if (d == NULL)
    return;
  for (size_t r = 0; r < (size_t)d->p->replicas; r++) {
    replica *rp = &d->reps[r];
    sg_sem_destroy(rp->ready);
    sg_sem_destroy(rp->reduced);
    if (rp->w) {
      gsl_vector_free(rp->w);
      gsl_vector_free(rp->grad);
      minibatch_free(rp->mb);
    }
  }
  xbt_free(d->reps);
  eval_ctl_free(d->eval);
  sg_mutex_destroy(d->mu);
  sg_barrier_destroy(d->start);
  compressed_free(d->cz);
  xbt_free(d->avg);
  coll_comm_free(d->comm);
  xbt_free(d->bwd_flops);
  xbt_free(d->gemm);
  xbt_free(d->first);
  xbt_free(d->elems);
  xbt_free(d->off);
  xbt_free(d->len);
  xbt_free(d);
}

size_t dataparallel_bucket_elems(const dataparallel *d, const double **elems)
{
  *elems = d->elems;
  return d->nb;
}

long dataparallel_allreduces(const dataparallel *d) { return d->reps[0].allreduces; }

const compressed *dataparallel_compressed(const dataparallel *d) { return d->cz; }

/* ---- the descriptor: run.algorithm = dataparallel -------------------------------- */

static const key_spec dataparallel_keys[] = {
  {"dataparallel", "replicas", KEY_INT, KEY_FIELD(dataparallel_params, replicas), .def = "4", .unit = "replicas",
   .doc = "Replicas, replica r on host r with its own data shard and random stream.", KEY_GE(1), KEY_LE(1000000)},
  {"dataparallel", "batch", KEY_LONG, KEY_FIELD(dataparallel_params, batch), .def = "32", .unit = "examples",
   .doc = "Minibatch size of each replica; a step trains on replicas x batch examples.", KEY_GT(0)},
  {"dataparallel", "lr", KEY_DOUBLE, KEY_FIELD(dataparallel_params, lr), .def = "0.05", .unit = "",
   .doc = "Learning rate of the update every replica applies with the mean of the replicas' gradients.",
   KEY_GT(0)},
  {"dataparallel", "collective", KEY_CHOICE, KEY_FIELD(dataparallel_params, algo), .def = "ring", .unit = "",
   .doc = "Allreduce of each bucket: `ring`, `halving-doubling` (Rabenseifner) or `tree` (binomial "
          "reduce + broadcast), as `collective.algorithm`.",
   .choices = "ring|halving-doubling|tree"},
  {"dataparallel", "bucket_mb", KEY_DOUBLE, KEY_FIELD(dataparallel_params, bucket_mb), .def = "25", .unit = "MiB",
   .doc = "Gradient bucket size (PyTorch DDP's bucket_cap_mb): whole layers from the last one "
          "backwards until their wire bytes (`model.dtype`) reach this; 0: one bucket, the whole model.",
   KEY_GE(0)},
  {"dataparallel", "overlap", KEY_BOOL, KEY_FIELD(dataparallel_params, overlap), .def = "on", .unit = "",
   .doc = "`on`: a bucket's allreduce starts as soon as backward has produced it, overlapping the "
          "rest of backward; `off`: all buckets start after backward."},
  {"dataparallel", "compress", KEY_CHOICE, KEY_FIELD(dataparallel_params, compress), .def = "none", .unit = "",
   .doc = "Gradient compression with error feedback: `none` (the allreduce), `topk` (DGC), `onebit`, `qsgd` "
          "(allgather of every replica's message) or `powersgd` (allreduces of its factors); "
          "algorithms/doc/dataparallel.md, Compressed gradients.",
   .choices = "none|topk|onebit|qsgd|powersgd"},
  {"dataparallel", "compress_ratio", KEY_DOUBLE, KEY_FIELD(dataparallel_params, compress_ratio), .def = "0.01",
   .unit = "", .doc = "`topk`: fraction of each tensor's elements a replica sends.", KEY_GT(0), KEY_LE(1)},
  {"dataparallel", "compress_momentum", KEY_DOUBLE, KEY_FIELD(dataparallel_params, compress_momentum),
   .def = "0", .unit = "", .doc = "`topk`: DGC's momentum correction factor (0: plain error feedback).", KEY_GE(0),
   KEY_LT(1)},
  {"dataparallel", "compress_warmup", KEY_LONG, KEY_FIELD(dataparallel_params, compress_warmup), .def = "0",
   .unit = "steps", .doc = "`topk`: DGC's warm-up, density 25%, 6.25%, 1.56%, 0.39% a quarter each, then "
                           "`compress_ratio` (never below it); 0: none.", KEY_GE(0)},
  {"dataparallel", "compress_levels", KEY_INT, KEY_FIELD(dataparallel_params, compress_levels), .def = "15",
   .unit = "levels", .doc = "`qsgd`: s, the quantisation levels of |v_i| / ||v||_2.", KEY_GE(1), KEY_LE(1 << 20)},
  {"dataparallel", "compress_rank", KEY_INT, KEY_FIELD(dataparallel_params, compress_rank), .def = "4",
   .unit = "", .doc = "`powersgd`: r, the rank of the factors.", KEY_GE(1), KEY_LE(1 << 20)},
  {"dataparallel", "local_steps", KEY_LONG, KEY_FIELD(dataparallel_params, local_steps), .def = "1",
   .unit = "steps", .doc = "Local SGD: replicas step on their own gradients and average their models by "
                           "allreduce every H steps; 1: the gradients' allreduce every step.", KEY_GE(1)},
};

static int validate(const scenario *sc, const void *params, char *why, size_t len)
{
  const dataparallel_params *p = params;
  if (p->local_steps > 1 && p->compress != COMPRESS_NONE) {
    snprintf(why, len, "dataparallel.local_steps: local SGD exchanges models, not gradients; it does not combine "
             "with dataparallel.compress = %s", compress_method_name((compress_method)p->compress));
    return -1;
  }
  if (sc->model.numerics && sc->model.virtual_net[0]) {
    snprintf(why, len, "model.virtual: dataparallel reduces the numeric model's gradient buckets; time a virtual "
             "network (%s) with model.numerics = off", sc->model.virtual_net);
    return -1;
  }
  return 0;
}

static size_t hosts_needed(const scenario *sc, const void *params, const char **why)
{
  (void)sc;
  *why = "dataparallel.replicas";
  return (size_t)((const dataparallel_params *)params)->replicas;
}

/* [faults]: replicaK is replica K's host. */
static long fault_role(const scenario *sc, const char *name, size_t n_hosts)
{
  (void)n_hosts;
  long k, R = ((const dataparallel_params *)algorithm_params(sc, &dataparallel_algorithm))->replicas;
  return run_role_number(name, "replica", &k) && k >= 0 && k < R ? k : -1;
}

typedef struct dataparallel_run {
  const dataparallel_params *p;
  const arch *shapes;     /* the layers whose parameters and flops set the buckets and backward */
  arch *own_shapes;
  dataparallel *d;
} dataparallel_run;

static void *prepare(const run_config *cfg, char *err, size_t len)
{
  const dataparallel_params *p = algorithm_params(cfg->sc, &dataparallel_algorithm);
  if (cfg->numerics && data_n(cfg->train) < (size_t)p->replicas) {
    snprintf(err, len, "dataparallel.replicas: %d replicas need at least as many training examples, the data has %zu",
             p->replicas, data_n(cfg->train));
    return NULL;
  }
  dataparallel_run *r = xbt_malloc0(sizeof(*r));
  r->p = p;
  r->shapes = run_shapes(cfg, &r->own_shapes);
  return r;
}

static void deploy(void *state, const run_config *cfg, metrics *m)
{
  dataparallel_run *r = state;
  r->d = dataparallel_deploy(cfg, r->p, r->shapes, m);
  xbt_assert(r->d, "dataparallel_deploy refused a configuration the engine checked");
}

/* summary.json's "dataparallel" block: the buckets and the allreduces. */
static void report_run(void *state, const run_config *cfg, metrics *m, report *rep)
{
  dataparallel_run *r = state;
  rep->examples = metrics_total_steps(m) * r->p->batch * r->p->replicas;
  rep->step_workers = 1; /* steps are global */
  rep->model_flops = (double)rep->examples * cfg->train_flops;
  rep->devices = (size_t)r->p->replicas;
  rep->worker_role = "dp-replica";
  const double *elems;
  size_t nb = dataparallel_bucket_elems(r->d, &elems);
  json_t *o = json_object(), *b = json_array();
  json_object_set_new(o, "collective", json_string(coll_algo_name((coll_algo)r->p->algo)));
  for (size_t i = 0; i < nb; i++)
    json_array_append_new(b, json_real(elems[i]));
  json_object_set_new(o, "bucket_elements", b);
  json_object_set_new(o, "allreduces_per_replica", json_integer(dataparallel_allreduces(r->d)));
  const compressed *cz = dataparallel_compressed(r->d);
  if (cz) { /* after the warm-up: the steady message */
    json_object_set_new(o, "compress", json_string(compress_method_name((compress_method)r->p->compress)));
    json_object_set_new(o, "bytes_per_step", json_real(compressed_step_bytes(cz, r->p->compress_warmup)));
    json_object_set_new(o, "dense_bytes_per_step", json_real(compressed_dense_bytes(cz)));
  }
  if (r->p->local_steps > 1)
    json_object_set_new(o, "local_steps", json_integer(r->p->local_steps));
  report_add_block(rep, "dataparallel", o);
}

static void free_run(void *state)
{
  dataparallel_run *r = state;
  dataparallel_free(r->d);
  arch_free(r->own_shapes);
  xbt_free(r);
}

const algorithm dataparallel_algorithm = {
  .name = "dataparallel",
  .summary = "synchronous data parallelism: replicas allreduce gradient buckets overlapping backward (PyTorch DDP)",
  .section_doc = "synchronous data parallelism (`run.algorithm = dataparallel`): replicas sum their gradients with "
                 "allreduces of gradient buckets that overlap the backward pass (PyTorch DDP)",
  ALGORITHM_SECTION(dataparallel_keys, dataparallel_params),
  .trains_layers = 1,
  .uses_data = 1,
  .fail_stop = 1,
  .plan = {.validate = validate, .hosts_needed = hosts_needed, .fault_role = fault_role},
  .run = {.prepare = prepare, .deploy = deploy, .report = report_run, .free = free_run},
};

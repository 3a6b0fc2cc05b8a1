/* dataparallel.c - synchronous data parallelism with bucketed, overlapped allreduces
 * (PyTorch DDP, Li et al. VLDB 2020, sec. 3.2.3) and ZeRO's sharding (Rajbhandari et al.
 * SC'20). Each step every replica
 *   forward_pass    draws its minibatch, computes the real gradient, spends forward flops
 *                   (stage 3, forward_sharded: each layer gathered first, the next prefetched);
 *   backward_pass   spends each layer's backward flops from the last layer down, handing
 *                   each finished bucket to its communicator, whose allreduce (stage 2: its
 *                   reduce-scatter) overlaps the rest of backward (stage 3, backward_sharded:
 *                   each layer gathered again, its gradient reduce-scattered);
 *   wait_all_jobs   waits until every bucket is reduced;
 *   update          SGD or Adam with the mean of the k gradients: on every parameter (stage 0)
 *                   or on its shard, the updated blocks then gathered (stages 1 and 2).
 * Buckets, their order, the stages, and why replicas stay bit-identical:
 * algorithms/doc/dataparallel.md. */
#include "algorithms/dataparallel_impl.h"

#include <math.h>
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
#include "algorithms/eval.h"
#include "algorithms/msg.h"
#include "models/arch.h"
#include "models/cost.h"
#include "models/minibatch.h"
#include "models/optim.h"

/* Dense layers whose forward GEMMs go into one execution at most (a chunk of the stack). */
#define DP_MAX_GEMM_LAYERS 16

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

/* ---- a replica's jobs for its communicator --------------------------------- */

/* Hands the communicator one job; returns its number, for wait_job. */
static size_t post(replica *r, dp_op op, size_t unit)
{
  xbt_assert(r->posted - r->seen < r->qcap, "replica %zu: more jobs in flight than its queue holds", r->rank);
  r->queue[r->posted % r->qcap] = (dp_job){op, unit};
  sg_sem_release(r->ready);
  return r->posted++;
}

/* Blocked until job j (and every job before it: the communicator runs them in order) is done:
 * communication in the time breakdown (run.h). */
static void wait_job(replica *r, size_t j)
{
  if (r->seen > j)
    return;
  account_comm_begin();
  while (r->seen <= j) {
    sg_sem_acquire(r->done);
    r->seen++;
  }
  account_comm_end();
}

static void wait_all_jobs(replica *r)
{
  if (r->posted > 0)
    wait_job(r, r->posted - 1);
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

static void forward_layer(replica *r, size_t l)
{
  if (r->has_gpu)
    gpu_layers(r, l, l, 0);
  else
    compute_execute(r->d->cfg, arch_layer_train_flops(r->d->shapes, l) / 3 * (double)r->d->p->batch);
}

static void backward_layer(replica *r, size_t l)
{
  account_label_push("backward layer %zu", l);
  if (r->has_gpu)
    gpu_layers(r, l, l, 1);
  else
    compute_execute(r->d->cfg, r->d->bwd_flops[l] * (double)r->d->p->batch);
  account_label_pop();
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

/* Layer l's backward yields its gradient; the bucket whose lowest layer it is is then
 * complete, and goes to the communicator: an allreduce (stage 0; compressed with
 * dataparallel.compress) or a reduce-scatter (stages 1 and 2). Local SGD exchanges no
 * gradient. */
static void backward_pass(replica *r)
{
  dataparallel *d = r->d;
  dp_op op = d->p->zero >= 1 ? DP_REDUCE_SCATTER : DP_ALLREDUCE;
  int exchange = d->p->local_steps <= 1;
  size_t b = 0;
  for (size_t l = d->n_layers - 1; l >= 1; l--) {
    backward_layer(r, l);
    if (l == d->first[b]) {
      if (d->p->overlap && exchange)
        post(r, op, b);
      b++;
    }
  }
  for (size_t k = 0; !d->p->overlap && exchange && k < d->nb; k++)
    post(r, op, k);
}

/* Stage 3's forward: layer l's parameters gathered (unit l - 1) before it runs, the next
 * layer's gather posted before it waits (prefetch), so the communicator gathers layer l + 1
 * while layer l computes. Numerics: the gradient at the parameters gathered. */
static void forward_sharded(replica *r)
{
  dataparallel *d = r->d;
  size_t L = d->n_layers - 1, j = post(r, DP_ALLGATHER, 0);
  for (size_t l = 1; l <= L; l++) {
    size_t next = l < L ? post(r, DP_ALLGATHER, l) : 0;
    wait_job(r, j);
    account_label_push("forward layer %zu", l);
    forward_layer(r, l);
    account_label_pop();
    j = next;
  }
  if (d->cfg->numerics)
    minibatch_gradient(r->mb, r->w, r->grad, NULL);
}

/* Stage 3's backward: from the last layer down, each layer gathered again (the forward's
 * copy was freed), the one below prefetched, and its gradient reduce-scattered as soon as
 * its backward is done (with overlap off, after the whole backward). */
static void backward_sharded(replica *r)
{
  dataparallel *d = r->d;
  size_t L = d->n_layers - 1, j = post(r, DP_ALLGATHER, L - 1);
  for (size_t l = L; l >= 1; l--) {
    size_t next = l > 1 ? post(r, DP_ALLGATHER, l - 2) : 0;
    wait_job(r, j);
    backward_layer(r, l);
    if (d->p->overlap)
      post(r, DP_REDUCE_SCATTER, l - 1);
    j = next;
  }
  for (size_t u = L; !d->p->overlap && u-- > 0;)
    post(r, DP_REDUCE_SCATTER, u);
}

/* g /= k, then the optimizer on n parameters w whose moments start at s in m1, m2. */
static void update_block(replica *r, double *w, double *g, size_t n, size_t s)
{
  const dataparallel_params *p = r->d->p;
  /* the mean of k minibatch means: k = 1 divides exactly; local SGD steps on its own */
  double k = p->local_steps > 1 ? 1 : (double)p->replicas;
  for (size_t i = 0; i < n; i++)
    g[i] /= k;
  if (p->optimizer == DATAPARALLEL_ADAM)
    optim_adam_apply(w, r->m1 + s, r->m2 + s, g, n, p->lr, OPTIM_ADAM_B1, OPTIM_ADAM_B2, OPTIM_ADAM_EPS,
                     r->adam_step);
  else
    optim_sgd_apply(w, g, n, p->lr);
}

/* Stage 0: every parameter; stages 1 and 2: its block of every bucket, in w, with its block
 * of the reduce-scattered gradient; stage 3: its parameter shard. */
static void apply_update(replica *r)
{
  dataparallel *d = r->d;
  r->adam_step++;
  if (d->p->zero == 0) {
    update_block(r, r->w->data, r->grad->data, r->w->size, 0);
    return;
  }
  if (d->p->zero == 3) {
    update_block(r, r->ws, r->gs, r->soff[d->nu], 0);
    return;
  }
  for (size_t u = 0; u < d->nu; u++) {
    size_t bo, bl;
    coll_block(d->len[u], (size_t)d->p->replicas, r->rank, &bo, &bl);
    double *g = r->gs + r->soff[u];
    update_block(r, r->w->data + d->off[u] + bo, g, bl, r->soff[u]);
  }
}

/* The update's flops (of every parameter, or of its shard), then the update itself. The
 * parameters the evaluator reads (replica 0's, or with stage 3 every replica's shard) change
 * only under d->mu, which the flops do not hold (replicas would wait for each other); stages
 * 1 and 2 hold it until the updated blocks are gathered. */
static void update(replica *r)
{
  dataparallel *d = r->d;
  const run_config *cfg = d->cfg;
  size_t n = d->p->zero == 0 ? (size_t)cfg->sim_params : (size_t)r->shard_sim;
  compute_execute(cfg, cost_update_flops(n, d->p->optimizer == DATAPARALLEL_ADAM)); /* Adam: an adaptive rule's 6 */
  int lock = d->p->zero == 3 || r->rank == 0;
  if (lock)
    sg_mutex_lock(d->mu);
  if (cfg->numerics)
    apply_update(r);
  if (d->p->zero == 1 || d->p->zero == 2) {
    account_label_push("gather parameters");
    for (size_t u = 0; u < d->nu; u++)
      post(r, DP_ALLGATHER, u);
    wait_all_jobs(r);
    account_label_pop();
  }
  if (lock)
    sg_mutex_unlock(d->mu);
}

static void count_step(replica *r)
{
  if (r->rank != 0)
    return;
  r->d->slot->steps++;
  eval_step_done(r->d->eval); /* counts the step; the stop it may ask for is read by all_go_on */
}

static int local_step(const dataparallel *d, long step)
{
  return d->p->local_steps > 1 && (step + 1) % d->p->local_steps != 0;
}

/* Local SGD (Stich, ICLR 2019): every H-th step ends with the mean of the replicas' models,
 * an allreduce of w (summed in the collective's fixed order) divided by k. The replica runs
 * it itself: its communicator has no job in local SGD. */
static void average_models(replica *r, long step)
{
  dataparallel *d = r->d;
  if (d->p->local_steps <= 1 || local_step(d, step))
    return;
  const run_config *cfg = d->cfg;
  size_t n = cfg->numerics ? r->w->size : (size_t)cfg->sim_params;
  double *buf = cfg->numerics ? d->avg + r->rank * n : NULL;
  account_label_push("average models");
  if (buf)
    memcpy(buf, r->w->data, n * sizeof(double));
  coll_allreduce(d->comm, r->rank, buf, n, (coll_algo)d->p->algo);
  account_label_pop();
  if (!buf)
    return;
  if (r->rank == 0)
    sg_mutex_lock(d->mu);
  for (size_t i = 0; i < n; i++)
    r->w->data[i] = buf[i] / (double)d->p->replicas;
  if (r->rank == 0)
    sg_mutex_unlock(d->mu);
}

static void replica_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  replica *r = sg_actor_self_get_data();
  int sharded = r->d->p->zero == 3;
  for (long step = 0; all_go_on(r, step); step++) {
    r->step = step;
    account_label_push("forward");
    if (sharded)
      forward_sharded(r);
    else
      forward_pass(r);
    account_label_pop();
    if (sharded)
      backward_sharded(r);
    else
      backward_pass(r);
    account_label_push("wait for gradients");
    wait_all_jobs(r);
    account_label_pop();
    account_label_push("update");
    update(r);
    account_label_pop();
    average_models(r, step);
    count_step(r);
  }
  post(r, DP_STOP, 0);
  eval_finished(r->d->eval);
}

/* ---- a replica's communicator ---------------------------------------------- */

size_t dataparallel_unit_n(const dataparallel *d, size_t u)
{
  return d->cfg->numerics ? d->len[u] : (size_t)d->uelems[u];
}

/* One job. A reduce-scatter leaves the replica's block of the unit's sum in its gradient
 * shard; a stage-3 allgather starts from the replica's parameter shard, one of stages 1 and 2
 * from its block of w, just updated. */
static void run_job(replica *r, dp_job j)
{
  dataparallel *d = r->d;
  int num = d->cfg->numerics;
  size_t u = j.unit, n = dataparallel_unit_n(d, u), bo = 0, bl = 0;
  double *grad = num ? r->grad->data + d->off[u] : NULL, *w = num ? r->w->data + d->off[u] : NULL;
  if (num)
    coll_block(n, (size_t)d->p->replicas, r->rank, &bo, &bl);
  switch (j.op) {
  case DP_ALLREDUCE:
    account_label_push("bucket %zu", u);
    if (d->cz)
      compressed_bucket(d->cz, r->rank, u, grad, r->step, (coll_algo)d->p->algo);
    else
      coll_allreduce(d->comm, r->rank, grad, n, (coll_algo)d->p->algo);
    r->allreduces++;
    break;
  case DP_REDUCE_SCATTER:
    account_label_push("reduce-scatter %zu", u);
    coll_reduce_scatter(d->comm, r->rank, grad, n);
    if (num)
      memcpy(r->gs + r->soff[u], grad + bo, bl * sizeof(double));
    r->reduce_scatters++;
    break;
  default:
    account_label_push("allgather %zu", u);
    if (num && d->p->zero == 3)
      memcpy(w + bo, r->ws + r->soff[u], bl * sizeof(double));
    coll_allgather(d->comm, r->rank, w, n);
    r->allgathers++;
    break;
  }
  account_label_pop();
}

static void communicator_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  replica *r = sg_actor_self_get_data();
  for (;;) {
    sg_sem_acquire(r->ready);
    dp_job j = r->queue[r->taken++ % r->qcap];
    if (j.op == DP_STOP)
      return;
    run_job(r, j);
    sg_sem_release(r->done);
  }
}

/* ---- set-up ---------------------------------------------------------------- */

/* The evaluator's copy of the parameters: replica 0's, or with stage 3 every replica's
 * block of every layer, put together (the evaluator reads them as an oracle would, out of the
 * simulation). */
static void dataparallel_snapshot(void *ctx, gsl_vector *w)
{
  dataparallel *d = ctx;
  sg_mutex_lock(d->mu);
  if (d->p->zero < 3)
    gsl_vector_memcpy(w, d->reps[0].w);
  else
    for (size_t q = 0; q < (size_t)d->p->replicas; q++)
      for (size_t u = 0; u < d->nu; u++) {
        size_t bo, bl;
        coll_block(d->len[u], (size_t)d->p->replicas, q, &bo, &bl);
        memcpy(w->data + d->off[u] + bo, d->reps[q].ws + d->reps[q].soff[u], bl * sizeof(double));
      }
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

static void units_init(dataparallel *d);

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
  units_init(d);
}

/* ZeRO's units: the buckets, or with stage 3 the layers (dataparallel_impl.h). */
static void units_init(dataparallel *d)
{
  int layers = d->p->zero == 3;
  d->nu = layers ? d->n_layers - 1 : d->nb;
  d->uelems = xbt_malloc0(d->nu * sizeof(double));
  d->off = xbt_malloc0(d->nu * sizeof(size_t));
  d->len = xbt_malloc0(d->nu * sizeof(size_t));
  for (size_t u = 0; u < d->nu; u++) {
    /* bucket u: layers first[u] .. last; layer unit u: layer u + 1. Arch layer l is net layer l - 1. */
    size_t first = layers ? u + 1 : d->first[u], last = layers ? u + 1 : u == 0 ? d->n_layers - 1 : d->first[u - 1] - 1;
    d->uelems[u] = layers ? arch_layer_params(d->shapes, u + 1) : d->elems[u];
    if (d->cfg->numerics) {
      d->off[u] = net_layer_offset(d->cfg->model, first - 1);
      d->len[u] = net_layer_offset(d->cfg->model, last) - d->off[u];
    }
  }
}

/* A replica's shards (dataparallel_impl.h): where each unit's block starts, their simulated
 * size, and in numerics the shards themselves, from the initial parameters. Stage 3's w is
 * then only the buffer its gathers fill: NaN until they do. */
static void shards_init(dataparallel *d, replica *r)
{
  size_t k = (size_t)d->p->replicas;
  r->soff = xbt_malloc0((d->nu + 1) * sizeof(size_t));
  for (size_t u = 0; u < d->nu; u++) {
    size_t bo, bl, so, sl;
    coll_block(dataparallel_unit_n(d, u), k, r->rank, &bo, &bl);
    coll_block((size_t)d->uelems[u], k, r->rank, &so, &sl);
    r->soff[u + 1] = r->soff[u] + bl;
    r->shard_sim += (double)sl;
  }
  if (!d->cfg->numerics)
    return;
  size_t n = d->p->zero == 0 ? r->w->size : r->soff[d->nu];
  if (d->p->optimizer == DATAPARALLEL_ADAM) {
    r->m1 = xbt_malloc0(n * sizeof(double));
    r->m2 = xbt_malloc0(n * sizeof(double));
  }
  if (d->p->zero >= 1)
    r->gs = xbt_malloc0(r->soff[d->nu] * sizeof(double));
  if (d->p->zero < 3)
    return;
  r->ws = xbt_malloc0(r->soff[d->nu] * sizeof(double));
  for (size_t u = 0; u < d->nu; u++) {
    size_t bo, bl;
    coll_block(d->len[u], k, r->rank, &bo, &bl);
    memcpy(r->ws + r->soff[u], r->w->data + d->off[u] + bo, bl * sizeof(double));
  }
  gsl_vector_set_all(r->w, NAN);
}

static void replica_init(dataparallel *d, replica *r, size_t rank)
{
  const run_config *cfg = d->cfg;
  r->d = d;
  r->rank = rank;
  r->ready = sg_sem_init(0);
  r->done = sg_sem_init(0);
  r->qcap = 3 * (d->n_layers + d->nb) + 2; /* a step posts at most 3 jobs per layer or 2 per bucket, then the end */
  r->queue = xbt_malloc0(r->qcap * sizeof(dp_job));
  r->has_gpu = compute_gpu(cfg, cfg->hosts[rank], &r->gpu);
  if (cfg->numerics) {
    size_t begin, end;
    r->w = run_initial_params(cfg);
    r->grad = gsl_vector_calloc(r->w->size);
    data_shard_bounds(data_n(cfg->train), (size_t)d->p->replicas, rank, &begin, &end);
    r->mb = minibatch_create(cfg->model, cfg->train, begin, end, (size_t)d->p->batch, cfg->seed, (int)rank);
    xbt_assert(r->mb != NULL, "replica %zu has no training rows", rank);
  }
  shards_init(d, r);
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
  d->eval = eval_ctl_create(cfg, m, (int)k, dataparallel_snapshot, d);
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
    sg_sem_destroy(rp->done);
    xbt_free(rp->queue);
    xbt_free(rp->soff);
    xbt_free(rp->ws);
    xbt_free(rp->gs);
    xbt_free(rp->m1);
    xbt_free(rp->m2);
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
  xbt_free(d->uelems);
  xbt_free(d->off);
  xbt_free(d->len);
  xbt_free(d);
}

size_t dataparallel_bucket_elems(const dataparallel *d, const double **elems)
{
  *elems = d->elems;
  return d->nb;
}

const compressed *dataparallel_compressed(const dataparallel *d) { return d->cz; }

long dataparallel_allreduces(const dataparallel *d) { return d->reps[0].allreduces; }

/* zero3.c - ZeRO-3 over one data-parallel group (zero3.h): the lists of collectives a device
 * posts around its layers, the communicator actor that runs them in order, DeepSpeed 0.3's
 * host work around each, and NCCL 2.8's ring latency.
 *
 * Each device holds 1/d of its share of every layer. Before a layer's forward, and before its
 * backward (which recomputes it first), its d devices allgather the layer's parameters; after
 * the backward they reduce-scatter its gradient. The stage's other entries (the embedding rows,
 * the position embedding, the final LayerNorm) are gathered before each pass and
 * reduce-scattered after its backward. The communicator runs the jobs in the order they were
 * posted, so the d devices of a group, which post the same jobs in the same order, meet in
 * each collective.
 *  - Ideal (zero3_opts all 0 but prefetch): one collective per layer; the device posts the next
 *    layer's gather before it waits for this one's, and a layer's reduce-scatter runs while the
 *    next layer's backward computes.
 *  - per_tensor: one collective per parameter tensor of at least `persistence` elements (the
 *    others stay whole on every device; their gradients are reduce-scattered all the same, one
 *    collective each, as stage3.py reduces every gradient). A layer's collectives are one job.
 *  - prefetch off: DeepSpeed 0.3.13 to 0.4.0 (deepspeed/runtime/zero/stage3.py), whose
 *    submodule trace was off by one step (DeepSpeed issue #1069, fixed by PR #1170: "Fix hook
 *    registration problem that created off-by-one tracing issue"): no prefetch, and no tensor
 *    kept for a later reuse, so a layer is gathered for its recomputation and again for its
 *    backward; every fetch synchronizes the device (torch.cuda.synchronize in _allgather_param
 *    and _synchronize_communication), so the device waits for each job, reduce-scatters
 *    included, and nothing overlaps.
 *  - host: per collective the Python loop of views DeepSpeed takes of each rank's partition (on
 *    the device's CPU thread, before it posts) and PyTorch 1.8's copies between the caller's
 *    views and its own flat buffer (models/deepspeed.h: kernels after an allgather, before a
 *    reduce-scatter); after each step, the gather of the persistent tensors (stage3.py's
 *    _post_step) with its Python loop over tensors and ranks.
 *  - nccl: a job's collectives are one round of all their bytes without the route chain
 *    (coll_opts.no_chain), after the sum of their latencies as NCCL 2.8 models them
 *    (models/nccl.h: each with the protocol NCCL picks for its bytes). Without, each collective
 *    is a round of its own.
 * A collective's latency and its kernels are spent by the communicator as an execution bounded
 * at the share of the GPU that NCCL's kernels hold (compute_comm_share): alone on the device
 * they take their seconds; beside a computation they take that share of it. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <simgrid/actor.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <simgrid/semaphore.h>
#include <simgrid/zone.h>
#include <xbt/asserts.h>
#include <xbt/dict.h>
#include <xbt/dynar.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "algorithms/compute.h"
#include "algorithms/zero3.h"
#include "models/deepspeed.h"
#include "models/gemm.h"

/* ---- the group's ring, as NCCL models it ------------------------------------------- */

struct zero3_group {
  nccl_ring ring;
};

/* Numbers (from 1) each netzone that holds hosts, depth first, into node_of (host name ->
 * number). */
static void zone_walk(const_sg_netzone_t z, xbt_dict_t node_of, uintptr_t *next)
{
  xbt_dynar_t hosts = xbt_dynar_new(sizeof(sg_host_t), NULL);
  sg_zone_get_hosts(z, hosts);
  if (!xbt_dynar_is_empty(hosts)) {
    uintptr_t id = ++*next;
    unsigned i;
    sg_host_t h;
    xbt_dynar_foreach (hosts, i, h)
      xbt_dict_set(node_of, sg_host_get_name(h), (void *)id);
  }
  xbt_dynar_free(&hosts);
  xbt_dict_t sons = xbt_dict_new_homogeneous(NULL);
  sg_zone_get_sons(z, sons);
  xbt_dict_cursor_t cur = NULL;
  char *key;
  sg_netzone_t son;
  xbt_dict_foreach (sons, cur, key, son)
    zone_walk(son, node_of, next);
  xbt_dict_free(&sons);
}

zero3_group *zero3_group_create(const coll_comm *dc)
{
  zero3_group *g = xbt_malloc0(sizeof(*g));
  size_t p = coll_comm_size(dc);
  xbt_dict_t node_of = xbt_dict_new_homogeneous(NULL);
  uintptr_t next = 0;
  zone_walk(sg_zone_get_root(), node_of, &next);
  char *seen = xbt_malloc0(next + 1);
  double bw = INFINITY;
  g->ring.ranks = p;
  for (size_t r = 0; r < p; r++) {
    sg_host_t h = coll_comm_host(dc, r);
    uintptr_t id = (uintptr_t)xbt_dict_get_or_null(node_of, sg_host_get_name(h));
    if (!seen[id])
      g->ring.nodes++;
    seen[id] = 1;
    if (p > 1)
      bw = fmin(bw, sg_host_get_route_bandwidth(h, coll_comm_host(dc, (r + 1) % p)));
  }
  g->ring.bus_bw = p > 1 ? bw : 0;
  const char *sms = sg_host_get_property_value(coll_comm_host(dc, 0), "gpu_comm_sms");
  g->ring.channels = sms && atol(sms) > 0 ? (size_t)atol(sms) : 1;
  xbt_free(seen);
  xbt_dict_free(&node_of);
  return g;
}

void zero3_group_free(zero3_group *g) { xbt_free(g); }

const nccl_ring *zero3_group_ring(const zero3_group *g) { return &g->ring; }

/* ---- a device's lists of collectives ----------------------------------------------- */

typedef enum zero_op { ZERO_GATHER, ZERO_SCATTER, ZERO_ALLREDUCE } zero_op;

/* Collectives posted as one job: each one's elements on the wire, their sum, the tensors'
 * elements (what the counts add), the device's CPU seconds before posting them, and what the
 * communicator spends: their NCCL latencies, their kernels' seconds. */
typedef struct zlist {
  size_t *n;
  double *e;          /* each one's tensor elements */
  size_t k, wire;
  double elems, cpu_s, lat_s, kern_s;
} zlist;

typedef struct zjob {
  zero_op op;
  const zlist *l;
  size_t reps; /* the list this many times (a layer gathered for its recomputation, then its backward) */
} zjob;

struct zero3 {
  const run_config *cfg;
  zero3_opts o;
  const nccl_ring *ring;
  coll_comm *dc;
  size_t j;
  int recompute;
  zjob *jobs;                        /* this step's, in order */
  size_t cap, posted, taken, seen;   /* posted, taken by the communicator, seen done by the device */
  sg_sem_t ready, done;              /* released once per job posted, once per job done */
  size_t n_st, cur, layers;          /* stages; the pass's stage and its layers */
  const size_t *st_layers;
  zlist *lay_g, *lay_s, *rest_g, *rest_s; /* by stage: a layer's gathers and reduce-scatters, the rest's */
  zlist persist;                     /* host: the persistent tensors' gather after each step */
  ds_bucket bucket;                  /* allreduce: the gradients waiting for their bucket's allreduce */
  zlist **dyn;                       /* allreduce: this step's jobs of flushed buckets */
  size_t n_dyn, cap_dyn;
  size_t *gjob;                      /* the pass's gather of each layer: its job index */
  double gathered, scattered, layer_elems;
};

/* Seconds of `kernels` device kernels moving `bytes` on host h: the kernel model's
 * (models/gemm.h, launches included) on a GPU, else the bytes at the host's memory bandwidth. */
static double kernel_seconds(const run_config *cfg, sg_host_t h, double kernels, double bytes)
{
  gemm_device gd;
  if (compute_gpu(cfg, h, &gd))
    return gemm_mem_time(&gd, bytes, kernels);
  double bw = compute_host_mem_bw(h);
  return bw > 0 ? bytes / bw : 0;
}

static nccl_coll coll_of(zero_op op)
{
  return op == ZERO_GATHER ? NCCL_ALLGATHER : op == ZERO_SCATTER ? NCCL_REDUCE_SCATTER : NCCL_ALLREDUCE;
}

/* One collective of the list: `wire` elements (tensor elements `e`); its costs added. */
static void list_add(const zero3 *z, sg_host_t h, zlist *l, zero_op op, double e, double wire, ds_work w)
{
  l->n = xbt_realloc(l->n, (l->k + 1) * sizeof(size_t));
  l->e = xbt_realloc(l->e, (l->k + 1) * sizeof(double));
  l->e[l->k] = e;
  l->n[l->k++] = (size_t)wire;
  l->wire += (size_t)wire;
  l->elems += e;
  double bytes = wire * (double)z->cfg->elem_bytes;
  if (z->o.nccl)
    l->lat_s += nccl_extra(z->ring, coll_of(op), bytes);
  if (z->o.host) {
    l->cpu_s += w.cpu_s;
    l->kern_s += kernel_seconds(z->cfg, h, w.kernels, w.hbm_bytes);
  }
}

/* The list of tensors e[0..k) for op: per tensor with DeepSpeed's padding to the ranks, else
 * their elements as they are. */
static void list_build(const zero3 *z, sg_host_t h, zlist *l, zero_op op, const double *e, size_t k)
{
  double d = (double)z->ring->ranks, eb = (double)z->cfg->elem_bytes;
  for (size_t i = 0; i < k; i++) {
    double wire = z->o.per_tensor ? ds_aligned(e[i], d) : e[i];
    ds_work w = op == ZERO_GATHER ? ds_gather_work(e[i], d, eb, DS_PY_VIEW_S) : ds_scatter_work(e[i], d, eb, DS_PY_VIEW_S);
    list_add(z, h, l, op, e[i], wire, w);
  }
}

static void list_free(zlist *l)
{
  xbt_free(l->n);
  xbt_free(l->e);
}

/* Allreduce: a job of buckets, kept until the step's flush (the communicator reads it). */
static zlist *bucket_list(zero3 *z)
{
  if (z->n_dyn == z->cap_dyn) {
    z->cap_dyn = z->cap_dyn ? 2 * z->cap_dyn : 64;
    z->dyn = xbt_realloc(z->dyn, z->cap_dyn * sizeof(zlist *));
  }
  return z->dyn[z->n_dyn++] = xbt_malloc0(sizeof(zlist));
}

static void bucket_add(zero3 *z, zlist *l, ds_bucket b)
{
  ds_work w = ds_allreduce_work(b.elems, b.k, (double)z->ring->ranks, (double)z->cfg->elem_bytes, DS_PY_VIEW_S);
  list_add(z, sg_host_self(), l, ZERO_ALLREDUCE, b.elems, b.elems, w);
}

/* Allreduce: the gradients of list src (its tensors in backward order, last first) join the
 * bucket; the buckets they flush are one job, posted. */
static size_t post(zero3 *z, zero_op op, const zlist *l, size_t reps);
static void reduce_tensors(zero3 *z, const zlist *src)
{
  zlist *l = bucket_list(z);
  ds_bucket fl;
  for (size_t i = src->k; i-- > 0;)
    if (ds_bucket_add(&z->bucket, src->e[i], DS_REDUCE_BUCKET_DEFAULT, &fl))
      bucket_add(z, l, fl);
  post(z, ZERO_ALLREDUCE, l, 1);
}

/* The step's last bucket (stage3.py's independent_gradient_partition_epilogue). */
static void reduce_last(zero3 *z)
{
  if (z->bucket.k == 0)
    return;
  zlist *l = bucket_list(z);
  bucket_add(z, l, z->bucket);
  z->bucket = (ds_bucket){0, 0};
  post(z, ZERO_ALLREDUCE, l, 1);
}

static void buckets_free(zero3 *z)
{
  for (size_t i = 0; i < z->n_dyn; i++) {
    list_free(z->dyn[i]);
    xbt_free(z->dyn[i]);
  }
  z->n_dyn = 0;
}

/* The tensors of a list, from DeepSpeed's: every one (reduce-scatters), or those it partitions
 * (gathers); their elements into e, their number returned. */
static size_t tensors_of(const ds_param *p, size_t k, double persistence, int gathered, double *e)
{
  size_t n = 0;
  for (size_t i = 0; i < k; i++)
    if (!gathered || p[i].elems >= persistence)
      e[n++] = p[i].elems;
  return n;
}

/* Stage i's lists: per tensor, DeepSpeed's tensors of a layer and of the rest (checked
 * against the stage's counts); else one collective of each. Persistent tensors go to `pers`. */
static void stage_lists(zero3 *z, sg_host_t h, const zero3_stages *st, size_t i, double *pers, size_t *n_pers)
{
  const tensor_params *tp = st->tp;
  double L = tensor_stage_layer_elements(st->ts[i]);
  double rest = tensor_stage_dp_elements(st->ts[i]) - (double)st->layers[i] * L;
  z->layer_elems = fmax(z->layer_elems, L);
  double e[DS_LAYER_PARAMS];
  if (!z->o.per_tensor) {
    list_build(z, h, &z->lay_g[i], ZERO_GATHER, &L, 1);
    list_build(z, h, &z->lay_s[i], ZERO_SCATTER, &L, 1);
    if (rest > 0) {
      list_build(z, h, &z->rest_g[i], ZERO_GATHER, &rest, 1);
      list_build(z, h, &z->rest_s[i], ZERO_SCATTER, &rest, 1);
    }
    return;
  }
  ds_param lay[DS_LAYER_PARAMS], oth[4];
  double hd = (double)tp->hidden, t = (double)tp->ranks;
  ds_layer_params(hd, t, lay);
  size_t no = ds_rest_params(hd, t, (double)tp->vocab, (double)tp->seq, st->first[i], st->last[i], oth), k;
  double sum = 0, rsum = 0;
  for (k = 0; k < DS_LAYER_PARAMS; k++)
    sum += lay[k].elems;
  for (k = 0; k < no; k++)
    rsum += oth[k].elems;
  xbt_assert(fabs(sum - L) <= 1e-9 * L && fabs(rsum - rest) <= 1e-9 * fmax(rest, 1),
             "zero3: DeepSpeed's tensors (%g, %g) are not the stage's entries (%g, %g)", sum, rsum, L, rest);
  list_build(z, h, &z->lay_g[i], ZERO_GATHER, e, tensors_of(lay, DS_LAYER_PARAMS, z->o.persistence, 1, e));
  list_build(z, h, &z->lay_s[i], ZERO_SCATTER, e, tensors_of(lay, DS_LAYER_PARAMS, z->o.persistence, 0, e));
  list_build(z, h, &z->rest_g[i], ZERO_GATHER, e, tensors_of(oth, no, z->o.persistence, 1, e));
  list_build(z, h, &z->rest_s[i], ZERO_SCATTER, e, tensors_of(oth, no, z->o.persistence, 0, e));
  for (size_t l = 0; l < st->layers[i]; l++)
    for (k = 0; k < DS_LAYER_PARAMS; k++)
      if (lay[k].elems < z->o.persistence)
        pers[(*n_pers)++] = lay[k].elems;
  for (k = 0; k < no; k++)
    if (oth[k].elems < z->o.persistence)
      pers[(*n_pers)++] = oth[k].elems;
}

/* stage3.py's _post_step: one flat allgather of every persistent tensor's partition. */
static void persist_list(zero3 *z, sg_host_t h, const double *pers, size_t n)
{
  if (!z->o.host || n == 0)
    return;
  double d = (double)z->ring->ranks, parts = 0, e = 0;
  for (size_t i = 0; i < n; i++) {
    parts += ds_aligned(pers[i], d) / d;
    e += pers[i];
  }
  ds_work w = ds_persist_work(pers, n, d, (double)z->cfg->elem_bytes, DS_PY_VIEW_S);
  list_add(z, h, &z->persist, ZERO_GATHER, e, parts * d, w);
}

/* ---- the communicator and the device's posts --------------------------------------- */

/* Spends `seconds` of NCCL's work on the calling actor's host: an execution bounded at the
 * share of the device its kernels hold (all of it on a host without gpu_comm_sms). */
static void spend(double seconds)
{
  if (!(seconds > 0))
    return;
  sg_host_t h = sg_host_self();
  double share = compute_comm_share(h), speed = sg_host_get_speed(h);
  if (!(share > 0))
    share = 1;
  sg_exec_t e = sg_actor_exec_init(seconds * share * speed);
  sg_exec_set_name(e, "zero3 latency and copies");
  sg_exec_set_bound(e, share * speed);
  sg_exec_start(e);
  sg_exec_wait(e);
}

static void run_collectives(zero3 *z, const zjob *jb)
{
  const zlist *l = jb->l;
  size_t one = z->o.nccl, ncoll = one ? 1 : jb->reps * l->k; /* nccl: one round, no route chain */
  for (size_t c = 0; c < ncoll; c++) {
    size_t n = one ? jb->reps * l->wire : l->n[c % l->k];
    if (jb->op == ZERO_GATHER)
      coll_allgather(z->dc, z->j, NULL, n);
    else if (jb->op == ZERO_SCATTER)
      coll_reduce_scatter(z->dc, z->j, NULL, n);
    else
      coll_allreduce(z->dc, z->j, NULL, n, COLL_RING);
  }
}

static void zero3_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  zero3 *z = sg_actor_get_data(sg_actor_self());
  for (;;) {
    sg_sem_acquire(z->ready);
    zjob jb = z->jobs[z->taken];
    double reps = (double)jb.reps;
    account_label_push(jb.op == ZERO_GATHER ? "ZeRO-3 allgather" : "ZeRO-3 gradient reduction");
    spend(reps * (jb.l->lat_s + (jb.op != ZERO_GATHER ? jb.l->kern_s : 0))); /* copies in, then NCCL */
    run_collectives(z, &jb);
    if (jb.op == ZERO_GATHER)
      spend(reps * jb.l->kern_s); /* PyTorch's copies out of its buffer */
    account_label_pop();
    z->taken++;
    sg_sem_release(z->done);
  }
}

/* The device posts list l (reps times): first its CPU thread's Python loops. Returns the job. */
static size_t post(zero3 *z, zero_op op, const zlist *l, size_t reps)
{
  if (l->k == 0)
    return SIZE_MAX;
  if (l->cpu_s > 0) {
    account_label_push("ZeRO-3 host work");
    compute_busy((double)reps * l->cpu_s);
    account_label_pop();
  }
  if (z->posted == z->cap) {
    z->cap = z->cap ? 2 * z->cap : 64;
    z->jobs = xbt_realloc(z->jobs, z->cap * sizeof(zjob));
  }
  z->jobs[z->posted] = (zjob){op, l, reps};
  if (op == ZERO_GATHER)
    z->gathered += (double)reps * l->elems;
  else
    z->scattered += (double)reps * l->elems; /* reduced: reduce-scattered or allreduced */
  sg_sem_release(z->ready);
  return z->posted++;
}

/* Until job i is done (jobs end in the order they were posted): communication in the time
 * breakdown (run.h), exposed as far as nothing else of the device runs. */
static void wait_job(zero3 *z, size_t i)
{
  if (i == SIZE_MAX || z->seen > i)
    return;
  account_label_push("wait for gathers and reduce-scatters");
  account_comm_begin();
  while (z->seen <= i) {
    sg_sem_acquire(z->done);
    z->seen++;
  }
  account_comm_end();
  account_label_pop();
}

/* Around layer l of the current pass (tensor_stage.h's hook). */
static void zero3_hook(void *ctx, tensor_stage_event ev, size_t l)
{
  zero3 *z = ctx;
  const zlist *g = &z->lay_g[z->cur];
  if (ev == TENSOR_STAGE_DONE) {
    if (z->o.allreduce)
      reduce_tensors(z, &z->lay_s[z->cur]);
    else
      post(z, ZERO_SCATTER, &z->lay_s[z->cur], 1);
    return;
  }
  int fwd = ev == TENSOR_STAGE_FORWARD;
  if (!z->o.prefetch) { /* DeepSpeed 0.3: fetched when needed, for the recomputation and again for the backward */
    wait_job(z, post(z, ZERO_GATHER, g, !fwd && z->recompute ? 2 : 1));
    return;
  }
  if (fwd && l + 1 < z->layers)
    z->gjob[l + 1] = post(z, ZERO_GATHER, g, 1);
  else if (!fwd && l > 0)
    z->gjob[l - 1] = post(z, ZERO_GATHER, g, 1);
  wait_job(z, z->gjob[l]);
}

void zero3_pass_begin(zero3 *z, size_t i, int backward)
{
  z->cur = i;
  z->layers = z->st_layers[i];
  size_t g = post(z, ZERO_GATHER, &z->rest_g[i], 1);
  if (z->o.prefetch)
    z->gjob[backward ? z->layers - 1 : 0] = post(z, ZERO_GATHER, &z->lay_g[i], 1);
  wait_job(z, g);
}

void zero3_pass_end(zero3 *z, size_t i, int backward)
{
  if (backward && z->o.allreduce)
    reduce_tensors(z, &z->rest_s[i]);
  else if (backward)
    post(z, ZERO_SCATTER, &z->rest_s[i], 1);
}

void zero3_flush(zero3 *z)
{
  reduce_last(z);
  post(z, ZERO_GATHER, &z->persist, 1);
  if (z->posted > 0)
    wait_job(z, z->posted - 1);
  z->posted = z->taken = z->seen = 0; /* the communicator, waiting on ready, reads none until one is posted */
  buckets_free(z);
}

void zero3_counts(const zero3 *z, double *gathered, double *scattered, double *layer_elems)
{
  *gathered = z->gathered;
  *scattered = z->scattered;
  *layer_elems = z->layer_elems;
}

/* ---- set-up ------------------------------------------------------------------------ */

zero3 *zero3_attach(const run_config *cfg, const zero3_opts *o, const zero3_group *g, coll_comm *dc, size_t member,
                    sg_host_t host, const char *name, const zero3_stages *st)
{
  zero3 *z = xbt_malloc0(sizeof(*z));
  z->cfg = cfg;
  z->o = *o;
  z->ring = &g->ring;
  z->dc = dc;
  z->j = member;
  z->recompute = st->tp->recompute;
  z->n_st = st->n;
  z->st_layers = st->layers;
  z->ready = sg_sem_init(0);
  z->done = sg_sem_init(0);
  zlist **lists[] = {&z->lay_g, &z->lay_s, &z->rest_g, &z->rest_s};
  for (size_t k = 0; k < 4; k++)
    *lists[k] = xbt_malloc0(st->n * sizeof(zlist));
  size_t most = 0, n_pers = 0, cap = 0;
  for (size_t i = 0; i < st->n; i++) {
    most = st->layers[i] > most ? st->layers[i] : most;
    cap += DS_LAYER_PARAMS * st->layers[i] + 4;
  }
  double *pers = xbt_malloc(cap * sizeof(double));
  for (size_t i = 0; i < st->n; i++) {
    stage_lists(z, host, st, i, pers, &n_pers);
    tensor_stage_set_hook(st->ts[i], zero3_hook, z);
  }
  persist_list(z, host, pers, n_pers);
  xbt_free(pers);
  z->gjob = xbt_malloc0(most * sizeof(size_t));
  sg_actor_t a = sg_actor_init(name, host);
  sg_actor_set_data(a, z);
  sg_actor_start(a, zero3_actor, 0, NULL);
  sg_actor_daemonize(a); /* it waits for jobs until the devices end */
  return z;
}

void zero3_free(zero3 *z)
{
  if (z == NULL)
    return;
  for (size_t i = 0; i < z->n_st; i++) {
    list_free(&z->lay_g[i]);
    list_free(&z->lay_s[i]);
    list_free(&z->rest_g[i]);
    list_free(&z->rest_s[i]);
  }
  list_free(&z->persist);
  buckets_free(z);
  xbt_free(z->dyn);
  xbt_free(z->lay_g);
  xbt_free(z->lay_s);
  xbt_free(z->rest_g);
  xbt_free(z->rest_s);
  sg_sem_destroy(z->ready);
  sg_sem_destroy(z->done);
  xbt_free(z->jobs);
  xbt_free(z->gjob);
  xbt_free(z);
}

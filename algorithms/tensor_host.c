/* tensor_host.c - model.framework in the tensor algorithm (tensor_host.h): a step's plan of
 * launches and waits, the thread that runs it on the rank's host CPU, and the rank's side,
 * which runs its GPU work only as the thread launches it. */
#include "algorithms/tensor_host.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/semaphore.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "algorithms/collectives.h"
#include "algorithms/compute.h"
#include "models/transformer.h"

/* One piece of the plan: a launch of `count` kernels, or a wait for the GPU followed by
 * `count` RNG state copies (0: a value read back, or a synchronize). */
typedef struct th_entry {
  unsigned char wait, tag;
  unsigned count;
} th_entry;

struct tensor_host_plan {
  const framework *f;
  int recompute, own_ddp, rng_pinned;
  th_entry *e;
  size_t n, cap;
  double *tensors;  /* the rank's parameter tensors in the framework's order, elements each */
  size_t n_tensors;
  double elems;     /* their sum */
};

struct tensor_host {
  const tensor_host_plan *plan;
  tensor_host_gpu g;  /* the rank's GPU side */
  long steps;
  double copy_bw;   /* bytes/s of an RNG state copy: the host link's, or pageable memory's below it */
  sg_sem_t issued;  /* a token per launch the GPU may start or end on (exec) */
  sg_sem_t drained; /* the GPU has reached a wait of the plan */
  size_t cursor;    /* the rank's next piece of the plan */
  double end;       /* when the thread finished its last step */
};

/* ---- the plan ---------------------------------------------------------------------- */

/* RNG state copies at a wait (0 for the other waits), and whether the era has the wait:
 * RNG waits with copies, timers with timer_syncs, the others always. */
static unsigned wait_copies(const tensor_host_plan *p, tensor_host_tag tag, int *present)
{
  const framework *f = p->f;
  unsigned c = tag == TH_RNG_FWD ? f->fork_in + (p->recompute ? f->ckpt_fwd : 0)
               : tag == TH_RNG_MID ? f->fork_out
               : tag == TH_RNG_REC ? f->ckpt_bwd_in + f->fork_in
               : tag == TH_RNG_REC_END ? f->ckpt_bwd_out : 0;
  int rng = tag == TH_RNG_FWD || tag == TH_RNG_MID || tag == TH_RNG_REC || tag == TH_RNG_REC_END;
  *present = rng ? c > 0 : tag == TH_TIMER ? f->timer_syncs : 1;
  return c;
}

static void put(tensor_host_plan *p, int wait, tensor_host_tag tag, unsigned count)
{
  if (p->n == p->cap) {
    p->cap = p->cap ? 2 * p->cap : 256;
    p->e = xbt_realloc(p->e, p->cap * sizeof(*p->e));
  }
  p->e[p->n++] = (th_entry){(unsigned char)wait, (unsigned char)tag, count};
}

static void put_wait(tensor_host_plan *p, tensor_host_tag tag)
{
  int present;
  unsigned c = wait_copies(p, tag, &present);
  if (present)
    put(p, 1, tag, c);
}

static void plan_layer_forward(tensor_host_plan *p, const tensor_host_shape *s, int recompute)
{
  put_wait(p, recompute ? TH_RNG_REC : TH_RNG_FWD);
  put(p, 0, TH_FWD_ATTN, s->launches[TRANSFORMER_FWD_ATTN]);
  put_wait(p, TH_RNG_MID);
  put(p, 0, TH_FWD_MLP, s->launches[TRANSFORMER_FWD_MLP]);
  if (recompute)
    put_wait(p, TH_RNG_REC_END);
}

static void plan_forward(tensor_host_plan *p, const tensor_host_shape *s)
{
  if (s->vocab)
    put(p, 0, TH_EMBED, 1 + s->collectives);
  for (size_t l = 0; l < s->layers; l++)
    plan_layer_forward(p, s, 0);
  if (s->vocab)
    put(p, 0, TH_LOGITS_F, s->ranks > 1 ? 4 : 1);
}

static void plan_backward(tensor_host_plan *p, const tensor_host_shape *s)
{
  if (s->vocab) {
    put(p, 0, TH_LOGITS_B, 1 + s->collectives);
    put(p, 0, TH_WGRAD, 1);
  }
  for (size_t l = 0; l < s->layers; l++) {
    if (s->recompute)
      plan_layer_forward(p, s, 1);
    put(p, 0, TH_BWD_MLP, s->launches[TRANSFORMER_BWD_MLP]);
    put(p, 0, TH_WGRAD, 1);
    put(p, 0, TH_BWD_ATTN, s->launches[TRANSFORMER_BWD_ATTN]);
    put(p, 0, TH_WGRAD, 1);
  }
}

static void plan_loops(tensor_host_plan *p, framework_where where)
{
  for (size_t i = 0; i < p->f->n_loops; i++) {
    const framework_loop *l = &p->f->loops[i];
    if (l->where != where)
      continue;
    if (!l->sync)
      put(p, 0, TH_LOOP, (unsigned)framework_loop_kernels(l, p->n_tensors));
    for (size_t k = 0; l->sync && k < p->n_tensors; k++) {
      put(p, 0, TH_LOOP, l->kernels);
      put_wait(p, TH_ITEM);
    }
    if (l->then_reduce) {
      put(p, 0, TH_REDUCE, 1);
      put_wait(p, TH_ITEM);
    }
  }
}

/* The rank's parameter tensors in Megatron-LM's order (the word and position embeddings, the
 * layers', the final LayerNorm's gain and bias). */
static void plan_tensors(tensor_host_plan *p, const tensor_host_shape *q)
{
  double h = (double)q->hidden, layer[TRANSFORMER_LAYER_TENSORS];
  size_t n = 0, per = transformer_shard_tensors(q->hidden, q->ranks, layer);
  p->n_tensors = q->layers * per + (q->vocab ? 4 : 0);
  p->tensors = xbt_malloc(p->n_tensors * sizeof(double));
  if (q->vocab) {
    p->tensors[n++] = (double)q->vocab * h / (double)q->ranks;
    p->tensors[n++] = (double)q->seq * h;
  }
  for (size_t l = 0; l < q->layers; l++)
    for (size_t k = 0; k < per; k++)
      p->tensors[n++] = layer[k];
  if (q->vocab) {
    p->tensors[n++] = h;
    p->tensors[n++] = h;
  }
  p->elems = 0;
  for (size_t i = 0; i < n; i++)
    p->elems += p->tensors[i];
}

tensor_host_plan *tensor_host_plan_create(const framework *f, const tensor_host_shape *s)
{
  if (f == NULL)
    return NULL;
  tensor_host_plan *p = xbt_malloc0(sizeof(*p));
  p->f = f;
  p->recompute = s->recompute;
  p->own_ddp = s->own_ddp;
  p->rng_pinned = s->rng_pinned;
  plan_tensors(p, s);
  put_wait(p, TH_TIMER);
  for (long k = 0; k < s->microbatches; k++) {
    plan_forward(p, s);
    put_wait(p, TH_TIMER);
    if (k == 0)
      plan_loops(p, FRAMEWORK_BEFORE_BACKWARD);
    plan_backward(p, s);
  }
  if (p->own_ddp) {
    put(p, 0, TH_DDP_FLAT, f->flat_kernels);
    put_wait(p, TH_DDP_SYNC);
    put(p, 0, TH_DDP_COPY, f->copy_kernels * (unsigned)p->n_tensors);
  }
  put_wait(p, TH_TIMER);
  plan_loops(p, FRAMEWORK_AFTER_BACKWARD);
  put_wait(p, TH_TIMER);
  return p;
}

void tensor_host_plan_free(tensor_host_plan *p)
{
  if (p == NULL)
    return;
  xbt_free(p->e);
  xbt_free(p->tensors);
  xbt_free(p);
}

/* ---- the thread -------------------------------------------------------------------- */

/* A host CPU's pcie_bw property, or 0 when it has none usable. */
static double pcie_of(sg_host_t cpu)
{
  const char *v = sg_host_get_property_value(cpu, "pcie_bw");
  char *end;
  double bw = v ? strtod(v, &end) : 0;
  return v && end != v && *end == '\0' && bw > 0 && isfinite(bw) ? bw : 0;
}

static sg_host_t cpu_of(sg_host_t gpu)
{
  char name[300];
  snprintf(name, sizeof name, "%s-cpu", sg_host_get_name(gpu));
  return sg_host_by_name(name);
}

int tensor_host_check(const run_config *cfg, size_t n, char *err, size_t len)
{
  for (size_t i = 0; cfg->framework && i < n; i++) {
    sg_host_t cpu = cpu_of(cfg->hosts[i]);
    const char *name = sg_host_get_name(cfg->hosts[i]);
    if (cpu == NULL)
      snprintf(err, len, "model.framework = %s: host %s has no host CPU (a host named %s-cpu, which the GPU presets "
               "write)", cfg->framework->name, name, name);
    else if (cfg->framework->rng_bytes > 0 && pcie_of(cpu) <= 0)
      snprintf(err, len, "model.framework = %s: host %s-cpu has no pcie_bw property (bytes/s to its GPU, for the RNG "
               "state copies)", cfg->framework->name, name);
    else if (compute_host_mem_bw(cfg->hosts[i]) <= 0)
      snprintf(err, len, "model.framework = %s: host %s has no mem_bw property (bytes/s, for the optimizer's "
               "kernels)", cfg->framework->name, name);
    else
      continue;
    return -1;
  }
  return 0;
}

/* The rate of an RNG state copy between a GPU and its host CPU: the link's (pcie_bw), or, when
 * the era's state tensor is pageable and the run does not pin it (tensor.rng_pinned), the era's
 * pageable rate where that is slower (the driver's staging through a pinned buffer). */
static double copy_rate(const tensor_host_plan *p, double pcie_bw)
{
  double pg = p->f->pageable_bw;
  return !p->rng_pinned && pg > 0 && pg < pcie_bw ? pg : pcie_bw;
}

/* Seconds the thread spends at a wait once the GPU has drained: each RNG state copy a round
 * trip and its bytes at copy_rate; a read-back or a synchronize, one round trip. */
static double wait_seconds(const tensor_host *h, unsigned copies)
{
  const framework *f = h->plan->f;
  return copies ? copies * (f->sync_s + f->rng_bytes / h->copy_bw) : f->sync_s;
}

/* The thread: each launch costs op_s per kernel, its first kernel's launch lets the GPU
 * start the piece and its last lets it finish; each wait waits for the GPU to drain. */
static void host_actor(int argc, char **argv)
{
  (void)argc, (void)argv;
  tensor_host *h = sg_actor_self_get_data();
  const tensor_host_plan *p = h->plan;
  for (long s = 0; s < h->steps; s++)
    for (size_t i = 0; i < p->n; i++) {
      const th_entry *e = &p->e[i];
      if (e->wait) {
        sg_sem_acquire(h->drained);
        compute_busy(wait_seconds(h, e->count));
        continue;
      }
      compute_busy(p->f->op_s);
      sg_sem_release(h->issued);
      if (e->count > 1) {
        compute_busy((e->count - 1) * p->f->op_s);
        sg_sem_release(h->issued);
      }
    }
  h->end = simgrid_get_clock();
}

tensor_host *tensor_host_start(const tensor_host_plan *plan, long steps, const char *name, const tensor_host_gpu *g)
{
  tensor_host *h = xbt_malloc0(sizeof(*h));
  sg_host_t cpu = cpu_of(coll_comm_host(g->tc, g->me));
  xbt_assert(cpu != NULL, "tensor: a host without the host CPU tensor_host_check asked for");
  h->plan = plan;
  h->g = *g;
  h->steps = steps;
  h->copy_bw = copy_rate(plan, pcie_of(cpu));
  h->issued = sg_sem_init(0);
  h->drained = sg_sem_init(0);
  sg_actor_t a = sg_actor_init(name, cpu);
  sg_actor_set_data(a, h);
  sg_actor_start(a, host_actor, 0, NULL);
  return h;
}

double tensor_host_end(const tensor_host *h) { return h ? h->end : 0; }

void tensor_host_free(tensor_host *h)
{
  if (h == NULL)
    return;
  sg_sem_destroy(h->issued);
  sg_sem_destroy(h->drained);
  xbt_free(h);
}

/* ---- the rank's side ---------------------------------------------------------------- */

static const th_entry *take(tensor_host *h, int wait, tensor_host_tag tag)
{
  const tensor_host_plan *p = h->plan;
  if (h->cursor == p->n) /* the next step */
    h->cursor = 0;
  const th_entry *e = &p->e[h->cursor++];
  xbt_assert(e->wait == wait && e->tag == tag, "tensor host: piece %zu of the plan is %s %d, the GPU wants %s %d",
             h->cursor - 1, e->wait ? "wait" : "launch", e->tag, wait ? "wait" : "launch", tag);
  return e;
}

/* Waits for the launch of the first kernel of the plan's next piece (and, for more than
 * one, returns the share of its work the GPU may run before the last one is launched). */
static double launched(tensor_host *h, tensor_host_tag tag)
{
  const th_entry *e = take(h, 0, tag);
  sg_sem_acquire(h->issued);
  return e->count > 1 ? (double)(e->count - 1) / e->count : 1;
}

void tensor_host_exec(tensor_host *h, tensor_host_tag tag, double amount)
{
  if (h == NULL) {
    account_exec(amount);
    return;
  }
  double first = launched(h, tag);
  if (amount > 0)
    account_exec(amount * first);
  if (first < 1) {
    sg_sem_acquire(h->issued);
    if (amount > 0)
      account_exec(amount * (1 - first));
  }
}

sg_exec_t tensor_host_exec_async(tensor_host *h, tensor_host_tag tag, double amount)
{
  if (h != NULL && launched(h, tag) < 1) /* started once the whole piece is launched */
    sg_sem_acquire(h->issued);
  return account_exec_async(amount);
}

void tensor_host_sync(tensor_host *h, tensor_host_tag tag)
{
  int present;
  if (h == NULL)
    return;
  wait_copies(h->plan, tag, &present);
  if (!present)
    return;
  take(h, 1, tag);
  sg_sem_release(h->drained);
}

static double mem_amount(const tensor_host *h, double bytes, double kernels)
{
  compute_work w = {NULL, 0, bytes, kernels};
  return compute_work_amount(h->g.cfg, h->g.gpu, &w);
}

void tensor_host_loops(tensor_host *h, framework_where where)
{
  if (h == NULL)
    return;
  const tensor_host_plan *p = h->plan;
  for (size_t i = 0; i < p->f->n_loops; i++) {
    const framework_loop *l = &p->f->loops[i];
    if (l->where != where)
      continue;
    if (!l->sync)
      tensor_host_exec(h, TH_LOOP, mem_amount(h, framework_loop_bytes(l, p->elems),
                                               framework_loop_kernels(l, p->n_tensors)));
    for (size_t k = 0; l->sync && k < p->n_tensors; k++) {
      tensor_host_exec(h, TH_LOOP, mem_amount(h, framework_loop_bytes(l, p->tensors[k]), l->kernels));
      tensor_host_sync(h, TH_ITEM);
    }
    if (l->then_reduce) { /* a flag or a norm over the tensor group, read back */
      tensor_host_exec(h, TH_REDUCE, 0);
      coll_allreduce(h->g.tc, h->g.me, NULL, 1, h->g.algo);
      tensor_host_sync(h, TH_ITEM);
    }
  }
}

void tensor_host_ddp(tensor_host *h, int after)
{
  if (h == NULL || !h->plan->own_ddp)
    return;
  const tensor_host_plan *p = h->plan;
  const framework *f = p->f;
  if (!after) {
    tensor_host_exec(h, TH_DDP_FLAT, mem_amount(h, f->flat_bytes * p->elems, f->flat_kernels));
    return;
  }
  tensor_host_sync(h, TH_DDP_SYNC);
  tensor_host_exec(h, TH_DDP_COPY, mem_amount(h, f->copy_bytes * p->elems, (double)f->copy_kernels * p->n_tensors));
}

/* tensor.c - Megatron-LM tensor parallelism of a GPT layer stack (run.algorithm = tensor):
 * t ranks per tensor group, d data-parallel replicas of it (Shoeybi et al. 2019 sec. 3;
 * PTD-P, Narayanan et al. 2021). Each rank's actor runs, for every microbatch of every
 * step, its layers forward then backward (tensor_stage_layers.c), then the step's data-parallel
 * gradient allreduce, one after backward or, with dp_overlap, bucketed beside it by a
 * communicator actor (PyTorch DDP, Li et al. VLDB 2020 sec. 3.2.3). Deploy builds the
 * communicators and ranks; with numerics the ranks carry real activations, checked after
 * the run against the serial layer stack. The key table and descriptor are
 * tensor_config.c's, the report tensor_report.c's; algorithms/README.md has the model. */
#include "algorithms/tensor.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <simgrid/actor.h>
#include <simgrid/host.h>
#include <simgrid/engine.h>
#include <simgrid/semaphore.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "algorithms/collectives.h"
#include "algorithms/compute.h"
#include "algorithms/tensor_host.h"
#include "algorithms/tensor_impl.h"
#include "models/rng.h"
#include "models/transformer.h"

/* Microbatch k's input (uniform in [-1, 1)) and the gradient of the probe loss
 * L = sum(P .* Z) at the output, P uniform too: the same on every rank, drawn from
 * (run.seed, data role, 2k) and (.., 2k + 1). Fills rows [row0, row0 + rows). */
static void microbatch_matrix(const tensor *t, long k, int which, size_t row0, gsl_matrix *out)
{
  gsl_rng *r = rng_create(t->cfg->seed, RNG_ROLE_DATA, (int)(2 * k + which));
  for (size_t i = 0; i < t->n; i++)
    for (size_t c = 0; c < t->d.h; c++) {
      double v = 2 * gsl_rng_uniform(r) - 1;
      if (out && i >= row0 && i < row0 + out->size1)
        gsl_matrix_set(out, i - row0, c, v);
    }
  gsl_rng_free(r);
}

static void load_microbatch(rank *rk, long k)
{
  if (!rk->parts)
    return;
  size_t row0, rows;
  transformer_part_rows(rk->parts[0], &row0, &rows);
  microbatch_matrix(rk->tp, k, 0, row0, rk->act[0]);
  microbatch_matrix(rk->tp, k, 1, row0, rk->dcur);
}

static void start_step(rank *rk)
{
  for (size_t l = 0; rk->gacc && l < rk->tp->p->layers; l++)
    gsl_vector_set_zero(rk->gacc[l]);
}

/* ---- data-parallel gradient buckets (dp_overlap) ----------------------------------- */

/* One more unit's gradients are final: they join the current bucket, which goes to the
 * communicator if this unit completes it. Outside the step's last backward: nothing. */
static void gradients_ready(rank *rk)
{
  tensor *t = rk->tp;
  if (!rk->handing)
    return;
  if (rk->unit == t->b_last[rk->bucket]) {
    sg_sem_release(rk->ready);
    rk->bucket++;
  }
  rk->unit++;
}

/* The gradient allreduce of the step: one ring allreduce of the rank's share after
 * backward (one bucket, not overlapped: Megatron's own DDP), or (dp_overlap) the buckets
 * still in flight; their time is communication in the breakdown (run.h). Timing only: the
 * scenario refuses numerics with d > 1 (numeric 3D stages do their sum in pipeline.c). */
static void allreduce_gradients(rank *rk)
{
  tensor *t = rk->tp;
  if (t->dcomm == NULL)
    return;
  if (!t->p->dp_overlap) {
    tensor_host_ddp(rk->host, 0);
    double t0 = simgrid_get_clock();
    coll_allreduce(t->dcomm[rk->me], rk->rep, NULL, t->dp_elems, COLL_RING);
    rk->dp_s = fmax(rk->dp_s, simgrid_get_clock() - t0);
    tensor_host_ddp(rk->host, 1);
    return;
  }
  if (t->p->vocab)
    gradients_ready(rk); /* the embedding's backward is the last thing: its rows are final */
  xbt_assert(rk->bucket == t->nb, "tensor: %zu of %zu buckets handed over", rk->bucket, t->nb);
  rk->handing = 0;
  account_comm_begin();
  sg_sem_acquire(rk->reduced);
  account_comm_end();
}

/* The last microbatch's backward hands its gradients over bucket by bucket. */
static void start_handing(rank *rk)
{
  rk->handing = rk->tp->dcomm && rk->tp->p->dp_overlap;
  rk->unit = 0;
  rk->bucket = 0;
}

static void rank_actor(int argc, char **argv)
{
  (void)argc, (void)argv;
  rank *rk = sg_actor_self_get_data();
  const tensor_params *p = rk->tp->p;
  for (long step = 0; step < p->steps; step++) {
    start_step(rk);
    tensor_host_sync(rk->host, TH_TIMER);
    for (long k = 0; k < p->microbatches; k++) {
      account_label_push("mb %ld", k);
      load_microbatch(rk, k);
      tensor_rank_forward(rk, 1, 1);
      tensor_host_sync(rk->host, TH_TIMER);
      if (k == 0)
        tensor_host_loops(rk->host, FRAMEWORK_BEFORE_BACKWARD);
      if (k == p->microbatches - 1)
        start_handing(rk);
      tensor_rank_backward(rk, 1, 1);
      account_label_pop();
    }
    account_label_push("gradient allreduce");
    allreduce_gradients(rk);
    account_label_pop();
    tensor_host_sync(rk->host, TH_TIMER);
    account_label_push("optimizer");
    tensor_host_loops(rk->host, FRAMEWORK_AFTER_BACKWARD);
    account_label_pop();
    tensor_host_sync(rk->host, TH_TIMER);
    if (rk->me == 0 && rk->rep == 0)
      metrics_slot_at(rk->tp->m, 0)->steps = step + 1;
  }
  rk->end = simgrid_get_clock();
}

/* dp_overlap: a rank's communicator, on its host. Each step it allreduces the buckets in
 * bucket order as backward fills them, on the rank's data-parallel communicator: every
 * member runs the same collectives in the same order (collectives.h), as DDP does on one
 * NCCL stream. */
static void communicator_actor(int argc, char **argv)
{
  (void)argc, (void)argv;
  rank *rk = sg_actor_self_get_data();
  tensor *t = rk->tp;
  for (long step = 0; step < t->p->steps; step++) {
    double t0 = 0;
    for (size_t b = 0; b < t->nb; b++) {
      sg_sem_acquire(rk->ready);
      if (b == 0)
        t0 = simgrid_get_clock();
      coll_allreduce(t->dcomm[rk->me], rk->rep, NULL, (size_t)t->b_elems[b], COLL_RING);
    }
    rk->dp_s = fmax(rk->dp_s, simgrid_get_clock() - t0);
    sg_sem_release(rk->reduced);
  }
}

static void rank_init_numerics(tensor *t, rank *rk)
{
  const tensor_params *p = t->p;
  size_t row0, rows;
  rk->parts = xbt_malloc0(p->layers * sizeof(transformer_part *));
  rk->act = xbt_malloc0((p->layers + 1) * sizeof(gsl_matrix *));
  rk->gacc = xbt_malloc0(p->layers * sizeof(gsl_vector *));
  for (size_t l = 0; l < p->layers; l++) {
    rk->parts[l] = transformer_part_create(&t->d, p->ranks, rk->me, p->seqpar);
    xbt_assert(rk->parts[l] != NULL, "tensor: a validated split was refused");
    rk->gacc[l] = gsl_vector_calloc(transformer_n_params(t->d.h));
  }
  transformer_part_rows(rk->parts[0], &row0, &rows);
  for (size_t l = 0; l <= p->layers; l++)
    rk->act[l] = gsl_matrix_alloc(rows, t->d.h);
  rk->dcur = gsl_matrix_alloc(rows, t->d.h);
  rk->dnext = gsl_matrix_alloc(rows, t->d.h);
  rk->gtmp = gsl_vector_alloc(transformer_n_params(t->d.h));
}

/* NCCL's ring allreduce (its primitives recvReduceSend, recvReduceCopySend, recvCopySend)
 * moves about 4 bytes of a GPU's HBM per byte the GPU sends: the chunk it receives is written
 * into its buffer (1) and read back with its own data (2) to write the sum, or the gathered
 * chunk, that goes on (1). */
#define NCCL_HBM_PER_BYTE 4.0

/* tensor.comm_hbm: each data-parallel allreduce takes that HBM traffic from the backward beside
 * it, in the share of it memory-bound kernels take (rank 0's GPU, as every rank's). */
static void dp_hbm(tensor *t)
{
  gemm_device gpu;
  if (!t->p->comm_hbm || !t->p->dp_overlap || !compute_gpu(t->cfg, t->cfg->hosts[0], &gpu))
    return;
  double per_Bps = NCCL_HBM_PER_BYTE * tensor_backward_mem_share(t, &gpu) / gpu.mem_bw;
  for (size_t r = 0; r < t->p->ranks; r++)
    coll_comm_set_hbm(t->dcomm[r], per_Bps);
}

static void start_actor(const char *role, size_t i, sg_host_t host, rank *rk, void (*fn)(int, char **))
{
  char name[32];
  snprintf(name, sizeof(name), "%s-%zu", role, i);
  sg_actor_t a = sg_actor_init(name, host);
  sg_actor_set_data(a, rk);
  sg_actor_start(a, fn, 0, NULL);
}

/* Rank i of t (replica i / t, tensor rank i mod t): its state, its actors and, under
 * model.framework, its thread. */
static void deploy_rank(tensor *t, size_t i)
{
  const run_config *cfg = t->cfg;
  const tensor_params *p = t->p;
  rank *rk = &t->ranks[i];
  rk->tp = t;
  rk->me = i % p->ranks;
  rk->rep = i / p->ranks;
  rk->tc = t->tcomm[rk->rep];
  rk->layer_done = gradients_ready;
  rk->has_gpu = compute_gpu(cfg, cfg->hosts[i], &rk->gpu);
  if (rk->has_gpu)
    tensor_rank_gpu_times(rk);
  if (cfg->numerics)
    rank_init_numerics(t, rk);
  if (t->b_elems) {
    rk->ready = sg_sem_init(0);
    rk->reduced = sg_sem_init(0);
  }
  start_actor("tensor", i, cfg->hosts[i], rk, rank_actor);
  if (t->b_elems)
    start_actor("tensor-dp", i, cfg->hosts[i], rk, communicator_actor);
  if (t->host_plan) {
    char name[32];
    snprintf(name, sizeof(name), "tensor-host-%zu", i);
    tensor_host_gpu g = {cfg, rk->has_gpu ? &rk->gpu : NULL, rk->tc, rk->me, (coll_algo)p->algo};
    rk->host = tensor_host_start(t->host_plan, p->steps, name, &g);
  }
}

tensor *tensor_deploy(const run_config *cfg, const tensor_params *p, metrics *m)
{
  transformer_dims d = {p->microbatch, p->seq, p->hidden, p->heads};
  size_t dp = dp_of(p);
  if (p->ranks == 0 || cfg->n_hosts < p->ranks * dp || ((dp > 1 || p->vocab) && cfg->numerics) || p->vocab % p->ranks || transformer_dims_check(&d) != 0 || p->heads % p->ranks != 0 ||
      (p->seqpar && p->seq % p->ranks != 0) || p->layers == 0 || p->microbatches < 1 || p->steps < 1)
    return NULL;
  tensor *t = xbt_malloc0(sizeof(*t));
  t->cfg = cfg;
  t->p = p;
  t->m = m;
  t->d = d;
  t->n = d.b * d.s;
  t->n_ranks = p->ranks * dp;
  t->dp_elems = (size_t)tensor_dp_elements(p);
  t->nb = dp > 1 ? 1 : 0;
  if (dp > 1 && p->dp_overlap) {
    t->nb = tensor_dp_buckets(p, cfg->elem_bytes, NULL, NULL);
    t->b_elems = xbt_malloc0(t->nb * sizeof(double));
    t->b_last = xbt_malloc0(t->nb * sizeof(size_t));
    tensor_dp_buckets(p, cfg->elem_bytes, t->b_elems, t->b_last);
  }
  coll_opts o = {cfg->elem_bytes, 0, cfg, 0, coll_mode_of(cfg), cfg->comm_sms};
  /* replica j on hosts [j t, (j + 1) t); tensor rank r's data-parallel group on hosts r,
   * r + t, ..., r + (d-1) t (Megatron: the GPUs at the same position in each group) */
  t->tcomm = xbt_malloc0(dp * sizeof(coll_comm *));
  for (size_t j = 0; j < dp; j++) {
    t->tcomm[j] = coll_comm_create("tensor", cfg->hosts + j * p->ranks, p->ranks, &o);
    xbt_assert(t->tcomm[j] != NULL, "tensor: could not make a tensor communicator");
  }
  if (dp > 1) {
    sg_host_t *g = xbt_malloc(dp * sizeof(sg_host_t));
    t->dcomm = xbt_malloc0(p->ranks * sizeof(coll_comm *));
    for (size_t r = 0; r < p->ranks; r++) {
      for (size_t j = 0; j < dp; j++)
        g[j] = cfg->hosts[r + j * p->ranks];
      t->dcomm[r] = coll_comm_create("data", g, dp, &o);
      xbt_assert(t->dcomm[r] != NULL, "tensor: could not make a data-parallel communicator");
    }
    xbt_free(g);
    dp_hbm(t);
  }
  if (cfg->numerics) {
    t->w = xbt_malloc0(p->layers * sizeof(gsl_vector *));
    for (size_t l = 0; l < p->layers; l++) {
      gsl_rng *r = rng_create(cfg->seed, RNG_ROLE_INIT, (int)l);
      t->w[l] = gsl_vector_alloc(transformer_n_params(d.h));
      transformer_init_params(d.h, r, t->w[l]);
      gsl_rng_free(r);
    }
  }
  t->ranks = xbt_malloc0(t->n_ranks * sizeof(rank));
  tensor_host_shape hs = tensor_host_shape_of(t);
  t->host_plan = tensor_host_plan_create(cfg->framework, &hs);
  for (size_t i = 0; i < t->n_ranks; i++)
    deploy_rank(t, i);
  return t;
}

void tensor_free(tensor *t)
{
  if (t == NULL)
    return;
  for (size_t i = 0; i < t->n_ranks; i++) {
    rank *rk = &t->ranks[i];
    for (size_t l = 0; rk->parts && l < t->p->layers; l++) {
      transformer_part_free(rk->parts[l]);
      gsl_vector_free(rk->gacc[l]);
    }
    for (size_t l = 0; rk->act && l <= t->p->layers; l++)
      gsl_matrix_free(rk->act[l]);
    if (rk->parts) {
      gsl_matrix_free(rk->dcur);
      gsl_matrix_free(rk->dnext);
      gsl_vector_free(rk->gtmp);
    }
    xbt_free(rk->parts);
    xbt_free(rk->act);
    xbt_free(rk->gacc);
    if (t->b_elems) {
      sg_sem_destroy(rk->ready);
      sg_sem_destroy(rk->reduced);
    }
    tensor_host_free(rk->host);
  }
  tensor_host_plan_free(t->host_plan);
  xbt_free(t->b_elems);
  xbt_free(t->b_last);
  for (size_t l = 0; t->w && l < t->p->layers; l++)
    gsl_vector_free(t->w[l]);
  xbt_free(t->w);
  xbt_free(t->ranks);
  for (size_t j = 0; j < dp_of(t->p); j++)
    coll_comm_free(t->tcomm[j]);
  for (size_t r = 0; t->dcomm && r < t->p->ranks; r++)
    coll_comm_free(t->dcomm[r]);
  xbt_free(t->tcomm);
  xbt_free(t->dcomm);
  xbt_free(t);
}

static double max_abs(const double *x, size_t n)
{
  double m = 0;
  for (size_t i = 0; i < n; i++)
    m = fabs(x[i]) > m ? fabs(x[i]) : m;
  return m;
}

static double max_diff(const double *got, const double *ref, size_t n)
{
  double e = 0;
  for (size_t i = 0; i < n; i++)
    e = fabs(got[i] - ref[i]) > e ? fabs(got[i] - ref[i]) : e;
  return e;
}

/* max |got - ref| / max |ref| */
static double rel_error(const double *got, const double *ref, size_t n)
{
  return max_diff(got, ref, n) / max_abs(ref, n);
}

/* The serial stack on the last step's microbatches against what the ranks hold: each
 * rank's rows of the last output and input gradient, and every layer's combined gradient. */
static double check(const tensor *t)
{
  const tensor_params *p = t->p;
  size_t n = t->n, h = t->d.h, L = p->layers, np = transformer_n_params(h);
  gsl_matrix **X = xbt_malloc((L + 1) * sizeof(gsl_matrix *));
  for (size_t l = 0; l <= L; l++)
    X[l] = gsl_matrix_alloc(n, h);
  gsl_matrix *dZ = gsl_matrix_alloc(n, h), *dX = gsl_matrix_alloc(n, h);
  gsl_vector *g = gsl_vector_alloc(np), *comb = gsl_vector_alloc(np);
  gsl_vector **gref = xbt_malloc(L * sizeof(gsl_vector *));
  for (size_t l = 0; l < L; l++)
    gref[l] = gsl_vector_calloc(np);
  for (long k = 0; k < p->microbatches; k++) {
    microbatch_matrix(t, k, 0, 0, X[0]);
    microbatch_matrix(t, k, 1, 0, dZ);
    for (size_t l = 0; l < L; l++)
      xbt_assert(transformer_layer_forward(&t->d, t->w[l], X[l], X[l + 1]) == 0, "tensor: serial forward");
    for (size_t l = L; l-- > 0;) {
      xbt_assert(transformer_layer_backward(&t->d, t->w[l], X[l], dZ, dX, g) == 0, "tensor: serial backward");
      gsl_vector_add(gref[l], g);
      gsl_matrix_memcpy(dZ, dX);
    }
  }
  /* a rank's rows are one contiguous block in both (h columns, no padding) */
  double err = 0, sz = max_abs(X[L]->data, n * h), sd = max_abs(dZ->data, n * h);
  for (size_t i = 0; i < p->ranks; i++) {
    const rank *rk = &t->ranks[i];
    size_t row0, rows;
    transformer_part_rows(rk->parts[0], &row0, &rows);
    err = fmax(err, max_diff(rk->act[L]->data, gsl_matrix_const_ptr(X[L], row0, 0), rows * h) / sz);
    err = fmax(err, max_diff(rk->dcur->data, gsl_matrix_const_ptr(dZ, row0, 0), rows * h) / sd);
  }
  const gsl_vector **parts = xbt_malloc(p->ranks * sizeof(gsl_vector *));
  for (size_t l = 0; l < L; l++) {
    for (size_t i = 0; i < p->ranks; i++)
      parts[i] = t->ranks[i].gacc[l];
    transformer_grad_combine(h, p->ranks, p->seqpar, (const gsl_vector *const *)parts, comb);
    err = fmax(err, rel_error(comb->data, gref[l]->data, np));
    gsl_vector_free(gref[l]);
  }
  xbt_free(parts);
  xbt_free(gref);
  for (size_t l = 0; l <= L; l++)
    gsl_matrix_free(X[l]);
  xbt_free(X);
  gsl_matrix_free(dZ);
  gsl_matrix_free(dX);
  gsl_vector_free(g);
  gsl_vector_free(comb);
  return err;
}

void tensor_result_get(const tensor *t, tensor_result *r)
{
  memset(r, 0, sizeof(*r));
  for (size_t i = 0; i < t->n_ranks; i++) {
    r->time_s = fmax(r->time_s, fmax(t->ranks[i].end, tensor_host_end(t->ranks[i].host)));
    r->dp_allreduce_s = fmax(r->dp_allreduce_s, t->ranks[i].dp_s);
  }
  r->step_s = r->time_s / (double)t->p->steps;
  r->model_flops = tensor_microbatch_flops(t->p) * (double)t->p->microbatches * (double)t->p->steps *
                   (double)dp_of(t->p);
  r->tflops_per_gpu = r->time_s > 0 ? r->model_flops / r->time_s / (double)t->n_ranks / 1e12 : 0;
  r->dp_elements = t->dcomm ? (double)t->dp_elems : 0;
  r->dp_buckets = t->nb;
  r->numeric = t->cfg->numerics;
  if (r->numeric)
    r->max_rel_error = check(t);
}

void tensor_run_deploy(void *state, const run_config *cfg, metrics *m)
{
  tensor_run *r = state;
  r->t = tensor_deploy(cfg, r->p, m);
  xbt_assert(r->t, "tensor_deploy refused a configuration the scenario checked");
}

void tensor_run_free(void *state)
{
  tensor_run *r = state;
  tensor_free(r->t);
  xbt_free(r);
}

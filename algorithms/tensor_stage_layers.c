/* tensor_stage_layers.c - one tensor rank's pass over its GPT layers, Megatron-LM's split
 * (Shoeybi et al. 2019, Fig. 3 and 4): per layer forward attention, g, MLP, g; backward MLP,
 * f', attention, f' (2 allreduces each way, PTD-P's 8bsh(t-1)/t elements per layer and
 * device, Narayanan et al. 2021), reduce-scatters and allgathers with sequence parallelism,
 * the vocabulary-parallel embedding and logits around the stack, and the fused passes of
 * tensor.fuse_layers. Timing from models/transformer.h's phases; with numerics the same
 * calls carry the real buffers. Used by the tensor algorithm (tensor.c) and the
 * tensor-parallel stage (tensor_stage.c); the state is tensor_stage_impl.h's. */
#include <stddef.h>
#include <simgrid/exec.h>
#include <xbt/asserts.h>

#include "algorithms/account.h"
#include "algorithms/collectives.h"
#include "algorithms/compute.h"
#include "algorithms/tensor_host.h"
#include "algorithms/tensor_stage_impl.h"
#include "models/gpt.h"
#include "models/transformer.h"

/* What a rank's GPU is, for the kernel model (compute_gpu); NULL: flops at the flat rate. */
static const gemm_device *gpu_of(const rank *rk) { return rk->has_gpu ? &rk->gpu : NULL; }

static double phase_collectives(const tensor *t) { return (double)tensor_phase_collectives(t); }

/* A layer phase: the rank's GEMMs (models/transformer.h), its memory-bound kernels, and
 * the launch of the collectives it ends at, as one execution. On a GPU its seconds are the
 * same for every layer and microbatch of the rank, worked out once (tensor_rank_gpu_times). */
static compute_work phase_work(const tensor *t, transformer_phase ph, gemm_shape *g)
{
  const tensor_params *p = t->p;
  transformer_kernels k = (transformer_kernels)p->kernels;
  return (compute_work){g, transformer_phase_gemms(&t->d, p->ranks, ph, g),
                        transformer_phase_mem_elems(&t->d, k, p->ranks, p->seqpar, ph) * (double)t->cfg->elem_bytes,
                        (double)transformer_phase_kernels(k, ph) + phase_collectives(t)};
}

void tensor_rank_gpu_times(rank *rk)
{
  const tensor *t = rk->tp;
  for (int ph = 0; ph < 4; ph++) {
    gemm_shape g[TRANSFORMER_MAX_GEMMS], w;
    compute_work pw = phase_work(t, (transformer_phase)ph, g);
    rk->phase_s[ph] = compute_work_seconds(t->cfg, &rk->gpu, &pw);
    compute_work ww = {&w, transformer_wgrad_gemm(&t->d, t->p->ranks, (transformer_phase)ph, &w), 0, 0};
    rk->wgrad_s[ph] = ww.n_gemms ? compute_work_seconds(t->cfg, &rk->gpu, &ww) : 0;
  }
}

tensor_host_shape tensor_host_shape_of(const tensor *t)
{
  const tensor_params *p = t->p;
  tensor_host_shape s = {p->layers, p->ranks, p->hidden, p->seq, p->vocab, p->microbatches, p->recompute,
                         p->dp > 1 && !p->dp_overlap, p->rng_pinned, {0}, (unsigned)tensor_phase_collectives(t)};
  for (int ph = 0; ph < 4; ph++) {
    gemm_shape g[TRANSFORMER_MAX_GEMMS];
    compute_work pw = phase_work(t, (transformer_phase)ph, g);
    s.launches[ph] = (unsigned)(pw.n_gemms + (size_t)pw.kernels);
  }
  return s;
}

double tensor_backward_mem_share(const tensor *t, const gemm_device *gpu)
{
  double mem = 0, all = 0;
  for (int ph = t->p->recompute ? 0 : 2; ph < 4; ph++) {
    gemm_shape g[TRANSFORMER_MAX_GEMMS], w;
    compute_work pw = phase_work(t, (transformer_phase)ph, g), only = {NULL, 0, pw.mem_bytes, 0};
    compute_work ww = {&w, transformer_wgrad_gemm(&t->d, t->p->ranks, (transformer_phase)ph, &w), 0, 0};
    mem += compute_work_seconds(t->cfg, gpu, &only);
    all += compute_work_seconds(t->cfg, gpu, &pw) + (ww.n_gemms ? compute_work_seconds(t->cfg, gpu, &ww) : 0);
  }
  return all > 0 ? mem / all : 0;
}

/* A layer phase, as the rank's thread launches it (tensor_host.h; at once without one). */
static void compute_phase(rank *rk, transformer_phase ph)
{
  static const tensor_host_tag tags[] = {TH_FWD_ATTN, TH_FWD_MLP, TH_BWD_MLP, TH_BWD_ATTN};
  if (rk->has_gpu) {
    tensor_host_exec(rk->host, tags[ph], compute_gpu_amount(rk->tp->cfg, rk->phase_s[ph]));
    return;
  }
  gemm_shape g[TRANSFORMER_MAX_GEMMS];
  compute_work w = phase_work(rk->tp, ph, g);
  tensor_host_exec(rk->host, tags[ph], compute_work_amount(rk->tp->cfg, NULL, &w));
}

/* One GEMM and `launches` more kernel launches (the collectives after it). */
static void gemm_phase(rank *rk, tensor_host_tag tag, gemm_shape g, double launches)
{
  compute_work w = {&g, 1, 0, launches};
  tensor_host_exec(rk->host, tag, compute_work_amount(rk->tp->cfg, gpu_of(rk), &w));
}

static double *buf(rank *rk, size_t l, transformer_buf which)
{
  return rk->parts ? transformer_part_buf(rk->parts[l], which) : NULL;
}

/* The sum over the group of an n x h partial result b (NULL: timing only). */
static void reduce_rows(rank *rk, double *b)
{
  tensor *t = rk->tp;
  if (t->p->seqpar)
    coll_reduce_scatter(rk->tc, rk->me, b, t->n * t->d.h);
  else
    coll_allreduce(rk->tc, rk->me, b, t->n * t->d.h, (coll_algo)t->p->algo);
}

/* g forward, f backward: the sum over the group of layer l's partial n x h result. */
static void reduce_partial(rank *rk, size_t l) { reduce_rows(rk, buf(rk, l, TRANSFORMER_RED)); }

/* Sequence parallelism: every rank's rows of an n x h buffer onto every rank. */
static void gather_rows(rank *rk, size_t l, transformer_buf which)
{
  tensor *t = rk->tp;
  if (t->p->seqpar)
    coll_allgather(rk->tc, rk->me, buf(rk, l, which), t->n * t->d.h);
}

/* f' of the n x h gradient b concurrent with (async) or followed by the weight-gradient GEMM
 * (its device seconds on a GPU, gpu_s, else the GEMM at the flat rate). */
static void reduce_rows_with(rank *rk, double *b, gemm_shape wgrad, double gpu_s)
{
  tensor *t = rk->tp;
  compute_work w = {&wgrad, 1, 0, 0};
  double amount = rk->has_gpu ? compute_gpu_amount(t->cfg, gpu_s) : compute_work_amount(t->cfg, NULL, &w);
  if (!t->p->async_grad) {
    reduce_rows(rk, b);
    tensor_host_exec(rk->host, TH_WGRAD, amount);
    return;
  }
  sg_exec_t e = tensor_host_exec_async(rk->host, TH_WGRAD, amount);
  reduce_rows(rk, b);
  account_exec_wait(e);
}

static void reduce_grad_with(rank *rk, size_t l, transformer_phase ph)
{
  gemm_shape g;
  xbt_assert(transformer_wgrad_gemm(&rk->tp->d, rk->tp->p->ranks, ph, &g) == 1, "tensor: no weight gradient");
  reduce_rows_with(rk, buf(rk, l, TRANSFORMER_RED), g, rk->wgrad_s[ph]);
}

static gemm_shape logits_gemm(const tensor *t, int which) { return transformer_logits_gemm(&t->d, t->p->ranks, t->p->vocab, which); }

/* Vocabulary-parallel embedding (Shoeybi et al. sec. 3: "the input embedding ... requires
 * an all-reduce"): each rank's partial lookup of its V/t rows (a kernel, and the launch of
 * its g on a GPU), summed (g); with numerics, the position embedding is then added to the
 * rank's rows of the sum. */
static void forward_embedding(rank *rk)
{
  stage_num *sn = rk->sn;
  if (rk->has_gpu || rk->host) { /* without a GPU (flat) the lookup's launch costs nothing */
    compute_work w = {NULL, 0, 0, 1 + phase_collectives(rk->tp)};
    tensor_host_exec(rk->host, TH_EMBED, rk->has_gpu ? compute_work_amount(rk->tp->cfg, gpu_of(rk), &w) : 0);
  }
  if (sn)
    gpt_embed_lookup(&sn->g, rk->tp->p->ranks, rk->me, sn->E, rk->tp->d.b, sn->seqs, sn->emb);
  reduce_rows(rk, sn ? sn->emb->data : NULL);
  if (sn) {
    gsl_matrix_view mine = gsl_matrix_submatrix(sn->emb, sn->row0, 0, sn->rows, rk->tp->d.h);
    gsl_matrix_memcpy(rk->act[0], &mine.matrix);
    gpt_embed_positions(&sn->g, sn->P, rk->tp->d.b, sn->row0, rk->act[0]);
  }
}

/* Logits and the fused cross-entropy (Megatron-LM's vocab-parallel one): 2bshV/t flops and
 * three allreduces of one value per token (with numerics: the shift, the target's logit, the
 * sum of exponentials; models/gpt.h). The loss's kernels take no simulated time (no flops
 * counted for them, as in PTD-P's formula). */
static void forward_logits(rank *rk)
{
  tensor *t = rk->tp;
  stage_num *sn = rk->sn;
  gpt_head *hd = sn ? sn->cur : NULL;
  if (hd)
    gpt_head_norm(hd, sn->lnf, sn->lnf + t->d.h, rk->act[t->p->layers]);
  if (t->p->seqpar)
    coll_allgather(rk->tc, rk->me, hd ? gpt_head_x(hd) : NULL, t->n * t->d.h);
  gemm_phase(rk, TH_LOGITS_F, logits_gemm(t, 0), t->p->ranks > 1 ? 3 : 0);
  for (int k = 0; k < 3; k++) {
    if (hd && k == 0)
      gpt_head_logits(hd, sn->E);
    else if (hd && k == 1)
      gpt_head_targets(hd, sn->seqs);
    else if (hd)
      gpt_head_sumexp(hd);
    coll_allreduce(rk->tc, rk->me, hd ? gpt_head_red(hd) : NULL, t->n, (coll_algo)t->p->algo);
  }
  if (hd)
    sn->loss += gpt_head_loss(hd);
}

static void backward_logits(rank *rk)
{
  tensor *t = rk->tp;
  stage_num *sn = rk->sn;
  gpt_head *hd = sn ? sn->cur : NULL;
  gemm_phase(rk, TH_LOGITS_B, logits_gemm(t, 1), phase_collectives(t));
  if (hd)
    gpt_head_backward(hd, sn->E, sn->dE);
  gemm_shape wg = logits_gemm(t, 2);
  compute_work w = {&wg, 1, 0, 0};
  reduce_rows_with(rk, hd ? gpt_head_dx(hd) : NULL, wg, rk->has_gpu ? compute_work_seconds(t->cfg, &rk->gpu, &w) : 0);
  if (hd)
    gpt_head_norm_backward(hd, sn->lnf, sn->dlnf, sn->dlnf + t->d.h, rk->dcur);
}

/* Numerics only: the lookup's backward needs the gradient of every row; with sequence
 * parallelism the rank holds its own, so the group allgathers them first (the backward of
 * the embedding's reduce-scatter; timing-only runs do not send it). */
static void backward_embedding(rank *rk)
{
  tensor *t = rk->tp;
  stage_num *sn = rk->sn;
  const gsl_matrix *dx = rk->dcur;
  if (t->p->seqpar) {
    gsl_matrix_view mine = gsl_matrix_submatrix(sn->emb, sn->row0, 0, sn->rows, t->d.h);
    gsl_matrix_memcpy(&mine.matrix, rk->dcur);
    coll_allgather(rk->tc, rk->me, sn->emb->data, t->n * t->d.h);
    dx = sn->emb;
  }
  gpt_embed_backward(&sn->g, t->p->ranks, rk->me, t->d.b, sn->seqs, dx, sn->dE, sn->dP);
}

/* A layer's forward, or (recompute) its recomputation before its backward; the RNG state
 * copies of the rank's thread around its attention (tensor_host.h). */
static void forward_layer(rank *rk, size_t l, int recompute)
{
  tensor *t = rk->tp;
  const gsl_vector *w = t->w ? t->w[l] : NULL;
  account_label_push("forward layer %zu", l);
  tensor_host_sync(rk->host, recompute ? TH_RNG_REC : TH_RNG_FWD);
  if (rk->parts)
    transformer_fwd_ln1(rk->parts[l], w, rk->act[l]);
  gather_rows(rk, l, TRANSFORMER_XN);
  compute_phase(rk, TRANSFORMER_FWD_ATTN);
  if (rk->parts)
    transformer_fwd_attn(rk->parts[l], w);
  reduce_partial(rk, l);
  tensor_host_sync(rk->host, TH_RNG_MID);
  if (rk->parts)
    transformer_fwd_ln2(rk->parts[l], w);
  gather_rows(rk, l, TRANSFORMER_YN);
  compute_phase(rk, TRANSFORMER_FWD_MLP);
  if (rk->parts)
    transformer_fwd_mlp(rk->parts[l], w);
  reduce_partial(rk, l);
  if (rk->parts)
    transformer_fwd_out(rk->parts[l], w, rk->act[l + 1]);
  if (recompute)
    tensor_host_sync(rk->host, TH_RNG_REC_END);
  account_label_pop();
}

static void backward_layer(rank *rk, size_t l)
{
  tensor *t = rk->tp;
  const gsl_vector *w = t->w ? t->w[l] : NULL;
  if (rk->parts) {
    gsl_vector_set_zero(rk->gtmp);
    transformer_bwd_out(rk->parts[l], rk->dcur, rk->gtmp);
  }
  gather_rows(rk, l, TRANSFORMER_DFULL);
  compute_phase(rk, TRANSFORMER_BWD_MLP);
  if (rk->parts)
    transformer_bwd_mlp(rk->parts[l], w, rk->gtmp);
  reduce_grad_with(rk, l, TRANSFORMER_BWD_MLP);
  if (rk->parts)
    transformer_bwd_ln2(rk->parts[l], w, rk->gtmp);
  gather_rows(rk, l, TRANSFORMER_DFULL);
  compute_phase(rk, TRANSFORMER_BWD_ATTN);
  if (rk->parts)
    transformer_bwd_attn(rk->parts[l], w, rk->gtmp);
  reduce_grad_with(rk, l, TRANSFORMER_BWD_ATTN);
  if (rk->parts) {
    transformer_bwd_ln1(rk->parts[l], w, rk->gtmp, rk->dnext);
    gsl_vector_add(rk->gacc[l], rk->gtmp);
    gsl_matrix *s = rk->dcur;
    rk->dcur = rk->dnext;
    rk->dnext = s;
  }
}

/* ---- fused passes (tensor.fuse_layers, timing only) -------------------------------- *
 *
 * Every layer of a rank's stack has the same shapes, so a microbatch's pass over its L
 * layers is L copies of one layer's phases and collectives. A fused pass runs them as one
 * execution of all the compute that waits for nothing, then one coll_batch of the
 * collectives (one round in run.collectives = rounds), and, with async_grad_allreduce, each
 * block's L weight-gradient GEMMs as one execution concurrent with one batch of the L
 * input-gradient reductions they overlap, block by block. On a tensor group whose
 * collectives meet no other traffic that is the layer-by-layer time, to rounding: the
 * executions add up, and a batch of L rounds takes L rounds' latencies and bytes when every
 * ring pair has the same route latency (one NVSwitch, one switch). What it does not keep
 * is where in the pass the tensor group's transfers fall, so a flow that shares a link with
 * them (a pipeline boundary's, a data-parallel bucket's) meets them at other times
 * (algorithms/README.md, Fused layers, has the error). The last microbatch's backward of a
 * step with dp_overlap runs layer by layer: its buckets leave as their layers finish. */

/* A fused pass's executions: each item a phase, or WGRAD | phase its weight-gradient GEMM. */
#define WGRAD 8

static sg_exec_t fused_exec(rank *rk, const int *items, size_t n, double reps, int async)
{
  const tensor *t = rk->tp;
  if (rk->has_gpu) {
    double s = 0;
    for (size_t i = 0; i < n; i++)
      s += items[i] & WGRAD ? rk->wgrad_s[items[i] & ~WGRAD] : rk->phase_s[items[i]];
    if (async)
      return compute_gpu_execute_async(t->cfg, reps * s);
    compute_gpu_execute(t->cfg, reps * s);
    return NULL;
  }
  gemm_shape g[6][TRANSFORMER_MAX_GEMMS];
  compute_work w[6];
  xbt_assert(n <= 6, "tensor: %zu phases in a fused execution", n);
  for (size_t i = 0; i < n; i++) {
    transformer_phase ph = (transformer_phase)(items[i] & ~WGRAD);
    if (items[i] & WGRAD)
      w[i] = (compute_work){g[i], transformer_wgrad_gemm(&t->d, t->p->ranks, ph, g[i]), 0, 0};
    else
      w[i] = phase_work(t, ph, g[i]);
  }
  if (async)
    return compute_works_execute_async(t->cfg, NULL, w, n, reps);
  compute_works_execute(t->cfg, NULL, w, n, reps);
  return NULL;
}

/* The collectives of one layer's forward (forward_layer), appended to ops. */
static size_t forward_ops(const tensor *t, coll_op *ops)
{
  if (!t->p->seqpar) {
    ops[0] = ops[1] = COLL_ALLREDUCE;
    return 2;
  }
  ops[0] = ops[2] = COLL_ALLGATHER;
  ops[1] = ops[3] = COLL_REDUCE_SCATTER;
  return 4;
}

static void fused_batch(rank *rk, const coll_op *ops, size_t n)
{
  const tensor *t = rk->tp;
  coll_batch(rk->tc, rk->me, ops, n, t->p->layers, t->n * t->d.h, (coll_algo)t->p->algo);
}

static int fused(const rank *rk)
{
  return rk->tp->p->fuse && rk->parts == NULL && rk->sn == NULL && !rk->handing && rk->hook == NULL && rk->host == NULL;
}

static void hook(rank *rk, tensor_stage_event ev, size_t l)
{
  if (rk->hook)
    rk->hook(rk->hook_ctx, ev, l);
}

static void forward_fused(rank *rk)
{
  static const int items[] = {TRANSFORMER_FWD_ATTN, TRANSFORMER_FWD_MLP};
  coll_op ops[4];
  fused_exec(rk, items, 2, (double)rk->tp->p->layers, 0);
  fused_batch(rk, ops, forward_ops(rk->tp, ops));
}

/* Each layer's recomputed forward (recompute), its backward MLP and attention, and (without
 * async_grad_allreduce) their weight gradients, then the collectives none of them overlaps;
 * with it, then, the MLP blocks' L weight-gradient GEMMs concurrent with their L input-
 * gradient reductions, and the attention blocks' likewise (two overlaps, so that
 * L max(w, c) of each block is what they take). */
static void backward_fused(rank *rk)
{
  const tensor_params *p = rk->tp->p;
  double L = (double)p->layers;
  int items[6];
  coll_op ops[8], red = p->seqpar ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE;
  size_t ni = 0, no = 0;
  if (p->recompute) {
    items[ni++] = TRANSFORMER_FWD_ATTN;
    items[ni++] = TRANSFORMER_FWD_MLP;
    no = forward_ops(rk->tp, ops);
  }
  items[ni++] = TRANSFORMER_BWD_MLP;
  items[ni++] = TRANSFORMER_BWD_ATTN;
  if (p->seqpar) { /* the gathers before each block's backward */
    ops[no++] = COLL_ALLGATHER;
    ops[no++] = COLL_ALLGATHER;
  }
  if (!p->async_grad) {
    items[ni++] = WGRAD | TRANSFORMER_BWD_MLP;
    items[ni++] = WGRAD | TRANSFORMER_BWD_ATTN;
    ops[no++] = red;
    ops[no++] = red;
  }
  fused_exec(rk, items, ni, L, 0);
  fused_batch(rk, ops, no);
  if (!p->async_grad)
    return;
  static const int wgrads[] = {WGRAD | TRANSFORMER_BWD_MLP, WGRAD | TRANSFORMER_BWD_ATTN};
  for (int k = 0; k < 2; k++) { /* each block's L weight gradients over its L reductions */
    sg_exec_t e = fused_exec(rk, &wgrads[k], 1, L, 1);
    fused_batch(rk, &red, 1);
    account_exec_wait(e);
  }
}

/* ---- a microbatch through the rank's layers (tensor_stage_impl.h) ----------------------- */

void tensor_rank_forward(rank *rk, int first, int last)
{
  const tensor_params *p = rk->tp->p;
  if (first && p->vocab) {
    account_label_push("forward embedding");
    forward_embedding(rk);
    account_label_pop();
  }
  if (fused(rk)) {
    account_label_push("forward %zu layers fused", p->layers);
    forward_fused(rk);
    account_label_pop();
  } else
    for (size_t l = 0; l < p->layers; l++) {
      hook(rk, TENSOR_STAGE_FORWARD, l);
      forward_layer(rk, l, 0);
    }
  if (last && p->vocab) {
    account_label_push("forward logits");
    forward_logits(rk);
    account_label_pop();
  }
}

void tensor_rank_backward(rank *rk, int first, int last)
{
  const tensor_params *p = rk->tp->p;
  if (last && p->vocab) {
    account_label_push("backward logits");
    backward_logits(rk);
    account_label_pop();
  }
  if (fused(rk)) {
    account_label_push("backward %zu layers fused", p->layers);
    backward_fused(rk);
    account_label_pop();
  } else
    for (size_t l = p->layers; l-- > 0;) {
      hook(rk, TENSOR_STAGE_BACKWARD, l);
      if (p->recompute) {
        account_label_push("recompute");
        forward_layer(rk, l, 1); /* the same values again: the run is deterministic */
        account_label_pop();
      }
      account_label_push("backward layer %zu", l);
      backward_layer(rk, l);
      account_label_pop();
      if (rk->layer_done)
        rk->layer_done(rk); /* dp_overlap: the layer's gradients are final */
      hook(rk, TENSOR_STAGE_DONE, l);
    }
  if (first && p->vocab && rk->sn) {
    account_label_push("backward embedding");
    backward_embedding(rk);
    account_label_pop();
  }
}

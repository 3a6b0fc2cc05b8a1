/* tensor.c - Megatron tensor parallelism of a GPT layer stack over t GPU hosts.
 *
 * Each rank runs, for every microbatch of every step, the layers forward then backward,
 * as Megatron-LM (Shoeybi et al. 2019, Fig. 3 and 4):
 *   forward layer:  attention (Q, K, V column-parallel by head, Wo row-parallel);
 *                   g = allreduce of b*s*h; MLP (W1 column-parallel, W2 row-parallel); g
 *   backward layer: MLP; f' = allreduce of the input gradient; attention; f'
 * so 2 allreduces forward and 2 backward per layer (PTD-P: 8bsh(t-1)/t elements per layer
 * per device per microbatch). With sequence parallelism, each g is a reduce-scatter and
 * each LayerNorm input is allgathered (forward; and the incoming gradient backward).
 * Compute is each rank's GEMMs (models/transformer.h's transformer_phase_gemms, the rank's
 * 1/t of the layer's flops) and memory-bound kernels, one execution per phase between the
 * collectives: forward attention (8bsh^2 + 4bs^2h)/t, MLP 16bsh^2/t; backward MLP
 * 24bsh^2/t before f' and its W1 weight gradient 8bsh^2/t, attention (10bsh^2 + 8bs^2h)/t
 * before f' and its Q, K, V weight gradient 6bsh^2/t: 3 x (24bsh^2 + 4bs^2h) in all. On a
 * GPU host (compute_gpu) each GEMM takes gemm_time of its shape, and every kernel, the
 * collectives' too, a launch; elsewhere the flops run at the flat efficiency. With
 * async_grad_allreduce, f' runs while the weight-gradient GEMM executes (Megatron's
 * asynchronous input-gradient allreduce of a column-parallel layer). With recomputation
 * (activation checkpointing of every layer, PTD-P sec. 3.5), each layer's forward, its two
 * reductions included, runs again just before its backward.
 *
 * With a vocabulary V, each microbatch also goes through Megatron's
 * vocabulary-parallel input embedding (a lookup of the rank's V/t rows, then g = an
 * allreduce of b*s*h: Shoeybi et al. sec. 3, "the input embedding ... requires an
 * all-reduce") and the tied logits layer with the fused parallel cross-entropy: 2bshV/t
 * flops forward and three allreduces of b*s elements (the maximum logit, the target logit
 * and the sum of exponentials: Megatron-LM's vocab-parallel cross-entropy), backward
 * 2bshV/t for the input gradient, then its f' (an allreduce of b*s*h) concurrent with the
 * 2bshV/t weight gradient under async_grad_allreduce. The loss's and the optimizer's
 * kernels take no simulated time (no flops counted for them, as in PTD-P's formula); the
 * lookup is one kernel launch on a GPU. A tensor run times them only; a numeric pipeline
 * stage (tensor_stage_numerics, models/gpt.h) computes them between the same collectives,
 * with the real buffers.
 *
 * Data parallelism (tensor.data_parallel = d): d replicas of the tensor group, replica j on
 * hosts [j t, (j + 1) t) (t consecutive hosts: inside a node for t <= GPUs per node), and
 * one data-parallel communicator per tensor rank r over hosts r, r + t, ..., r + (d-1) t
 * (Megatron: DP groups are the GPUs at the same position in each MP group). After the last
 * microbatch's backward of a step, every rank allreduces its share of the gradients of
 * every layer, (12h^2 + 7h)/t split entries plus 6h replicated ones (LayerNorms, bo, b2)
 * per layer, as one ring allreduce (one bucket, not overlapped with backward); the step
 * ends when it is done. Timing only: the scenario refuses numerics with d > 1 (the 3D
 * pipeline's numeric stages do their data-parallel sum in pipeline.c).
 *
 * With dp_overlap (PyTorch DDP, Li et al. VLDB 2020 sec. 3.2.3, which Megatron-LM 2019's
 * README credits with 60% -> 74% scaling at 512 GPUs), the gradients are bucketed as
 * dataparallel.c does: during the last microbatch's backward of a step, as each layer's
 * backward ends (the last layer first) its entries join the current bucket, and a bucket
 * whose wire bytes reach bucket_bytes is handed to the rank's communicator actor (same
 * host), which runs the buckets' ring allreduces on the rank's data-parallel communicator
 * one after the other, in bucket order, while backward goes on. The embedding's entries
 * come last (its backward is the last thing) and the final, partial bucket goes when
 * backward ends; the step ends when every bucket is reduced. */
#include "algorithms/tensor.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <simgrid/actor.h>
#include <simgrid/host.h>
#include <simgrid/engine.h>
#include <simgrid/exec.h>
#include <simgrid/semaphore.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/compute.h"
#include "algorithms/account.h"
#include "algorithms/collectives.h"
#include "models/gpt.h"
#include "models/rng.h"
#include "models/transformer.h"

typedef struct rank {
  struct tensor *tp;
  size_t me;           /* tensor rank */
  size_t rep;          /* data-parallel replica */
  coll_comm *tc;       /* this replica's tensor communicator */
  double dp_s;         /* longest data-parallel allreduce of a step (dp_overlap: first bucket's
                          start to last bucket's end) */
  sg_sem_t ready;      /* dp_overlap: released once per bucket backward has filled */
  sg_sem_t reduced;    /* dp_overlap: released once per step, when every bucket is reduced */
  int handing;         /* dp_overlap: 1 during the last microbatch's backward of a step */
  size_t unit;         /* dp_overlap: gradient units (tensor_dp_buckets) produced this step */
  size_t bucket;       /* dp_overlap: buckets handed over this step */
  transformer_part **parts;   /* per layer (numeric runs) */
  gsl_matrix **act;   /* act[l]: layer l's input rows, act[L]: the output (numeric) */
  gsl_matrix *dcur, *dnext; /* gradient w.r.t. a layer's output / input rows (numeric) */
  gsl_vector *gtmp;   /* one layer's gradient for one microbatch */
  gsl_vector **gacc;  /* per layer, summed over the step's microbatches */
  struct stage_num *sn; /* a numeric pipeline stage's embedding, logits and stashes, or NULL */
  double end;
  int has_gpu;         /* the rank's host has a GPU description (compute_gpu) */
  gemm_device gpu;
  double phase_s[4];   /* has_gpu: each phase's device seconds (compute_work_seconds), once */
  double wgrad_s[4];   /* has_gpu: each backward phase's weight-gradient GEMM's */
} rank;

/* A numeric pipeline stage (tensor_stage_numerics): rank me's shard of its layers, of the
 * embedding on the first stage and of the logits on the last, and what each microbatch in
 * flight keeps for its backward. */
typedef struct stage_num {
  gpt_dims g;
  size_t layer0;              /* the stage's first layer in the model */
  size_t m;                   /* microbatches per step: one stash each */
  size_t row0, rows;          /* activation rows the rank holds */
  gsl_vector **w;             /* [L]: transformer.h's layout, NaN outside the rank's entries */
  gsl_matrix ***act;          /* [m][L+1]: each layer's input rows, and the output */
  transformer_part ***parts;  /* [m, or 1 with recomputation][L] */
  gpt_head **head;            /* last: [m] */
  gpt_head *cur;              /* the microbatch's, or NULL */
  const double *seqs;         /* the microbatch's sequences */
  double *E, *dE;             /* first or last: the rank's V/t rows of the token embedding */
  double *P, *dP;             /* first: the position embedding, s x h */
  double *lnf, *dlnf;         /* last: the final LayerNorm's gain and bias, 2h */
  gsl_matrix *emb;            /* first: n x h, the partial lookup; with sequence parallelism,
                                 the input gradient allgathered */
  double loss;                /* last: the microbatch losses since tensor_stage_take_loss */
  transformer_range rep[4], *split; /* a layer's replicated and split ranges (transformer.h) */
  size_t nsplit;
} stage_num;

struct tensor {
  const run_config *cfg;
  const tensor_params *p;
  metrics *m;
  coll_comm **tcomm;   /* per replica */
  coll_comm **dcomm;   /* per tensor rank (d > 1) */
  size_t n_ranks;      /* t x d */
  size_t dp_elems;     /* each rank's data-parallel allreduce, elements */
  size_t nb;           /* data-parallel buckets per step: 1, or tensor_dp_buckets with dp_overlap */
  double *b_elems;     /* dp_overlap: [b] bucket b's elements */
  size_t *b_last;      /* dp_overlap: [b] the unit whose gradients complete bucket b */
  transformer_dims d;
  size_t n;            /* rows: seq x microbatch */
  gsl_vector **w;      /* per layer weights (numeric), read by every rank */
  rank *ranks;
};

static size_t dp_of(const tensor_params *p) { return p->dp > 0 ? p->dp : 1; }

size_t tensor_hosts_needed(const tensor_params *p) { return p->ranks * dp_of(p); }

double tensor_dp_elements(const tensor_params *p)
{
  double h = (double)p->hidden;
  double layers = (double)p->layers * ((12 * h * h + 7 * h) / (double)p->ranks + 6 * h);
  /* the rank's V/t embedding rows (tied with the logits), the replicated position
   * embedding (s x h) and final LayerNorm (2h) */
  double vocab = p->vocab ? (double)p->vocab * h / (double)p->ranks + (double)p->seq * h + 2 * h : 0;
  return layers + vocab;
}

/* Gradient units in backward order: layer L-1 down to layer 0, then the embedding. */
static size_t dp_units(const tensor_params *p) { return p->layers + (p->vocab ? 1 : 0); }

static double unit_elements(const tensor_params *p, size_t u)
{
  double h = (double)p->hidden;
  if (u < p->layers)
    return (12 * h * h + 7 * h) / (double)p->ranks + 6 * h;
  return (double)p->vocab * h / (double)p->ranks + (double)p->seq * h + 2 * h;
}

size_t tensor_dp_buckets(const tensor_params *p, size_t elem_bytes, double *elems, size_t *last)
{
  size_t nb = 0, n = dp_units(p);
  double acc = 0;
  for (size_t u = 0; u < n; u++) {
    acc += unit_elements(p, u);
    if (u == n - 1 || acc * (double)elem_bytes >= p->bucket_bytes) {
      if (elems)
        elems[nb] = acc;
      if (last)
        last[nb] = u;
      nb++;
      acc = 0;
    }
  }
  return nb;
}

double tensor_microbatch_flops(const tensor_params *p)
{
  double logits = 2.0 * (double)p->microbatch * (double)p->seq * (double)p->hidden * (double)p->vocab;
  return (p->recompute ? 4.0 : 3.0) * tensor_layer_flops(p) * (double)p->layers + 3.0 * logits;
}

double tensor_layer_flops(const tensor_params *p)
{
  transformer_dims d = {p->microbatch, p->seq, p->hidden, p->heads};
  return transformer_layer_flops(&d);
}

/* What a rank's GPU is, for the kernel model (compute_gpu); NULL: flops at the flat rate. */
static const gemm_device *gpu_of(const rank *rk) { return rk->has_gpu ? &rk->gpu : NULL; }

/* Kernel launches of the collectives a layer phase ends at: its g or f' and, with sequence
 * parallelism, the allgather before it; none on one rank (Megatron calls no collective). */
static double phase_collectives(const tensor *t) { return t->p->ranks > 1 ? 1.0 + (t->p->seqpar ? 1 : 0) : 0; }

/* A layer phase: the rank's GEMMs (models/transformer.h), its memory-bound kernels, and
 * the launch of the collectives it ends at, as one execution. On a GPU its seconds are the
 * same for every layer and microbatch of the rank: they are worked out once (gpu_times). */
static compute_work phase_work(const tensor *t, transformer_phase ph, gemm_shape *g)
{
  const tensor_params *p = t->p;
  transformer_kernels k = (transformer_kernels)p->kernels;
  return (compute_work){g, transformer_phase_gemms(&t->d, p->ranks, ph, g),
                        transformer_phase_mem_elems(&t->d, k, p->ranks, p->seqpar, ph) * (double)t->cfg->elem_bytes,
                        (double)transformer_phase_kernels(k, ph) + phase_collectives(t)};
}

static void gpu_times(rank *rk)
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

static void compute_phase(rank *rk, transformer_phase ph)
{
  if (rk->has_gpu) {
    compute_gpu_execute(rk->tp->cfg, rk->phase_s[ph]);
    return;
  }
  gemm_shape g[TRANSFORMER_MAX_GEMMS];
  compute_work w = phase_work(rk->tp, ph, g);
  compute_work_execute(rk->tp->cfg, NULL, &w);
}

/* One GEMM and `launches` more kernel launches (the collectives after it). */
static void gemm_phase(rank *rk, gemm_shape g, double launches)
{
  compute_work w = {&g, 1, 0, launches};
  compute_work_execute(rk->tp->cfg, gpu_of(rk), &w);
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
  if (!t->p->async_grad) {
    reduce_rows(rk, b);
    if (rk->has_gpu)
      compute_gpu_execute(t->cfg, gpu_s);
    else
      compute_work_execute(t->cfg, NULL, &w);
    return;
  }
  sg_exec_t e = rk->has_gpu ? compute_gpu_execute_async(t->cfg, gpu_s) : compute_work_execute_async(t->cfg, NULL, &w);
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

/* Vocabulary-parallel embedding: each rank's partial lookup (a kernel, and the launch of
 * its g on a GPU), summed (g); with numerics, the position embedding is then added to the
 * rank's rows of the sum. */
static void forward_embedding(rank *rk)
{
  stage_num *sn = rk->sn;
  if (rk->has_gpu) {
    compute_work w = {NULL, 0, 0, 1 + phase_collectives(rk->tp)};
    compute_work_execute(rk->tp->cfg, gpu_of(rk), &w);
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

/* Logits and the fused cross-entropy: three allreduces of one value per token (with
 * numerics: the shift, the target's logit, the sum of exponentials; models/gpt.h). */
static void forward_logits(rank *rk)
{
  tensor *t = rk->tp;
  stage_num *sn = rk->sn;
  gpt_head *hd = sn ? sn->cur : NULL;
  if (hd)
    gpt_head_norm(hd, sn->lnf, sn->lnf + t->d.h, rk->act[t->p->layers]);
  if (t->p->seqpar)
    coll_allgather(rk->tc, rk->me, hd ? gpt_head_x(hd) : NULL, t->n * t->d.h);
  gemm_phase(rk, logits_gemm(t, 0), t->p->ranks > 1 ? 3 : 0);
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
  gemm_phase(rk, logits_gemm(t, 1), phase_collectives(t));
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

static void forward_layer(rank *rk, size_t l)
{
  tensor *t = rk->tp;
  const gsl_vector *w = t->w ? t->w[l] : NULL;
  if (rk->parts)
    transformer_fwd_ln1(rk->parts[l], w, rk->act[l]);
  gather_rows(rk, l, TRANSFORMER_XN);
  compute_phase(rk, TRANSFORMER_FWD_ATTN);
  if (rk->parts)
    transformer_fwd_attn(rk->parts[l], w);
  reduce_partial(rk, l);
  if (rk->parts)
    transformer_fwd_ln2(rk->parts[l], w);
  gather_rows(rk, l, TRANSFORMER_YN);
  compute_phase(rk, TRANSFORMER_FWD_MLP);
  if (rk->parts)
    transformer_fwd_mlp(rk->parts[l], w);
  reduce_partial(rk, l);
  if (rk->parts)
    transformer_fwd_out(rk->parts[l], w, rk->act[l + 1]);
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

/* One microbatch through the rank's layers: the embedding first when the stack starts the
 * model, the logits last when it ends it (a pipeline stage may hold neither). */
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

static int fused(const rank *rk) { return rk->tp->p->fuse && rk->parts == NULL && rk->sn == NULL && !rk->handing; }

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

static void microbatch_forward(rank *rk, int first, int last)
{
  const tensor_params *p = rk->tp->p;
  if (first && p->vocab)
    forward_embedding(rk);
  if (fused(rk))
    forward_fused(rk);
  else
    for (size_t l = 0; l < p->layers; l++)
      forward_layer(rk, l);
  if (last && p->vocab)
    forward_logits(rk);
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

/* The gradient allreduce of the step: one after backward, or (dp_overlap) the buckets
 * still in flight; their time is communication in the breakdown (run.h). */
static void allreduce_gradients(rank *rk)
{
  tensor *t = rk->tp;
  if (t->dcomm == NULL)
    return;
  if (!t->p->dp_overlap) {
    double t0 = simgrid_get_clock();
    coll_allreduce(t->dcomm[rk->me], rk->rep, NULL, t->dp_elems, COLL_RING);
    rk->dp_s = fmax(rk->dp_s, simgrid_get_clock() - t0);
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

static void microbatch_backward(rank *rk, int first, int last)
{
  const tensor_params *p = rk->tp->p;
  if (last && p->vocab)
    backward_logits(rk);
  if (fused(rk))
    backward_fused(rk);
  else
    for (size_t l = p->layers; l-- > 0;) {
      if (p->recompute)
        forward_layer(rk, l); /* the same values again: the run is deterministic */
      backward_layer(rk, l);
      gradients_ready(rk);
    }
  if (first && p->vocab && rk->sn)
    backward_embedding(rk);
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
    for (long k = 0; k < p->microbatches; k++) {
      load_microbatch(rk, k);
      microbatch_forward(rk, 1, 1);
      if (k == p->microbatches - 1)
        start_handing(rk);
      microbatch_backward(rk, 1, 1);
    }
    allreduce_gradients(rk);
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

static void start_actor(const char *role, size_t i, sg_host_t host, rank *rk, void (*fn)(int, char **))
{
  char name[32];
  snprintf(name, sizeof(name), "%s-%zu", role, i);
  sg_actor_t a = sg_actor_init(name, host);
  sg_actor_set_data(a, rk);
  sg_actor_start(a, fn, 0, NULL);
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
  for (size_t i = 0; i < t->n_ranks; i++) {
    rank *rk = &t->ranks[i];
    rk->tp = t;
    rk->me = i % p->ranks;
    rk->rep = i / p->ranks;
    rk->tc = t->tcomm[rk->rep];
    rk->has_gpu = compute_gpu(cfg, cfg->hosts[i], &rk->gpu);
    if (rk->has_gpu)
      gpu_times(rk);
    if (cfg->numerics)
      rank_init_numerics(t, rk);
    if (t->b_elems) {
      rk->ready = sg_sem_init(0);
      rk->reduced = sg_sem_init(0);
    }
    start_actor("tensor", i, cfg->hosts[i], rk, rank_actor);
    if (t->b_elems)
      start_actor("tensor-dp", i, cfg->hosts[i], rk, communicator_actor);
  }
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
  }
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
    r->time_s = fmax(r->time_s, t->ranks[i].end);
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

/* ---- a tensor-parallel pipeline stage ---------------------------------------------- */

struct tensor_stage {
  tensor t;            /* the shapes and options, with p.layers = the stage's layers */
  tensor_params p;
  rank rk;
  int first, last;
  stage_num sn;        /* numerics (rk.sn points here), else zero */
};

tensor_stage *tensor_stage_create(const run_config *cfg, const tensor_params *p, coll_comm *tc, size_t me,
                                  size_t layers, int first, int last)
{
  transformer_dims d = {p->microbatch, p->seq, p->hidden, p->heads};
  if (tc == NULL || me >= p->ranks || transformer_dims_check(&d) != 0 || p->heads % p->ranks != 0 ||
      (p->seqpar && p->seq % p->ranks != 0) || (p->vocab && p->vocab % p->ranks != 0))
    return NULL;
  tensor_stage *ts = xbt_malloc0(sizeof(*ts));
  ts->p = *p;
  ts->p.layers = layers;
  ts->t.cfg = cfg;
  ts->t.p = &ts->p;
  ts->t.d = d;
  ts->t.n = d.b * d.s;
  ts->rk.tp = &ts->t;
  ts->rk.me = me;
  ts->rk.tc = tc;
  ts->rk.has_gpu = compute_gpu(cfg, coll_comm_host(tc, me), &ts->rk.gpu);
  if (ts->rk.has_gpu)
    gpu_times(&ts->rk);
  ts->first = first;
  ts->last = last;
  return ts;
}

/* The rank's rows [row0, row0 + rows) of an n x h buffer. */
static gsl_matrix_view rows_of(const stage_num *sn, double *buf, size_t h)
{
  return gsl_matrix_view_array(buf + sn->row0 * h, sn->rows, h);
}

int tensor_stage_numerics(tensor_stage *ts, const gpt_dims *g, size_t layer0, long microbatches, const gsl_vector *w)
{
  const tensor_params *p = &ts->p;
  stage_num *sn = &ts->sn;
  rank *rk = &ts->rk;
  size_t L = p->layers, h = p->hidden, t = p->ranks, me = rk->me, m = (size_t)microbatches;
  gpt_layout gl;
  gpt_layout_of(g, &gl);
  if (gpt_dims_check(g) != 0 || g->hidden != h || g->heads != p->heads || g->seq != p->seq || g->vocab != p->vocab ||
      layer0 + L > g->layers || microbatches < 1 || w->size != gl.total || w->stride != 1 || rk->sn != NULL)
    return -1;
  sn->g = *g;
  sn->layer0 = layer0;
  sn->m = m;
  size_t slots = p->recompute ? 1 : m;
  sn->parts = xbt_malloc0(slots * sizeof(transformer_part **));
  for (size_t k = 0; k < slots; k++) {
    sn->parts[k] = xbt_malloc0(L * sizeof(transformer_part *));
    for (size_t l = 0; l < L; l++) {
      sn->parts[k][l] = transformer_part_create(&ts->t.d, t, me, p->seqpar);
      xbt_assert(sn->parts[k][l], "tensor stage: a validated split was refused");
    }
  }
  transformer_part_rows(sn->parts[0][0], &sn->row0, &sn->rows);
  sn->act = xbt_malloc0(m * sizeof(gsl_matrix **));
  for (size_t k = 0; k < m; k++) {
    sn->act[k] = xbt_malloc0((L + 1) * sizeof(gsl_matrix *));
    for (size_t l = 0; l <= L; l++)
      sn->act[k][l] = gsl_matrix_calloc(sn->rows, h);
  }
  transformer_shard_ranges(h, t, me, 1, sn->rep, 4);
  sn->nsplit = transformer_shard_ranges(h, t, me, 0, NULL, 0);
  sn->split = xbt_malloc(sn->nsplit * sizeof(transformer_range));
  transformer_shard_ranges(h, t, me, 0, sn->split, sn->nsplit);
  sn->w = xbt_malloc0(L * sizeof(gsl_vector *));
  rk->gacc = xbt_malloc0(L * sizeof(gsl_vector *));
  for (size_t l = 0; l < L; l++) {
    /* the rank reads only its own entries: any other would spread NaN into every result */
    sn->w[l] = gsl_vector_alloc(gl.layer_size);
    gsl_vector_set_all(sn->w[l], NAN);
    const double *src = w->data + gl.layer0 + (layer0 + l) * gl.layer_size;
    for (size_t k = 0; k < 4; k++)
      memcpy(sn->w[l]->data + sn->rep[k].off, src + sn->rep[k].off, sn->rep[k].len * sizeof(double));
    for (size_t k = 0; k < sn->nsplit; k++)
      memcpy(sn->w[l]->data + sn->split[k].off, src + sn->split[k].off, sn->split[k].len * sizeof(double));
    rk->gacc[l] = gsl_vector_calloc(gl.layer_size);
  }
  ts->t.w = sn->w;
  rk->gtmp = gsl_vector_alloc(gl.layer_size);
  rk->dcur = gsl_matrix_calloc(sn->rows, h);
  rk->dnext = gsl_matrix_calloc(sn->rows, h);
  size_t vl = p->vocab / t;
  if (ts->first || ts->last) {
    sn->E = xbt_malloc(vl * h * sizeof(double));
    memcpy(sn->E, w->data + gl.embed + me * vl * h, vl * h * sizeof(double));
    sn->dE = xbt_malloc0(vl * h * sizeof(double));
  }
  if (ts->first) {
    sn->P = xbt_malloc(p->seq * h * sizeof(double));
    memcpy(sn->P, w->data + gl.pos, p->seq * h * sizeof(double));
    sn->dP = xbt_malloc0(p->seq * h * sizeof(double));
    sn->emb = gsl_matrix_calloc(ts->t.n, h);
  }
  if (ts->last) {
    sn->lnf = xbt_malloc(2 * h * sizeof(double));
    memcpy(sn->lnf, w->data + gl.lnf_g, 2 * h * sizeof(double));
    sn->dlnf = xbt_malloc0(2 * h * sizeof(double));
    sn->head = xbt_malloc0(m * sizeof(gpt_head *));
    for (size_t k = 0; k < m; k++) {
      sn->head[k] = gpt_head_create(g, t, me, p->microbatch, sn->row0, sn->rows);
      xbt_assert(sn->head[k], "tensor stage: the logits do not split");
    }
  }
  rk->sn = sn;
  return 0;
}

/* Microbatch mb's stash becomes the rank's current activations. */
static void stage_use(tensor_stage *ts, long mb, const double *seqs)
{
  stage_num *sn = &ts->sn;
  xbt_assert(mb >= 0 && (size_t)mb < sn->m, "tensor stage: microbatch %ld of %zu", mb, sn->m);
  ts->rk.act = sn->act[mb];
  ts->rk.parts = sn->parts[ts->p.recompute ? 0 : mb];
  sn->cur = sn->head ? sn->head[mb] : NULL;
  sn->seqs = seqs;
}

void tensor_stage_forward(tensor_stage *ts, long mb, const double *seqs, const double *in, double *out)
{
  stage_num *sn = ts->rk.sn;
  size_t h = ts->p.hidden;
  if (sn) {
    stage_use(ts, mb, seqs);
    if (!ts->first) {
      gsl_matrix_view x = rows_of(sn, (double *)in, h);
      gsl_matrix_memcpy(ts->rk.act[0], &x.matrix);
    }
  }
  microbatch_forward(&ts->rk, ts->first, ts->last);
  if (sn && out) {
    gsl_matrix_view z = rows_of(sn, out, h);
    gsl_matrix_memcpy(&z.matrix, ts->rk.act[ts->p.layers]);
  }
}

void tensor_stage_backward(tensor_stage *ts, long mb, const double *seqs, const double *dout, double *din)
{
  stage_num *sn = ts->rk.sn;
  size_t h = ts->p.hidden;
  if (sn) {
    stage_use(ts, mb, seqs);
    if (!ts->last) {
      gsl_matrix_view dz = rows_of(sn, (double *)dout, h);
      gsl_matrix_memcpy(ts->rk.dcur, &dz.matrix);
    }
  }
  microbatch_backward(&ts->rk, ts->first, ts->last);
  if (sn && din) {
    gsl_matrix_view dx = rows_of(sn, din, h);
    gsl_matrix_memcpy(&dx.matrix, ts->rk.dcur);
  }
}

double tensor_stage_dp_elements(const tensor_stage *ts)
{
  tensor_params q = ts->p;
  double h = (double)q.hidden;
  q.vocab = 0;
  double e = tensor_dp_elements(&q);
  /* tied embedding: first and last stage each hold the V/t rows; position embedding on the
   * first, final LayerNorm on the last */
  if (ts->p.vocab && (ts->first || ts->last))
    e += (double)ts->p.vocab * h / (double)ts->p.ranks;
  if (ts->p.vocab && ts->first)
    e += (double)ts->p.seq * h;
  if (ts->p.vocab && ts->last)
    e += 2 * h;
  return e;
}

/* The packed order (tensor.h): every block of the stage in turn, as (parameters, gradients,
 * length, offset in the whole model's vector). */
typedef struct stage_block {
  double *w, *g;
  size_t len, model_off;
} stage_block;

/* Calls fn on each block of the stage in the packed order, with its offset in the packed
 * vector; returns the vector's length. */
static size_t stage_walk(tensor_stage *ts, void (*fn)(void *ctx, const stage_block *b, size_t off), void *ctx)
{
  stage_num *sn = ts->rk.sn;
  size_t L = ts->p.layers, h = ts->p.hidden, off = 0, vl = ts->p.vocab / ts->p.ranks;
  gpt_layout gl;
  gpt_layout_of(&sn->g, &gl);
  for (size_t l = 0; l < L; l++) /* replicated entries first: [0, tensor_stage_replicated) */
    for (size_t k = 0; k < 4; k++) {
      stage_block b = {sn->w[l]->data + sn->rep[k].off, ts->rk.gacc[l]->data + sn->rep[k].off, sn->rep[k].len,
                       gl.layer0 + (sn->layer0 + l) * gl.layer_size + sn->rep[k].off};
      fn(ctx, &b, off);
      off += b.len;
    }
  if (ts->last) {
    stage_block b = {sn->lnf, sn->dlnf, 2 * h, gl.lnf_g};
    fn(ctx, &b, off);
    off += b.len;
  }
  for (size_t l = 0; l < L; l++)
    for (size_t k = 0; k < sn->nsplit; k++) {
      stage_block b = {sn->w[l]->data + sn->split[k].off, ts->rk.gacc[l]->data + sn->split[k].off, sn->split[k].len,
                       gl.layer0 + (sn->layer0 + l) * gl.layer_size + sn->split[k].off};
      fn(ctx, &b, off);
      off += b.len;
    }
  if (ts->first) {
    stage_block b = {sn->P, sn->dP, ts->p.seq * h, gl.pos};
    fn(ctx, &b, off);
    off += b.len;
  }
  if (ts->first || ts->last) {
    stage_block b = {sn->E, sn->dE, vl * h, gl.embed + ts->rk.me * vl * h};
    fn(ctx, &b, off);
    off += b.len;
  }
  return off;
}

static void nothing(void *ctx, const stage_block *b, size_t off)
{
  (void)ctx, (void)b, (void)off;
}

size_t tensor_stage_replicated(const tensor_stage *ts)
{
  return ts->p.layers * 6 * ts->p.hidden + (ts->last ? 2 * ts->p.hidden : 0);
}

size_t tensor_stage_embedding_offset(const tensor_stage *ts)
{
  size_t n = stage_walk((tensor_stage *)ts, nothing, NULL);
  return ts->first || ts->last ? n - ts->p.vocab / ts->p.ranks * ts->p.hidden : n;
}

static void take_grad(void *ctx, const stage_block *b, size_t off)
{
  memcpy((double *)ctx + off, b->g, b->len * sizeof(double));
  memset(b->g, 0, b->len * sizeof(double));
}

static void take_param(void *ctx, const stage_block *b, size_t off)
{
  memcpy((double *)ctx + off, b->w, b->len * sizeof(double));
}

static void put_param(void *ctx, const stage_block *b, size_t off)
{
  memcpy(b->w, (const double *)ctx + off, b->len * sizeof(double));
}

static void export_param(void *ctx, const stage_block *b, size_t off)
{
  (void)off;
  memcpy(((gsl_vector *)ctx)->data + b->model_off, b->w, b->len * sizeof(double));
}

typedef struct diff_ctx {
  const gsl_vector *w;
  double d;
} diff_ctx;

static void diff_param(void *ctx, const stage_block *b, size_t off)
{
  (void)off;
  diff_ctx *c = ctx;
  for (size_t i = 0; i < b->len; i++)
    c->d = fmax(c->d, fabs(b->w[i] - c->w->data[b->model_off + i]));
}

static stage_num *numeric(const tensor_stage *ts)
{
  xbt_assert(ts->rk.sn, "tensor stage: numerics were not set up (tensor_stage_numerics)");
  return ts->rk.sn;
}

void tensor_stage_take_grads(tensor_stage *ts, double *buf)
{
  numeric(ts);
  stage_walk(ts, take_grad, buf);
}

void tensor_stage_get_params(const tensor_stage *ts, double *buf)
{
  numeric(ts);
  stage_walk((tensor_stage *)ts, take_param, buf);
}

void tensor_stage_set_params(tensor_stage *ts, const double *buf)
{
  numeric(ts);
  stage_walk(ts, put_param, (void *)buf);
}

void tensor_stage_export(const tensor_stage *ts, gsl_vector *w)
{
  numeric(ts);
  stage_walk((tensor_stage *)ts, export_param, w);
}

double tensor_stage_diff(const tensor_stage *ts, const gsl_vector *w)
{
  numeric(ts);
  diff_ctx c = {w, 0};
  stage_walk((tensor_stage *)ts, diff_param, &c);
  return c.d;
}

double tensor_stage_take_loss(tensor_stage *ts)
{
  double l = numeric(ts)->loss;
  ts->sn.loss = 0;
  return l;
}

void tensor_stage_free(tensor_stage *ts)
{
  if (ts == NULL)
    return;
  stage_num *sn = ts->rk.sn;
  if (sn) {
    size_t L = ts->p.layers, slots = ts->p.recompute ? 1 : sn->m;
    for (size_t k = 0; k < slots; k++) {
      for (size_t l = 0; l < L; l++)
        transformer_part_free(sn->parts[k][l]);
      xbt_free(sn->parts[k]);
    }
    for (size_t k = 0; k < sn->m; k++) {
      for (size_t l = 0; l <= L; l++)
        gsl_matrix_free(sn->act[k][l]);
      xbt_free(sn->act[k]);
      if (sn->head)
        gpt_head_free(sn->head[k]);
    }
    for (size_t l = 0; l < L; l++) {
      gsl_vector_free(sn->w[l]);
      gsl_vector_free(ts->rk.gacc[l]);
    }
    xbt_free(sn->parts);
    xbt_free(sn->act);
    xbt_free(sn->head);
    xbt_free(sn->w);
    xbt_free(sn->split);
    xbt_free(ts->rk.gacc);
    gsl_vector_free(ts->rk.gtmp);
    gsl_matrix_free(ts->rk.dcur);
    gsl_matrix_free(ts->rk.dnext);
    if (sn->emb)
      gsl_matrix_free(sn->emb);
    double *v[] = {sn->E, sn->dE, sn->P, sn->dP, sn->lnf, sn->dlnf};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
      xbt_free(v[i]);
  }
  xbt_free(ts);
}

/* ---- the descriptor: run.algorithm = tensor ------------------------------------- */

static const key_spec tensor_keys[] = {
  {"tensor", "ranks", KEY_SIZE, KEY_FIELD(tensor_params, ranks), .def = "2", .unit = "GPUs",
   .doc = "t: tensor-parallel ranks, rank i on host i (hosts i = GPU i mod G of node i / G on `dgx2h` and "
          "`selene`, so t <= G stays in one node).",
   KEY_GE(1), KEY_LE(4096)},
  {"tensor", "hidden", KEY_SIZE, KEY_FIELD(tensor_params, hidden), .def = "64", .unit = "units", .doc = "h: hidden size.", KEY_GE(1)},
  {"tensor", "heads", KEY_SIZE, KEY_FIELD(tensor_params, heads), .def = "4", .unit = "heads",
   .doc = "a: attention heads, dividing `hidden` and divisible by `ranks`.", KEY_GE(1)},
  {"tensor", "layers", KEY_SIZE, KEY_FIELD(tensor_params, layers), .def = "2", .unit = "layers", .doc = "L: transformer layers.",
   KEY_GE(1)},
  {"tensor", "seq", KEY_SIZE, KEY_FIELD(tensor_params, seq), .def = "16", .unit = "tokens", .doc = "s: sequence length.", KEY_GE(1)},
  {"tensor", "microbatch", KEY_SIZE, KEY_FIELD(tensor_params, microbatch), .def = "2", .unit = "sequences",
   .doc = "b: sequences per microbatch.", KEY_GE(1)},
  {"tensor", "microbatches", KEY_LONG, KEY_FIELD(tensor_params, microbatches), .def = "1", .unit = "microbatches",
   .doc = "Microbatches per step, each forward then backward through every layer (gradients accumulate).",
   KEY_GE(1)},
  {"tensor", "sequence_parallel", KEY_BOOL, KEY_FIELD(tensor_params, seqpar), .def = "off", .unit = "",
   .doc = "`on`: sequence parallelism (LayerNorm and residuals on sequence shards; allgather before and "
          "reduce-scatter after each parallel block instead of allreduce; `seq` divisible by `ranks`)."},
  {"tensor", "async_grad_allreduce", KEY_BOOL, KEY_FIELD(tensor_params, async_grad), .def = "on", .unit = "",
   .doc = "`on`: the input-gradient reduction of each column-parallel backward runs concurrently with "
          "its weight-gradient GEMM (Megatron's asynchronous allreduce); `off`: one after the other."},
  {"tensor", "collective", KEY_CHOICE, KEY_FIELD(tensor_params, algo), .def = "ring", .unit = "",
   .doc = "Algorithm of the allreduces (sequence parallelism always uses the ring's allgather and "
          "reduce-scatter).",
   .choices = "ring|halving-doubling|tree"},
  {"tensor", "data_parallel", KEY_SIZE, KEY_FIELD(tensor_params, dp), .def = "1", .unit = "replicas",
   .doc = "d: data-parallel replicas of the tensor group, ranks x d GPUs; replica j on hosts [j x ranks, "
          "(j + 1) x ranks); after each step's backward every rank allreduces (ring, one bucket) its share "
          "of the layer gradients with the ranks of the same tensor rank (Megatron's data-parallel groups; "
          "`dp_overlap` overlaps it with backward); global batch microbatch x microbatches x d. With "
          "`run.algorithm = tensor`, d > 1 runs timing only (`model.numerics = off`); numeric 3D stages "
          "(`pipeline.model = transformer`) train with it.",
   KEY_GE(1), KEY_LE(4096)},
  {"tensor", "dp_overlap", KEY_BOOL, KEY_FIELD(tensor_params, dp_overlap), .def = "off", .unit = "",
   .doc = "`on` (with `data_parallel` > 1): during the last microbatch's backward of a step, each layer's "
          "gradients (last layer first, the embedding's last) join a bucket, and a bucket whose wire bytes "
          "reach `bucket_bytes` is allreduced (ring) by the rank's communicator while backward goes on, "
          "buckets one after the other; the last, partial one goes when backward ends (PyTorch DDP, which "
          "took Megatron-LM 2019's 8.3B model from 60% to 74% scaling); `off`: one allreduce of all "
          "gradients after backward (Megatron's own DDP). With `data_parallel = 1` there is nothing to "
          "reduce and `on` changes nothing. `run.algorithm = tensor` only. summary.json's "
          "`tensor.dp_allreduce_s` is then the longest time from a rank's first bucket's start to its last "
          "one's end, `tensor.dp_buckets` the buckets per step."},
  {"tensor", "bucket_bytes", KEY_DOUBLE, KEY_FIELD(tensor_params, bucket_bytes), .def = "26214400", .unit = "bytes",
   .doc = "`dp_overlap`: a gradient bucket is full when its wire bytes (elements x `model.dtype`'s bytes) "
          "reach this (PyTorch DDP's bucket_cap_mb = 25 MiB); buckets hold whole layers, so one may "
          "exceed it.",
   KEY_GT(0)},
  {"tensor", "fuse_layers", KEY_BOOL, KEY_FIELD(tensor_params, fuse), .def = "off", .unit = "",
   .doc = "`on` (timing only: `model.numerics = off`): each microbatch's forward over the rank's layers, and "
          "its backward with their recomputation, runs as one execution of the compute and one batch of "
          "the collectives (one round each with `run.collectives = rounds`), and with "
          "`async_grad_allreduce` one more execution of the weight gradients concurrent with one batch of "
          "the reductions they overlap: a few SimGrid activities per pass instead of about ten per layer. "
          "On a contention-free tensor group it takes the layer-by-layer time when each weight-gradient "
          "GEMM is longer (or each shorter) than its reduction; flows sharing the group's links meet its "
          "transfers at other times (algorithms/README.md, Fused layers, has the error). With `dp_overlap` "
          "the last microbatch's backward of a step runs layer by layer, so buckets leave as layers finish."},
  {"tensor", "recompute", KEY_BOOL, KEY_FIELD(tensor_params, recompute), .def = "off", .unit = "",
   .doc = "`on`: activation recomputation (checkpointing every layer, as PTD-P): before each layer's "
          "backward its forward runs again, with its two reductions; counted in the reported flop/s, as "
          "PTD-P's 96 B s l h^2 formula counts it."},
  {"tensor", "vocab", KEY_SIZE, KEY_FIELD(tensor_params, vocab), .def = "0", .unit = "tokens",
   .doc = "V: vocabulary of the vocabulary-parallel input embedding (an allreduce of b s h forward) and "
          "the tied logits layer with the fused cross-entropy (2 b s h V / t flops forward, three "
          "allreduces of b s elements, an allreduce of b s h backward); 0: neither is modelled. "
          "`run.algorithm = tensor` runs them timing only (`model.numerics = off`); numeric 3D stages "
          "(`pipeline.model = transformer`) train them, as the GPT's vocabulary. Its V h / t weights join "
          "the data-parallel allreduce.",
   KEY_GE(0), KEY_LE(1L << 24)},
  {"tensor", "kernels", KEY_CHOICE, KEY_FIELD(tensor_params, kernels), .def = "none", .unit = "",
   .doc = "The memory-bound kernels between a layer's GEMMs (LayerNorm, bias, dropout, residual, GeLU, "
          "scale-mask-softmax, layout copies), run at each host's `mem_bw` property (bytes/s; the dgx2h "
          "and selene presets have it) in model.dtype elements: `unfused` counts Megatron-LM 2019's "
          "separate kernels, `fused` Megatron-LM 2021's fused ones (models/transformer.h has the "
          "per-layer table), `none` gives them no time (GEMM flops only). The replicated ones split t "
          "ways with sequence parallelism.",
   .choices = "none|unfused|fused"},
};

/* A numeric tensor run holds, per rank and layer, about 24 n x h activations and
 * buffers plus the attention probabilities; with the serial check, about 2^27 doubles
 * (1 GiB) in all at most. */
#define TP_NUMERIC_MAX (1.0 * (1L << 27))

int tensor_validate_shapes(const tensor_params *p, char *why, size_t len)
{
  if (p->hidden % p->heads != 0)
    snprintf(why, len, "tensor.heads: %zu heads do not divide tensor.hidden = %zu", p->heads, p->hidden);
  else if (p->heads % p->ranks != 0)
    snprintf(why, len, "tensor.ranks: %zu ranks must divide tensor.heads = %zu (each rank owns whole heads)",
             p->ranks, p->heads);
  else if (p->seqpar && p->seq % p->ranks != 0)
    snprintf(why, len, "tensor.seq: sequence parallelism cuts %zu tokens into %zu equal shards", p->seq, p->ranks);
  else if (p->vocab % p->ranks != 0)
    snprintf(why, len, "tensor.vocab: %zu ranks must divide the vocabulary V = %zu (each rank owns V / t rows)",
             p->ranks, p->vocab);
  else
    return 0;
  return -1;
}

int tensor_validate_fuse(const scenario *sc, const tensor_params *p, char *why, size_t len)
{
  if (!p->fuse || !sc->model.numerics)
    return 0;
  snprintf(why, len, "tensor.fuse_layers: fused layer passes are timing only; set model.numerics = off or "
           "tensor.fuse_layers = off");
  return -1;
}

int tensor_validate(const scenario *sc, const tensor_params *p, char *why, size_t len)
{
  double n = (double)p->seq * (double)p->microbatch, h = (double)p->hidden;
  double per_rank = (double)p->layers * (24 * n * h + 2 * (double)p->microbatch * (double)p->heads *
                                         (double)p->seq * (double)p->seq / (double)p->ranks);
  if (tensor_validate_shapes(p, why, len) != 0 || tensor_validate_fuse(sc, p, why, len) != 0)
    return -1;
  if (sc->model.numerics && per_rank * (double)(p->ranks + 1) > TP_NUMERIC_MAX)
    snprintf(why, len, "tensor.hidden: a numeric run this large holds more than 2^27 doubles; set model.numerics = "
             "off for a timing-only run");
  else if (sc->model.numerics && p->vocab > 0)
    snprintf(why, len, "tensor.vocab: run.algorithm = tensor runs the embedding and logits layers (V = %zu) timing "
             "only; set model.numerics = off (numeric 3D stages, pipeline.model = transformer, train them)", p->vocab);
  else if (sc->model.numerics && p->dp > 1)
    snprintf(why, len, "tensor.data_parallel: data parallelism across tensor groups (d = %zu) runs timing only; "
             "set model.numerics = off", p->dp);
  else if (sc->run.target_accuracy > 0)
    snprintf(why, len, "run.target_accuracy: a tensor run has no accuracy to reach");
  else
    return 0;
  return -1;
}

static int validate(const scenario *sc, const void *params, char *why, size_t len)
{
  return tensor_validate(sc, params, why, len);
}

static size_t hosts_needed(const scenario *sc, const void *params, const char **why)
{
  (void)sc;
  *why = "tensor.ranks x tensor.data_parallel";
  return tensor_hosts_needed(params);
}

int tensor_check_mem_bw(const tensor_params *p, const run_config *cfg, char *err, size_t len)
{
  static const char *const names[] = {"none", "unfused", "fused"};
  if (p->kernels == TRANSFORMER_KERNELS_NONE)
    return 0;
  for (size_t i = 0; i < cfg->n_hosts; i++)
    if (compute_host_mem_bw(cfg->hosts[i]) <= 0) {
      snprintf(err, len, "tensor.kernels = %s: host %s has no mem_bw property (bytes/s, e.g. <prop id=\"mem_bw\" "
               "value=\"900e9\"/>); the dgx2h and selene presets have it", names[p->kernels],
               sg_host_get_name(cfg->hosts[i]));
      return -1;
    }
  return 0;
}

typedef struct tensor_run {
  tensor_params own;   /* the section, with steps from run.max_steps */
  const tensor_params *p;
  tensor *t;
  tensor_result r;
  double peak_flops;   /* per GPU host: its speed (model.efficiency not applied) */
  double memory_bytes; /* the per-GPU estimate of summary.json's memory_per_gpu */
} tensor_run;

static void *prepare(const run_config *cfg, char *err, size_t len)
{
  (void)err;
  (void)len;
  tensor_run *r = xbt_malloc0(sizeof(*r));
  r->own = *(const tensor_params *)algorithm_params(cfg->sc, &tensor_algorithm);
  r->own.steps = cfg->max_steps > 0 ? cfg->max_steps : 1; /* run.max_steps (tensor.steps, its old name); 0: one */
  r->p = &r->own;
  return r;
}

static int check_hosts(void *state, const run_config *cfg, char *err, size_t len)
{
  return tensor_check_mem_bw(((tensor_run *)state)->p, cfg, err, len);
}

static void deploy(void *state, const run_config *cfg, metrics *m)
{
  tensor_run *r = state;
  r->t = tensor_deploy(cfg, r->p, m);
  xbt_assert(r->t, "tensor_deploy refused a configuration the scenario checked");
}

/* summary.json's "tensor" block: the shapes, the flop rate, the data-parallel allreduce
 * and the numeric check. */
static void report_run(void *state, const run_config *cfg, metrics *m, report *rep)
{
  (void)m;
  tensor_run *r = state;
  const tensor_params *p = r->p;
  tensor_result_get(r->t, &r->r);
  r->peak_flops = sg_host_get_speed(cfg->hosts[0]) * cfg->speed_factor * cfg->cores;
  rep->examples = p->steps * p->microbatches * (long)p->microbatch * (long)p->dp;
  rep->step_time_s = r->r.step_s;
  rep->model_flops = r->r.model_flops;
  rep->flops_time_s = r->r.time_s;
  rep->devices = p->ranks * p->dp;
  rep->worker_role = "tensor";
  json_t *o = json_object();
  json_object_set_new(o, "ranks", json_integer((json_int_t)p->ranks));
  json_object_set_new(o, "data_parallel", json_integer((json_int_t)p->dp));
  json_object_set_new(o, "gpus", json_integer((json_int_t)(p->ranks * p->dp)));
  json_object_set_new(o, "hidden", json_integer((json_int_t)p->hidden));
  json_object_set_new(o, "heads", json_integer((json_int_t)p->heads));
  json_object_set_new(o, "layers", json_integer((json_int_t)p->layers));
  json_object_set_new(o, "seq", json_integer((json_int_t)p->seq));
  json_object_set_new(o, "microbatch", json_integer((json_int_t)p->microbatch));
  json_object_set_new(o, "microbatches", json_integer(p->microbatches));
  json_object_set_new(o, "sequence_parallel", json_boolean(p->seqpar));
  json_object_set_new(o, "async_grad_allreduce", json_boolean(p->async_grad));
  json_object_set_new(o, "layer_flops_forward", report_num(tensor_layer_flops(p)));
  json_object_set_new(o, "model_flops", report_num(r->r.model_flops));
  json_object_set_new(o, "step_time_s", report_num(r->r.step_s));
  json_object_set_new(o, "tflops_per_gpu", report_num(r->r.tflops_per_gpu));
  json_object_set_new(o, "dp_allreduce_elements", report_num(r->r.dp_elements));
  json_object_set_new(o, "dp_allreduce_s", report_num(r->r.dp_allreduce_s));
  json_object_set_new(o, "dp_buckets", json_integer((json_int_t)r->r.dp_buckets));
  json_object_set_new(o, "fraction_of_peak", report_num(r->r.tflops_per_gpu * 1e12 / r->peak_flops));
  json_t *ck = json_object();
  json_object_set_new(ck, "numeric", json_boolean(r->r.numeric));
  json_object_set_new(ck, "max_rel_error", r->r.numeric ? report_num(r->r.max_rel_error) : json_null());
  json_object_set_new(o, "check", ck);
  /* What one GPU would hold: its share of the parameters (tensor_dp_elements) and their
   * gradients in model.dtype, Adam's state, and one microbatch's activations of every
   * layer (a step runs its microbatches one after the other). */
  double params = tensor_dp_elements(p), eb = (double)cfg->elem_bytes;
  double act = (double)p->layers * tensor_layer_activation_bytes(p);
  json_t *mem = json_object();
  json_object_set_new(mem, "parameters", report_num(params));
  json_object_set_new(mem, "parameters_bytes", report_num(params * eb));
  json_object_set_new(mem, "gradients_bytes", report_num(params * eb));
  json_object_set_new(mem, "optimizer", json_string("adam (assumed: the run applies no optimizer)"));
  json_object_set_new(mem, "optimizer_bytes", report_num(params * tensor_optimizer_bytes_per_param(cfg->elem_bytes)));
  json_object_set_new(mem, "activations_bytes", report_num(act));
  r->memory_bytes = params * (2 * eb + tensor_optimizer_bytes_per_param(cfg->elem_bytes)) + act;
  json_object_set_new(mem, "total_bytes", report_num(r->memory_bytes));
  json_object_set_new(o, "memory_per_gpu", mem);
  report_add_block(rep, "tensor", o);
}

static void closing(void *state, const run_config *cfg, const report_outcome *o, char *line, size_t len)
{
  (void)cfg;
  const tensor_run *r = state;
  char shares[300], mem[32];
  report_perf_text(&o->perf, 0, shares, sizeof shares);
  report_bytes_text(r->memory_bytes, mem, sizeof mem);
  snprintf(line, len, "tensor %s: %zu x %zu GPUs, %.6g simulated s per step, %.4g Tflop/s per GPU (MFU %.3g%%), "
           "about %s per GPU%s%s%s", o->status, r->p->ranks, r->p->dp, r->r.step_s, r->r.tflops_per_gpu,
           100 * r->r.tflops_per_gpu * 1e12 / r->peak_flops, mem,
           r->r.numeric ? ", numerics checked" : "", shares[0] ? "; " : "", shares);
}

static void free_run(void *state)
{
  tensor_run *r = state;
  tensor_free(r->t);
  xbt_free(r);
}

double tensor_optimizer_bytes_per_param(size_t elem_bytes) { return elem_bytes < 4 ? 12 : 8; }

double tensor_layer_activation_bytes(const tensor_params *p)
{
  double sbh = (double)p->seq * (double)p->microbatch * (double)p->hidden, t = (double)p->ranks;
  double as_h = 5 * (double)p->heads * (double)p->seq / (double)p->hidden;
  if (p->recompute)
    return 2 * sbh / (p->seqpar ? t : 1);
  return p->seqpar ? sbh * (34 + as_h) / t : sbh * (10 + 24 / t + as_h / t);
}

/* Numerics: every rank's activations and buffers (tensor_validate's per-rank count, and
 * the serial check's as one more rank), and the layers' weights, gradients and their sums
 * over the microbatches; the communicators add an actor per rank with dp_overlap. */
static double footprint(const scenario *sc, const void *params, double *actors, const char **what)
{
  const tensor_params *p = params;
  double n = (double)p->seq * (double)p->microbatch, h = (double)p->hidden, L = (double)p->layers;
  double per_rank = L * (24 * n * h + 2 * (double)p->microbatch * (double)p->heads * (double)p->seq * (double)p->seq /
                                          (double)p->ranks);
  *actors = (double)p->ranks * (double)p->dp * (p->dp_overlap ? 2 : 1) + 1;
  *what = "tensor.layers x activations of tensor.seq x tensor.microbatch x tensor.hidden per rank, and 3 copies of the "
          "weights";
  return sc->model.numerics ? (per_rank * ((double)p->ranks + 1) + 3 * L * 12 * h * h) * 8 : 0;
}

const algorithm tensor_algorithm = {
  .name = "tensor",
  .summary = "Megatron-LM tensor parallelism of a GPT layer stack over GPUs (Shoeybi et al. 2019)",
  .section_doc = "Megatron-LM tensor parallelism (`run.algorithm = tensor`): a GPT layer stack split over `ranks` "
                 "GPUs; `model.numerics` (off: timing only), `model.dtype` (wire bytes per element) and "
                 "`model.efficiency` apply",
  ALGORITHM_SECTION(tensor_keys, tensor_params),
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

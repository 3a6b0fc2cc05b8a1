#ifndef ALGORITHMS_TENSOR_STAGE_IMPL_H
#define ALGORITHMS_TENSOR_STAGE_IMPL_H
/* tensor_stage_impl.h - private to the tensor-parallel files: a rank's state and its passes over
 * its layers (tensor_stage_layers.c), Megatron-LM's split (Shoeybi et al. 2019) as PTD-P runs it
 * (Narayanan et al. 2021), shared by the tensor-parallel stage (tensor_stage.c) and the
 * tensor algorithm (tensor.c). Nothing outside algorithms/tensor*.c includes it. */

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>
#include <simgrid/semaphore.h>

#include "algorithms/compute.h"
#include "algorithms/metrics.h"
#include "algorithms/tensor_host.h"
#include "algorithms/tensor_stage.h"
#include "models/transformer.h"

typedef struct tensor tensor;

/* One tensor rank. The layer passes use tp, me, tc, handing, layer_done and the fields from
 * parts on; the rest is the tensor algorithm's (its data-parallel replica and buckets). */
typedef struct rank {
  struct tensor *tp;
  size_t me;           /* tensor rank */
  size_t rep;          /* data-parallel replica */
  coll_comm *tc;       /* this replica's tensor communicator */
  void (*layer_done)(struct rank *rk); /* or NULL: after each layer's backward (tensor_rank_backward) */
  tensor_stage_hook hook; /* or NULL: around each layer (tensor_stage_set_hook; never fused) */
  void *hook_ctx;
  double dp_s;         /* longest data-parallel allreduce of a step (dp_overlap: first bucket's
                          start to last bucket's end) */
  sg_sem_t ready;      /* dp_overlap: released once per bucket backward has filled */
  sg_sem_t reduced;    /* dp_overlap: released once per step, when every bucket is reduced */
  int handing;         /* dp_overlap: 1 during the last microbatch's backward of a step */
  size_t unit;         /* dp_overlap: gradient units (tensor_dp_buckets) produced this step */
  size_t bucket;       /* dp_overlap: buckets handed over this step */
  double end;          /* when the rank finished its last step */
  transformer_part **parts;   /* per layer (numeric runs) */
  gsl_matrix **act;   /* act[l]: layer l's input rows, act[L]: the output (numeric) */
  gsl_matrix *dcur, *dnext; /* gradient w.r.t. a layer's output / input rows (numeric) */
  gsl_vector *gtmp;   /* one layer's gradient for one microbatch */
  gsl_vector **gacc;  /* per layer, summed over the step's microbatches */
  struct stage_num *sn; /* a numeric pipeline stage's embedding, logits and stashes, or NULL */
  int has_gpu;         /* the rank's host has a GPU description (compute_gpu) */
  gemm_device gpu;
  double phase_s[4];   /* has_gpu: each phase's device seconds (compute_work_seconds), once */
  struct tensor_host *host; /* model.framework: the thread that launches the rank's work, or NULL */
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

/* The tensor algorithm's run; a stage (tensor_stage.c) fills cfg, p, d, n and w alone, which
 * are all the layer passes read. */
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
  struct tensor_host_plan *host_plan; /* model.framework: a step of every rank's thread, or NULL */
};

/* Kernel launches of the collectives a layer phase ends at: its g or f' and, with sequence
 * parallelism, the allgather before it; none on one rank (Megatron calls no collective). */
static inline size_t tensor_phase_collectives(const tensor *t)
{
  return t->p->ranks > 1 ? 1 + (t->p->seqpar ? 1 : 0) : 0;
}

/* ---- a rank's passes over its layers (tensor_stage_layers.c) ---- */

/* has_gpu: each phase's and each weight-gradient GEMM's device seconds, once. */
void tensor_rank_gpu_times(rank *rk);
/* On gpu, the share of a microbatch's backward (with recomputation, the forward it repeats too)
 * that its memory-bound kernels take, launches aside: what an overlapped collective's HBM
 * traffic slows (tensor.comm_hbm). */
double tensor_backward_mem_share(const tensor *t, const gemm_device *gpu);
/* What a step's plan of the ranks' threads (model.framework) is made from: t's shape and the
 * kernels each layer phase launches, its GEMMs, memory-bound kernels and collectives. */
tensor_host_shape tensor_host_shape_of(const tensor *t);
/* One microbatch through the rank's layers: the embedding first when the stack starts the
 * model (`first`), the logits last when it ends it (`last`); a pipeline stage may hold
 * neither. */
void tensor_rank_forward(rank *rk, int first, int last);
/* Its backward, in reverse; rk->layer_done, when set, runs after each layer's backward
 * (layer by layer only: never during a fused pass). */
void tensor_rank_backward(rank *rk, int first, int last);

#endif

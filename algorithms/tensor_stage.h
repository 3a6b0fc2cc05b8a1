#ifndef ALGORITHMS_TENSOR_STAGE_H
#define ALGORITHMS_TENSOR_STAGE_H
/* tensor_stage.h - a tensor-parallel stack of GPT layers, as Megatron-LM splits it
 * (Shoeybi et al. 2019 sec. 3; with sequence parallelism Korthikanti et al. 2022): one rank's
 * share of the layers, its forward and backward through the collectives on one tensor
 * communicator, and, with numerics, its real activations and gradients (models/gpt.h). The
 * tensor algorithm (tensor.h) runs a whole model of them; pipeline's 3D stages (PTD-P,
 * Narayanan et al. 2021) run one block each. Also the counts both share: the tensor
 * section's parameters, data-parallel elements, flops, memory and the shape checks. */

#include <stddef.h>
#include <gsl/gsl_vector.h>

#include "algorithms/collectives.h"
#include "algorithms/run.h"
#include "models/gpt.h"

/* The [tensor] section (run.algorithm = tensor): rank i of one tensor
 * group on hosts[i] runs `layers` GPT layers (models/transformer.h) per microbatch of
 * `microbatch` sequences of `seq` tokens, `microbatches` per step. algo holds a coll_algo
 * for the allreduces (collectives.h). */
typedef struct tensor_params {
  size_t ranks;
  size_t hidden, heads, layers, seq, microbatch;
  long microbatches;
  long steps;
  int seqpar;      /* sequence parallelism: allgather + reduce-scatter instead of allreduce */
  int async_grad;  /* input-gradient allreduce concurrent with the weight-gradient GEMM */
  int algo;
  size_t dp;       /* d: data-parallel replicas of the tensor group (t x d GPUs) */
  int recompute;   /* activation recomputation: each layer's forward again before its backward */
  size_t vocab;    /* V: vocabulary of the embedding and logits layers; 0: not modelled */
  int kernels;     /* a transformer_kernels: the memory-bound kernels' traffic (transformer.h) */
  int dp_overlap;  /* d > 1: bucketed data-parallel allreduces overlap the last backward */
  double bucket_bytes; /* dp_overlap: wire bytes at which a gradient bucket is handed over */
  int fuse;        /* timing only: a microbatch's pass over the layers as a few phases (fuse_layers) */
  int comm_hbm;    /* dp_overlap: the buckets' allreduces take the HBM bandwidth they move */
  int rng_pinned;  /* model.framework: its RNG state copies at the host link's rate, not pageable memory's */
} tensor_params;

/* The shape checks alone: hidden, heads, ranks, seq with sequence parallelism, vocab. */
int tensor_validate_shapes(const tensor_params *p, char *why, size_t len);
/* fuse_layers needs model.numerics = off: 0, or -1 with one line in why. */
int tensor_validate_fuse(const scenario *sc, const tensor_params *p, char *why, size_t len);
/* With tensor.kernels, every host of cfg must have a mem_bw property: 0, or -1 naming
 * the first that has none. */
int tensor_check_mem_bw(const tensor_params *p, const run_config *cfg, char *err, size_t len);

/* Elements each rank allreduces across its data-parallel group per step: its share of
 * every layer's parameters, layers x ((12h^2 + 7h)/t + 6h). */
double tensor_dp_elements(const tensor_params *p);

/* dp_overlap's buckets: the gradient units in backward order (layer L-1 down to layer 0,
 * then, with p->vocab, the embedding's V h / t + s h + 2h entries) join a bucket until its
 * wire bytes (elements x elem_bytes) reach p->bucket_bytes; the last bucket holds the rest.
 * Returns the number of buckets, at most layers + 1; when non-NULL, elems[b] receives
 * bucket b's elements (they sum to tensor_dp_elements) and last[b] the index of the unit
 * that completes it. */
size_t tensor_dp_buckets(const tensor_params *p, size_t elem_bytes, double *elems, size_t *last);

/* Forward flops of one layer for one microbatch (24bsh^2 + 4bs^2h) of p. */
double tensor_layer_flops(const tensor_params *p);

/* Model flops of one microbatch, all ranks together: 3 (4 with recomputation) x the layers'
 * forward flops, plus 3 x 2bshV for the logits layer; per step and batch B = b x
 * microbatches this is PTD-P's F = 96 B s l h^2 (1 + s/6h + V/16lh) with recomputation. */
double tensor_microbatch_flops(const tensor_params *p);

/* One tensor rank's share of a contiguous block of GPT layers, for another algorithm's
 * actor to run (a pipeline stage of 3D parallelism: t ranks per stage, one communicator).
 * `first`: the block starts the model (the embedding runs before it); `last`: it ends the
 * model (the logits and the cross-entropy after it); both only when p->vocab > 0.
 * p->layers is ignored (the block has `layers`), p->ranks is t, p->microbatch, seq, hidden,
 * heads, seqpar, async_grad, algo, recompute and vocab apply. Timing only until
 * tensor_stage_numerics. Returns NULL if the shape does not split over p->ranks or
 * me >= p->ranks. cfg, p and tc outlive the stage. */
typedef struct tensor_stage tensor_stage;
tensor_stage *tensor_stage_create(const run_config *cfg, const tensor_params *p, coll_comm *tc, size_t me,
                                  size_t layers, int first, int last);

/* Numerics: the stage becomes layers [layer0, layer0 + layers) of the GPT g (models/gpt.h,
 * whose shapes must be p's, p->vocab its vocabulary) and takes rank me's entries of w (the
 * whole model's parameters): the replicated ones and its shards of the split ones (its
 * Megatron split, transformer.h), the rank's V/t rows of the token embedding on the first and
 * the last stage, the position embedding on the first, the final LayerNorm on the last; every
 * other entry of its layers is NaN, so that reading one would show in every result. Room is
 * made for `microbatches` in flight at once (a step's). 0, or -1 if the shapes disagree. */
int tensor_stage_numerics(tensor_stage *ts, const gpt_dims *g, size_t layer0, long microbatches, const gsl_vector *w);

/* One microbatch forward (and, with recomputation, nothing is kept but the layers' inputs) or
 * backward through the block, including the collectives on tc; the calling actor must be
 * rank me of tc, and every rank of tc must make the same calls in the same order. Timing
 * only: mb, seqs, in, out, dout and din are unused (pass 0 and NULL). With numerics: mb
 * (< microbatches) names the microbatch's stash, seqs its b sequences (models/gpt.h; read by
 * the first stage's lookup and the last stage's targets); in, out, dout and din are n x h
 * (n = seq x microbatch) boundary buffers of which the rank reads and writes its rows (all of
 * them, or its sequence-parallel shard): the block's input (unused on the first stage), its
 * output (NULL on the last, which computes the loss), the output's gradient (unused on the
 * last) and the input's (NULL on the first, whose gradient goes into the embedding). */
void tensor_stage_forward(tensor_stage *ts, long mb, const double *seqs, const double *in, double *out);
void tensor_stage_backward(tensor_stage *ts, long mb, const double *seqs, const double *dout, double *din);

/* What a stage's owner may do around each of its layers, layer by layer (a stage with a hook
 * never runs fused passes): before layer l's forward, before its backward (and its
 * recomputation), and after its backward. The pipeline's ZeRO-3 (pipeline.zero) gathers a
 * layer's parameters before its forward and before its backward and reduce-scatters its
 * gradient after. */
typedef enum tensor_stage_event { TENSOR_STAGE_FORWARD, TENSOR_STAGE_BACKWARD, TENSOR_STAGE_DONE } tensor_stage_event;
typedef void (*tensor_stage_hook)(void *ctx, tensor_stage_event ev, size_t layer);
/* Sets (or, with NULL, clears) ts's hook; ctx is passed to it. */
void tensor_stage_set_hook(tensor_stage *ts, tensor_stage_hook fn, void *ctx);
/* Elements of one layer's rank share of the data-parallel gradient (tensor_dp_elements of one
 * layer): the elements a layer's ZeRO-3 gather and reduce-scatter carry. */
double tensor_stage_layer_elements(const tensor_stage *ts);

/* Elements of this rank's gradients that data parallelism allreduces: the block's layers
 * (as tensor_dp_elements) plus the tied embedding's V/t rows on the first and last stage,
 * the position embedding on the first, the final LayerNorm on the last. */
double tensor_stage_dp_elements(const tensor_stage *ts);

/* ---- a numeric stage's parameters and gradients, packed ----
 * The rank's entries as one vector of tensor_stage_dp_elements, the data-parallel
 * allreduce's: first the replicated ones ([0, tensor_stage_replicated): each layer's
 * LayerNorms, bo and b2, then the final LayerNorm on the last stage), then each layer's split
 * shards, the position embedding on the first stage, and the token embedding's V/t rows last
 * ([tensor_stage_embedding_offset, end)) on the first and the last. */
size_t tensor_stage_replicated(const tensor_stage *ts);
size_t tensor_stage_embedding_offset(const tensor_stage *ts);
/* The gradients accumulated since the last call (every microbatch's, in microbatch order),
 * packed into buf; the accumulators start again from 0. With sequence parallelism the
 * replicated entries are this rank's rows' share: the tensor group's sum is the gradient. */
void tensor_stage_take_grads(tensor_stage *ts, double *buf);
void tensor_stage_get_params(const tensor_stage *ts, double *buf);
void tensor_stage_set_params(tensor_stage *ts, const double *buf);
/* Writes the rank's entries into w, the whole model's vector (models/gpt.h's layout). */
void tensor_stage_export(const tensor_stage *ts, gsl_vector *w);
/* The largest |difference| between the rank's entries and the same entries of w. */
double tensor_stage_diff(const tensor_stage *ts, const gsl_vector *w);
/* Last stage: the sum of the microbatch losses since the last call (each the mean over its
 * b x seq predictions); starts again from 0. */
double tensor_stage_take_loss(tensor_stage *ts);

/* Frees ts; NULL is a no-op. */
void tensor_stage_free(tensor_stage *ts);


/* Bytes of optimizer state per parameter a GPU would hold with Megatron's Adam: with 16-bit
 * parameters (elem_bytes 2) an fp32 master copy, momentum and variance, 12 (ZeRO,
 * Rajbhandari et al. 2020, sec. 3.1); with fp32 parameters momentum and variance, 8. The
 * runs apply no optimizer: this is the estimate's assumption. */
double tensor_optimizer_bytes_per_param(size_t elem_bytes);

/* Bytes of activations one layer keeps for its backward, per microbatch, as Korthikanti et
 * al. 2022 (Table 2) count them with 16-bit activations: s b h (10 + 24/t + 5 a s / (h t)),
 * with sequence parallelism s b h (34 + 5 a s / h) / t, with full recomputation only the
 * layer's input, 2 s b h (/ t with sequence parallelism). */
double tensor_layer_activation_bytes(const tensor_params *p);

#endif

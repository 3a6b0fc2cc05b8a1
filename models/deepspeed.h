#ifndef MODELS_DEEPSPEED_H
#define MODELS_DEEPSPEED_H
/* deepspeed.h - ZeRO-3 as DeepSpeed 0.3.13 to 0.4.0 (March to June 2021, the releases of
 * PTD-P's Table 2) runs it, as a cost model: which parameter tensors of a Megatron GPT layer it
 * partitions and gathers one by one (stage3_param_persistence_threshold), and the host work
 * around each of those collectives, read from its source (deepspeed/runtime/zero/
 * partition_parameters.py and stage3.py at v0.3.14) and PyTorch 1.8's list collectives
 * (torch/lib/c10d/ProcessGroupNCCL.cpp): per rank a Python view and a device copy. No SimGrid. */

#include <stddef.h>

/* DeepSpeed's default stage3_param_persistence_threshold (deepspeed/runtime/zero/constants.py
 * at v0.3.14: 100000 elements; the documentation's table, docs/_pages/config-json.md, says
 * 1e6): parameters with fewer elements are never partitioned away. */
#define DS_PERSISTENCE_DEFAULT 1e5
/* Seconds of one PyTorch view op (narrow, split, view) called from Python on a CUDA tensor: the
 * operator micro-benchmark in pytorch/pytorch#32194 (Jan. 2020, PyTorch 1.5; split of an 8 x 8
 * CUDA tensor, "Forward Execution Time" 2.26 us with the change). */
#define DS_PY_VIEW_S 2.26e-6

/* A parameter tensor: its elements (one tensor rank's share of it). */
typedef struct ds_param {
  const char *name;
  double elems;
} ds_param;

/* A Megatron GPT layer's 12 tensors (LayerNorms, QKV and its bias, the attention's output and
 * its bias, the MLP's two and their biases), tensor rank's share with t-way tensor parallelism
 * (Shoeybi et al. 2019's split): (12h^2 + 7h)/t + 6h in all. Writes 12 into out. */
#define DS_LAYER_PARAMS 12
void ds_layer_params(double h, double t, ds_param out[DS_LAYER_PARAMS]);
/* A stage's other tensors: the word embedding's V/t rows when it is the first or the last
 * stage (the logits share them), the position embedding (s x h) on the first, the final
 * LayerNorm's two on the last. Returns their number (at most 4) written into out. */
size_t ds_rest_params(double h, double t, double vocab, double seq, int first, int last, ds_param out[4]);

/* DeepSpeed pads a tensor of n elements to a multiple of the d ranks (partition_parameters.py's
 * _aligned_size): each rank holds ceil(n / d). */
double ds_aligned(double n, double d);

/* DeepSpeed's default reduce_bucket_size (constants.py at 0.3.14, and its documentation): 5e8
 * gradient elements reduced at a time. */
#define DS_REDUCE_BUCKET_DEFAULT 5e8

/* A bucket of gradients awaiting their reduction: its elements and tensors. */
typedef struct ds_bucket {
  double elems;
  size_t k;
} ds_bucket;
/* stage3.py's reduce_independent_p_g_buckets_and_remove_grads: a gradient of n elements is
 * ready; when the bucket's elements and n exceed `limit` the bucket is reduced first (1, with it
 * in *flushed, then started again; 0 when it was empty or n fits), then n joins it. */
int ds_bucket_add(ds_bucket *b, double n, double limit, ds_bucket *flushed);

/* Host work around one collective: seconds of the CPU thread that the device waits for, and
 * device kernels moving hbm_bytes in all. */
typedef struct ds_work {
  double cpu_s;
  double kernels;
  double hbm_bytes;
} ds_work;

/* _allgather_param of a tensor of n elements (elem_bytes each) over d ranks: a Python loop
 * taking a view of each rank's partition (view_s each), torch.zeros of the gathered tensor
 * and the copy of the rank's own partition into it (2 kernels), then PyTorch's allgather into a
 * flat buffer of its own and a copy of each rank's block into the caller's view (d kernels,
 * each block read and written). */
ds_work ds_gather_work(double n, double d, double elem_bytes, double view_s);
/* _reduce_scatter_gradient: the gradient divided by d first (average_tensor's div_, one
 * kernel reading and writing it), a Python view of each rank's block, and PyTorch's
 * reduce_scatter copying each into a flat buffer of its own (d kernels). */
ds_work ds_scatter_work(double n, double d, double elem_bytes, double view_s);
/* Without contiguous_gradients (stage 3's default at 0.3.14), a bucket's allreduce
 * (buffered_reduce_fallback, allreduce_bucket): its k gradients of n elements in all flattened
 * into one buffer and divided by d (2 kernels), allreduced, copied back (k kernels, a Python view
 * each), and each gradient's partition then copied into its fp32 shard
 * (partition_previous_reduced_grads: k kernels, a view each). */
ds_work ds_allreduce_work(double n, size_t k, double d, double elem_bytes, double view_s);
/* stage3.py's _post_step: the persistent tensors gathered after each step
 * (_allgather_params), one flat allgather of their partitions (its d copies after), then for
 * each tensor and each rank whose partition holds entries of it, three views and a copy in a
 * Python loop. n[0..k) their elements. */
ds_work ds_persist_work(const double *n, size_t k, double d, double elem_bytes, double view_s);

#endif

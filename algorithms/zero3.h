#ifndef ALGORITHMS_ZERO3_H
#define ALGORITHMS_ZERO3_H
/* zero3.h - ZeRO-3 (Rajbhandari et al. SC'20) over one data-parallel group of tensor-parallel
 * GPT stages: what a device gathers before each layer's passes and reduce-scatters after its
 * backward, run by a communicator actor on the device's host in the order the device posts
 * them. Ideal (the default: one collective per layer, the next layer's gather posted ahead)
 * or as DeepSpeed 0.3.13 to 0.4.0 ran it (algorithms/doc/pipeline.md, ZeRO-3 in 3D): one
 * collective per parameter tensor, each waited for alone, the host work of PyTorch 1.8's
 * list collectives around it, NCCL 2.8's ring latency. Timing only. */

#include <stddef.h>
#include <simgrid/forward.h>

#include "algorithms/collectives.h"
#include "algorithms/run.h"
#include "algorithms/tensor_stage.h"
#include "models/nccl.h"

/* The ZeRO-3 keys of [pipeline] (pipeline.h): how a device's ZeRO-3 runs. */
typedef struct zero3_opts {
  int per_tensor;     /* 1: one collective per parameter tensor (DeepSpeed); 0: one per layer */
  double persistence; /* per_tensor: tensors of fewer elements are never partitioned away */
  int prefetch;       /* 1: the next layer's gathers posted ahead, a layer kept from its
                         recomputation to its backward; 0: each gather posted and waited for
                         alone (DeepSpeed 0.3.13-0.4.0's trace, off by one, disabled both) */
  int host;           /* 1: the host work of DeepSpeed's collectives (models/deepspeed.h) */
  int nccl;           /* 1: each collective's latency NCCL 2.8's (models/nccl.h), rounds without
                         their route chain; 0: the rounds' chain over SimGrid's routes */
  int allreduce;      /* 1: gradients allreduced in buckets of DS_REDUCE_BUCKET_DEFAULT elements, as
                         DeepSpeed 0.3 does without contiguous_gradients (its default); 0:
                         reduce-scattered, a layer's (or tensor's) at a time */
} zero3_opts;

/* What one data-parallel group shares: its ring as NCCL models it (members, nodes, channels:
 * the gpu_comm_sms of its first member's host, one SM per channel, else 1; the bus bandwidth of
 * its slowest hop), worked out once from the communicator's hosts. A node is a netzone holding
 * hosts (one <cluster> per DGX in the GPU presets). */
typedef struct zero3_group zero3_group;
zero3_group *zero3_group_create(const coll_comm *dc);
void zero3_group_free(zero3_group *g);
const nccl_ring *zero3_group_ring(const zero3_group *g);

/* One device's stages: chunk i (of n) holds `layers[i]` layers of ts[i], which starts the model
 * when first[i] and ends it when last[i]. */
typedef struct zero3_stages {
  const tensor_params *tp; /* the shapes (hidden, ranks, vocab, seq, recompute) */
  tensor_stage **ts;
  const size_t *layers;
  const int *first, *last;
  size_t n;
} zero3_stages;

typedef struct zero3 zero3;
/* ZeRO-3 for member `member` of the group's communicator dc, on host `host` (its device's), for
 * the device's stages, whose hooks it takes; its communicator actor, named `name`, is started
 * and daemonized. cfg, o, g, dc and the stages outlive it. Free after the engine has run. */
zero3 *zero3_attach(const run_config *cfg, const zero3_opts *o, const zero3_group *g, coll_comm *dc, size_t member,
                    sg_host_t host, const char *name, const zero3_stages *st);
void zero3_free(zero3 *z);

/* Before a pass (backward: recomputation and backward) of stage i: the stage's other entries'
 * gathers, waited for, and its first layer's posted (with prefetch). After a backward pass of
 * stage i: their reduce-scatters posted. */
void zero3_pass_begin(zero3 *z, size_t i, int backward);
void zero3_pass_end(zero3 *z, size_t i, int backward);
/* The flush: with host work, DeepSpeed's gather of the persistent tensors after the step;
 * then every collective done. */
void zero3_flush(zero3 *z);

/* Over the run: elements gathered and reduce-scattered, and one layer's elements. */
void zero3_counts(const zero3 *z, double *gathered, double *scattered, double *layer_elems);

#endif

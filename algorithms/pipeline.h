#ifndef ALGORITHMS_PIPELINE_H
#define ALGORITHMS_PIPELINE_H
/* pipeline.h - pipeline model parallelism (run.algorithm = pipeline): the layers split
 * into stages on p devices, m microbatches per step scheduled as GPipe, 1F1B
 * (PipeDream-Flush) or Megatron's interleaved 1F1B, activations and their gradients sent
 * between stages as messages, gradients accumulated and applied at the flush. */

#include <stddef.h>

#include "algorithms/algorithm.h"
#include "algorithms/collectives.h"
#include "algorithms/metrics.h"
#include "algorithms/pipeline_sched.h"
#include "algorithms/run.h"
#include "algorithms/tensor_stage.h"
#include "models/arch.h"
#include "models/gpt.h"

/* The [pipeline] section (run.algorithm = pipeline): the layers split into
 * stages x chunks contiguous model chunks, chunk c on device c mod stages (device s on
 * hosts[s]); each step runs `microbatches` microbatches of `microbatch` examples through
 * the pipeline in the order `schedule` (a pipeline_schedule) gives, then one
 * synchronous SGD update. */
typedef struct pipeline_params {
  size_t stages;       /* p: devices */
  long microbatches;   /* m: per step */
  long microbatch;     /* b: examples per microbatch */
  int schedule;        /* pipeline_schedule (pipeline_sched.h) */
  size_t chunks;       /* v: model chunks per device (interleaved) */
  int recompute;       /* activation recomputation: stash only each chunk's input */
  double lr;
  char split_text[256]; /* pipeline.split: "balanced", or layers per model chunk "2,1,1" */
  const size_t *split; /* [stages x chunks]: layers of each model chunk, or NULL: balanced by flops (not a
                          key: the descriptor's prepare parses split_text into it) */
  int transformer;     /* 1: the chunks are GPT layers with the shapes of cfg->tensor, each stage a
                          tensor group of tensor.ranks GPUs, tensor.data_parallel pipeline
                          replicas (3D parallelism); 0: dense layers of the shapes */
  int scatter_gather;  /* transformer: PTD-P sec. 4.1, each tensor rank sends its 1/t of a
                          boundary's b s h elements and the receiving group allgathers them */
  int optimizer;       /* a pipeline_optimizer: the update at the flush (Adam: transformer stages) */
  int serial_check;    /* numeric transformer stages: after the run, train the serial GPT on the
                          same batches and report how far the parameters are from it */
  int mirror;          /* transformer, timing only: replicas 1..d-1 mirror replica 0 up to the
                          flush (pipeline.mirror_replicas; the check and the rule in pipeline_config.c) */
  int zero;            /* transformer: 0, or 3: ZeRO-3 over each data-parallel group (pipeline.zero) */
  /* pipeline.zero = 3, how it runs (zero3.h's zero3_opts): one collective per parameter tensor
   * (zero_gather = tensor) of at least zero_persistence elements, the gathers posted ahead
   * (zero_prefetch), DeepSpeed's host work (zero_host), NCCL's ring latency (zero_latency), the
   * gradients allreduced in DeepSpeed's buckets (zero_reduce = allreduce) */
  int zero_tensors;
  double zero_persistence;
  int zero_prefetch;
  int zero_host;
  int zero_nccl;
  int zero_allreduce;
} pipeline_params;

typedef enum pipeline_optimizer {
  PIPELINE_OPT_SGD, /* w -= lr g */
  PIPELINE_OPT_ADAM /* Kingma and Ba 2015 with their b1, b2, eps (models/optim.h) */
} pipeline_optimizer;

/* run.algorithm = pipeline */
extern const algorithm pipeline_algorithm;

typedef struct pipeline pipeline;

/* Per stage (device) measurements after the run, over all steps; for transformer stages,
 * those of the stage's replica 0, tensor rank 0 (forward_s and backward_s include its
 * tensor group's collectives and the allgather of incoming slices, update_s the flush's
 * data-parallel and embedding allreduces, params its gradient elements). */
typedef struct pipeline_stage_stats {
  double forward_s, backward_s, recompute_s; /* time computing (busy = their sum) */
  double update_s;                /* applying the step's update */
  double busy_s, idle_s;          /* idle = makespan - busy - update */
  long peak_stashed;              /* microbatch-chunks whose forward is done and backward not */
  double peak_stash_bytes;        /* elem_bytes x activations kept for them at that peak */
  double params;                  /* parameters it holds */
  double bytes_sent;              /* activations and gradients it sent */
} pipeline_stage_stats;

typedef struct pipeline_result {
  double makespan_s;        /* when the last device finished its last step */
  long steps;
  double bubble_fraction;   /* mean over stages of idle_s / makespan_s */
  double formula;           /* pipeline_bubble_formula */
  double formula_ideal;     /* PTD-P's convention: (p-1)/m or (p-1)/(v*m) */
  double t_forward_s, t_backward_s; /* stage 0's forward and backward of one microbatch
                                       through all its chunks, measured */
  size_t gpus;              /* devices: stages, or stages x tensor.ranks x tensor.data_parallel */
  double p2p_bytes;         /* wire bytes of every device's activation and gradient messages (a
                               mirrored device counts its replica-0 twin's) */
  double model_flops;       /* transformer: tensor_microbatch_flops (the whole model) x m x steps x d */
  double tflops_per_gpu;    /* transformer: model_flops / makespan_s / gpus / 1e12; else 0 */
} pipeline_result;

/* Dense stages: device s runs on cfg->hosts[s], s < stages. Transformer stages (3D): the
 * device of stage s, replica j < d, tensor rank r < t runs on cfg->hosts[(s d + j) t + r]
 * (Megatron-LM's order: a tensor group is t consecutive hosts, a stage's d replicas are
 * adjacent). Returns stages, or stages x t x d. */
size_t pipeline_hosts_needed(const pipeline_params *p, const tensor_params *t);
/* One slot: the steps (device 0 counts them). */
size_t pipeline_metrics_slots(void);

/* Creates the device actors and the evaluator. shapes gives each layer's flops and
 * widths (a virtual net, or model.layers as an arch); a numeric run needs shapes to be
 * cfg->model's layers and trains cfg->model on cfg->train. With p->transformer (3D
 * parallelism) shapes is unused: the chunks are tp's GPT layers, with one
 * communicator per tensor group, per data-parallel group and per embedding pair; with
 * numerics they train the GPT of tp's shapes (models/gpt.h) on the synthetic token language
 * (models/data.h: cfg->sc's data.train and data.test sequences, drawn from the seed). cfg,
 * shapes and m outlive the run. Returns NULL if the configuration is impossible (too few
 * hosts or layers, a split that does not add up, a schedule that refuses p, m, v, numerics
 * with shapes other than the model's, transformer shapes that do not split over
 * tensor.ranks, numeric transformer stages without a vocabulary of at least 4 tokens,
 * pipeline.recompute with transformer stages, Adam with dense stages). Free with
 * pipeline_free after the engine has run. */
pipeline *pipeline_deploy(const run_config *cfg, const pipeline_params *p, const tensor_params *tp, const arch *shapes,
                          metrics *m);
void pipeline_free(pipeline *pl);

/* After the run: the totals, and stage s's measurements (s < stages). */
void pipeline_result_get(const pipeline *pl, pipeline_result *r);
void pipeline_stage_get(const pipeline *pl, size_t s, pipeline_stage_stats *st);
/* Model chunk c's layers [*first, *last] (arch layers, input = 0), c < stages x chunks. */
void pipeline_chunk_layers(const pipeline *pl, size_t c, size_t *first, size_t *last);
/* Transformer stages: the tensor communicator of stage s, replica j, and the data-parallel
 * communicator of stage s, tensor rank r (members in rank order; coll_comm_host names
 * them); NULL for dense stages, and for the second when d = 1. */
const coll_comm *pipeline_tensor_comm(const pipeline *pl, size_t s, size_t j);
const coll_comm *pipeline_dp_comm(const pipeline *pl, size_t s, size_t r);

/* pipeline.zero = 1 or 3 with d > 1, after the run: device 0's (stage 0, replica 0, tensor
 * rank 0) elements allgathered and reduce-scattered over the run, and, with 3, the most
 * elements of one layer of its (what one gather holds; 0 with 1, which gathers no layer on its
 * own). -1 otherwise. */
int pipeline_zero_get(const pipeline *pl, double *gathered, double *scattered, double *layer_elems);

/* Numeric transformer stages, after the run (NULL or NaN otherwise): the whole model's
 * parameters as replica 0's devices hold them (models/gpt.h's layout), its initial ones, the
 * largest |difference| between any device's copy of an entry (every tensor rank's replicated
 * ones, every replica's) and that vector (0 when the copies agree bit for bit), the held-out
 * loss and accuracy before the first step, and the last step's mean training loss. */
typedef struct pipeline_gpt_result {
  const gpt_dims *dims;
  const gsl_vector *w, *w0;
  double copies_diff;
  double initial_loss, initial_accuracy, train_loss;
  size_t train_sequences, test_sequences;
} pipeline_gpt_result;
int pipeline_gpt_get(const pipeline *pl, pipeline_gpt_result *r);

/* The serial GPT trained from w0 for `steps` steps on the batches the run drew (the same
 * seed's stream: replica j's microbatch mb of each step, summed in that order), with the run's
 * optimizer, element by element the same rule: its parameters into w_serial. */
void pipeline_gpt_serial(const pipeline *pl, long steps, gsl_vector *w_serial);

#endif

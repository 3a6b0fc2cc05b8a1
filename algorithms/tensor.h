#ifndef ALGORITHMS_TENSOR_H
#define ALGORITHMS_TENSOR_H
/* tensor.h - Megatron-LM tensor (intra-layer) model parallelism (run.algorithm = tensor):
 * t ranks, one per GPU host, run a stack of GPT layers split as Shoeybi et al. 2019
 * sec. 3 (and, with sequence parallelism, Korthikanti et al. 2022), communicating through
 * the collectives over one tensor communicator. With numerics on, the ranks carry real
 * activations and gradients (models/transformer.h) and the run checks them against the
 * serial layer stack afterwards. */

#include "algorithms/algorithm.h"
#include "algorithms/metrics.h"
#include "algorithms/run.h"
/* The tensor-parallel stage and the shared counts; pipeline.c reaches them through here for
 * now. */
#include "algorithms/tensor_stage.h"

/* run.algorithm = tensor */
extern const algorithm tensor_algorithm;

typedef struct tensor tensor;

typedef struct tensor_result {
  double time_s;        /* simulated time when the last rank finished its last step */
  double step_s;        /* time_s / steps */
  double model_flops;   /* tensor_microbatch_flops x microbatches x steps x data_parallel */
  double tflops_per_gpu; /* model_flops / time_s / (ranks x data_parallel) / 1e12 */
  double dp_elements;   /* d > 1: elements of each rank's data-parallel allreduce; else 0 */
  double dp_allreduce_s; /* d > 1: the longest data-parallel allreduce of any rank and step;
                           dp_overlap: from its first bucket's start to its last one's end */
  size_t dp_buckets;    /* d > 1: data-parallel allreduces per rank and step (1 without
                           dp_overlap); d = 1: 0 */
  int numeric;          /* 1: activations and gradients were real and checked */
  double max_rel_error; /* numeric: over the last microbatch's output and input gradient and
                           the last step's weight gradients of every layer, max |got - ref|
                           relative to the quantity's largest |ref| (serial stack as ref) */
} tensor_result;

/* Checks the shapes split over the ranks (what pipeline's 3D stages check too) and what a
 * numeric tensor run can hold; 0, or -1 with one line in msg starting with the key. */
int tensor_validate(const scenario *sc, const tensor_params *p, char *why, size_t len);

/* ranks x data_parallel */
size_t tensor_hosts_needed(const tensor_params *p);

/* Creates one tensor communicator per data-parallel replica j over cfg->hosts[j t..j t + t-1],
 * with d > 1 one data-parallel communicator per tensor rank, and one actor per rank;
 * records steps in m's slot 0. Returns NULL if the parameters do not split (heads % ranks,
 * hidden % heads, vocab % ranks, with sequence parallelism seq % ranks), hosts are missing or
 * numerics are asked with d > 1 or a vocabulary. cfg and m outlive the run; free with tensor_free after the engine has run. */
tensor *tensor_deploy(const run_config *cfg, const tensor_params *p, metrics *m);
void tensor_free(tensor *t);

/* After the engine has run: the measurements and, for numeric runs, the check. */
void tensor_result_get(const tensor *t, tensor_result *r);

#endif

/* tensor_config.c - the [tensor] section of run.algorithm = tensor (Megatron-LM tensor
 * parallelism, Shoeybi et al. 2019; data parallelism and recomputation as PTD-P, Narayanan
 * et al. 2021): its key table, the scenario checks, the hosts it needs, its memory
 * footprint, the run's state and host checks before it starts, and the algorithm's
 * descriptor. The run itself is tensor.c's, its report
 * tensor_report.c's; the shape checks pipeline shares are tensor_stage.c's. */
#include "algorithms/tensor.h"

#include <stdio.h>
#include <xbt/sysdep.h>

#include "algorithms/keys.h"
#include "algorithms/tensor_host.h"
#include "algorithms/tensor_impl.h"

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
  {"tensor", "comm_hbm", KEY_BOOL, KEY_FIELD(tensor_params, comm_hbm), .def = "off", .unit = "",
   .doc = "`on` (with `dp_overlap` on a GPU host of the kernel model): a bucket's allreduce also takes from the "
          "backward beside it the HBM bandwidth its kernels move (4 bytes of a GPU's HBM per byte it sends, at the "
          "rate it sent in its previous allreduce), in the share of that backward's time its memory-bound kernels "
          "take, on top of the SMs it holds (`platform.comm_sms`; algorithms/doc/tensor.md); `off`: its SMs alone."},
  {"tensor", "rng_pinned", KEY_BOOL, KEY_FIELD(tensor_params, rng_pinned), .def = "off", .unit = "",
   .doc = "With a `model.framework` era that copies RNG states (megatron-2019): `on` copies them at the host "
          "CPU's `pcie_bw`, as if their host side were pinned memory; `off` at the era's measured rate for "
          "pageable memory where that is slower (models/framework.h), as the era's code ran them. Without "
          "such an era it changes nothing."},
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

size_t tensor_hosts_needed(const tensor_params *p) { return p->ranks * dp_of(p); }

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

static int tensor_plan_validate(const scenario *sc, const void *params, char *why, size_t len)
{
  return tensor_validate(sc, params, why, len);
}

static size_t tensor_plan_hosts_needed(const scenario *sc, const void *params, const char **why)
{
  (void)sc;
  *why = "tensor.ranks x tensor.data_parallel";
  return tensor_hosts_needed(params);
}

/* Numerics: every rank's activations and buffers (tensor_validate's per-rank count, and
 * the serial check's as one more rank), and the layers' weights, gradients and their sums
 * over the microbatches; the communicators add an actor per rank with dp_overlap, the
 * host threads one with model.framework. */
static double tensor_plan_footprint(const scenario *sc, const void *params, double *actors, const char **what)
{
  const tensor_params *p = params;
  double n = (double)p->seq * (double)p->microbatch, h = (double)p->hidden, L = (double)p->layers;
  double per_rank = L * (24 * n * h + 2 * (double)p->microbatch * (double)p->heads * (double)p->seq * (double)p->seq /
                                          (double)p->ranks);
  *actors = (double)p->ranks * (double)p->dp * (1 + (p->dp_overlap ? 1 : 0) + (sc->model.framework[0] ? 1 : 0)) + 1;
  *what = "tensor.layers x activations of tensor.seq x tensor.microbatch x tensor.hidden per rank, and 3 copies of the "
          "weights";
  return sc->model.numerics ? (per_rank * ((double)p->ranks + 1) + 3 * L * 12 * h * h) * 8 : 0;
}

/* The run's state: the section as validated, with steps from run.max_steps. */
void *tensor_run_prepare(const run_config *cfg, char *err, size_t len)
{
  (void)err;
  (void)len;
  tensor_run *r = xbt_malloc0(sizeof(*r));
  r->own = *(const tensor_params *)algorithm_params(cfg->sc, &tensor_algorithm);
  r->own.steps = cfg->max_steps > 0 ? cfg->max_steps : 1; /* run.max_steps (tensor.steps, its old name); 0: one */
  r->p = &r->own;
  return r;
}

int tensor_run_check_hosts(void *state, const run_config *cfg, char *err, size_t len)
{
  const tensor_params *p = ((tensor_run *)state)->p;
  if (tensor_check_mem_bw(p, cfg, err, len) != 0)
    return -1;
  return tensor_host_check(cfg, tensor_hosts_needed(p), err, len);
}

const algorithm tensor_algorithm = {
  .name = "tensor",
  .summary = "Megatron-LM tensor parallelism of a GPT layer stack over GPUs (Shoeybi et al. 2019)",
  .section_doc = "Megatron-LM tensor parallelism (`run.algorithm = tensor`): a GPT layer stack split over `ranks` "
                 "GPUs; `model.numerics` (off: timing only), `model.dtype` (wire bytes per element) and "
                 "`model.efficiency` apply",
  ALGORITHM_SECTION(tensor_keys, tensor_params),
  .fail_stop = 1,
  .framework_host = 1,
  .reports = "examples_per_s tflops_per_device mfu",
  .figures = "ranks data_parallel gpus hidden heads layers seq microbatch microbatches layer_flops_forward "
              "model_flops step_time_s tflops_per_gpu dp_allreduce_elements dp_allreduce_s dp_buckets "
              "fraction_of_peak max_rel_error parameters parameters_bytes gradients_bytes optimizer_bytes "
              "activations_bytes total_bytes",
  .plan = {.validate = tensor_plan_validate, .hosts_needed = tensor_plan_hosts_needed,
           .footprint = tensor_plan_footprint},
  .run = {.prepare = tensor_run_prepare, .check_hosts = tensor_run_check_hosts, .deploy = tensor_run_deploy,
          .report = tensor_run_report, .closing = tensor_run_closing, .free = tensor_run_free},
};

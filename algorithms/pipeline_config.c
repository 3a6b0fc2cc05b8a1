/* pipeline_config.c - run.algorithm = pipeline, its descriptor: the [pipeline] keys, what
 * validate refuses (with the [tensor] keys of 3D parallelism), the hosts and the memory a run
 * needs, and, before the run, the check that pipeline.mirror_replicas is exact. The run
 * itself is pipeline.c's, its summary block, pipeline.csv and closing line
 * pipeline_report.c's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/asserts.h>
#include <xbt/dynar.h>
#include <xbt/sysdep.h>

#include "algorithms/pipeline_impl.h"
#include "algorithms/tensor_stage.h"
#include "models/data.h"

/* ---- the [pipeline] keys ------------------------------------------------------ */

static int check_split(const char *v, char *why, size_t len)
{
  char q[KEY_QUOTE_MAX + 8];
  if (strcmp(v, "balanced") == 0 || key_sizes_parse(v, NULL, 0) > 0)
    return 0;
  snprintf(why, len, "%s is neither `balanced` nor a comma-separated list of layer counts (e.g. 2,1,1)",
           key_quote(v, q, sizeof q));
  return -1;
}

static const key_spec pipeline_keys[] = {
  {"pipeline", "stages", KEY_SIZE, KEY_FIELD(pipeline_params, stages), .def = "2", .unit = "hosts",
   .doc = "p: pipeline stages (devices), stage s on host s (with `model = transformer`, t x d GPUs per stage: "
          "see `model`); stages x chunks model chunks need at least as many layers.",
   KEY_GE(1), KEY_LE(4096)},
  {"pipeline", "microbatches", KEY_LONG, KEY_FIELD(pipeline_params, microbatches), .def = "4", .unit = "microbatches",
   .doc = "m: microbatches per step; the interleaved schedule needs a multiple of `stages`.", KEY_GE(1), KEY_LE(100000)},
  {"pipeline", "microbatch", KEY_LONG, KEY_FIELD(pipeline_params, microbatch), .def = "8", .unit = "examples",
   .doc = "b: examples per microbatch; a step trains on microbatches x microbatch examples.", KEY_GE(1)},
  {"pipeline", "schedule", KEY_CHOICE, KEY_FIELD(pipeline_params, schedule), .def = "1f1b", .unit = "",
   .doc = "`gpipe`: every forward, then every backward (Huang et al. 2019); `1f1b`: PipeDream-Flush, "
          "stages - s - 1 warm-up forwards on stage s, then one forward one backward, then the cool-down; "
          "`interleaved`: Megatron's interleaved 1F1B over `chunks` model chunks per device (Narayanan et al. "
          "2021).",
   .choices = "gpipe|1f1b|interleaved"},
  {"pipeline", "chunks", KEY_SIZE, KEY_FIELD(pipeline_params, chunks), .def = "1", .unit = "chunks",
   .doc = "v: model chunks per device; device s holds chunks s, s + stages, ...; 1 for gpipe and 1f1b, at "
          "least 2 for interleaved.",
   KEY_GE(1), KEY_LE(64)},
  {"pipeline", "recompute", KEY_BOOL, KEY_FIELD(pipeline_params, recompute), .def = "off", .unit = "",
   .doc = "`on`: activation recomputation, each stage stashes only its chunks' inputs and runs the forward "
          "again before each backward."},
  {"pipeline", "lr", KEY_DOUBLE, KEY_FIELD(pipeline_params, lr), .def = "0.05", .unit = "",
   .doc = "Learning rate of the synchronous update, applied with the mean gradient of the step's "
          "microbatches x microbatch examples (x data-parallel replicas with transformer stages).",
   KEY_GT(0)},
  {"pipeline", "optimizer", KEY_CHOICE, KEY_FIELD(pipeline_params, optimizer), .def = "sgd", .unit = "",
   .doc = "The update at the flush: `sgd` (w -= lr x gradient) or, with `model = transformer`, `adam` "
          "(Kingma and Ba 2015: b1 0.9, b2 0.999, eps 1e-8, bias-corrected), each device on its own "
          "entries of the model.",
   .choices = "sgd|adam"},
  {"pipeline", "model", KEY_CHOICE, KEY_FIELD(pipeline_params, transformer), .def = "dense", .unit = "",
   .doc = "`dense`: the stages are dense layers of `model.layers` (or `model.virtual`); `transformer`: 3D "
          "parallelism: the stages are GPT layers with the shapes of `[tensor]` (hidden, "
          "heads, layers, seq, microbatch as b, vocab, recompute, sequence_parallel, "
          "async_grad_allreduce, collective), each stage a tensor group of `tensor.ranks` GPUs, "
          "`tensor.data_parallel` pipeline replicas; stage s, replica j, tensor rank r on host "
          "(s x d + j) x t + r; layers split evenly (`split` may set them), the embedding on the first "
          "chunk and the logits on the last; `pipeline.microbatch` is replaced by `tensor.microbatch` and "
          "`pipeline.recompute` by `tensor.recompute`. With `model.numerics = on` the GPT trains on the "
          "synthetic token language (`tensor.vocab` tokens, `data.train` and `data.test` sequences of "
          "`tensor.seq` + 1 tokens), each device holding only its shard.",
   .choices = "dense|transformer"},
  {"pipeline", "serial_check", KEY_BOOL, KEY_FIELD(pipeline_params, serial_check), .def = "off", .unit = "",
   .doc = "Numeric transformer stages: `on`: after the run, train the serial GPT (plain loops, one "
          "process) from the same start on the same batches for the same steps and report in "
          "summary.json how far the 3D run's parameters are from it (`pipeline.check`); five to ten "
          "times the run's CPU (plain loops): for small shapes."},
  {"pipeline", "scatter_gather", KEY_BOOL, KEY_FIELD(pipeline_params, scatter_gather), .def = "on", .unit = "",
   .doc = "Transformer stages: `on`: each tensor rank sends its b x seq x hidden / t slice of a stage "
          "boundary to the same rank of the next stage, which allgathers it in its tensor group (PTD-P "
          "sec. 4.1); `off`: every rank sends the whole b x seq x hidden."},
  {"pipeline", "mirror_replicas", KEY_BOOL, KEY_FIELD(pipeline_params, mirror), .def = "off", .unit = "",
   .doc = "Transformer stages, timing only: `on`: the data-parallel replicas 1 to d-1 do not simulate their "
          "pipeline; each of their devices waits for its twin in replica 0 (same stage, same tensor rank) to "
          "reach the step's flush and runs the flush (the data-parallel and embedding allreduces) with it. "
          "Exact when the replicas are alike and share no link before the flush, which is checked before the "
          "run (same host speeds, routes of the same latency and bandwidth, no link used by two replicas' "
          "tensor groups or stage boundaries, no stragglers, speed spread, jitter or faults; exit 2 "
          "otherwise): d times fewer activities. links.csv and the traffic totals then hold replica 0's "
          "pipeline traffic only (`pipeline.p2p_bytes` counts each mirror as its twin)."},
  {"pipeline", "zero", KEY_INT, KEY_FIELD(pipeline_params, zero), .def = "0", .unit = "stage",
   .doc = "Transformer stages: ZeRO (Rajbhandari et al. SC'20) over each data-parallel group of "
          "`tensor.data_parallel` devices (same stage, same tensor rank). `0`: none (the flush allreduces "
          "the gradient). `1`: at the flush each device reduce-scatters its gradient (ring, one bucket, "
          "after the tied embedding's allreduce), updates its 1/d of the entries, the only ones it keeps "
          "optimizer state for, and allgathers the updated parameters: the bytes of the allreduce they "
          "replace; with numerics too. `2`: refused (its per-microbatch reduce-scatter conflicts with the "
          "pipeline's accumulation of the microbatches' gradients). `3`, timing only: each holds 1/d of its "
          "parameters, gradients and Adam state; every layer's parameters are allgathered (ring, "
          "`model.dtype` bytes) before its forward and again before its backward, the next layer's gather "
          "posted first (prefetch), and its gradient reduce-scattered after its backward while the next "
          "layer's backward runs; the embedding's and final LayerNorm's entries likewise around each pass; "
          "no flush allreduce; layer by layer (no `tensor.fuse_layers` pass); not with `mirror_replicas` "
          "(the replicas meet at every layer).",
   KEY_GE(0), KEY_LE(3)},
  {"pipeline", "zero_gather", KEY_CHOICE, KEY_FIELD(pipeline_params, zero_tensors), .def = "layer", .unit = "",
   .doc = "`zero = 3`: what one collective carries. `layer`: a layer's parameters (and one for the stage's "
          "other entries); `tensor`: one parameter tensor, as DeepSpeed's ZeRO-3 gathers them (a Megatron "
          "layer's 12: LayerNorms, QKV, the attention's output, the MLP's two, their biases), those of fewer "
          "than `zero_persistence` elements never gathered, every gradient reduce-scattered.",
   .choices = "layer|tensor"},
  {"pipeline", "zero_persistence", KEY_DOUBLE, KEY_FIELD(pipeline_params, zero_persistence), .def = "100000",
   .unit = "elements",
   .doc = "`zero_gather = tensor`: DeepSpeed's stage3_param_persistence_threshold, its default (constants.py at "
          "0.3.14; its documentation's table says 1e6): tensors of fewer elements stay whole on every device.",
   KEY_GE(0)},
  {"pipeline", "zero_prefetch", KEY_BOOL, KEY_FIELD(pipeline_params, zero_prefetch), .def = "on", .unit = "",
   .doc = "`zero = 3`: `on`: each layer's gathers are posted while the previous layer computes, a layer's "
          "parameters kept from its recomputation to its backward; `off`: as DeepSpeed 0.3.13 to 0.4.0 ran "
          "(its trace off by one step disabled prefetching, DeepSpeed issue #1069): each gather posted when "
          "needed and waited for alone, a layer gathered again for its backward, the device waiting for "
          "every reduce-scatter before its next gather (torch.cuda.synchronize).",
   },
  {"pipeline", "zero_host", KEY_BOOL, KEY_FIELD(pipeline_params, zero_host), .def = "off", .unit = "",
   .doc = "`zero = 3`: `on`: the host work of DeepSpeed 0.3's collectives (models/deepspeed.h): per collective "
          "and rank a Python view (2.26 us) and a device copy (PyTorch 1.8's list allgather and "
          "reduce-scatter), and after each step the gather of the persistent tensors with its Python loop "
          "over tensors and ranks.",
   },
  {"pipeline", "zero_latency", KEY_CHOICE, KEY_FIELD(pipeline_params, zero_nccl), .def = "route", .unit = "",
   .doc = "`zero = 3`: the latency of each gather and reduce-scatter. `route`: the rounds' chain of ring "
          "steps over SimGrid's routes; `nccl`: NCCL 2.8's own model (models/nccl.h: a hardware latency "
          "per ring step, NVLink inside a node, the network between nodes, with the protocol NCCL picks "
          "for the bytes), a job's collectives then one round of their bytes (needs run.collectives = "
          "rounds).",
   .choices = "route|nccl"},
  {"pipeline", "zero_reduce", KEY_CHOICE, KEY_FIELD(pipeline_params, zero_allreduce), .def = "scatter", .unit = "",
   .doc = "`zero = 3`: how gradients are reduced. `scatter`: reduce-scattered after each layer's backward; "
          "`allreduce`: as DeepSpeed 0.3 does without contiguous_gradients (its stage-3 default), each "
          "gradient joins a bucket, and a bucket is allreduced whole (then each device keeps its partition) "
          "when the next gradient would take it past reduce_bucket_size, 5e8 elements.",
   .choices = "scatter|allreduce"},
  {"pipeline", "split", KEY_STR, KEY_FIELD(pipeline_params, split_text), .def = "balanced", .unit = "layers",
   .doc = "Layers of each model chunk in order, `stages x chunks` counts adding up to the dense layers "
          "(e.g. `2,1,1`); `balanced`: contiguous chunks whose largest training flops are smallest.",
   .check = check_split},
};

/* ---- what a run needs, and what validate refuses ------------------------------ */

/* A numeric 3D run holds at most 2^27 doubles (1 GiB), as a numeric tensor run. */
#define TF_NUMERIC_MAX (1.0 * (1L << 27))

/* Dense layers of the network whose shapes the run times: model.virtual's, else model.layers'. */
static size_t shape_layers(const scenario *sc)
{
  const arch *v = sc->model.virtual_net[0] ? arch_virtual_find(sc->model.virtual_net) : NULL;
  if (v)
    return arch_n_layers(v) - 1;
  int n = key_sizes_parse(sc->model.layers, NULL, 0);
  return n > 1 ? (size_t)n - 1 : 0;
}

static const tensor_params *tensor_of(const scenario *sc)
{
  const tensor_params *t = algorithm_section(sc, &pipeline_algorithm, "tensor");
  xbt_assert(t, "pipeline: no [tensor] section registered");
  return t;
}

/* Doubles a numeric 3D run holds (tensor_stage_numerics), over every device: per layer and
 * stash slot a transformer_part (rows x h x 6, n x h x 4, n x h/t x 8, n x 4h/t x 3, the
 * attention's b a s^2 / t), the layer's full-layout weights and gradient (12h^2 + 13h each,
 * NaN outside the shard), each microbatch's layer inputs, and on the last stage a head per
 * microbatch (2 n h + n V/t). */
static double tf_numeric_doubles(const pipeline_params *p, const tensor_params *q)
{
  double t = (double)q->ranks, h = (double)q->hidden, b = (double)q->microbatch, s = (double)q->seq;
  double n = b * s, rows = q->seqpar ? n / t : n, m = (double)p->microbatches, lay = (double)q->layers;
  double part = rows * h * 6 + n * h * 4 + n * h / t * 8 + n * 4 * h / t * 3 + b * (double)q->heads * s * s / t;
  double per_layer = part * (q->recompute ? 1 : m) + 2 * (12 * h * h + 13 * h) + m * rows * h;
  double head = m * (2 * n * h + n * (double)q->vocab / t);
  double gpus_per_stage = t * (double)(q->dp > 0 ? q->dp : 1);
  return gpus_per_stage * (lay * per_layer + head);
}

/* Numeric transformer stages: what the GPT and its token language need. */
static int tf_numeric_invalid(const scenario *sc, const pipeline_params *p, const tensor_params *q, char *why,
                              size_t len)
{
  if (q->vocab < DATA_TOKENS_SUCCESSORS)
    snprintf(why, len, "tensor.vocab: a numeric GPT needs a vocabulary of at least %d tokens (the synthetic "
             "language's successors), got %zu", DATA_TOKENS_SUCCESSORS, q->vocab);
  else if (strncmp(sc->data.source, "synthetic-", 10) != 0)
    snprintf(why, len, "data.source: numeric transformer stages train on the synthetic token language; '%s' does "
             "not apply (data.train and data.test give its sequences)", sc->data.source);
  else if (tf_numeric_doubles(p, q) > TF_NUMERIC_MAX)
    snprintf(why, len, "tensor.hidden: a numeric 3D run this large holds about %.3g doubles, more than 2^27; set "
             "model.numerics = off for a timing-only run", tf_numeric_doubles(p, q));
  else
    return 0;
  return 1;
}

/* What the stages' kind allows (pipeline.model: transformer or dense): recomputation,
 * virtual networks, the optimizer, ZeRO's stages, mirrored replicas. 1 with why written
 * if a key asks for what the kind does not do, 0 otherwise. */
static int stage_kind_invalid(const scenario *sc, const pipeline_params *p, const tensor_params *tp, char *why,
                              size_t len)
{
  int tf = p->transformer;
  if (tf && p->recompute) {
    snprintf(why, len, "pipeline.recompute: transformer stages recompute as tensor.recompute says; set "
             "pipeline.recompute = off and tensor.recompute = on");
    return 1;
  }
  if (tf && (tensor_validate_shapes(tp, why, len) != 0 || tensor_validate_fuse(sc, tp, why, len) != 0))
    return 1;
  if (tf && sc->model.virtual_net[0]) {
    snprintf(why, len, "model.virtual: transformer stages are timed by [tensor]'s GPT shapes; a virtual network "
             "(%s, dense or locally connected layers) cannot time them", sc->model.virtual_net);
    return 1;
  }
  if (!tf && p->optimizer != PIPELINE_OPT_SGD) {
    snprintf(why, len, "pipeline.optimizer: adam updates transformer stages (pipeline.model = transformer); dense "
             "stages update with sgd");
    return 1;
  }
  if (p->zero == 2) {
    snprintf(why, len, "pipeline.zero: 3D stages run ZeRO's stage 1 or 3, or none (0), not 2: stage 2 would "
             "reduce-scatter each microbatch's gradient, which the pipeline accumulates over its microbatches "
             "first (use 1, as PTD-P and Megatron-LM pair ZeRO-1 with pipelining)");
    return 1;
  }
  if (p->zero && !tf) {
    snprintf(why, len, "pipeline.zero: ZeRO shards transformer stages (pipeline.model = transformer); dense stages "
             "run none");
    return 1;
  }
  if (p->zero == 3 && sc->model.numerics) {
    snprintf(why, len, "pipeline.zero: ZeRO-3 shards transformer stages (pipeline.model = transformer) in timing-only "
             "runs (model.numerics = off)");
    return 1;
  }
  if (p->zero == 3 && p->zero_nccl && sc->run.collectives != COLL_ROUNDS) {
    snprintf(why, len, "pipeline.zero_latency: nccl replaces the latency of a round (run.collectives = rounds); "
             "message-level collectives take theirs from the routes, step by step");
    return 1;
  }
  if (p->zero == 3 && p->mirror && tp->dp > 1) {
    snprintf(why, len, "pipeline.mirror_replicas: with pipeline.zero = 3 the %zu replicas gather every layer "
             "together, so none can mirror another; set mirror_replicas = off", tp->dp);
    return 1;
  }
  if (tf && sc->model.numerics && tf_numeric_invalid(sc, p, tp, why, len))
    return 1;
  if (p->mirror && (!tf || sc->model.numerics)) {
    snprintf(why, len, "pipeline.mirror_replicas: mirrors the data-parallel replicas of transformer stages "
             "(pipeline.model = transformer) in timing-only runs (model.numerics = off): each replica trains "
             "on its own data");
    return 1;
  }
  return 0;
}

/* 1 with why written if a key set away from its default has no effect on these stages. */
static int inert_key_set(const pipeline_params *p, char *why, size_t len)
{
  int tf = p->transformer;
  size_t nk = sizeof pipeline_keys / sizeof pipeline_keys[0];
  if (tf && key_changed(pipeline_keys, nk, p, "microbatch")) {
    snprintf(why, len, "pipeline.microbatch: has no effect with pipeline.model = transformer, whose microbatch is "
             "tensor.microbatch sequences");
    return 1;
  }
  if (!tf && key_changed(pipeline_keys, nk, p, "scatter_gather")) {
    snprintf(why, len, "pipeline.scatter_gather: has no effect on dense stages (pipeline.model = dense): it splits a "
             "transformer stage boundary over its tensor ranks");
    return 1;
  }
  static const char *const zkeys[] = {"zero_gather", "zero_persistence", "zero_prefetch", "zero_host", "zero_latency",
                                      "zero_reduce"};
  for (size_t i = 0; i < sizeof zkeys / sizeof zkeys[0]; i++)
    if (p->zero != 3 && key_changed(pipeline_keys, nk, p, zkeys[i])) {
      snprintf(why, len, "pipeline.%s: has no effect without ZeRO-3 (pipeline.zero = 3)", zkeys[i]);
      return 1;
    }
  if (!p->zero_tensors && key_changed(pipeline_keys, nk, p, "zero_persistence")) {
    snprintf(why, len, "pipeline.zero_persistence: has no effect with pipeline.zero_gather = layer, which gathers "
             "every tensor of a layer together");
    return 1;
  }
  return 0;
}

/* The schedule's layout: chunks per device, microbatches, the layers the stages split
 * (pipeline.split), and what numerics need. 1 with why written if it does not fit. */
static int layout_invalid(const scenario *sc, const pipeline_params *p, const tensor_params *tp, char *why,
                          size_t len)
{
  int inter = p->schedule == PIPELINE_INTERLEAVED, tf = p->transformer;
  long chunks = (long)(p->stages * p->chunks), layers = tf ? (long)tp->layers : (long)shape_layers(sc);
  size_t counts[SETTINGS_MAX_LAYERS];
  int n = strcmp(p->split_text, "balanced") == 0 ? 0 : key_sizes_parse(p->split_text, counts, SETTINGS_MAX_LAYERS);
  long sum = 0;
  for (int i = 0; i < n; i++)
    sum += (long)counts[i];
  if (!inter && p->chunks != 1)
    snprintf(why, len, "pipeline.chunks: %zu chunks per device need pipeline.schedule = interleaved (%s runs one)",
             p->chunks, pipeline_schedule_name((pipeline_schedule)p->schedule));
  else if (inter && p->chunks < 2)
    snprintf(why, len, "pipeline.chunks: the interleaved schedule needs at least 2 model chunks per device, got %zu",
             p->chunks);
  else if (inter && p->microbatches % (long)p->stages != 0)
    snprintf(why, len, "pipeline.microbatches: the interleaved schedule needs a multiple of pipeline.stages = %zu, "
             "got %ld", p->stages, p->microbatches);
  else if (chunks > layers)
    snprintf(why, len, "%s: the %s has %ld layers, fewer than the %ld that pipeline.stages x pipeline.chunks = %zu x %zu "
             "need (more layers, or fewer stages)", tf ? "tensor.layers" : sc->model.virtual_net[0] ? "model.virtual"
             : "model.layers", tf ? "transformer" : sc->model.virtual_net[0] ? "virtual network" : "model", layers,
             chunks, p->stages, p->chunks);
  else if (n < 0 || (n > 0 && (n != chunks || sum != layers)))
    snprintf(why, len, "pipeline.split: '%s' must give %ld layer counts (stages x chunks) adding up to the %ld layers",
             p->split_text, chunks, layers);
  else if (sc->model.numerics && sc->model.virtual_net[0] && !tf)
    snprintf(why, len, "model.virtual: a numeric pipeline splits model.layers; time a virtual network (%s) with "
             "model.numerics = off", sc->model.virtual_net);
  else if (!sc->model.numerics && sc->run.target_accuracy > 0)
    snprintf(why, len, "run.target_accuracy: a timing-only pipeline (model.numerics = off) has no accuracy to reach");
  else
    return 0;
  return 1;
}

static int pipeline_plan_validate(const scenario *sc, const void *params, char *why, size_t len)
{
  const pipeline_params *p = params;
  const tensor_params *tp = tensor_of(sc);
  if (stage_kind_invalid(sc, p, tp, why, len) || inert_key_set(p, why, len) || layout_invalid(sc, p, tp, why, len))
    return -1;
  return 0;
}

static size_t pipeline_plan_hosts_needed(const scenario *sc, const void *params, const char **why)
{
  const pipeline_params *p = params;
  *why = p->transformer ? "pipeline.stages x tensor.ranks x tensor.data_parallel" : "pipeline.stages";
  return pipeline_hosts_needed(p, tensor_of(sc));
}

/* Dense numerics: the layers' parameters, gradients and accumulated gradients (split over
 * the stages, all of them once), and the stash: at most every microbatch's activations of
 * every layer, forward and backward. Numeric 3D stages: tf_numeric_doubles. */
static double pipeline_plan_footprint(const scenario *sc, const void *params, double *actors, const char **what)
{
  const pipeline_params *p = params;
  *actors = (double)pipeline_hosts_needed(p, tensor_of(sc)) + 2;
  *what = "3 copies of model.layers' parameters, and pipeline.microbatches x pipeline.microbatch activations of "
          "every layer";
  if (!sc->model.numerics)
    return 0;
  if (p->transformer)
    return tf_numeric_doubles(p, tensor_of(sc)) * 8;
  size_t sizes[SETTINGS_MAX_LAYERS];
  int n = key_sizes_parse(sc->model.layers, sizes, SETTINGS_MAX_LAYERS);
  double width = 0;
  for (int l = 0; l < n; l++)
    width += (double)sizes[l];
  return (3 * algorithm_layers_params(sc) + 2 * (double)p->microbatches * (double)p->microbatch * width) * 8;
}

/* ---- the run's state: the section as the run uses it --------------------------- */

static void *pipeline_run_prepare(const run_config *cfg, char *err, size_t len)
{
  (void)err;
  (void)len;
  pipeline_run *r = xbt_malloc0(sizeof(*r));
  r->p = *(const pipeline_params *)algorithm_params(cfg->sc, &pipeline_algorithm);
  r->tp = tensor_of(cfg->sc);
  r->p.split = NULL;
  if (strcmp(r->p.split_text, "balanced") != 0 && key_sizes_parse(r->p.split_text, r->split, SETTINGS_MAX_LAYERS) > 0)
    r->p.split = r->split; /* checked by validate */
  if (r->p.transformer)
    r->p.microbatch = (long)r->tp->microbatch;
  r->shapes = run_shapes(cfg, &r->own_shapes);
  return r;
}

/* ---- mirror_replicas: when mirroring is exact ------------------------------------------ *
 *
 * Before its flush a replica's devices talk only inside the replica: ring steps (and, for
 * other collectives, any pair) inside a stage's tensor group, boundary messages between a
 * stage's ranks and the next or previous stage's (the last to the first with interleaving),
 * and the embedding's pair of the first and last stages. Replica j then takes exactly replica
 * 0's times when its hosts compute alike (the same speed and cores as their twins, nothing
 * that slows one host: stragglers, speed spread, jitter, faults), every route it uses has the
 * same latency and bandwidth as its twin route, and no link carries two replicas' traffic
 * (SimGrid shares a link's bandwidth among the flows on it). */

typedef struct mirror_link {
  const void *link;
  size_t replica;
} mirror_link;

static int cmp_mirror_link(const void *a, const void *b)
{
  const mirror_link *x = a, *y = b;
  uintptr_t p = (uintptr_t)x->link, q = (uintptr_t)y->link;
  return p < q ? -1 : p > q ? 1 : x->replica < y->replica ? -1 : x->replica > y->replica;
}

static sg_host_t replica_host(const run_config *cfg, size_t dp, size_t t, size_t s, size_t j, size_t r)
{
  return cfg->hosts[(s * dp + j) * t + r];
}

static int check_mirror(const pipeline_run *run, const run_config *cfg, char *err, size_t len)
{
  size_t p = run->p.stages, t = run->tp->ranks, dp = run->tp->dp > 0 ? run->tp->dp : 1;
  if (!run->p.mirror || dp == 1)
    return 0;
  const scenario *sc = cfg->sc;
  if (sc->faults.stragglers[0] || sc->platform.speed_spread > 0 || sc->platform.jitter > 0 ||
      sc->faults.host_failures[0] || sc->faults.link_failures[0] || sc->faults.link_degrade[0]) {
    snprintf(err, len, "pipeline.mirror_replicas: replicas mirror replica 0 only when their hosts compute alike; "
             "stragglers, platform.speed_spread, platform.jitter and [faults] make them differ");
    return -1;
  }
  for (size_t j = 1; j < dp; j++)
    for (size_t s = 0; s < p; s++)
      for (size_t r = 0; r < t; r++) {
        sg_host_t h = replica_host(cfg, dp, t, s, j, r), h0 = replica_host(cfg, dp, t, s, 0, r);
        if (sg_host_get_speed(h) != sg_host_get_speed(h0) || sg_host_core_count(h) != sg_host_core_count(h0)) {
          snprintf(err, len, "pipeline.mirror_replicas: host %s (replica %zu) does not compute as %s (replica 0)",
                   sg_host_get_name(h), j, sg_host_get_name(h0));
          return -1;
        }
      }
  /* the pairs a replica's devices talk over before the flush: (stage, rank) -> (stage, rank) */
  size_t cap = 1024, n_links = 0;
  mirror_link *links = xbt_malloc(cap * sizeof(*links));
  xbt_dynar_t route = xbt_dynar_new(sizeof(sg_link_t), NULL);
  int bad = 0;
  for (size_t s = 0; s < p && !bad; s++)
    for (size_t s2 = 0; s2 < p && !bad; s2++) {
      if (s2 != s && s2 != (s + 1) % p && s != (s2 + 1) % p) /* adjacent, the last and first too */
        continue;
      for (size_t r = 0; r < t && !bad; r++)
        for (size_t r2 = 0; r2 < t && !bad; r2++) {
          if (s2 == s && r2 == r)
            continue;
          sg_host_t a0 = replica_host(cfg, dp, t, s, 0, r), b0 = replica_host(cfg, dp, t, s2, 0, r2);
          double lat0 = sg_host_get_route_latency(a0, b0), bw0 = sg_host_get_route_bandwidth(a0, b0);
          for (size_t j = 0; j < dp && !bad; j++) {
            sg_host_t a = replica_host(cfg, dp, t, s, j, r), b = replica_host(cfg, dp, t, s2, j, r2);
            if (j > 0 && (sg_host_get_route_latency(a, b) != lat0 || sg_host_get_route_bandwidth(a, b) != bw0)) {
              snprintf(err, len, "pipeline.mirror_replicas: the route %s -> %s (replica %zu) differs from its twin "
                       "%s -> %s (replica 0) in latency or bandwidth", sg_host_get_name(a), sg_host_get_name(b), j,
                       sg_host_get_name(a0), sg_host_get_name(b0));
              bad = 1;
              break;
            }
            xbt_dynar_reset(route);
            sg_host_get_route(a, b, route);
            unsigned i;
            sg_link_t l;
            xbt_dynar_foreach (route, i, l) {
              if (n_links == cap)
                links = xbt_realloc(links, (cap *= 2) * sizeof(*links));
              links[n_links++] = (mirror_link){l, j};
            }
          }
        }
    }
  xbt_dynar_free(&route);
  if (!bad) {
    qsort(links, n_links, sizeof(*links), cmp_mirror_link);
    for (size_t i = 1; i < n_links && !bad; i++)
      if (links[i].link == links[i - 1].link && links[i].replica != links[i - 1].replica) {
        snprintf(err, len, "pipeline.mirror_replicas: replicas %zu and %zu both use link %s before the flush, where "
                 "their traffic would meet; mirroring would not be exact", links[i - 1].replica, links[i].replica,
                 sg_link_get_name((const_sg_link_t)links[i].link));
        bad = 1;
      }
  }
  xbt_free(links);
  return bad ? -1 : 0;
}

/* ---- the run: check, deploy, free -------------------------------------------- */

/* Dense stages whose microbatch computes in far less time than a message takes to cross
 * between stages measure the network, not pipelining (every stage waits, bubble near 1):
 * said in one line, as a warning, since such a run is valid. A microbatch's forward on one
 * chunk is taken as the model's forward flops over the chunks, at stage 0's host speed as
 * compute_execute spends it. */
#define PIPELINE_WARN_RATIO 100
static void warn_latency_bound(const pipeline_run *r, const run_config *cfg)
{
  if (r->p.stages < 2 || cfg->n_hosts < 2 || r->shapes == NULL)
    return;
  double fwd = 0;
  for (size_t l = 1; l < arch_n_layers(r->shapes); l++)
    fwd += arch_layer_train_flops(r->shapes, l) / 3; /* training flops are 3x the forward */
  double f = cfg->speed_factor > 0 ? cfg->speed_factor : 1;
  double t_mb = fwd * (double)r->p.microbatch / (double)(r->p.stages * r->p.chunks) /
                (sg_host_get_speed(cfg->hosts[0]) * cfg->efficiency * cfg->cores * f);
  double lat = sg_host_get_route_latency(cfg->hosts[0], cfg->hosts[1]);
  if (lat > 0 && t_mb * PIPELINE_WARN_RATIO < lat)
    fprintf(stderr,
            "dtsim: warning: pipeline: a microbatch's forward takes about %.2g s of compute per chunk, over %d times "
            "less than the %.2g s latency between stages: the run measures the network (bubble near 1), not "
            "pipelining; raise pipeline.microbatch or the layers' widths, or use a faster network\n",
            t_mb, PIPELINE_WARN_RATIO, lat);
}

static int pipeline_run_check_hosts(void *state, const run_config *cfg, char *err, size_t len)
{
  pipeline_run *r = state;
  if (!r->p.transformer) {
    warn_latency_bound(r, cfg);
    return 0;
  }
  return tensor_check_mem_bw(r->tp, cfg, err, len) != 0 ? -1 : check_mirror(r, cfg, err, len);
}

static void pipeline_run_deploy(void *state, const run_config *cfg, metrics *m)
{
  pipeline_run *r = state;
  r->pl = pipeline_deploy(cfg, &r->p, r->tp, r->shapes, m);
  xbt_assert(r->pl, "pipeline_deploy refused a configuration the scenario checked");
}

static void pipeline_run_free(void *state)
{
  pipeline_run *r = state;
  pipeline_free(r->pl);
  arch_free(r->own_shapes);
  xbt_free(r);
}

const algorithm pipeline_algorithm = {
  .name = "pipeline",
  .summary = "pipeline parallelism: layer stages on hosts, GPipe / 1F1B / interleaved microbatch schedules with a flush",
  .section_doc = "pipeline model parallelism (`run.algorithm = pipeline`): the layers split into stages on `stages` "
                 "hosts, `microbatches` microbatches per step scheduled as GPipe, 1F1B (PipeDream-Flush) or Megatron's "
                 "interleaved 1F1B, one synchronous update per step; `model.numerics` (off: timing only), "
                 "`model.dtype` (wire bytes per element) and `model.efficiency` apply",
  ALGORITHM_SECTION(pipeline_keys, pipeline_params),
  .reads = "tensor",
  .files = "pipeline.csv",
  .trains_layers = 1,
  .uses_data = 1,
  .fail_stop = 1,
  .reports = "final_loss final_accuracy examples_per_s tflops_per_device mfu",
  .figures = "stages microbatches microbatch chunks makespan_s bubble_fraction formula formula_ideal "
              "t_forward_s t_backward_s stage parameters parameters_bytes gradients_bytes gathered_bytes "
              "optimizer_bytes stash_bytes total_bytes gpus p2p_bytes tensor_ranks data_parallel model_flops "
              "tflops_per_gpu tensor_groups dp_groups layer_elements gathered_elements "
              "reduce_scattered_elements vocab seq hidden heads layers params lr train_sequences test_sequences "
              "loss_floor initial_loss initial_accuracy initial_perplexity final_perplexity train_loss "
              "copies_max_diff steps max_abs_error max_moved max_rel_error",
  .plan = {.validate = pipeline_plan_validate, .hosts_needed = pipeline_plan_hosts_needed,
           .footprint = pipeline_plan_footprint},
  .run = {.prepare = pipeline_run_prepare, .check_hosts = pipeline_run_check_hosts,
          .deploy = pipeline_run_deploy, .report = pipeline_report, .closing = pipeline_closing,
          .free = pipeline_run_free},
};

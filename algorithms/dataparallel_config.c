/* dataparallel_config.c - synchronous data parallelism's descriptor (run.algorithm =
 * dataparallel): its keys, their validation, the hosts and fault roles it needs, and the
 * run's preparation, deployment and release. */
#include <stdio.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/dataparallel_impl.h"
#include "models/data.h"

/* ---- the descriptor: run.algorithm = dataparallel -------------------------------- */

static const key_spec dataparallel_keys[] = {
  {"dataparallel", "replicas", KEY_INT, KEY_FIELD(dataparallel_params, replicas), .def = "4", .unit = "replicas",
   .doc = "Replicas, replica r on host r with its own data shard and random stream.", KEY_GE(1), KEY_LE(1000000)},
  {"dataparallel", "batch", KEY_LONG, KEY_FIELD(dataparallel_params, batch), .def = "32", .unit = "examples",
   .doc = "Minibatch size of each replica; a step trains on replicas x batch examples.", KEY_GT(0)},
  {"dataparallel", "lr", KEY_DOUBLE, KEY_FIELD(dataparallel_params, lr), .def = "0.05", .unit = "",
   .doc = "Learning rate of the update every replica applies with the mean of the replicas' gradients.",
   KEY_GT(0)},
  {"dataparallel", "collective", KEY_CHOICE, KEY_FIELD(dataparallel_params, algo), .def = "ring", .unit = "",
   .doc = "Allreduce of each bucket: `ring`, `halving-doubling` (Rabenseifner) or `tree` (binomial "
          "reduce + broadcast), as `collective.algorithm`.",
   .choices = "ring|halving-doubling|tree"},
  {"dataparallel", "bucket_mb", KEY_DOUBLE, KEY_FIELD(dataparallel_params, bucket_mb), .def = "25", .unit = "MiB",
   .doc = "Gradient bucket size (PyTorch DDP's bucket_cap_mb): whole layers from the last one "
          "backwards until their wire bytes (`model.dtype`) reach this; 0: one bucket, the whole model.",
   KEY_GE(0)},
  {"dataparallel", "overlap", KEY_BOOL, KEY_FIELD(dataparallel_params, overlap), .def = "on", .unit = "",
   .doc = "`on`: a bucket's allreduce starts as soon as backward has produced it, overlapping the "
          "rest of backward; `off`: all buckets start after backward."},
  {"dataparallel", "zero", KEY_INT, KEY_FIELD(dataparallel_params, zero), .def = "0", .unit = "stage",
   .doc = "ZeRO's stage (Rajbhandari et al. SC'20): 0 every replica holds everything (DDP); 1 each holds "
          "its shard of the optimizer state, reduce-scatters the gradients per bucket, updates its shard "
          "and allgathers the parameters; 2 the same, and it holds only its shard of the gradients; 3 "
          "the parameters too, each layer allgathered "
          "before its forward and its backward (FSDP).",
   KEY_GE(0), KEY_LE(3)},
  {"dataparallel", "optimizer", KEY_CHOICE, KEY_FIELD(dataparallel_params, optimizer), .def = "sgd", .unit = "",
   .doc = "The update: `sgd` (w -= lr x mean gradient) or `adam` (Kingma and Ba, defaults b1 0.9, "
          "b2 0.999, eps 1e-8, with `dataparallel.lr`).",
   .choices = "sgd|adam"},
  {"dataparallel", "compress", KEY_CHOICE, KEY_FIELD(dataparallel_params, compress), .def = "none", .unit = "",
   .doc = "Gradient compression with error feedback: `none` (the allreduce), `topk` (DGC), `onebit`, `qsgd` "
          "(allgather of every replica's message) or `powersgd` (allreduces of its factors); "
          "algorithms/doc/compression.md.",
   .choices = "none|topk|onebit|qsgd|powersgd"},
  {"dataparallel", "compress_ratio", KEY_DOUBLE, KEY_FIELD(dataparallel_params, compress_ratio), .def = "0.01",
   .unit = "", .doc = "`topk`: fraction of each tensor's elements a replica sends.", KEY_GT(0), KEY_LE(1)},
  {"dataparallel", "compress_momentum", KEY_DOUBLE, KEY_FIELD(dataparallel_params, compress_momentum),
   .def = "0", .unit = "", .doc = "`topk`: DGC's momentum correction factor (0: plain error feedback).", KEY_GE(0),
   KEY_LT(1)},
  {"dataparallel", "compress_warmup", KEY_LONG, KEY_FIELD(dataparallel_params, compress_warmup), .def = "0",
   .unit = "steps", .doc = "`topk`: DGC's warm-up, density 25%, 6.25%, 1.56%, 0.39% a quarter each, then "
                           "`compress_ratio` (never below it); 0: none.", KEY_GE(0)},
  {"dataparallel", "compress_levels", KEY_INT, KEY_FIELD(dataparallel_params, compress_levels), .def = "15",
   .unit = "levels", .doc = "`qsgd`: s, the quantisation levels of |v_i| / ||v||_2.", KEY_GE(1), KEY_LE(1 << 20)},
  {"dataparallel", "compress_rank", KEY_INT, KEY_FIELD(dataparallel_params, compress_rank), .def = "4",
   .unit = "", .doc = "`powersgd`: r, the rank of the factors.", KEY_GE(1), KEY_LE(1 << 20)},
  {"dataparallel", "local_steps", KEY_LONG, KEY_FIELD(dataparallel_params, local_steps), .def = "1",
   .unit = "steps", .doc = "Local SGD: replicas step on their own gradients and average their models by "
                           "allreduce every H steps; 1: the gradients' allreduce every step.", KEY_GE(1)},
};

static int dataparallel_plan_validate(const scenario *sc, const void *params, char *why, size_t len)
{
  const dataparallel_params *p = params;
  if (p->local_steps > 1 && p->compress != COMPRESS_NONE) {
    snprintf(why, len, "dataparallel.local_steps: local SGD exchanges models, not gradients; it does not combine "
             "with dataparallel.compress = %s", compress_method_name((compress_method)p->compress));
    return -1;
  }
  if (p->zero > 0 && (p->compress != COMPRESS_NONE || p->local_steps > 1)) {
    snprintf(why, len, "dataparallel.zero: ZeRO's stage %d reduce-scatters the dense gradient; it does not combine "
             "with %s", p->zero, p->local_steps > 1 ? "local SGD (dataparallel.local_steps)"
                                                   : "dataparallel.compress");
    return -1;
  }
  if (sc->model.numerics && sc->model.virtual_net[0]) {
    snprintf(why, len, "model.virtual: dataparallel reduces the numeric model's gradient buckets; time a virtual "
             "network (%s) with model.numerics = off", sc->model.virtual_net);
    return -1;
  }
  return 0;
}

static size_t dataparallel_plan_hosts_needed(const scenario *sc, const void *params, const char **why)
{
  (void)sc;
  *why = "dataparallel.replicas";
  return (size_t)((const dataparallel_params *)params)->replicas;
}

/* [faults]: replicaK is replica K's host. */
static long dataparallel_plan_fault_role(const scenario *sc, const char *name, size_t n_hosts)
{
  (void)n_hosts;
  long k, R = ((const dataparallel_params *)algorithm_params(sc, &dataparallel_algorithm))->replicas;
  return run_role_number(name, "replica", &k) && k >= 0 && k < R ? k : -1;
}


static void *dataparallel_run_prepare(const run_config *cfg, char *err, size_t len)
{
  const dataparallel_params *p = algorithm_params(cfg->sc, &dataparallel_algorithm);
  if (cfg->numerics && data_n(cfg->train) < (size_t)p->replicas) {
    snprintf(err, len, "dataparallel.replicas: %d replicas need at least as many training examples, the data has %zu",
             p->replicas, data_n(cfg->train));
    return NULL;
  }
  dataparallel_run *r = xbt_malloc0(sizeof(*r));
  r->p = p;
  r->shapes = run_shapes(cfg, &r->own_shapes);
  return r;
}

static void dataparallel_run_deploy(void *state, const run_config *cfg, metrics *m)
{
  dataparallel_run *r = state;
  r->d = dataparallel_deploy(cfg, r->p, r->shapes, m);
  xbt_assert(r->d, "dataparallel_deploy refused a configuration the engine checked");
}


static void dataparallel_run_free(void *state)
{
  dataparallel_run *r = state;
  dataparallel_free(r->d);
  arch_free(r->own_shapes);
  xbt_free(r);
}

const algorithm dataparallel_algorithm = {
  .name = "dataparallel",
  .summary = "synchronous data parallelism: replicas allreduce gradient buckets overlapping backward (PyTorch DDP), "
             "optionally sharded (ZeRO stages 1-3, FSDP), compressed (top-k, 1-bit, QSGD, PowerSGD) or local SGD",
  .section_doc = "synchronous data parallelism (`run.algorithm = dataparallel`): replicas sum their gradients with "
                 "allreduces of gradient buckets that overlap the backward pass (PyTorch DDP), or shard the "
                 "optimizer state, gradients and parameters over the replicas (ZeRO stages 1 to 3, FSDP), or "
                 "exchange compressed gradients (top-k, 1-bit, QSGD, PowerSGD), or average models every few "
                 "steps (local SGD)",
  ALGORITHM_SECTION(dataparallel_keys, dataparallel_params),
  .trains_layers = 1,
  .uses_data = 1,
  .fail_stop = 1,
  .reports = "final_loss final_accuracy examples_per_s tflops_per_device mfu",
  .figures = "allreduces_per_replica bytes_per_step dense_bytes_per_step local_steps zero "
              "reduce_scatters_per_replica allgathers_per_replica parameters parameters_bytes gradients_bytes "
              "optimizer_bytes gathered_bytes activations_bytes total_bytes model_state_bytes "
              "model_state_formula_bytes",
  .plan = {.validate = dataparallel_plan_validate, .hosts_needed = dataparallel_plan_hosts_needed,
           .fault_role = dataparallel_plan_fault_role},
  .run = {.prepare = dataparallel_run_prepare, .deploy = dataparallel_run_deploy,
          .report = dataparallel_report, .free = dataparallel_run_free},
};


/* downpour_config.c - run.algorithm = downpour (Dean et al. 2012, section 4.1): the
 * [downpour] keys and their checks, the hosts and metrics slots a run needs, the
 * [faults] workers and roles, and the descriptor `downpour_algorithm` that prepares,
 * deploys (downpour.c) and reports (downpour_report.c) a run. */
#include "algorithms/downpour_impl.h"

#include <stdio.h>
#include <string.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/keys.h"

/* ---- the descriptor: run.algorithm = downpour ---------------------------------- */

static const key_spec downpour_keys[] = {
  {"downpour", "replicas", KEY_INT, KEY_FIELD(downpour_params, replicas), .def = "20", .unit = "replicas",
   .doc = "Model replicas, each on its own host.", KEY_GE(1)},
  {"downpour", "ps_shards", KEY_INT, KEY_FIELD(downpour_params, ps_shards), .def = "10", .unit = "shards",
   .doc = "Parameter-server shards, each on its own host, each owning a contiguous slice "
          "of the parameters.",
   KEY_GE(1)},
  {"downpour", "n_fetch", KEY_LONG, KEY_FIELD(downpour_params, n_fetch), .def = "1", .unit = "steps",
   .doc = "A replica fetches fresh parameters every n_fetch steps.", KEY_GE(1)},
  {"downpour", "n_push", KEY_LONG, KEY_FIELD(downpour_params, n_push), .def = "1", .unit = "steps",
   .doc = "A replica pushes its accumulated gradient every n_push steps.", KEY_GE(1)},
  {"downpour", "batch", KEY_LONG, KEY_FIELD(downpour_params, batch), .def = "32", .unit = "examples",
   .doc = "Minibatch size of one replica step.", KEY_GT(0)},
  {"downpour", "lr", KEY_DOUBLE, KEY_FIELD(downpour_params, lr), .def = "0.05", .unit = "",
   .doc = "Fixed learning rate of the shards' updates (when `adagrad = off`).", KEY_GT(0)},
  {"downpour", "adagrad", KEY_BOOL, KEY_FIELD(downpour_params, adagrad), .def = "on", .unit = "",
   .doc = "Per-parameter Adagrad on the shards: rate = adagrad_gamma / sqrt(sum of squared "
          "gradients)."},
  {"downpour", "adagrad_gamma", KEY_DOUBLE, KEY_FIELD(downpour_params, adagrad_gamma), .def = "0.1", .unit = "",
   .doc = "Adagrad's base rate gamma.", KEY_GT(0)},
  {"downpour", "warmstart_steps", KEY_LONG, KEY_FIELD(downpour_params, warmstart_steps), .def = "0", .unit = "steps",
   .doc = "One replica trains alone for this many steps, in simulated time, before the others join "
          "(Dean et al. 2012 sec. 4.1; `model.warmstart_steps` is a sequential warmstart before the run, "
          "in no simulated time); 0: all start together.",
   KEY_GE(0)},
  {"downpour", "overlap", KEY_BOOL, KEY_FIELD(downpour_params, overlap), .def = "off", .unit = "",
   .doc = "`on`: fetch, compute and push run as three weakly synchronised activities."},
  {"downpour", "partitions", KEY_INT, KEY_FIELD(downpour_params, partitions), .def = "1", .unit = "machines",
   .doc = "Machines each replica is split over (model parallelism, as `sgd.partitions`); each "
          "machine fetches from and pushes to only the shards holding its own parameters.",
   KEY_GE(1)},
  {"downpour", "ps_placement", KEY_CHOICE, KEY_FIELD(downpour_params, ps_spread), .def = "after", .unit = "",
   .doc = "Where the shards sit among the hosts: `after` every replica's machines; `spread`: one "
          "after each of ps_shards equal groups of replicas' machines, so that every rack holds "
          "shards in proportion to the machines it holds. Not with host or link faults when "
          "`spread`.",
   .choices = "after|spread"},
  {"downpour", "sends", KEY_CHOICE, KEY_FIELD(downpour_params, waited_sends), .def = "detached", .unit = "",
   .doc = "How fire-and-forget messages (fetch requests, replies, activations, done) are sent: "
          "`detached` SimGrid sends; `waited`: asynchronous sends that the sender reaps where it "
          "blocks anyway, for runs of thousands of hosts, where SimGrid 3.32's global list of "
          "detached sends makes each message cost time proportional to those in flight (see "
          "Scale). Same messages; same-instant events may be ordered differently. Not with "
          "host or link faults.",
   .choices = "detached|waited"},
  {"downpour", "comm_quantum", KEY_DOUBLE, KEY_FIELD(downpour_params, comm_quantum), .def = "0", .unit = "s",
   .doc = "An approximation for runs of hundreds of replicas: a replica starts its fetch requests and "
          "pushes, and a shard its replies, only at multiples of this much simulated time, so that flows "
          "start together and SimGrid shares the network once for all of them instead of once per flow; "
          "each aligned start is late by up to a quantum (algorithms/doc/downpour.md, Time quantum, has "
          "the error table). Not with host or link faults. 0: exact, every transfer starts when its "
          "sender is ready.",
   KEY_GE(0)},
  {"downpour", "compress", KEY_CHOICE, KEY_FIELD(downpour_params, compress), .def = "none", .unit = "",
   .doc = "Compressed pushes with error feedback, each replica's slice for each shard compressed on its own: "
          "`none` (dense), `topk` (DGC), `onebit` or `qsgd`; fetches stay dense. `powersgd` is refused: its "
          "factors are summed by an allreduce, and a shard receives one replica's gradient at a time. "
          "algorithms/doc/compression.md.",
   .choices = "none|topk|onebit|qsgd|powersgd"},
  {"downpour", "compress_ratio", KEY_DOUBLE, KEY_FIELD(downpour_params, compress_ratio), .def = "0.01", .unit = "",
   .doc = "`topk`: fraction of each pushed slice's elements a replica sends.", KEY_GT(0), KEY_LE(1)},
  {"downpour", "compress_momentum", KEY_DOUBLE, KEY_FIELD(downpour_params, compress_momentum), .def = "0",
   .unit = "", .doc = "`topk`: DGC's momentum correction factor (0: plain error feedback).", KEY_GE(0), KEY_LT(1)},
  {"downpour", "compress_warmup", KEY_LONG, KEY_FIELD(downpour_params, compress_warmup), .def = "0",
   .unit = "steps", .doc = "`topk`: DGC's warm-up over a replica's steps, density 25%, 6.25%, 1.56%, 0.39% a "
                           "quarter each, then `compress_ratio` (never below it); 0: none.", KEY_GE(0)},
  {"downpour", "ps_bank", KEY_CHOICE, KEY_FIELD(downpour_params, ps_bank), .def = "auto", .unit = "",
   .doc = "How the shards meet the network: `exact`, each on its own host; `bank`, all on one bank host of "
          "ps_shards times a host's link bandwidth and cores at the core of a generated fat tree with "
          "`platform.uplink_routing = pooled`, each replica's (or split replica's machine's) fetch and push "
          "one message to it for the shards it talks to, the shards' states, update order and staleness "
          "unchanged: the same sharing problem with one flow where there were ps_shards, for runs of hundreds "
          "of replicas (algorithms/doc/downpour.md, Bank, has the error tables, whole and split replicas); "
          "`auto`, the bank from 100 replicas up where the platform takes it, exact otherwise. Not with host "
          "or link faults or compressed pushes.",
   .choices = "auto|exact|bank"},
  {"downpour", "compress_levels", KEY_INT, KEY_FIELD(downpour_params, compress_levels), .def = "15",
   .unit = "levels", .doc = "`qsgd`: s, the quantisation levels of |v_i| / ||v||_2.", KEY_GE(1), KEY_LE(1 << 20)},
};

static int downpour_plan_validate(const scenario *sc, const void *params, char *why, size_t len)
{
  const downpour_params *p = params;
  int faulty = settings_faulty(sc);
  size_t nk = sizeof downpour_keys / sizeof downpour_keys[0];
  if (p->compress == COMPRESS_POWERSGD)
    snprintf(why, len, "downpour.compress: powersgd sums its factors over an allreduce, and a shard receives one "
             "replica's gradient at a time; Downpour compresses with topk, onebit or qsgd");
  else if (p->adagrad && key_changed(downpour_keys, nk, p, "lr"))
    snprintf(why, len, "downpour.lr: has no effect with downpour.adagrad = on, whose rate is downpour.adagrad_gamma "
             "/ sqrt(sum of squared gradients); set adagrad = off for a fixed rate");
  else if (!p->adagrad && key_changed(downpour_keys, nk, p, "adagrad_gamma"))
    snprintf(why, len, "downpour.adagrad_gamma: has no effect with downpour.adagrad = off, whose rate is downpour.lr");
  else if (sc->model.warm_steps > 0 && p->partitions > 1 && sc->model.numerics && !sc->model.virtual_net[0])
    snprintf(why, len, "model.warmstart_steps: a warmstart trains model.layers before the run, which a numeric "
             "replica split over machines lays out otherwise (a split virtual network's proxy can start from one)");
  else if (p->partitions > 1 && p->overlap)
    snprintf(why, len, "downpour.overlap: not available with partitioned replicas (downpour.partitions = %d)",
             p->partitions);
  else if (p->ps_bank == ALGORITHM_BANK_ON && (faulty || p->compress != COMPRESS_NONE))
    snprintf(why, len, "downpour.ps_bank: the bank serves dense pushes with no host or link faults; this run has %s",
             faulty ? "faults" : "downpour.compress");
  else if (faulty && p->ps_spread)
    snprintf(why, len, "faults: host and link faults are not supported with downpour.ps_placement = spread");
  else if (faulty && p->waited_sends)
    snprintf(why, len, "faults: host and link faults are not supported with downpour.sends = waited");
  else if (faulty && p->comm_quantum > 0)
    snprintf(why, len, "faults: host and link faults are not supported with downpour.comm_quantum > 0");
  else if (faulty && (p->overlap || p->partitions > 1))
    snprintf(why, len, "faults: host and link faults are not supported with downpour.overlap = on or "
             "downpour.partitions > 1");
  else
    return 0;
  return -1;
}

static size_t downpour_plan_hosts_needed(const scenario *sc, const void *params, const char **why)
{
  (void)sc;
  *why = "downpour.replicas x downpour.partitions + downpour.ps_shards";
  return downpour_hosts_needed(params);
}

/* downpour.ps_bank: one bank of all the shards, asked for, or chosen by auto for replicas,
 * whole or split, with dense pushes and no faults from ALGORITHM_BANK_AUTO_FROM replicas up. */
static void downpour_plan_bank(const scenario *sc, const void *params, algorithm_bank *b)
{
  const downpour_params *p = params;
  int fits = !settings_faulty(sc) && p->compress == COMPRESS_NONE;
  algorithm_bank_choose(b, "downpour", p->ps_bank, fits, p->replicas, p->ps_shards);
}

/* [faults]: the replicas' machines are the workers; replicaK is replica K's first
 * machine, shardK shard K's host. */
static size_t downpour_plan_fault_workers(const scenario *sc, size_t n_hosts)
{
  (void)n_hosts;
  const downpour_params *p = algorithm_params(sc, &downpour_algorithm);
  return (size_t)p->replicas * (size_t)p->partitions;
}

static long downpour_plan_fault_role(const scenario *sc, const char *name, size_t n_hosts)
{
  (void)n_hosts;
  const downpour_params *p = algorithm_params(sc, &downpour_algorithm);
  long k, R = p->replicas, K = p->partitions;
  size_t M = (size_t)(R * K), S = (size_t)p->ps_shards;
  if (run_role_number(name, "replica", &k))
    return k >= 0 && k < R ? (long)ps_place_client(M, S, (size_t)(k * K), p->ps_spread) : -1;
  if (run_role_number(name, "shard", &k))
    return k >= 0 && k < p->ps_shards ? (long)ps_place_shard(M, S, (size_t)k, p->ps_spread) : -1;
  return -1;
}

static void *downpour_run_prepare(const run_config *cfg, char *err, size_t len)
{
  const downpour_params *p = algorithm_params(cfg->sc, &downpour_algorithm);
  if (cfg->numerics && data_n(cfg->train) < (size_t)p->replicas) {
    snprintf(err, len, "downpour.replicas: %d replicas need at least as many training examples, the data has %zu",
             p->replicas, data_n(cfg->train));
    return NULL;
  }
  if ((size_t)p->ps_shards > net_n_params(cfg->model)) {
    snprintf(err, len, "downpour.ps_shards: %d shards, but the model has only %zu parameters to slice",
             p->ps_shards, net_n_params(cfg->model));
    return NULL;
  }
  downpour_run *r = xbt_malloc0(sizeof(*r));
  r->p = p;
  if (p->partitions > 1) {
    r->split = modelpar_split_create(cfg, (size_t)p->partitions, "downpour.partitions", err, len);
    if (r->split == NULL) {
      xbt_free(r);
      return NULL;
    }
  }
  return r;
}

static size_t downpour_run_metrics_slots(void *state, const run_config *cfg)
{
  (void)cfg;
  return downpour_metrics_slots(((downpour_run *)state)->p);
}

static void downpour_run_deploy(void *state, const run_config *cfg, metrics *m)
{
  downpour_run *r = state;
  modelpar_split *s = r->split;
  r->d = downpour_deploy(cfg, r->p, s ? s->plan : NULL, s ? s->numeric : NULL, s ? s->gather_logits : 0, m);
  xbt_assert(r->d, "downpour: a configuration the engine checked could not be deployed");
}

static void downpour_run_free(void *state)
{
  downpour_run *r = state;
  downpour_free(r->d);
  modelpar_split_free(r->split);
  xbt_free(r);
}

const algorithm downpour_algorithm = {
  .name = "downpour",
  .summary = "Downpour SGD: async replicas, sharded parameter server (Dean et al. 2012)",
  .section_doc = "Downpour SGD (Dean et al. 2012): model replicas and parameter-server shards",
  ALGORITHM_SECTION(downpour_keys, downpour_params),
  .trains_layers = 1,
  .uses_data = 1,
  .reports = "final_loss final_accuracy examples_per_s tflops_per_device mfu staleness",
  .figures = "bytes_per_push dense_bytes_per_push bank_hosts shards_per_bank",
  .plan = {.validate = downpour_plan_validate, .hosts_needed = downpour_plan_hosts_needed,
           .fault_workers = downpour_plan_fault_workers, .fault_role = downpour_plan_fault_role,
           .bank = downpour_plan_bank},
  .run = {.prepare = downpour_run_prepare, .metrics_slots = downpour_run_metrics_slots,
          .deploy = downpour_run_deploy, .report = downpour_report_run, .free = downpour_run_free},
};

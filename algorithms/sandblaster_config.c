/* sandblaster_config.c - run.algorithm = sandblaster (Dean et al. 2012, section 4.2 and
 * Appendix): the [sandblaster] keys and their checks, the hosts and memory a run needs,
 * the [faults] workers and roles, and the descriptor `sandblaster_algorithm` that
 * prepares, deploys (sandblaster.c) and reports (sandblaster_report.c) a run. */
#include "algorithms/sandblaster_impl.h"

#include <stdio.h>
#include <string.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/keys.h"

/* ---- the descriptor: run.algorithm = sandblaster -------------------------------- */

static const key_spec sandblaster_keys[] = {
  {"sandblaster", "replicas", KEY_INT, KEY_FIELD(sandblaster_params, replicas), .def = "20", .unit = "replicas",
   .doc = "Model replicas, each on its own host, computing portions of every batch.", KEY_GE(1)},
  {"sandblaster", "ps_shards", KEY_INT, KEY_FIELD(sandblaster_params, ps_shards), .def = "10", .unit = "shards",
   .doc = "Parameter-server shards, each on its own host, each owning a contiguous slice of every "
          "vector (parameters, gradients, L-BFGS history); at most the model's parameters.",
   KEY_GE(1)},
  {"sandblaster", "history", KEY_INT, KEY_FIELD(sandblaster_params, history), .def = "10", .unit = "pairs",
   .doc = "L-BFGS memory m: (s, y) pairs kept on the shards.", KEY_GE(1), KEY_LE(10000)},
  {"sandblaster", "portion", KEY_LONG, KEY_FIELD(sandblaster_params, portion), .def = "0", .unit = "examples",
   .doc = "Examples per portion of a batch (the training set); 0: the training set / (10 x "
          "replicas), rounded up.",
   KEY_GE(0)},
  {"sandblaster", "push_every", KEY_LONG, KEY_FIELD(sandblaster_params, push_every), .def = "4", .unit = "portions",
   .doc = "A replica pushes its accumulated gradient every this many counted portions (and at once "
          "when no fresh portion is left).",
   KEY_GE(1), KEY_LE(100000)},
  {"sandblaster", "backups", KEY_BOOL, KEY_FIELD(sandblaster_params, backups), .def = "on", .unit = "",
   .doc = "Backup tasks: near the end of a batch idle replicas get copies of outstanding portions; "
          "the first copy the coordinator counts wins, the other is discarded."},
  {"sandblaster", "backup_at", KEY_DOUBLE, KEY_FIELD(sandblaster_params, backup_at), .def = "0", .unit = "fraction",
   .doc = "Backup copies start once every portion is handed out and this share of the batch's "
          "portions counts.",
   KEY_GE(0), KEY_LE(1)},
  {"sandblaster", "gtol", KEY_DOUBLE, KEY_FIELD(sandblaster_params, gtol), .def = "1e-05", .unit = "",
   .doc = "L-BFGS stops, converged, when the gradient's 2-norm is at most this.", KEY_GE(0)},
  {"sandblaster", "partitions", KEY_INT, KEY_FIELD(sandblaster_params, partitions), .def = "1", .unit = "machines",
   .doc = "Machines each replica is split over (model parallelism, as `sgd.partitions`): its machines run "
          "each portion's passes together and each fetches and pushes only its own parameters, with the "
          "shards that hold them. Not with exact_sum or [faults].",
   KEY_GE(1)},
  {"sandblaster", "ps_placement", KEY_CHOICE, KEY_FIELD(sandblaster_params, ps_spread), .def = "after", .unit = "",
   .doc = "Where the shards sit among the hosts: `after` the replicas' machines; `spread`: one after each of "
          "ps_shards equal groups of them (as `downpour.ps_placement`); the coordinator after all. Not with "
          "host or link faults when `spread`.",
   .choices = "after|spread"},
  {"sandblaster", "ps_bank", KEY_CHOICE, KEY_FIELD(sandblaster_params, ps_bank), .def = "auto", .unit = "",
   .doc = "How the shards meet the network, as `downpour.ps_bank`: `exact`, each on its own host; `bank`, all "
          "on one bank host of ps_shards times a host's link bandwidth and cores at the core of a generated "
          "fat-tree preset with pooled uplinks, each exchange of the coordinator or a replica with the shards "
          "one message to it carrying every shard's part, the shards' states and the reduction order "
          "unchanged, the coordinator's messages to and from the replicas on a control network of their own "
          "(algorithms/doc/sandblaster.md, Bank, has the error table); `auto`, the bank from 100 "
          "whole replicas up where the platform allows it, exact otherwise. Not with host or link faults or "
          "partitions > 1.",
   .choices = "auto|exact|bank"},
  {"sandblaster", "exact_sum", KEY_BOOL, KEY_FIELD(sandblaster_params, exact_sum), .def = "off", .unit = "",
   .doc = "`on`: pushes carry each counted portion's gradient and shards add them in portion order, "
          "so the gradient equals the sequential full-batch one bit for bit (one slice per portion on "
          "the wire); `off`: pushes carry the replica's accumulated gradient."},
};

static int sandblaster_plan_validate(const scenario *sc, const void *params, char *why, size_t len)
{
  const sandblaster_params *p = params;
  int faulty = settings_faulty(sc) || sc->faults.stragglers[0];
  if (!sc->model.numerics)
    snprintf(why, len, "model.numerics: sandblaster needs numerics (its line search and stopping test read "
             "the values); time a large network with model.virtual and a small numeric model.layers instead");
  else if (p->partitions > 1 && p->exact_sum)
    snprintf(why, len, "sandblaster.exact_sum: per-portion pushes are not available with split replicas "
             "(sandblaster.partitions = %d)", p->partitions);
  else if (p->partitions > 1 && faulty)
    snprintf(why, len, "faults: not supported with split replicas (sandblaster.partitions = %d)", p->partitions);
  else if (p->ps_bank == ALGORITHM_BANK_ON && (settings_faulty(sc) || p->partitions > 1))
    snprintf(why, len, "sandblaster.ps_bank: the bank serves whole replicas and no host or link faults; this run "
             "has %s", p->partitions > 1 ? "sandblaster.partitions > 1" : "faults");
  else if (p->ps_spread && settings_faulty(sc))
    snprintf(why, len, "faults: host and link faults are not supported with sandblaster.ps_placement = spread");
  else
    return 0;
  return -1;
}

static size_t sandblaster_plan_hosts_needed(const scenario *sc, const void *params, const char **why)
{
  (void)sc;
  *why = "sandblaster.replicas x sandblaster.partitions + sandblaster.ps_shards + 1 coordinator";
  return sandblaster_hosts_needed(params);
}

/* sandblaster.ps_bank: one bank of all the shards (the coordinator keeps its host),
 * asked for, or chosen by auto for whole replicas without faults from
 * ALGORITHM_BANK_AUTO_FROM replicas up; the traffic between hosts, which is then the
 * coordinator's with the replicas alone, on a control network of its own (doc, Bank). */
static void sandblaster_plan_bank(const scenario *sc, const void *params, algorithm_bank *b)
{
  const sandblaster_params *p = params;
  int whole = p->partitions == 1 && !settings_faulty(sc);
  algorithm_bank_choose(b, "sandblaster", p->ps_bank, whole, p->replicas, p->ps_shards);
  b->control_net = b->hosts > 0;
}

/* [faults]: the replicas are the workers; replicaK, shardK and the coordinator are
 * addressed by role. */
static size_t sandblaster_plan_fault_workers(const scenario *sc, size_t n_hosts)
{
  (void)n_hosts;
  return (size_t)((const sandblaster_params *)algorithm_params(sc, &sandblaster_algorithm))->replicas;
}

static long sandblaster_plan_fault_role(const scenario *sc, const char *name, size_t n_hosts)
{
  (void)n_hosts;
  const sandblaster_params *p = algorithm_params(sc, &sandblaster_algorithm);
  long k, R = p->replicas, S = p->ps_shards;
  if (run_role_number(name, "replica", &k))
    return k >= 0 && k < R ? (long)client_index(p, (size_t)k * (size_t)p->partitions) : -1;
  if (run_role_number(name, "shard", &k))
    return k >= 0 && k < S ? (long)shard_index(p, (size_t)k) : -1;
  if (strcmp(name, "coordinator") == 0)
    return (long)coord_index(p);
  return -1;
}

static void *sandblaster_run_prepare(const run_config *cfg, char *err, size_t len)
{
  const sandblaster_params *p = algorithm_params(cfg->sc, &sandblaster_algorithm);
  if ((size_t)p->ps_shards > net_n_params(cfg->model)) {
    snprintf(err, len, "sandblaster.ps_shards: %d shards, but the model has only %zu parameters to slice",
             p->ps_shards, net_n_params(cfg->model));
    return NULL;
  }
  sandblaster_run *r = xbt_malloc0(sizeof(*r));
  r->p = p;
  if (p->partitions > 1) { /* the plan times the passes; model.layers' numerics train as a proxy */
    r->split = modelpar_split_create(cfg, (size_t)p->partitions, "sandblaster.partitions", err, len);
    if (r->split == NULL) {
      xbt_free(r);
      return NULL;
    }
  }
  return r;
}

static void sandblaster_run_deploy(void *state, const run_config *cfg, metrics *m)
{
  sandblaster_run *r = state;
  modelpar_split *s = r->split;
  r->sb = sandblaster_deploy(cfg, r->p, s ? s->plan : NULL, s ? s->gather_logits : 0, m);
  xbt_assert(r->sb, "sandblaster_deploy refused a configuration the engine checked");
}

static void sandblaster_run_free(void *state)
{
  sandblaster_run *r = state;
  sandblaster_free(r->sb);
  modelpar_split_free(r->split);
  xbt_free(r);
}

/* The shards hold every vector of L-BFGS (parameters, gradient, direction, 2 x history
 * pairs, a few work vectors); each replica its parameters, gradient and accumulated
 * push. */
static double sandblaster_plan_footprint(const scenario *sc, const void *params, double *actors, const char **what)
{
  const sandblaster_params *p = params;
  double P = sc->model.numerics ? algorithm_layers_params(sc) : 0;
  *actors = (double)p->replicas + (double)p->ps_shards + 2;
  *what = "(2 x sandblaster.history + 6 + 3 x sandblaster.replicas) copies of model.layers' parameters";
  return (2.0 * p->history + 6 + 3.0 * p->replicas) * P * 8;
}

const algorithm sandblaster_algorithm = {
  .name = "sandblaster",
  .summary = "Sandblaster L-BFGS: coordinator, sharded vectors, load-balanced replicas (Dean et al. 2012)",
  .section_doc = "Sandblaster L-BFGS (Dean et al. 2012): a coordinator, parameter-server shards holding every "
                 "vector, and replicas computing the full-batch gradient in portions",
  ALGORITHM_SECTION(sandblaster_keys, sandblaster_params),
  .files = "batches.csv",
  .trains_layers = 1,
  .uses_data = 1,
  .own_stragglers = 1,
  .reports = "final_loss final_accuracy examples_per_s tflops_per_device mfu",
  .figures = "iterations evaluations skipped_pairs f gnorm dot axpy scale copy evaluate batches "
              "batch_time_mean_s backups backup_wins discarded",
  .plan = {.validate = sandblaster_plan_validate, .hosts_needed = sandblaster_plan_hosts_needed,
           .fault_workers = sandblaster_plan_fault_workers, .fault_role = sandblaster_plan_fault_role,
           .footprint = sandblaster_plan_footprint, .bank = sandblaster_plan_bank},
  .run = {.prepare = sandblaster_run_prepare, .deploy = sandblaster_run_deploy,
          .report = sandblaster_report_run, .free = sandblaster_run_free},
};

/* moe_config.c - expert parallelism's descriptor (run.algorithm = moe): its keys, their
 * checks, the hosts and memory it needs. The run is moe.c's, its report moe_report.c's. */
#include <stdio.h>

#include "algorithms/keys.h"
#include "algorithms/moe_impl.h"
#include "models/moe.h"

static const key_spec moe_keys[] = {
  {"moe", "ranks", KEY_SIZE, KEY_FIELD(moe_params, ranks), .def = "4", .unit = "GPUs",
   .doc = "P: expert-parallel ranks, rank r on host r; each is a data-parallel rank of the GPT (its own "
          "`batch` sequences, the attention and embeddings replicated) and holds `experts` / P experts of "
          "every layer.",
   KEY_GE(1), KEY_LE(4096)},
  {"moe", "experts", KEY_SIZE, KEY_FIELD(moe_params, experts), .def = "8", .unit = "experts",
   .doc = "E: experts per layer (every layer's MLP a mixture, models/moe.h), a multiple of `ranks`; expert e on "
          "rank e / (E / P).",
   KEY_GE(2), KEY_LE(4096)},
  {"moe", "top_k", KEY_SIZE, KEY_FIELD(moe_params, top_k), .def = "1", .unit = "experts",
   .doc = "Experts per token: 1 (Switch Transformer's gate) or 2 (GShard's, renormalised over the two).",
   KEY_GE(1), KEY_LE(2)},
  {"moe", "capacity_factor", KEY_DOUBLE, KEY_FIELD(moe_params, capacity_factor), .def = "1.25", .unit = "",
   .doc = "An expert takes at most ceil(factor x tokens x top_k / E) assignments of each rank's tokens (the "
          "rank's shard is its routing group); the rest are dropped, first choices first (GShard's order).",
   KEY_GT(0), KEY_LE(1000)},
  {"moe", "aux_coef", KEY_DOUBLE, KEY_FIELD(moe_params, aux_coef), .def = "0.01", .unit = "",
   .doc = "Coefficient of Switch Transformer's auxiliary load-balancing loss, per layer and routing group; "
          "0: off.",
   KEY_GE(0), KEY_LE(1000)},
  {"moe", "hidden", KEY_SIZE, KEY_FIELD(moe_params, hidden), .def = "32", .unit = "units",
   .doc = "h: hidden size; an expert is an MLP h -> 4h -> h.", KEY_GE(1), KEY_LE(4096)},
  {"moe", "heads", KEY_SIZE, KEY_FIELD(moe_params, heads), .def = "4", .unit = "heads",
   .doc = "Attention heads, dividing `hidden`.", KEY_GE(1), KEY_LE(4096)},
  {"moe", "layers", KEY_SIZE, KEY_FIELD(moe_params, layers), .def = "2", .unit = "layers",
   .doc = "L: transformer layers, each with a mixture of experts.", KEY_GE(1), KEY_LE(1024)},
  {"moe", "seq", KEY_SIZE, KEY_FIELD(moe_params, seq), .def = "16", .unit = "tokens",
   .doc = "s: sequence length.", KEY_GE(2), KEY_LE(65536)},
  {"moe", "vocab", KEY_SIZE, KEY_FIELD(moe_params, vocab), .def = "64", .unit = "tokens",
   .doc = "V: vocabulary of the synthetic token language (models/data.h) and of the tied logits.", KEY_GE(4),
   KEY_LE(1L << 20)},
  {"moe", "batch", KEY_SIZE, KEY_FIELD(moe_params, batch), .def = "4", .unit = "sequences",
   .doc = "Sequences each rank draws per step (its routing group); a step trains on ranks x batch.", KEY_GE(1),
   KEY_LE(1L << 20)},
  {"moe", "lr", KEY_DOUBLE, KEY_FIELD(moe_params, lr), .def = "0.01", .unit = "",
   .doc = "Learning rate of the update, with the mean of the ranks' gradients.", KEY_GT(0)},
  {"moe", "optimizer", KEY_CHOICE, KEY_FIELD(moe_params, optimizer), .def = "adam", .unit = "",
   .doc = "The update: `sgd` or `adam` (Kingma and Ba's defaults); the non-expert entries on every rank, "
          "an expert's on its owner.",
   .choices = "sgd|adam"},
  {"moe", "collective", KEY_CHOICE, KEY_FIELD(moe_params, algo), .def = "ring", .unit = "",
   .doc = "Allreduce of the non-expert gradients after backward: `ring`, `halving-doubling` or `tree`.",
   .choices = "ring|halving-doubling|tree"},
  {"moe", "serial_check", KEY_BOOL, KEY_FIELD(moe_params, serial_check), .def = "off", .unit = "",
   .doc = "`on`: after the run, the serial MoE GPT (each rank's shard a routing group) trains on the same "
          "draws for as many steps and summary.json's `moe.serial_check` compares the parameters."},
};

/* Doubles a rank holds beyond the parameters: its gradient and packed copy, and the
 * activations its gradient needs, about 40 n h + the attention probabilities per layer. */
static double rank_doubles(const moe_params *p, double params)
{
  double n = (double)p->batch * (double)p->seq, h = (double)p->hidden, L = (double)p->layers;
  double act = L * (40 * n * h + (double)p->batch * (double)p->heads * (double)p->seq * (double)p->seq);
  return 2 * params + act;
}

static double n_params_of(const moe_params *p)
{
  gpt_dims d = {p->vocab, p->seq, p->hidden, p->heads, p->layers, {p->experts, p->top_k, p->capacity_factor, p->aux_coef, 1}};
  return (double)gpt_n_params(&d);
}

/* At most 2^28 doubles (2 GiB) of numeric state in all. */
#define MOE_EP_NUMERIC_MAX (1.0 * (1L << 28))

static double footprint_doubles(const moe_params *p)
{
  double np = n_params_of(p);
  /* w, w0, Adam's two moments, the packed copies; the serial check's five vectors */
  return (double)p->ranks * rank_doubles(p, np) + 12 * np;
}

static int moe_ep_plan_validate(const scenario *sc, const void *params, char *why, size_t len)
{
  const moe_params *p = params;
  if (!sc->model.numerics)
    snprintf(why, len, "model.numerics: expert parallelism's traffic comes from the trained router, so run.algorithm "
             "= moe needs model.numerics = on");
  else if (p->experts % p->ranks != 0)
    snprintf(why, len, "moe.experts: %zu experts do not split over %zu ranks (a multiple of moe.ranks)", p->experts,
             p->ranks);
  else if (p->top_k > p->experts)
    snprintf(why, len, "moe.top_k: %zu is more than the %zu experts", p->top_k, p->experts);
  else if (p->hidden % p->heads != 0)
    snprintf(why, len, "moe.heads: %zu heads do not divide moe.hidden = %zu", p->heads, p->hidden);
  else if (sc->data.train < 1 || sc->data.test < 1)
    snprintf(why, len, "data.train: the token language needs training and held-out sequences");
  else if (footprint_doubles(p) > MOE_EP_NUMERIC_MAX)
    snprintf(why, len, "moe.hidden: a run this large holds more than 2^28 doubles of numeric state");
  else if (sc->run.target_accuracy > 0)
    snprintf(why, len, "run.target_accuracy: an expert-parallel run stops on steps or time");
  else
    return 0;
  return -1;
}

static size_t moe_ep_plan_hosts_needed(const scenario *sc, const void *params, const char **why)
{
  (void)sc;
  *why = "moe.ranks";
  return ((const moe_params *)params)->ranks;
}

static double moe_ep_plan_footprint(const scenario *sc, const void *params, double *actors, const char **what)
{
  (void)sc;
  const moe_params *p = params;
  *actors = (double)p->ranks + 1;
  *what = "moe.ranks x (2 gradient copies + moe.layers x activations of moe.batch x moe.seq x moe.hidden), and 12 "
          "copies of the parameters";
  return footprint_doubles(p) * 8;
}

const algorithm moe_algorithm = {
  .name = "moe",
  .summary = "expert parallelism of a mixture-of-experts GPT: all-to-all dispatch and combine of the tokens a "
             "trained router sends",
  .section_doc = "expert parallelism (`run.algorithm = moe`): a GPT whose MLPs are mixtures of experts, each of "
                 "`ranks` GPUs a data-parallel rank holding `experts` / `ranks` experts of every layer; "
                 "`model.numerics` must be on, `model.dtype` (wire bytes per element) and `model.efficiency` apply",
  ALGORITHM_SECTION(moe_keys, moe_params),
  .files = "moe_steps.csv",
  .uses_data = 1,
  .fail_stop = 1,
  .reports = "final_loss final_accuracy examples_per_s",
  .figures = "ranks experts experts_per_rank top_k capacity_factor capacity aux_coef parameters "
              "allreduce_elements steps imbalance_mean imbalance_end kept_imbalance_end dropped_fraction "
              "dropped_fraction_end hidden elem_bytes alltoall_s alltoall_s_per_step train_loss initial_loss "
              "loss_floor max_abs_diff max_moved",
  .plan = {.validate = moe_ep_plan_validate, .hosts_needed = moe_ep_plan_hosts_needed,
           .footprint = moe_ep_plan_footprint},
  .run = {.prepare = moe_ep_prepare, .deploy = moe_ep_deploy, .report = moe_ep_report,
          .closing = moe_ep_closing, .free = moe_ep_free},
};

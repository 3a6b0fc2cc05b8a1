/* sgd.c - sequential minibatch SGD: sample, compute_gradient, apply_update. */
#include "algorithms/sgd.h"

#include <stdio.h>
#include <string.h>
#include <simgrid/actor.h>
#include <simgrid/mutex.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "algorithms/compute.h"
#include "algorithms/eval.h"
#include "algorithms/modelpar.h"
#include "models/cost.h"
#include "models/optim.h"
#include "models/minibatch.h"

struct sgd {
  const run_config *cfg;
  const sgd_params *p;
  gsl_vector *w;
  gsl_vector *grad;
  sg_mutex_t mu;  /* guards w against the evaluator's snapshot */
  minibatch *mb;
  metrics_slot *slot;
  eval_ctl *eval;
};

size_t sgd_hosts_needed(void) { return 1; }
size_t sgd_metrics_slots(void) { return 1; }

static void compute_gradient(sgd *s)
{
  const run_config *cfg = s->cfg;
  if (cfg->numerics)
    minibatch_gradient(s->mb, s->w, s->grad, NULL);
  compute_execute(cfg, cfg->train_flops * (double)s->p->batch);
}

static void apply_update(sgd *s)
{
  const run_config *cfg = s->cfg;
  compute_execute(cfg, cost_update_flops((size_t)cfg->sim_params, 0));
  if (cfg->numerics) {
    sg_mutex_lock(s->mu);
    optim_sgd_apply(s->w->data, s->grad->data, s->w->size, s->p->lr);
    sg_mutex_unlock(s->mu);
  }
}

static void worker_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  sgd *s = sg_actor_self_get_data();
  long max_steps = s->cfg->max_steps;
  for (long step = 0; step > 0 || !eval_should_stop(s->eval); step++) {
    account_label_push("step %ld", step); /* the timeline's names (--trace) */
    account_label_push("compute gradient");
    compute_gradient(s);
    account_label_pop();
    account_label_push("update");
    apply_update(s);
    account_label_pop();
    account_label_pop();
    s->slot->steps++;
    if (eval_step_done(s->eval) || (max_steps > 0 && step + 1 >= max_steps))
      break;
  }
  eval_finished(s->eval);
}

static void sgd_snapshot(void *ctx, gsl_vector *w)
{
  sgd *s = ctx;
  sg_mutex_lock(s->mu);
  gsl_vector_memcpy(w, s->w);
  sg_mutex_unlock(s->mu);
}

sgd *sgd_deploy(const run_config *cfg, const sgd_params *p, metrics *m)
{
  if (cfg->n_hosts < sgd_hosts_needed())
    return NULL;
  sgd *s = xbt_malloc0(sizeof(*s));
  s->cfg = cfg;
  s->p = p;
  s->slot = metrics_slot_at(m, 0);
  s->mu = sg_mutex_init();
  if (cfg->numerics) {
    s->w = run_initial_params(cfg);
    s->grad = gsl_vector_calloc(s->w->size);
    /* rank 0 and all the rows: the same draws as Downpour's replica 0 with one replica */
    s->mb = minibatch_create(cfg->model, cfg->train, 0, data_n(cfg->train), (size_t)p->batch, cfg->seed, 0);
  }
  s->eval = eval_ctl_create(cfg, m, 1, sgd_snapshot, s);
  sg_actor_t a = sg_actor_init("sgd-0", cfg->hosts[0]);
  sg_actor_set_data(a, s);
  sg_actor_start(a, worker_actor, 0, NULL);
  eval_start(s->eval, cfg->hosts[0]);
  return s;
}

void sgd_free(sgd *s)
{
  if (s == NULL)
    return;
  eval_ctl_free(s->eval);
  sg_mutex_destroy(s->mu);
  if (s->w) {
    gsl_vector_free(s->w);
    gsl_vector_free(s->grad);
    minibatch_free(s->mb);
  }
  xbt_free(s);
}

/* ---- the descriptor: run.algorithm = sgd -------------------------------------- */

static const key_spec sgd_keys[] = {
  {"sgd", "batch", KEY_LONG, KEY_FIELD(sgd_params, batch), .def = "32", .unit = "examples",
   .doc = "Minibatch size.", KEY_GT(0)},
  {"sgd", "partitions", KEY_LONG, KEY_FIELD(sgd_params, partitions), .def = "1", .unit = "machines",
   .doc = "Machines the model replica is split over (model parallelism, Dean et al. 2012 "
          "sec. 3). With `model.virtual` and numerics on, the virtual net's partitions take the "
          "time and `model.layers` trains as sequential SGD (a numeric proxy).",
   KEY_GE(1)},
  {"sgd", "lr", KEY_DOUBLE, KEY_FIELD(sgd_params, lr), .def = "0.05", .unit = "",
   .doc = "Learning rate (fixed).", KEY_GT(0)},
};

/* A replica split over machines, and every timing-only run even on one machine (so that
 * every machine count of a speed-up curve runs the same code), go through the
 * partitioned replica (modelpar). */
static int split(const scenario *sc, const sgd_params *p)
{
  return !sc->model.numerics || p->partitions > 1;
}

static int sgd_plan_validate(const scenario *sc, const void *params, char *why, size_t len)
{
  const sgd_params *p = params;
  if (sc->model.warm_steps > 0 && !sc->model.virtual_net[0] && p->partitions > 1) {
    snprintf(why, len, "model.warmstart_steps: a warmstart trains model.layers before the run, which a numeric "
             "replica split over machines lays out otherwise");
    return -1;
  }
  return 0;
}

static size_t sgd_plan_hosts_needed(const scenario *sc, const void *params, const char **why)
{
  const sgd_params *p = params;
  *why = split(sc, p) ? "sgd.partitions" : "1 worker";
  return split(sc, p) ? (size_t)p->partitions : sgd_hosts_needed();
}

typedef struct sgd_run {
  const sgd_params *p;
  modelpar_split *split; /* NULL: one unsplit worker */
  sgd *s;
  modelpar *mp;
} sgd_run;

static void *sgd_run_prepare(const run_config *cfg, char *err, size_t len)
{
  sgd_run *r = xbt_malloc0(sizeof(*r));
  r->p = algorithm_params(cfg->sc, &sgd_algorithm);
  if (split(cfg->sc, r->p)) {
    r->split = modelpar_split_create(cfg, (size_t)r->p->partitions, "sgd.partitions", err, len);
    if (r->split == NULL) {
      xbt_free(r);
      return NULL;
    }
  }
  return r;
}

static size_t sgd_run_metrics_slots(void *state, const run_config *cfg)
{
  (void)cfg;
  sgd_run *r = state;
  return r->split ? modelpar_metrics_slots(r->split->plan) : sgd_metrics_slots();
}

static void sgd_run_deploy(void *state, const run_config *cfg, metrics *m)
{
  sgd_run *r = state;
  if (r->split)
    r->mp = modelpar_deploy(cfg, &(modelpar_opts){.batch = r->p->batch, .lr = r->p->lr}, r->split->plan, r->split->numeric, r->split->gather_logits, m);
  else
    r->s = sgd_deploy(cfg, r->p, m);
  xbt_assert(r->mp || r->s, "sgd: a configuration the engine checked could not be deployed");
}

static void sgd_run_report(void *state, const run_config *cfg, metrics *m, report *rep)
{
  sgd_run *r = state;
  rep->examples = metrics_total_steps(m) * r->p->batch;
  rep->step_workers = 1;
  rep->model_flops = (double)rep->examples * cfg->train_flops;
  rep->devices = (size_t)r->p->partitions;
  rep->worker_role = r->p->partitions > 1 ? "partition" : "sgd";
}

static void sgd_run_free(void *state)
{
  sgd_run *r = state;
  sgd_free(r->s);
  modelpar_free(r->mp);
  modelpar_split_free(r->split);
  xbt_free(r);
}

const algorithm sgd_algorithm = {
  .name = "sgd",
  .summary = "sequential minibatch SGD on one host (the baseline)",
  .section_doc = "the single-replica SGD baseline (`run.algorithm = sgd`)",
  ALGORITHM_SECTION(sgd_keys, sgd_params),
  .trains_layers = 1,
  .uses_data = 1,
  .fail_stop = 1,
  .reports = "final_loss final_accuracy examples_per_s tflops_per_device mfu",
  .plan = {.validate = sgd_plan_validate, .hosts_needed = sgd_plan_hosts_needed},
  .run = {.prepare = sgd_run_prepare, .metrics_slots = sgd_run_metrics_slots, .deploy = sgd_run_deploy,
          .report = sgd_run_report, .free = sgd_run_free},
};

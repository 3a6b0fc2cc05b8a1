/* sgd.c - sequential minibatch SGD: sample, compute_gradient, apply_update. */
#include "algorithms/sgd.h"

#include <string.h>
#include <simgrid/actor.h>
#include <simgrid/mutex.h>
#include <xbt/sysdep.h>

#include "algorithms/eval.h"
#include "models/cost.h"
#include "models/optim.h"
#include "models/minibatch.h"

struct sgd {
  const run_config *cfg;
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
  run_execute(cfg, cfg->train_flops * (double)cfg->sgd.batch);
}

static void apply_update(sgd *s)
{
  const run_config *cfg = s->cfg;
  run_execute(cfg, cost_update_flops((size_t)cfg->sim_params, 0));
  if (cfg->numerics) {
    sg_mutex_lock(s->mu);
    optim_sgd_apply(s->w->data, s->grad->data, s->w->size, cfg->sgd.lr);
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
    compute_gradient(s);
    apply_update(s);
    s->slot->steps++;
    if (eval_step_done(s->eval) || (max_steps > 0 && step + 1 >= max_steps))
      break;
  }
  eval_finished(s->eval);
}

static void snapshot(void *ctx, gsl_vector *w)
{
  sgd *s = ctx;
  sg_mutex_lock(s->mu);
  gsl_vector_memcpy(w, s->w);
  sg_mutex_unlock(s->mu);
}

sgd *sgd_deploy(const run_config *cfg, metrics *m)
{
  if (cfg->n_hosts < sgd_hosts_needed())
    return NULL;
  sgd *s = xbt_malloc0(sizeof(*s));
  s->cfg = cfg;
  s->slot = metrics_slot_at(m, 0);
  s->mu = sg_mutex_init();
  if (cfg->numerics) {
    s->w = run_initial_params(cfg);
    s->grad = gsl_vector_calloc(s->w->size);
    /* rank 0 and all the rows: the same draws as Downpour's replica 0 with one replica */
    s->mb = minibatch_create(cfg->model, cfg->train, 0, data_n(cfg->train), (size_t)cfg->sgd.batch, cfg->seed, 0);
  }
  s->eval = eval_ctl_create(cfg, m, 1, snapshot, s);
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

/* eval.c - the evaluator actor and the run's stop control. */
#include "algorithms/eval.h"

#include "algorithms/faults.h"
#include "models/curvature.h"
#include "models/noise_scale.h"

#include <math.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/mutex.h>
#include <simgrid/semaphore.h>
#include <xbt/sysdep.h>

/* Rows of the evaluator's workspace: the held-out set is evaluated in batches of this many. */
#define EVAL_BATCH 1024

struct eval_ctl {
  const run_config *cfg;
  metrics *m;
  int n_finishers;
  eval_snapshot_fn snapshot;
  void *snapshot_ctx;
  sg_mutex_t mu;      /* guards steps and stop */
  long steps;         /* minibatches done by all workers so far */
  int stop;           /* set by the evaluator: workers stop at their next step */
  sg_sem_t finished;  /* released once by each finishing actor */
  gsl_vector *w;      /* the evaluator's copy of the parameters */
  net_ws *ws;
  gsl_vector *noise_g; /* scratch of the noise scale's batch gradients (cfg->noise_set), or NULL */
  int reached;        /* target accuracy reached */
  eval_measure_fn measure; /* NULL: net_evaluate on cfg->model */
  void *measure_ctx;
  double last_eval;
};

eval_ctl *eval_ctl_create(const run_config *cfg, metrics *m, int n_finishers,
                          eval_snapshot_fn snapshot, void *snapshot_ctx)
{
  eval_ctl *e = xbt_malloc0(sizeof(*e));
  e->cfg = cfg;
  e->m = m;
  e->n_finishers = n_finishers;
  e->snapshot = cfg->numerics ? snapshot : NULL;
  e->snapshot_ctx = snapshot_ctx;
  e->mu = sg_mutex_init();
  e->finished = sg_sem_init(0);
  e->last_eval = -1;
  if (e->snapshot) {
    e->w = gsl_vector_alloc(net_n_params(cfg->model));
    e->ws = net_ws_create(cfg->model, EVAL_BATCH);
    if (cfg->noise_set)
      e->noise_g = gsl_vector_alloc(net_n_params(cfg->model));
  }
  return e;
}

void eval_ctl_free(eval_ctl *e)
{
  if (e == NULL)
    return;
  sg_mutex_destroy(e->mu);
  sg_sem_destroy(e->finished);
  if (e->w)
    gsl_vector_free(e->w);
  if (e->noise_g)
    gsl_vector_free(e->noise_g);
  net_ws_free(e->ws);
  xbt_free(e);
}

static long steps_so_far(eval_ctl *e)
{
  sg_mutex_lock(e->mu);
  long s = e->steps;
  sg_mutex_unlock(e->mu);
  return s;
}

static void request_stop(eval_ctl *e)
{
  sg_mutex_lock(e->mu);
  e->stop = 1;
  sg_mutex_unlock(e->mu);
}

/* A classifier whose held-out cross-entropy is this many times that of guessing every
 * class equally likely (ln K; ln 2 for a logistic output) has blown up: every run the
 * golden files hold stays under 1.2 times it, while downpour.lr = 1000 without Adagrad
 * (the built-in scenario) reaches 2,500 times it (5,767 against ln 10) at the first
 * evaluation and never comes back under 1,300 times. */
#define DIVERGED_CHANCE_FACTOR 10.0

/* The held-out loss of guessing every class equally likely, for a net_evaluate loss;
 * 0 for a squared loss, which has no such scale (only NaN or infinity diverges it). */
static double chance_loss(const net *n)
{
  switch (net_get_loss(n)) {
  case NET_LOSS_SOFTMAX:
    return log((double)net_n_outputs(n));
  case NET_LOSS_LOGISTIC:
    return log(2.0);
  case NET_LOSS_MSE:
    break;
  }
  return 0;
}

/* Whether the run diverged at this held-out loss: NaN or infinite, or, for cfg->model's
 * own classifier (no other measure), far above guessing. */
static int diverged(const eval_ctl *e, double loss)
{
  if (!isfinite(loss))
    return 1;
  double chance = e->measure ? 0 : chance_loss(e->cfg->model);
  return chance > 0 && loss > DIVERGED_CHANCE_FACTOR * chance;
}

/* The gradient noise scale of cfg->model at the evaluated parameters on cfg->noise_set,
 * recorded with the last evaluation; an algorithm that measures its own model has none. */
static void measure_noise(eval_ctl *e)
{
  const dataset *d = e->cfg->noise_set;
  noise_scale ns;
  if (d && e->noise_g && !e->measure && e->w->size == net_n_params(e->cfg->model) &&
      noise_scale_estimate(e->cfg->model, e->w, d->X, d->y, NOISE_SCALE_BATCH, e->ws, e->noise_g, &ns) == 0)
    metrics_record_noise(e->m, ns.b_simple, ns.grad_sq, ns.trace_sigma);
}

/* The top Hessian eigenvalue of cfg->model's held-out loss at the evaluated parameters, on
 * the test set's first cfg->curvature_rows rows (all of them if it has fewer), recorded with
 * the last evaluation; an algorithm that measures its own model has none. */
static void measure_curvature(eval_ctl *e)
{
  const dataset *d = e->cfg->test;
  double lambda;
  if (e->cfg->curvature_rows <= 0 || d == NULL || e->measure || e->w->size != net_n_params(e->cfg->model))
    return;
  size_t rows = (size_t)e->cfg->curvature_rows < d->X->size1 ? (size_t)e->cfg->curvature_rows : d->X->size1;
  gsl_matrix_const_view X = gsl_matrix_const_submatrix(d->X, 0, 0, rows, d->X->size2);
  if (curvature_net_top(e->cfg->model, e->w, &X.matrix, d->y, EVAL_BATCH, e->ws, &lambda) == 0)
    metrics_record_curvature(e->m, lambda);
}

/* Measures held-out loss and accuracy of the current parameters and records them. */
static void evaluate(eval_ctl *e)
{
  double now = simgrid_get_clock();
  if (now == e->last_eval)
    return;
  e->last_eval = now;
  double loss = NAN, acc = NAN;
  if (e->snapshot) {
    e->snapshot(e->snapshot_ctx, e->w);
    if (e->measure)
      e->measure(e->measure_ctx, e->w, &loss, &acc);
    else
      net_evaluate(e->cfg->model, e->w, e->cfg->test->X, e->cfg->test->y, e->ws, &loss, &acc);
  }
  long steps = steps_so_far(e);
  metrics_record_eval(e->m, now, steps, loss, acc);
  if (e->snapshot)
    measure_noise(e);
  if (e->cfg->on_eval)
    e->cfg->on_eval(e->cfg->on_eval_ctx, now, steps, loss, acc);
  if (e->snapshot && diverged(e, loss)) {
    metrics_set_status(e->m, METRICS_DIVERGED);
    request_stop(e);
  } else if (e->cfg->target_accuracy > 0 && !e->reached && acc >= e->cfg->target_accuracy) {
    e->reached = 1;
    metrics_set_time_to_target(e->m, now);
    request_stop(e);
  }
}

/* Every eval_every simulated seconds until all finishers are done, then once more. */
static void evaluator_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  eval_ctl *e = sg_actor_self_get_data();
  long k = 1; /* the k-th evaluation is at k * eval_every: no accumulated rounding */
  int finished = 0;
  while (finished < e->n_finishers) {
    double next = (double)k * e->cfg->eval_every;
    /* Past max_sim_time, only wait: a timed wait would keep a stuck run going forever,
     * where SimGrid reports a deadlock once nothing can happen any more. */
    if (next > e->cfg->max_sim_time) {
      sg_sem_acquire(e->finished);
      finished++;
      continue;
    }
    if (sg_sem_acquire_timeout(e->finished, next - simgrid_get_clock()) == 0) {
      finished++;
      continue;
    }
    evaluate(e);
    k++;
  }
  evaluate(e);
  if (e->snapshot)
    measure_curvature(e); /* the parameters the last evaluation measured */
  if (metrics_get_status(e->m) == METRICS_OK && e->cfg->target_accuracy > 0 && !e->reached)
    metrics_set_status(e->m, METRICS_TARGET_MISSED);
}

void eval_set_measure(eval_ctl *e, eval_measure_fn measure, void *ctx)
{
  e->measure = measure;
  e->measure_ctx = ctx;
}

void eval_set_snapshot_size(eval_ctl *e, size_t n)
{
  if (e->w == NULL)
    return;
  gsl_vector_free(e->w);
  e->w = gsl_vector_alloc(n);
}

void eval_start(eval_ctl *e, sg_host_t host)
{
  if (e->cfg->faults) /* it never computes nor sends: only its survival depends on its host */
    host = e->cfg->faults->safe_host;
  sg_actor_t a = sg_actor_init("evaluator", host);
  sg_actor_set_data(a, e);
  sg_actor_start(a, evaluator_actor, 0, NULL);
}

int eval_step_done(eval_ctl *e)
{
  sg_mutex_lock(e->mu);
  e->steps++;
  int stop = e->stop;
  sg_mutex_unlock(e->mu);
  return stop || simgrid_get_clock() >= e->cfg->max_sim_time;
}

int eval_should_stop(eval_ctl *e)
{
  sg_mutex_lock(e->mu);
  int stop = e->stop;
  sg_mutex_unlock(e->mu);
  return stop || simgrid_get_clock() >= e->cfg->max_sim_time;
}

void eval_finished(eval_ctl *e)
{
  sg_sem_release(e->finished);
}

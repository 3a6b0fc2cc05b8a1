/* consensus_measure.c - the measurements of a distributed subgradient consensus run
 * (Nedic and Ozdaglar, IEEE TAC 2009, Section IV's running averages): each measurement's
 * consensus error and optimality gaps (consensus_point, consensus.h), taken after every
 * round in sync mode and by the shared evaluator (eval.c) in async mode. */
#include "algorithms/consensus_impl.h"

#include <math.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <simgrid/engine.h>
#include <simgrid/mutex.h>
#include <xbt/sysdep.h>

/* Measurements: sync mode measures after every round r, when all x_i(r) are known,
 * from a per-round slot array that each agent deposits its state into; the last to
 * deposit measures. Async mode uses the shared evaluator (eval.c) every run.eval_every
 * simulated seconds, which copies every agent's state under its lock. Both reduce in
 * rank order, so that the sum does not depend on arrival order. An agent's state for a
 * measurement is x_i(k), the sum of its earlier iterates x_i(0..k-1) and k: the running
 * average xhat_i(k) = (1/k) sum_{h<k} x_i(h) is the estimate Nedic and Ozdaglar's rate
 * bounds (Section IV) speak of, so a measurement gives the gap of the mean of the
 * iterates, of the mean of the running averages, and the worst agent's of both. The
 * running sum is bookkeeping for the measurements, not part of the method: it costs no
 * simulated time. */

/* F(x) - f*, F summed in agent order. */
static double gap_at(const consensus *c, const gsl_vector *x)
{
  double F;
  objective_sum_value(c->m, c->p->fs, x, &F);
  return F - c->p->fstar;
}

/* Agent i's running average xhat_i(k) = (1/k) sum_{h<k} x_i(h) from its state st into
 * out; x_i(0) itself at k = 0, before there is anything to average. */
static void running_average(size_t dim, const double *st, gsl_vector *out)
{
  double k = st[2 * dim];
  if (k < 1) {
    memcpy(out->data, st, dim * sizeof(double));
    return;
  }
  memcpy(out->data, st + dim, dim * sizeof(double));
  gsl_vector_scale(out, 1.0 / k);
}

/* Measures the agents' states st (agent i's at i * STATE_LEN(dim)) and appends the
 * point; returns the optimality gap. Sums go in rank order. */
double consensus_record_point(consensus *c, long iteration, const double *st)
{
  size_t m = c->m, dim = c->dim, len = STATE_LEN(dim);
  gsl_vector_set_zero(c->xbar);
  gsl_vector_set_zero(c->yhat);
  for (size_t i = 0; i < m; i++) {
    gsl_vector_const_view xi = gsl_vector_const_view_array(st + i * len, dim);
    gsl_vector_add(c->xbar, &xi.vector);
    running_average(dim, st + i * len, c->xhat);
    gsl_vector_add(c->yhat, c->xhat);
  }
  gsl_vector_scale(c->xbar, 1.0 / (double)m);
  gsl_vector_scale(c->yhat, 1.0 / (double)m);
  double err = 0, worst = -INFINITY, worst_avg = -INFINITY;
  for (size_t i = 0; i < m; i++) {
    memcpy(c->diff->data, st + i * len, dim * sizeof(double));
    double g = gap_at(c, c->diff);
    worst = g > worst ? g : worst;
    gsl_vector_sub(c->diff, c->xbar);
    double e = gsl_blas_dnrm2(c->diff);
    err = e > err ? e : err;
    running_average(dim, st + i * len, c->xhat);
    g = gap_at(c, c->xhat);
    worst_avg = g > worst_avg ? g : worst_avg;
  }
  if (c->n_trace == c->cap_trace) {
    c->cap_trace = c->cap_trace ? 2 * c->cap_trace : 256;
    c->trace = xbt_realloc(c->trace, c->cap_trace * sizeof(*c->trace));
  }
  double gap = gap_at(c, c->xbar);
  c->trace[c->n_trace++] = (consensus_point){.iteration = iteration, .sim_time = simgrid_get_clock(),
                                             .consensus_error = err, .optimality_gap = gap,
                                             .ergodic_gap = gap_at(c, c->yhat), .agent_gap_max = worst,
                                             .agent_ergodic_gap_max = worst_avg};
  return gap;
}

/* An agent's state for a measurement into dst (STATE_LEN(dim) doubles); the caller
 * holds what guards it. */
static void state_copy(const agent *a, double *dst)
{
  size_t dim = a->c->dim;
  memcpy(dst, a->x->data, dim * sizeof(double));
  memcpy(dst + dim, a->xsum->data, dim * sizeof(double));
  dst[2 * dim] = (double)a->k_done;
}

/* Sync: the last agent to deposit round r records it, as the evaluator would. */
static void measure_round(consensus *c, long r, const double *x)
{
  const run_config *cfg = c->cfg;
  double now = simgrid_get_clock(), gap = consensus_record_point(c, r, x);
  long steps = r * (long)c->m;
  metrics_record_eval(c->met, now, steps, gap, NAN);
  if (cfg->on_eval)
    cfg->on_eval(cfg->on_eval_ctx, now, steps, gap, NAN);
  if (!isfinite(gap)) {
    metrics_set_status(c->met, METRICS_DIVERGED);
    c->stop = 1;
  }
}

/* Round r's slot, opened on first use (agents may be rounds apart). */
static open_round *open_round_at(consensus *c, long r)
{
  open_round *free_slot = NULL;
  for (size_t i = 0; i < c->n_open; i++) {
    if (c->open[i].r == r)
      return &c->open[i];
    if (c->open[i].r < 0 && free_slot == NULL)
      free_slot = &c->open[i];
  }
  if (free_slot == NULL) {
    c->open = xbt_realloc(c->open, (c->n_open + 1) * sizeof(*c->open));
    free_slot = &c->open[c->n_open++];
    free_slot->x = xbt_malloc(c->m * STATE_LEN(c->dim) * sizeof(double));
  }
  free_slot->r = r;
  free_slot->count = 0;
  return free_slot;
}

/* Sync: deposits agent i's state of round r; the last of the m agents measures the
 * round and frees it. */
void consensus_deposit_state(agent *a, long r)
{
  consensus *c = a->c;
  sg_mutex_lock(c->mu);
  open_round *o = open_round_at(c, r);
  state_copy(a, o->x + a->rank * STATE_LEN(c->dim));
  if (++o->count == c->m) {
    measure_round(c, r, o->x);
    o->r = -1;
  }
  sg_mutex_unlock(c->mu);
}

/* Async evaluator: copies every agent's state, each under its agent's lock. */
void consensus_snapshot(void *ctx, gsl_vector *w)
{
  consensus *c = ctx;
  long done = 0;
  for (size_t i = 0; i < c->m; i++) {
    agent *a = &c->agents[i];
    sg_mutex_lock(a->mu);
    state_copy(a, w->data + i * STATE_LEN(c->dim));
    done += a->k_done;
    sg_mutex_unlock(a->mu);
  }
  c->snap_iteration = done / (long)c->m;
}

int consensus_measure(void *ctx, const gsl_vector *w, double *loss, double *accuracy)
{
  consensus *c = ctx;
  *loss = consensus_record_point(c, c->snap_iteration, w->data);
  *accuracy = NAN;
  return 0;
}

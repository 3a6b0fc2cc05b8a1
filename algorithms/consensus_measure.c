/* consensus_measure.c - the measurements of a distributed subgradient consensus run
 * (Nedic and Ozdaglar, IEEE TAC 2009, Section IV's running averages): each measurement's
 * consensus error and optimality gaps (consensus_point, consensus_measure.h), taken after
 * every round in sync mode and by the shared evaluator (eval.c) in async mode. */
#include "algorithms/consensus_measure.h"

#include <math.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <simgrid/engine.h>
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

/* Sync: the states of round r deposited so far (agent i's at i * CONSENSUS_STATE_LEN(dim)). */
typedef struct open_round {
  long r; /* -1: free */
  size_t count;
  double *x;
} open_round;

struct consensus_meter {
  const run_config *cfg;
  metrics *met;
  size_t m, dim;
  objective *const *fs;
  double fstar;
  open_round *open;
  size_t n_open;
  consensus_point *trace;
  size_t n_trace, cap_trace;
  gsl_vector *xbar, *diff, *yhat, *xhat;
};

consensus_meter *consensus_meter_create(const run_config *cfg, metrics *met, size_t m, size_t dim, objective *const *fs,
                                        double fstar)
{
  consensus_meter *mt = xbt_malloc0(sizeof(*mt));
  *mt = (consensus_meter){.cfg = cfg, .met = met, .m = m, .dim = dim, .fs = fs, .fstar = fstar};
  mt->xbar = gsl_vector_calloc(dim);
  mt->diff = gsl_vector_calloc(dim);
  mt->yhat = gsl_vector_calloc(dim);
  mt->xhat = gsl_vector_calloc(dim);
  return mt;
}

void consensus_meter_free(consensus_meter *mt)
{
  if (mt == NULL)
    return;
  for (size_t i = 0; i < mt->n_open; i++)
    xbt_free(mt->open[i].x);
  xbt_free(mt->open);
  gsl_vector_free(mt->xbar);
  gsl_vector_free(mt->diff);
  gsl_vector_free(mt->yhat);
  gsl_vector_free(mt->xhat);
  xbt_free(mt->trace);
  xbt_free(mt);
}

/* F(x) - f*, F summed in agent order. */
static double gap_at(const consensus_meter *mt, const gsl_vector *x)
{
  double F;
  objective_sum_value(mt->m, mt->fs, x, &F);
  return F - mt->fstar;
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

double consensus_meter_record(consensus_meter *mt, long iteration, const double *st)
{
  size_t m = mt->m, dim = mt->dim, len = CONSENSUS_STATE_LEN(dim);
  gsl_vector_set_zero(mt->xbar);
  gsl_vector_set_zero(mt->yhat);
  for (size_t i = 0; i < m; i++) {
    gsl_vector_const_view xi = gsl_vector_const_view_array(st + i * len, dim);
    gsl_vector_add(mt->xbar, &xi.vector);
    running_average(dim, st + i * len, mt->xhat);
    gsl_vector_add(mt->yhat, mt->xhat);
  }
  gsl_vector_scale(mt->xbar, 1.0 / (double)m);
  gsl_vector_scale(mt->yhat, 1.0 / (double)m);
  double err = 0, worst = -INFINITY, worst_avg = -INFINITY;
  for (size_t i = 0; i < m; i++) {
    memcpy(mt->diff->data, st + i * len, dim * sizeof(double));
    double g = gap_at(mt, mt->diff);
    worst = g > worst ? g : worst;
    gsl_vector_sub(mt->diff, mt->xbar);
    double e = gsl_blas_dnrm2(mt->diff);
    err = e > err ? e : err;
    running_average(dim, st + i * len, mt->xhat);
    g = gap_at(mt, mt->xhat);
    worst_avg = g > worst_avg ? g : worst_avg;
  }
  if (mt->n_trace == mt->cap_trace) {
    mt->cap_trace = mt->cap_trace ? 2 * mt->cap_trace : 256;
    mt->trace = xbt_realloc(mt->trace, mt->cap_trace * sizeof(*mt->trace));
  }
  double gap = gap_at(mt, mt->xbar);
  mt->trace[mt->n_trace++] = (consensus_point){.iteration = iteration, .sim_time = simgrid_get_clock(),
                                               .consensus_error = err, .optimality_gap = gap,
                                               .ergodic_gap = gap_at(mt, mt->yhat), .agent_gap_max = worst,
                                               .agent_ergodic_gap_max = worst_avg};
  return gap;
}

void consensus_meter_state(const gsl_vector *x, const gsl_vector *xsum, long k, double *dst)
{
  size_t dim = x->size;
  memcpy(dst, x->data, dim * sizeof(double));
  memcpy(dst + dim, xsum->data, dim * sizeof(double));
  dst[2 * dim] = (double)k;
}

/* Sync: the last agent to deposit round r records it, as the evaluator would; -1 when
 * its gap is not finite. */
static int measure_round(consensus_meter *mt, long r, const double *x)
{
  const run_config *cfg = mt->cfg;
  double now = simgrid_get_clock(), gap = consensus_meter_record(mt, r, x);
  long steps = r * (long)mt->m;
  metrics_record_eval(mt->met, now, steps, gap, NAN);
  if (cfg->on_eval)
    cfg->on_eval(cfg->on_eval_ctx, now, steps, gap, NAN);
  if (isfinite(gap))
    return 0;
  metrics_set_status(mt->met, METRICS_DIVERGED);
  return -1;
}

/* Round r's slot, opened on first use (agents may be rounds apart). */
static open_round *open_round_at(consensus_meter *mt, long r)
{
  open_round *free_slot = NULL;
  for (size_t i = 0; i < mt->n_open; i++) {
    if (mt->open[i].r == r)
      return &mt->open[i];
    if (mt->open[i].r < 0 && free_slot == NULL)
      free_slot = &mt->open[i];
  }
  if (free_slot == NULL) {
    mt->open = xbt_realloc(mt->open, (mt->n_open + 1) * sizeof(*mt->open));
    free_slot = &mt->open[mt->n_open++];
    free_slot->x = xbt_malloc(mt->m * CONSENSUS_STATE_LEN(mt->dim) * sizeof(double));
  }
  free_slot->r = r;
  free_slot->count = 0;
  return free_slot;
}

int consensus_meter_deposit(consensus_meter *mt, long r, size_t rank, const gsl_vector *x, const gsl_vector *xsum,
                            long k)
{
  open_round *o = open_round_at(mt, r);
  consensus_meter_state(x, xsum, k, o->x + rank * CONSENSUS_STATE_LEN(mt->dim));
  if (++o->count < mt->m)
    return 0;
  o->r = -1;
  return measure_round(mt, r, o->x);
}

size_t consensus_meter_trace(const consensus_meter *mt, const consensus_point **points)
{
  *points = mt->trace;
  return mt->n_trace;
}

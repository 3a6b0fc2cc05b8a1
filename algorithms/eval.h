#ifndef ALGORITHMS_EVAL_H
#define ALGORITHMS_EVAL_H
/* eval.h - the evaluator every algorithm shares, and the run's stop control.
 * The evaluator is an actor that never computes or sends in simulated time: every
 * eval_every simulated seconds it copies the current parameters (through the
 * algorithm's snapshot function), measures held-out loss and accuracy with real
 * numerics, records them, and decides whether the run must stop (target reached,
 * divergence). Workers ask it once per step whether to go on. All shared state is
 * behind SimGrid synchronisation, whose ordering is deterministic, so results stay
 * byte-identical with parallel contexts. */

#include <gsl/gsl_vector.h>

#include "algorithms/metrics.h"
#include "algorithms/run.h"

/* Copies the current global parameters into w; called from the evaluator actor. */
typedef void (*eval_snapshot_fn)(void *ctx, gsl_vector *w);

typedef struct eval_ctl eval_ctl;

/* A controller for a run whose training ends when n_finishers actors have called
 * eval_finished. snapshot may be NULL when numerics are off (then only steps are
 * recorded, with NaN loss and accuracy). Call from sim set-up, before simgrid_run. */
eval_ctl *eval_ctl_create(const run_config *cfg, metrics *m, int n_finishers,
                          eval_snapshot_fn snapshot, void *snapshot_ctx);
void eval_ctl_free(eval_ctl *e);

/* Measures held-out loss and accuracy of parameters w (numerics of a model other
 * than cfg->model). Returns 0 or -1. */
typedef int (*eval_measure_fn)(void *ctx, const gsl_vector *w, double *loss, double *accuracy);
/* Replaces net_evaluate on cfg->model with measure (w keeps cfg->model's parameter
 * count, which measure's model must share). Call before the run. */
void eval_set_measure(eval_ctl *e, eval_measure_fn measure, void *ctx);

/* Makes the evaluator's copy of the parameters n values long instead of cfg->model's
 * parameter count, for an algorithm whose snapshot is not a net's parameter vector
 * (with eval_set_measure). Call before the run. */
void eval_set_snapshot_size(eval_ctl *e, size_t n);

/* Creates the evaluator actor on host. */
void eval_start(eval_ctl *e, sg_host_t host);

/* A worker finished one step: counts it and returns 1 if the worker must stop
 * (stop requested, max_sim_time reached), else 0. */
int eval_step_done(eval_ctl *e);
/* Returns 1 if a worker must not start another step (as above, without counting). */
int eval_should_stop(eval_ctl *e);
/* An actor whose end marks the end of training is done. */
void eval_finished(eval_ctl *e);

#endif

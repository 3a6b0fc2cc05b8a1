#ifndef ALGORITHMS_METRICS_H
#define ALGORITHMS_METRICS_H
/* metrics.h - the sink actors record into: evaluations, steps, staleness.
 * Actors run on several threads under --cfg=contexts/nthreads:N, so every actor
 * writes only into its own slot (metrics_slot) and the slots are merged in rank
 * order after the simulation: nothing here is shared between running actors. */

#include <stddef.h>

typedef enum metrics_status {
  METRICS_OK = 0,              /* ran to its end (time, steps, or target reached) */
  METRICS_DIVERGED = -1,       /* a held-out loss was NaN or infinite */
  METRICS_TARGET_MISSED = -2,  /* a target accuracy was set and not reached */
  METRICS_LINESEARCH_FAILED = -3, /* L-BFGS found no point of sufficient decrease */
  METRICS_HOST_FAILED = -4,    /* [faults]: a host of a synchronous run failed; the run stopped */
  METRICS_STALLED = -5,        /* [faults]: the run outlived its deadline and was stopped */
  METRICS_LINK_FAILED = -6     /* [faults]: a link between hosts of a synchronous run failed */
} metrics_status;

typedef struct metrics_eval {
  double sim_time;
  long steps;
  double loss;
  double accuracy;
  double noise_scale; /* the gradient noise scale there (run.noise_scale_examples), or NaN */
  double grad_sq;     /* ... its |G|^2 and tr(Sigma) estimates, or NaN */
  double trace_sigma;
  double lambda_max;  /* the top Hessian eigenvalue there (run.curvature_examples), or NaN */
} metrics_eval;

/* One actor's private counters. */
typedef struct metrics_slot {
  long steps;             /* minibatches processed */
  long *staleness;        /* staleness[s] = updates applied with staleness s */
  size_t staleness_len;
} metrics_slot;

typedef struct metrics metrics;

/* A sink with n_slots private slots (one per actor that records). */
metrics *metrics_create(size_t n_slots);
void metrics_free(metrics *m);

metrics_slot *metrics_slot_at(metrics *m, size_t i);
/* Counts one applied update of staleness s in the slot. */
void metrics_slot_staleness(metrics_slot *slot, long s);

/* Evaluator only (one actor): appends an evaluation, sets the final status. An
 * algorithm's single controlling actor may also set the status, before it calls
 * eval_finished (which orders it before the evaluator's last look). */
void metrics_record_eval(metrics *m, double sim_time, long steps, double loss, double accuracy);
/* Evaluator only: the gradient noise scale measured at the last evaluation recorded. */
void metrics_record_noise(metrics *m, double noise_scale, double grad_sq, double trace_sigma);
/* Evaluator only: the top Hessian eigenvalue measured at the last evaluation recorded. */
void metrics_record_curvature(metrics *m, double lambda_max);
void metrics_set_status(metrics *m, metrics_status st);
void metrics_set_time_to_target(metrics *m, double t);

/* After the simulation. */
size_t metrics_n_evals(const metrics *m);
const metrics_eval *metrics_eval_at(const metrics *m, size_t i);
metrics_status metrics_get_status(const metrics *m);
const char *metrics_status_name(metrics_status st);
double metrics_time_to_target(const metrics *m); /* negative when not reached */
long metrics_total_steps(const metrics *m);      /* sum of the slots, in rank order */
/* Merged staleness histogram: returns its length and stores the counts in *counts
 * (owned by m, valid until metrics_free). */
size_t metrics_staleness(metrics *m, const long **counts);
/* Mean, quantile q in [0,1] (smallest s with cumulative share >= q) and max of the
 * merged staleness histogram; all 0 when nothing was recorded. */
double metrics_staleness_mean(metrics *m);
long metrics_staleness_quantile(metrics *m, double q);
long metrics_staleness_max(metrics *m);

#endif

#ifndef ALGORITHMS_CONSENSUS_MEASURE_H
#define ALGORITHMS_CONSENSUS_MEASURE_H
/* consensus_measure.h - the meter of a distributed subgradient consensus run (Nedic and
 * Ozdaglar, IEEE TAC 2009, Section IV's running averages): from the agents' states, handed
 * over as arrays of doubles, each measurement's consensus error and optimality gaps. It
 * knows nothing of agents or messages; consensus.c decides when to measure. */

#include <stddef.h>
#include <gsl/gsl_vector.h>

#include "algorithms/metrics.h"
#include "algorithms/run.h"
#include "models/objective.h"

/* What a measurement reads of one agent, CONSENSUS_STATE_LEN(dim) doubles: x_i(k), then
 * sum_{h<k} x_i(h), then k. */
#define CONSENSUS_STATE_LEN(dim) (2 * (dim) + 1)

/* One measurement of the agents' iterates x_1..x_m at one point of the run, with
 * F = sum_i f_i, xbar = (1/m) sum_i x_i, agent i's running average
 * xhat_i = (1/k_i) sum_{h<k_i} x_i(h) after its k_i iterations (x_i(0) while k_i = 0)
 * and yhat = (1/m) sum_i xhat_i: consensus_error = max_i ||x_i - xbar||_2,
 * optimality_gap = F(xbar) - f*, ergodic_gap = F(yhat) - f*, agent_gap_max =
 * max_i F(x_i) - f* and agent_ergodic_gap_max = max_i F(xhat_i) - f*. Synchronous runs
 * measure after every round (iteration = rounds done = every k_i, all x_i(iteration)
 * known); asynchronous runs every run.eval_every simulated seconds (iteration =
 * agents' updates so far / m). */
typedef struct consensus_point {
  long iteration;
  double sim_time;
  double consensus_error;
  double optimality_gap;
  double ergodic_gap;
  double agent_gap_max;
  double agent_ergodic_gap_max;
} consensus_point;

typedef struct consensus_meter consensus_meter;

/* A meter of m agents' dim-dimensional iterates against F = sum_i fs[i] and its minimum
 * fstar; sync measurements are recorded into met and shown through cfg's on_eval. fs, cfg
 * and met outlive it. Never NULL; free with consensus_meter_free (NULL is a no-op). */
consensus_meter *consensus_meter_create(const run_config *cfg, metrics *met, size_t m, size_t dim, objective *const *fs,
                                        double fstar);
void consensus_meter_free(consensus_meter *mt);

/* An agent's state for a measurement (x_i(k), the sum of its earlier iterates, k) into dst,
 * CONSENSUS_STATE_LEN(dim) doubles. */
void consensus_meter_state(const gsl_vector *x, const gsl_vector *xsum, long k, double *dst);

/* Measures the agents' states st (agent i's at i * CONSENSUS_STATE_LEN(dim)) and appends
 * the point at iteration; returns the optimality gap. Sums go in rank order. */
double consensus_meter_record(consensus_meter *mt, long iteration, const double *st);

/* Sync: deposits agent `rank`'s state (x, xsum, k) of round r; the last of the m agents
 * to deposit the round measures it and records the evaluation. Returns -1 when that
 * measurement diverged (the run must stop), else 0. The caller serialises the deposits. */
int consensus_meter_deposit(consensus_meter *mt, long r, size_t rank, const gsl_vector *x, const gsl_vector *xsum,
                            long k);

/* The measurements in order (owned by mt, valid until consensus_meter_free); returns how many. */
size_t consensus_meter_trace(const consensus_meter *mt, const consensus_point **points);

#endif

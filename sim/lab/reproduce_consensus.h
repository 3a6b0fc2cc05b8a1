#ifndef SIM_LAB_REPRODUCE_CONSENSUS_H
#define SIM_LAB_REPRODUCE_CONSENSUS_H
/* reproduce_consensus.h - what `dtsim reproduce consensus`'s two parts share: the runs
 * (reproduce_consensus.c: the scenario, the grid, the traces, the CSV, the plot) and the
 * claims its README judges from them (reproduce_consensus_claims.c). */
#include <jansson.h>
#include <stddef.h>
#include <string.h>

#include "sim/lab/reproduce_frame.h"

/* The agents of every run, and the 4 x 4 torus they make. */
#define AGENTS 16
#define TORUS_SIDE 4

/* Iterations per agent. Synchronous runs with a diminishing step run long enough for the
 * harmonic step to keep the gap below TARGET on the complete graph and the torus
 * (measured: from round 29474 and 68296 with lazy weights); constant steps long enough
 * for the floor, the mean gap over the second half, to be flat (measured: the torus at
 * alpha 0.02 settles after about 4000 rounds); asynchronous runs as before. CPU time
 * grows linearly with the iterations: 0.6 to 0.8 ms a synchronous round of 16 agents,
 * the measurement of every round included (78 s for 100000 rounds on the torus, 4.8 s
 * for 8000 on the ring, 4 s for an async run of 2000 on the complete graph:
 * /usr/bin/time on the machine these results were made on). */
#define DIM_STEPS 80000
#define CONST_STEPS 8000
#define ASYNC_STEPS 2000
#define QUICK_STEPS 300
/* Async samples: every 5 ms of simulated time, about 6 iterations. */
#define ASYNC_EVAL "0.005"
/* Async rows kept: up to this many iterations before the end, while no agent has left
 * yet, so a shorter (--quick) run's rows equal the full run's. */
#define ASYNC_TAIL 10
/* Sync rows kept: every iteration up to SYNC_DENSE, then two consecutive ones every
 * SYNC_EVERY up to SYNC_MID and every SYNC_SPARSE after: a constant step's gap alternates
 * from one round to the next, and rows of one parity only would sample one of its two
 * levels. */
#define SYNC_DENSE 20
#define SYNC_EVERY 20
#define SYNC_MID 2000
#define SYNC_SPARSE 500
/* Gap tolerances (the gap at x = 0 is 679): the target for diminishing steps, and the
 * one at which the graphs are ordered. */
#define TARGET 1e-3
#define ORDER_TOL 1e-1

static const char *const cons_topologies[] = {"ring", "torus", "complete"};
/* Two constant steps a factor 4 apart (the O(alpha) floor), and the diminishing rules
 * with the alpha0 of the lowest gap after 3000 rounds among 0.05/0.2/0.5 (harmonic) and
 * 0.005/0.01/0.02 (sqrt), measured on these 16-agent ring and complete graphs. */
static const struct {
  const char *rule, *alpha0;
} cons_rules[] = {{"constant", "0.02"}, {"constant", "0.005"}, {"harmonic", "0.2"}, {"sqrt", "0.01"}};
/* The robustness runs' smaller constant steps, continuing the factor 4. */
static const char *const cons_small_alpha[] = {"0.00125", "0.0003125"};
#define LAZY "lazy-metropolis"
#define METROPOLIS "metropolis"
#define N_TOPOLOGIES (sizeof(cons_topologies) / sizeof(cons_topologies[0]))
#define N_RULES (sizeof(cons_rules) / sizeof(cons_rules[0]))
#define N_SMALL (sizeof(cons_small_alpha) / sizeof(cons_small_alpha[0]))
#define MAX_RUNS 64

/* One configuration and, once run, its trace (the run's consensus.csv, parsed). */
typedef struct cons_run {
  const char *topology, *weights, *rule, *alpha0, *mode;
  long steps;
  char *text;        /* the run's consensus.csv; line[] points into it */
  size_t n;
  long *it;
  double *t, *err, *gap, *erg, *agmax, *agerg; /* the columns after the iteration */
  const char **line; /* "iteration,sim_time_s,consensus_error,optimality_gap,..." */
  size_t *len;
  double staleness;  /* summary.json's staleness.mean */
} cons_run;

static inline int is_sync(const cons_run *r)
{
  return strcmp(r->mode, "sync") == 0;
}

static inline int is_constant(const cons_run *r)
{
  return strcmp(r->rule, "constant") == 0;
}

/* Whether sample i of r goes into consensus.csv (see SYNC_* and ASYNC_TAIL). */
int reproduce_consensus_kept(const cons_run *r, size_t i);
/* The run of that configuration, or NULL (not in this grid). */
const cons_run *reproduce_consensus_find(const cons_run *runs, size_t n, const char *topology, const char *weights,
                                         const char *rule, const char *alpha0, const char *mode);
/* templates/consensus.md's values from the runs d->runs[0] (cons_run); 0. */
int reproduce_consensus_readme(json_t *v, const reproduce_data *d, char *err, size_t len);

#endif

#ifndef ALGORITHMS_CONSENSUS_IMPL_H
#define ALGORITHMS_CONSENSUS_IMPL_H
/* consensus_impl.h - the private state of a distributed subgradient consensus run
 * (Nedic and Ozdaglar, IEEE TAC 2009): each round's weights, the agents and their
 * async inboxes, the run's shared state, and the functions its files share: consensus.c
 * (the agents, set-up), consensus_rounds.c (the weights of each round),
 * consensus_config.c (the descriptor) and
 * consensus_report.c. Not part of the algorithm's interface (consensus.h). */

#include <stddef.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_vector.h>
#include <simgrid/forward.h>

#include "algorithms/consensus.h"
#include "algorithms/consensus_measure.h"
#include "algorithms/consensus_msg.h"
#include "algorithms/eval.h"
#include "models/graph.h"

/* One round's mixing weights, row by row: agent i mixes with weight a[e] the value of
 * agent idx[e], for e in [start[i], start[i+1]), agents ascending, i itself included. */
typedef struct round_w {
  size_t *start;
  size_t *idx;
  double *a;
  size_t users; /* agents done with the round (time-varying graphs free it after the last) */
} round_w;

/* The weights of every round: one fixed round_w, or rounds of a time-varying graph
 * generated in order, on demand, by whichever agent first needs one. */
typedef struct schedule {
  size_t m;
  round_w *fixed;
  graph_tv *tv;
  gsl_rng *rng;
  graph_wrule rule;
  gsl_matrix *Wk;    /* scratch: the weights of the round being generated */
  round_w **rounds;  /* [k]: round k, NULL once every agent is done with it */
  size_t n, cap;
  sg_mutex_t mu;
} schedule;

/* Async: what an agent's inbox actor has received. The inbox actor writes it under
 * mu; the agent takes the fresh values under mu. */
typedef struct inbox {
  sg_mutex_t mu;
  double *newest;       /* [p * dim]: the newest value received from neighbour nb[p] */
  long *newest_step;    /* [p]: its round */
  int *fresh;           /* [p]: newest changed since the agent last took it */
  long *received;       /* [p]: values received from nb[p] */
  long *announced;      /* [p]: values nb[p] says it sent, once it is done */
  int *done;            /* [p]: nb[p] is done */
} inbox;

typedef struct agent {
  struct consensus *c;
  size_t rank;
  sg_mailbox_t mbox;
  const size_t *nb;     /* neighbours in the union graph, ascending */
  size_t deg;
  gsl_vector *x, *v, *d; /* x_i(k), the mixed value, the subgradient */
  gsl_vector *xsum;     /* sum_{h<k} x_i(h), for the measurements' running averages */
  double *latest;       /* [p * dim]: the latest value of neighbour nb[p] the agent has */
  long *latest_step;    /* [p]: its round */
  long *sent;           /* [p]: values sent to nb[p] */
  int *nb_done;         /* [p]: async: nb[p] was done when the agent last took its inbox */
  consensus_state_msg **early; /* sync: values of rounds the agent has not reached yet */
  size_t n_early, cap_early;
  inbox in;             /* async */
  sg_mutex_t mu;        /* guards x, xsum and k_done against the async evaluator */
  long k_done;          /* iterations completed */
  metrics_slot *slot;
} agent;

struct consensus {
  const run_config *cfg;
  const consensus_setup *p;
  size_t m, dim, rows;
  metrics *met;
  agent *agents;
  schedule sched;
  sg_bar_t ready;       /* every mailbox has its receiver before any value is sent (sync: the
                           agents wait; async: the agents and their inbox actors) */
  eval_ctl *eval;       /* async mode */
  sg_mutex_t mu;        /* sync: the meter's deposits, the stop decision */
  long started;         /* sync: rounds started by the furthest agent */
  long stop_at;         /* sync: rounds < stop_at run; -1: not decided */
  int stop;             /* sync: divergence seen */
  long snap_iteration;  /* async: iteration of the evaluator's snapshot */
  consensus_meter *meter; /* the measurements (consensus_measure.h) */
};

static inline size_t row_len(const round_w *w, size_t i)
{
  return w->start[i + 1] - w->start[i];
}

/* The weights of every round (consensus_rounds.c). */
void consensus_schedule_init(schedule *s, const run_config *cfg, const consensus_setup *p);
void consensus_schedule_free(schedule *s);
/* Round k's weights; every agent calls consensus_schedule_done(s, k) once done with them. */
const round_w *consensus_schedule_round(schedule *s, long k);
void consensus_schedule_done(schedule *s, long k);

/* The descriptor's state of a run (consensus_config.c), read by its report. */
typedef struct consensus_run {
  consensus_setup setup;
  graph *g;
  gsl_matrix *W;
  objective **fs;
  consensus *c;
} consensus_run;

/* The descriptor's report and closing line (consensus_report.c). */
void consensus_report_run(void *state, const run_config *cfg, metrics *m, report *rep);
void consensus_closing(void *state, const run_config *cfg, const report_outcome *o, char *line, size_t len);

#endif

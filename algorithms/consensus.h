#ifndef ALGORITHMS_CONSENSUS_H
#define ALGORITHMS_CONSENSUS_H
/* consensus.h - distributed subgradient consensus (Nedic and Ozdaglar 2009): m agents
 * on m hosts, each holding a private convex f_i, mix their neighbours' iterates, which
 * travel as real messages, and take a subgradient step of their own f_i. */

#include <stddef.h>

#include <gsl/gsl_matrix.h>

#include "algorithms/algorithm.h"
#include "algorithms/consensus_measure.h"
#include "algorithms/metrics.h"
#include "algorithms/run.h"
#include "models/graph.h"
#include "models/objective.h"

/* How a consensus agent's step alpha(k) shrinks with its own iteration count k. */
typedef enum consensus_step {
  CONSENSUS_STEP_CONSTANT, /* alpha0 */
  CONSENSUS_STEP_HARMONIC, /* alpha0 / (k + 1) */
  CONSENSUS_STEP_SQRT      /* alpha0 / sqrt(k + 1) */
} consensus_step;

/* The [consensus] section. */
typedef struct consensus_params {
  size_t agents;                  /* m: agent i runs on hosts[i] */
  char topology[SETTINGS_STR];    /* ring | grid | torus | complete | star | erdos-renyi | geometric | edgelist:PATH */
  long grid_rows;                 /* grid and torus: rows; 0: the most square shape */
  double er_p;                    /* erdos-renyi: edge probability */
  double radius;                  /* geometric: connection radius in the unit square */
  double q;                       /* time-varying: probability an edge is active in a round; 1: fixed graph */
  size_t interval;                /* B: each edge of g is active at least once every B rounds */
  char weights[SETTINGS_STR];     /* metropolis | lazy-metropolis | max-degree | uniform | matrix:PATH */
  int objective;                  /* an objective_kind */
  long dim;                       /* problem dimension */
  long rows;                      /* data rows per agent */
  double lambda;                  /* global ridge term lambda/2 ||x||^2, lambda/m per agent */
  int step_rule;                  /* a consensus_step */
  double alpha0;
  int async;                      /* consensus.mode: 0 sync (rounds); 1 async (mix the latest values arrived) */
} consensus_params;

/* What a run of Nedic and Ozdaglar's method is given, built and checked before the engine
 * starts (the descriptor's prepare); all of it outlives the run. */
typedef struct consensus_setup {
  size_t agents;              /* m: agent i runs on hosts[i] */
  const graph *g;             /* union communication graph, connected */
  const gsl_matrix *W;        /* fixed weights, doubly stochastic on g; NULL when time-varying */
  graph_wrule rule;           /* weights of each round's active subgraph (time-varying) */
  double q;                   /* probability that an edge of g is active in a round; 1: fixed g */
  size_t interval;            /* B: each edge of g is active at least once every B rounds */
  objective *const *fs;       /* fs[i]: agent i's private f_i, all of one kind and dimension */
  double fstar;               /* min_x sum_i f_i(x) (objective_reference) */
  consensus_step step_rule;
  double alpha0;
  int async;                  /* 0: synchronous rounds; 1: mix with the latest values arrived */
} consensus_setup;

/* run.algorithm = consensus */
extern const algorithm consensus_algorithm;

typedef struct consensus consensus;

/* Agent i runs on cfg->hosts[i]: the run needs p->agents hosts and as many slots. */
size_t consensus_hosts_needed(const consensus_setup *p);
size_t consensus_metrics_slots(const consensus_setup *p);

/* Creates the agents (and, in async mode, an inbox actor per agent on its host, which
 * receives the agent's messages, and the evaluator) for p, whose
 * graph, weights and objectives sim/ has built and checked; cfg and m outlive the run.
 * Every agent runs at most cfg->max_steps iterations. Records the iteration-0 point at
 * once (every x_i(0) = 0). Returns NULL if cfg has fewer hosts than needed, max_steps
 * is 0 or numerics are off. Run the engine, then free with consensus_free. */
consensus *consensus_deploy(const run_config *cfg, const consensus_setup *p, metrics *m);
void consensus_free(consensus *c);

/* The measurements in order (owned by c, valid until consensus_free); returns how many. */
size_t consensus_trace(const consensus *c, const consensus_point **points);

/* Parses "constant|harmonic|sqrt"; returns 0 or -1. */
int consensus_step_parse(const char *s, consensus_step *rule);
const char *consensus_step_name(consensus_step rule);

#endif

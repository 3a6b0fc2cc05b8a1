#ifndef ALGORITHMS_CONSENSUS_H
#define ALGORITHMS_CONSENSUS_H
/* consensus.h - distributed subgradient consensus (Nedic and Ozdaglar 2009): m agents
 * on m hosts, each holding a private convex f_i, mix their neighbours' iterates, which
 * travel as real messages, and take a subgradient step of their own f_i. */

#include <stddef.h>

#include "algorithms/metrics.h"
#include "algorithms/run.h"

typedef struct consensus consensus;

/* One measurement of the agents' iterates x_1..x_m at one point of the run, with
 * xbar = (1/m) sum_i x_i: consensus_error = max_i ||x_i - xbar||_2 and
 * optimality_gap = sum_i f_i(xbar) - f*. Synchronous runs measure after every round
 * (iteration = rounds done, all x_i(iteration) known); asynchronous runs every
 * run.eval_every simulated seconds (iteration = agents' updates so far / m). */
typedef struct consensus_point {
  long iteration;
  double sim_time;
  double consensus_error;
  double optimality_gap;
} consensus_point;

/* Agent i runs on cfg->hosts[i]: the run needs p->agents hosts and as many slots. */
size_t consensus_hosts_needed(const consensus_params *p);
size_t consensus_metrics_slots(const consensus_params *p);

/* Creates the agents (and, in async mode, an inbox actor per agent on its host, which
 * receives the agent's messages, and the evaluator) for cfg->consensus, whose
 * graph, weights and objectives sim/ has built and checked; cfg and m outlive the run.
 * Every agent runs at most cfg->max_steps iterations. Records the iteration-0 point at
 * once (every x_i(0) = 0). Returns NULL if cfg has fewer hosts than needed, max_steps
 * is 0 or numerics are off. Run the engine, then free with consensus_free. */
consensus *consensus_deploy(const run_config *cfg, metrics *m);
void consensus_free(consensus *c);

/* The measurements in order (owned by c, valid until consensus_free); returns how many. */
size_t consensus_trace(const consensus *c, const consensus_point **points);

/* Parses "constant|harmonic|sqrt"; returns 0 or -1. */
int consensus_step_parse(const char *s, consensus_step *rule);
const char *consensus_step_name(consensus_step rule);

#endif

/* consensus_config.c - run.algorithm = consensus (Nedic and Ozdaglar, IEEE TAC 2009):
 * the [consensus] keys and their checks, the step rules' names, the hosts and memory a
 * run needs, and the descriptor `consensus_algorithm`, whose prepare builds and checks
 * the graph, its weights and the agents' objectives before the run (consensus.c deploys
 * it, consensus_report.c reports it). */
#include "algorithms/consensus_impl.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/keys.h"
#include "models/rng.h"

static const char *step_names[] = {"constant", "harmonic", "sqrt"};


int consensus_step_parse(const char *s, consensus_step *rule)
{
  for (int i = CONSENSUS_STEP_CONSTANT; i <= CONSENSUS_STEP_SQRT; i++)
    if (strcmp(s, step_names[i]) == 0) {
      *rule = (consensus_step)i;
      return 0;
    }
  return -1;
}

const char *consensus_step_name(consensus_step rule)
{
  xbt_assert((unsigned)rule <= CONSENSUS_STEP_SQRT, "unknown step rule %d", (int)rule);
  return step_names[rule];
}

/* ---- the descriptor: run.algorithm = consensus --------------------------------- */

static int check_topology(const char *v, char *why, size_t len)
{
  return key_check_name_or_file(v, "ring|grid|torus|complete|star|erdos-renyi|geometric", "edgelist:", "a topology",
                                "ring, grid, torus, complete, star, erdos-renyi, geometric or edgelist:PATH", why, len);
}

static int check_weights(const char *v, char *why, size_t len)
{
  return key_check_name_or_file(v, "metropolis|lazy-metropolis|max-degree|uniform", "matrix:", "a weight rule",
                                "metropolis, lazy-metropolis, max-degree, uniform or matrix:PATH", why, len);
}

static const key_spec consensus_keys[] = {
  {"consensus", "agents", KEY_SIZE, KEY_FIELD(consensus_params, agents), .def = "8", .unit = "agents",
   .doc = "Agents m, agent i on host i, each with its own objective f_i on its own data shard.",
   KEY_GE(1), KEY_LE(100000)},
  {"consensus", "topology", KEY_STR, KEY_FIELD(consensus_params, topology), .def = "ring", .unit = "",
   .doc = "Communication graph: `ring`, `grid` and `torus` (2-D, `grid_rows` rows), `complete`, "
          "`star` (agent 0 in the centre), `erdos-renyi` (G(m, p)), `geometric` (m points uniform in "
          "the unit square, joined within `radius`), or `edgelist:PATH` (lines `i j`, 0-based). Random "
          "graphs are drawn from `run.seed`; a disconnected graph is an error.",
   .check = check_topology, .paths = "edgelist:"},
  {"consensus", "grid_rows", KEY_LONG, KEY_FIELD(consensus_params, grid_rows), .def = "0", .unit = "agents",
   .doc = "`grid` and `torus`: rows of the lattice, which must divide `agents`; 0: the most square "
          "shape (the largest divisor of m up to sqrt(m)).",
   KEY_GE(0)},
  {"consensus", "p", KEY_DOUBLE, KEY_FIELD(consensus_params, er_p), .def = "0.5", .unit = "probability",
   .doc = "`erdos-renyi`: probability of each edge.", KEY_GE(0), KEY_LE(1)},
  {"consensus", "radius", KEY_DOUBLE, KEY_FIELD(consensus_params, radius), .def = "0.5", .unit = "",
   .doc = "`geometric`: two agents are neighbours when their points are at most this far apart.",
   KEY_GE(0)},
  {"consensus", "q", KEY_DOUBLE, KEY_FIELD(consensus_params, q), .def = "1", .unit = "probability",
   .doc = "Time-varying graph: each edge of the topology is active in a round with this "
          "probability (drawn from `run.seed`); 1: the fixed graph.",
   KEY_GE(0), KEY_LE(1)},
  {"consensus", "interval", KEY_SIZE, KEY_FIELD(consensus_params, interval), .def = "5", .unit = "rounds",
   .doc = "Time-varying graph: an edge inactive for `interval - 1` rounds is active in the next, so "
          "every edge is active at least once every `interval` rounds (Nedic-Ozdaglar's B).",
   KEY_GE(1)},
  {"consensus", "weights", KEY_STR, KEY_FIELD(consensus_params, weights), .def = "metropolis", .unit = "",
   .doc = "Mixing weights: `metropolis` (1/(1 + max(d_i, d_j)) on an edge), `lazy-metropolis` "
          "((I + Metropolis)/2: self-weights at least 1/2, as async runs and constant steps want; "
          "algorithms/README.md), `max-degree` (1/(1 + d_max)), `uniform` (1/(1 + d_i), regular "
          "graphs only), or `matrix:PATH` (m lines of m numbers). Each must be doubly stochastic "
          "within 1e-12 and zero off the graph's edges.",
   .check = check_weights, .paths = "matrix:"},
  {"consensus", "objective", KEY_CHOICE, KEY_FIELD(consensus_params, objective), .def = "least-squares", .unit = "",
   .doc = "Each agent's f_i on its shard (A_i, b_i): `least-squares` 1/2 ||A_i x - b_i||^2, `l1` "
          "||A_i x - b_i||_1, `hinge` sum_j max(0, 1 - b_j a_j.x); plus lambda/(2m) ||x||^2. The "
          "data is synthetic, drawn from `run.seed`.",
   .choices = "least-squares|l1|hinge"},
  {"consensus", "dim", KEY_LONG, KEY_FIELD(consensus_params, dim), .def = "10", .unit = "",
   .doc = "Dimension of x.", KEY_GE(1), KEY_LE(100000)},
  {"consensus", "rows", KEY_LONG, KEY_FIELD(consensus_params, rows), .def = "20", .unit = "rows",
   .doc = "Data rows in each agent's shard.", KEY_GE(1), KEY_LE(100000000)},
  {"consensus", "lambda", KEY_DOUBLE, KEY_FIELD(consensus_params, lambda), .def = "1", .unit = "",
   .doc = "Regularisation: the sum of the f_i carries lambda/2 ||x||^2, each agent lambda/m of it.",
   KEY_GE(0)},
  {"consensus", "step_rule", KEY_CHOICE, KEY_FIELD(consensus_params, step_rule), .def = "harmonic", .unit = "",
   .doc = "Step alpha(k) at an agent's iteration k: `constant` alpha0, `harmonic` alpha0/(k+1), "
          "`sqrt` alpha0/sqrt(k+1).",
   .choices = "constant|harmonic|sqrt"},
  {"consensus", "alpha0", KEY_DOUBLE, KEY_FIELD(consensus_params, alpha0), .def = "0.1", .unit = "",
   .doc = "Step size scale alpha0.", KEY_GT(0)},
  {"consensus", "mode", KEY_CHOICE, KEY_FIELD(consensus_params, async), .def = "sync", .unit = "",
   .doc = "`sync`: rounds, each agent waits for every neighbour's round-k value; `async`: each agent "
          "mixes the latest values that have arrived and never waits (measured every "
          "`run.eval_every`).",
   .choices = "sync|async"},
};

/* Combinations a consensus run cannot take. Whether the graph is connected and the
 * weights doubly stochastic is checked once they are built (prepare). */
static int consensus_plan_validate(const scenario *sc, const void *params, char *why, size_t len)
{
  const consensus_params *p = params;
  int tv = p->q < 1, grid = strcmp(p->topology, "grid") == 0 || strcmp(p->topology, "torus") == 0;
  size_t nk = sizeof consensus_keys / sizeof consensus_keys[0];
  const char *unused = !grid && key_changed(consensus_keys, nk, p, "grid_rows")                     ? "grid_rows"
                       : strcmp(p->topology, "erdos-renyi") != 0 && key_changed(consensus_keys, nk, p, "p") ? "p"
                       : strcmp(p->topology, "geometric") != 0 && key_changed(consensus_keys, nk, p, "radius")
                           ? "radius"
                           : NULL;
  if (unused)
    snprintf(why, len, "consensus.%s: has no effect with consensus.topology = %s (grid_rows shapes grid and torus, p "
             "erdos-renyi, radius geometric)", unused, p->topology);
  else if (sc->run.max_steps == 0)
    snprintf(why, len, "run.max_steps: consensus runs a fixed number of iterations per agent: set it "
             "(run.max_sim_time also bounds a run)");
  else if (!sc->model.numerics)
    snprintf(why, len, "model.numerics: consensus always computes its iterates; timing-only runs are "
             "not available");
  else if (sc->run.target_accuracy > 0)
    snprintf(why, len, "run.target_accuracy: consensus has no accuracy to reach (its loss is the "
             "optimality gap)");
  else if (grid && p->grid_rows > 0 && p->agents % (size_t)p->grid_rows != 0)
    snprintf(why, len, "consensus.grid_rows: %ld rows do not divide %zu agents", p->grid_rows, p->agents);
  else if (tv && strncmp(p->weights, "matrix:", 7) == 0)
    snprintf(why, len, "consensus.weights: a fixed matrix cannot follow a time-varying graph "
             "(consensus.q = %g < 1); use metropolis, lazy-metropolis or max-degree", p->q);
  else if (tv && strcmp(p->weights, "uniform") == 0)
    snprintf(why, len, "consensus.weights: uniform weights are doubly stochastic only on regular "
             "graphs, which a time-varying graph's rounds are not (consensus.q = %g < 1)", p->q);
  else
    return 0;
  return -1;
}

static size_t consensus_plan_hosts_needed(const scenario *sc, const void *params, const char **why)
{
  (void)sc;
  *why = "consensus.agents";
  return ((const consensus_params *)params)->agents;
}

/* Rows of a grid or torus over m agents: consensus.grid_rows, or the largest divisor of
 * m up to sqrt(m) (the most square shape; a prime m gives a path or a ring). */
static size_t lattice_rows(const consensus_params *p)
{
  size_t m = p->agents, r = 1;
  if (p->grid_rows > 0)
    return (size_t)p->grid_rows;
  for (size_t k = 1; k * k <= m; k++)
    if (m % k == 0)
      r = k;
  return r;
}

static graph *build_graph(const consensus_params *p, uint64_t seed, char *err, size_t len)
{
  size_t m = p->agents;
  const char *t = p->topology;
  if (strncmp(t, "edgelist:", 9) == 0)
    return graph_load_edgelist(t + 9, m, err, len);
  if (strcmp(t, "ring") == 0)
    return graph_ring(m);
  if (strcmp(t, "complete") == 0)
    return graph_complete(m);
  if (strcmp(t, "star") == 0)
    return graph_star(m);
  if (strcmp(t, "grid") == 0 || strcmp(t, "torus") == 0) {
    size_t r = lattice_rows(p);
    return t[0] == 'g' ? graph_grid2d(r, m / r) : graph_torus2d(r, m / r);
  }
  gsl_rng *r = rng_create(seed, RNG_ROLE_GRAPH, 0);
  graph *g = strcmp(t, "erdos-renyi") == 0 ? graph_erdos_renyi(m, p->er_p, r) : graph_geometric(m, p->radius, r, NULL);
  gsl_rng_free(r);
  return g;
}

/* The fixed weight matrix, checked doubly stochastic within 1e-12 on the graph; none
 * for a time-varying graph, whose rounds' weights come from a rule that is doubly
 * stochastic by construction (validate refuses uniform and matrices there). */
static int build_weights(const consensus_params *p, consensus_run *r, char *err, size_t len)
{
  size_t m = p->agents;
  char why[512];
  graph_wrule rule;
  if (strncmp(p->weights, "matrix:", 7) == 0) {
    r->W = graph_load_matrix(p->weights + 7, m, err, len);
    if (r->W == NULL)
      return -1;
  } else if (p->q < 1) {
    return 0;
  } else {
    xbt_assert(graph_wrule_parse(p->weights, &rule) == 0, "weights '%s' passed validation", p->weights);
    r->W = gsl_matrix_alloc(m, m);
    graph_weights(r->g, rule, r->W);
  }
  if (graph_check_doubly_stochastic(r->W, r->g, 1e-12, why, sizeof(why)) != 0) {
    snprintf(err, len, "consensus.weights: %s on this %s graph: %s", p->weights, p->topology, why);
    return -1;
  }
  return 0;
}

static void consensus_run_free(void *state);

/* The graph, its weights and the agents' synthetic objectives (objective_synthetic's
 * stream of run.seed) with the centralized reference f*, all checked before the run. */
static void *consensus_run_prepare(const run_config *cfg, char *err, size_t len)
{
  const consensus_params *p = algorithm_params(cfg->sc, &consensus_algorithm);
  size_t m = p->agents;
  consensus_run *r = xbt_malloc0(sizeof(*r));
  r->g = build_graph(p, cfg->seed, err, len);
  if (r->g == NULL) {
    consensus_run_free(r);
    return NULL;
  }
  if (!graph_is_connected(r->g)) {
    const char *hint = strcmp(p->topology, "erdos-renyi") == 0 ? " (drawn from run.seed: raise consensus.p or try another seed)"
                       : strcmp(p->topology, "geometric") == 0 ? " (drawn from run.seed: raise consensus.radius or try another seed)"
                                                               : "";
    snprintf(err, len, "consensus.topology: the %s graph on %zu agents is disconnected, and every agent must "
             "reach every other%s", p->topology, m, hint);
    consensus_run_free(r);
    return NULL;
  }
  if (build_weights(p, r, err, len) != 0) {
    consensus_run_free(r);
    return NULL;
  }
  r->fs = xbt_malloc0(m * sizeof(objective *));
  gsl_rng *rng = rng_create(cfg->seed, RNG_ROLE_DATA, 0);
  xbt_assert(objective_synthetic((objective_kind)p->objective, m, (size_t)p->dim, (size_t)p->rows, p->lambda, rng,
                                 r->fs) == 0, "consensus problem sizes passed validation");
  gsl_rng_free(rng);
  double fstar;
  gsl_vector *xstar = gsl_vector_alloc((size_t)p->dim);
  objective_reference(m, r->fs, xstar, &fstar);
  gsl_vector_free(xstar);
  graph_wrule rule = GRAPH_W_METROPOLIS;
  graph_wrule_parse(p->weights, &rule);
  r->setup = (consensus_setup){.agents = m, .g = r->g, .W = r->W, .rule = rule, .q = p->q, .interval = p->interval,
                               .fs = r->fs, .fstar = fstar, .step_rule = (consensus_step)p->step_rule,
                               .alpha0 = p->alpha0, .async = p->async};
  return r;
}

static size_t consensus_run_metrics_slots(void *state, const run_config *cfg)
{
  (void)cfg;
  return consensus_metrics_slots(&((consensus_run *)state)->setup);
}

static void consensus_run_deploy(void *state, const run_config *cfg, metrics *m)
{
  consensus_run *r = state;
  r->c = consensus_deploy(cfg, &r->setup, m);
  xbt_assert(r->c != NULL, "a validated consensus scenario could not be deployed");
}

static void consensus_run_free(void *state)
{
  consensus_run *r = state;
  consensus_free(r->c);
  for (size_t i = 0; r->fs && i < graph_n(r->g); i++)
    objective_free(r->fs[i]);
  xbt_free(r->fs);
  if (r->W)
    gsl_matrix_free(r->W);
  graph_free(r->g);
  xbt_free(r);
}

/* Each agent's shard (rows x (dim + 1)) and a few iterates of dim, the weight matrix of a
 * fixed graph (agents^2), and async mode's inbox per agent. */
static double consensus_plan_footprint(const scenario *sc, const void *params, double *actors, const char **what)
{
  (void)sc;
  const consensus_params *p = params;
  double m = (double)p->agents, d = (double)p->dim;
  *actors = m * (p->async ? 2 : 1) + 1;
  *what = "consensus.agents x consensus.rows x (consensus.dim + 1) data, and agents^2 weights on a fixed graph";
  return (m * ((double)p->rows * (d + 1) + 8 * d) + (p->q < 1 ? 0 : m * m)) * 8;
}

const algorithm consensus_algorithm = {
  .name = "consensus",
  .summary = "distributed subgradient consensus: agents mix neighbours' iterates (Nedic and Ozdaglar 2009)",
  .section_doc = "distributed subgradient consensus (Nedic and Ozdaglar 2009, `run.algorithm = consensus`): agents, "
                 "their graph and weights, the problem, the step",
  ALGORITHM_SECTION(consensus_keys, consensus_params),
  .files = "consensus.csv",
  .fail_stop = 1,
  .loss_name = "gap", /* the optimality gap it records as progress.csv's loss */
  .reports = "final_loss examples_per_s staleness",
  .plan = {.validate = consensus_plan_validate, .hosts_needed = consensus_plan_hosts_needed,
           .footprint = consensus_plan_footprint},
  .run = {.prepare = consensus_run_prepare, .metrics_slots = consensus_run_metrics_slots,
          .deploy = consensus_run_deploy, .report = consensus_report_run, .closing = consensus_closing,
          .free = consensus_run_free},
};

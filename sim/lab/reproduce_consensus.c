/* reproduce_consensus.c - `dtsim reproduce consensus`: Nedic & Ozdaglar's distributed
 * subgradient method (IEEE TAC 54(1):48-61, 2009) on ring, torus and complete graphs of
 * 16 agents, each step rule, synchronous and asynchronous, one simulation per process,
 * with lazy Metropolis weights; robustness runs with Metropolis weights and with smaller
 * constant steps. The claims of the README are computed from the runs' traces, and the
 * weights' spectra from the weight matrices themselves (models/graph.c). */
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_sort_vector.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "models/graph.h"
#include "sim/fileio.h"
#include "sim/output.h"
#include "sim/lab/reproduce.h"
#include "sim/lab/template.h"

/* 16 one-core hosts of 1 Mflop/s on a 1 GbE star, as tests/data/consensus-16.xml: a
 * subgradient of a 20 x 10 shard (800 flops) takes 0.8 ms, about a value's trip (LV08:
 * 13.01 x 2 x 50 us = 1.3 ms), so async agents really mix stale values. On a preset a
 * subgradient takes nanoseconds and async agents finish before any value arrives
 * (algorithms/README.md, consensus). Sync iterates do not depend on the platform. */
static const char cons_platform[] =
    "<?xml version='1.0'?>\n"
    "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    "<!-- dtsim reproduce consensus: 16 slow one-core hosts (1 Mflop/s) on a 1 GbE star, so that a\n"
    "     subgradient of a 20 x 10 shard takes about as long as a value's trip. -->\n"
    "<platform version=\"4.1\">\n"
    "  <cluster id=\"slow\" prefix=\"agent-host-\" suffix=\"\" radical=\"0-15\" speed=\"1Mf\" core=\"1\" "
    "bw=\"125MBps\" lat=\"50us\"/>\n"
    "</platform>\n";

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

#define STR_(x) #x
#define STR(x) STR_(x)

static const char cons_ini[] =
    "; dtsim reproduce consensus: Nedic & Ozdaglar 2009, distributed subgradient method.\n"
    "; Each run sets consensus.topology, consensus.weights, consensus.step_rule,\n"
    "; consensus.alpha0, consensus.mode and run.max_steps. Its platform file is named\n"
    "; relative to this file's folder, where dtsim looks for it.\n"
    "[run]\n"
    "algorithm = consensus\n"
    "max_steps = " STR(CONST_STEPS) "       ; set per run\n"
    "max_sim_time = 1e9       ; s simulated: every run ends at its max_steps (80000 rounds take 132 s)\n"
    "eval_every = " ASYNC_EVAL "      ; s simulated between async samples (sync measures every round)\n"
    "[platform]\n"
    "file = consensus-16.xml  ; 16 one-core 1 Mflop/s hosts, 1 GbE star\n"
    "[consensus]\n"
    "agents = " STR(AGENTS) "\n"
    "topology = ring          ; set per run: ring, torus (4 x 4), complete\n"
    "weights = lazy-metropolis ; set per run (metropolis in the robustness runs)\n"
    "objective = l1           ; ||A_i x - b_i||_1 + lambda/(2m) ||x||^2, nonsmooth\n"
    "rows = 20\n"
    "dim = 10\n"
    "lambda = 1\n"
    "step_rule = harmonic     ; set per run\n"
    "alpha0 = 0.2             ; set per run\n"
    "mode = sync              ; set per run\n";

static const char *const cons_topologies[] = {"ring", "torus", "complete"};
/* Two constant steps a factor 4 apart (the O(alpha) floor), and the diminishing rules
 * with the alpha0 of the lowest gap after 3000 rounds among 0.05/0.2/0.5 (harmonic) and
 * 0.005/0.01/0.02 (sqrt), measured on these 16-agent ring and complete graphs. */
static const struct {
  const char *rule, *alpha0;
} cons_rules[] = {{"constant", "0.02"}, {"constant", "0.005"}, {"harmonic", "0.2"}, {"sqrt", "0.01"}};
/* The robustness runs' smaller constant steps, continuing the factor 4. */
static const char *const cons_small_alpha[] = {"0.00125", "0.0003125"};
static const char *const cons_modes[] = {"sync", "async"};
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

static int is_sync(const cons_run *r)
{
  return strcmp(r->mode, "sync") == 0;
}

static int is_constant(const cons_run *r)
{
  return strcmp(r->rule, "constant") == 0;
}

/* Parses job's consensus.csv and summary.json into r. Returns 0 or -1 with err. */
static int cons_read(cons_run *r, const reproduce_job *job, char *err, size_t len)
{
  char path[700];
  snprintf(path, sizeof(path), "%s/summary.json", job->dir);
  json_t *s = json_load_file(path, 0, NULL);
  r->staleness = s ? json_number_value(json_object_get(json_object_get(s, "staleness"), "mean")) : 0;
  json_decref(s);
  snprintf(path, sizeof(path), "%s/consensus.csv", job->dir);
  r->text = fileio_read(path, NULL);
  if (r->text == NULL || s == NULL) {
    snprintf(err, len, "%s: no result", path);
    return -1;
  }
  size_t cap = 1;
  for (const char *p = r->text; *p; p++)
    cap += *p == '\n';
  r->it = xbt_malloc(cap * sizeof(long));
  double **cols[] = {&r->t, &r->err, &r->gap, &r->erg, &r->agmax, &r->agerg};
  for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++)
    *cols[c] = xbt_malloc(cap * sizeof(double));
  r->line = xbt_malloc(cap * sizeof(char *));
  r->len = xbt_malloc(cap * sizeof(size_t));
  const char *p = r->text + strcspn(r->text, "\n"); /* after the header */
  while (*p == '\n' && p[1]) {
    p++;
    size_t i = r->n;
    xbt_assert(i < cap, "consensus.csv: more lines than counted");
    if (sscanf(p, "%ld,%lf,%lf,%lf,%lf,%lf,%lf", &r->it[i], &r->t[i], &r->err[i], &r->gap[i], &r->erg[i],
               &r->agmax[i], &r->agerg[i]) != 7) {
      snprintf(err, len, "%s: unreadable line %zu", path, i + 2);
      return -1;
    }
    r->line[i] = p;
    r->len[i] = strcspn(p, "\n");
    p += r->len[i];
    r->n++;
  }
  return r->n ? 0 : -1;
}

static void cons_run_free_trace(cons_run *r)
{
  double *cols[] = {r->t, r->err, r->gap, r->erg, r->agmax, r->agerg};
  for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++)
    xbt_free(cols[c]);
  xbt_free(r->it);
  xbt_free(r->line);
  xbt_free(r->len);
  xbt_free(r->text);
}

/* Whether sample i goes into consensus.csv (see SYNC_* and ASYNC_TAIL). */
static int kept(const cons_run *r, size_t i)
{
  long k = r->it[i];
  if (is_sync(r))
    return k <= SYNC_DENSE || (k <= SYNC_MID && k % SYNC_EVERY <= 1) || k % SYNC_SPARSE <= 1;
  return k <= r->steps - ASYNC_TAIL;
}

/* The documented columns, then `mode` (sync or async), which they cannot tell apart,
 * then the run's averaged and worst-agent gaps. */
static char *cons_csv(const cons_run *runs, size_t n)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fputs("topology,weights,step_rule,alpha0,iteration,sim_time_s,consensus_error,optimality_gap,mode,ergodic_gap,"
        "agent_gap_max,agent_ergodic_gap_max\n",
        f);
  for (size_t k = 0; k < n; k++)
    for (size_t i = 0; i < runs[k].n; i++) {
      if (!kept(&runs[k], i))
        continue;
      const char *l = runs[k].line[i];
      size_t four = 0; /* the length of the line's first four fields */
      for (int commas = 0; four < runs[k].len[i] && commas < 4; four++)
        commas += l[four] == ',';
      xbt_assert(four < runs[k].len[i], "consensus.csv: a line with fewer than 5 fields");
      fprintf(f, "%s,%s,%s,%s,%.*s%s,%.*s\n", runs[k].topology, runs[k].weights, runs[k].rule, runs[k].alpha0,
              (int)four, l, runs[k].mode, (int)(runs[k].len[i] - four), l + four);
    }
  fclose(f);
  return text;
}

static const cons_run *find(const cons_run *runs, size_t n, const char *topology, const char *weights,
                            const char *rule, const char *alpha0, const char *mode)
{
  for (size_t k = 0; k < n; k++)
    if (strcmp(runs[k].topology, topology) == 0 && strcmp(runs[k].weights, weights) == 0 &&
        strcmp(runs[k].rule, rule) == 0 && strcmp(runs[k].alpha0, alpha0) == 0 && strcmp(runs[k].mode, mode) == 0)
      return &runs[k];
  return NULL;
}

/* The sample from which v stays <= tol to the end, or -1 if the last is above. */
static long reach(const cons_run *r, const double *v, double tol)
{
  long i = (long)r->n;
  while (i > 0 && v[i - 1] <= tol)
    i--;
  return i == (long)r->n ? -1 : i;
}

/* The iteration at which the gap reaches tol for good; a large number if it does not. */
static long reach_it(const cons_run *r, double tol)
{
  long i = r ? reach(r, r->gap, tol) : -1;
  return i < 0 ? 1L << 40 : r->it[i];
}

/* Mean of v over the samples with from < iteration <= to. */
static double mean_of(const cons_run *r, const double *v, long from, long to)
{
  double s = 0;
  long c = 0;
  for (size_t i = 0; i < r->n; i++)
    if (r->it[i] > from && r->it[i] <= to) {
      s += v[i];
      c++;
    }
  return c ? s / (double)c : NAN;
}

/* A constant step's floor: the mean gap over the second half of the run. */
static double floor_of(const cons_run *r)
{
  long end = r->it[r->n - 1];
  return mean_of(r, r->gap, end / 2, end);
}

/* v at the run's end: its last sample that consensus.csv keeps (the last one in sync
 * mode; in async mode ASYNC_TAIL iterations before the end, as agents start to leave),
 * so that every end figure of the README can be read in the CSV. */
static double last(const cons_run *r, const double *v)
{
  size_t i = r->n - 1;
  while (i > 0 && !kept(r, i))
    i--;
  return v[i];
}

/* item[key] = "N (T s)" for reaching tol (or "N" without the time), "not within N", or
 * "not run". */
static void set_reach(json_t *item, const char *key, const cons_run *r, double tol, int with_time)
{
  long i = r ? reach(r, r->gap, tol) : -1;
  if (r == NULL)
    template_set(item, key, "not run");
  else if (i < 0)
    template_set(item, key, "not within %ld", r->it[r->n - 1]);
  else if (with_time)
    template_set(item, key, "%ld (%.3f s)", r->it[i], r->t[i]);
  else
    template_set(item, key, "%ld", r->it[i]);
}

/* A new item of the list values[key], its "graph" the topology if one is given. */
static json_t *add_item(json_t *values, const char *key, const char *topology)
{
  json_t *item = template_add(values, key);
  if (topology)
    template_set(item, "graph", "%s", topology);
  return item;
}

/* ---- the weights' spectra ------------------------------------------------------- */

/* The second largest and the smallest eigenvalue of the rule's weights on a topology of
 * the grid, from the matrix graph_weights builds (symmetric for both rules used). */
static void spectrum(const char *topology, graph_wrule rule, double *l2, double *lmin)
{
  graph *g = strcmp(topology, "ring") == 0    ? graph_ring(AGENTS)
             : strcmp(topology, "torus") == 0 ? graph_torus2d(TORUS_SIDE, AGENTS / TORUS_SIDE)
                                              : graph_complete(AGENTS);
  gsl_matrix *W = gsl_matrix_alloc(AGENTS, AGENTS);
  gsl_vector *ev = gsl_vector_alloc(AGENTS);
  gsl_eigen_symm_workspace *ws = gsl_eigen_symm_alloc(AGENTS);
  xbt_assert(graph_weights(g, rule, W) == 0 && gsl_eigen_symm(W, ev, ws) == 0, "spectrum of %s", topology);
  gsl_sort_vector(ev);
  *lmin = gsl_vector_get(ev, 0);
  *l2 = gsl_vector_get(ev, AGENTS - 2);
  /* the complete graph's Metropolis weights are J/m: exact zeros come out as +-1e-17 */
  *lmin = fabs(*lmin) < 1e-12 ? 0 : *lmin;
  *l2 = fabs(*l2) < 1e-12 ? 0 : *l2;
  gsl_eigen_symm_free(ws);
  gsl_vector_free(ev);
  gsl_matrix_free(W);
  graph_free(g);
}

/* ---- the README (templates/consensus.md) --------------------------------------------- */

static void setup_values(json_t *v, const cons_run *runs, size_t n, int quick)
{
  template_set(v, "quick", "%s", quick ? " --quick" : "");
  template_set(v, "max_steps", "%d", quick ? QUICK_STEPS : ASYNC_STEPS);
  json_object_set_new(v, "quick_run", json_boolean(quick));
  template_set(v, "quick_steps", "%d", QUICK_STEPS);
  template_set(v, "dim_steps", "%d", DIM_STEPS);
  template_set(v, "const_steps", "%d", CONST_STEPS);
  template_set(v, "async_steps", "%d", ASYNC_STEPS);
  template_set(v, "sync_dense", "%d", SYNC_DENSE);
  template_set(v, "sync_every", "%d", SYNC_EVERY);
  template_set(v, "sync_mid", "%d", SYNC_MID);
  template_set(v, "sync_sparse", "%d", SYNC_SPARSE);
  template_set(v, "async_eval", "%s", ASYNC_EVAL);
  template_set(v, "async_tail", "%d", ASYNC_TAIL);
  template_set(v, "gap0", "%.4g", n ? runs[0].gap[0] : 0.0);
}

/* The "claim vs dtsim" table: the diminishing steps' ends and the constant steps' floors. */
static void claims_steps(json_t *v, const cons_run *runs, size_t n)
{
  template_list(v, "harmonic_end");
  template_list(v, "sqrt_end");
  template_list(v, "floor_ratio");
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    const cons_run *h = find(runs, n, cons_topologies[t], LAZY, "harmonic", "0.2", "sync");
    if (h == NULL)
      continue;
    json_t *it = add_item(v, "harmonic_end", cons_topologies[t]);
    set_reach(it, "reach", h, TARGET, 1);
    template_set(it, "gap", "%.3g", last(h, h->gap));
    template_set(it, "erg", "%.3g", last(h, h->erg));
    template_set(it, "agmax", "%.3g", last(h, h->agmax));
    template_set(it, "agerg", "%.3g", last(h, h->agerg));
  }
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    const cons_run *q = find(runs, n, cons_topologies[t], LAZY, "sqrt", "0.01", "sync");
    if (q == NULL)
      continue;
    json_t *it = add_item(v, "sqrt_end", cons_topologies[t]);
    template_set(it, "gap", "%.3g", last(q, q->gap));
    template_set(it, "rounds", "%ld", q->it[q->n - 1]);
  }
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    const cons_run *a = find(runs, n, cons_topologies[t], LAZY, "constant", "0.02", "sync"),
                   *b = find(runs, n, cons_topologies[t], LAZY, "constant", "0.005", "sync");
    if (a == NULL || b == NULL)
      continue;
    json_t *it = add_item(v, "floor_ratio", cons_topologies[t]);
    template_set(it, "a", "%.3g", floor_of(a));
    template_set(it, "b", "%.3g", floor_of(b));
    template_set(it, "ratio", "%.2f", floor_of(a) / floor_of(b));
  }
}

/* The "claim vs dtsim" table: the graphs' order and the asynchronous runs. */
static void claims_graphs(json_t *v, const cons_run *runs, size_t n)
{
  template_list(v, "graph_order");
  for (size_t r = 2; r < N_RULES; r++) {
    if (find(runs, n, "ring", LAZY, cons_rules[r].rule, cons_rules[r].alpha0, "sync") == NULL)
      continue;
    json_t *rule = add_item(v, "graph_order", NULL);
    template_set(rule, "rule", "%s", cons_rules[r].rule);
    template_list(rule, "graphs");
    long it[N_TOPOLOGIES];
    int have = 1;
    for (size_t t = N_TOPOLOGIES; t-- > 0;) {
      const cons_run *h = find(runs, n, cons_topologies[t], LAZY, cons_rules[r].rule, cons_rules[r].alpha0, "sync");
      it[t] = reach_it(h, ORDER_TOL);
      if (h == NULL) {
        have = 0;
        continue;
      }
      set_reach(add_item(rule, "graphs", cons_topologies[t]), "reach", h, ORDER_TOL, 0);
    }
    json_object_set_new(rule, "judged", json_boolean(have));
    template_set(rule, "holds", "%s", it[2] < it[1] && it[1] < it[0] ? "holds" : "does not hold");
  }
  template_list(v, "async_reach");
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    const cons_run *a = find(runs, n, cons_topologies[t], LAZY, "harmonic", "0.2", "async"),
                   *s = find(runs, n, cons_topologies[t], LAZY, "harmonic", "0.2", "sync");
    if (a == NULL || s == NULL)
      continue;
    json_t *it = add_item(v, "async_reach", cons_topologies[t]);
    set_reach(it, "async", a, ORDER_TOL, 1);
    set_reach(it, "sync", s, ORDER_TOL, 1);
    template_set(it, "staleness", "%.4g", a->staleness);
  }
  const cons_run *worst = NULL;
  for (size_t k = 0; k < n; k++)
    if (strcmp(runs[k].weights, LAZY) == 0 && !is_sync(&runs[k]) &&
        (worst == NULL || last(&runs[k], runs[k].gap) / runs[k].gap[0] > last(worst, worst->gap) / worst->gap[0]))
      worst = &runs[k];
  json_object_set_new(v, "async_worst", json_boolean(worst != NULL));
  if (worst) {
    template_set(v, "worst_ratio", "%.3g", last(worst, worst->gap) / worst->gap[0]);
    template_set(v, "worst_at", "%s, %s %s", worst->topology, worst->rule, worst->alpha0);
  }
}

/* Iterations, simulated time and CPU of a gap of TARGET with diminishing steps. */
static void cost_values(json_t *v, const cons_run *runs, size_t n)
{
  template_list(v, "harmonic_cost");
  template_list(v, "sqrt_cost");
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    const cons_run *h = find(runs, n, cons_topologies[t], LAZY, "harmonic", "0.2", "sync");
    if (h == NULL || strcmp(cons_topologies[t], "ring") == 0)
      continue;
    long i = reach(h, h->gap, TARGET);
    json_t *it = add_item(v, "harmonic_cost", cons_topologies[t]);
    json_object_set_new(it, "reached", json_boolean(i >= 0));
    template_set(it, "run_rounds", "%ld", h->it[h->n - 1]);
    template_set(it, "gap", "%.3g", last(h, h->gap));
    template_set(it, "run_s", "%.1f", last(h, h->t));
    if (i >= 0) {
      template_set(it, "rounds", "%ld", h->it[i]);
      template_set(it, "subgradients", "%ld", 16 * h->it[i]);
      template_set(it, "sim_s", "%.1f", h->t[i]);
    }
  }
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    const cons_run *q = find(runs, n, cons_topologies[t], LAZY, "sqrt", "0.01", "sync");
    if (q == NULL || strcmp(cons_topologies[t], "ring") == 0)
      continue;
    double g = last(q, q->gap), x = (g / TARGET) * (g / TARGET);
    json_t *it = add_item(v, "sqrt_cost", cons_topologies[t]);
    json_object_set_new(it, "reached", json_boolean(g <= TARGET));
    if (g <= TARGET)
      template_set(it, "rounds", "%ld", q->it[reach(q, q->gap, TARGET)]);
    template_set(it, "gap", "%.3g", g);
    template_set(it, "run_rounds", "%ld", q->it[q->n - 1]);
    template_set(it, "factor", "%.3g", x);
    template_set(it, "extrapolated", "%.2g", x * (double)q->it[q->n - 1]);
  }
}

/* The synchronous constant-step floors of both weight rules, those that were run. */
static void floor_values(json_t *v, const cons_run *runs, size_t n)
{
  const char *const weights[] = {METROPOLIS, LAZY};
  template_list(v, "floors");
  for (size_t t = 0; t < N_TOPOLOGIES; t++)
    for (size_t w = 0; w < 2; w++)
      for (size_t r = 0; r < 2; r++) {
        const cons_run *c = find(runs, n, cons_topologies[t], weights[w], "constant", cons_rules[r].alpha0, "sync");
        if (c == NULL)
          continue;
        long end = c->it[c->n - 1];
        json_t *it = add_item(v, "floors", c->topology);
        template_set(it, "weights", "%s", c->weights);
        template_set(it, "alpha", "%s", c->alpha0);
        template_set(it, "floor", "%.3g", floor_of(c));
        template_set(it, "q1", "%.3g", mean_of(c, c->gap, end / 2, 3 * end / 4));
        template_set(it, "q2", "%.3g", mean_of(c, c->gap, 3 * end / 4, end));
        template_set(it, "error", "%.3g", mean_of(c, c->err, end / 2, end));
        template_set(it, "agmax", "%.3g", mean_of(c, c->agmax, end / 2, end));
        template_set(it, "erg", "%.3g", last(c, c->erg));
        template_set(it, "agerg", "%.3g", last(c, c->agerg));
      }
  template_list(v, "floor_order");
  for (size_t r = 0; r < 2; r++) {
    double fl[N_TOPOLOGIES];
    json_t *it = add_item(v, "floor_order", NULL);
    for (size_t t = 0; t < N_TOPOLOGIES; t++) {
      const cons_run *c = find(runs, n, cons_topologies[t], LAZY, "constant", cons_rules[r].alpha0, "sync");
      fl[t] = c ? floor_of(c) : NAN;
      template_set(it, cons_topologies[t], "%.3g", fl[t]);
    }
    template_set(it, "sep", "%s", r ? ";" : "");
    template_set(it, "alpha", "%s", cons_rules[r].alpha0);
    template_set(it, "torus_vs", "%s", fl[1] < fl[0] ? "below" : "not below");
    template_set(it, "complete_vs", "%s", fl[2] < fl[1] ? "below" : "not below");
  }
}

/* The ring's synchronous lazy run with a constant step alpha0 (run whenever the smaller
 * steps were). */
static const cons_run *r_of(const cons_run *runs, size_t n, const char *alpha0)
{
  const cons_run *r = find(runs, n, "ring", LAZY, "constant", alpha0, "sync");
  xbt_assert(r != NULL, "the ring's constant %s run is part of the robustness grid", alpha0);
  return r;
}

/* The floor against the step with lazy weights: its table, and whether it follows the
 * step (fl, moving: each graph's floors and whether they still move). */
static void step_table(json_t *v, const cons_run *runs, size_t n, const char *const *alphas, double fl[][4],
                       int moving[][4])
{
  template_list(v, "step_rows");
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    json_t *row = add_item(v, "step_rows", cons_topologies[t]);
    template_list(row, "cells");
    for (size_t a = 0; a < 4; a++) {
      const cons_run *c = find(runs, n, cons_topologies[t], LAZY, "constant", alphas[a], "sync");
      fl[t][a] = c ? floor_of(c) : NAN;
      long end = c ? c->it[c->n - 1] : 0;
      double q1 = c ? mean_of(c, c->gap, end / 2, 3 * end / 4) : NAN, q2 = c ? mean_of(c, c->gap, 3 * end / 4, end) : NAN;
      moving[t][a] = !(fabs(q1 - q2) <= 0.1 * fl[t][a]);
      json_t *cell = add_item(row, "cells", NULL);
      template_set(cell, "floor", "%.3g", fl[t][a]);
      template_set(cell, "moving", "%s", moving[t][a] ? "*" : "");
    }
    template_set(row, "r01", "%.2f", fl[t][0] / fl[t][1]);
    template_set(row, "r12", "%.2f", fl[t][1] / fl[t][2]);
    template_set(row, "r23", "%.2f", fl[t][2] / fl[t][3]);
  }
}

/* The floor against the step with lazy weights: its table, whether it follows the step,
 * and the plateaus where it does not. */
static void step_values(json_t *v, const cons_run *runs, size_t n)
{
  int have = 0;
  for (size_t t = 0; t < N_TOPOLOGIES; t++)
    have |= find(runs, n, cons_topologies[t], LAZY, "constant", cons_small_alpha[0], "sync") != NULL;
  json_object_set_new(v, "step", json_boolean(have));
  if (!have)
    return;
  const char *alphas[] = {cons_rules[0].alpha0, cons_rules[1].alpha0, cons_small_alpha[0], cons_small_alpha[1]};
  double fl[N_TOPOLOGIES][4];
  int moving[N_TOPOLOGIES][4], missed = 0, plateaus = 0, small_ok = 1;
  step_table(v, runs, n, alphas, fl, moving);
  template_list(v, "apart");
  template_list(v, "missed");
  template_list(v, "plateaus");
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    double q = fl[t][0] / fl[t][1];
    int ok = q >= 2 && q <= 8;
    json_t *it = add_item(v, "apart", cons_topologies[t]);
    template_set(it, "sep", "%s", t ? ";" : "");
    template_set(it, "ratio", "%.2f", q);
    template_set(it, "ok", "%s", ok ? "yes" : "no");
    if (!ok)
      template_set(add_item(v, "missed", cons_topologies[t]), "sep", "%s", missed++ ? "," : "");
    for (size_t a = 0; a + 1 < 4; a++)
      if (!moving[t][a] && !moving[t][a + 1] && fl[t][a] / fl[t][a + 1] < 2) {
        json_t *p = add_item(v, "plateaus", cons_topologies[t]);
        template_set(p, "sep", "%s", plateaus++ ? "," : "");
        template_set(p, "from", "%s", alphas[a]);
        template_set(p, "to", "%s", alphas[a + 1]);
        template_set(p, "ratio", "%.2f", fl[t][a] / fl[t][a + 1]);
      }
    small_ok &= !moving[t][2] && !moving[t][3] && fl[t][2] / fl[t][3] >= 2;
  }
  json_object_set_new(v, "any_missed", json_boolean(missed > 0));
  json_object_set_new(v, "small_ok", json_boolean(small_ok));
  template_set(v, "a0", "%s", alphas[0]);
  template_set(v, "a2", "%s", alphas[2]);
  template_set(v, "a3", "%s", alphas[3]);
  template_set(v, "fall_ring", "%.2f", fl[0][2] / fl[0][3]);
  template_set(v, "fall_torus", "%.2f", fl[1][2] / fl[1][3]);
  template_set(v, "fall_complete", "%.2f", fl[2][2] / fl[2][3]);
  const cons_run *big = r_of(runs, n, alphas[0]), *small = r_of(runs, n, alphas[2]);
  double e_big = mean_of(big, big->err, CONST_STEPS / 2, CONST_STEPS),
         e_small = mean_of(small, small->err, CONST_STEPS / 2, CONST_STEPS);
  template_set(v, "e_big", "%.3g", e_big);
  template_set(v, "e_small", "%.3g", e_small);
  template_set(v, "e_ratio", "%.1f", e_big / e_small);
  const cons_run *m1 = find(runs, n, "ring", METROPOLIS, "constant", "0.02", "sync"),
                 *m2 = find(runs, n, "ring", METROPOLIS, "constant", "0.005", "sync");
  json_object_set_new(v, "metro_ring", json_boolean(m1 && m2));
  if (m1 && m2) {
    template_set(v, "mring_ratio", "%.2f", floor_of(m1) / floor_of(m2));
    template_set(v, "mring_floor", "%.3g", floor_of(m1));
    template_set(v, "lring_floor", "%.3g", fl[0][0]);
  }
}

/* Why the torus floor was above the ring's with Metropolis weights (the weights' spectra),
 * and the floors' tables. */
static void torus_values(json_t *v, const cons_run *runs, size_t n)
{
  double l2[2][N_TOPOLOGIES], lmin[2][N_TOPOLOGIES];
  template_list(v, "spectra");
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    spectrum(cons_topologies[t], GRAPH_W_METROPOLIS, &l2[0][t], &lmin[0][t]);
    spectrum(cons_topologies[t], GRAPH_W_LAZY_METROPOLIS, &l2[1][t], &lmin[1][t]);
    json_t *it = add_item(v, "spectra", cons_topologies[t]);
    template_set(it, "m_l2", "%.3f", l2[0][t]);
    template_set(it, "m_lmin", "%.3f", lmin[0][t]);
    template_set(it, "l_l2", "%.3f", l2[1][t]);
    template_set(it, "l_lmin", "%.3f", lmin[1][t]);
  }
  floor_values(v, runs, n);
  const cons_run *mt = find(runs, n, "torus", METROPOLIS, "constant", "0.02", "sync"),
                 *mt2 = find(runs, n, "torus", METROPOLIS, "constant", "0.005", "sync"),
                 *mr = find(runs, n, "ring", METROPOLIS, "constant", "0.02", "sync");
  json_object_set_new(v, "metropolis", json_boolean(mt && mt2 && mr));
  if (mt == NULL || mt2 == NULL || mr == NULL)
    return;
  template_set(v, "mt_floor", "%.3g", floor_of(mt));
  template_set(v, "mr_floor", "%.3g", floor_of(mr));
  template_set(v, "mt_ratio", "%.3g", floor_of(mt) / floor_of(mt2));
  template_set(v, "mt_lmin", "%.2f", lmin[0][1]);
  template_set(v, "amp_torus", "%.2f", 1 / (1 + lmin[0][1]));
  template_set(v, "amp_ring", "%.2f", 1 / (1 + lmin[0][0]));
  template_set(v, "amp_complete", "%.2f", 1 / (1 + lmin[0][2]));
  template_set(v, "lt_lmin", "%.2f", lmin[1][1]);
  template_set(v, "mt_erg", "%.3g", last(mt, mt->erg));
  step_values(v, runs, n);
}

/* The asynchronous runs' start and end gaps, both weight rules. */
static void async_values(json_t *v, const cons_run *runs, size_t n)
{
  template_list(v, "async_rows");
  for (size_t t = 0; t < N_TOPOLOGIES; t++)
    for (size_t r = 0; r < N_RULES; r++) {
      const cons_run *m = find(runs, n, cons_topologies[t], METROPOLIS, cons_rules[r].rule, cons_rules[r].alpha0, "async"),
                     *l = find(runs, n, cons_topologies[t], LAZY, cons_rules[r].rule, cons_rules[r].alpha0, "async");
      if (l == NULL)
        continue;
      json_t *it = add_item(v, "async_rows", cons_topologies[t]);
      template_set(it, "rule", "%s", cons_rules[r].rule);
      template_set(it, "alpha", "%s", cons_rules[r].alpha0);
      json_object_set_new(it, "metropolis_run", json_boolean(m != NULL));
      if (m) {
        template_set(it, "m_start", "%.4g", m->gap[0]);
        template_set(it, "m_end", "%.4g", last(m, m->gap));
      }
      template_set(it, "l_start", "%.4g", l->gap[0]);
      template_set(it, "l_end", "%.4g", last(l, l->gap));
    }
}

/* What lazy weights cost the diminishing steps, from the Metropolis harmonic runs. */
static void lazy_cost_values(json_t *v, const cons_run *runs, size_t n)
{
  int have = 0;
  for (size_t t = 0; t < N_TOPOLOGIES; t++)
    have |= find(runs, n, cons_topologies[t], METROPOLIS, "harmonic", "0.2", "sync") != NULL;
  json_object_set_new(v, "have_lazy_cost", json_boolean(have));
  template_list(v, "lazy_cost");
  for (size_t t = 0; have && t < N_TOPOLOGIES; t++) {
    const cons_run *w[] = {find(runs, n, cons_topologies[t], METROPOLIS, "harmonic", "0.2", "sync"),
                           find(runs, n, cons_topologies[t], LAZY, "harmonic", "0.2", "sync")};
    json_t *row = add_item(v, "lazy_cost", cons_topologies[t]);
    template_list(row, "cells");
    for (int k = 0; k < 2; k++) {
      json_t *cell = add_item(row, "cells", NULL);
      set_reach(cell, "reach1", w[k], ORDER_TOL, 0);
      set_reach(cell, "reach2", w[k], TARGET, 0);
      json_object_set_new(cell, "ran", json_boolean(w[k] != NULL));
      if (w[k])
        template_set(cell, "gap", "%.3g", last(w[k], w[k]->gap));
    }
  }
}

/* Every configuration's row. */
static void every_values(json_t *v, const cons_run *runs, size_t n)
{
  template_list(v, "every");
  for (size_t k = 0; k < n; k++) {
    const cons_run *r = &runs[k];
    json_t *it = add_item(v, "every", NULL);
    template_set(it, "topology", "%s", r->topology);
    template_set(it, "weights", "%s", r->weights);
    template_set(it, "rule", "%s", r->rule);
    template_set(it, "alpha", "%s", r->alpha0);
    template_set(it, "mode", "%s", r->mode);
    template_set(it, "iterations", "%ld", r->it[r->n - 1]);
    template_set(it, "gap", "%.3g", last(r, r->gap));
    template_set(it, "erg", "%.3g", last(r, r->erg));
    template_set(it, "agmax", "%.3g", last(r, r->agmax));
    template_set(it, "agerg", "%.3g", last(r, r->agerg));
    template_set(it, "err", "%.3g", last(r, r->err));
    set_reach(it, "reach1", r, ORDER_TOL, 1);
    set_reach(it, "reach2", r, TARGET, 1);
    template_set(it, "staleness", "%.4g", r->staleness);
  }
}

/* README.md from templates/consensus.md, or NULL with one line in err. */
static char *cons_readme(const cons_run *runs, size_t n, int quick, char *err, size_t len)
{
  json_t *v = json_object();
  setup_values(v, runs, n, quick);
  claims_steps(v, runs, n);
  claims_graphs(v, runs, n);
  cost_values(v, runs, n);
  torus_values(v, runs, n);
  async_values(v, runs, n);
  lazy_cost_values(v, runs, n);
  every_values(v, runs, n);
  char *readme = template_render("consensus", v, err, len);
  json_decref(v);
  return readme;
}

/* ---- the plot ---------------------------------------------------------------------- */

/* Four panels (log-log): the step rules on the torus (the ring with --quick), sync; the
 * harmonic step on each graph, the mean's gap (solid) and the running averages'
 * (dashed); the constant step 0.02 on each graph, Metropolis (dashed) and lazy (solid);
 * the async runs, harmonic (solid) and constant 0.02 (dashed). Only configurations that
 * were run are drawn: gnuplot fails on an empty plot. */
static int cons_plot(const char *dir, const cons_run *runs, size_t n_runs, char *err, size_t len)
{
  const char *one = find(runs, n_runs, "torus", LAZY, "harmonic", "0.2", "sync") ? "torus" : "ring";
  char *script = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&script, &n);
  xbt_assert(f, "open_memstream failed");
  fprintf(f,
          "set terminal pngcairo size 1500,900\nset output '%s/.consensus.png.tmp'\n"
          "set datafile separator ','\nset logscale xy\nset format y '10^{%%L}'\n" REPRODUCE_GP_KEY
          "set xlabel 'iteration'\nset ylabel 'gap'\nset multiplot layout 2,2 title "
          "'Distributed subgradient (Nedic-Ozdaglar), L1 regression, 16 agents, simulated by dtsim'\n"
          "sel(t, w, r, a, m, col) = (strcol(1) eq t && strcol(2) eq w && strcol(3) eq r && strcol(4) eq a && "
          "strcol(9) eq m && column(5) > 0 && column(col) > 0) ? column(col) : 1/0\n",
          dir);
  const char *sep = "";
  fprintf(f, "set title '%s, sync, lazy Metropolis: step rules, F(xbar) - f*'\nplot ", one);
  for (size_t r = 0; r < N_RULES; r++)
    if (find(runs, n_runs, one, LAZY, cons_rules[r].rule, cons_rules[r].alpha0, "sync")) {
      fprintf(f, "%s'%s/consensus.csv' using 5:(sel('%s', '%s', '%s', '%s', 'sync', 8)) with lines lw 2 title '%s %s'",
              sep, dir, one, LAZY, cons_rules[r].rule, cons_rules[r].alpha0, cons_rules[r].rule, cons_rules[r].alpha0);
      sep = ", ";
    }
  fputs("\nset title 'harmonic 0.2/(k+1), sync: F(xbar) - f* (solid), F(yhat) - f* (dashed)'\nplot ", f);
  sep = "";
  for (size_t t = 0; t < N_TOPOLOGIES; t++)
    if (find(runs, n_runs, cons_topologies[t], LAZY, "harmonic", "0.2", "sync"))
      for (int c = 0; c < 2; c++) {
        fprintf(f, "%s'%s/consensus.csv' using 5:(sel('%s', '%s', 'harmonic', '0.2', 'sync', %d)) with lines lw 2 "
                   "lc %zu dt %d title '%s%s'",
                sep, dir, cons_topologies[t], LAZY, c ? 10 : 8, t + 1, c ? 2 : 1, cons_topologies[t],
                c ? " averaged" : "");
        sep = ", ";
      }
  fputs("\nset title 'constant 0.02, sync: lazy Metropolis (solid), Metropolis (dashed)'\nplot ", f);
  sep = "";
  for (size_t t = 0; t < N_TOPOLOGIES; t++)
    for (int w = 0; w < 2; w++)
      if (find(runs, n_runs, cons_topologies[t], w ? METROPOLIS : LAZY, "constant", "0.02", "sync")) {
        fprintf(f, "%s'%s/consensus.csv' using 5:(sel('%s', '%s', 'constant', '0.02', 'sync', 8)) with lines lw 2 "
                   "lc %zu dt %d title '%s%s'",
                sep, dir, cons_topologies[t], w ? METROPOLIS : LAZY, t + 1, w ? 2 : 1, cons_topologies[t],
                w ? " Metropolis" : "");
        sep = ", ";
      }
  fputs("\nset title 'async, lazy Metropolis: harmonic 0.2 (solid), constant 0.02 (dashed)'\nplot ", f);
  sep = "";
  for (size_t t = 0; t < N_TOPOLOGIES; t++)
    for (int c = 0; c < 2; c++)
      if (find(runs, n_runs, cons_topologies[t], LAZY, c ? "constant" : "harmonic", c ? "0.02" : "0.2", "async")) {
        fprintf(f, "%s'%s/consensus.csv' using 5:(sel('%s', '%s', '%s', '%s', 'async', 8)) with lines lw 2 lc %zu "
                   "dt %d title '%s %s'",
                sep, dir, cons_topologies[t], LAZY, c ? "constant" : "harmonic", c ? "0.02" : "0.2", t + 1,
                c ? 2 : 1, cons_topologies[t], c ? "constant" : "harmonic");
        sep = ", ";
      }
  fputs("\nunset multiplot\n", f);
  fclose(f);
  int rc = reproduce_plot(dir, "consensus", script, err, len);
  free(script); /* open_memstream's */
  return rc;
}

/* ---- the grid ------------------------------------------------------------------------- */

/* Appends one configuration and its job. */
static void add_run(cons_run *runs, reproduce_job *jobs, size_t *n, const char *work, int quick,
                    const char *topology, const char *weights, const char *rule, const char *alpha0,
                    const char *mode)
{
  xbt_assert(*n < MAX_RUNS, "more than %d consensus runs", MAX_RUNS);
  cons_run *r = &runs[*n];
  *r = (cons_run){.topology = topology, .weights = weights, .rule = rule, .alpha0 = alpha0, .mode = mode};
  r->steps = quick ? QUICK_STEPS : !is_sync(r) ? ASYNC_STEPS : is_constant(r) ? CONST_STEPS : DIM_STEPS;
  reproduce_job *j = &jobs[*n];
  snprintf(j->label, sizeof(j->label), "%s, %s, %s %s, %s", topology, weights, rule, alpha0, mode);
  snprintf(j->sets[0], sizeof(j->sets[0]), "consensus.topology=%s", topology);
  snprintf(j->sets[1], sizeof(j->sets[1]), "consensus.weights=%s", weights);
  snprintf(j->sets[2], sizeof(j->sets[2]), "consensus.step_rule=%s", rule);
  snprintf(j->sets[3], sizeof(j->sets[3]), "consensus.alpha0=%s", alpha0);
  snprintf(j->sets[4], sizeof(j->sets[4]), "consensus.mode=%s", mode);
  snprintf(j->sets[5], sizeof(j->sets[5]), "run.max_steps=%ld", r->steps);
  j->n_sets = 6;
  snprintf(j->dir, sizeof(j->dir), "%s/%s-%s-%s-%s-%s", work, topology, weights, rule, alpha0, mode);
  ++*n;
}

/* The grid with lazy weights, then the robustness runs: Metropolis weights (constant
 * steps in both modes, the harmonic step in sync) and the smaller constant steps in
 * sync. --quick keeps the grid's ring and complete graph, constant and harmonic steps,
 * in shorter runs. */
static size_t cons_grid(int quick, cons_run *runs, reproduce_job *jobs, const char *work)
{
  size_t n = 0;
  for (size_t t = 0; t < N_TOPOLOGIES; t++)
    for (size_t r = 0; r < N_RULES; r++)
      for (size_t m = 0; m < 2; m++)
        if (!quick || (strcmp(cons_topologies[t], "torus") != 0 && strcmp(cons_rules[r].rule, "sqrt") != 0))
          add_run(runs, jobs, &n, work, quick, cons_topologies[t], LAZY, cons_rules[r].rule, cons_rules[r].alpha0,
                  cons_modes[m]);
  if (quick)
    return n;
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    for (size_t r = 0; r < 2; r++)
      for (size_t m = 0; m < 2; m++)
        add_run(runs, jobs, &n, work, quick, cons_topologies[t], METROPOLIS, "constant", cons_rules[r].alpha0,
                cons_modes[m]);
    add_run(runs, jobs, &n, work, quick, cons_topologies[t], METROPOLIS, "harmonic", "0.2", "sync");
    for (size_t a = 0; a < N_SMALL; a++)
      add_run(runs, jobs, &n, work, quick, cons_topologies[t], LAZY, "constant", cons_small_alpha[a], "sync");
  }
  return n;
}

int reproduce_consensus(const reproduce_opts *o, char *err, size_t len)
{
  if (fileio_write(o->work, "consensus.ini", cons_ini, strlen(cons_ini), err, len) != 0 ||
      fileio_write(o->work, "consensus-16.xml", cons_platform, strlen(cons_platform), err, len) != 0)
    return 2;
  cons_run *runs = xbt_malloc0(MAX_RUNS * sizeof(cons_run));
  reproduce_job *jobs = xbt_malloc0(MAX_RUNS * sizeof(reproduce_job));
  size_t n = cons_grid(o->quick, runs, jobs, o->work);
  int rc = reproduce_run_jobs(o, "consensus.ini", jobs, n, err, len) == 0 ? 0 : 2;
  for (size_t k = 0; k < n && rc == 0; k++)
    if (cons_read(&runs[k], &jobs[k], err, len) != 0)
      rc = 2;
  char *csv = rc == 0 ? cons_csv(runs, n) : NULL;
  if (rc == 0 && o->check) {
    char committed[600];
    snprintf(committed, sizeof(committed), "%s/consensus.csv", o->out);
    /* key: topology,weights,step_rule,alpha0,iteration,sim_time_s and mode (an async
     * run may sample one iteration twice) */
    rc = reproduce_check(csv, committed, o->quick, 0x13Fu, err, len);
    if (rc == 0 && !o->quiet)
      fprintf(stderr, "dtsim reproduce: consensus matches %s\n", committed);
  } else if (rc == 0) {
    char *readme = cons_readme(runs, n, o->quick, err, len);
    const char *files[] = {"consensus.ini", cons_ini,  "consensus-16.xml", cons_platform,
                           "consensus.csv", csv,       "README.md",        readme};
    if (readme == NULL || reproduce_write(o->out, files, 4, err, len) != 0 || cons_plot(o->out, runs, n, err, len) != 0)
      rc = 2;
    free(readme); /* open_memstream's */
    if (rc == 0 && !o->quiet)
      fprintf(stderr, "dtsim reproduce: wrote %s/consensus.csv, consensus.png, consensus.ini, consensus-16.xml, "
                      "README.md\n",
              o->out);
  }
  for (size_t k = 0; k < n; k++) {
    reproduce_remove_run(&jobs[k]);
    cons_run_free_trace(&runs[k]);
  }
  char path[600];
  snprintf(path, sizeof(path), "%s/consensus.ini", o->work);
  unlink(path);
  snprintf(path, sizeof(path), "%s/consensus-16.xml", o->work);
  unlink(path);
  free(csv); /* open_memstream's */
  xbt_free(runs);
  xbt_free(jobs);
  return rc;
}

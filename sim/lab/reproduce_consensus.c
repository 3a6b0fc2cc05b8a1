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

/* "N (T s)" for reaching tol, or "not within N (ends at G)". */
static void put_reach(FILE *f, const cons_run *r, double tol, int with_time)
{
  long i = r ? reach(r, r->gap, tol) : -1;
  if (r == NULL)
    fputs("not run", f);
  else if (i < 0)
    fprintf(f, "not within %ld", r->it[r->n - 1]);
  else if (with_time)
    fprintf(f, "%ld (%.3f s)", r->it[i], r->t[i]);
  else
    fprintf(f, "%ld", r->it[i]);
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

/* ---- the README ------------------------------------------------------------------ */

static void setup_text(FILE *f, const cons_run *runs, size_t n, int quick)
{
  fprintf(f,
          "# Distributed subgradient consensus (Nedic & Ozdaglar 2009)\n\n"
          "Made by `dtsim reproduce consensus%s` from `consensus.ini` and its platform\n"
          "`consensus-16.xml` (to rerun one configuration: `dtsim run\n"
          "results/consensus/consensus.ini --set consensus.topology=torus --set consensus.step_rule=sqrt --set\n"
          "consensus.alpha0=0.01 --set consensus.mode=async --set run.max_steps=%d`; the platform\n"
          "file is found beside the scenario).\n\n"
          "Each configuration is one simulation in its own process: 16 agents, each with a\n"
          "private L1 regression f_i(x) = ||A_i x - b_i||_1 + 1/32 ||x||^2 on 20 rows of\n"
          "dimension 10 (synthetic, run.seed 1; the paper's nonsmooth setting), x_i(0) = 0, on\n"
          "a ring, a 4 x 4 torus and the complete graph, with steps constant 0.02 and 0.005,\n"
          "harmonic 0.2/(k+1) and sqrt 0.01/sqrt(k+1), synchronous and asynchronous. The\n"
          "platform has 16 one-core 1 Mflop/s hosts on a 1 GbE star: a subgradient (0.8 ms)\n"
          "takes about as long as a value's trip (1.3 ms), so async agents mix values about one\n"
          "iteration old; on a preset a subgradient takes nanoseconds and async agents would\n"
          "finish before any value arrived. Synchronous iterates do not depend on the platform,\n"
          "only their times.\n\n"
          "Two rules hold for every run of the grid, whatever its graph and step:\n\n"
          "- **Weights: lazy Metropolis**, W = (I + M)/2 with M the Metropolis weights\n"
          "  M_ij = 1/(1 + max(d_i, d_j)), so every self-weight is at least 1/2 and every\n"
          "  eigenvalue of W lies in [0, 1]. Why: below, for the asynchronous runs (stale values)\n"
          "  and for the constant-step floors (the torus). Metropolis weights appear only in the\n"
          "  robustness runs, which show what they change.\n"
          "%s\n\n",
          quick ? " --quick" : "", quick ? QUICK_STEPS : ASYNC_STEPS,
          quick ? "- **Lengths** (--quick): every run " STR(QUICK_STEPS) " iterations, on the ring and the complete\n"
                  "  graph only; the floor of a constant step is the mean gap over the second half."
                : "- **Lengths**: synchronous runs with a diminishing step run " STR(DIM_STEPS) " rounds, long enough\n"
                  "  for the harmonic step to reach a gap of 1e-3 on the torus; with a constant step\n"
                  "  " STR(CONST_STEPS) " rounds, and the floor is the mean gap over the second half; asynchronous\n"
                  "  runs " STR(ASYNC_STEPS) " iterations per agent.");
  fprintf(f,
          "`consensus.csv` has the documented columns, a `mode` (`sync` or `async`), which they\n"
          "cannot tell apart, and three more measured with every sample: `ergodic_gap`\n"
          "F(yhat) - f*, where yhat is the mean of the agents' running averages\n"
          "xhat_i(k) = (1/k) sum_{h<k} x_i(h) (in sync mode the mean of xbar(0..k-1));\n"
          "`agent_gap_max` max_i F(x_i) - f*, the worst agent's own estimate; and\n"
          "`agent_ergodic_gap_max` max_i F(xhat_i) - f*. `optimality_gap` is F(xbar) - f* of the\n"
          "agents' instantaneous mean xbar. Synchronous runs measure every round; the CSV keeps\n"
          "iterations 0-%d, then two in a row every %d up to %d and every %d after (a constant\n"
          "step's gap alternates between two levels from one round to the next). Asynchronous runs are\n"
          "sampled every %s s of simulated time (`iteration` = agent updates so far / 16); the\n"
          "CSV keeps the samples up to %d iterations before the end, when agents start to leave.\n"
          "The claims below use every sample; \"reaches G\" = the gap F(xbar) - f* stays at or\n"
          "below G from that iteration on (the gap at x = 0 is %.4g). `consensus.png`: the\n"
          "gaps against iteration (log scales), legends outside the plots. The paper's results, as far as\n"
          "they could be read (below), are convergence results and rate estimates, not measured\n"
          "curves to draw beside these, so the plots show dtsim's runs alone; the table below sets\n"
          "them against the paper's claims.\n\n",
          SYNC_DENSE, SYNC_EVERY, SYNC_MID, SYNC_SPARSE, ASYNC_EVAL, ASYNC_TAIL, n ? runs[0].gap[0] : 0.0);
}

/* What of the paper could be read, and how; quoted verbatim where it was. */
static void paper_text(FILE *f)
{
  fputs("## What the paper states, and what could be checked\n\n"
        "The full text of the paper (IEEE TAC 54(1):48-61, 2009) and of its technical report\n"
        "(LIDS Report 2755, 16 August 2007) was not found: the stored copies of public pages\n"
        "searched keep a document's first page, and the code and documentation corpora hold\n"
        "implementations that cite the paper but none that restates its Section IV. Also tried:\n"
        "the conference version (CDC 2007, first page only), Nedic, Ozdaglar & Parrilo 2010\n"
        "(constrained consensus, abstract only), Nedic, Olshevsky, Ozdaglar & Tsitsiklis 2008\n"
        "(quantization effects, abstract only) and Ram, Nedic & Veeravalli 2010 (abstract\n"
        "only). What was read, verbatim:\n\n"
        "- The journal abstract: \"We study a distributed computation model for optimizing a\n"
        "  sum of convex objective functions corresponding to multiple agents. For solving this\n"
        "  (not necessarily smooth) optimization problem, we consider a subgradient method that\n"
        "  is distributed among the agents. The method involves every agent minimizing his/her\n"
        "  own objective function while exchanging information locally with other agents in the\n"
        "  network over a time-varying topology. We provide convergence results and convergence\n"
        "  rate estimates for the subgradient method. Our convergence rate results explicitly\n"
        "  characterize the tradeoff between a desired accuracy of the generated approximate\n"
        "  optimal solutions and the number of iterations needed to achieve the accuracy.\"\n"
        "- The report's abstract has the same model, with \"We allow such communication to be\n"
        "  asynchronous, local, and with time varying connectivity.\" The journal abstract no\n"
        "  longer says asynchronous.\n"
        "- Ram, Nedic & Veeravalli (J. Optim. Theory Appl. 147:516-545, 2010), abstract, for\n"
        "  the same method with stochastic subgradient errors: \"we prove that there is mean\n"
        "  consensus between the agents and mean convergence to the optimum function value for\n"
        "  diminishing stepsizes.\"\n\n"
        "Not checked against the text, so not quoted: the theorems themselves (the weights'\n"
        "assumptions, the form and constants of the rate estimates, and which averages they\n"
        "bound: each agent's running average, the mean of the agents' iterates, or both). The\n"
        "reproduction therefore measures all of them (the columns above) and tests only what\n"
        "the abstracts say: a constant step reaches an accuracy that depends on the step (the\n"
        "tradeoff), a diminishing step drives the gap to 0, and the asynchronous exchanges\n"
        "converge. That better-connected graphs converge sooner is our reading of a bound\n"
        "that depends on the graph, not a statement read in the paper.\n\n",
        f);
}

/* The "paper | dtsim" table. */
static void claims(FILE *f, const cons_run *runs, size_t n)
{
  fputs("## Claim vs dtsim\n\nLazy Metropolis weights, synchronous rounds unless the row says async.\n\n"
        "| claim | paper | dtsim |\n|---|---|---|\n"
        "| diminishing steps drive the gap to 0 | yes (Ram, Nedic & Veeravalli's abstract) | harmonic, reaches 1e-3 at "
        "(simulated time); end gaps F(xbar) / F(yhat) / worst agent / worst running average:",
        f);
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    const cons_run *h = find(runs, n, cons_topologies[t], LAZY, "harmonic", "0.2", "sync");
    if (h == NULL)
      continue;
    fprintf(f, " %s ", cons_topologies[t]);
    put_reach(f, h, TARGET, 1);
    fprintf(f, ", %.3g / %.3g / %.3g / %.3g;", last(h, h->gap), last(h, h->erg), last(h, h->agmax),
            last(h, h->agerg));
  }
  fputs(" sqrt 0.01/sqrt(k+1), end gap:", f);
  int any = 0;
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    const cons_run *q = find(runs, n, cons_topologies[t], LAZY, "sqrt", "0.01", "sync");
    if (q != NULL)
      fprintf(f, " %s %.3g after %ld;", cons_topologies[t], last(q, q->gap), q->it[q->n - 1]);
    any |= q != NULL;
  }
  fputs(any ? " |\n" : " not run |\n", f);

  fputs("| a constant step stalls at a floor that shrinks with the step | the accuracy/iterations tradeoff | "
        "floor at alpha 0.02 / 0.005 (ratio):",
        f);
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    const cons_run *a = find(runs, n, cons_topologies[t], LAZY, "constant", "0.02", "sync"),
                   *b = find(runs, n, cons_topologies[t], LAZY, "constant", "0.005", "sync");
    if (a && b)
      fprintf(f, " %s %.3g / %.3g (%.2fx);", cons_topologies[t], floor_of(a), floor_of(b), floor_of(a) / floor_of(b));
  }
  fputs(" |\n| better-connected graphs reach a tolerance sooner | our reading: complete < torus < ring | "
        "iterations to reach 0.1:",
        f);
  for (size_t r = 2; r < N_RULES; r++) {
    long it[N_TOPOLOGIES];
    int have = 1;
    if (find(runs, n, "ring", LAZY, cons_rules[r].rule, cons_rules[r].alpha0, "sync") == NULL)
      continue;
    fprintf(f, " %s", cons_rules[r].rule);
    for (size_t t = N_TOPOLOGIES; t-- > 0;) {
      const cons_run *h = find(runs, n, cons_topologies[t], LAZY, cons_rules[r].rule, cons_rules[r].alpha0, "sync");
      it[t] = reach_it(h, ORDER_TOL);
      if (h == NULL) {
        have = 0;
        continue;
      }
      fprintf(f, " %s ", cons_topologies[t]);
      put_reach(f, h, ORDER_TOL, 0);
    }
    if (have)
      fputs(it[2] < it[1] && it[1] < it[0] ? " (holds);" : " (does not hold);", f);
    else
      fputc(';', f);
  }
  fputs(" |\n| asynchronous exchanges still converge | yes (the report's abstract) | harmonic, async vs sync to reach "
        "0.1 (simulated time), mean staleness of a mixed value:",
        f);
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    const cons_run *a = find(runs, n, cons_topologies[t], LAZY, "harmonic", "0.2", "async"),
                   *s = find(runs, n, cons_topologies[t], LAZY, "harmonic", "0.2", "sync");
    if (a == NULL || s == NULL)
      continue;
    fprintf(f, " %s ", cons_topologies[t]);
    put_reach(f, a, ORDER_TOL, 1);
    fputs(" vs ", f);
    put_reach(f, s, ORDER_TOL, 1);
    fprintf(f, ", staleness %.4g;", a->staleness);
  }
  const cons_run *worst = NULL;
  for (size_t k = 0; k < n; k++)
    if (strcmp(runs[k].weights, LAZY) == 0 && !is_sync(&runs[k]) &&
        (worst == NULL || last(&runs[k], runs[k].gap) / runs[k].gap[0] > last(worst, worst->gap) / worst->gap[0]))
      worst = &runs[k];
  if (worst)
    fprintf(f, " every async run ends below its start: the largest end/start ratio is %.3g (%s, %s %s) |\n",
            last(worst, worst->gap) / worst->gap[0], worst->topology, worst->rule, worst->alpha0);
  else
    fputs(" |\n", f);
  fputs("\n", f);
}

/* Iterations, simulated time and CPU of a gap of TARGET with diminishing steps. */
static void cost_text(FILE *f, const cons_run *runs, size_t n)
{
  fputs("## What a gap of 1e-3 costs\n\n", f);
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    const cons_run *h = find(runs, n, cons_topologies[t], LAZY, "harmonic", "0.2", "sync");
    if (h == NULL || strcmp(cons_topologies[t], "ring") == 0)
      continue;
    long i = reach(h, h->gap, TARGET);
    if (i < 0)
      fprintf(f, "- %s, harmonic: not within %ld rounds (gap %.3g at the end).\n", cons_topologies[t],
              h->it[h->n - 1], last(h, h->gap));
    else
      fprintf(f, "- %s, harmonic: %ld rounds, %ld subgradients over the 16 agents, %.1f s simulated (the\n"
                 "  run: %ld rounds, %.1f s simulated).\n",
              cons_topologies[t], h->it[i], 16 * h->it[i], h->t[i], h->it[h->n - 1], last(h, h->t));
  }
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    const cons_run *q = find(runs, n, cons_topologies[t], LAZY, "sqrt", "0.01", "sync");
    if (q == NULL || strcmp(cons_topologies[t], "ring") == 0)
      continue;
    double g = last(q, q->gap);
    if (g <= TARGET)
      fprintf(f, "- %s, sqrt: reaches 1e-3 at %ld.\n", cons_topologies[t], q->it[reach(q, q->gap, TARGET)]);
    else
      fprintf(f, "- %s, sqrt: gap %.3g after %ld rounds. The floor follows the step, so with\n"
                 "  alpha(k) = 0.01/sqrt(k+1) a gap (%.3g/1e-3) times smaller needs about %.3g times the\n"
                 "  rounds, about %.2g (an extrapolation, not a run).\n",
              cons_topologies[t], g, q->it[q->n - 1], g, (g / TARGET) * (g / TARGET),
              (g / TARGET) * (g / TARGET) * (double)q->it[q->n - 1]);
  }
  fputs("\nCPU time grows with the rounds, 0.6 to 1 ms a synchronous round of 16 agents with its\n"
        "measurement (every round: the mean's, the averages' and every agent's gap), so a run of\n"
        STR(DIM_STEPS) " rounds takes one to one and a half minutes of CPU, and the whole grid of 45 runs\n"
        "took 1022 s of CPU, 17 minutes (/usr/bin/time on a machine shared with other work, which\n"
        "slows each run; `--jobs 2` runs two at a time).\n\n",
        f);
}

/* The synchronous constant-step floors of both weight rules, those that were run. */
static void lazy_floors(FILE *f, const cons_run *runs, size_t n)
{
  fputs("Synchronous constant steps (floor = mean gap over the second half; flat = the means over\n"
        "its two quarters; error = mean consensus error over the second half; F(yhat) and worst\n"
        "running average at the end):\n\n"
        "| graph | weights | alpha | floor | flat | error | worst agent (mean) | F(yhat) | worst running average |\n"
        "|---|---|---|---|---|---|---|---|---|\n",
        f);
  const char *const weights[] = {METROPOLIS, LAZY};
  for (size_t t = 0; t < N_TOPOLOGIES; t++)
    for (size_t w = 0; w < 2; w++)
      for (size_t r = 0; r < 2; r++) {
        const cons_run *c = find(runs, n, cons_topologies[t], weights[w], "constant", cons_rules[r].alpha0, "sync");
        if (c == NULL)
          continue;
        long end = c->it[c->n - 1];
        fprintf(f, "| %s | %s | %s | %.3g | %.3g, %.3g | %.3g | %.3g | %.3g | %.3g |\n", c->topology, c->weights,
                c->alpha0, floor_of(c), mean_of(c, c->gap, end / 2, 3 * end / 4), mean_of(c, c->gap, 3 * end / 4, end),
                mean_of(c, c->err, end / 2, end), mean_of(c, c->agmax, end / 2, end), last(c, c->erg),
                last(c, c->agerg));
      }
  fputs("\n", f);
}

/* The graphs' order of the lazy floors at the two constant steps of the grid. */
static void floor_order(FILE *f, const cons_run *runs, size_t n)
{
  fputs("With lazy weights, the floors of the ring, the torus and the complete graph (the bound's\n"
        "connectivity term is smaller in that order):",
        f);
  for (size_t r = 0; r < 2; r++) {
    double fl[N_TOPOLOGIES];
    for (size_t t = 0; t < N_TOPOLOGIES; t++) {
      const cons_run *c = find(runs, n, cons_topologies[t], LAZY, "constant", cons_rules[r].alpha0, "sync");
      fl[t] = c ? floor_of(c) : NAN;
    }
    fprintf(f, "%s at %s %.3g, %.3g, %.3g (torus %s ring, complete %s torus)", r ? ";" : "", cons_rules[r].alpha0,
            fl[0], fl[1], fl[2], fl[1] < fl[0] ? "below" : "not below", fl[2] < fl[1] ? "below" : "not below");
  }
  fputs(". The bound is an upper bound: it orders what the floors may be, not what they are,\n"
        "and where two floors are within a few percent the order between them says little.\n\n",
        f);
}

/* The ring's synchronous lazy run with a constant step alpha0 (run whenever the smaller
 * steps were). */
static const cons_run *r_of(const cons_run *runs, size_t n, const char *alpha0)
{
  const cons_run *r = find(runs, n, "ring", LAZY, "constant", alpha0, "sync");
  xbt_assert(r != NULL, "the ring's constant %s run is part of the robustness grid", alpha0);
  return r;
}

/* The floor against the step with lazy weights: its table, whether it follows the step,
 * and the plateaus where it does not. */
static void step_text(FILE *f, const cons_run *runs, size_t n)
{
  int have = 0;
  for (size_t t = 0; t < N_TOPOLOGIES; t++)
    have |= find(runs, n, cons_topologies[t], LAZY, "constant", cons_small_alpha[0], "sync") != NULL;
  if (!have)
    return;
  fputs("The floor against the step (lazy weights, synchronous, the same run length; a * marks a\n"
        "floor whose two quarters differ by more than 10%: still moving): a floor proportional to\n"
        "alpha would divide by 4 from one column to the next.\n\n"
        "| graph | 0.02 | 0.005 | 0.00125 | 0.0003125 | ratios |\n|---|---|---|---|---|---|\n",
        f);
  const char *alphas[] = {cons_rules[0].alpha0, cons_rules[1].alpha0, cons_small_alpha[0], cons_small_alpha[1]};
  double fl[N_TOPOLOGIES][4];
  int moving[N_TOPOLOGIES][4];
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    fprintf(f, "| %s |", cons_topologies[t]);
    for (size_t a = 0; a < 4; a++) {
      const cons_run *c = find(runs, n, cons_topologies[t], LAZY, "constant", alphas[a], "sync");
      fl[t][a] = c ? floor_of(c) : NAN;
      long end = c ? c->it[c->n - 1] : 0;
      double q1 = c ? mean_of(c, c->gap, end / 2, 3 * end / 4) : NAN, q2 = c ? mean_of(c, c->gap, 3 * end / 4, end) : NAN;
      moving[t][a] = !(fabs(q1 - q2) <= 0.1 * fl[t][a]);
      fprintf(f, " %.3g%s |", fl[t][a], moving[t][a] ? "*" : "");
    }
    fprintf(f, " %.2f, %.2f, %.2f |\n", fl[t][0] / fl[t][1], fl[t][1] / fl[t][2], fl[t][2] / fl[t][3]);
  }
  fputs("\nThe floors at 0.02 and 0.005 are 2 to 8 times apart (O(alpha), loosely) on:", f);
  int missed = 0;
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    double q = fl[t][0] / fl[t][1];
    int ok = q >= 2 && q <= 8;
    missed += !ok;
    fprintf(f, "%s %s %.2f (%s)", t ? ";" : "", cons_topologies[t], q, ok ? "yes" : "no");
  }
  fputs(".\nWhere a step 4 times smaller lowers a settled floor less than 2 times, the floor sits on\n"
        "a plateau:",
        f);
  int plateaus = 0, small_ok = 1;
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    for (size_t a = 0; a + 1 < 4; a++)
      if (!moving[t][a] && !moving[t][a + 1] && fl[t][a] / fl[t][a + 1] < 2)
        fprintf(f, "%s %s from %s to %s (%.2f)", plateaus++ ? "," : "", cons_topologies[t], alphas[a], alphas[a + 1],
                fl[t][a] / fl[t][a + 1]);
    small_ok &= !moving[t][2] && !moving[t][3] && fl[t][2] / fl[t][3] >= 2;
  }
  const cons_run *big = r_of(runs, n, alphas[0]), *small = r_of(runs, n, alphas[2]);
  double e_big = mean_of(big, big->err, CONST_STEPS / 2, CONST_STEPS),
         e_small = mean_of(small, small->err, CONST_STEPS / 2, CONST_STEPS);
  fprintf(f,
          "%s.\nFrom %s to %s the floors fall %.2f, %.2f and %.2f times%s. Our reading: on\n"
          "a plateau the agents are spread wide against the scale of the residuals, each takes its\n"
          "subgradient at a point of its own, and the mean's offset from the optimum follows that\n"
          "spread, which shrinks more slowly than alpha (the ring's consensus error is %.3g at %s\n"
          "and %.3g at %s, %.1f times less for a step 16 times smaller); the worse connected the\n"
          "graph, the wider the spread at a given step, and the further the plateau reaches.",
          plateaus ? "" : " none", alphas[2], alphas[3], fl[0][2] / fl[0][3], fl[1][2] / fl[1][3], fl[2][2] / fl[2][3],
          small_ok ? ": at small steps every floor follows the step" : "", e_big, alphas[0], e_small, alphas[2],
          e_big / e_small);
  if (missed) {
    fputs(" The target ratio at 0.02 and 0.005 is missed on:", f);
    for (size_t t = 0, k = 0; t < N_TOPOLOGIES; t++)
      if (!(fl[t][0] / fl[t][1] >= 2 && fl[t][0] / fl[t][1] <= 8))
        fprintf(f, "%s %s", k++ ? "," : "", cons_topologies[t]);
    fputc('.', f);
  }
  const cons_run *m1 = find(runs, n, "ring", METROPOLIS, "constant", "0.02", "sync"),
                 *m2 = find(runs, n, "ring", METROPOLIS, "constant", "0.005", "sync");
  if (m1 && m2)
    fprintf(f,
            "\nWith Metropolis weights the ring's ratio is %.2f, but because the chatter raises its\n"
            "floor at 0.02 (%.3g against %.3g with lazy weights), not because the floor follows the step.",
            floor_of(m1) / floor_of(m2), floor_of(m1), fl[0][0]);
  fputs("\n\n", f);
}

/* Why the torus floor was above the ring's with Metropolis weights, and the floor
 * against the step (step_text). */
static void torus_text(FILE *f, const cons_run *runs, size_t n)
{
  double l2[2][N_TOPOLOGIES], lmin[2][N_TOPOLOGIES];
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    spectrum(cons_topologies[t], GRAPH_W_METROPOLIS, &l2[0][t], &lmin[0][t]);
    spectrum(cons_topologies[t], GRAPH_W_LAZY_METROPOLIS, &l2[1][t], &lmin[1][t]);
  }
  fputs("## The constant-step floors and the weights\n\n", f);
  const cons_run *mt = find(runs, n, "torus", METROPOLIS, "constant", "0.02", "sync"),
                 *mt2 = find(runs, n, "torus", METROPOLIS, "constant", "0.005", "sync"),
                 *mr = find(runs, n, "ring", METROPOLIS, "constant", "0.02", "sync");
  if (mt == NULL || mt2 == NULL || mr == NULL) {
    lazy_floors(f, runs, n);
    return;
  }
  fprintf(f,
          "With Metropolis weights the floor at alpha 0.02 is %.3g on the torus and %.3g on the\n"
          "ring, and %.3g times the torus's floor at 0.005, for a step 4 times larger.\n",
          floor_of(mt), floor_of(mr), floor_of(mt) / floor_of(mt2));
  fputs("The weights cause it, not the metric or the run length. The spectra of the two rules\n"
        "(computed from the matrices; lambda_2 the second largest eigenvalue, lambda_min the\n"
        "smallest):\n\n"
        "| graph | Metropolis lambda_2 | Metropolis lambda_min | lazy lambda_2 | lazy lambda_min |\n"
        "|---|---|---|---|---|\n",
        f);
  for (size_t t = 0; t < N_TOPOLOGIES; t++)
    fprintf(f, "| %s | %.3f | %.3f | %.3f | %.3f |\n", cons_topologies[t], l2[0][t], lmin[0][t], l2[1][t],
            lmin[1][t]);
  fprintf(f,
          "\nA constant step on a nonsmooth objective makes each agent's subgradient flip sign from\n"
          "one iteration to the next near the kinks (a period-2 chatter: the Metropolis runs' gap\n"
          "alternates between two levels). The disagreement e = x - xbar follows\n"
          "e(k+1) = W e(k) - alpha (d(k) - dbar(k)), and a forcing that alternates in sign is\n"
          "amplified by 1/(1 + lambda) along an eigenvector of W with eigenvalue lambda. The 4 x 4\n"
          "torus is bipartite, and its Metropolis weights have lambda_min = %.2f (the checkerboard\n"
          "mode), as large in size as lambda_2: the chatter is amplified %.2f times, against %.2f\n"
          "on the ring and %.2f on the complete graph. The agents spread further apart, their\n"
          "subgradients are taken further from the mean, and the mean settles further from the\n"
          "optimum. Lazy weights have every eigenvalue in [0, 1] (lambda_min = %.2f on the torus),\n"
          "so nothing alternating is amplified; they halve the spectral gap 1 - lambda_2 instead.\n\n",
          lmin[0][1], 1 / (1 + lmin[0][1]), 1 / (1 + lmin[0][0]), 1 / (1 + lmin[0][2]), lmin[1][1]);
  lazy_floors(f, runs, n);
  fprintf(f,
          "Not the metric: the running averages' gap F(yhat) of the Metropolis torus at 0.02 ends\n"
          "at %.3g against its floor of %.3g, so averaging does not remove the excess. Not the run:\n"
          "the floors are flat over the second half (the quarters above).\n\n",
          last(mt, mt->erg), floor_of(mt));
  floor_order(f, runs, n);
  step_text(f, runs, n);
}

/* Item 4: why the asynchronous runs need a self-weight of at least 1/2. */
static void async_text(FILE *f, const cons_run *runs, size_t n)
{
  fputs("## Asynchronous runs and the self-weight\n\n"
        "An async agent mixes its own fresh iterate with its neighbours' values of one\n"
        "iteration earlier (mean staleness about 1 here). With self-weight a and the rest of\n"
        "the row P (doubly stochastic, zero diagonal), x(k+1) = a x(k) + (1 - a) P x(k-1) -\n"
        "alpha d(k). Along the consensus direction (P's eigenvalue 1) the roots of\n"
        "mu^2 = a mu + (1 - a) are 1 and -(1 - a): the mean carries a mode that flips sign every\n"
        "iteration and decays only by the factor 1 - a, and every step excites it, with an\n"
        "amplitude of about alpha ||d|| / a. Metropolis self-weights are 1/3 on the ring, 1/5 on\n"
        "the torus and 1/16 on the complete graph, where the mode is almost undamped\n"
        "(15/16) and a constant step drives the mean away. A self-weight of at least 1/2 bounds\n"
        "the root by 1/2 and the amplitude by 2 alpha ||d||, on every graph. This is our\n"
        "derivation for one iteration of staleness, not the paper's (whose asynchronous\n"
        "statement could not be read). Async runs, start and end gap (the end = the last sample\n"
        "kept, " STR(ASYNC_TAIL) " iterations before the agents leave):\n\n"
        "| graph | step | Metropolis: start -> end | lazy Metropolis: start -> end |\n|---|---|---|---|\n",
        f);
  for (size_t t = 0; t < N_TOPOLOGIES; t++)
    for (size_t r = 0; r < N_RULES; r++) {
      const cons_run *m = find(runs, n, cons_topologies[t], METROPOLIS, cons_rules[r].rule, cons_rules[r].alpha0, "async"),
                     *l = find(runs, n, cons_topologies[t], LAZY, cons_rules[r].rule, cons_rules[r].alpha0, "async");
      if (l == NULL)
        continue;
      fprintf(f, "| %s | %s %s | ", cons_topologies[t], cons_rules[r].rule, cons_rules[r].alpha0);
      if (m)
        fprintf(f, "%.4g -> %.4g", m->gap[0], last(m, m->gap));
      else
        fputs("-", f);
      fprintf(f, " | %.4g -> %.4g |\n", l->gap[0], last(l, l->gap));
    }
  fputs("\n", f);
}

/* What lazy weights cost the diminishing steps, from the Metropolis harmonic runs. */
static void lazy_cost_text(FILE *f, const cons_run *runs, size_t n)
{
  int have = 0;
  for (size_t t = 0; t < N_TOPOLOGIES; t++)
    have |= find(runs, n, cons_topologies[t], METROPOLIS, "harmonic", "0.2", "sync") != NULL;
  if (!have)
    return;
  fputs("What the lazy weights cost the diminishing steps (harmonic, synchronous; reaches 0.1 and\n"
        "1e-3, then the end gap):\n\n| graph | Metropolis | lazy Metropolis |\n|---|---|---|\n",
        f);
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    const cons_run *w[] = {find(runs, n, cons_topologies[t], METROPOLIS, "harmonic", "0.2", "sync"),
                           find(runs, n, cons_topologies[t], LAZY, "harmonic", "0.2", "sync")};
    fprintf(f, "| %s |", cons_topologies[t]);
    for (int k = 0; k < 2; k++) {
      fputc(' ', f);
      put_reach(f, w[k], ORDER_TOL, 0);
      fputs(", ", f);
      put_reach(f, w[k], TARGET, 0);
      if (w[k])
        fprintf(f, ", %.3g", last(w[k], w[k]->gap));
      fputs(" |", f);
    }
    fputc('\n', f);
  }
  fputs("\n", f);
}

static char *cons_readme(const cons_run *runs, size_t n, int quick)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  setup_text(f, runs, n, quick);
  paper_text(f);
  claims(f, runs, n);
  cost_text(f, runs, n);
  torus_text(f, runs, n);
  async_text(f, runs, n);
  lazy_cost_text(f, runs, n);
  fputs("## Every configuration\n\n"
        "Gaps and consensus error at the run's last row in consensus.csv (async: the last sample\n"
        "kept, up to " STR(ASYNC_TAIL) " iterations before the end); \"reaches\" uses every sample.\n\n"
        "| topology | weights | step | mode | iterations | gap | F(yhat) | worst agent | worst running average "
        "| consensus error | reaches 0.1 at | reaches 1e-3 at | mean staleness |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        f);
  for (size_t k = 0; k < n; k++) {
    const cons_run *r = &runs[k];
    fprintf(f, "| %s | %s | %s %s | %s | %ld | %.3g | %.3g | %.3g | %.3g | %.3g | ", r->topology, r->weights, r->rule,
            r->alpha0, r->mode, r->it[r->n - 1], last(r, r->gap), last(r, r->erg), last(r, r->agmax),
            last(r, r->agerg), last(r, r->err));
    put_reach(f, r, ORDER_TOL, 1);
    fputs(" | ", f);
    put_reach(f, r, TARGET, 1);
    fprintf(f, " | %.4g |\n", r->staleness);
  }
  fclose(f);
  return text;
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
    char *readme = cons_readme(runs, n, o->quick);
    const char *files[] = {"consensus.ini", cons_ini,  "consensus-16.xml", cons_platform,
                           "consensus.csv", csv,       "README.md",        readme};
    if (reproduce_write(o->out, files, 4, err, len) != 0 || cons_plot(o->out, runs, n, err, len) != 0)
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

/* reproduce_consensus.c - `dtsim reproduce consensus`: Nedic & Ozdaglar's distributed
 * subgradient method (IEEE TAC 54(1):48-61, 2009) on ring, torus and complete graphs of
 * 16 agents, each step rule, synchronous and asynchronous, one simulation per process,
 * with lazy Metropolis weights; robustness runs with Metropolis weights and with smaller
 * constant steps: the runs, their traces, the CSV and the plot. The README's claims, judged
 * from the traces, are reproduce_consensus_claims.c's. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "sim/fileio.h"
#include "sim/output.h"
#include "sim/lab/reproduce.h"
#include "sim/lab/reproduce_consensus.h"
#include "sim/lab/reproduce_frame.h"
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

static const char *const cons_modes[] = {"sync", "async"};

/* Parses job's consensus.csv and summary.json into r. Returns 0 or -1 with err. */
static int cons_read(void *rv, const reproduce_job *job, char *err, size_t len)
{
  cons_run *r = rv;
  char path[700];
  snprintf(path, sizeof(path), "%s/summary.json", job->dir);
  json_t *s = json_load_file(path, 0, NULL);
  r->staleness = reproduce_number(s, "staleness.mean");
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

static void cons_run_free_trace(void *rv)
{
  cons_run *r = rv;
  double *cols[] = {r->t, r->err, r->gap, r->erg, r->agmax, r->agerg};
  for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++)
    xbt_free(cols[c]);
  xbt_free(r->it);
  xbt_free(r->line);
  xbt_free(r->len);
  xbt_free(r->text);
}

int reproduce_consensus_kept(const cons_run *r, size_t i)
{
  long k = r->it[i];
  if (is_sync(r))
    return k <= SYNC_DENSE || (k <= SYNC_MID && k % SYNC_EVERY <= 1) || k % SYNC_SPARSE <= 1;
  return k <= r->steps - ASYNC_TAIL;
}

/* The documented columns, then `mode` (sync or async), which they cannot tell apart,
 * then the run's averaged and worst-agent gaps. */
static char *cons_csv(const reproduce_data *d)
{
  const cons_run *runs = d->runs[0];
  size_t n = d->n[0];
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fputs("topology,weights,step_rule,alpha0,iteration,sim_time_s,consensus_error,optimality_gap,mode,ergodic_gap,"
        "agent_gap_max,agent_ergodic_gap_max\n",
        f);
  for (size_t k = 0; k < n; k++)
    for (size_t i = 0; i < runs[k].n; i++) {
      if (!reproduce_consensus_kept(&runs[k], i))
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

const cons_run *reproduce_consensus_find(const cons_run *runs, size_t n, const char *topology, const char *weights,
                                         const char *rule, const char *alpha0, const char *mode)
{
  for (size_t k = 0; k < n; k++)
    if (strcmp(runs[k].topology, topology) == 0 && strcmp(runs[k].weights, weights) == 0 &&
        strcmp(runs[k].rule, rule) == 0 && strcmp(runs[k].alpha0, alpha0) == 0 && strcmp(runs[k].mode, mode) == 0)
      return &runs[k];
  return NULL;
}


/* ---- the plot ---------------------------------------------------------------------- */

/* Four panels (log-log): the step rules on the torus (the ring with --quick), sync; the
 * harmonic step on each graph, the mean's gap (solid) and the running averages'
 * (dashed); the constant step 0.02 on each graph, Metropolis (dashed) and lazy (solid);
 * the async runs, harmonic (solid) and constant 0.02 (dashed). Only configurations that
 * were run are drawn: gnuplot fails on an empty plot. */
/* A clause's graph: its name, its colour (the graph's) and its dash (c: the second kind). */
static void cons_clause(json_t *it, const char *topology, size_t t, int c)
{
  template_set(it, "topology", "%s", topology);
  template_set(it, "lc", "%zu", t + 1);
  template_set(it, "dt", "%d", c ? 2 : 1);
}

static void cons_plot(json_t *v, const char *plot, const reproduce_data *d)
{
  (void)plot;
  const cons_run *runs = d->runs[0];
  size_t n = d->n[0];
  const char *one = reproduce_consensus_find(runs, n, "torus", LAZY, "harmonic", "0.2", "sync") ? "torus" : "ring";
  template_set(v, "one", "%s", one);
  static const char *const lists[] = {"rules", "harmonic", "constant", "async"};
  for (size_t l = 0; l < 4; l++)
    template_list(v, lists[l]);
  for (size_t r = 0; r < N_RULES; r++)
    if (reproduce_consensus_find(runs, n, one, LAZY, cons_rules[r].rule, cons_rules[r].alpha0, "sync")) {
      json_t *it = reproduce_frame_clause(v, "rules");
      template_set(it, "rule", "%s", cons_rules[r].rule);
      template_set(it, "alpha0", "%s", cons_rules[r].alpha0);
    }
  for (size_t t = 0; t < N_TOPOLOGIES; t++)
    for (int c = 0; c < 2; c++) {
      const char *top = cons_topologies[t];
      json_t *it = NULL;
      if (reproduce_consensus_find(runs, n, top, LAZY, "harmonic", "0.2", "sync")) { /* the mean's gap, then the averages' */
        it = reproduce_frame_clause(v, "harmonic");
        template_set(it, "col", "%d", c ? 10 : 8);
        template_set(it, "suffix", "%s", c ? " averaged" : "");
        cons_clause(it, top, t, c);
      }
      if (reproduce_consensus_find(runs, n, top, c ? METROPOLIS : LAZY, "constant", "0.02", "sync")) { /* lazy, then Metropolis */
        it = reproduce_frame_clause(v, "constant");
        template_set(it, "weights", "%s", c ? METROPOLIS : LAZY);
        template_set(it, "suffix", "%s", c ? " Metropolis" : "");
        cons_clause(it, top, t, c);
      }
      if (reproduce_consensus_find(runs, n, top, LAZY, c ? "constant" : "harmonic", c ? "0.02" : "0.2", "async")) {
        it = reproduce_frame_clause(v, "async");
        template_set(it, "rule", "%s", c ? "constant" : "harmonic");
        template_set(it, "alpha0", "%s", c ? "0.02" : "0.2");
        cons_clause(it, top, t, c);
      }
    }
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
static size_t cons_grid(int quick, void *rv, reproduce_job *jobs, const char *work)
{
  cons_run *runs = rv;
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

const reproduction reproduce_consensus = {
    .name = "consensus",
    .grids = {{"consensus.ini", cons_ini, sizeof(cons_run), MAX_RUNS, cons_grid, cons_read, cons_run_free_trace}},
    /* key: topology,weights,step_rule,alpha0,iteration,sim_time_s and mode (an async run may
     * sample one iteration twice) */
    .tables = {{"consensus.csv", 0x13Fu, cons_csv}},
    .readme = reproduce_consensus_readme,
    .plots = {"consensus"},
    .plot = cons_plot,
    .texts = {{"consensus-16.xml", cons_platform}},
};

/* reproduce_consensus_claims.c - the claims of `dtsim reproduce consensus`'s README, judged
 * from the runs' traces (reproduce_consensus.c), and the weights' spectra, computed from the
 * weight matrices themselves (models/graph.c): the values of templates/consensus.md. */
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_sort_vector.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <xbt/asserts.h>

#include "models/graph.h"
#include "sim/lab/reproduce_consensus.h"
#include "sim/lab/template.h"

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
  while (i > 0 && !reproduce_consensus_kept(r, i))
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
    const cons_run *h = reproduce_consensus_find(runs, n, cons_topologies[t], LAZY, "harmonic", "0.2", "sync");
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
    const cons_run *q = reproduce_consensus_find(runs, n, cons_topologies[t], LAZY, "sqrt", "0.01", "sync");
    if (q == NULL)
      continue;
    json_t *it = add_item(v, "sqrt_end", cons_topologies[t]);
    template_set(it, "gap", "%.3g", last(q, q->gap));
    template_set(it, "rounds", "%ld", q->it[q->n - 1]);
  }
  for (size_t t = 0; t < N_TOPOLOGIES; t++) {
    const cons_run *a = reproduce_consensus_find(runs, n, cons_topologies[t], LAZY, "constant", "0.02", "sync"),
                   *b = reproduce_consensus_find(runs, n, cons_topologies[t], LAZY, "constant", "0.005", "sync");
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
    if (reproduce_consensus_find(runs, n, "ring", LAZY, cons_rules[r].rule, cons_rules[r].alpha0, "sync") == NULL)
      continue;
    json_t *rule = add_item(v, "graph_order", NULL);
    template_set(rule, "rule", "%s", cons_rules[r].rule);
    template_list(rule, "graphs");
    long it[N_TOPOLOGIES];
    int have = 1;
    for (size_t t = N_TOPOLOGIES; t-- > 0;) {
      const cons_run *h = reproduce_consensus_find(runs, n, cons_topologies[t], LAZY, cons_rules[r].rule, cons_rules[r].alpha0, "sync");
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
    const cons_run *a = reproduce_consensus_find(runs, n, cons_topologies[t], LAZY, "harmonic", "0.2", "async"),
                   *s = reproduce_consensus_find(runs, n, cons_topologies[t], LAZY, "harmonic", "0.2", "sync");
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
    const cons_run *h = reproduce_consensus_find(runs, n, cons_topologies[t], LAZY, "harmonic", "0.2", "sync");
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
    const cons_run *q = reproduce_consensus_find(runs, n, cons_topologies[t], LAZY, "sqrt", "0.01", "sync");
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
        const cons_run *c = reproduce_consensus_find(runs, n, cons_topologies[t], weights[w], "constant", cons_rules[r].alpha0, "sync");
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
      const cons_run *c = reproduce_consensus_find(runs, n, cons_topologies[t], LAZY, "constant", cons_rules[r].alpha0, "sync");
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
  const cons_run *r = reproduce_consensus_find(runs, n, "ring", LAZY, "constant", alpha0, "sync");
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
      const cons_run *c = reproduce_consensus_find(runs, n, cons_topologies[t], LAZY, "constant", alphas[a], "sync");
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
    have |= reproduce_consensus_find(runs, n, cons_topologies[t], LAZY, "constant", cons_small_alpha[0], "sync") != NULL;
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
  const cons_run *m1 = reproduce_consensus_find(runs, n, "ring", METROPOLIS, "constant", "0.02", "sync"),
                 *m2 = reproduce_consensus_find(runs, n, "ring", METROPOLIS, "constant", "0.005", "sync");
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
  const cons_run *mt = reproduce_consensus_find(runs, n, "torus", METROPOLIS, "constant", "0.02", "sync"),
                 *mt2 = reproduce_consensus_find(runs, n, "torus", METROPOLIS, "constant", "0.005", "sync"),
                 *mr = reproduce_consensus_find(runs, n, "ring", METROPOLIS, "constant", "0.02", "sync");
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
      const cons_run *m = reproduce_consensus_find(runs, n, cons_topologies[t], METROPOLIS, cons_rules[r].rule, cons_rules[r].alpha0, "async"),
                     *l = reproduce_consensus_find(runs, n, cons_topologies[t], LAZY, cons_rules[r].rule, cons_rules[r].alpha0, "async");
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
    have |= reproduce_consensus_find(runs, n, cons_topologies[t], METROPOLIS, "harmonic", "0.2", "sync") != NULL;
  json_object_set_new(v, "have_lazy_cost", json_boolean(have));
  template_list(v, "lazy_cost");
  for (size_t t = 0; have && t < N_TOPOLOGIES; t++) {
    const cons_run *w[] = {reproduce_consensus_find(runs, n, cons_topologies[t], METROPOLIS, "harmonic", "0.2", "sync"),
                           reproduce_consensus_find(runs, n, cons_topologies[t], LAZY, "harmonic", "0.2", "sync")};
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

/* templates/consensus.md's values. */
int reproduce_consensus_readme(json_t *v, const reproduce_data *d, char *err, size_t len)
{
  (void)err, (void)len;
  const cons_run *runs = d->runs[0];
  size_t n = d->n[0];
  setup_values(v, runs, n, d->o->quick);
  claims_steps(v, runs, n);
  claims_graphs(v, runs, n);
  cost_values(v, runs, n);
  torus_values(v, runs, n);
  async_values(v, runs, n);
  lazy_cost_values(v, runs, n);
  every_values(v, runs, n);
  return 0;
}


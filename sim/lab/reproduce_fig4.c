/* reproduce_fig4.c - `dtsim reproduce fig4`: Dean et al. 2012, Fig. 4 (sec. 5), held-out
 * accuracy against time of SGD on 8 partitions, one GPU, Downpour with a fixed rate and with
 * Adagrad, and Sandblaster L-BFGS, run by the method both figures share (reproduce_dean.c):
 * its configurations, fig4.csv, the robustness runs' table, the README's comparison with the
 * paper's order, and its plot (templates/fig4.md, fig4.gp). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <xbt/asserts.h>

#include "sim/lab/reproduce.h"
#include "sim/lab/reproduce_dean.h"
#include "sim/lab/reproduce_frame.h"
#include "sim/lab/template.h"

static const config fig4_configs[] = {
    {M_SGD, 1, 1},      {M_GPU, 1, 1},           {M_DOWNPOUR, 20, 0},
    {M_ADAGRAD, 20, 1}, {M_SANDBLASTER, 2000, 0}, {M_ADAGRAD, 200, 0},
};

/* The paper's Fig. 4 order, slowest first (Dean et al. 2012, sec. 5 and Fig. 4). */
static const config paper_order[] = {
    {M_SGD, 1, 0}, {M_DOWNPOUR, 20, 0}, {M_ADAGRAD, 20, 0}, {M_SANDBLASTER, 2000, 0}, {M_ADAGRAD, 200, 0}};
#define N_PAPER (sizeof(paper_order) / sizeof(paper_order[0]))

/* fig4.csv: the documented method,sim_time_h,accuracy, then replicas and rate: every run's
 * evaluations (each rate's, so that a --quick grid's rows are rows of the full one). */
static char *fig4_csv(const reproduce_data *d)
{
  const run *runs = d->runs[0];
  size_t n = d->n[0];
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fputs("method,sim_time_h,accuracy,replicas,rate\n", f);
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; runs[i].v == V_NONE && k < runs[i].n; k++)
      fprintf(f, "%s,%.17g,%.17g,%d,%s\n", method_names[runs[i].c->m], runs[i].t[k] / 3600, runs[i].acc[k],
              runs[i].c->replicas, rate_of(&runs[i]) ? rate_of(&runs[i]) : "none");
  fclose(f);
  return text;
}


/* robustness.csv (the full grid only): method,replicas,rate,variant,time_to_target_h,final_accuracy. */
static char *fig4_robustness_csv(const reproduce_data *d)
{
  const run *runs = d->runs[0];
  size_t n = d->n[0];
  if (d->o->quick || d->o->check)
    return NULL; /* no robustness runs (dean_simulate) */
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fputs("method,replicas,rate,variant,time_to_target_h,final_accuracy\n", f);
  for (size_t i = 0; i < n; i++) {
    const run *r = &runs[i];
    if (r->v == V_NONE)
      continue;
    fprintf(f, "%s,%d,%s,%s,", method_names[r->c->m], r->c->replicas, rate_of(r) ? rate_of(r) : "none",
            variant_names[r->v]);
    if (r->t_target >= 0)
      fprintf(f, "%.17g", r->t_target / 3600);
    fprintf(f, ",%.17g\n", r->final_acc);
  }
  fclose(f);
  return text;
}


/* Accuracy of run r at its last evaluation at or before t, or -1. */
static double acc_at(const run *r, double t)
{
  double a = -1;
  for (size_t i = 0; i < r->n && r->t[i] <= t; i++)
    a = r->acc[i];
  return a;
}

/* values: whether the SGD baseline's chosen run still rises over the horizon: its accuracy
 * at the horizon against at a tenth of it, in standard errors (the criterion: at
 * least RISE_MIN_SE). Not run (--quick): "-". */
#define RISE_MIN_SE 10
static void set_rise(json_t *v, const run *runs, size_t n, const config *cs, size_t nc)
{
  const run *r = NULL;
  for (size_t c = 0; c < nc && r == NULL; c++)
    if (cs[c].m == M_SGD)
      r = dean_chosen(runs, n, &cs[c], V_NONE);
  double early = r ? acc_at(r, HORIZON / 10) : -1, late = r ? acc_at(r, HORIZON) : -1;
  if (early < 0 || late < 0) {
    template_set(v, "rise", "-");
    return;
  }
  double se = dean_standard_error(late), k = (late - early) / se;
  template_set(v, "rise", "%.4f at %.0f s, %.4f at %.0f s: +%.1f standard errors (%.4f each): %s", early,
               HORIZON / 10, late, r->t[r->n - 1], k, se, k >= RISE_MIN_SE ? "yes" : "no");
}

/* Sorts chosen runs by time to the target, slowest (or never) first. */
static int slower_first(const void *a, const void *b)
{
  const run *x = *(const run *const *)a, *y = *(const run *const *)b;
  double tx = x->t_target < 0 ? INFINITY : x->t_target, ty = y->t_target < 0 ? INFINITY : y->t_target;
  if (tx != ty)
    return tx < ty ? 1 : -1;
  return x->final_acc < y->final_acc ? -1 : x->final_acc > y->final_acc;
}

/* The chosen runs of the paper's five configurations in variant v, slowest first; returns
 * how many ran. */
static size_t order_of(const run *runs, size_t n, const config *cs, size_t nc, variant v, const run **order)
{
  size_t k = 0;
  for (size_t p = 0; p < N_PAPER; p++)
    for (size_t c = 0; c < nc; c++)
      if (cs[c].m == paper_order[p].m && cs[c].replicas == paper_order[p].replicas) {
        const run *r = dean_chosen(runs, n, &cs[c], v);
        if (r)
          order[k++] = r;
      }
  qsort(order, k, sizeof(order[0]), slower_first);
  return k;
}

/* Whether order[0..k) keeps the paper's relative order: each configuration after the ones
 * the paper has slower (those a grid did not run, --quick's, are absent). */
static int paper_ordered(const run *const *order, size_t k)
{
  int last = -1;
  for (size_t i = 0; i < k; i++) {
    int rank = -1;
    for (size_t p = 0; p < N_PAPER; p++)
      if (order[i]->c->m == paper_order[p].m && order[i]->c->replicas == paper_order[p].replicas)
        rank = (int)p;
    if (rank < last)
      return 0;
    last = rank;
  }
  return 1;
}

/* item[key] = order[0..k) as "a < b (never) < c". */
static void set_order(json_t *item, const char *key, const run *const *order, size_t k)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  char buf[64];
  for (size_t i = 0; i < k; i++)
    fprintf(f, "%s%s%s", i ? " < " : "", dean_label_of(order[i]->c, buf, sizeof buf), order[i]->t_target < 0 ? " (never)" : "");
  template_set_stream(item, key, f, &text);
}

/* item[key] = "yes"/"no" for each of the methods against the GPU: faster to the target. */
static void set_beats_gpu(json_t *item, const char *key, const run *runs, size_t n, const config *cs, size_t nc,
                          variant v, const run *const *order, size_t k)
{
  const run *gpu = NULL;
  for (size_t c = 0; c < nc; c++)
    if (cs[c].m == M_GPU)
      gpu = dean_chosen(runs, n, &cs[c], v == V_HARDER || v == V_EASIER || proxy_variant(v) ? v : V_NONE);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  char buf[64];
  int any = 0;
  for (size_t i = 0; gpu && i < k; i++) {
    const run *r = order[i];
    if (!distributed(r->c->m))
      continue;
    int beats = r->t_target >= 0 && (gpu->t_target < 0 || r->t_target < gpu->t_target);
    fprintf(f, "%s%s: %s", any++ ? "; " : "", dean_label_of(r->c, buf, sizeof buf), beats ? "yes" : "no");
  }
  template_set_stream(item, key, f, &text);
}

/* Fig. 4's results table: each configuration's chosen run. */
static void fig4_results(json_t *v, const run *runs, size_t n, const config *cs, size_t nc)
{
  template_list(v, "results");
  for (size_t c = 0; c < nc; c++) {
    const run *r;
    json_t *it = dean_result_item(v, runs, n, &cs[c], &r);
    dean_set_label(it, "label", &cs[c]);
    if (r == NULL)
      continue;
    int lo, hi;
    dean_rungs_of(runs, n, &cs[c], V_NONE, &lo, &hi);
    dean_set_label(it, "label", r->c);
    template_set(it, "rate", "%s", rate_of(r) ? rate_of(r) : "-");
    if (hi >= 0)
      template_set(it, "rates", "%s to %s", ladder[lo], ladder[hi]);
    else
      template_set(it, "rates", "-");
    dean_set_hours(it, "hours", r->t_target);
    template_set(it, "accuracy", "%.4f", r->n ? r->acc[r->n - 1] : r->final_acc);
    template_set(it, "machines", "%ld", r->hosts);
  }
}

/* Fig. 4's robustness table: the paper's configurations of at most ROBUST_MAX_REPLICAS
 * replicas under each variant (those a variant does not rerun keep their result as run; the
 * ill-conditioned proxy's row reruns them all). */
static void fig4_robustness(json_t *v, const run *runs, size_t n, const config *cs, size_t nc)
{
  template_list(v, "variants");
  for (size_t k = 0; k < N_VARIANTS; k++) {
    const run *vo[16], *mixed[16];
    if (k != V_NONE && order_of(runs, n, cs, nc, (variant)k, vo) == 0)
      continue;
    size_t mk = 0;
    for (size_t p = 0; p < N_PAPER; p++)
      for (size_t c = 0; c < nc; c++)
        if (cs[c].m == paper_order[p].m && cs[c].replicas == paper_order[p].replicas &&
            cs[c].replicas <= ROBUST_MAX_REPLICAS) {
          const run *r = dean_chosen(runs, n, &cs[c], (variant)k);
          r = r ? r : dean_chosen(runs, n, &cs[c], V_NONE);
          if (r)
            mixed[mk++] = r;
        }
    qsort(mixed, mk, sizeof(mixed[0]), slower_first);
    json_t *it = template_add(v, "variants");
    template_set(it, "name", "%s", variant_names[k]);
    set_order(it, "order", mixed, mk);
    template_set(it, "ordered", "%s", paper_ordered(mixed, mk) ? "yes" : "no");
    set_beats_gpu(it, "beats_gpu", runs, n, cs, nc, (variant)k, mixed, mk);
  }
}

/* templates/fig4.md's values: the rules, the results, the order against the paper's and the
 * robustness table. */
static int fig4_readme(json_t *v, const reproduce_data *d, char *err, size_t len)
{
  const dean_state *st = d->state;
  const run *runs = d->runs[0];
  const config *cs = st->cs;
  const calibration *cal = &st->cal;
  size_t n = d->n[0], nc = st->nc;
  json_object_set_new(v, "quick_run", json_boolean(d->o->quick));
  if (dean_set_rules(v, cal, err, len) != 0)
    return -1;
  {
    fig4_results(v, runs, n, cs, nc);
    const run *order[16];
    size_t k = order_of(runs, n, cs, nc, V_NONE, order);
    for (size_t i = 0; i < N_PAPER; i++) {
      json_t *it = template_add(v, "paper_order");
      template_set(it, "sep", "%s", i ? " < " : "");
      dean_set_label(it, "label", &paper_order[i]);
    }
    set_order(v, "order", order, k);
    template_set(v, "ordered", "%s", paper_ordered(order, k) ? "yes" : "no");
    set_beats_gpu(v, "beats_gpu", runs, n, cs, nc, V_NONE, order, k);
    set_rise(v, runs, n, cs, nc);
    int any = 0;
    for (size_t i = 0; i < n; i++)
      any |= runs[i].v != V_NONE;
    json_object_set_new(v, "robustness", json_boolean(any));
    fig4_robustness(v, runs, n, cs, nc);
    template_set(v, "easier", "%.4f", cal->easier);
    template_set(v, "harder", "%.4f", cal->harder);
    template_set(v, "robust_max_replicas", "%s", ROBUST_MAX_REPLICAS_TEXT);
    const screened *ill = &cal->cand[0];
    template_set(v, "ill_target", "%.4f", ill->target);
    template_set(v, "ill_rise", "%+.1f", (ill->target - ill->easier) / dean_standard_error(ill->target));
    const screened *prev = &cal->cand[PREV_PROXY];
    json_object_set_new(v, "prev_row", json_boolean(cal->n_screened > PREV_PROXY && cal->proxy != PREV_PROXY));
    template_set(v, "prev_target", "%.4f", prev->target);
    template_set(v, "prev_stale", "%.3f", prev->stale);
    template_set(v, "rise_as_run", "%+.1f", (cal->target - cal->easier) / dean_standard_error(cal->target));
  }
  return 0;
}


/* fig4.gp's values: one datablock and one curve per configuration's chosen run (accuracy
 * against hours), and the target the dashed line marks. */
static void fig4_plot(json_t *v, const char *plot, const reproduce_data *d)
{
  (void)plot;
  const dean_state *st = d->state;
  char *text;
  size_t tl, k = 0;
  FILE *f = reproduce_frame_stream(&text, &tl);
  template_list(v, "curves");
  for (size_t c = 0; c < st->nc; c++) {
    const run *r = dean_chosen(d->runs[0], d->n[0], &st->cs[c], V_NONE);
    if (r == NULL)
      continue;
    fprintf(f, "$c%zu << EOD\n", k);
    for (size_t i = 0; i < r->n; i++)
      fprintf(f, "%.9g %.9g\n", r->t[i] / 3600, r->acc[i]);
    fputs("EOD\n", f);
    char buf[64];
    json_t *it = reproduce_frame_clause(v, "curves");
    template_set(it, "k", "%zu", k++);
    template_set(it, "label", "%s", dean_label_of(r->c, buf, sizeof buf));
  }
  reproduce_frame_set_whole(v, "blocks", f, &text); /* the script starts with them */
  template_set(v, "target", "%.4f", st->cal.target);
  template_set(v, "target_line", "%.6f", st->cal.target);
}

static const dean_figure fig4_figure = {fig4_configs, sizeof fig4_configs / sizeof *fig4_configs, 1};

const reproduction reproduce_fig4 = {
    .name = "fig4",
    .arg = &fig4_figure, /* its configurations, and the robustness runs */
    .grids = {{.ini_name = "fig4.ini", .ini = dean_ini}},
    .store = DEAN_STORE, /* shared with fig5's runs */
    .simulate = dean_simulate,
    .release = dean_release,
    .tables = {{"fig4.csv", 0x1Bu, fig4_csv, 0}, /* key: method,sim_time_h,replicas,rate */
               {"robustness.csv", 0, fig4_robustness_csv, 1}},
    .readme = fig4_readme,
    .plots = {"fig4"},
    .plot = fig4_plot,
};

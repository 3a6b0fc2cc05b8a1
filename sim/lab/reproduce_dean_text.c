/* reproduce_dean_text.c - what `dtsim reproduce fig4` and `fig5` write (Dean et al. 2012,
 * sec. 5, Figs. 4 and 5): fig4.csv, fig5.csv and robustness.csv, the READMEs (the rules,
 * written before the results, then the results against the paper's claims) and the gnuplot
 * scripts of fig4.png and fig5.png, from the runs reproduce_dean.c made. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <xbt/asserts.h>

#include "sim/lab/reproduce.h"
#include "sim/lab/reproduce_dean.h"
#include "sim/lab/template.h"

/* The paper's Fig. 4 order, slowest first (Dean et al. 2012, sec. 5 and Fig. 4). */
static const config paper_order[] = {
    {M_SGD, 1, 0}, {M_DOWNPOUR, 20, 0}, {M_ADAGRAD, 20, 0}, {M_SANDBLASTER, 2000, 0}, {M_ADAGRAD, 200, 0}};
#define N_PAPER (sizeof(paper_order) / sizeof(paper_order[0]))

/* ---- the figures' CSV files ------------------------------------------------------------ */

/* fig4.csv: the documented method,sim_time_h,accuracy, then replicas and rate: every run's
 * evaluations (each rate's, so that a --quick grid's rows are rows of the full one). */
char *dean_fig4_csv(const run *runs, size_t n)
{
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

/* fig5.csv: method,replicas,machines,cores,time_to_target_h,rate: machines are every host the
 * run used, cores its utilized cores; time_to_target_h is empty when the target was not
 * reached. */
char *dean_fig5_csv(const run *runs, size_t n)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fputs("method,replicas,machines,cores,time_to_target_h,rate\n", f);
  for (size_t i = 0; i < n; i++) {
    const run *r = &runs[i];
    if (r->v != V_NONE)
      continue;
    fprintf(f, "%s,%d,%ld,%.17g,", method_names[r->c->m], r->c->replicas, r->hosts, cores_of(r));
    if (r->t_target >= 0)
      fprintf(f, "%.17g", r->t_target / 3600);
    fprintf(f, ",%s\n", rate_of(r) ? rate_of(r) : "none");
  }
  fclose(f);
  return text;
}

/* robustness.csv (fig4): method,replicas,rate,variant,time_to_target_h,final_accuracy. */
char *dean_robustness_csv(const run *runs, size_t n)
{
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

/* ---- the READMEs ---------------------------------------------------------------------- */

/* item[key] = hours to the target, or "not reached". */
static void set_hours(json_t *item, const char *key, double s)
{
  if (s >= 0)
    template_set(item, key, "%.3f", s / 3600);
  else
    template_set(item, key, "not reached");
}

/* A configuration's name in the tables and plots, in buf. */
static const char *label_of(const config *c, char *buf, size_t len)
{
  if (c->m == M_SGD)
    snprintf(buf, len, "sgd (1 replica, 8 partitions)");
  else if (c->m == M_GPU)
    snprintf(buf, len, "gpu (1 GPU)");
  else
    snprintf(buf, len, "%s %d", method_names[c->m], c->replicas);
  return buf;
}

static void set_label(json_t *item, const char *key, const config *c)
{
  char buf[64];
  template_set(item, key, "%s", label_of(c, buf, sizeof buf));
}

/* The standard error of a held-out accuracy p measured on TEST examples. */
static double standard_error(double p)
{
  return sqrt(p * (1 - p) / TEST);
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
  double se = standard_error(late), k = (late - early) / se;
  template_set(v, "rise", "%.4f at %.0f s, %.4f at %.0f s: +%.1f standard errors (%.4f each): %s", early,
               HORIZON / 10, late, r->t[r->n - 1], k, se, k >= RISE_MIN_SE ? "yes" : "no");
}

/* values["rules"] = templates/dean_rules.md filled: the rules, written before any result
 * (both READMEs); -1 with one line in err if the template fails. */
static int set_rules(json_t *v, const calibration *cal, char *err, size_t len)
{
  json_t *r = json_object();
  template_set(r, "batch", "%d", BATCH);
  template_set(r, "sgd_step", "%.3f", cal->sgd_step);
  template_set(r, "gpu_step", "%.3f", cal->gpu_step);
  template_set(r, "horizon", "%s", HORIZON_TEXT);
  template_set(r, "difficulty", "%s", DIFFICULTY_TEXT);
  template_set(r, "n_star", "%.0f", cal->n_star);
  template_set(r, "star_steps", "%ld", cal->star_steps);
  template_set(r, "target", "%.4f", cal->target);
  template_set(r, "target_rate", "%s", ladder[cal->rung]);
  template_set(r, "sgd_target_s", "%.0f", cal->n_star / (BATCH / cal->sgd_step));
  template_set(r, "sgd_partitions", "%d", SGD_PARTITIONS);
  template_set(r, "portions", "%d", PORTIONS_PER_REPLICA);
  template_set(r, "portion", "%d", PORTION);
  template_set(r, "sandblaster_batch", "%d", PORTIONS_PER_REPLICA * PORTION);
  template_set(r, "machines_per_shard", "%d", MACHINES_PER_SHARD);
  template_set(r, "eval_every", "%s", EVAL_EVERY_TEXT);
  template_set(r, "max_replicas", "%s", MAX_REPLICAS_TEXT);
  template_set(r, "test", "%d", TEST);
  template_set(r, "target_se", "%.4f", standard_error(cal->target));
  char *rules = template_render("dean_rules", r, err, len);
  json_decref(r);
  if (rules == NULL)
    return -1;
  json_object_set_new(v, "rules", json_string(rules));
  free(rules);
  return 0;
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
 * the paper has slower (those not simulated, rule 9, are absent). */
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

/* values["unsimulated_list"]: cs's configurations beyond MAX_REPLICAS (rule 9). */
static void set_unsimulated(json_t *v, const config *cs, size_t nc)
{
  template_list(v, "unsimulated_list");
  int k = 0;
  for (size_t c = 0; c < nc; c++)
    if (!simulated(&cs[c])) {
      json_t *it = template_add(v, "unsimulated_list");
      json_object_set_new(it, "first", json_boolean(k++ == 0));
      set_label(it, "label", &cs[c]);
    }
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
    fprintf(f, "%s%s%s", i ? " < " : "", label_of(order[i]->c, buf, sizeof buf), order[i]->t_target < 0 ? " (never)" : "");
  template_set_stream(item, key, f, &text);
}

/* item[key] = "yes"/"no" for each of the methods against the GPU: faster to the target. */
static void set_beats_gpu(json_t *item, const char *key, const run *runs, size_t n, const config *cs, size_t nc,
                          variant v, const run *const *order, size_t k)
{
  const run *gpu = NULL;
  for (size_t c = 0; c < nc; c++)
    if (cs[c].m == M_GPU)
      gpu = dean_chosen(runs, n, &cs[c], v == V_HARDER || v == V_EASIER || spectrum_variant(v) ? v : V_NONE);
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
    fprintf(f, "%s%s: %s", any++ ? "; " : "", label_of(r->c, buf, sizeof buf), beats ? "yes" : "no");
  }
  template_set_stream(item, key, f, &text);
}

/* Fig. 4's results table: each configuration's chosen run, or "not simulated". */
static void fig4_results(json_t *v, const run *runs, size_t n, const config *cs, size_t nc)
{
  template_list(v, "results");
  for (size_t c = 0; c < nc; c++) {
    const run *r = dean_chosen(runs, n, &cs[c], V_NONE);
    json_t *it = template_add(v, "results");
    json_object_set_new(it, "unsimulated", json_boolean(!simulated(&cs[c])));
    json_object_set_new(it, "ran", json_boolean(r != NULL));
    set_label(it, "label", &cs[c]);
    if (r == NULL)
      continue;
    int lo, hi;
    dean_rungs_of(runs, n, &cs[c], V_NONE, &lo, &hi);
    set_label(it, "label", r->c);
    template_set(it, "rate", "%s", rate_of(r) ? rate_of(r) : "-");
    if (hi >= 0)
      template_set(it, "rates", "%s to %s", ladder[lo], ladder[hi]);
    else
      template_set(it, "rates", "-");
    set_hours(it, "hours", r->t_target);
    template_set(it, "accuracy", "%.4f", r->n ? r->acc[r->n - 1] : r->final_acc);
    template_set(it, "machines", "%ld", r->hosts);
  }
}

/* Fig. 4's robustness table: the paper's configurations under each variant (those a
 * variant does not rerun keep their result as run). */
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
        if (cs[c].m == paper_order[p].m && cs[c].replicas == paper_order[p].replicas) {
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

char *dean_fig4_readme(const run *runs, size_t n, const config *cs, size_t nc, const calibration *cal, int quick,
                       char *err, size_t len)
{
  json_t *v = json_object();
  template_set(v, "quick", "%s", quick ? " --quick" : "");
  json_object_set_new(v, "quick_run", json_boolean(quick));
  char *readme = NULL;
  if (set_rules(v, cal, err, len) == 0) {
    fig4_results(v, runs, n, cs, nc);
    const run *order[16];
    size_t k = order_of(runs, n, cs, nc, V_NONE, order);
    for (size_t i = 0; i < N_PAPER; i++) {
      json_t *it = template_add(v, "paper_order");
      template_set(it, "sep", "%s", i ? " < " : "");
      set_label(it, "label", &paper_order[i]);
    }
    set_order(v, "order", order, k);
    set_unsimulated(v, cs, nc);
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
    const char *names[N_SPECTRA][2] = {{"flatter", "flatter_rise"}, {"steeper", "steeper_rise"}};
    for (size_t d = 0; d < N_SPECTRA; d++) {
      template_set(v, names[d][0], "%.4f", cal->spectrum[d]);
      template_set(v, names[d][1], "%+.1f",
                   (cal->spectrum[d] - cal->spectrum_half[d]) / standard_error(cal->spectrum[d]));
    }
    template_set(v, "rise_as_run", "%+.1f", (cal->target - cal->easier) / standard_error(cal->target));
    readme = template_render("fig4", v, err, len);
  }
  json_decref(v);
  return readme;
}

/* Fig. 5's results table: each configuration's chosen run, or "not simulated". */
static void fig5_results(json_t *v, const run *runs, size_t n, const config *cs, size_t nc)
{
  template_list(v, "results");
  for (size_t c = 0; c < nc; c++) {
    const run *r = dean_chosen(runs, n, &cs[c], V_NONE);
    json_t *it = template_add(v, "results");
    json_object_set_new(it, "unsimulated", json_boolean(!simulated(&cs[c])));
    json_object_set_new(it, "ran", json_boolean(r != NULL));
    template_set(it, "method", "%s", method_names[cs[c].m]);
    template_set(it, "replicas", "%d", cs[c].replicas);
    if (r == NULL)
      continue;
    template_set(it, "method", "%s", method_names[r->c->m]);
    template_set(it, "replicas", "%d", r->c->replicas);
    template_set(it, "machines", "%ld", r->hosts);
    template_set(it, "cores", "%.0f", cores_of(r));
    template_set(it, "rate", "%s", rate_of(r) ? rate_of(r) : "-");
    set_hours(it, "hours", r->t_target);
  }
}

/* Fig. 5's claims, from the chosen runs. */
static void fig5_claims(json_t *v, const run *runs, size_t n, const config *cs, size_t nc)
{
  const run *best = NULL;
  for (size_t c = 0; c < nc; c++) {
    const run *r = dean_chosen(runs, n, &cs[c], V_NONE);
    if (r && r->c->m != M_GPU && cores_of(r) <= 2000 && r->t_target >= 0 && (best == NULL || r->t_target < best->t_target))
      best = r;
  }
  json_object_set_new(v, "best", json_boolean(best != NULL));
  if (best) {
    set_label(v, "best_label", best->c);
    set_hours(v, "best_hours", best->t_target);
    template_set(v, "best_cores", "%.0f", cores_of(best));
  }
  int most = 0;
  for (size_t c = 0; c < nc; c++)
    if (cs[c].m == M_DOWNPOUR && simulated(&cs[c]) && cs[c].replicas > most)
      most = cs[c].replicas;
  const run *dp = NULL, *ada = NULL;
  for (size_t c = 0; c < nc; c++) {
    if (cs[c].replicas == most && cs[c].m == M_DOWNPOUR)
      dp = dean_chosen(runs, n, &cs[c], V_NONE);
    if (cs[c].replicas == most && cs[c].m == M_ADAGRAD)
      ada = dean_chosen(runs, n, &cs[c], V_NONE);
  }
  json_object_set_new(v, "downpour_most", json_boolean(dp != NULL));
  json_object_set_new(v, "adagrad_most", json_boolean(ada != NULL));
  template_set(v, "most", "%d", most);
  if (dp)
    set_hours(v, "downpour_hours", dp->t_target);
  if (ada)
    set_hours(v, "adagrad_hours", ada->t_target);
  template_list(v, "sandblaster");
  for (size_t c = 0; c < nc; c++) {
    const run *r = cs[c].m == M_SANDBLASTER ? dean_chosen(runs, n, &cs[c], V_NONE) : NULL;
    if (r == NULL) /* --quick runs some configurations only */
      continue;
    json_t *it = template_add(v, "sandblaster");
    template_set(it, "sep", "%s", json_array_size(json_object_get(v, "sandblaster")) > 1 ? ", " : "");
    template_set(it, "cores", "%.0f", cores_of(r));
    set_hours(it, "hours", r->t_target);
  }
}

char *dean_fig5_readme(const run *runs, size_t n, const config *cs, size_t nc, const calibration *cal, int quick,
                       char *err, size_t len)
{
  json_t *v = json_object();
  template_set(v, "quick", "%s", quick ? " --quick" : "");
  template_set(v, "horizon", "%s", HORIZON_TEXT);
  char *readme = NULL;
  if (set_rules(v, cal, err, len) == 0) {
    fig5_results(v, runs, n, cs, nc);
    fig5_claims(v, runs, n, cs, nc);
    readme = template_render("fig5", v, err, len);
  }
  json_decref(v);
  return readme;
}

/* ---- the plots -------------------------------------------------------------------------- */

int dean_fig4_plot(const char *dir, const run *runs, size_t n, const config *cs, size_t nc, const calibration *cal,
                     char *err, size_t len)
{
  char *script = NULL;
  size_t slen = 0;
  FILE *f = open_memstream(&script, &slen);
  xbt_assert(f, "open_memstream failed");
  size_t k = 0;
  for (size_t c = 0; c < nc; c++) {
    const run *r = dean_chosen(runs, n, &cs[c], V_NONE);
    if (r == NULL)
      continue;
    fprintf(f, "$c%zu << EOD\n", k++);
    for (size_t i = 0; i < r->n; i++)
      fprintf(f, "%.9g %.9g\n", r->t[i] / 3600, r->acc[i]);
    fputs("EOD\n", f);
  }
  fprintf(f,
          "set terminal pngcairo size 860,560\nset output '%s/.fig4.png.tmp'\nset key bottom right\n"
          "set xlabel 'simulated time (hours)'\nset ylabel 'held-out accuracy of the proxy'\n"
          "set title 'Dean et al. 2012 Fig. 4, simulated by dtsim (target %.4f)'\n"
          "set arrow from graph 0, first %.6f to graph 1, first %.6f nohead dt 2\nplot ",
          dir, cal->target, cal->target, cal->target);
  k = 0;
  for (size_t c = 0; c < nc; c++) {
    const run *r = dean_chosen(runs, n, &cs[c], V_NONE);
    if (r == NULL)
      continue;
    char buf[64];
    fprintf(f, "%s$c%zu using 1:2 with lines lw 2 title '%s'", k ? ", " : "", k, label_of(r->c, buf, sizeof buf));
    k++;
  }
  fputs("\n", f);
  fclose(f);
  int rc = reproduce_plot(dir, "fig4", script, err, len);
  free(script);
  return rc;
}

int dean_fig5_plot(const char *dir, const run *runs, size_t n, const config *cs, size_t nc, char *err, size_t len)
{
  char *script = NULL;
  size_t slen = 0;
  FILE *f = open_memstream(&script, &slen);
  xbt_assert(f, "open_memstream failed");
  int points[M_SANDBLASTER + 1] = {0}, any = 0;
  double lo[2] = {INFINITY, INFINITY}, hi[2] = {0, 0}; /* machines, cores */
  for (int m = M_SGD; m <= M_SANDBLASTER; m++) {
    fprintf(f, "$m%d << EOD\n", m);
    for (size_t c = 0; c < nc; c++) {
      const run *r = cs[c].m == (method)m ? dean_chosen(runs, n, &cs[c], V_NONE) : NULL;
      if (r && r->t_target >= 0) {
        fprintf(f, "%ld %.9g %.9g\n", r->hosts, cores_of(r), r->t_target / 3600);
        double x[2] = {(double)r->hosts, cores_of(r)};
        for (int a = 0; a < 2; a++) {
          lo[a] = fmin(lo[a], x[a]);
          hi[a] = fmax(hi[a], x[a]);
        }
        points[m]++;
        any = 1;
      }
    }
    fputs("EOD\n", f);
  }
  fprintf(f,
          "set terminal pngcairo size 1100,480\nset output '%s/.fig5.png.tmp'\nset multiplot layout 1,2 "
          "title 'Dean et al. 2012 Fig. 5, simulated by dtsim: time to the target accuracy'\n"
          "set logscale x\nset key top right\nset ylabel 'hours to the target'\n",
          dir);
  /* gnuplot refuses a plot with no point at all: a method without one is left out, and
   * when no run reached the target the panels are empty frames that say so */
  if (!any)
    fputs("set yrange [0:1]\n"
          "set label 'no run reached the target within the horizon' at graph 0.5, 0.5 center\n",
          f);
  else /* from 0, so that one point (or one time) is not an empty range */
    fputs("set yrange [0:*]\n", f);
  for (int axis = 1; axis <= 2; axis++) {
    /* a factor of 2 around the points: one point (or one count) is not an empty range */
    fprintf(f, "set xrange [%.9g:%.9g]\n", any ? lo[axis - 1] / 2 : 1, any ? hi[axis - 1] * 2 : 100000);
    fprintf(f, "set xlabel '%s'\nplot ", axis == 1 ? "machines" : "utilized cores");
    int k = 0;
    for (int m = M_SGD; m <= M_SANDBLASTER; m++)
      if (points[m])
        fprintf(f, "%s$m%d using %d:3 with linespoints lw 2 pt 7 title '%s'", k++ ? ", " : "", m, axis,
                method_names[m]);
    fputs(k ? "\n" : "NaN notitle\n", f);
  }
  fputs("unset multiplot\n", f);
  fclose(f);
  int rc = reproduce_plot(dir, "fig5", script, err, len);
  free(script);
  return rc;
}

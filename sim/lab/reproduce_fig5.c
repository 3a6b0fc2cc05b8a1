/* reproduce_fig5.c - `dtsim reproduce fig5`: Dean et al. 2012, Fig. 5 (sec. 5), time to a
 * target accuracy against machines and utilized cores, run by the method both figures share
 * (reproduce_dean.c): its configurations, fig5.csv, the README's claims and its plot
 * (templates/fig5.md, fig5.gp). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <xbt/asserts.h>

#include "sim/lab/reproduce.h"
#include "sim/lab/reproduce_dean.h"
#include "sim/lab/reproduce_frame.h"
#include "sim/lab/template.h"

/* Fig. 5: four points per trace, one of them Fig. 4's configuration (the paper's), the other
 * three the same replica counts for every method. */
static const config fig5_configs[] = {
    {M_SGD, 1, 0},         {M_GPU, 1, 1},         {M_DOWNPOUR, 10, 0},    {M_DOWNPOUR, 20, 0},
    {M_DOWNPOUR, 50, 0},   {M_DOWNPOUR, 200, 0},  {M_ADAGRAD, 10, 0},     {M_ADAGRAD, 20, 1},
    {M_ADAGRAD, 50, 0},    {M_ADAGRAD, 200, 0},   {M_SANDBLASTER, 10, 0}, {M_SANDBLASTER, 20, 1},
    {M_SANDBLASTER, 50, 0}, {M_SANDBLASTER, 2000, 0},
};


/* fig5.csv: method,replicas,machines,cores,time_to_target_h,rate: machines are every host the
 * run used, cores its utilized cores; time_to_target_h is empty when the target was not
 * reached. */
static char *fig5_csv(const reproduce_data *d)
{
  char *text;
  size_t len;
  FILE *f = reproduce_frame_stream(&text, &len);
  fputs("method,replicas,machines,cores,time_to_target_h,rate\n", f);
  for (size_t i = 0; i < d->n[0]; i++) {
    const run *r = (const run *)d->runs[0] + i;
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


/* Fig. 5's results table: each configuration's chosen run. */
static void fig5_results(json_t *v, const run *runs, size_t n, const config *cs, size_t nc)
{
  template_list(v, "results");
  for (size_t c = 0; c < nc; c++) {
    const run *r;
    json_t *it = dean_result_item(v, runs, n, &cs[c], &r);
    template_set(it, "method", "%s", method_names[cs[c].m]);
    template_set(it, "replicas", "%d", cs[c].replicas);
    if (r == NULL)
      continue;
    template_set(it, "method", "%s", method_names[r->c->m]);
    template_set(it, "replicas", "%d", r->c->replicas);
    template_set(it, "machines", "%ld", r->hosts);
    template_set(it, "cores", "%.0f", cores_of(r));
    template_set(it, "rate", "%s", rate_of(r) ? rate_of(r) : "-");
    dean_set_hours(it, "hours", r->t_target);
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
    dean_set_label(v, "best_label", best->c);
    dean_set_hours(v, "best_hours", best->t_target);
    template_set(v, "best_cores", "%.0f", cores_of(best));
  }
  int most = 0;
  for (size_t c = 0; c < nc; c++)
    if (cs[c].m == M_DOWNPOUR && cs[c].replicas > most)
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
    dean_set_hours(v, "downpour_hours", dp->t_target);
  if (ada)
    dean_set_hours(v, "adagrad_hours", ada->t_target);
  template_list(v, "sandblaster");
  for (size_t c = 0; c < nc; c++) {
    const run *r = cs[c].m == M_SANDBLASTER ? dean_chosen(runs, n, &cs[c], V_NONE) : NULL;
    if (r == NULL) /* --quick runs some configurations only */
      continue;
    json_t *it = template_add(v, "sandblaster");
    template_set(it, "sep", "%s", json_array_size(json_object_get(v, "sandblaster")) > 1 ? ", " : "");
    template_set(it, "cores", "%.0f", cores_of(r));
    dean_set_hours(it, "hours", r->t_target);
  }
}

/* templates/fig5.md's values: the rules, the results and the paper's claims. */
static int fig5_readme(json_t *v, const reproduce_data *d, char *err, size_t len)
{
  const dean_state *st = d->state;
  template_set(v, "horizon", "%s", HORIZON_TEXT);
  if (dean_set_rules(v, &st->cal, err, len) != 0)
    return -1;
  fig5_results(v, d->runs[0], d->n[0], st->cs, st->nc);
  fig5_claims(v, d->runs[0], d->n[0], st->cs, st->nc);
  return 0;
}

/* fig5.gp's values: per method the hours to the target of its configurations' chosen runs
 * against machines and utilized cores. gnuplot refuses a plot with no point at all: a method
 * without one is left out, and when no run reached the target the panels are empty frames that
 * say so; each axis spans a factor of 2 around the points (one point is not an empty range). */
static void fig5_plot(json_t *v, const char *plot, const reproduce_data *d)
{
  (void)plot;
  const dean_state *st = d->state;
  const config *cs = st->cs;
  int points[M_SANDBLASTER + 1] = {0}, any = 0;
  double lo[2] = {INFINITY, INFINITY}, hi[2] = {0, 0}; /* machines, cores */
  char *text;
  size_t tl;
  FILE *f = reproduce_frame_stream(&text, &tl);
  for (int m = M_SGD; m <= M_SANDBLASTER; m++) {
    fprintf(f, "$m%d << EOD\n", m);
    for (size_t c = 0; c < st->nc; c++) {
      const run *r = cs[c].m == (method)m ? dean_chosen(d->runs[0], d->n[0], &cs[c], V_NONE) : NULL;
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
  reproduce_frame_set_whole(v, "blocks", f, &text); /* the script starts with them */
  json_object_set_new(v, "any", json_boolean(any));
  template_list(v, "axes");
  for (int axis = 1; axis <= 2; axis++) {
    json_t *ax = template_add(v, "axes");
    template_set(ax, "lo", "%.9g", any ? lo[axis - 1] / 2 : 1);
    template_set(ax, "hi", "%.9g", any ? hi[axis - 1] * 2 : 100000);
    template_set(ax, "label", "%s", axis == 1 ? "machines" : "utilized cores");
    template_set(ax, "axis", "%d", axis);
    template_list(ax, "series");
    for (int m = M_SGD; m <= M_SANDBLASTER; m++)
      if (points[m]) {
        json_t *it = reproduce_frame_clause(ax, "series");
        template_set(it, "m", "%d", m);
        template_set(it, "method", "%s", method_names[m]);
      }
  }
}

static const dean_figure fig5_figure = {fig5_configs, sizeof fig5_configs / sizeof *fig5_configs, 0};

const reproduction reproduce_fig5 = {
    .name = "fig5",
    .arg = &fig5_figure, /* its configurations; no robustness runs (Fig. 4 has them) */
    .grids = {{.ini_name = "fig5.ini", .ini = dean_ini}},
    .store = DEAN_STORE, /* shared with fig4's runs */
    .simulate = dean_simulate,
    .release = dean_release,
    .tables = {{"fig5.csv", 0x23u, fig5_csv, 0}}, /* key: method,replicas,rate */
    .readme = fig5_readme,
    .plots = {"fig5"},
    .plot = fig5_plot,
};

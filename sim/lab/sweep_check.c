/* sweep_check.c - a sweep checked whole before any point runs (sweep_check.h): its keys,
 * values and points' scenarios, the platform files they name, and the metric it plots. */
#include "sim/lab/sweep_check.h"

#include <stdio.h>
#include <string.h>
#include <xbt/sysdep.h>

#include "algorithms/registry.h"
#include "sim/lab/sweep_metric.h"
#include "sim/platform.h"

#define ERRLEN 1400

/* Whether the --set assignment names key (blanks around it ignored). */
static int sets_key(const char *assignment, const char *key)
{
  const char *a = assignment + strspn(assignment, " \t");
  size_t n = strlen(key);
  return strncmp(a, key, n) == 0 && a[n + strspn(a + n, " \t")] == '=';
}

/* Every --vary key: known, varied once, fixed by no --set or --seed, each value valid
 * alone over base. Returns 0, or -1 with one line in err. */
static int check_keys(const sweep_grid *g, const scenario *base, char *err, size_t len)
{
  char msg[ERRLEN];
  for (size_t k = 0; k < g->nv; k++) {
    const sweep_vary *v = &g->vs[k];
    int known = 0;
    for (size_t i = 0; i < scenario_key_count() && !known; i++) {
      const char *section, *key, *def, *unit, *doc;
      char value[SCENARIO_STR + 64], full[200];
      scenario_key_at(base, i, &section, &key, value, sizeof(value), &def, &unit, &doc);
      snprintf(full, sizeof(full), "%s.%s", section, key);
      known = strcmp(full, v->key) == 0;
    }
    scenario s = *base;
    if (!known && sweep_grid_set(&s, v->key, v->values[0], msg, sizeof(msg)) != 0) {
      snprintf(err, len, "--vary %s: %s", v->arg, msg);
      return -1;
    }
    if (!known) {
      snprintf(err, len, "--vary %s: unknown key '%s' (see: dtsim list keys)", v->arg, v->key);
      return -1;
    }
    for (size_t j = 0; j < k; j++)
      if (strcmp(g->vs[j].key, v->key) == 0) {
        snprintf(err, len, "--vary %s: %s is already varied by --vary %s", v->arg, v->key, g->vs[j].arg);
        return -1;
      }
    for (size_t i = 0; i < g->nsets; i++)
      if (sets_key(g->sets[i], v->key)) {
        snprintf(err, len, "--vary %s: %s is also fixed by --set %s", v->arg, v->key, g->sets[i]);
        return -1;
      }
    if (g->seed && strcmp(v->key, "run.seed") == 0) {
      snprintf(err, len, "--vary %s: run.seed is also fixed by --seed", v->arg);
      return -1;
    }
    for (size_t i = 0; i < v->n; i++) {
      s = *base;
      if (sweep_grid_set(&s, v->key, v->values[i], msg, sizeof(msg)) != 0) {
        snprintf(err, len, "--vary %s: value '%s': %s", v->arg, v->values[i], msg);
        return -1;
      }
    }
  }
  return 0;
}

/* Point pick's scenario s as `dtsim run` checks it (the point runs the scenario file with
 * the --sets and its values as --set): its values and their combinations, the --sets'
 * contradictions and, when no --set chooses run.algorithm, another algorithm's section.
 * Returns 0, or -1 with the problem in err. */
static int check_point_scenario(const sweep_grid *g, const scenario *s, const size_t *pick, char *err, size_t len)
{
  const char *origin = g->scenario ? g->scenario : "<default>";
  if (scenario_validate(s, origin, err, len) != 0)
    return -1;
  char **sets = xbt_malloc0((g->nsets + g->nv + 1) * sizeof(char *));
  int n = 0, chosen = 0;
  for (size_t i = 0; i < g->nsets; i++) {
    sets[n++] = xbt_strdup(g->sets[i]);
    chosen |= sets_key(g->sets[i], "run.algorithm");
  }
  for (size_t k = 0; k < g->nv; k++) {
    size_t l = strlen(g->vs[k].key) + strlen(g->vs[k].values[pick[k]]) + 2;
    sets[n] = xbt_malloc(l);
    snprintf(sets[n++], l, "%s=%s", g->vs[k].key, g->vs[k].values[pick[k]]);
    chosen |= strcmp(g->vs[k].key, "run.algorithm") == 0;
  }
  int rc = scenario_sets_conflict(sets, n, err, len);
  if (rc == 0 && !chosen)
    rc = scenario_foreign_section(s, origin, err, len);
  for (int i = 0; i < n; i++)
    xbt_free(sets[i]);
  xbt_free(sets);
  return rc;
}

/* A failed point blamed on one --vary value when that value alone fails over base, else on
 * the point: into err. */
static void blame_point(const sweep_grid *g, const scenario *base, size_t i, size_t count, const size_t *pick,
                        const char *problem, char *err, size_t len)
{
  for (size_t k = 0; k < g->nv; k++) {
    scenario one = *base;
    char msg[ERRLEN];
    sweep_grid_set(&one, g->vs[k].key, g->vs[k].values[pick[k]], msg, sizeof(msg));
    if (scenario_validate(&one, g->scenario ? g->scenario : "<default>", msg, sizeof(msg)) != 0) {
      snprintf(err, len, "--vary %s: value '%s': %s", g->vs[k].arg, g->vs[k].values[pick[k]], msg);
      return;
    }
  }
  char name[1024];
  sweep_grid_name(g, i + 1, count, pick, name, sizeof(name));
  snprintf(err, len, "point %s: %s", name, problem);
}

/* A platform file the points name, with the most hosts one of them needs. */
typedef struct platform_need {
  char *file;
  size_t needed, point; /* hosts, and the point (1-based) that needs them */
  const char *why;      /* how that point counts them */
  int spread;           /* a point places its hosts spread over the file's */
} platform_need;

/* Adds point i's (scenario s) platform file and hosts to the needs[0..*n). */
static void need_add(platform_need *needs, size_t *n, const scenario *s, size_t i)
{
  if (!s->platform.file[0])
    return;
  const algorithm *a = algorithm_find(s->run.algorithm);
  const char *why = "";
  size_t hosts = a->plan.hosts_needed(s, algorithm_params(s, a), &why), f = 0;
  while (f < *n && strcmp(needs[f].file, s->platform.file) != 0)
    f++;
  if (f == *n)
    needs[(*n)++] = (platform_need){.file = xbt_strdup(s->platform.file)};
  needs[f].spread |= strcmp(s->platform.placement, "spread") == 0;
  if (hosts > needs[f].needed) {
    needs[f].needed = hosts;
    needs[f].point = i + 1;
    needs[f].why = why;
  }
}

/* Each platform file the points name loaded by SimGrid in a child process with the sweep's
 * options, as `dtsim run` loads it before its run: readable, well formed, routes between the
 * hosts used, as many hosts as the points need. Returns 0, or -1 with one line in err. */
static int check_platforms(const platform_need *needs, size_t n, const char *const *sg, size_t nsg, char *err,
                           size_t len)
{
  char **argv = xbt_malloc0((nsg + 3) * sizeof(char *));
  int argc = 0;
  argv[argc++] = "dtsim";
  argv[argc++] = "--log=no_loc";
  for (size_t i = 0; i < nsg; i++)
    argv[argc++] = (char *)sg[i];
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    char msg[ERRLEN];
    platform_use use = {needs[i].needed, needs[i].spread, 0}; /* the run itself drops host CPUs */
    long hosts = platform_check_use(needs[i].file, argc, argv, &use, msg, sizeof(msg));
    if (hosts < 0)
      snprintf(err, len, "platform.file %s", msg);
    else if ((size_t)hosts < needs[i].needed)
      snprintf(err, len, "platform.file %s: the platform has %ld host%s, point %zu needs %zu (%s)", needs[i].file,
               hosts, hosts == 1 ? "" : "s", needs[i].point, needs[i].needed, needs[i].why);
    rc = hosts < 0 || (size_t)hosts < needs[i].needed ? -1 : 0;
  }
  xbt_free(argv);
  return rc;
}

/* The metric refused: no point reports it; what point 1 (scenario first) reports instead. */
static void refuse_metric(const char *metric, const scenario *first, char *err, size_t len)
{
  char list[900];
  sweep_metric_list(first, list, sizeof list);
  scenario numeric = *first;
  numeric.model.numerics = 1;
  int timing = !first->model.numerics && sweep_metric_reported(metric, &numeric);
  snprintf(err, len, "--plot-metric %s: no point of this sweep reports it (%s%s run%s; point 1 reports %s)", metric,
           timing ? "timing only, model.numerics = off: " : "", first->run.algorithm,
           timing ? "s measure no loss or accuracy" : "s", list);
}

int sweep_check(const sweep_grid *g, size_t count, const char *const *sg, size_t nsg, const char *metric,
                int *target, char *err, size_t len)
{
  scenario base, first, s;
  char problem[ERRLEN];
  if (sweep_grid_base(g, &base, err, len) != 0 || check_keys(g, &base, err, len) != 0)
    return -1;
  size_t *pick = xbt_malloc0(g->nv * sizeof(size_t)), nfiles = 0;
  platform_need *needs = xbt_malloc0(count * sizeof(platform_need));
  int rc = 0, reported = metric == NULL;
  *target = 0;
  for (size_t i = 0; i < count && rc == 0; i++) {
    sweep_grid_pick(g, i, pick);
    sweep_grid_point(g, &base, pick, &s);
    if (i == 0)
      first = s;
    if (check_point_scenario(g, &s, pick, problem, sizeof problem) != 0) {
      blame_point(g, &base, i, count, pick, problem, err, len);
      rc = -1;
      break;
    }
    *target |= s.run.target_accuracy > 0;
    reported |= metric && sweep_metric_reported(metric, &s);
    need_add(needs, &nfiles, &s, i);
  }
  if (rc == 0 && !reported) {
    refuse_metric(metric, &first, err, len);
    rc = -1;
  }
  if (rc == 0)
    rc = check_platforms(needs, nfiles, sg, nsg, err, len);
  for (size_t f = 0; f < nfiles; f++)
    xbt_free(needs[f].file);
  xbt_free(needs);
  xbt_free(pick);
  return rc;
}

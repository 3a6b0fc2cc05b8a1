/* sweep_merge.c - `dtsim sweep`'s results: sweep.csv and sweep.png made from the point
 * folders only (point.json and summary.json), after a direct sweep and by `--merge` alike,
 * so that both give the same bytes. */
#include "sim/lab/sweep_merge.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/registry.h"
#include "sim/fileio.h"
#include "sim/plot.h"
#include "sim/scenario.h"

/* Columns after the varied keys: name, the summary.json member it comes from, and what
 * it is with its unit (sweep.png's axis). New columns go at the end: scripts read the
 * first ones by position. */
static const struct {
  const char *name, *parent, *member, *label;
} metrics_cols[] = {
    {"sim_time_s", NULL, "sim_time_s", "simulated time (s)"},
    {"steps", NULL, "steps", "steps (minibatches, all workers)"},
    {"examples", NULL, "examples", "training examples"},
    {"final_loss", NULL, "final_loss", "final held-out loss"},
    {"final_accuracy", NULL, "final_accuracy", "final held-out accuracy (fraction)"},
    {"time_to_target_s", NULL, "time_to_target_s", "time to the target accuracy (simulated s)"},
    {"status", NULL, "status", "status"},
    {"bytes_total", "comm", "bytes_total", "bytes sent (all messages)"},
    {"hosts_used", NULL, "hosts_used", "hosts used"},
    {"step_time_s", "performance", "step_time_s", "step time (simulated s per step of one worker)"},
    {"examples_per_s", "performance", "examples_per_s", "training examples per simulated s"},
    {"tflops_per_device", "performance", "tflops_per_device", "model Tflop/s per device"},
    {"mfu", "performance", "mfu", "model flop utilisation (fraction of peak)"},
    {"compute_pct", "performance", "compute_pct", "workers' compute (% of simulated time)"},
    {"comm_pct", "performance", "comm_pct", "workers' communication (% of simulated time)"},
    {"exposed_comm_pct", "performance", "exposed_comm_pct", "workers' exposed communication (% of simulated time)"},
};
#define N_METRICS (sizeof(metrics_cols) / sizeof(metrics_cols[0]))

/* One point as the merge sees it: from point.json and summary.json. */
typedef struct point {
  char *dir;
  size_t index; /* 1-based, product order */
  json_t *info; /* point.json */
  json_t *summary;
  json_t *flat; /* summary.json's blocks flattened (point_flatten): "collective.busbw_gbps": value */
} point;

/* sweep.csv's columns after the fixed ones: the flattened block members of every point,
 * in order of first appearance (points in product order, members in summary.json's). */
typedef struct columns {
  const char **names; /* keys of the points' flat objects */
  size_t n;
} columns;

/* ---- files and folders ------------------------------------------------------- */

/* ---- merge: point folders to sweep.csv and sweep.png -------------------------- */

static void point_clear(point *p)
{
  xbt_free(p->dir);
  json_decref(p->info);
  json_decref(p->summary);
  json_decref(p->flat);
}

/* Whether parent.member is one of the fixed columns. */
static int fixed_column(const char *parent, const char *member)
{
  for (size_t m = 0; m < N_METRICS; m++)
    if (metrics_cols[m].parent && strcmp(metrics_cols[m].parent, parent) == 0 &&
        strcmp(metrics_cols[m].member, member) == 0)
      return 1;
  return 0;
}

/* Adds o's members to flat as "prefix.member" (objects recursively, "a.b.c"); arrays (per
 * stage, per bucket, per link) are left out, and so are the fixed columns. */
static void flatten(json_t *flat, const char *prefix, const json_t *o)
{
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)o, key, v)
  {
    char name[512];
    snprintf(name, sizeof(name), "%s.%s", prefix, key);
    if (json_is_object(v))
      flatten(flat, name, v);
    else if (!json_is_array(v) && !fixed_column(prefix, key))
      json_object_set(flat, name, v);
  }
}

/* A point's headline figures beyond the fixed columns, whatever its algorithm: the
 * staleness block, then every block after "status" (performance, the algorithm's own,
 * faults), flattened. The inputs (scenario), the per-role breakdown and the link list
 * stay in summary.json. */
static void point_flatten(point *p)
{
  p->flat = json_object();
  const json_t *st = json_object_get(p->summary, "staleness");
  if (json_is_object(st))
    flatten(p->flat, "staleness", st);
  int after = 0;
  const char *key;
  json_t *v;
  json_object_foreach(p->summary, key, v)
  {
    if (after && json_is_object(v))
      flatten(p->flat, key, v);
    after |= strcmp(key, "status") == 0;
  }
}

/* The union of the points' flattened names, in order of first appearance. */
static void columns_of(const point *ps, size_t n, columns *c)
{
  *c = (columns){0};
  size_t cap = 0;
  for (size_t i = 0; i < n; i++) {
    const char *key;
    json_t *v;
    json_object_foreach(ps[i].flat, key, v)
    {
      size_t j = 0;
      while (j < c->n && strcmp(c->names[j], key) != 0)
        j++;
      if (j < c->n)
        continue;
      if (c->n == cap) {
        cap = 2 * cap + 16;
        c->names = xbt_realloc(c->names, cap * sizeof(char *));
      }
      c->names[c->n++] = key;
    }
  }
}

/* Reads dir/point.json into p (summary.json later). Returns 0, or -1 with a message. */
static int point_load(const char *dir, point *p, char *err, size_t len)
{
  char path[PATHLEN];
  json_error_t je;
  snprintf(path, sizeof(path), "%s/point.json", dir);
  *p = (point){.dir = xbt_strdup(dir)};
  p->info = json_load_file(path, 0, &je);
  if (p->info == NULL) {
    snprintf(err, len, "%s: cannot read: %s", path, je.text);
    return -1;
  }
  json_t *idx = json_object_get(p->info, "index"), *cnt = json_object_get(p->info, "count");
  json_t *vs = json_object_get(p->info, "vary");
  int ok = json_is_integer(idx) && json_is_integer(cnt) && json_is_array(vs) && json_array_size(vs) > 0 &&
           json_integer_value(idx) >= 1 && json_integer_value(idx) <= json_integer_value(cnt);
  for (size_t k = 0; ok && k < json_array_size(vs); k++) {
    json_t *e = json_array_get(vs, k);
    ok = json_is_string(json_object_get(e, "key")) && json_is_string(json_object_get(e, "value"));
  }
  if (!ok) {
    snprintf(err, len, "%s: not a dtsim sweep point (index, count, vary)", path);
    return -1;
  }
  p->index = (size_t)json_integer_value(idx);
  return 0;
}

static const char *point_key(const point *p, size_t k)
{
  return json_string_value(json_object_get(json_array_get(json_object_get(p->info, "vary"), k), "key"));
}

static const char *point_value(const point *p, size_t k)
{
  return json_string_value(json_object_get(json_array_get(json_object_get(p->info, "vary"), k), "value"));
}

static size_t point_nkeys(const point *p)
{
  return json_array_size(json_object_get(p->info, "vary"));
}

static size_t point_count(const point *p)
{
  return (size_t)json_integer_value(json_object_get(p->info, "count"));
}

/* Adds the points of arg (a point folder, or every point folder in a sweep folder's points/) to *ps. */
static int collect(const char *arg, point **ps, size_t *n, size_t *cap, char *err, size_t len)
{
  char path[PATHLEN];
  snprintf(path, sizeof(path), "%s/point.json", arg);
  if (access(path, F_OK) == 0) {
    if (*n == *cap) {
      *cap = *cap * 2 + 16;
      *ps = xbt_realloc(*ps, *cap * sizeof(point));
    }
    return point_load(arg, &(*ps)[(*n)++], err, len);
  }
  snprintf(path, sizeof(path), "%s/points", arg);
  DIR *d = opendir(path);
  if (d == NULL) {
    snprintf(err, len, "--merge %s: neither a sweep folder (no %s/points/) nor a point folder (no point.json)", arg,
             arg);
    return -1;
  }
  int rc = 0;
  for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
    char sub[PATHLEN], info[PATHLEN];
    if (e->d_name[0] == '.')
      continue;
    snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
    snprintf(info, sizeof(info), "%s/point.json", sub);
    if (access(info, F_OK) != 0)
      continue;
    if (*n == *cap) {
      *cap = *cap * 2 + 16;
      *ps = xbt_realloc(*ps, *cap * sizeof(point));
    }
    rc = point_load(sub, &(*ps)[(*n)++], err, len);
  }
  closedir(d);
  return rc;
}

static int by_index(const void *a, const void *b)
{
  size_t x = ((const point *)a)->index, y = ((const point *)b)->index;
  return (x > y) - (x < y);
}

/* Sorts ps by index and checks they are one whole sweep: the same keys, indices 1..count
 * each once; then reads every summary.json. Returns 0, or -1 with a message. */
static int check_points(point *ps, size_t n, char *err, size_t len)
{
  if (n == 0) {
    snprintf(err, len, "--merge: no point folders found");
    return -1;
  }
  qsort(ps, n, sizeof(point), by_index);
  size_t count = point_count(&ps[0]), nk = point_nkeys(&ps[0]);
  for (size_t i = 0; i < n; i++) {
    int same = point_count(&ps[i]) == count && point_nkeys(&ps[i]) == nk;
    for (size_t k = 0; same && k < nk; k++)
      same = strcmp(point_key(&ps[i], k), point_key(&ps[0], k)) == 0;
    if (!same) {
      snprintf(err, len, "--merge: %s and %s are points of different sweeps (keys or point counts differ)", ps[0].dir,
               ps[i].dir);
      return -1;
    }
    if (i > 0 && ps[i].index == ps[i - 1].index) {
      snprintf(err, len, "--merge: point %zu is given twice (%s and %s)", ps[i].index, ps[i - 1].dir, ps[i].dir);
      return -1;
    }
    if (ps[i].index != i + 1) {
      snprintf(err, len, "--merge: point %zu of %zu is missing (give its folder too)", i + 1, count);
      return -1;
    }
  }
  if (n != count) {
    snprintf(err, len, "--merge: point %zu of %zu is missing (give its folder too)", n + 1, count);
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    char path[PATHLEN];
    snprintf(path, sizeof(path), "%s/summary.json", ps[i].dir);
    ps[i].summary = json_load_file(path, 0, NULL);
    if (!json_is_object(ps[i].summary)) {
      snprintf(err, len, "point %s has no result (%s): its run failed or has not run; see %s/run.log", ps[i].dir,
               path, ps[i].dir);
      return -1;
    }
    point_flatten(&ps[i]);
  }
  return 0;
}

static const json_t *metric_of(const point *p, size_t m)
{
  const json_t *o = p->summary;
  if (metrics_cols[m].parent)
    o = json_object_get(o, metrics_cols[m].parent);
  return json_object_get(o, metrics_cols[m].member);
}

/* What sweep.png draws: a fixed column (fixed < N_METRICS) or a flattened one (name). */
typedef struct plot_metric {
  size_t fixed;
  const char *name, *label;
} plot_metric;

static const json_t *plot_value(const point *p, const plot_metric *pm)
{
  return pm->fixed < N_METRICS ? metric_of(p, pm->fixed) : json_object_get(p->flat, pm->name);
}

/* Whether flattened column name holds numbers: no point has a string or a truth value
 * there, and one has a number. */
static int column_numeric(const point *ps, size_t n, const char *name)
{
  int any = 0;
  for (size_t i = 0; i < n; i++) {
    const json_t *v = json_object_get(ps[i].flat, name);
    if (v && !json_is_number(v) && !json_is_null(v))
      return 0;
    any |= json_is_number(v);
  }
  return any;
}

/* Finds --plot-metric name among this sweep's columns: a fixed one, a flattened one by its
 * whole name, or by its end after a dot when one numeric column alone ends so
 * ("busbw_gbps" for "collective.busbw_gbps"). Returns 0, or -1 with a message. */
static int plot_metric_resolve(const char *name, const point *ps, size_t n, const columns *c, plot_metric *pm,
                               char *err, size_t len)
{
  *pm = (plot_metric){.fixed = N_METRICS, .name = name, .label = name};
  if (sweep_metric_find(name, &pm->fixed) == 0) {
    pm->label = metrics_cols[pm->fixed].label;
    return 0;
  }
  size_t found = 0, nl = strlen(name);
  char also[600] = "";
  for (size_t j = 0; j < c->n; j++) {
    const char *col = c->names[j];
    size_t cl = strlen(col);
    int match = strcmp(col, name) == 0 || (cl > nl && col[cl - nl - 1] == '.' && strcmp(col + cl - nl, name) == 0);
    if (!match || !column_numeric(ps, n, col))
      continue;
    if (found++ == 0)
      pm->name = pm->label = col;
    else
      snprintf(also + strlen(also), sizeof(also) - strlen(also), "%s%s", also[0] ? ", " : "", col);
  }
  if (found == 1)
    return 0;
  if (found > 1)
    snprintf(err, len, "--plot-metric %s: names several columns of sweep.csv (%s, %s); give the whole name", name,
             pm->name, also);
  else {
    size_t o = (size_t)snprintf(err, len, "--plot-metric %s: not a numeric column of this sweep.csv (its others:", name);
    for (size_t j = 0; j < c->n && o < len; j++)
      if (column_numeric(ps, n, c->names[j]))
        o += (size_t)snprintf(err + o, len - o, " %s", c->names[j]);
    if (o < len)
      snprintf(err + o, len - o, ")");
  }
  return -1;
}

/* A CSV field: quoted (RFC 4180) when it holds a comma, a quote or a line break. */
static void put_field(FILE *f, const char *s)
{
  if (strpbrk(s, ",\"\r\n") == NULL) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"')
      fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* A summary.json value as a CSV cell: %.17g for reals (round-trip), empty for null. */
static void put_value(FILE *f, const json_t *v)
{
  if (json_is_integer(v))
    fprintf(f, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
  else if (json_is_real(v))
    fprintf(f, "%.17g", json_real_value(v));
  else if (json_is_string(v))
    put_field(f, json_string_value(v));
  else if (json_is_true(v) || json_is_false(v))
    fputs(json_is_true(v) ? "true" : "false", f);
}

static char *sweep_csv(const point *ps, size_t n, const columns *c)
{
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  xbt_assert(f, "open_memstream failed");
  size_t nk = point_nkeys(&ps[0]);
  for (size_t k = 0; k < nk; k++) {
    put_field(f, point_key(&ps[0], k));
    fputc(',', f);
  }
  for (size_t m = 0; m < N_METRICS; m++)
    fprintf(f, "%s%s", metrics_cols[m].name, m + 1 < N_METRICS ? "," : "");
  for (size_t j = 0; j < c->n; j++) {
    fputc(',', f);
    put_field(f, c->names[j]);
  }
  fputc('\n', f);
  for (size_t i = 0; i < n; i++) {
    for (size_t k = 0; k < nk; k++) {
      put_field(f, point_value(&ps[i], k));
      fputc(',', f);
    }
    for (size_t m = 0; m < N_METRICS; m++) {
      put_value(f, metric_of(&ps[i], m));
      if (m + 1 < N_METRICS)
        fputc(',', f);
    }
    for (size_t j = 0; j < c->n; j++) {
      fputc(',', f);
      put_value(f, json_object_get(ps[i].flat, c->names[j]));
    }
    fputc('\n', f);
  }
  fclose(f);
  return text;
}

static int is_number(const char *s, double *x)
{
  char *end;
  errno = 0;
  *x = strtod(s, &end);
  return end != s && *end == '\0' && errno == 0 && isfinite(*x);
}

/* A varied key as an axis label: "sgd.lr", with its unit from the key table when it has
 * one ("downpour.replicas (replicas)"). */
static void key_label(const char *key, char *buf, size_t len)
{
  snprintf(buf, len, "%s", key);
  for (size_t i = 0; i < scenario_key_count(); i++) {
    const char *section, *name, *unit;
    scenario_key_at(NULL, i, &section, &name, NULL, 0, NULL, &unit, NULL);
    size_t sl = strlen(section);
    if (strncmp(key, section, sl) == 0 && key[sl] == '.' && strcmp(key + sl + 1, name) == 0 && unit && *unit &&
        strcmp(unit, "-") != 0)
      snprintf(buf, len, "%s (%s)", key, unit);
  }
}

/* sweep.png's x values and series: the distinct values of the first key (xs[0..nx), numeric
 * when every one is a number, xv then their values), and the combinations of the
 * other keys (ns series, first[s] a point of series s), in product order; xi[i] and si[i]
 * are point i's value and series. */
typedef struct plot_layout {
  const char **xs;
  size_t nx, *xi, *si, ns;
  size_t *first; /* a point of each series */
  int numeric;
  double *xv;
} plot_layout;

static void plot_layout_of(const point *ps, size_t n, size_t nk, plot_layout *pl)
{
  /* distinct values of the first key, and of the other keys' combinations, in order */
  const char **xs = xbt_malloc0(n * sizeof(char *));
  size_t nx = 0, *xi = xbt_malloc0(n * sizeof(size_t)), *si = xbt_malloc0(n * sizeof(size_t)), ns = 0;
  size_t *first = xbt_malloc0(n * sizeof(size_t)); /* a point of each series */
  int numeric = 1;
  double *xv = xbt_malloc0(n * sizeof(double));
  for (size_t i = 0; i < n; i++) {
    const char *x = point_value(&ps[i], 0);
    size_t j = 0;
    while (j < nx && strcmp(xs[j], x) != 0)
      j++;
    if (j == nx) {
      numeric &= is_number(x, &xv[nx]);
      xs[nx++] = x;
    }
    xi[i] = j;
    size_t s = 0;
    for (; s < ns; s++) {
      int same = 1;
      for (size_t k = 1; same && k < nk; k++)
        same = strcmp(point_value(&ps[first[s]], k), point_value(&ps[i], k)) == 0;
      if (same)
        break;
    }
    if (s == ns)
      first[ns++] = i;
    si[i] = s;
  }
  *pl = (plot_layout){.xs = xs, .nx = nx, .xi = xi, .si = si, .ns = ns, .first = first, .numeric = numeric,
                      .xv = xv};
}

/* The script's settings: the terminal and output, the axes' labels, the title, and the x
 * axis's scale or categories. */
static void put_plot_axes(FILE *f, const char *out, const point *ps, size_t n, const plot_metric *pm,
                          const plot_layout *pl)
{
  const char **xs = pl->xs;
  size_t nx = pl->nx;
  int numeric = pl->numeric;
  fputs("set terminal pngcairo size 800,560 noenhanced\nset output ", f);
  char tmp[PATHLEN];
  snprintf(tmp, sizeof(tmp), "%s/.sweep.png.tmp", out);
  plot_put_string(f, tmp);
  fputs("\nset datafile missing '?'\nset key outside right top\nset grid\nset format y '%.4g'\nset xlabel ", f);
  char label[512];
  key_label(point_key(&ps[0], 0), label, sizeof label);
  plot_put_string(f, label);
  fputs("\nset ylabel ", f);
  plot_put_string(f, pm->label);
  /* the column's name only: the y label says what it is, and a longer title is clipped */
  char heading[700];
  snprintf(heading, sizeof heading, "dtsim sweep: %s against %s",
           pm->fixed < N_METRICS ? metrics_cols[pm->fixed].name : pm->name, point_key(&ps[0], 0));
  fputs("\nset title ", f);
  plot_put_string(f, heading);
  fputs("\n", f);
  double *y = xbt_malloc0((n ? n : 1) * sizeof(double));
  size_t ny = 0;
  for (size_t i = 0; i < n; i++)
    if (json_is_number(plot_value(&ps[i], pm)))
      y[ny++] = json_number_value(plot_value(&ps[i], pm));
  if (numeric && sweep_spans_decades(pl->xv, pl->nx))
    fputs("set logscale x\n", f);
  if (sweep_spans_decades(y, ny))
    fputs("set logscale y\n", f);
  xbt_free(y);
  if (!numeric) {
    fputs("set xrange [-0.5:", f);
    fprintf(f, "%zu.5]\nset xtics (", nx - 1);
    for (size_t j = 0; j < nx; j++) {
      plot_put_string(f, xs[j]);
      fprintf(f, " %zu%s", j, j + 1 < nx ? ", " : ")\n");
    }
  }
}

/* The datablocks, one per series, and the plot command that draws them. */
static void put_plot_data(FILE *f, const point *ps, size_t n, size_t nk, const plot_metric *pm, const plot_layout *pl)
{
  const size_t *xi = pl->xi, *si = pl->si, *first = pl->first, ns = pl->ns;
  int numeric = pl->numeric;
  for (size_t s = 0; s < ns; s++) {
    fprintf(f, "$s%zu << EOD\n", s);
    for (size_t i = 0; i < n; i++) {
      if (si[i] != s)
        continue;
      if (numeric)
        fputs(point_value(&ps[i], 0), f);
      else
        fprintf(f, "%zu", xi[i]);
      const json_t *y = plot_value(&ps[i], pm);
      if (json_is_number(y))
        fprintf(f, " %.17g\n", json_number_value(y));
      else
        fputs(" ?\n", f);
    }
    fputs("EOD\n", f);
  }
  fputs("plot ", f);
  for (size_t s = 0; s < ns; s++) {
    fprintf(f, "$s%zu using 1:2 with linespoints pt 7 ", s);
    if (nk == 1)
      fputs("notitle", f);
    else {
      char title[1024];
      size_t o = 0;
      for (size_t k = 1; k < nk && o < sizeof(title); k++)
        o += (size_t)snprintf(title + o, sizeof(title) - o, "%s%s=%s", k > 1 ? ", " : "", point_key(&ps[first[s]], k),
                              point_value(&ps[first[s]], k));
      fputs("title ", f);
      plot_put_string(f, title);
    }
    fputs(s + 1 < ns ? ", \\\n     " : "\n", f);
  }
}

/* sweep.png's script: the data inline (one datablock per combination of the other keys,
 * in product order), the first key's values on x (as numbers, or as categories 0..n-1
 * labelled with the values when one is not a number). */
static char *sweep_plot_script(const char *out, const point *ps, size_t n, const plot_metric *pm)
{
  size_t nk = point_nkeys(&ps[0]);
  plot_layout pl;
  plot_layout_of(ps, n, nk, &pl);
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  xbt_assert(f, "open_memstream failed");
  put_plot_axes(f, out, ps, n, pm, &pl);
  put_plot_data(f, ps, n, nk, pm, &pl);
  fclose(f);
  xbt_free(pl.first);
  xbt_free(pl.si);
  xbt_free(pl.xi);
  xbt_free(pl.xs);
  xbt_free(pl.xv);
  return text;
}

/* Feeds script to gnuplot, which writes out/.sweep.png.tmp, renamed to sweep.png. Its
 * warnings (a one-value axis) are not ours to show; a failure is. Returns 0 or -1. */
static int plot(const char *out, const char *script, char *err, size_t len)
{
  char tmp[PATHLEN], png[PATHLEN];
  snprintf(tmp, sizeof(tmp), "%s/.sweep.png.tmp", out);
  snprintf(png, sizeof(png), "%s/sweep.png", out);
  return plot_gnuplot(script, tmp, png, 0, err, len);
}

/* Writes out/sweep.csv and out/sweep.png from the point folders in dirs (sweep folders
 * or point folders). Returns 0, or 2 with a message in err. */
int sweep_merge(const char *const *dirs, size_t nd, const char *out, const char *metric, int quiet, char *err,
                size_t len)
{
  point *ps = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  for (size_t d = 0; d < nd && rc == 0; d++)
    rc = collect(dirs[d], &ps, &n, &cap, err, len);
  if (rc == 0)
    rc = check_points(ps, n, err, len);
  char outdir[PATHLEN];
  if (rc == 0 && out == NULL) {
    /* the sweep folder holding the first point: OUT/points/NNN-... */
    snprintf(outdir, sizeof(outdir), "%s", ps[0].dir);
    for (int up = 0; up < 2 && rc == 0; up++) {
      size_t l = strlen(outdir);
      while (l > 1 && outdir[l - 1] == '/')
        outdir[--l] = '\0';
      char *slash = strrchr(outdir, '/');
      if (up == 1 && strcmp(slash ? slash + 1 : outdir, "points") != 0) {
        snprintf(err, len, "--merge: %s is not inside a sweep's points/ folder; say where to write with --out",
                 ps[0].dir);
        rc = -1;
      } else if (slash == NULL)
        snprintf(outdir, sizeof(outdir), ".");
      else
        *(slash == outdir ? slash + 1 : slash) = '\0';
    }
    out = outdir;
  }
  columns cols = {0};
  if (rc == 0)
    columns_of(ps, n, &cols);
  if (rc == 0)
    rc = fileio_mkdirs(out, err, len);
  if (rc == 0) {
    char *csv = sweep_csv(ps, n, &cols);
    rc = fileio_write(out, "sweep.csv", csv, strlen(csv), err, len);
    free(csv); /* open_memstream's */
  }
  plot_metric pm;
  if (rc == 0 && plot_metric_resolve(metric, ps, n, &cols, &pm, err, len) != 0) {
    /* only the points' results tell their blocks' columns: sweep.csv stays, the plot waits */
    size_t l = strlen(err);
    snprintf(err + l, len - l, "; %s/sweep.csv is written, draw sweep.png with: dtsim sweep --merge %s --plot-metric "
             "COLUMN", out, out);
    rc = -1;
  }
  if (rc == 0) {
    char *script = sweep_plot_script(out, ps, n, &pm);
    rc = plot(out, script, err, len);
    free(script);
  }
  xbt_free(cols.names);
  if (rc == 0 && !quiet)
    fprintf(stderr, "dtsim sweep: wrote %s/sweep.csv and sweep.png (%zu point%s)\n", out, n, n > 1 ? "s" : "");
  for (size_t i = 0; i < n; i++)
    point_clear(&ps[i]);
  xbt_free(ps);
  return rc == 0 ? 0 : 2;
}

int sweep_spans_decades(const double *v, size_t n)
{
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (!(v[i] > 0) || !isfinite(v[i]))
      return 0;
    lo = fmin(lo, v[i]);
    hi = fmax(hi, v[i]);
  }
  return n > 1 && hi / lo >= 100;
}

int sweep_metric_check(const char *name, char *err, size_t len)
{
  size_t m;
  if (sweep_metric_find(name, &m) == 0)
    return 0;
  /* a block's member: letters, digits, '_' and inner dots; a dotted name starts with a block
   * summary.json can have (staleness, performance, faults, an algorithm's) */
  int ok = strcmp(name, "status") != 0 && name[0] != '\0' && name[0] != '.' && name[strlen(name) - 1] != '.' &&
           strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") == strlen(name) &&
           strstr(name, "..") == NULL;
  const char *dot = strchr(name, '.');
  if (ok && dot) {
    size_t bl = (size_t)(dot - name);
    ok = (bl == 9 && strncmp(name, "staleness", bl) == 0) || (bl == 11 && strncmp(name, "performance", bl) == 0) ||
         (bl == 6 && strncmp(name, "faults", bl) == 0);
    for (size_t a = 0; a < algorithm_count && !ok; a++)
      ok = strlen(algorithm_registry[a]->name) == bl && strncmp(algorithm_registry[a]->name, name, bl) == 0;
  }
  if (!ok)
    snprintf(err, len, "--plot-metric %s: not a numeric column of sweep.csv (a fixed one such as sim_time_s, or a "
             "summary.json block's member such as collective.busbw_gbps or busbw_gbps; try: dtsim sweep --help)", name);
  return ok ? 0 : -1;
}

int sweep_metric_find(const char *name, size_t *m)
{
  for (size_t i = 0; i < N_METRICS; i++)
    if (strcmp(metrics_cols[i].name, name) == 0 && strcmp(name, "status") != 0) {
      *m = i;
      return 0;
    }
  return -1;
}

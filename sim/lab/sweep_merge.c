/* sweep_merge.c - `dtsim sweep`'s results: sweep.csv and sweep.png made from the point
 * folders only (point.json and summary.json), after a direct sweep and by `--merge` alike,
 * so that both give the same bytes. sweep.csv opens with the answer (the varied keys, the
 * plotted metric and its ratio to point 1's) and holds only what the points report. */
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
#include "sim/lab/sweep_metric.h"
#include "sim/lab/sweep_plot.h"

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
  for (size_t m = 0; m < sweep_n_columns; m++)
    if (sweep_columns[m].parent && strcmp(sweep_columns[m].parent, parent) == 0 &&
        strcmp(sweep_columns[m].member, member) == 0)
      return 1;
  return 0;
}

/* Adds o's members to flat as "prefix.member" (objects recursively, "a.b.c"); arrays (per
 * stage, per bucket, per link), nulls (figures a run does not have) and the fixed columns
 * are left out. */
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
    else if (!json_is_array(v) && !json_is_null(v) && !fixed_column(prefix, key))
      json_object_set(flat, name, v);
  }
}

/* A point's headline figures beyond the fixed columns, whatever its algorithm: the
 * staleness block (of an algorithm whose updates can be stale: the others write 0s), then
 * every block after "status" (performance, the algorithm's own, faults), flattened. The
 * inputs (scenario), the per-role breakdown and the link list stay in summary.json. */
static void point_flatten(point *p)
{
  p->flat = json_object();
  const json_t *st = json_object_get(p->summary, "staleness");
  const char *name = json_string_value(json_object_get(p->summary, "algorithm"));
  const algorithm *a = name ? algorithm_find(name) : NULL;
  if (json_is_object(st) && a && algorithm_lists(a->reports, "staleness"))
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
  if (sweep_columns[m].parent)
    o = json_object_get(o, sweep_columns[m].parent);
  return json_object_get(o, sweep_columns[m].member);
}

/* What sweep.csv leads with and sweep.png draws: a fixed column (fixed < sweep_n_columns)
 * or a flattened one (name), and what it is with its unit. */
typedef struct plot_metric {
  size_t fixed;
  const char *name, *label;
  char step_label[160]; /* step_time_s's label, naming the points' step */
} plot_metric;

static const json_t *plot_value(const point *p, const plot_metric *pm)
{
  return pm->fixed < sweep_n_columns ? metric_of(p, pm->fixed) : json_object_get(p->flat, pm->name);
}

/* Whether flattened column name holds numbers: no point has a string or a truth value
 * there, and one has a number. */
static int column_numeric(const point *ps, size_t n, const char *name)
{
  int any = 0;
  for (size_t i = 0; i < n; i++) {
    const json_t *v = json_object_get(ps[i].flat, name);
    if (v && !json_is_number(v))
      return 0;
    any |= json_is_number(v);
  }
  return any;
}

/* Whether some point has a value in fixed column m (status: always). */
static int fixed_present(const point *ps, size_t n, size_t m)
{
  for (size_t i = 0; i < n; i++) {
    const json_t *v = metric_of(&ps[i], m);
    if (v && !json_is_null(v))
      return 1;
  }
  return 0;
}

/* The default metric (sweep_metric_default): the time to the target when some point's
 * scenario sets run.target_accuracy and some point reached it, else the step time. */
static const char *default_metric(const point *ps, size_t n)
{
  int target = 0, reached = 0;
  for (size_t i = 0; i < n; i++) {
    const json_t *run = json_object_get(json_object_get(ps[i].summary, "scenario"), "run");
    const char *t = json_string_value(json_object_get(run, "target_accuracy"));
    target |= t && strtod(t, NULL) > 0;
    reached |= json_is_number(json_object_get(ps[i].summary, "time_to_target_s"));
  }
  return sweep_metric_default(target && reached);
}

/* A refusal listing this sweep's numeric columns, into err after its start `head`. */
static void no_such_metric(const char *head, const point *ps, size_t n, const columns *c, char *err, size_t len)
{
  size_t o = (size_t)snprintf(err, len, "%s (its numeric columns:", head);
  for (size_t m = 0; m < sweep_n_columns && o < len; m++)
    if (strcmp(sweep_columns[m].name, "status") != 0 && fixed_present(ps, n, m))
      o += (size_t)snprintf(err + o, len - o, " %s", sweep_columns[m].name);
  for (size_t j = 0; j < c->n && o < len; j++)
    if (column_numeric(ps, n, c->names[j]))
      o += (size_t)snprintf(err + o, len - o, " %s", c->names[j]);
  if (o < len)
    snprintf(err + o, len - o, ")");
}

/* Finds --plot-metric name (NULL: the default) among this sweep's columns: a fixed one with
 * a value at some point, a flattened one by its whole name, or by its end after a dot when
 * one numeric column alone ends so ("busbw_gbps" for "collective.busbw_gbps"). Returns 0,
 * or -1 with a message. */
static int plot_metric_resolve(const char *name, const point *ps, size_t n, const columns *c, plot_metric *pm,
                               char *err, size_t len)
{
  char head[300];
  name = name ? name : default_metric(ps, n);
  *pm = (plot_metric){.fixed = sweep_n_columns, .name = name, .label = name};
  if (sweep_metric_find(name, &pm->fixed) == 0) {
    pm->label = sweep_columns[pm->fixed].label;
    const char *step = json_string_value(json_object_get(json_object_get(ps[0].summary, "performance"), "step"));
    if (strcmp(name, "step_time_s") == 0 && step) {
      snprintf(pm->step_label, sizeof pm->step_label, "step time (simulated s per %s)", step);
      pm->label = pm->step_label;
    }
    if (fixed_present(ps, n, pm->fixed))
      return 0;
    snprintf(head, sizeof head, "--plot-metric %s: no point of this sweep reports it", name);
    no_such_metric(head, ps, n, c, err, len);
    return -1;
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
    snprintf(head, sizeof head, "--plot-metric %s: not a numeric column of this sweep.csv", name);
    no_such_metric(head, ps, n, c, err, len);
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

/* Significant digits of sweep.csv's reals: what a reader compares points by; each point's
 * summary.json keeps every digit (%.17g). */
#define SWEEP_CSV_DIGITS 6
/* Reals that are whole numbers below this (byte counts, element counts) are written whole. */
#define SWEEP_CSV_WHOLE 1e15

/* A number as sweep.csv writes it: integers whole, reals to SWEEP_CSV_DIGITS significant
 * digits unless they are whole numbers (bytes). */
static void put_number(FILE *f, double x)
{
  if (x == floor(x) && fabs(x) < SWEEP_CSV_WHOLE)
    fprintf(f, "%.0f", x);
  else
    fprintf(f, "%.*g", SWEEP_CSV_DIGITS, x);
}

/* A summary.json value as a CSV cell: numbers by put_number, empty for null or none. */
static void put_value(FILE *f, const json_t *v)
{
  if (json_is_integer(v))
    fprintf(f, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
  else if (json_is_real(v))
    put_number(f, json_real_value(v));
  else if (json_is_string(v))
    put_field(f, json_string_value(v));
  else if (json_is_true(v) || json_is_false(v))
    fputs(json_is_true(v) ? "true" : "false", f);
}

/* sweep.csv's columns after the varied keys: the metric and its ratio (pm NULL: none), then
 * the fixed columns some point has a value in, then the flattened ones, the metric left out
 * where it would come again. Writes the header (row -1) or point row's cells. */
static void put_columns(FILE *f, const point *ps, size_t n, long row, const columns *c, const plot_metric *pm)
{
  int first = 1;
  if (pm) {
    const json_t *v = row >= 0 ? plot_value(&ps[row], pm) : NULL, *b = plot_value(&ps[0], pm);
    if (row < 0)
      fprintf(f, "%s,%s_ratio", pm->name, pm->name);
    else {
      put_value(f, v);
      fputc(',', f);
      if (json_is_number(v) && json_is_number(b) && json_number_value(b) != 0)
        put_number(f, json_number_value(v) / json_number_value(b));
    }
    first = 0;
  }
  for (size_t m = 0; m < sweep_n_columns; m++) {
    if ((pm && pm->fixed == m) || !fixed_present(ps, n, m))
      continue;
    if (!first)
      fputc(',', f);
    first = 0;
    if (row < 0)
      fputs(sweep_columns[m].name, f);
    else
      put_value(f, metric_of(&ps[row], m));
  }
  for (size_t j = 0; j < c->n; j++) {
    if (pm && pm->fixed == sweep_n_columns && strcmp(pm->name, c->names[j]) == 0)
      continue;
    fputc(',', f);
    if (row < 0)
      put_field(f, c->names[j]);
    else
      put_value(f, json_object_get(ps[row].flat, c->names[j]));
  }
}

static char *sweep_csv(const point *ps, size_t n, const columns *c, const plot_metric *pm)
{
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  xbt_assert(f, "open_memstream failed");
  size_t nk = point_nkeys(&ps[0]);
  for (long row = -1; row < (long)n; row++) {
    for (size_t k = 0; k < nk; k++) {
      put_field(f, row < 0 ? point_key(&ps[0], k) : point_value(&ps[row], k));
      fputc(',', f);
    }
    put_columns(f, ps, n, row, c, pm);
    fputc('\n', f);
  }
  fclose(f);
  return text;
}

/* sweep.png from the points and the resolved metric. Returns 0, or -1 with a message. */
static int sweep_draw(const char *out, const point *ps, size_t n, const plot_metric *pm, char *err, size_t len)
{
  size_t nk = point_nkeys(&ps[0]);
  const char **keys = xbt_malloc0(nk * sizeof(char *)), **values = xbt_malloc0(n * nk * sizeof(char *));
  double *y = xbt_malloc0(n * sizeof(double));
  for (size_t k = 0; k < nk; k++)
    keys[k] = point_key(&ps[0], k);
  for (size_t i = 0; i < n; i++) {
    for (size_t k = 0; k < nk; k++)
      values[i * nk + k] = point_value(&ps[i], k);
    const json_t *v = plot_value(&ps[i], pm);
    y[i] = json_is_number(v) ? json_number_value(v) : NAN;
  }
  sweep_plot_data d = {.n = n, .nk = nk, .keys = keys, .values = values, .y = y,
                       .metric = pm->fixed < sweep_n_columns ? sweep_columns[pm->fixed].name : pm->name,
                       .label = pm->label};
  int rc = sweep_plot(out, &d, err, len);
  xbt_free(y);
  xbt_free(values);
  xbt_free(keys);
  return rc;
}

/* The sweep folder holding the first point (OUT/points/NNN-...) into outdir: 0, or -1 with
 * a message. */
static int sweep_folder_of(const point *first, char *outdir, size_t size, char *err, size_t len)
{
  snprintf(outdir, size, "%s", first->dir);
  for (int up = 0; up < 2; up++) {
    size_t l = strlen(outdir);
    while (l > 1 && outdir[l - 1] == '/')
      outdir[--l] = '\0';
    char *slash = strrchr(outdir, '/');
    if (up == 1 && strcmp(slash ? slash + 1 : outdir, "points") != 0) {
      snprintf(err, len, "--merge: %s is not inside a sweep's points/ folder; say where to write with --out",
               first->dir);
      return -1;
    }
    if (slash == NULL)
      snprintf(outdir, size, ".");
    else
      *(slash == outdir ? slash + 1 : slash) = '\0';
  }
  return 0;
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
  if (rc == 0 && out == NULL && (rc = sweep_folder_of(&ps[0], outdir, sizeof outdir, err, len)) == 0)
    out = outdir;
  columns cols = {0};
  plot_metric pm;
  int resolved = 0;
  if (rc == 0) {
    columns_of(ps, n, &cols);
    resolved = plot_metric_resolve(metric, ps, n, &cols, &pm, err, len) == 0;
    rc = fileio_mkdirs(out, err, len);
  }
  if (rc == 0) { /* without a metric: the columns alone, and the plot waits */
    char msg[2000] = "";
    if (!resolved)
      snprintf(msg, sizeof msg, "%s", err);
    char *csv = sweep_csv(ps, n, &cols, resolved ? &pm : NULL);
    rc = fileio_write(out, "sweep.csv", csv, strlen(csv), err, len);
    free(csv); /* open_memstream's */
    if (rc == 0 && !resolved) {
      snprintf(err, len, "%s; %s/sweep.csv is written, draw sweep.png with: dtsim sweep --merge %s --plot-metric "
               "COLUMN", msg, out, out);
      rc = -1;
    }
  }
  if (rc == 0)
    rc = sweep_draw(out, ps, n, &pm, err, len);
  xbt_free(cols.names);
  if (rc == 0 && !quiet)
    fprintf(stderr, "dtsim sweep: wrote %s/sweep.csv and sweep.png (%zu point%s)\n", out, n, n > 1 ? "s" : "");
  for (size_t i = 0; i < n; i++)
    point_clear(&ps[i]);
  xbt_free(ps);
  return rc == 0 ? 0 : 2;
}

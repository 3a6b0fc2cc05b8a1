/* reproduce.c - what the reproductions share (running their simulations as child processes,
 * checking a CSV against the committed one, writing a folder, plots, rank correlation); the
 * command and its table of reproductions are reproduce_cli.c. */
#include "sim/lab/reproduce.h"
#include "sim/fileio.h"
#include "sim/interrupt.h"
#include "sim/plot.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "models/gemm.h"
#include "models/transformer.h"
#include "sim/platform.h"
#include "sim/lab/reproduce_store.h"
#include "sim/lab/spawn.h"

/* Progress and failures of reproduce_run_jobs, as each run ends. */
typedef struct run_ctx {
  const reproduce_opts *o;
  reproduce_job *jobs;
  const size_t *index; /* the k-th job started is jobs[index[k]] */
  json_t **ids;        /* each job's identity, NULL: not kept (--check, or unreadable input) */
  size_t n, done;
  char *err;
  size_t len;
  int failed;
} run_ctx;

static int run_done(void *ctx, size_t k, const spawn_job *sj)
{
  run_ctx *c = ctx;
  size_t i = c->index[k];
  reproduce_job *j = &c->jobs[i];
  char msg[600];
  int ok = sj->status == 0 || (sj->status == 1 && j->may_miss);
  /* kept as soon as it ends, even while a signal stops the rest: a resumed run takes it */
  if (ok && c->ids[i] && !c->o->check && reproduce_store_put(c->o->store, j->dir, c->ids[i], sj->status, msg, sizeof msg) != 0) {
    if (!c->failed)
      snprintf(c->err, c->len, "cannot keep the run of %s: %s", j->label, msg);
    j->failed = c->failed = 1;
    return 1;
  }
  if (interrupt_caught()) /* stopped by a signal: a result of nothing, removed like the rest */
    return 1;
  c->done++;
  if (!ok) {
    if (!c->failed)
      snprintf(c->err, c->len, "the run of %s failed (%s %d; see %s.log)", j->label,
               sj->status > 128 ? "killed by signal" : "exit status", sj->status > 128 ? sj->status - 128 : sj->status,
               j->dir);
    j->failed = c->failed = 1;
    return 1;
  }
  if (!c->o->quiet)
    fprintf(stderr, "dtsim reproduce: %zu/%zu done: %s\n", c->done, c->n, j->label);
  return 0;
}

/* `dtsim run PATH --quiet --out DIR --set S... [cfg...]` into a (ARGS words). */
#define ARGS 48
static void job_argv(const char **a, const char *path, const reproduce_job *j)
{
  int k = 0;
  a[k++] = "dtsim";
  a[k++] = "run";
  a[k++] = path;
  a[k++] = "--quiet";
  a[k++] = "--out";
  a[k++] = j->dir;
  for (int s = 0; s < j->n_sets; s++) {
    a[k++] = "--set";
    a[k++] = j->sets[s];
  }
  for (int g = 0; g < REPRODUCE_CFGS && j->cfg[g]; g++)
    a[k++] = j->cfg[g];
  a[k] = NULL;
}

/* The jobs to run, into index (returned: how many): those the store holds (the same
 * identity: reproduce_store.h) are copied into their folders instead and counted done. */
static size_t jobs_to_run(run_ctx *c, const char *ini, size_t *index)
{
  size_t n_run = 0;
  char msg[600];
  for (size_t i = 0; i < c->n; i++) {
    reproduce_job *j = &c->jobs[i];
    const char *sets[sizeof j->sets / sizeof j->sets[0]];
    for (int s = 0; s < j->n_sets; s++)
      sets[s] = j->sets[s];
    size_t n_cfg = 0;
    while (n_cfg < REPRODUCE_CFGS && j->cfg[n_cfg])
      n_cfg++;
    c->ids[i] = reproduce_store_identity(c->o->work, ini, sets, (size_t)j->n_sets, j->cfg, n_cfg, msg, sizeof msg);
    /* --check takes the store's runs but changes nothing there: the committed grid is checked
     * against the runs committed with it, and the rest run */
    if (c->ids[i] && reproduce_store_take(c->o->store, j->dir, j->may_miss, c->o->check, c->ids[i])) {
      c->done++;
      if (!c->o->quiet)
        fprintf(stderr, "dtsim reproduce: %zu/%zu done: %s (reused)\n", c->done, c->n, j->label);
    } else
      index[n_run++] = i;
  }
  return n_run;
}

int reproduce_run_jobs(const reproduce_opts *o, const char *ini, reproduce_job *jobs, size_t n, char *err, size_t len)
{
  char self[4096], path[700];
  if (spawn_self(self, sizeof(self), err, len) != 0)
    return -1;
  snprintf(path, sizeof(path), "%s/%s", o->work, ini);
  interrupt_parent_catch(); /* a signal while runs are taken back from the store stops them cleanly too */
  size_t *index = xbt_malloc0(n * sizeof(size_t));
  run_ctx c = {.o = o, .jobs = jobs, .index = index, .ids = xbt_malloc0(n * sizeof(json_t *)), .n = n, .err = err,
               .len = len};
  size_t n_run = jobs_to_run(&c, ini, index);
  /* each logged to DIR.log */
  const char **argv = xbt_malloc0(n * ARGS * sizeof(char *));
  char(*logs)[600] = xbt_malloc(n * sizeof(*logs));
  spawn_job *sj = xbt_malloc0(n * sizeof(spawn_job));
  for (size_t k = 0; k < n_run; k++) {
    job_argv(argv + ARGS * k, path, &jobs[index[k]]);
    snprintf(logs[k], sizeof(logs[k]), "%s.log", jobs[index[k]].dir);
    sj[k] = (spawn_job){.argv = argv + ARGS * k, .log = logs[k], .cwd = o->work};
  }
  spawn_run(self, sj, n_run, o->n_par, run_done, &c);
  for (size_t i = 0; i < n; i++)
    json_decref(c.ids[i]);
  xbt_free(c.ids);
  xbt_free(index);
  xbt_free(sj);
  xbt_free(logs);
  xbt_free(argv);
  if (interrupt_caught()) {
    snprintf(err, len, "%s; no results written",
             interrupt_caught() == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)");
    return -1;
  }
  return c.failed ? -1 : 0;
}

json_t *reproduce_result_block(const reproduce_job *j, const char *name, json_t **summary, char *err, size_t len)
{
  char path[700];
  snprintf(path, sizeof(path), "%s/summary.json", j->dir);
  json_t *s = json_load_file(path, 0, NULL), *b = s ? json_object_get(s, name) : NULL;
  if (b == NULL) {
    json_decref(s);
    *summary = NULL;
    snprintf(err, len, "%s: no %s result", path, name);
    return NULL;
  }
  *summary = s;
  return b;
}

int reproduce_pipeline_figures(const reproduce_job *j, double *tflops, double *step_s,
                               void (*more)(void *rv, const json_t *summary, const json_t *block), void *rv,
                               char *err, size_t len)
{
  json_t *s;
  const json_t *b = reproduce_result_block(j, "pipeline", &s, err, len);
  if (b == NULL)
    return -1;
  *tflops = reproduce_number(b, "tflops_per_gpu");
  *step_s = reproduce_number(b, "makespan_s");
  if (more)
    more(rv, s, b);
  json_decref(s);
  return 0;
}

void reproduce_ptdp_layout(reproduce_job *j, const long v[8])
{
  static const char *const keys[] = {"tensor.ranks", "tensor.data_parallel", "tensor.hidden", "tensor.heads",
                                     "tensor.layers", "tensor.microbatch", "pipeline.stages",
                                     "pipeline.microbatches"};
  for (size_t k = 0; k < 8; k++)
    snprintf(j->sets[k], sizeof(j->sets[k]), "%s=%ld", keys[k], v[k]);
  j->n_sets = 8;
}

double reproduce_number(const json_t *o, const char *path)
{
  char key[128];
  while (o && strchr(path, '.')) {
    size_t k = strcspn(path, ".");
    snprintf(key, sizeof key, "%.*s", (int)k, path);
    o = json_object_get(o, key);
    path += k + 1;
  }
  return o ? json_number_value(json_object_get(o, path)) : 0;
}

/* The index of column name in the header line of csv text, or -1. */
static int progress_column(const char *text, const char *name)
{
  size_t n = strlen(name), end = strcspn(text, "\n");
  int col = 0;
  for (size_t i = 0; i < end; col++) {
    size_t w = strcspn(text + i, ",\n");
    if (w == n && strncmp(text + i, name, n) == 0)
      return col;
    i += w + 1;
  }
  return -1;
}

/* Field col (from 0) of the csv line at row as a number, NaN if empty, absent or col < 0. */
static double progress_field(const char *row, int col)
{
  for (int k = 0; col >= 0 && k < col; k++) {
    row += strcspn(row, ",\n");
    if (*row != ',')
      return NAN;
    row++;
  }
  char *end;
  double x = col >= 0 ? strtod(row, &end) : NAN;
  return col >= 0 && end != row ? x : NAN;
}

int reproduce_read_progress(const reproduce_job *j, reproduce_progress *p, char *err, size_t len)
{
  char path[700];
  snprintf(path, sizeof(path), "%s/progress.csv", j->dir);
  memset(p, 0, sizeof(*p));
  char *text = fileio_read(path, NULL);
  if (text == NULL) {
    snprintf(err, len, "%s: no result", path);
    return -1;
  }
  size_t cap = 1;
  for (const char *c = text; *c; c++)
    cap += *c == '\n';
  p->t = xbt_malloc(cap * sizeof(double));
  p->loss = xbt_malloc(cap * sizeof(double));
  p->acc = xbt_malloc(cap * sizeof(double));
  p->step = xbt_malloc(cap * sizeof(long));
  p->has_acc = xbt_malloc(cap);
  p->noise = xbt_malloc(cap * sizeof(double));
  p->lambda = xbt_malloc(cap * sizeof(double));
  int noise_col = progress_column(text, "noise_scale"), lambda_col = progress_column(text, "lambda_max");
  for (const char *c = strchr(text, '\n'); c && c[1]; c = strchr(c + 1, '\n')) {
    double acc = NAN;
    int got = sscanf(c + 1, "%lf,%ld,%lf,%lf", &p->t[p->n], &p->step[p->n], &p->loss[p->n], &acc);
    if (got >= 3) {
      p->noise[p->n] = progress_field(c + 1, noise_col);
      p->lambda[p->n] = progress_field(c + 1, lambda_col);
      p->has_acc[p->n] = got == 4;
      p->acc[p->n++] = got == 4 ? acc : NAN;
    }
  }
  free(text); /* fileio_read's */
  return 0;
}

void reproduce_progress_free(reproduce_progress *p)
{
  xbt_free(p->t);
  xbt_free(p->loss);
  xbt_free(p->acc);
  xbt_free(p->step);
  xbt_free(p->has_acc);
  xbt_free(p->noise);
  xbt_free(p->lambda);
  memset(p, 0, sizeof(*p));
}

int reproduce_gp_block(char *buf, size_t len, const char *name, const double *x, const double *y, size_t n)
{
  size_t k = (size_t)snprintf(buf, len, "$%s << EOD\n", name);
  for (size_t i = 0; i < n; i++)
    if (!isnan(y[i]))
      k += (size_t)snprintf(buf + (k < len ? k : len), k < len ? len - k : 0, "%.17g %.17g\n", x[i], y[i]);
  k += (size_t)snprintf(buf + (k < len ? k : len), k < len ? len - k : 0, "EOD\n");
  return (int)k;
}

int reproduce_plot(const char *dir, const char *name, const char *script, char *err, size_t len)
{
  char tmp[600], png[600];
  snprintf(tmp, sizeof(tmp), "%s/.%s.png.tmp", dir, name);
  snprintf(png, sizeof(png), "%s/%s.png", dir, name);
  return plot_gnuplot(script, tmp, png, 1, err, len);
}

/* Draws fig3.png from dir/fig3.csv: one curve per network present. */
static int same_key(const char *a, const char *b, unsigned key_fields)
{
  for (unsigned f = 0; key_fields >> f; f++) {
    size_t la = strcspn(a, ",\n"), lb = strcspn(b, ",\n");
    if ((key_fields >> f & 1u) && (la != lb || strncmp(a, b, la) != 0))
      return 0;
    if ((key_fields >> (f + 1)) == 0)
      return 1;
    if (a[la] != ',' || b[lb] != ',')
      return 0; /* a key field is missing */
    a += la + 1;
    b += lb + 1;
  }
  return 1;
}

/* The line of text (NUL-terminated, without its newline) whose key fields are those of
 * `row`, or NULL. */
static const char *find_row(const char *text, const char *row, unsigned key_fields)
{
  for (const char *p = text; *p; p += strcspn(p, "\n"), p += *p == '\n')
    if (same_key(p, row, key_fields))
      return p;
  return NULL;
}

int reproduce_check(const char *csv, const char *committed, int subset, unsigned key_fields, char *msg, size_t len)
{
  char *want = fileio_read(committed, NULL);
  if (want == NULL) {
    snprintf(msg, len, "%s: cannot open: %s (nothing committed to check against)", committed, strerror(errno));
    return 2;
  }
  int rc = 0, no = 1;
  const char *p = csv, *w = want;
  for (; *p && rc == 0; no++) {
    size_t got = strcspn(p, "\n");
    const char *row = no == 1 || !subset ? w : find_row(want, p, key_fields);
    size_t exp = row ? strcspn(row, "\n") : 0;
    if (row == NULL || !*row) {
      snprintf(msg, len, "%s: no line for '%.*s'", committed, (int)got, p);
      rc = 1;
    } else if (exp != got || strncmp(row, p, got) != 0) {
      int line = 1;
      for (const char *c = want; c < row; c++)
        line += *c == '\n';
      snprintf(msg, len, "%s line %d: expected '%.*s', got '%.*s'", committed, line, (int)exp, row, (int)got, p);
      rc = 1;
    }
    p += got + (p[got] == '\n');
    if (row && !subset)
      w = row + exp + (row[exp] == '\n');
  }
  if (rc == 0 && !subset && *w) {
    snprintf(msg, len, "%s: this run has fewer lines; the next expected is '%.*s'", committed, (int)strcspn(w, "\n"),
             w);
    rc = 1;
  }
  xbt_free(want);
  return rc;
}

void reproduce_remove_run(const reproduce_job *j)
{
  char path[700];
  if (j->failed)
    return;
  fileio_remove_tree(j->dir);
  snprintf(path, sizeof(path), "%s.log", j->dir);
  unlink(path);
}

int reproduce_write(const char *dir, const char *const *files, size_t n, char *err, size_t len)
{
  if (fileio_mkdirs(dir, err, len) != 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (fileio_write(dir, files[2 * i], files[2 * i + 1], strlen(files[2 * i + 1]), err, len) != 0)
      return -1;
  return 0;
}

/* Dean et al. 2012 Fig. 3 into o->out: 0, 1 (--check mismatch) or 2 with err. */
double reproduce_gemm_share(const char *preset, double efficiency, size_t b, size_t s, size_t h, size_t heads,
                            size_t t)
{
  platform_spec spec;
  xbt_assert(platform_preset(preset, 1, &spec) == 0 && spec.gpu_sms > 0, "%s: no GPU description", preset);
  gemm_device d = {.peak = spec.speed, .sms = spec.gpu_sms, .mem_bw = spec.mem_bw, .l2_bw = spec.gpu_l2_bw,
                   .launch_s = spec.gpu_launch, .efficiency = spec.gpu_gemm_eff, .software = efficiency};
  gemm_device_default_tiles(&d);
  transformer_dims dims = {b, s, h, heads};
  double flops = 0, secs = 0;
  for (int ph = 0; ph < 4; ph++) {
    gemm_shape g[TRANSFORMER_MAX_GEMMS + 1];
    size_t n = transformer_phase_gemms(&dims, t, (transformer_phase)ph, g);
    n += transformer_wgrad_gemm(&dims, t, (transformer_phase)ph, &g[n]);
    double times = ph < 2 ? 2 : 1; /* recomputation runs the forward again */
    for (size_t i = 0; i < n; i++) {
      flops += times * 2 * g[i].m * g[i].n * g[i].k * g[i].batch;
      secs += times * gemm_time(&d, g[i].m, g[i].n, g[i].k, g[i].batch, 2, NULL);
    }
  }
  return flops / secs / d.peak;
}

/* Ranks 1..n of x, ties at their mean rank. */
static void ranks_of(const double *x, size_t n, double *r)
{
  for (size_t i = 0; i < n; i++) {
    size_t below = 0, equal = 0;
    for (size_t j = 0; j < n; j++) {
      below += x[j] < x[i];
      equal += x[j] == x[i];
    }
    r[i] = (double)below + ((double)equal + 1) / 2;
  }
}

double reproduce_spearman(const double *x, const double *y, size_t n)
{
  double *rx = xbt_malloc(n * sizeof(double)), *ry = xbt_malloc(n * sizeof(double));
  ranks_of(x, n, rx);
  ranks_of(y, n, ry);
  double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; i++) {
    mx += rx[i] / (double)n;
    my += ry[i] / (double)n;
  }
  for (size_t i = 0; i < n; i++) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  xbt_free(rx);
  xbt_free(ry);
  return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : 0;
}

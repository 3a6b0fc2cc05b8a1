/* reproduce_compression.c - `dtsim reproduce compression`: synchronous data parallelism with
 * compressed gradients (algorithms/doc/compression.md) against the dense allreduce, the same
 * real model and data (UCI's handwritten digits, results/compression/digits.csv) on three
 * networks: google-2004 (1 GbE), distbelief-2012 (10 GbE) and distbelief-2012 with every link at
 * ten times its bandwidth (100 Gb/s). Bytes per step, accuracy and simulated time to a target
 * set by the dense run. One simulation per process. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "sim/fileio.h"
#include "sim/lab/reproduce.h"
#include "sim/lab/reproduce_frame.h"
#include "sim/lab/template.h"

/* The data set the scenario names, from dtsim's source tree; the reproduction copies it beside
 * the scenario (work/ for the runs, the output folder for a reader). */
#define COMP_DATA "digits.csv"
#define COMP_DATA_SRC DTSIM_SOURCE_DIR "/results/compression/" COMP_DATA
#define COMP_STEPS "200"
/* The target: the dense run's final held-out accuracy less one point. */
#define COMP_TARGET_MARGIN 0.01

static const char comp_ini[] =
    "; dtsim reproduce compression: dense against compressed gradients (algorithms/doc/compression.md),\n"
    "; 8 replicas of a 64-512-512-10 MLP on UCI's handwritten digits. Each run sets the platform\n"
    "; (platform.preset, platform.bw_factor) and the method (dataparallel.compress*).\n"
    "[run]\n"
    "algorithm = dataparallel\n"
    "max_steps = " COMP_STEPS "           ; every run, dense or compressed, the same steps\n"
    "eval_every = 0.02          ; simulated s between evaluations: time_to_target_s's resolution\n"
    "max_sim_time = 100         ; no run stops on the clock: each ends after its steps\n"
    "[platform]\n"
    "preset = google-2004       ; 1 GbE; distbelief-2012 10 GbE; bw_factor = 10 on it: 100 Gb/s\n"
    "hosts = 8                  ; one replica a host, one rack\n"
    "[model]\n"
    "type = mlp\n"
    "layers = 64,512,512,10     ; 301,066 parameters: a 1,204,264-byte fp32 gradient\n"
    "activation = relu\n"
    "dtype = fp32\n"
    "[data]\n"
    "source = csv:" COMP_DATA "   ; 1,797 8x8 images, pixels 0-16, 10 classes (README.md: provenance)\n"
    "test_fraction = 0.2        ; 360 held out, 1,437 to train\n"
    "[dataparallel]\n"
    "replicas = 8\n"
    "batch = 32                 ; per replica: 256 examples a step\n"
    "lr = 0.01                  ; README.md: why not 0.05\n"
    "bucket_mb = 0              ; one bucket, the whole model\n";

typedef struct comp_method {
  const char *method, *setting; /* CSV's method and setting */
  const char *sets[2];          /* what the run sets, NULL-ended */
  int quick;
  const char *style; /* gnuplot line style */
} comp_method;

static const comp_method comp_methods[] = {
    {"dense", "-", {NULL, NULL}, 1, "lw 3 lc rgb 'black'"},
    {"dense", "halving-doubling", {"dataparallel.collective=halving-doubling", NULL}, 0, "lw 3 dt 2 lc rgb 'black'"},
    {"topk", "ratio=0.01", {"dataparallel.compress=topk", "dataparallel.compress_ratio=0.01"}, 1,
     "lw 2 lc rgb '#ee6677'"},
    {"topk", "ratio=0.005", {"dataparallel.compress=topk", "dataparallel.compress_ratio=0.005"}, 0,
     "lw 2 dt 3 lc rgb '#ee6677'"},
    {"topk", "ratio=0.001", {"dataparallel.compress=topk", "dataparallel.compress_ratio=0.001"}, 1,
     "lw 2 dt 2 lc rgb '#ee6677'"},
    {"onebit", "-", {"dataparallel.compress=onebit", NULL}, 0, "lw 2 lc rgb '#228833'"},
    {"qsgd", "levels=15", {"dataparallel.compress=qsgd", "dataparallel.compress_levels=15"}, 0,
     "lw 2 dt 2 lc rgb '#ccbb44'"},
    {"qsgd", "levels=127", {"dataparallel.compress=qsgd", "dataparallel.compress_levels=127"}, 0,
     "lw 2 lc rgb '#ccbb44'"},
    {"powersgd", "rank=1", {"dataparallel.compress=powersgd", "dataparallel.compress_rank=1"}, 0,
     "lw 2 dt 2 lc rgb '#4477aa'"},
    {"powersgd", "rank=4", {"dataparallel.compress=powersgd", "dataparallel.compress_rank=4"}, 0,
     "lw 2 lc rgb '#4477aa'"},
};
#define COMP_METHODS (sizeof comp_methods / sizeof comp_methods[0])

typedef struct comp_platform {
  const char *name, *preset, *bw_factor, *network;
  int quick;
} comp_platform;

static const comp_platform comp_platforms[] = {
    {"google-2004", "google-2004", "1", "1 GbE", 1},
    {"distbelief-2012", "distbelief-2012", "1", "10 GbE", 0},
    {"distbelief-2012-100g", "distbelief-2012", "10", "100 Gb/s", 0},
};
#define COMP_PLATFORMS (sizeof comp_platforms / sizeof comp_platforms[0])
#define COMP_MAX_RUNS (COMP_METHODS * COMP_PLATFORMS)

typedef struct comp_run {
  const comp_method *m;
  const comp_platform *p;
  double bytes, dense_bytes, net_bytes, step_s, compute_s, accuracy, target, t_target;
  long steps, s_target;
  reproduce_progress ev; /* progress.csv's evaluations */
} comp_run;

static size_t comp_grid(int quick, void *rv, reproduce_job *jobs, const char *work)
{
  comp_run *runs = rv;
  size_t n = 0;
  for (size_t p = 0; p < COMP_PLATFORMS; p++)
    for (size_t m = 0; m < COMP_METHODS; m++) {
      const comp_platform *pl = &comp_platforms[p];
      const comp_method *me = &comp_methods[m];
      if (quick && !(pl->quick && me->quick))
        continue;
      memset(&runs[n], 0, sizeof(runs[n]));
      runs[n].m = me;
      runs[n].p = pl;
      reproduce_job *jb = &jobs[n];
      memset(jb, 0, sizeof(*jb));
      snprintf(jb->label, sizeof(jb->label), "%s %s on %s", me->method, me->setting, pl->name);
      snprintf(jb->sets[jb->n_sets++], sizeof(jb->sets[0]), "platform.preset=%s", pl->preset);
      snprintf(jb->sets[jb->n_sets++], sizeof(jb->sets[0]), "platform.bw_factor=%s", pl->bw_factor);
      for (size_t k = 0; k < 2 && me->sets[k]; k++)
        snprintf(jb->sets[jb->n_sets++], sizeof(jb->sets[0]), "%s", me->sets[k]);
      jb->may_miss = 1; /* a method that diverges is a result */
      snprintf(jb->dir, sizeof(jb->dir), "%s/%s-%s-%s", work, pl->name, me->method, me->setting);
      n++;
    }
  return n;
}

static int comp_read(void *rv, const reproduce_job *j, char *err, size_t len)
{
  comp_run *r = rv;
  json_t *s, *b = reproduce_result_block(j, "dataparallel", &s, err, len);
  if (b == NULL)
    return -1;
  r->steps = (long)json_number_value(json_object_get(s, "steps"));
  r->accuracy = json_is_number(json_object_get(s, "final_accuracy"))
                    ? json_number_value(json_object_get(s, "final_accuracy"))
                    : NAN;
  double elements = 0;
  size_t i;
  json_t *e;
  json_array_foreach(json_object_get(b, "bucket_elements"), i, e) elements += json_number_value(e);
  r->dense_bytes = 4 * elements; /* fp32 */
  json_t *bytes = json_object_get(b, "bytes_per_step");
  r->bytes = bytes ? json_number_value(bytes) : r->dense_bytes;
  json_t *bd = json_object_get(s, "breakdown");
  double replicas = json_number_value(json_object_get(json_object_get(bd, "dp-replica"), "actors"));
  double steps = r->steps > 0 ? (double)r->steps : 1;
  r->net_bytes = json_number_value(json_object_get(json_object_get(s, "comm"), "bytes_total")) /
                 (steps * (replicas > 0 ? replicas : 1));
  r->step_s = json_number_value(json_object_get(s, "sim_time_s")) / steps;
  r->compute_s = json_number_value(json_object_get(json_object_get(bd, "dp-comm"), "compute_s")) / steps;
  json_decref(s);
  /* a diverged evaluation's nan reads as a number too */
  return reproduce_read_progress(j, &r->ev, err, len);
}

static void comp_free_run(void *rv)
{
  comp_run *r = rv;
  reproduce_progress_free(&r->ev);
}

static const comp_run *comp_find(const comp_run *runs, size_t n, const char *platform, const char *method,
                                 const char *setting)
{
  for (size_t k = 0; k < n; k++)
    if (strcmp(runs[k].p->name, platform) == 0 && strcmp(runs[k].m->method, method) == 0 &&
        strcmp(runs[k].m->setting, setting) == 0)
      return &runs[k];
  return NULL;
}

/* Each platform's target is its dense run's final accuracy less COMP_TARGET_MARGIN; each run's
 * time and step to it are those of its first evaluation at or above it (NaN, -1: never). */
static void comp_targets(reproduce_data *d)
{
  comp_run *runs = d->runs[0];
  size_t n = d->n[0];
  for (size_t k = 0; k < n; k++) {
    comp_run *r = &runs[k];
    r->target = NAN;
    const comp_run *dense = comp_find(runs, n, r->p->name, "dense", "-");
    if (dense)
      r->target = dense->accuracy - COMP_TARGET_MARGIN;
    r->t_target = NAN;
    r->s_target = -1;
    for (size_t q = 0; q < r->ev.n; q++)
      if (r->ev.acc[q] >= r->target) {
        r->t_target = r->ev.t[q];
        r->s_target = r->ev.step[q];
        break;
      }
  }
}

/* A number as %.17g, or an empty cell for NaN. */
static void csv_num(FILE *f, double x, const char *sep)
{
  if (isnan(x))
    fprintf(f, "%s", sep);
  else
    fprintf(f, "%.17g%s", x, sep);
}

static char *comp_csv(const reproduce_data *d)
{
  const comp_run *runs = d->runs[0];
  size_t n = d->n[0];
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  /* the contract's columns first (method,platform,ratio,bytes_per_step,final_accuracy,
   * time_to_target_s), then what else a run is read by */
  fputs("method,platform,ratio,bytes_per_step,final_accuracy,time_to_target_s,setting,network_bytes_per_step,"
        "step_time_s,compress_compute_s,target_accuracy,steps_to_target\n",
        f);
  for (size_t k = 0; k < n; k++) {
    const comp_run *r = &runs[k];
    fprintf(f, "%s,%s,", r->m->method, r->p->name);
    csv_num(f, r->dense_bytes / r->bytes, ",");
    csv_num(f, r->bytes, ",");
    csv_num(f, r->accuracy, ",");
    csv_num(f, r->t_target, ",");
    fprintf(f, "%s,", r->m->setting);
    csv_num(f, r->net_bytes, ",");
    csv_num(f, r->step_s, ",");
    csv_num(f, r->compute_s, ",");
    csv_num(f, r->target, ",");
    if (r->s_target >= 0)
      fprintf(f, "%ld\n", r->s_target);
    else
      fputs("\n", f);
  }
  fclose(f);
  return text;
}

/* Accuracy against simulated time, one panel per platform, one line per method. */
static void comp_plot(json_t *v, const char *plot, const reproduce_data *d)
{
  (void)plot;
  const comp_run *runs = d->runs[0];
  size_t n = d->n[0];
  char *text;
  size_t tl, panels = 0;
  for (size_t p = 0; p < COMP_PLATFORMS; p++)
    for (size_t k = 0; k < n; k++)
      if (runs[k].p == &comp_platforms[p]) {
        panels++;
        break;
      }
  template_set(v, "width", "%zu", 250 + 450 * panels);
  template_set(v, "panels", "%zu", panels);
  template_set(v, "steps", "%s", COMP_STEPS);
  FILE *f = reproduce_frame_stream(&text, &tl);
  for (size_t k = 0; k < n; k++) {
    fprintf(f, "$r%zu << EOD\n", k);
    for (size_t q = 0; q < runs[k].ev.n; q++)
      if (!isnan(runs[k].ev.acc[q]) && runs[k].ev.t[q] > 0)
        fprintf(f, "%.9g %.6f\n", runs[k].ev.t[q], runs[k].ev.acc[q]);
    fputs("EOD\n", f);
  }
  template_set_stream(v, "blocks", f, &text);
  template_list(v, "panel");
  for (size_t p = 0; p < COMP_PLATFORMS; p++) {
    const comp_platform *pl = &comp_platforms[p];
    json_t *it = NULL;
    for (size_t k = 0; k < n; k++) {
      const comp_run *r = &runs[k];
      if (r->p != pl)
        continue;
      if (it == NULL) {
        it = template_add(v, "panel");
        template_set(it, "name", "%s", pl->name);
        template_set(it, "network", "%s", pl->network);
        json_object_set_new(it, "last", json_boolean(json_array_size(json_object_get(v, "panel")) == panels));
        template_set(it, "target", "%.6f", r->target);
        template_list(it, "lines");
      }
      json_t *line = template_add(it, "lines");
      template_set(line, "k", "%zu", k);
      template_set(line, "style", "%s", r->m->style);
      template_set(line, "method", "%s", r->m->method);
      template_set(line, "setting", "%s", strcmp(r->m->setting, "-") ? r->m->setting : "");
    }
  }
}

/* "method setting" for prose. */
static void comp_name(char *buf, size_t len, const comp_run *r)
{
  snprintf(buf, len, "%s%s%s", r->m->method, strcmp(r->m->setting, "-") ? " " : "",
           strcmp(r->m->setting, "-") ? r->m->setting : "");
}

static void comp_row(FILE *f, const comp_run *r)
{
  char tt[48] = "never", name[64];
  if (!isnan(r->t_target))
    snprintf(tt, sizeof tt, "%.2f (%ld)", r->t_target, r->s_target);
  comp_name(name, sizeof name, r);
  fprintf(f, "| %s | %s | %.1fx | %.0f | %.0f | %.2f | %.1f | %.4f | %s |\n", r->p->name, name,
          r->dense_bytes / r->bytes, r->bytes, r->net_bytes, 1e3 * r->step_s, 1e6 * r->compute_s, r->accuracy, tt);
}

/* A platform's items: its dense runs, the first compressed run at the target (best), and the
 * issue's test: a compressed run within a point of dense (at the target), with at least 50x
 * fewer bytes per step, there sooner than the ring's dense run (met: the first such). */
static void comp_platform_items(json_t *it, const comp_run *runs, size_t n, const comp_platform *pl)
{
  const comp_run *dense = comp_find(runs, n, pl->name, "dense", "-");
  const comp_run *hd = comp_find(runs, n, pl->name, "dense", "halving-doubling");
  const comp_run *best = NULL, *met = NULL;
  for (size_t k = 0; k < n; k++) {
    const comp_run *r = &runs[k];
    if (r->p != pl || strcmp(r->m->method, "dense") == 0 || isnan(r->t_target))
      continue;
    if (best == NULL || r->t_target < best->t_target)
      best = r;
    if (r->dense_bytes / r->bytes >= 50 && r->t_target < dense->t_target && (met == NULL || r->t_target < met->t_target))
      met = r;
  }
  char name[64];
  template_set(it, "name", "%s", pl->name);
  template_set(it, "network", "%s", pl->network);
  template_set(it, "dense_t", "%.2f", dense->t_target);
  template_set(it, "dense_step_ms", "%.2f", 1e3 * dense->step_s);
  template_set(it, "target", "%.4f", dense->target);
  json_object_set_new(it, "hd", json_boolean(hd != NULL));
  template_set(it, "hd_t", "%.2f", hd ? hd->t_target : NAN);
  template_set(it, "hd_step_ms", "%.2f", hd ? 1e3 * hd->step_s : NAN);
  json_object_set_new(it, "best_any", json_boolean(best != NULL));
  comp_name(name, sizeof name, best ? best : dense);
  template_set(it, "best", "%s", name);
  template_set(it, "best_t", "%.2f", best ? best->t_target : NAN);
  template_set(it, "best_step_ms", "%.2f", best ? 1e3 * best->step_s : NAN);
  template_set(it, "best_speedup", "%.2f", best ? dense->t_target / best->t_target : NAN);
  template_set(it, "best_ratio", "%.0f", best ? best->dense_bytes / best->bytes : NAN);
  json_object_set_new(it, "beats_hd", json_boolean(best && (hd == NULL || best->t_target < hd->t_target)));
  json_object_set_new(it, "met", json_boolean(met != NULL));
  comp_name(name, sizeof name, met ? met : dense);
  template_set(it, "met_name", "%s", name);
  template_set(it, "met_ratio", "%.0f", met ? met->dense_bytes / met->bytes : NAN);
  template_set(it, "met_speedup", "%.2f", met ? dense->t_target / met->t_target : NAN);
  template_set(it, "met_acc", "%.4f", met ? met->accuracy : NAN);
}

/* The table (one row per run) and one item per platform run. */
static void comp_rows(json_t *v, const comp_run *runs, size_t n)
{
  char *text = NULL;
  size_t tl = 0;
  FILE *f = open_memstream(&text, &tl);
  xbt_assert(f, "open_memstream failed");
  template_list(v, "platforms");
  for (size_t p = 0; p < COMP_PLATFORMS; p++) {
    const comp_platform *pl = &comp_platforms[p];
    if (comp_find(runs, n, pl->name, "dense", "-") == NULL)
      continue;
    for (size_t k = 0; k < n; k++)
      if (runs[k].p == pl)
        comp_row(f, &runs[k]);
    comp_platform_items(template_add(v, "platforms"), runs, n, pl);
  }
  template_set_stream(v, "rows", f, &text);
}

/* DGC's claim against the 0.1% top-k run on the first network (the numerics are the same on
 * every network): its ratio, its final accuracy against dense's, its network bytes. */
static void comp_dgc(json_t *v, const comp_run *runs, size_t n)
{
  const char *pl = comp_platforms[0].name;
  const comp_run *d = comp_find(runs, n, pl, "dense", "-"), *k = comp_find(runs, n, pl, "topk", "ratio=0.001");
  template_set(v, "dense_acc", "%.4f", d ? d->accuracy : NAN);
  template_set(v, "k_ratio", "%.0f", k ? k->dense_bytes / k->bytes : NAN);
  template_set(v, "k_acc", "%.4f", k ? k->accuracy : NAN);
  template_set(v, "k_diff", "%+.2f", k && d ? 100 * (k->accuracy - d->accuracy) : NAN);
  template_set(v, "k_net_ratio", "%.0f", k && d ? d->net_bytes / k->net_bytes : NAN);
}

static int comp_readme(json_t *v, const reproduce_data *d, char *err, size_t len)
{
  (void)err, (void)len;
  template_set(v, "steps", "%s", COMP_STEPS);
  template_set(v, "margin", "%.0f", 100 * COMP_TARGET_MARGIN);
  comp_rows(v, d->runs[0], d->n[0]);
  comp_dgc(v, d->runs[0], d->n[0]);
  return 0;
}

const reproduction reproduce_compression = {
    .name = "compression",
    .grids = {{"compression.ini", comp_ini, sizeof(comp_run), COMP_MAX_RUNS, comp_grid, comp_read, comp_free_run}},
    .tables = {{"compression.csv", 0x43u, comp_csv}}, /* key: method,platform,setting */
    .derive = comp_targets,
    .readme = comp_readme,
    .plots = {"compression"},
    .plot = comp_plot,
    .inputs = {COMP_DATA_SRC}, /* the runs' data set, kept beside the results */
};

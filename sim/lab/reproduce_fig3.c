/* reproduce_fig3.c - `dtsim reproduce fig3`: Dean et al. 2012, Fig. 3, the speed-up of one
 * model replica split over 1 to 144 machines, for the speech net and three image nets. */
#include "sim/lab/reproduce.h"
#include "sim/lab/reproduce_frame.h"
#include "sim/fileio.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xbt/sysdep.h>

#include "models/arch.h"
#include "sim/lab/template.h"

/* Dean et al. 2012, Fig. 3: mean time per minibatch of plain SGD on one model replica
 * split over 1..144 machines. One platform and cost calibration for all four nets:
 * the differences must come from the networks' structure. The two fitted constants,
 * efficiency and msg_overhead, are fitted to the speech net's curve, which is therefore
 * not scored; the image nets are (the rules in templates/fig3.md). */
#define FIG3_EFFICIENCY "0.25"
#define FIG3_OVERHEAD "0.0000733"
/* Not fitted: a TCP stack's per-byte work by the rule of thumb of 1 GHz of CPU per 1 Gbit/s,
 * 8 cycles a byte at the preset's 2.6 GHz (the rule Foong et al., "TCP performance
 * re-visited", ISPASS 2003, measure Linux 2.4 against; templates/fig3.md). */
#define FIG3_BYTE_OVERHEAD "3.08e-9"
/* Dean'12 sec. 3: machines wait for "the single slowest machine to finish a given phase":
 * a fresh draw per machine and phase (platform.jitter), not a speed fixed for the run. */
#define FIG3_JITTER "0.1"
/* Where the per-message work runs: on each machine's network thread, beside the cores that
 * compute (platform.msg_thread, templates/fig3.md). On the machine's 16 cores instead the
 * speech curve is fastest at 16 machines whatever the message's cost, so its two facts
 * cannot be fitted; the robustness table has those runs and the computing core's. */
#define FIG3_MSG_THREAD "on"
#define FIG3_BATCH "32"
#define FIG3_STEPS "3"
/* SimGrid's max-min solver re-solved in full at every event: on the image nets' thousands
 * of concurrent all-to-all flows it runs about twice as fast as the default lazy update,
 * with simulated times equal to about 1e-6 relative (measured on image-1.7b, 81 machines). */
#define FIG3_SOLVER "--cfg=network/optim:Full"

static const char fig3_ini[] =
    "; dtsim reproduce fig3: Dean et al. 2012, Fig. 3 (machines per model replica).\n"
    "; Each run: one replica of model.virtual split over sgd.partitions machines,\n"
    "; timing only, plain SGD, run.max_steps minibatches; step time = sim_time / steps.\n"
    "[run]\n"
    "algorithm = sgd\n"
    "max_steps = " FIG3_STEPS "\n"
    "eval_every = 1e9\n"
    "max_sim_time = 1e9\n"
    "[model]\n"
    "numerics = off\n"
    "virtual = speech-42m     ; set per run\n"
    "efficiency = " FIG3_EFFICIENCY "        ; fitted to the speech curve (README): fraction of a core's peak\n"
    "[platform]\n"
    "preset = distbelief-2012\n"
    "msg_overhead = " FIG3_OVERHEAD "  ; fitted to the speech curve: s of CPU per message sent or received\n"
    "msg_byte_overhead = " FIG3_BYTE_OVERHEAD " ; and per byte: 1 Hz of CPU per bit/s at 2.6 GHz (not fitted)\n"
    "msg_thread = " FIG3_MSG_THREAD "         ; that work on each machine's network thread, beside the compute\n"
    "jitter = " FIG3_JITTER "            ; each machine's time per phase spread by 10%, drawn afresh (assumed)\n"
    "[sgd]\n"
    "batch = " FIG3_BATCH "\n"
    "partitions = 1           ; set per run\n";

static const char *const fig3_models[] = {"speech-42m", "image-80m", "image-330m", "image-1.7b"};
static const size_t fig3_machines[] = {1, 2, 4, 8, 16, 32, 64, 81, 128, 144};
static const size_t fig3_quick_machines[] = {1, 2, 4, 8, 16};
/* The robustness runs: image-1.7b at fig3_robust_machines with one assumption changed. */
static const struct {
  const char *name;
  const char *sets[3];
} fig3_variants[] = {
    {"no per-machine variance", {"platform.jitter=0", NULL}},
    {"speeds spread once per machine for the run (an earlier rule)", {"platform.jitter=0", "platform.speed_spread=0.1"}},
    {"links at twice the bandwidth", {"platform.bw_factor=2", NULL}},
    {"calibration end: efficiency 0.2, 0.136 ms", {"model.efficiency=0.2", "platform.msg_overhead=0.000136"}},
    {"calibration end: efficiency 0.28, 0.0365 ms", {"model.efficiency=0.28", "platform.msg_overhead=0.0000365"}},
    {"no per-byte work, 0.245 ms a message (the previous rule)",
     {"platform.msg_byte_overhead=0", "platform.msg_overhead=0.000245"}},
    {"per-message work on the computing core, no network thread (an earlier rule)", {"platform.msg_thread=off"}},
    {"per-message work on the machine's 16 cores", {"platform.msg_thread=off", "platform.msg_cores=16"}},
    {"16 message cores at 0.78 ms (speech 2.2x at 8, fastest at 16)",
     {"platform.msg_thread=off", "platform.msg_cores=16", "platform.msg_overhead=0.00078"}},
};
static const size_t fig3_robust_machines[] = {1, 64, 144};

typedef struct job {
  const char *model;
  size_t machines;
  double step_time;
  const char *variant; /* fig3's robustness runs: the assumption changed; NULL in the main grid */
} job;


static int read_step_time(void *rv, const reproduce_job *run, char *err, size_t len)
{
  job *j = rv;
  char path[600];
  snprintf(path, sizeof(path), "%s/summary.json", run->dir);
  json_t *s = json_load_file(path, 0, NULL);
  double t = reproduce_number(s, "sim_time_s"), steps = reproduce_number(s, "steps");
  json_decref(s);
  if (steps <= 0) {
    snprintf(err, len, "%s: no result", path);
    return -1;
  }
  j->step_time = t / steps;
  return 0;
}

static double speedup_at(const job *jobs, size_t n, const char *model, size_t machines);
static double variant_speedup(const job *jobs, size_t n, const char *model, const char *variant, size_t machines);

/* fig3.csv: model,machines,step_time_s,speedup (speed-up over 1 machine). */
static char *fig3_csv(const reproduce_data *d)
{
  const job *jobs = d->runs[0];
  size_t n = d->n[0];
  size_t cap = 256 + n * 128, len = 0;
  char *s = xbt_malloc(cap);
  len += (size_t)snprintf(s + len, cap - len, "model,machines,step_time_s,speedup\n");
  for (size_t i = 0; i < n; i++)
    if (jobs[i].variant == NULL)
      len += (size_t)snprintf(s + len, cap - len, "%s,%zu,%.17g,%.17g\n", jobs[i].model, jobs[i].machines,
                              jobs[i].step_time, speedup_at(jobs, n, jobs[i].model, jobs[i].machines));
  return s;
}

/* fig3_robustness.csv: variant,model,machines,step_time_s,speedup, the committed assumptions
 * first (the main grid's image-1.7b points at the same counts), then each variant. */
static char *fig3_robust_csv(const reproduce_data *d)
{
  const job *jobs = d->runs[0];
  size_t n = d->n[0];
  if (d->o->quick)
    return NULL; /* no robustness runs */
  size_t cap = 256 + n * 192, len = 0;
  char *s = xbt_malloc(cap);
  len += (size_t)snprintf(s + len, cap - len, "variant,model,machines,step_time_s,speedup\n");
  for (size_t v = 0; v <= sizeof(fig3_variants) / sizeof(fig3_variants[0]); v++)
    for (size_t i = 0; i < n; i++) {
      const char *name = v == 0 ? NULL : fig3_variants[v - 1].name;
      int here = name ? jobs[i].variant && strcmp(jobs[i].variant, name) == 0 : jobs[i].variant == NULL;
      int counted = 0;
      for (size_t c = 0; c < sizeof(fig3_robust_machines) / sizeof(size_t); c++)
        counted |= jobs[i].machines == fig3_robust_machines[c];
      if (!here || !counted || strcmp(jobs[i].model, "image-1.7b") != 0)
        continue;
      len += (size_t)snprintf(s + len, cap - len, "%s,%s,%zu,%.17g,%.17g\n", name ? name : "as committed",
                              jobs[i].model, jobs[i].machines, jobs[i].step_time,
                              variant_speedup(jobs, n, jobs[i].model, name, jobs[i].machines));
    }
  return s;
}

/* Speed-up of model on `machines` machines (step time on 1 over step time on it), or
 * -1 if that point was not run. */
static double variant_speedup(const job *jobs, size_t n, const char *model, const char *variant, size_t machines)
{
  double t1 = 0, tp = 0;
  for (size_t k = 0; k < n; k++)
    if (strcmp(jobs[k].model, model) == 0 && (jobs[k].variant == variant ||
                                              (jobs[k].variant && variant && strcmp(jobs[k].variant, variant) == 0))) {
      if (jobs[k].machines == 1)
        t1 = jobs[k].step_time;
      if (jobs[k].machines == machines)
        tp = jobs[k].step_time;
    }
  return t1 > 0 && tp > 0 ? t1 / tp : -1;
}

static double speedup_at(const job *jobs, size_t n, const char *model, size_t machines)
{
  return variant_speedup(jobs, n, model, NULL, machines);
}

/* The machine count of model's largest speed-up. */
static size_t peak_of(const job *jobs, size_t n, const char *model, double *peak)
{
  size_t at = 0;
  *peak = 0;
  for (size_t k = 0; k < n; k++)
    if (strcmp(jobs[k].model, model) == 0 && speedup_at(jobs, n, model, jobs[k].machines) > *peak) {
      *peak = speedup_at(jobs, n, model, jobs[k].machines);
      at = jobs[k].machines;
    }
  return at;
}

/* item[key] = the speed-up s, or "not run" (s <= 0). */
static void set_speedup(json_t *item, const char *key, double s)
{
  if (s > 0)
    template_set(item, key, "%.2f", s);
  else
    template_set(item, key, "not run");
}

/* "yes", or the first machine count >= 16 where a smaller net beats a larger one. */
static void set_ordering(json_t *v, const job *jobs, size_t n, size_t n_models)
{
  for (size_t c = 0; c < sizeof(fig3_machines) / sizeof(size_t); c++) {
    size_t P = fig3_machines[c];
    for (size_t m = 1; P >= 16 && m < n_models; m++) {
      double small = speedup_at(jobs, n, fig3_models[m - 1], P), big = speedup_at(jobs, n, fig3_models[m], P);
      if (small > 0 && big > 0 && small >= big) {
        template_set(v, "ordering", "no: at %zu machines %s %.2f >= %s %.2f", P, fig3_models[m - 1], small,
                     fig3_models[m], big);
        return;
      }
    }
  }
  template_set(v, "ordering", "yes");
}

/* Whether model's speed-up never falls from `from` machines to `to` among the counts run. */
static int never_falls(const job *jobs, size_t n, const char *model, size_t from, size_t to)
{
  double last = -1;
  for (size_t c = 0; c < sizeof(fig3_machines) / sizeof(size_t); c++) {
    size_t P = fig3_machines[c];
    double sp = speedup_at(jobs, n, model, P);
    if (P < from || P > to || sp <= 0)
      continue;
    if (last > 0 && sp < last)
      return 0;
    last = sp;
  }
  return 1;
}

/* The "paper vs dtsim" table's values. */
static void fig3_claims(json_t *v, const job *jobs, size_t n, size_t n_models)
{
  double peak;
  size_t at = peak_of(jobs, n, "speech-42m", &peak);
  template_set(v, "speech_at", "%zu", at);
  template_set(v, "speech_peak", "%.2f", peak);
  template_list(v, "speech_above");
  for (size_t c = 0; c < sizeof(fig3_machines) / sizeof(size_t); c++)
    if (fig3_machines[c] > 8 && speedup_at(jobs, n, "speech-42m", fig3_machines[c]) > 0) {
      json_t *it = template_add(v, "speech_above");
      template_set(it, "machines", "%zu", fig3_machines[c]);
      set_speedup(it, "speedup", speedup_at(jobs, n, "speech-42m", fig3_machines[c]));
    }
  set_speedup(v, "image_81", speedup_at(jobs, n, "image-1.7b", 81));
  static const size_t around[] = {32, 64, 81, 128, 144};
  for (size_t c = 0; c < 5; c++) {
    json_t *it = template_add(v, "image_around");
    template_set(it, "machines", "%zu", around[c]);
    set_speedup(it, "speedup", speedup_at(jobs, n, "image-1.7b", around[c]));
    template_set(it, "sep", "%s", c + 1 < 5 ? ", " : "");
  }
  json_object_set_new(v, "image_144", json_boolean(speedup_at(jobs, n, "image-1.7b", 144) > 0));
  template_set(v, "image_trend", "%s", never_falls(jobs, n, "image-1.7b", 32, 144) ? "never falls" : "falls");
  set_ordering(v, jobs, n, n_models);
}

/* The speed-ups' table: a row per machine count that some net ran. */
static void fig3_table(json_t *v, const job *jobs, size_t n, size_t n_models)
{
  for (size_t m = 0; m < n_models; m++)
    template_set(template_add(v, "models"), "model", "%s", fig3_models[m]);
  template_list(v, "rows");
  for (size_t c = 0; c < sizeof(fig3_machines) / sizeof(size_t); c++) {
    size_t P = fig3_machines[c];
    int any = 0;
    for (size_t m = 0; m < n_models; m++)
      any |= speedup_at(jobs, n, fig3_models[m], P) > 0;
    if (!any)
      continue;
    json_t *row = template_add(v, "rows");
    template_set(row, "machines", "%zu", P);
    for (size_t m = 0; m < n_models; m++) {
      double sp = speedup_at(jobs, n, fig3_models[m], P);
      json_t *cell = template_add(row, "cells");
      if (sp > 0)
        template_set(cell, "speedup", "%.2f", sp);
      else
        template_set(cell, "speedup", "-");
    }
  }
}

/* The change from 64 to 144 machines of image-1.7b's speed-up under `variant` (NULL: as
 * committed), relative; 0 if a point was not run. */
static double fig3_trend(const job *jobs, size_t n, const char *variant)
{
  double a64 = variant_speedup(jobs, n, "image-1.7b", variant, 64);
  double a144 = variant_speedup(jobs, n, "image-1.7b", variant, 144);
  return a64 > 0 && a144 > 0 ? a144 / a64 - 1 : 0;
}

/* The assumption whose change moves image-1.7b's 64 -> 144 trend most, for the README. */
static void fig3_robust_most(json_t *v, const job *jobs, size_t n)
{
  double base = fig3_trend(jobs, n, NULL), most = -1;
  size_t at = 0;
  for (size_t k = 0; k < sizeof(fig3_variants) / sizeof(fig3_variants[0]); k++) {
    double d = fabs(fig3_trend(jobs, n, fig3_variants[k].name) - base);
    if (d > most) {
      most = d;
      at = k;
    }
  }
  template_set(v, "robust_most", "%s", fig3_variants[at].name);
  template_set(v, "robust_most_trend", "%+.1f%%", 100 * fig3_trend(jobs, n, fig3_variants[at].name));
  template_set(v, "robust_base_trend", "%+.1f%%", 100 * base);
}

/* The robustness table (full grid): image-1.7b's speed-ups under each assumption. */
static void fig3_robustness(json_t *v, const job *jobs, size_t n)
{
  for (size_t c = 0; c < sizeof(fig3_robust_machines) / sizeof(size_t); c++) {
    template_add(v, "robust_cols");
    if (fig3_robust_machines[c] > 1)
      template_set(template_add(v, "robust_machines"), "machines", "%zu", fig3_robust_machines[c]);
  }
  for (size_t k = 0; k <= sizeof(fig3_variants) / sizeof(fig3_variants[0]); k++) {
    const char *name = k == 0 ? NULL : fig3_variants[k - 1].name;
    json_t *row = template_add(v, "robust_rows");
    template_set(row, "name", "%s", name ? name : "as committed");
    template_list(row, "cells");
    for (size_t c = 0; c < sizeof(fig3_robust_machines) / sizeof(size_t); c++)
      if (fig3_robust_machines[c] > 1)
        set_speedup(template_add(row, "cells"), "speedup", variant_speedup(jobs, n, "image-1.7b", name, fig3_robust_machines[c]));
    double a64 = variant_speedup(jobs, n, "image-1.7b", name, 64), a144 = variant_speedup(jobs, n, "image-1.7b", name, 144);
    if (a64 > 0 && a144 > 0)
      template_set(row, "trend", "%s %.1f%%", a144 < a64 ? "falls" : "rises", 100 * (a144 / a64 - 1));
    else
      template_set(row, "trend", "-");
  }
  fig3_robust_most(v, jobs, n);
}

/* The nets run: two with --quick. */
static size_t fig3_n_models(int quick)
{
  return quick ? 2 : sizeof(fig3_models) / sizeof(fig3_models[0]);
}

/* templates/fig3.md's values (its rules are written there, before the results). */
static int fig3_readme(json_t *v, const reproduce_data *d, char *err, size_t len)
{
  (void)err, (void)len;
  const job *jobs = d->runs[0];
  size_t n = d->n[0], n_models = fig3_n_models(d->o->quick);
  int quick = d->o->quick;
  template_set(v, "solver", "%s", FIG3_SOLVER);
  template_set(v, "jitter", "%s", FIG3_JITTER);
  template_set(v, "steps", "%s", FIG3_STEPS);
  template_set(v, "batch", "%s", FIG3_BATCH);
  template_set(v, "efficiency", "%s", FIG3_EFFICIENCY);
  template_set(v, "overhead", "%s", FIG3_OVERHEAD);
  template_set(v, "byte_overhead", "%s", FIG3_BYTE_OVERHEAD);
  fig3_claims(v, jobs, n, n_models);
  fig3_table(v, jobs, n, n_models);
  if (!quick)
    fig3_robustness(v, jobs, n);
  return 0;
}

/* fig3.gp reads fig3.csv beside it, one curve per net run, and draws the paper's stated points
 * (sec. 5): speech 2.2x at 8 machines, image-1.7b more than 12x at 81, comma-separated, as the
 * datafile separator reads every data source. */
static void fig3_plot(json_t *v, const char *plot, const reproduce_data *d)
{
  (void)plot;
  char models[256] = "";
  for (size_t m = 0; m < fig3_n_models(d->o->quick); m++)
    snprintf(models + strlen(models), sizeof(models) - strlen(models), "%s%s", m ? " " : "", fig3_models[m]);
  template_set(v, "models", "%s", models);
}

/* The main grid: every net the grid runs on every machine count it can be split over. */
static size_t fig3_grid(int quick, void *rv, reproduce_job *runs, const char *work)
{
  job *jobs = rv;
  const size_t *counts = quick ? fig3_quick_machines : fig3_machines;
  size_t n_counts = quick ? sizeof(fig3_quick_machines) / sizeof(size_t) : sizeof(fig3_machines) / sizeof(size_t);
  size_t n_models = fig3_n_models(quick);
  size_t n = 0;
  for (size_t m = 0; m < n_models; m++)
    for (size_t c = 0; c < n_counts; c++) {
      arch_plan *pl = arch_plan_square(arch_virtual_find(fig3_models[m]), counts[c]);
      if (pl == NULL)
        continue; /* this net cannot be split over that many machines */
      arch_plan_free(pl);
      jobs[n].model = fig3_models[m];
      jobs[n].machines = counts[c];
      snprintf(runs[n].label, sizeof(runs[n].label), "%s on %zu machine%s", fig3_models[m], counts[c],
               counts[c] == 1 ? "" : "s");
      snprintf(runs[n].sets[0], sizeof(runs[n].sets[0]), "model.virtual=%s", fig3_models[m]);
      snprintf(runs[n].sets[1], sizeof(runs[n].sets[1]), "sgd.partitions=%zu", counts[c]);
      runs[n].n_sets = 2;
      runs[n].cfg[0] = FIG3_SOLVER;
      snprintf(runs[n].dir, sizeof(runs[n].dir), "%s/%s-%zu", work, fig3_models[m], counts[c]);
      n++;
    }
  size_t n_var = quick ? 0 : sizeof(fig3_variants) / sizeof(fig3_variants[0]);
  size_t n_rob = sizeof(fig3_robust_machines) / sizeof(size_t);
  for (size_t v = 0; v < n_var; v++)
    for (size_t c = 0; c < n_rob; c++) {
      size_t P = fig3_robust_machines[c];
      jobs[n] = (job){"image-1.7b", P, 0, fig3_variants[v].name};
      snprintf(runs[n].label, sizeof(runs[n].label), "image-1.7b on %zu machines, %s", P, fig3_variants[v].name);
      snprintf(runs[n].sets[0], sizeof(runs[n].sets[0]), "model.virtual=image-1.7b");
      snprintf(runs[n].sets[1], sizeof(runs[n].sets[1]), "sgd.partitions=%zu", P);
      runs[n].n_sets = 2;
      for (size_t k = 0; k < 3 && fig3_variants[v].sets[k]; k++)
        snprintf(runs[n].sets[runs[n].n_sets++], sizeof(runs[n].sets[0]), "%s", fig3_variants[v].sets[k]);
      runs[n].cfg[0] = FIG3_SOLVER;
      snprintf(runs[n].dir, sizeof(runs[n].dir), "%s/robust%zu-%zu", work, v, P);
      n++;
    }
  return n;
}

#define FIG3_MAX_RUNS                                                                                                  \
  (sizeof fig3_models / sizeof *fig3_models * sizeof fig3_machines / sizeof *fig3_machines +                          \
   sizeof fig3_variants / sizeof *fig3_variants * sizeof fig3_robust_machines / sizeof *fig3_robust_machines)

const reproduction reproduce_fig3 = {
    .name = "fig3",
    .grids = {{"fig3.ini", fig3_ini, sizeof(job), FIG3_MAX_RUNS, fig3_grid, read_step_time, NULL}},
    .tables = {{"fig3.csv", 0x3u, fig3_csv}, /* key: model,machines */
               {"fig3_robustness.csv", 0, fig3_robust_csv, 1}}, /* the full grid's only, not checked */
    .readme = fig3_readme,
    .plots = {"fig3"},
    .plot = fig3_plot,
};

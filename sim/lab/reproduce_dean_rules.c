/* reproduce_dean_rules.c - the rules of `dtsim reproduce fig4` and `fig5` (Dean et al. 2012,
 * sec. 5): rule 2's calibration, which measures the baseline's step and sets the proxy's
 * targets before any figure's run, and the rules section both READMEs open with (written
 * before the results, templates/dean_rules.md), with the labels both figures' tables use. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "sim/lab/reproduce.h"
#include "sim/lab/reproduce_dean.h"
#include "sim/lab/template.h"

/* ---- the calibration (the README's rule 2) --------------------------------------------- */

/* Accuracy of calibration run r after `steps` steps: its last evaluation at or before. */
static double acc_after(const run *r, long steps)
{
  double a = -1;
  for (size_t i = 0; i < r->n && r->steps[i] <= steps; i++)
    a = r->acc[i];
  return a;
}

/* Sequential SGD of the proxy on one GPU at the ladder's fixed rates (timing does not
 * matter: only accuracy after so many examples), evaluated about every star_steps / 6
 * steps; `steps` steps in all. */
static void calibration_job(reproduce_job *j, const calibration *cal, int rung, long steps, const char *decay,
                            const char *work)
{
  int n = 0;
  if (decay)
    snprintf(j->sets[n++], sizeof(j->sets[0]), "data.input_decay=%s", decay);
  snprintf(j->sets[n++], sizeof(j->sets[0]), "run.algorithm=sgd");
  snprintf(j->sets[n++], sizeof(j->sets[0]), "platform.preset=gpu-2012");
  snprintf(j->sets[n++], sizeof(j->sets[0]), "sgd.partitions=1");
  snprintf(j->sets[n++], sizeof(j->sets[0]), "sgd.lr=%s", ladder[rung]);
  snprintf(j->sets[n++], sizeof(j->sets[0]), "run.max_steps=%ld", steps);
  snprintf(j->sets[n++], sizeof(j->sets[0]), "run.max_sim_time=1e9");
  snprintf(j->sets[n++], sizeof(j->sets[0]), "run.eval_every=%.17g", cal->gpu_step * (double)(cal->star_steps / 6));
  j->n_sets = n;
  j->may_miss = 1;
  snprintf(j->label, sizeof(j->label), "calibration: sequential SGD at rate %s%s%s", ladder[rung],
           decay ? ", input decay " : "", decay ? decay : "");
  snprintf(j->dir, sizeof(j->dir), "%s/cal-%d-%ld%s%s", work, rung, steps, decay ? "-d" : "", decay ? decay : "");
}

/* The evaluation grid of a calibration run is not EVAL_EVERY's: reads all of them. */
static int read_calibration(run *r, const reproduce_job *j, char *err, size_t len)
{
  return dean_read_progress(r, j, 0, err, len);
}

/* Step times of the SGD baseline and of the GPU, timing only. */
static int measure_steps(const reproduce_opts *o, const char *ini, calibration *cal, char *err, size_t len)
{
  reproduce_job jobs[2] = {0};
  for (int g = 0; g < 2; g++) {
    int n = 0;
    snprintf(jobs[g].sets[n++], sizeof(jobs[g].sets[0]), "run.algorithm=sgd");
    snprintf(jobs[g].sets[n++], sizeof(jobs[g].sets[0]), "model.numerics=off");
    snprintf(jobs[g].sets[n++], sizeof(jobs[g].sets[0]), "model.warmstart_steps=0");
    /* without a warmstart its rate must keep its default (0.05), which the scenario checks */
    snprintf(jobs[g].sets[n++], sizeof(jobs[g].sets[0]), "model.warmstart_lr=0.05");
    snprintf(jobs[g].sets[n++], sizeof(jobs[g].sets[0]), "run.max_steps=%d", TIMING_STEPS);
    if (g) {
      snprintf(jobs[g].sets[n++], sizeof(jobs[g].sets[0]), "platform.preset=gpu-2012");
      snprintf(jobs[g].sets[n++], sizeof(jobs[g].sets[0]), "sgd.partitions=1");
    }
    jobs[g].n_sets = n;
    snprintf(jobs[g].label, sizeof(jobs[g].label), "calibration: the %s's step time", g ? "GPU" : "SGD baseline");
    snprintf(jobs[g].dir, sizeof(jobs[g].dir), "%s/step-%d", o->work, g);
  }
  if (reproduce_run_jobs(o, ini, jobs, 2, err, len) != 0)
    return 2;
  for (int g = 0; g < 2; g++) {
    char path[700];
    snprintf(path, sizeof(path), "%s/summary.json", jobs[g].dir);
    json_t *s = json_load_file(path, 0, NULL);
    double t = s ? json_number_value(json_object_get(s, "sim_time_s")) : 0;
    long steps = s ? (long)json_integer_value(json_object_get(s, "steps")) : 0;
    json_decref(s);
    reproduce_remove_run(&jobs[g]);
    if (steps <= 0) {
      snprintf(err, len, "%s: no result", path);
      return 2;
    }
    *(g ? &cal->gpu_step : &cal->sgd_step) = t / (double)steps;
  }
  return 0;
}

/* Rule 2's ladder: sequential SGD at the fixed rates (inputs decaying as `decay`, NULL: the
 * scenario's), started on the ladder's middle rungs and extended while the best is at an end;
 * sets cal's target (the best accuracy after star_steps), its rung and the easier target. */
static int climb(const reproduce_opts *o, const char *ini, calibration *cal, const char *decay, char *err, size_t len)
{
  cal->easier = 0;
  cal->lo = FIXED_START;
  cal->hi = FIXED_START + START_RUNGS - 1;
  for (int i = 0; i < (int)N_RUNGS; i++)
    cal->acc[i] = -1;
  for (;;) {
    reproduce_job jobs[N_RUNGS];
    run runs[N_RUNGS];
    int which[N_RUNGS];
    size_t n = 0;
    memset(jobs, 0, sizeof(jobs));
    memset(runs, 0, sizeof(runs));
    for (int k = cal->lo; k <= cal->hi; k++)
      if (cal->acc[k] < 0) {
        calibration_job(&jobs[n], cal, k, cal->star_steps, decay, o->work);
        which[n++] = k;
      }
    if (n > 0 && reproduce_run_jobs(o, ini, jobs, n, err, len) != 0)
      return 2;
    for (size_t i = 0; i < n; i++) {
      if (read_calibration(&runs[i], &jobs[i], err, len) != 0)
        return 2;
      cal->acc[which[i]] = acc_after(&runs[i], cal->star_steps);
      double half = acc_after(&runs[i], cal->star_steps / 2); /* the easier target: the best at half N* */
      cal->easier = half > cal->easier ? half : cal->easier;
      reproduce_remove_run(&jobs[i]);
    }
    dean_free_runs(runs, n);
    int best = cal->lo;
    for (int k = cal->lo; k <= cal->hi; k++)
      if (cal->acc[k] > cal->acc[best])
        best = k;
    cal->rung = best;
    cal->target = cal->acc[best];
    if (best == cal->lo && cal->lo > 0)
      cal->lo--;
    else if (best == cal->hi && cal->hi + 1 < (int)N_RUNGS)
      cal->hi++;
    else
      return 0;
  }
}

/* Rule 2: the target is what sequential SGD of the proxy reaches after N* examples, N* =
 * DIFFICULTY x the examples the SGD baseline processes in the horizon, at the best rate of
 * the fixed-rate ladder; `robust` also measures the robustness table's targets: after 2 N*,
 * and with the inputs of each spectrum_decay (its own ladder: the same rule). */
int dean_calibrate(const reproduce_opts *o, const char *ini, int robust, calibration *cal, char *err, size_t len)
{
  memset(cal, 0, sizeof(*cal));
  if (measure_steps(o, ini, cal, err, len) != 0)
    return 2;
  cal->n_star = DIFFICULTY * (double)BATCH * HORIZON / cal->sgd_step;
  cal->star_steps = (long)(cal->n_star / BATCH);
  if (climb(o, ini, cal, NULL, err, len) != 0)
    return 2;
  cal->harder = -1;
  for (size_t d = 0; robust && d < N_SPECTRA; d++) {
    calibration other = *cal;
    if (climb(o, ini, &other, spectrum_decay[d], err, len) != 0)
      return 2;
    cal->spectrum[d] = other.target;
    cal->spectrum_half[d] = other.easier;
  }
  if (robust) {
    reproduce_job job = {0};
    run r = {0};
    calibration_job(&job, cal, cal->rung, 2 * cal->star_steps, NULL, o->work);
    if (reproduce_run_jobs(o, ini, &job, 1, err, len) != 0 || read_calibration(&r, &job, err, len) != 0)
      return 2;
    cal->harder = acc_after(&r, 2 * cal->star_steps);
    reproduce_remove_run(&job);
    dean_free_runs(&r, 1);
  }
  return 0;
}

/* ---- what both READMEs say ------------------------------------------------------------ */

/* item[key] = hours to the target, or "not reached". */
void dean_set_hours(json_t *item, const char *key, double s)
{
  if (s >= 0)
    template_set(item, key, "%.3f", s / 3600);
  else
    template_set(item, key, "not reached");
}

/* A configuration's name in the tables and plots, in buf. */
const char *dean_label_of(const config *c, char *buf, size_t len)
{
  if (c->m == M_SGD)
    snprintf(buf, len, "sgd (1 replica, 8 partitions)");
  else if (c->m == M_GPU)
    snprintf(buf, len, "gpu (1 GPU)");
  else
    snprintf(buf, len, "%s %d", method_names[c->m], c->replicas);
  return buf;
}

void dean_set_label(json_t *item, const char *key, const config *c)
{
  char buf[64];
  template_set(item, key, "%s", dean_label_of(c, buf, sizeof buf));
}

/* The standard error of a held-out accuracy p measured on TEST examples. */
double dean_standard_error(double p)
{
  return sqrt(p * (1 - p) / TEST);
}

/* values["rules"] = templates/dean_rules.md filled: the rules, written before any result
 * (both READMEs); -1 with one line in err if the template fails. */
int dean_set_rules(json_t *v, const calibration *cal, char *err, size_t len)
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
  template_set(r, "target_se", "%.4f", dean_standard_error(cal->target));
  char *rules = template_render("dean_rules", r, err, len);
  json_decref(r);
  if (rules == NULL)
    return -1;
  json_object_set_new(v, "rules", json_string(rules));
  free(rules);
  return 0;
}

json_t *dean_result_item(json_t *v, const run *runs, size_t n, const config *c, const run **r)
{
  *r = dean_chosen(runs, n, c, V_NONE);
  json_t *it = template_add(v, "results");
  json_object_set_new(it, "unsimulated", json_boolean(!simulated(c)));
  json_object_set_new(it, "ran", json_boolean(*r != NULL));
  return it;
}

/* ---- a figure's runs: the calibration, then the method's grid on its targets ---------- */

int dean_simulate(reproduce_data *d, char *err, size_t len)
{
  const reproduce_opts *o = d->o;
  const dean_figure *fig = d->r->arg;
  const char *ini = d->r->grids[0].ini_name;
  dean_state *st = xbt_malloc0(sizeof(*st));
  st->cs = fig->cs;
  st->nc = fig->nc;
  d->state = st;
  int robust = fig->robustness && !o->quick && !o->check;
  int rc = dean_calibrate(o, ini, robust, &st->cal, err, len);
  run *runs = NULL;
  size_t n = 0;
  if (rc == 0)
    rc = dean_run_figure(o, ini, fig, &st->cal, robust, &runs, &n, err, len);
  d->runs[0] = runs;
  d->n[0] = n;
  return rc;
}

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

#include "models/curvature.h"
#include "sim/lab/reproduce.h"
#include "sim/lab/reproduce_dean.h"
#include "sim/lab/template.h"

/* ---- the calibration (the README's rule 2) --------------------------------------------- */

/* The last evaluation of calibration run r at or before `steps` steps: its index, or -1. */
static long eval_at(const run *r, long steps)
{
  long k = -1;
  for (size_t i = 0; i < r->n && r->steps[i] <= steps; i++)
    k = (long)i;
  return k;
}

static double acc_after(const run *r, long steps)
{
  long k = eval_at(r, steps);
  return k >= 0 ? r->acc[k] : -1;
}

/* Sequential SGD of candidate proxy p on one GPU at the ladder's fixed rates (timing does
 * not matter: only accuracy after so many examples), evaluated CAL_EVALS times up to
 * star_steps with the gradient noise scale measured on NOISE_ROWS examples; `steps` steps
 * in all, lambda_max measured at the last evaluation on CURVATURE_ROWS held-out ones. */
static void calibration_job(reproduce_job *j, const calibration *cal, int rung, long steps, size_t p,
                            const char *work)
{
  int n = 0;
  snprintf(j->sets[n++], sizeof(j->sets[0]), "data.input_decay=%s", proxies[p].decay);
  snprintf(j->sets[n++], sizeof(j->sets[0]), "data.label_noise=%s", proxies[p].noise);
  snprintf(j->sets[n++], sizeof(j->sets[0]), "run.algorithm=sgd");
  snprintf(j->sets[n++], sizeof(j->sets[0]), "platform.preset=gpu-2012");
  snprintf(j->sets[n++], sizeof(j->sets[0]), "platform.uplink_routing=dmodk"); /* a star: no uplinks to pool */
  snprintf(j->sets[n++], sizeof(j->sets[0]), "sgd.partitions=1");
  snprintf(j->sets[n++], sizeof(j->sets[0]), "sgd.lr=%s", ladder[rung]);
  snprintf(j->sets[n++], sizeof(j->sets[0]), "run.max_steps=%ld", steps);
  snprintf(j->sets[n++], sizeof(j->sets[0]), "run.max_sim_time=1e9");
  snprintf(j->sets[n++], sizeof(j->sets[0]), "run.eval_every=%.17g",
           cal->gpu_step * (double)(cal->star_steps / CAL_EVALS));
  snprintf(j->sets[n++], sizeof(j->sets[0]), "run.noise_scale_examples=%d", NOISE_ROWS);
  snprintf(j->sets[n++], sizeof(j->sets[0]), "run.curvature_examples=%d", CURVATURE_ROWS);
  j->n_sets = n;
  j->may_miss = 1;
  snprintf(j->label, sizeof(j->label), "calibration: sequential SGD at rate %s, inputs (i + 1)^-%s, label noise %s",
           ladder[rung], proxies[p].decay, proxies[p].noise);
  snprintf(j->dir, sizeof(j->dir), "%s/cal-%zu-%d-%ld", work, p, rung, steps);
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
      snprintf(jobs[g].sets[n++], sizeof(jobs[g].sets[0]), "platform.uplink_routing=dmodk"); /* a star */
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

/* What rule 2's criterion reads on the best rate's curve r of a candidate, into sc. */
static void screen_curve(const run *r, long star, screened *sc)
{
  const long at[4] = {star / 15, star / 2, (long)((double)star / DIFFICULTY), star};
  for (int i = 0; i < 4; i++) {
    long k = eval_at(r, at[i]);
    sc->at[i] = k >= 0 ? r->acc[k] : -1;
    sc->noise[i] = k >= 0 ? r->noise[k] : NAN;
  }
  sc->rise_se = (sc->at[2] - sc->at[0]) / dean_standard_error(sc->at[2]);
  sc->lambda[1] = r->lambda;
}

/* Rule 2's curvature criterion for the best rate of candidate p, whose curve screen_curve
 * read: lambda_max at the warmstart (one step from it, the last evaluation of a one-step
 * run), then whether the rate times the larger lambda_max is within the bound of a gradient
 * STALE_TAU updates stale, and the whole criterion. */
static int screen_curvature(const reproduce_opts *o, const char *ini, const calibration *cal, size_t p, screened *sc,
                            char *err, size_t len)
{
  reproduce_job job = {0};
  run r = {0};
  calibration_job(&job, cal, sc->rung, 1, p, o->work);
  if (reproduce_run_jobs(o, ini, &job, 1, err, len) != 0 || read_calibration(&r, &job, err, len) != 0)
    return 2;
  sc->lambda[0] = r.lambda;
  reproduce_remove_run(&job);
  dean_free_runs(&r, 1);
  double top = sc->lambda[0] > sc->lambda[1] ? sc->lambda[0] : sc->lambda[1];
  sc->stale = atof(ladder[sc->rung]) * top;
  sc->passes = sc->noise[3] >= NOISE_FACTOR * BATCH && sc->rise_se >= RISE_SE &&
               sc->stale <= curvature_delay_bound(STALE_TAU);
  return 0;
}

/* Rule 2's ladder for candidate proxy p: sequential SGD at the fixed rates, started on the
 * ladder's middle rungs and extended while the best is at an end; the best rate's accuracy
 * at N* and what the criterion reads on its curve into sc, the rungs run into cal. */
static int climb(const reproduce_opts *o, const char *ini, calibration *cal, size_t p, screened *sc, char *err,
                 size_t len)
{
  run runs[N_RUNGS];
  memset(runs, 0, sizeof(runs));
  cal->lo = FIXED_START;
  cal->hi = FIXED_START + START_RUNGS - 1;
  for (int i = 0; i < (int)N_RUNGS; i++)
    cal->acc[i] = -1;
  sc->easier = 0;
  int rc = 0;
  for (;;) {
    reproduce_job jobs[N_RUNGS];
    int which[N_RUNGS];
    size_t n = 0;
    memset(jobs, 0, sizeof(jobs));
    for (int k = cal->lo; k <= cal->hi; k++)
      if (cal->acc[k] < 0) {
        calibration_job(&jobs[n], cal, k, cal->star_steps, p, o->work);
        which[n++] = k;
      }
    if (n > 0 && reproduce_run_jobs(o, ini, jobs, n, err, len) != 0)
      rc = 2;
    for (size_t i = 0; i < n && rc == 0; i++) {
      run *r = &runs[which[i]];
      if (read_calibration(r, &jobs[i], err, len) != 0)
        rc = 2;
      cal->acc[which[i]] = rc ? -1 : acc_after(r, cal->star_steps);
      double half = rc ? -1 : acc_after(r, cal->star_steps / 2); /* the easier target: the best at half N* */
      sc->easier = half > sc->easier ? half : sc->easier;
      reproduce_remove_run(&jobs[i]);
    }
    if (rc != 0)
      break;
    int best = cal->lo;
    for (int k = cal->lo; k <= cal->hi; k++)
      if (cal->acc[k] > cal->acc[best])
        best = k;
    sc->rung = best;
    sc->target = cal->acc[best];
    if (best == cal->lo && cal->lo > 0)
      cal->lo--;
    else if (best == cal->hi && cal->hi + 1 < (int)N_RUNGS)
      cal->hi++;
    else {
      screen_curve(&runs[best], cal->star_steps, sc);
      rc = screen_curvature(o, ini, cal, p, sc, err, len);
      break;
    }
  }
  dean_free_runs(runs, N_RUNGS);
  return rc;
}

/* Rule 2: the proxy is the first candidate whose sequential SGD, at the best rate of the
 * fixed-rate ladder after N* examples (N* = DIFFICULTY x the examples the SGD baseline
 * processes in the horizon), has a gradient noise scale there of at least NOISE_FACTOR
 * times a replica's batch and gains RISE_SE standard errors over the horizon's examples;
 * the target is that accuracy. `robust` also measures the robustness table's: after 2 N*.
 * The first candidate, the ill-conditioned proxy, is always screened: its target is the
 * robustness table's row. */
int dean_calibrate(const reproduce_opts *o, const char *ini, int robust, calibration *cal, char *err, size_t len)
{
  memset(cal, 0, sizeof(*cal));
  if (measure_steps(o, ini, cal, err, len) != 0)
    return 2;
  cal->n_star = DIFFICULTY * (double)BATCH * HORIZON / cal->sgd_step;
  cal->star_steps = (long)(cal->n_star / BATCH);
  calibration chosen = *cal;
  for (size_t p = 0; p < N_PROXIES; p++) {
    calibration here = *cal;
    if (climb(o, ini, &here, p, &cal->cand[p], err, len) != 0)
      return 2;
    cal->n_screened = p + 1;
    chosen = here;
    if (cal->cand[p].passes)
      break;
  }
  cal->proxy = (int)cal->n_screened - 1;
  const screened *sc = &cal->cand[cal->proxy];
  cal->lo = chosen.lo;
  cal->hi = chosen.hi;
  memcpy(cal->acc, chosen.acc, sizeof(cal->acc));
  cal->rung = sc->rung;
  cal->target = sc->target;
  cal->easier = sc->easier;
  cal->harder = -1;
  if (robust) {
    reproduce_job job = {0};
    run r = {0};
    calibration_job(&job, cal, cal->rung, 2 * cal->star_steps, (size_t)cal->proxy, o->work);
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

/* Rule 2's screening into the rules' values r: the candidates in their order, each one
 * screened with what the criterion read, the proxy chosen and its noise scale against the
 * batches the methods use. */
static void set_screening(json_t *r, const calibration *cal)
{
  template_list(r, "candidate_list");
  template_list(r, "candidates");
  for (size_t p = 0; p < N_PROXIES; p++) {
    json_t *it = template_add(r, "candidate_list");
    template_set(it, "sep", "%s", p ? ", " : "");
    template_set(it, "decay", "%s", proxies[p].decay);
    template_set(it, "noise", "%s", proxies[p].noise);
  }
  for (size_t p = 0; p < cal->n_screened; p++) {
    const screened *sc = &cal->cand[p];
    json_t *it = template_add(r, "candidates");
    template_set(it, "decay", "%s", proxies[p].decay);
    template_set(it, "noise", "%s", proxies[p].noise);
    template_set(it, "rate", "%s", ladder[sc->rung]);
    template_set(it, "acc", "%.4f, %.4f, %.4f, %.4f", sc->at[0], sc->at[1], sc->at[2], sc->at[3]);
    template_set(it, "noise_scale", "%.0f, %.0f, %.0f, %.0f", sc->noise[0], sc->noise[1], sc->noise[2], sc->noise[3]);
    template_set(it, "rise", "%+.1f", sc->rise_se);
    template_set(it, "lambda", "%.3f, %.3f", sc->lambda[0], sc->lambda[1]);
    template_set(it, "stale", "%.3f", sc->stale);
    template_set(it, "passes", "%s", sc->passes ? "yes" : "no");
  }
  const proxy *px = &proxies[cal->proxy];
  double b = cal->cand[cal->proxy].noise[3];
  template_set(r, "decay", "%s", px->decay);
  template_set(r, "noise", "%s", px->noise);
  template_set(r, "b_star", "%.0f", b);
  template_set(r, "b_vs_batches",
               "%.0f times one replica's %d examples, %.2f times Downpour 20's combined %d, %.2f times Downpour 200's "
               "%d, %.3f times Sandblaster 2,000's batch of %d",
               b / BATCH, BATCH, b / (20.0 * BATCH), 20 * BATCH, b / (200.0 * BATCH), 200 * BATCH,
               b / (2000.0 * PORTIONS_PER_REPLICA * PORTION), 2000 * PORTIONS_PER_REPLICA * PORTION);
  template_set(r, "noise_rows", "%s", NOISE_ROWS_TEXT);
  template_set(r, "noise_factor", "%d", NOISE_FACTOR);
  template_set(r, "rise_se", "%d", RISE_SE);
  template_set(r, "curvature_rows", "%s", CURVATURE_ROWS_TEXT);
  template_set(r, "stale_tau", "%d", STALE_TAU);
  template_set(r, "stale_bound", "%.4f", curvature_delay_bound(STALE_TAU));
}

/* values["rules"] = templates/dean_rules.md filled: the rules, written before any result
 * (both READMEs); -1 with one line in err if the template fails. */
int dean_set_rules(json_t *v, const calibration *cal, char *err, size_t len)
{
  json_t *r = json_object();
  set_screening(r, cal);
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
  template_set(r, "robust_max_replicas", "%s", ROBUST_MAX_REPLICAS_TEXT);
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

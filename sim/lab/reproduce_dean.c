/* reproduce_dean.c - `dtsim reproduce fig4` and `fig5`: Dean et al. 2012, Figs. 4 and 5
 * (Dean et al. 2012, sec. 5): accuracy against time of SGD on 8 partitions, one GPU, Downpour
 * with a fixed rate and with Adagrad, and Sandblaster L-BFGS; then time to a target accuracy
 * against machines and utilized cores. Timing comes from the virtual speech-42m net on the
 * distbelief-2012 (or gpu-2012) preset at Fig. 3's first calibration, accuracy from a small numeric
 * proxy trained for real on a noisy teacher streamed without reuse. Every choice is one rule
 * for every method, written into the README before the results (dean_rules): the proxy's
 * target comes from one calibration of sequential SGD, every rate from one ladder by one
 * selection rule. One simulation per process. This file is the method both figures share:
 * the scenario, one run and its result, the rate rule, the grid and the robustness runs;
 * reproduce_dean_rules.c is the calibration and the rules both READMEs state, and each figure
 * (reproduce_fig4.c, reproduce_fig5.c) declares its configurations and what it writes. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "sim/fileio.h"
#include "sim/output.h"
#include "sim/lab/reproduce.h"
#include "sim/lab/reproduce_dean.h"
#include "sim/lab/reproduce_frame.h"

const char dean_ini[] =
    "; dtsim reproduce fig4 / fig5: Dean et al. 2012, Figs. 4 and 5 (optimizers compared).\n"
    "; Each run sets run.algorithm, the method's keys and run.target_accuracy (the calibrated\n"
    "; target; see the README). The rules behind every number are in the README.\n"
    "[run]\n"
    "algorithm = sgd\n"
    "max_sim_time = " HORIZON_TEXT "      ; s simulated: the deadline of every run\n"
    "eval_every = " EVAL_EVERY_TEXT "\n"
    "[platform]\n"
    "preset = distbelief-2012   ; gpu: gpu-2012\n"
    "msg_overhead = 0.0002      ; Fig. 3's first calibration: s of CPU per message\n"
    "speed_spread = 0.1         ; and its per-machine speed spread, fixed for the run\n"
    "uplink_routing = pooled    ; a rack's uplinks pooled: the routes a parameter-server bank can follow\n"
    "[model]\n"
    "type = mlp                 ; the numeric proxy that really trains ...\n"
    "layers = 48,64,10\n"
    "virtual = speech-42m       ; ... timed as DistBelief's 42M-parameter speech net\n"
    "efficiency = 0.25          ; Fig. 3's first calibration\n"
    "warmstart_steps = 200      ; every run starts from the same sequential SGD warmstart\n"
    "warmstart_batch = 32\n"
    "warmstart_lr = 0.2\n"
    "[data]\n"
    "source = synthetic-teacher\n"
    "teacher_hidden = 0         ; a linear teacher ...\n"
    "input_decay = 2            ; ... on inputs of variance (i + 1)^-2: slow directions keep it rising\n"
    "label_noise = 0.2          ; weakly labelled, as the paper's speech examples\n"
    "stream = on                ; every minibatch fresh: no example is seen twice\n"
    "train = 10000              ; Sandblaster: its batch (set per run); the others stream\n"
    "test = " TEST_TEXT "                ; held-out examples: the standard error of an accuracy is below 0.0036\n"
    "[sgd]\n"
    "batch = 512\n"
    "partitions = 8             ; gpu: 1\n"
    "[downpour]\n"
    "batch = 512\n"
    "overlap = on               ; fetch, compute and push in three threads (Appendix)\n"
    "ps_placement = spread      ; shards among the replicas' racks\n"
    "[sandblaster]\n"
    "portion = 64\n"
    "ps_placement = spread\n";


static int uses_rate(method m) { return m != M_SANDBLASTER; }

/* The parameter-server rule: one shard per MACHINES_PER_SHARD replica machines, rounded up;
 * the robustness table halves and doubles it. */
static int shards_for(const config *c, variant v)
{
  int machines = c->replicas * (v == V_SPLIT ? SGD_PARTITIONS : 1), per = MACHINES_PER_SHARD;
  per = v == V_SHARDS_HALF ? 2 * per : v == V_SHARDS_DOUBLE ? per / 2 : per;
  return (machines + per - 1) / per;
}

/* ---- one simulation and its result ------------------------------------------------- */

/* The scenario keys of run r (cal: the proxy rule 2 chose; target: the accuracy it stops at;
 * bound: the simulated time it stops at if below the horizon), into j's sets. */
static void describe(reproduce_job *j, const run *r, const calibration *cal, double target, double bound,
                     const char *work, size_t index)
{
  const proxy *px = &proxies[proxy_of_variant(r->v, cal->proxy)];
  const config *c = r->c;
  int n = 0;
#define SET(...) snprintf(j->sets[n++], sizeof(j->sets[0]), __VA_ARGS__)
  switch (c->m) {
  case M_SGD:
    SET("run.algorithm=sgd");
    SET("sgd.lr=%s", rate_of(r));
    break;
  case M_GPU:
    SET("run.algorithm=sgd");
    SET("platform.preset=gpu-2012");
    SET("platform.uplink_routing=dmodk"); /* a star: no uplinks to pool */
    SET("sgd.partitions=1");
    SET("sgd.lr=%s", rate_of(r));
    break;
  case M_DOWNPOUR:
  case M_ADAGRAD:
    SET("run.algorithm=downpour");
    SET("downpour.replicas=%d", c->replicas);
    SET("downpour.ps_shards=%d", shards_for(c, r->v));
    SET(c->m == M_ADAGRAD ? "downpour.adagrad=on" : "downpour.adagrad=off");
    SET(c->m == M_ADAGRAD ? "downpour.adagrad_gamma=%s" : "downpour.lr=%s", rate_of(r));
    if (r->v == V_SPLIT) {
      SET("downpour.partitions=%d", SGD_PARTITIONS);
      SET("downpour.overlap=off"); /* not with split replicas */
    }
    break;
  case M_SANDBLASTER:
    SET("run.algorithm=sandblaster");
    SET("sandblaster.replicas=%d", c->replicas);
    SET("sandblaster.ps_shards=%d", shards_for(c, r->v));
    SET("data.train=%d", c->replicas * PORTIONS_PER_REPLICA * PORTION);
    if (r->v == V_SPLIT)
      SET("sandblaster.partitions=%d", SGD_PARTITIONS);
    break;
  }
  if (r->v == V_BW_HALF || r->v == V_BW_DOUBLE)
    SET("platform.bw_factor=%s", r->v == V_BW_HALF ? "0.5" : "2");
  SET("data.input_decay=%s", px->decay); /* rule 2's proxy */
  SET("data.label_noise=%s", px->noise);
  SET("run.target_accuracy=%.17g", target);
  if (bound > 0 && bound < HORIZON)
    SET("run.max_sim_time=%.17g", bound);
#undef SET
  xbt_assert(n <= (int)(sizeof(j->sets) / sizeof(j->sets[0])), "too many sets for one job");
  j->n_sets = n;
  j->may_miss = 1; /* a run that misses the target (or diverges) is a point of the figure */
  snprintf(j->label, sizeof(j->label), "%s x%d%s%s%s%s", method_names[c->m], c->replicas, rate_of(r) ? " at rate " : "",
           rate_of(r) ? rate_of(r) : "", r->v ? ", " : "", r->v ? variant_names[r->v] : "");
  snprintf(j->dir, sizeof(j->dir), "%s/run-%zu", work, index);
}

/* Core-seconds of the run's actors: each role's mean compute time times its actors, times
 * the cores an execution spreads over (one for a GPU). */
static double core_seconds(const json_t *summary, const config *c)
{
  const json_t *bd = json_object_get(summary, "breakdown");
  const char *role;
  const json_t *v;
  double s = 0;
  json_object_foreach((json_t *)bd, role, v)
    s += json_number_value(json_object_get(v, "compute_s")) * (double)json_integer_value(json_object_get(v, "actors"));
  return s * (c->m == M_GPU ? 1 : CORES_PER_MACHINE);
}

/* Reads the evaluations of j's progress.csv into r (t, acc, steps): those on the EVAL_EVERY
 * grid when on_grid, else all of them. */
int dean_read_progress(run *r, const reproduce_job *j, int on_grid, char *err, size_t len)
{
  reproduce_progress p;
  if (reproduce_read_progress(j, &p, err, len) != 0)
    return -1;
  r->t = xbt_malloc((p.n + 1) * sizeof(double));
  r->acc = xbt_malloc((p.n + 1) * sizeof(double));
  r->steps = xbt_malloc((p.n + 1) * sizeof(long));
  r->noise = xbt_malloc((p.n + 1) * sizeof(double));
  r->lambda = NAN;
  for (size_t i = 0; i < p.n; i++)
    if (!isnan(p.lambda[i]))
      r->lambda = p.lambda[i]; /* measured at the last evaluation only */
  for (size_t i = 0; i < p.n; i++)
    if (p.has_acc[i] && (!on_grid || fmod(p.t[i], EVAL_EVERY) == 0)) {
      r->t[r->n] = p.t[i];
      r->acc[r->n] = p.acc[i];
      r->steps[r->n] = p.step[i];
      r->noise[r->n] = p.noise[i];
      r->n++;
    }
  reproduce_progress_free(&p);
  return 0;
}

/* Reads the run's summary.json and its evaluations on the EVAL_EVERY grid (not the last one
 * a run makes when it stops between two), so that a shorter run's are the first ones of a
 * longer run; a run that stopped at the target reached it at its last evaluation. */
static int read_run(run *r, const reproduce_job *j, char *err, size_t len)
{
  char path[700];
  snprintf(path, sizeof(path), "%s/summary.json", j->dir);
  json_t *s = json_load_file(path, 0, NULL);
  if (s == NULL) {
    snprintf(err, len, "%s: no result", path);
    return -1;
  }
  json_t *tt = json_object_get(s, "time_to_target_s");
  r->t_target = json_is_number(tt) ? json_number_value(tt) : -1;
  r->final_acc = json_number_value(json_object_get(s, "final_accuracy"));
  r->sim_time = json_number_value(json_object_get(s, "sim_time_s"));
  r->hosts = (long)json_integer_value(json_object_get(s, "hosts_used"));
  r->core_s = core_seconds(s, r->c);
  json_decref(s);
  return dean_read_progress(r, j, 1, err, len);
}

void dean_free_runs(run *runs, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    xbt_free(runs[i].t);
    xbt_free(runs[i].acc);
    xbt_free(runs[i].steps);
    xbt_free(runs[i].noise);
  }
}

/* Runs jobs[0..n) and reads them into runs[0..n); 0 or 2 with err. */
static int run_all(const reproduce_opts *o, const char *ini, reproduce_job *jobs, run *runs, size_t n, char *err,
                   size_t len)
{
  int rc = reproduce_run_jobs(o, ini, jobs, n, err, len) == 0 ? 0 : 2;
  for (size_t i = 0; i < n && rc == 0; i++)
    if (read_run(&runs[i], &jobs[i], err, len) != 0)
      rc = 2;
  for (size_t i = 0; i < n; i++)
    reproduce_remove_run(&jobs[i]);
  return rc;
}

/* ---- rule 5: every configuration's rate -------------------------------------------- */

/* Whether run a is better than run b for their configuration: the shorter time to the
 * target; if neither reaches it, the higher final accuracy; ties go to the lower rung. */
static int better(const run *a, const run *b)
{
  if (a->t_target >= 0 && (b->t_target < 0 || a->t_target < b->t_target))
    return 1;
  if (b->t_target >= 0 && (a->t_target < 0 || b->t_target < a->t_target))
    return 0;
  if (a->t_target < 0 && a->final_acc != b->final_acc)
    return a->final_acc > b->final_acc;
  return a->rung < b->rung;
}

/* The chosen run of configuration c in variant v among runs[0..n), or NULL if none ran. */
const run *dean_chosen(const run *runs, size_t n, const config *c, variant v)
{
  const run *best = NULL;
  for (size_t i = 0; i < n; i++)
    if (runs[i].c == c && runs[i].v == v && (best == NULL || better(&runs[i], best)))
      best = &runs[i];
  return best;
}

/* The lowest and highest rungs configuration c has run in variant v. */
void dean_rungs_of(const run *runs, size_t n, const config *c, variant v, int *lo, int *hi)
{
  *lo = (int)N_RUNGS;
  *hi = -1;
  for (size_t i = 0; i < n; i++)
    if (runs[i].c == c && runs[i].v == v && runs[i].rung >= 0) {
      *lo = runs[i].rung < *lo ? runs[i].rung : *lo;
      *hi = runs[i].rung > *hi ? runs[i].rung : *hi;
    }
}

/* ---- the grid ------------------------------------------------------------------------- */

/* The rungs configuration c runs in variant v in round `round` of the rate rule, into want
 * (at most START_RUNGS); returns how many. Round 0 runs the middle starting rung (all --quick
 * runs), round 1 the other two, later rounds the next rung beyond while the best is at an end. */
static int rungs_of_round(const reproduce_opts *o, const config *c, variant v, int round, const run *runs, size_t n,
                          int *want)
{
  int start = c->m == M_ADAGRAD ? ADAGRAD_START : FIXED_START, nw = 0;
  if (!uses_rate(c->m))
    want[nw++] = -1;
  if (!uses_rate(c->m) || (round > 0 && o->quick))
    return round == 0 ? nw : 0;
  if (round == 0)
    want[nw++] = start + 1;
  else if (round == 1) {
    want[nw++] = start;
    want[nw++] = start + 2;
  } else {
    int lo, hi;
    dean_rungs_of(runs, n, c, v, &lo, &hi);
    const run *b = dean_chosen(runs, n, c, v);
    if (b->rung == lo && lo > 0)
      want[nw++] = lo - 1;
    else if (b->rung == hi && hi + 1 < (int)N_RUNGS)
      want[nw++] = hi + 1;
  }
  return nw;
}

/* Rule 6's bound: a rung run once configuration c has reached the target stops half an
 * evaluation after the best time so far, since it cannot be chosen if it is slower (its
 * evaluations up to there are the unbounded run's: the simulation is deterministic); 0
 * while no run of c has reached the target (the runs go to the horizon). */
static double bound_of(const config *c, variant v, const run *runs, size_t n)
{
  const run *b = dean_chosen(runs, n, c, v);
  return b && b->t_target >= 0 ? b->t_target + EVAL_EVERY / 2 : 0;
}

/* Runs rounds of the rate rule over configurations cs (those --quick runs when quick; in
 * V_ILL those of at most ROBUST_MAX_REPLICAS replicas) in variant v (V_NONE or V_ILL) with its
 * target, rungs_of_round's, each bounded by bound_of. Appends to *runs; 0 or 2 with err. */
static int run_grid(const reproduce_opts *o, const char *ini, const config *cs, size_t nc, variant v,
                    const calibration *cal, run **runs, size_t *n, size_t *cap, char *err, size_t len)
{
  double target = proxy_variant(v) ? cal->cand[proxy_of_variant(v, cal->proxy)].target : cal->target;
  for (int round = 0;; round++) {
    reproduce_job *jobs = xbt_malloc0((nc * START_RUNGS + 1) * sizeof(reproduce_job));
    size_t first = *n, k = 0;
    for (size_t c = 0; c < nc; c++) {
      if ((o->quick && !cs[c].quick) || (proxy_variant(v) && cs[c].replicas > ROBUST_MAX_REPLICAS))
        continue;
      int want[START_RUNGS], nw = rungs_of_round(o, &cs[c], v, round, *runs, first, want);
      double bound = bound_of(&cs[c], v, *runs, first);
      for (int w = 0; w < nw; w++) {
        if (*n == *cap) {
          *cap = *cap ? 2 * *cap : 64;
          *runs = xbt_realloc(*runs, *cap * sizeof(run));
        }
        run *r = &(*runs)[(*n)++];
        memset(r, 0, sizeof(*r));
        r->c = &cs[c];
        r->rung = want[w];
        r->v = v;
        describe(&jobs[k], r, cal, target, bound, o->work, *n - 1);
        k++;
      }
    }
    int rc = k ? run_all(o, ini, jobs, *runs + first, k, err, len) : 0;
    xbt_free(jobs);
    if (rc != 0 || k == 0)
      return rc;
  }
}

/* The robustness table's runs: fig4's configurations of at most ROBUST_MAX_REPLICAS replicas
 * again at their chosen rates, one assumption changed per variant (each variant reruns the
 * configurations it reaches); the ill-conditioned proxy's row changes the proxy, so there
 * every configuration climbs its ladder again (run_grid). */
static int run_robustness(const reproduce_opts *o, const char *ini, const config *cs, size_t nc,
                          const calibration *cal, run **runs, size_t *n, size_t *cap, char *err, size_t len)
{
  reproduce_job *jobs = xbt_malloc0((nc * N_VARIANTS + 1) * sizeof(reproduce_job));
  size_t first = *n, k = 0;
  for (size_t v = V_SHARDS_HALF; v < V_ILL; v++)
    for (size_t c = 0; c < nc; c++) {
      const config *cf = &cs[c];
      if (cf->replicas > ROBUST_MAX_REPLICAS)
        continue;
      int reaches = v == V_EASIER || v == V_HARDER || ((v == V_BW_HALF || v == V_BW_DOUBLE) && cf->m != M_GPU) ||
                    ((v == V_SHARDS_HALF || v == V_SHARDS_DOUBLE) && distributed(cf->m)) ||
                    (v == V_SPLIT && (cf->m == M_ADAGRAD && cf->replicas == 20));
      if (!reaches)
        continue;
      const run *b = dean_chosen(*runs, *n, cf, V_NONE);
      if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        *runs = xbt_realloc(*runs, *cap * sizeof(run));
        b = dean_chosen(*runs, *n, cf, V_NONE);
      }
      run *r = &(*runs)[(*n)++];
      memset(r, 0, sizeof(*r));
      r->c = cf;
      r->rung = b->rung;
      r->v = (variant)v;
      double target = v == V_EASIER ? cal->easier : v == V_HARDER ? cal->harder : cal->target;
      describe(&jobs[k++], r, cal, target, 0, o->work, *n - 1);
    }
  int rc = run_all(o, ini, jobs, *runs + first, k, err, len);
  xbt_free(jobs);
  return rc;
}

/* ---- a figure's runs ------------------------------------------------------------------ */

int dean_run_figure(const reproduce_opts *o, const char *ini, const dean_figure *fig, const calibration *cal,
                    int robust, run **runs, size_t *n, char *err, size_t len)
{
  size_t cap = 0;
  *runs = NULL;
  *n = 0;
  int rc = run_grid(o, ini, fig->cs, fig->nc, V_NONE, cal, runs, n, &cap, err, len);
  if (rc == 0 && robust)
    rc = run_robustness(o, ini, fig->cs, fig->nc, cal, runs, n, &cap, err, len);
  if (rc == 0 && robust)
    rc = run_grid(o, ini, fig->cs, fig->nc, V_ILL, cal, runs, n, &cap, err, len);
  if (rc == 0 && robust && cal->n_screened > PREV_PROXY && cal->proxy != PREV_PROXY)
    rc = run_grid(o, ini, fig->cs, fig->nc, V_PREV, cal, runs, n, &cap, err, len);
  return rc;
}

void dean_release(reproduce_data *d)
{
  dean_free_runs(d->runs[0], d->n[0]);
  xbt_free(d->runs[0]);
  xbt_free(d->state);
  d->runs[0] = d->state = NULL;
  d->n[0] = 0;
}

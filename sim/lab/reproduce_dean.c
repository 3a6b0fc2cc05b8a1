/* reproduce_dean.c - `dtsim reproduce fig4` and `fig5`: Dean et al. 2012, Figs. 4 and 5
 * (Dean et al. 2012, sec. 5): accuracy against time of SGD on 8 partitions, one GPU, Downpour
 * with a fixed rate and with Adagrad, and Sandblaster L-BFGS; then time to a target accuracy
 * against machines and utilized cores. Timing comes from the virtual speech-42m net on the
 * distbelief-2012 (or gpu-2012) preset at Fig. 3's calibration, accuracy from a small numeric
 * proxy trained for real on a noisy teacher streamed without reuse. Every choice is one rule
 * for every method, written into the README before the results (dean_rules): the proxy's
 * target comes from one calibration of sequential SGD, every rate from one ladder by one
 * selection rule. One simulation per process. */
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

/* ---- the rules (the README's "Rules" section says each of them and why) ---------- */

#define HORIZON 900.0           /* simulated s every run may take: the deadline */
#define HORIZON_TEXT "900"
#define EVAL_EVERY 15.0         /* simulated s between evaluations of the proxy */
#define EVAL_EVERY_TEXT "15"
#define BATCH 512               /* examples per step of the SGD family (not in the paper) */
#define SGD_PARTITIONS 8        /* the paper's single-replica baseline */
#define CORES_PER_MACHINE 16    /* distbelief-2012; a gpu-2012 GPU counts as 1 */
#define MACHINES_PER_SHARD 8    /* one parameter-server shard per 8 replica machines */
#define PORTION 64              /* Sandblaster: examples per portion */
#define PORTIONS_PER_REPLICA 10 /* ... and portions per replica in a batch: B = 640 R */
#define DIFFICULTY 1.5          /* N* = 1.5 x the examples the SGD baseline processes in the horizon */
#define DIFFICULTY_TEXT "1.5"
#define TIMING_STEPS 3          /* steps of the timing run that measures the baseline's step */
#define MAX_REPLICAS 50         /* configurations beyond are listed, not simulated (rule 9) */
#define MAX_REPLICAS_TEXT "50"

static const char dean_ini[] =
    "; dtsim reproduce fig4 / fig5: Dean et al. 2012, Figs. 4 and 5 (optimizers compared).\n"
    "; Each run sets run.algorithm, the method's keys and run.target_accuracy (the calibrated\n"
    "; target; see the README). The rules behind every number are in the README.\n"
    "[run]\n"
    "algorithm = sgd\n"
    "max_sim_time = " HORIZON_TEXT "      ; s simulated: the deadline of every run\n"
    "eval_every = " EVAL_EVERY_TEXT "\n"
    "[platform]\n"
    "preset = distbelief-2012   ; gpu: gpu-2012\n"
    "msg_overhead = 0.0002      ; Fig. 3's calibration: s of CPU per message\n"
    "speed_spread = 0.1         ; Fig. 3's per-machine speed spread\n"
    "[model]\n"
    "type = mlp                 ; the numeric proxy that really trains ...\n"
    "layers = 32,64,10\n"
    "virtual = speech-42m       ; ... timed as DistBelief's 42M-parameter speech net\n"
    "efficiency = 0.25          ; Fig. 3's calibration\n"
    "warmstart_steps = 200      ; every run starts from the same sequential SGD warmstart\n"
    "warmstart_batch = 32\n"
    "warmstart_lr = 0.2\n"
    "[data]\n"
    "source = synthetic-teacher\n"
    "teacher_hidden = 64        ; a teacher the proxy can represent exactly\n"
    "label_noise = 0.2          ; weakly labelled, as the paper's speech examples\n"
    "stream = on                ; every minibatch fresh: no example is seen twice\n"
    "train = 10000              ; Sandblaster: its batch (set per run); the others stream\n"
    "test = 5000\n"
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

/* The rate ladder every method climbs: a factor of about 3 (sqrt 10) between rungs. */
static const char *const ladder[] = {"0.001", "0.003", "0.01", "0.03", "0.1", "0.3", "1", "3", "10", "30", "100"};
#define N_RUNGS (sizeof(ladder) / sizeof(ladder[0]))
/* Every rate, fixed or Adagrad's gamma, starts on 0.03, 0.1, 0.3 and climbs from there; the
 * ladder reaches 100, so gamma can reach "an order of magnitude" above the best fixed rate
 * (the paper's guidance) when the proxy wants it. */
#define FIXED_START 3
#define ADAGRAD_START 3
#define START_RUNGS 3

typedef enum method { M_SGD, M_GPU, M_DOWNPOUR, M_ADAGRAD, M_SANDBLASTER } method;
static const char *const method_names[] = {"sgd", "gpu", "downpour", "downpour-adagrad", "sandblaster"};

/* A configuration: a method and its replica count (sgd: one replica on 8 machines). */
typedef struct config {
  method m;
  int replicas;
  int quick; /* run by --quick too */
} config;

static const config fig4_configs[] = {
    {M_SGD, 1, 0},      {M_GPU, 1, 1},           {M_DOWNPOUR, 20, 0},
    {M_ADAGRAD, 20, 1}, {M_SANDBLASTER, 2000, 0}, {M_ADAGRAD, 200, 0},
};
/* Fig. 5: four points per trace, one of them Fig. 4's configuration (the paper's), the other
 * three the same replica counts for every method. */
static const config fig5_configs[] = {
    {M_SGD, 1, 0},         {M_GPU, 1, 1},         {M_DOWNPOUR, 10, 0},    {M_DOWNPOUR, 20, 0},
    {M_DOWNPOUR, 50, 0},   {M_DOWNPOUR, 200, 0},  {M_ADAGRAD, 10, 0},     {M_ADAGRAD, 20, 1},
    {M_ADAGRAD, 50, 0},    {M_ADAGRAD, 200, 0},   {M_SANDBLASTER, 10, 0}, {M_SANDBLASTER, 20, 1},
    {M_SANDBLASTER, 50, 0}, {M_SANDBLASTER, 2000, 0},
};
/* The paper's Fig. 4 order, slowest first (Dean et al. 2012, sec. 5 and Fig. 4). */
static const config paper_order[] = {
    {M_SGD, 1, 0}, {M_DOWNPOUR, 20, 0}, {M_ADAGRAD, 20, 0}, {M_SANDBLASTER, 2000, 0}, {M_ADAGRAD, 200, 0}};
#define N_PAPER (sizeof(paper_order) / sizeof(paper_order[0]))

/* What-if rows of the robustness table (fig4 only): each reruns fig4's configurations at
 * their chosen rates with one assumption changed. */
typedef enum variant { V_NONE, V_SHARDS_HALF, V_SHARDS_DOUBLE, V_EASIER, V_HARDER, V_BW_HALF, V_BW_DOUBLE, V_SPLIT } variant;
static const char *const variant_names[] = {
    "as run", "half the shards", "twice the shards", "target after N*/2 examples", "target after 2 N* examples",
    "half the link bandwidth", "twice the link bandwidth", "replicas split over 8 machines"};
#define N_VARIANTS (sizeof(variant_names) / sizeof(variant_names[0]))

static int uses_rate(method m) { return m != M_SANDBLASTER; }
/* Rule 9: a configuration of more than MAX_REPLICAS replicas is listed, not simulated. */
static int simulated(const config *c) { return c->replicas <= MAX_REPLICAS; }
static int distributed(method m) { return m == M_DOWNPOUR || m == M_ADAGRAD || m == M_SANDBLASTER; }

/* The parameter-server rule: one shard per MACHINES_PER_SHARD replica machines, rounded up;
 * the robustness table halves and doubles it. */
static int shards_for(const config *c, variant v)
{
  int machines = c->replicas * (v == V_SPLIT ? SGD_PARTITIONS : 1), per = MACHINES_PER_SHARD;
  per = v == V_SHARDS_HALF ? 2 * per : v == V_SHARDS_DOUBLE ? per / 2 : per;
  return (machines + per - 1) / per;
}

/* ---- one simulation and its result ------------------------------------------------- */

typedef struct run {
  const config *c;
  int rung;              /* the rate's rung of the ladder; -1: none (sandblaster) */
  variant v;
  double t_target;       /* simulated s to the target; -1: not reached */
  double final_acc;
  double sim_time;       /* where the run ended */
  long hosts;            /* machines used */
  double core_s;         /* core-seconds the run's actors computed */
  size_t n;              /* evaluations on the EVAL_EVERY grid */
  double *t, *acc;
  long *steps;           /* calibration runs: steps at each evaluation */
} run;

static const char *rate_of(const run *r) { return r->rung >= 0 ? ladder[r->rung] : NULL; }

/* The utilized cores of a run: its core-seconds over the time it ran. */
static double cores_of(const run *r) { return r->sim_time > 0 ? r->core_s / r->sim_time : 0; }

/* The scenario keys of run r (target: the accuracy it stops at), into j's sets. */
static void describe(reproduce_job *j, const run *r, double target, const char *work, size_t index)
{
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
  SET("run.target_accuracy=%.17g", target);
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
static int read_progress(run *r, const reproduce_job *j, int on_grid, char *err, size_t len)
{
  char path[700];
  snprintf(path, sizeof(path), "%s/progress.csv", j->dir);
  char *text = fileio_read(path, NULL);
  if (text == NULL) {
    snprintf(err, len, "%s: no result", path);
    return -1;
  }
  size_t cap = 1;
  for (const char *p = text; *p; p++)
    cap += *p == '\n';
  r->t = xbt_malloc(cap * sizeof(double));
  r->acc = xbt_malloc(cap * sizeof(double));
  r->steps = xbt_malloc(cap * sizeof(long));
  for (const char *p = strchr(text, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
    double t, loss, acc;
    long step;
    if (sscanf(p + 1, "%lf,%ld,%lf,%lf", &t, &step, &loss, &acc) == 4 && (!on_grid || fmod(t, EVAL_EVERY) == 0)) {
      r->t[r->n] = t;
      r->acc[r->n] = acc;
      r->steps[r->n] = step;
      r->n++;
    }
  }
  free(text);
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
  return read_progress(r, j, 1, err, len);
}

static void free_runs(run *runs, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    xbt_free(runs[i].t);
    xbt_free(runs[i].acc);
    xbt_free(runs[i].steps);
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

/* ---- the calibration (the README's rule 2) --------------------------------------------- */

/* What the calibration measured: the baseline's step, N*, and the targets. */
typedef struct calibration {
  double sgd_step;   /* simulated s of one step of the SGD baseline (8 machines) */
  double gpu_step;   /* and of the GPU's */
  double n_star;     /* examples: DIFFICULTY x the baseline's examples in the horizon */
  long star_steps;   /* n_star / BATCH */
  double target;     /* sequential SGD's held-out accuracy after n_star examples, best rate */
  double easier;     /* after n_star / 2 examples */
  double harder;     /* after 2 n_star (fig4's robustness only; else -1) */
  int rung;          /* the best rate's rung */
  int lo, hi;        /* rungs tried */
  double acc[N_RUNGS];
} calibration;

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
static void calibration_job(reproduce_job *j, const calibration *cal, int rung, long steps, const char *work)
{
  int n = 0;
  snprintf(j->sets[n++], sizeof(j->sets[0]), "run.algorithm=sgd");
  snprintf(j->sets[n++], sizeof(j->sets[0]), "platform.preset=gpu-2012");
  snprintf(j->sets[n++], sizeof(j->sets[0]), "sgd.partitions=1");
  snprintf(j->sets[n++], sizeof(j->sets[0]), "sgd.lr=%s", ladder[rung]);
  snprintf(j->sets[n++], sizeof(j->sets[0]), "run.max_steps=%ld", steps);
  snprintf(j->sets[n++], sizeof(j->sets[0]), "run.max_sim_time=1e9");
  snprintf(j->sets[n++], sizeof(j->sets[0]), "run.eval_every=%.17g", cal->gpu_step * (double)(cal->star_steps / 6));
  j->n_sets = n;
  j->may_miss = 1;
  snprintf(j->label, sizeof(j->label), "calibration: sequential SGD at rate %s", ladder[rung]);
  snprintf(j->dir, sizeof(j->dir), "%s/cal-%d-%ld", work, rung, steps);
}

/* The evaluation grid of a calibration run is not EVAL_EVERY's: reads all of them. */
static int read_calibration(run *r, const reproduce_job *j, char *err, size_t len)
{
  return read_progress(r, j, 0, err, len);
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

/* Rule 2: the target is what sequential SGD of the proxy reaches after N* examples, N* =
 * DIFFICULTY x the examples the SGD baseline processes in the horizon, at the best rate of
 * the fixed-rate ladder (started on its middle rungs, extended while the best is at an end);
 * `harder` also measures the target after 2 N* (the robustness table's). */
static int calibrate(const reproduce_opts *o, const char *ini, int harder, calibration *cal, char *err, size_t len)
{
  memset(cal, 0, sizeof(*cal));
  if (measure_steps(o, ini, cal, err, len) != 0)
    return 2;
  cal->n_star = DIFFICULTY * (double)BATCH * HORIZON / cal->sgd_step;
  cal->star_steps = (long)(cal->n_star / BATCH);
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
        calibration_job(&jobs[n], cal, k, cal->star_steps, o->work);
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
    free_runs(runs, n);
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
      break;
  }
  cal->harder = -1;
  if (harder) {
    reproduce_job job = {0};
    run r = {0};
    calibration_job(&job, cal, cal->rung, 2 * cal->star_steps, o->work);
    if (reproduce_run_jobs(o, ini, &job, 1, err, len) != 0 || read_calibration(&r, &job, err, len) != 0)
      return 2;
    cal->harder = acc_after(&r, 2 * cal->star_steps);
    reproduce_remove_run(&job);
    free_runs(&r, 1);
  }
  return 0;
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
static const run *chosen(const run *runs, size_t n, const config *c, variant v)
{
  const run *best = NULL;
  for (size_t i = 0; i < n; i++)
    if (runs[i].c == c && runs[i].v == v && (best == NULL || better(&runs[i], best)))
      best = &runs[i];
  return best;
}

/* The lowest and highest rungs configuration c has run (in variant V_NONE). */
static void rungs_of(const run *runs, size_t n, const config *c, int *lo, int *hi)
{
  *lo = (int)N_RUNGS;
  *hi = -1;
  for (size_t i = 0; i < n; i++)
    if (runs[i].c == c && runs[i].v == V_NONE && runs[i].rung >= 0) {
      *lo = runs[i].rung < *lo ? runs[i].rung : *lo;
      *hi = runs[i].rung > *hi ? runs[i].rung : *hi;
    }
}

/* ---- the figures' CSV files ------------------------------------------------------------ */

/* fig4.csv: the documented method,sim_time_h,accuracy, then replicas and rate: every run's
 * evaluations (each rate's, so that a --quick grid's rows are rows of the full one). */
static char *fig4_csv(const run *runs, size_t n)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fputs("method,sim_time_h,accuracy,replicas,rate\n", f);
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; runs[i].v == V_NONE && k < runs[i].n; k++)
      fprintf(f, "%s,%.17g,%.17g,%d,%s\n", method_names[runs[i].c->m], runs[i].t[k] / 3600, runs[i].acc[k],
              runs[i].c->replicas, rate_of(&runs[i]) ? rate_of(&runs[i]) : "none");
  fclose(f);
  return text;
}

/* fig5.csv: method,replicas,machines,cores,time_to_target_h,rate: machines are every host the
 * run used, cores its utilized cores; time_to_target_h is empty when the target was not
 * reached. */
static char *fig5_csv(const run *runs, size_t n)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fputs("method,replicas,machines,cores,time_to_target_h,rate\n", f);
  for (size_t i = 0; i < n; i++) {
    const run *r = &runs[i];
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

/* robustness.csv (fig4): method,replicas,rate,variant,time_to_target_h,final_accuracy. */
static char *robustness_csv(const run *runs, size_t n)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fputs("method,replicas,rate,variant,time_to_target_h,final_accuracy\n", f);
  for (size_t i = 0; i < n; i++) {
    const run *r = &runs[i];
    if (r->v == V_NONE)
      continue;
    fprintf(f, "%s,%d,%s,%s,", method_names[r->c->m], r->c->replicas, rate_of(r) ? rate_of(r) : "none",
            variant_names[r->v]);
    if (r->t_target >= 0)
      fprintf(f, "%.17g", r->t_target / 3600);
    fprintf(f, ",%.17g\n", r->final_acc);
  }
  fclose(f);
  return text;
}

/* ---- the READMEs ---------------------------------------------------------------------- */

static void put_hours(FILE *f, double s)
{
  if (s >= 0)
    fprintf(f, "%.3f", s / 3600);
  else
    fputs("not reached", f);
}

static void put_label(FILE *f, const config *c)
{
  if (c->m == M_SGD)
    fputs("sgd (1 replica, 8 partitions)", f);
  else if (c->m == M_GPU)
    fputs("gpu (1 GPU)", f);
  else
    fprintf(f, "%s %d", method_names[c->m], c->replicas);
}

/* The rules, written before any result (both READMEs). */
static void put_rules(FILE *f, const calibration *cal)
{
  fprintf(f,
          "## Rules (chosen before the results, the same for every method)\n\n"
          "1. **Timing**: DistBelief's speech net (`model.virtual = speech-42m`, 41.8M parameters, 6 x 41.8M\n"
          "   flops per example, 167 MB of fp32 parameters) on the `distbelief-2012` preset (16 cores of\n"
          "   20.8 Gflop/s per machine on Google's Saturn fabric of 2009-2012: 10 GbE, racks of 20 with 4 x\n"
          "   10G uplinks, non-blocking above; platforms/README.md), at Fig. 3's calibration (efficiency 0.25,\n"
          "   0.2 ms of CPU per message, machines' speeds spread by 10%%: results/fig3/README.md); the GPU\n"
          "   baseline on the `gpu-2012` preset (one 1,331 Gflop/s GPU at the same efficiency). The SGD\n"
          "   baseline's step of %d examples takes %.3f s on its 8 machines, the GPU's %.3f s.\n",
          BATCH, cal->sgd_step, cal->gpu_step);
  fprintf(f,
          "2. **Accuracy: a proxy whose target needs far more examples than the baseline processes in the\n"
          "   horizon.** A 32-64-10 tanh MLP really trains on a teacher network 32-64-10 whose labels are\n"
          "   replaced by a uniform class one time in five (the paper's speech examples are \"weakly\n"
          "   labeled\"), every minibatch drawn fresh from the teacher (`data.stream`: no example is seen\n"
          "   twice; the paper trains on 1.1 billion); held-out accuracy on 5,000 more (at most 0.82 with\n"
          "   this noise). The horizon is " HORIZON_TEXT " simulated s. N* = " DIFFICULTY_TEXT " x the examples the SGD\n"
          "   baseline processes in it = %.0f examples (%ld steps); the target is the held-out accuracy that\n"
          "   sequential SGD of the proxy reaches after N* examples at the best rate of the fixed-rate\n"
          "   ladder (rule 6): **%.4f** (rate %s). This is the one calibration (a numerics-only run, not a\n"
          "   scored point); the SGD baseline therefore reaches the target after about %.0f s, beyond\n"
          "   the horizon, by construction, as the paper's problem (days of training) is example-bound.\n"
          "3. **Warmstart**: every run starts from the same 200 steps of sequential SGD (batch 32, rate 0.2,\n"
          "   `model.warmstart_steps`), as the paper's runs start from one ~10 h SGD warmstart.\n",
          cal->n_star, cal->star_steps, cal->target, ladder[cal->rung], cal->n_star / (BATCH / cal->sgd_step));
  fprintf(f,
          "4. **Methods and machines** (the paper's configurations: Downpour 20 and 200, Sandblaster 2,000):\n"
          "   `sgd`: one replica split over %d machines (the paper's baseline; the speech net's partitions take\n"
          "   the time, the proxy sequential SGD's steps); `gpu`: one replica on one GPU; `downpour`,\n"
          "   `downpour-adagrad`: R replicas, each one machine, n_fetch = n_push = 1 (the paper's), fetch,\n"
          "   compute and push in three weakly synchronised threads (`downpour.overlap`, the Appendix);\n"
          "   `sandblaster`: R replicas of one machine, a coordinator, batches of %d portions of %d examples\n"
          "   per replica (portions much smaller than 1/R of a batch: its batch is %d R examples of the\n"
          "   teacher, fixed), backup tasks on, pushes every 4 counted portions. The paper does not say how\n"
          "   its replicas were split: a replica is one machine here (the speech net fits one), which gives\n"
          "   every distributed method the same replica; the robustness table splits them over 8. SGD-family\n"
          "   steps take %d examples (the paper does not give its batch size: an assumption).\n"
          "5. **Parameter server**: ceil(replica machines / %d) shards for every method, placed among the\n"
          "   replicas' machines (`ps_placement = spread`), so that every rack holds shards in proportion\n"
          "   to its replicas; each machine exchanges with the shards only its own parameters.\n",
          SGD_PARTITIONS, PORTIONS_PER_REPLICA, PORTION, PORTIONS_PER_REPLICA * PORTION, BATCH, MACHINES_PER_SHARD);
  fputs("6. **Rates, one rule for all**: every method climbs one ladder of rates a factor of about 3\n"
        "   apart (0.001, 0.003, ..., 30, 100), fixed rates (`sgd.lr`, `downpour.lr`) and Adagrad's gamma\n"
        "   alike: each configuration starts on 0.03, 0.1 and 0.3, and while its best rate is at an end of\n"
        "   what it ran, the next rung beyond is run, so no winner sits on an edge; the ladder reaches 100,\n"
        "   so gamma can go \"perhaps an order of magnitude\" above the best fixed rate, as the paper has it\n"
        "   (Adagrad's first update moves every parameter by gamma, whatever the gradient). The best: the\n"
        "   shortest time to the target; if none reaches it, the highest final accuracy; ties to the lower\n"
        "   rate. L-BFGS needs no rate.\n"
        "7. **Axes**: time is simulated seconds, shown in hours; every run stops at the target or the\n"
        "   horizon; an evaluation every " EVAL_EVERY_TEXT " simulated s measures the proxy's held-out accuracy from\n"
        "   the parameters at that moment. Machines count every host a run uses (replicas, shards,\n"
        "   coordinator; a GPU is 1); utilized cores are the core-seconds its actors computed divided\n"
        "   by the time it ran (a machine's computation spreads over its 16 cores; shards count).\n"
        "8. **Scale factor**: the paper's runs take tens of hours; here N* and the horizon are both that\n"
        "   small, for every method alike, and the replica counts, machines and rates are the paper's\n"
        "   configurations (those rule 9 simulates). The order survives the factor as long as every\n"
        "   method stays example-bound: its time to the target is the examples it needs over its\n"
        "   throughput, neither of which the factor changes; the cost is that the fastest runs make tens\n"
        "   of steps per replica, not thousands, so start-up (the first fetch, the warmstart's release)\n"
        "   weighs more.\n"
        "9. **What is simulated**: every configuration of at most " MAX_REPLICAS_TEXT " replicas; larger ones are listed,\n"
        "   not simulated. With one shard per 8 machines every replica exchanges with R/8 shards and\n"
        "   all those flows share the shards' links, so each flow's start or end re-solves the sharing\n"
        "   of about R^2/4 flows in flight and a replica's step costs CPU time growing as R^3: on the\n"
        "   2-core machine these results were made on, 900 simulated s of Downpour-Adagrad take about\n"
        "   1 CPU-minute at 20 replicas and 2 at 50, and at 200 replicas 10 simulated s took 93 s of CPU\n"
        "   with SimGrid's fastest settings that keep times within 1e-5 (so about 2.3 CPU-hours per run,\n"
        "   and the rate rule needs at least three); Sandblaster with 2,000 replicas and 250 shards had\n"
        "   not reached 6 simulated s after 16 CPU-minutes (1.8 GB). No single scale factor keeps their\n"
        "   comparison: fewer replicas would slow them against the one-replica baselines by that factor,\n"
        "   and a shorter horizon shrinks N* while Sandblaster 2,000's batch stays 1.28 M examples.\n\n",
        f);
}

/* Sorts chosen runs by time to the target, slowest (or never) first. */
static int slower_first(const void *a, const void *b)
{
  const run *x = *(const run *const *)a, *y = *(const run *const *)b;
  double tx = x->t_target < 0 ? INFINITY : x->t_target, ty = y->t_target < 0 ? INFINITY : y->t_target;
  if (tx != ty)
    return tx < ty ? 1 : -1;
  return x->final_acc < y->final_acc ? -1 : x->final_acc > y->final_acc;
}

/* The chosen runs of the paper's five configurations in variant v, slowest first; returns
 * how many ran. */
static size_t order_of(const run *runs, size_t n, const config *cs, size_t nc, variant v, const run **order)
{
  size_t k = 0;
  for (size_t p = 0; p < N_PAPER; p++)
    for (size_t c = 0; c < nc; c++)
      if (cs[c].m == paper_order[p].m && cs[c].replicas == paper_order[p].replicas) {
        const run *r = chosen(runs, n, &cs[c], v);
        if (r)
          order[k++] = r;
      }
  qsort(order, k, sizeof(order[0]), slower_first);
  return k;
}

/* Whether order[0..k) keeps the paper's relative order: each configuration after the ones
 * the paper has slower (those not simulated, rule 9, are absent). */
static int paper_ordered(const run *const *order, size_t k)
{
  int last = -1;
  for (size_t i = 0; i < k; i++) {
    int rank = -1;
    for (size_t p = 0; p < N_PAPER; p++)
      if (order[i]->c->m == paper_order[p].m && order[i]->c->replicas == paper_order[p].replicas)
        rank = (int)p;
    if (rank < last)
      return 0;
    last = rank;
  }
  return 1;
}

/* "; not simulated (rule 9): ..." naming cs's configurations beyond MAX_REPLICAS, if any. */
static void put_unsimulated(FILE *f, const config *cs, size_t nc)
{
  int k = 0;
  for (size_t c = 0; c < nc; c++)
    if (!simulated(&cs[c])) {
      fputs(k++ ? ", " : "; not simulated (rule 9): ", f);
      put_label(f, &cs[c]);
    }
}

static void put_order(FILE *f, const run *const *order, size_t k)
{
  for (size_t i = 0; i < k; i++) {
    fputs(i ? " < " : "", f);
    put_label(f, order[i]->c);
    if (order[i]->t_target < 0)
      fputs(" (never)", f);
  }
}

/* "yes"/"no" for each of the methods against the GPU: faster to the target. */
static void put_beats_gpu(FILE *f, const run *runs, size_t n, const config *cs, size_t nc, variant v,
                          const run *const *order, size_t k)
{
  const run *gpu = NULL;
  for (size_t c = 0; c < nc; c++)
    if (cs[c].m == M_GPU)
      gpu = chosen(runs, n, &cs[c], v == V_HARDER || v == V_EASIER ? v : V_NONE);
  int any = 0;
  for (size_t i = 0; gpu && i < k; i++) {
    const run *r = order[i];
    if (!distributed(r->c->m))
      continue;
    int beats = r->t_target >= 0 && (gpu->t_target < 0 || r->t_target < gpu->t_target);
    fprintf(f, "%s", any++ ? "; " : "");
    put_label(f, r->c);
    fputs(beats ? ": yes" : ": no", f);
  }
}

static char *fig4_readme(const run *runs, size_t n, const config *cs, size_t nc, const calibration *cal, int quick)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fprintf(f,
          "# Fig. 4 of Dean et al. 2012: held-out accuracy against training time, per optimizer\n\n"
          "Made by `dtsim reproduce fig4%s` from `fig4.ini` (each run adds the `--set` options of its\n"
          "method and rate, and `run.target_accuracy`, the calibrated target). `fig4.csv` holds every\n"
          "run's evaluations (`method,sim_time_h,accuracy`, then `replicas` and `rate`), `fig4.png`\n"
          "draws the chosen rate's curve of each method%s.\n\n",
          quick ? " --quick" : "",
          quick ? "" : ", and `robustness.csv` the robustness table's runs (`method,replicas,rate,variant,"
                       "time_to_target_h,final_accuracy`)");
  put_rules(f, cal);
  fputs("## Results\n\n| method | rate chosen | rates run | time to the target (h) | accuracy at the end | machines |\n"
        "|---|---|---|---|---|---|\n",
        f);
  for (size_t c = 0; c < nc; c++) {
    const run *r = chosen(runs, n, &cs[c], V_NONE);
    if (!simulated(&cs[c])) {
      fputs("| ", f);
      put_label(f, &cs[c]);
      fputs(" | - | - | not simulated (rule 9) | - | - |\n", f);
    }
    if (r == NULL)
      continue;
    int lo, hi;
    rungs_of(runs, n, &cs[c], &lo, &hi);
    fputs("| ", f);
    put_label(f, r->c);
    fprintf(f, " | %s | ", rate_of(r) ? rate_of(r) : "-");
    if (hi >= 0)
      fprintf(f, "%s to %s", ladder[lo], ladder[hi]);
    else
      fputs("-", f);
    fputs(" | ", f);
    put_hours(f, r->t_target);
    fprintf(f, " | %.4f | %ld |\n", r->n ? r->acc[r->n - 1] : r->final_acc, r->hosts);
  }
  const run *order[16];
  size_t k = order_of(runs, n, cs, nc, V_NONE, order);
  fputs("\n## Paper vs dtsim\n\n| claim (Dean et al. 2012, sec. 5) | paper | dtsim |\n|---|---|---|\n"
        "| order, slowest to fastest to the target | ",
        f);
  for (size_t i = 0; i < N_PAPER; i++) {
    fputs(i ? " < " : "", f);
    put_label(f, &paper_order[i]);
  }
  fputs(" | ", f);
  put_order(f, order, k);
  put_unsimulated(f, cs, nc);
  fprintf(f, " |\n| the same order among the configurations simulated | yes | %s |\n",
          paper_ordered(order, k) ? "yes" : "no");
  fputs("| Sandblaster and Downpour-Adagrad faster than the GPU | \"substantially\" | ", f);
  put_beats_gpu(f, runs, n, cs, nc, V_NONE, order, k);
  fputs(" |\n", f);
  /* the robustness table */
  int any = 0;
  for (size_t i = 0; i < n; i++)
    any |= runs[i].v != V_NONE;
  if (any) {
    fputs("\n## Robustness: which assumption moves the order\n\n"
          "Each row reruns the paper's configurations that rule 9 simulates (and the GPU where the change\n"
          "reaches it) at their chosen rates with one assumption changed; the order is slowest to fastest\n"
          "to the target (\"never\": not within the horizon, ranked by final accuracy), and \"the paper's?\"\n"
          "asks whether it keeps the paper's order among them.\n\n"
          "| assumption changed | order | the paper's? | faster than the GPU |\n|---|---|---|---|\n",
          f);
    for (size_t v = 0; v < N_VARIANTS; v++) {
      const run *vo[16], *mixed[16];
      if (v != V_NONE && order_of(runs, n, cs, nc, (variant)v, vo) == 0)
        continue;
      /* configurations a variant does not rerun keep their result as run */
      size_t mk = 0;
      for (size_t p = 0; p < N_PAPER; p++)
        for (size_t c = 0; c < nc; c++)
          if (cs[c].m == paper_order[p].m && cs[c].replicas == paper_order[p].replicas) {
            const run *r = chosen(runs, n, &cs[c], (variant)v);
            r = r ? r : chosen(runs, n, &cs[c], V_NONE);
            if (r)
              mixed[mk++] = r;
          }
      qsort(mixed, mk, sizeof(mixed[0]), slower_first);
      fprintf(f, "| %s | ", variant_names[v]);
      put_order(f, mixed, mk);
      fprintf(f, " | %s | ", paper_ordered(mixed, mk) ? "yes" : "no");
      put_beats_gpu(f, runs, n, cs, nc, (variant)v, mixed, mk);
      fputs(" |\n", f);
    }
    fprintf(f, "\nThe easier and harder targets are %.4f and %.4f (sequential SGD after N*/2 and 2 N* examples).\n",
            cal->easier, cal->harder);
  }
  fclose(f);
  return text;
}

static char *fig5_readme(const run *runs, size_t n, const config *cs, size_t nc, const calibration *cal, int quick)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fprintf(f,
          "# Fig. 5 of Dean et al. 2012: time to a fixed accuracy against machines and utilized cores\n\n"
          "Made by `dtsim reproduce fig5%s` from `fig5.ini` (each run adds the `--set` options of its\n"
          "method, replica count and rate, and `run.target_accuracy`, the calibrated target). Every run\n"
          "stops at the target or at " HORIZON_TEXT " simulated s. `fig5.csv` holds every run\n"
          "(`method,replicas,machines,cores,time_to_target_h,rate`; cores are utilized cores, an empty\n"
          "time: not reached); `fig5.png` plots each point's chosen rate against machines (left) and\n"
          "utilized cores (right), as the paper's Fig. 5.\n\n",
          quick ? " --quick" : "");
  put_rules(f, cal);
  fputs("## Results\n\n| method | replicas | machines | utilized cores | rate chosen | time to the target (h) |\n"
        "|---|---|---|---|---|---|\n",
        f);
  for (size_t c = 0; c < nc; c++) {
    const run *r = chosen(runs, n, &cs[c], V_NONE);
    if (!simulated(&cs[c]))
      fprintf(f, "| %s | %d | - | - | - | not simulated (rule 9) |\n", method_names[cs[c].m], cs[c].replicas);
    if (r == NULL)
      continue;
    fprintf(f, "| %s | %d | %ld | %.0f | %s | ", method_names[r->c->m], r->c->replicas, r->hosts, cores_of(r),
            rate_of(r) ? rate_of(r) : "-");
    put_hours(f, r->t_target);
    fputs(" |\n", f);
  }
  /* the claims, from the chosen runs */
  const run *best = NULL;
  for (size_t c = 0; c < nc; c++) {
    const run *r = chosen(runs, n, &cs[c], V_NONE);
    if (r && r->c->m != M_GPU && cores_of(r) <= 2000 && r->t_target >= 0 && (best == NULL || r->t_target < best->t_target))
      best = r;
  }
  fputs("\n## Paper vs dtsim\n\n| claim (Dean et al. 2012, sec. 5) | paper | dtsim |\n|---|---|---|\n"
        "| fastest to the target with at most 2,000 utilized cores | Downpour with Adagrad | ",
        f);
  if (best) {
    put_label(f, best->c);
    fputs(" (", f);
    put_hours(f, best->t_target);
    fprintf(f, " h, %.0f cores)", cores_of(best));
  } else {
    fputs("none reaches it", f);
  }
  fputs(" |\n| fixed-rate Downpour with many replicas | fails to reach the target, or is slow | ", f);
  int most = 0;
  for (size_t c = 0; c < nc; c++)
    if (cs[c].m == M_DOWNPOUR && simulated(&cs[c]) && cs[c].replicas > most)
      most = cs[c].replicas;
  const run *dp = NULL, *ada = NULL;
  for (size_t c = 0; c < nc; c++) {
    if (cs[c].replicas == most && cs[c].m == M_DOWNPOUR)
      dp = chosen(runs, n, &cs[c], V_NONE);
    if (cs[c].replicas == most && cs[c].m == M_ADAGRAD)
      ada = chosen(runs, n, &cs[c], V_NONE);
  }
  if (dp) {
    fprintf(f, "%d replicas: ", most);
    put_hours(f, dp->t_target);
    if (ada) {
      fputs(" vs Adagrad's ", f);
      put_hours(f, ada->t_target);
    }
  } else {
    fputs("not run", f);
  }
  fputs(" |\n| Sandblaster as cores grow | keeps improving | ", f);
  int first = 1;
  for (size_t c = 0; c < nc; c++) {
    if (cs[c].m != M_SANDBLASTER)
      continue;
    const run *r = chosen(runs, n, &cs[c], V_NONE);
    if (r == NULL) /* --quick runs some configurations only */
      continue;
    fprintf(f, "%s%.0f cores: ", first ? "" : ", ", cores_of(r));
    put_hours(f, r->t_target);
    first = 0;
  }
  fputs(" |\n", f);
  fclose(f);
  return text;
}

/* ---- the plots -------------------------------------------------------------------------- */

static int fig4_plot(const char *dir, const run *runs, size_t n, const config *cs, size_t nc, const calibration *cal,
                     char *err, size_t len)
{
  char *script = NULL;
  size_t slen = 0;
  FILE *f = open_memstream(&script, &slen);
  xbt_assert(f, "open_memstream failed");
  size_t k = 0;
  for (size_t c = 0; c < nc; c++) {
    const run *r = chosen(runs, n, &cs[c], V_NONE);
    if (r == NULL)
      continue;
    fprintf(f, "$c%zu << EOD\n", k++);
    for (size_t i = 0; i < r->n; i++)
      fprintf(f, "%.9g %.9g\n", r->t[i] / 3600, r->acc[i]);
    fputs("EOD\n", f);
  }
  fprintf(f,
          "set terminal pngcairo size 860,560\nset output '%s/.fig4.png.tmp'\nset key bottom right\n"
          "set xlabel 'simulated time (hours)'\nset ylabel 'held-out accuracy of the proxy'\n"
          "set title 'Dean et al. 2012 Fig. 4, simulated by dtsim (target %.4f)'\n"
          "set arrow from graph 0, first %.6f to graph 1, first %.6f nohead dt 2\nplot ",
          dir, cal->target, cal->target, cal->target);
  k = 0;
  for (size_t c = 0; c < nc; c++) {
    const run *r = chosen(runs, n, &cs[c], V_NONE);
    if (r == NULL)
      continue;
    fprintf(f, "%s$c%zu using 1:2 with lines lw 2 title '", k ? ", " : "", k);
    put_label(f, r->c);
    fputs("'", f);
    k++;
  }
  fputs("\n", f);
  fclose(f);
  int rc = reproduce_plot(dir, "fig4", script, err, len);
  free(script);
  return rc;
}

static int fig5_plot(const char *dir, const run *runs, size_t n, const config *cs, size_t nc, char *err, size_t len)
{
  char *script = NULL;
  size_t slen = 0;
  FILE *f = open_memstream(&script, &slen);
  xbt_assert(f, "open_memstream failed");
  int points[M_SANDBLASTER + 1] = {0}, any = 0;
  for (int m = M_SGD; m <= M_SANDBLASTER; m++) {
    fprintf(f, "$m%d << EOD\n", m);
    for (size_t c = 0; c < nc; c++) {
      const run *r = cs[c].m == (method)m ? chosen(runs, n, &cs[c], V_NONE) : NULL;
      if (r && r->t_target >= 0) {
        fprintf(f, "%ld %.9g %.9g\n", r->hosts, cores_of(r), r->t_target / 3600);
        points[m]++;
        any = 1;
      }
    }
    fputs("EOD\n", f);
  }
  fprintf(f,
          "set terminal pngcairo size 1100,480\nset output '%s/.fig5.png.tmp'\nset multiplot layout 1,2 "
          "title 'Dean et al. 2012 Fig. 5, simulated by dtsim: time to the target accuracy'\n"
          "set logscale x\nset key top right\nset ylabel 'hours to the target'\n",
          dir);
  /* gnuplot refuses a plot with no point at all: a method without one is left out, and
   * when no run reached the target the panels are empty frames that say so */
  if (!any)
    fputs("set xrange [1:100000]\nset yrange [0:1]\n"
          "set label 'no run reached the target within the horizon' at graph 0.5, 0.5 center\n",
          f);
  for (int axis = 1; axis <= 2; axis++) {
    fprintf(f, "set xlabel '%s'\nplot ", axis == 1 ? "machines" : "utilized cores");
    int k = 0;
    for (int m = M_SGD; m <= M_SANDBLASTER; m++)
      if (points[m])
        fprintf(f, "%s$m%d using %d:3 with linespoints lw 2 pt 7 title '%s'", k++ ? ", " : "", m, axis,
                method_names[m]);
    fputs(k ? "\n" : "NaN notitle\n", f);
  }
  fputs("unset multiplot\n", f);
  fclose(f);
  int rc = reproduce_plot(dir, "fig5", script, err, len);
  free(script);
  return rc;
}

/* ---- the grid ------------------------------------------------------------------------- */

/* Runs rounds of the rate rule over configurations cs (those --quick runs when quick):
 * first the starting rungs of each (--quick: the middle one only), then, while a
 * configuration's best run is at an end of its rungs, the next rung beyond (full grid only).
 * Appends to *runs; 0 or 2 with err. */
static int run_grid(const reproduce_opts *o, const char *ini, const config *cs, size_t nc, const calibration *cal,
                    run **runs, size_t *n, size_t *cap, char *err, size_t len)
{
  for (int round = 0;; round++) {
    reproduce_job *jobs = xbt_malloc0((nc * START_RUNGS + 1) * sizeof(reproduce_job));
    size_t first = *n, k = 0;
    for (size_t c = 0; c < nc; c++) {
      if ((o->quick && !cs[c].quick) || !simulated(&cs[c]))
        continue;
      int start = cs[c].m == M_ADAGRAD ? ADAGRAD_START : FIXED_START, want[START_RUNGS], nw = 0;
      if (!uses_rate(cs[c].m)) {
        if (round == 0)
          want[nw++] = -1;
      } else if (round == 0) {
        for (int g = o->quick ? 1 : 0; g < (o->quick ? 2 : START_RUNGS); g++)
          want[nw++] = start + g;
      } else if (!o->quick) {
        int lo, hi;
        rungs_of(*runs, *n, &cs[c], &lo, &hi);
        const run *b = chosen(*runs, *n, &cs[c], V_NONE);
        if (b->rung == lo && lo > 0)
          want[nw++] = lo - 1;
        else if (b->rung == hi && hi + 1 < (int)N_RUNGS)
          want[nw++] = hi + 1;
      }
      for (int w = 0; w < nw; w++) {
        if (*n == *cap) {
          *cap = *cap ? 2 * *cap : 64;
          *runs = xbt_realloc(*runs, *cap * sizeof(run));
        }
        run *r = &(*runs)[(*n)++];
        memset(r, 0, sizeof(*r));
        r->c = &cs[c];
        r->rung = want[w];
        describe(&jobs[k], r, cal->target, o->work, *n - 1);
        k++;
      }
    }
    int rc = k ? run_all(o, ini, jobs, *runs + first, k, err, len) : 0;
    xbt_free(jobs);
    if (rc != 0 || k == 0)
      return rc;
  }
}

/* The robustness table's runs: fig4's configurations again at their chosen rates, one
 * assumption changed per variant (each variant reruns the configurations it reaches). */
static int run_robustness(const reproduce_opts *o, const char *ini, const config *cs, size_t nc,
                          const calibration *cal, run **runs, size_t *n, size_t *cap, char *err, size_t len)
{
  reproduce_job *jobs = xbt_malloc0((nc * N_VARIANTS + 1) * sizeof(reproduce_job));
  size_t first = *n, k = 0;
  for (size_t v = V_SHARDS_HALF; v < N_VARIANTS; v++)
    for (size_t c = 0; c < nc; c++) {
      const config *cf = &cs[c];
      if (!simulated(cf))
        continue;
      int reaches = v == V_EASIER || v == V_HARDER || ((v == V_BW_HALF || v == V_BW_DOUBLE) && cf->m != M_GPU) ||
                    ((v == V_SHARDS_HALF || v == V_SHARDS_DOUBLE) && distributed(cf->m)) ||
                    (v == V_SPLIT && (cf->m == M_ADAGRAD && cf->replicas == 20));
      if (!reaches)
        continue;
      const run *b = chosen(*runs, *n, cf, V_NONE);
      if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        *runs = xbt_realloc(*runs, *cap * sizeof(run));
        b = chosen(*runs, *n, cf, V_NONE);
      }
      run *r = &(*runs)[(*n)++];
      memset(r, 0, sizeof(*r));
      r->c = cf;
      r->rung = b->rung;
      r->v = (variant)v;
      double target = v == V_EASIER ? cal->easier : v == V_HARDER ? cal->harder : cal->target;
      describe(&jobs[k++], r, target, o->work, *n - 1);
    }
  int rc = run_all(o, ini, jobs, *runs + first, k, err, len);
  xbt_free(jobs);
  return rc;
}

/* Runs a figure: 0, 1 (--check mismatch) or 2 with err. */
static int reproduce_dean(const reproduce_opts *o, int fig4, char *err, size_t len)
{
  const char *name = fig4 ? "fig4" : "fig5";
  const config *cs = fig4 ? fig4_configs : fig5_configs;
  size_t nc = fig4 ? sizeof(fig4_configs) / sizeof(config) : sizeof(fig5_configs) / sizeof(config);
  char ini_name[32];
  snprintf(ini_name, sizeof(ini_name), "%s.ini", name);
  if (fileio_write(o->work, ini_name, dean_ini, strlen(dean_ini), err, len) != 0)
    return 2;
  calibration cal;
  int robust = fig4 && !o->quick && !o->check;
  int rc = calibrate(o, ini_name, robust, &cal, err, len);
  run *runs = NULL;
  size_t n = 0, cap = 0;
  if (rc == 0)
    rc = run_grid(o, ini_name, cs, nc, &cal, &runs, &n, &cap, err, len);
  if (rc == 0 && robust)
    rc = run_robustness(o, ini_name, cs, nc, &cal, &runs, &n, &cap, err, len);
  char *csv = rc == 0 ? (fig4 ? fig4_csv(runs, n) : fig5_csv(runs, n)) : NULL;
  if (rc == 0 && o->check) {
    char committed[600];
    snprintf(committed, sizeof(committed), "%s/%s.csv", o->out, name);
    /* keys: fig4 method, sim_time_h, replicas, rate; fig5 method, replicas, rate */
    rc = reproduce_check(csv, committed, o->quick, fig4 ? 0x1Bu : 0x23u, err, len);
    if (rc == 0 && !o->quiet)
      fprintf(stderr, "dtsim reproduce: %s matches %s\n", name, committed);
  } else if (rc == 0) {
    char *readme = fig4 ? fig4_readme(runs, n, cs, nc, &cal, o->quick) : fig5_readme(runs, n, cs, nc, &cal, o->quick);
    char *robustness = robust ? robustness_csv(runs, n) : NULL;
    char csv_name[32];
    snprintf(csv_name, sizeof(csv_name), "%s.csv", name);
    const char *files[] = {ini_name, dean_ini, csv_name, csv, "README.md", readme, "robustness.csv", robustness};
    if (reproduce_write(o->out, files, robust ? 4 : 3, err, len) != 0 ||
        (fig4 ? fig4_plot(o->out, runs, n, cs, nc, &cal, err, len) : fig5_plot(o->out, runs, n, cs, nc, err, len)) != 0)
      rc = 2;
    free(readme);
    free(robustness);
    if (rc == 0 && !o->quiet)
      fprintf(stderr, "dtsim reproduce: wrote %s/%s.csv, %s.png, %s.ini, README.md\n", o->out, name, name, name);
  }
  free_runs(runs, n);
  char path[600];
  snprintf(path, sizeof(path), "%s/%s", o->work, ini_name);
  unlink(path);
  free(csv);
  xbt_free(runs);
  return rc;
}

int reproduce_fig4(const reproduce_opts *o, char *err, size_t len)
{
  return reproduce_dean(o, 1, err, len);
}

int reproduce_fig5(const reproduce_opts *o, char *err, size_t len)
{
  return reproduce_dean(o, 0, err, len);
}

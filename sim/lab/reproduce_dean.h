/* reproduce_dean.h - what `dtsim reproduce fig4` and `fig5` (Dean et al. 2012, sec. 5, Figs.
 * 4 and 5) share: the rules' numbers, the configurations' and runs' types, the method that
 * runs a figure's configurations (reproduce_dean.c), the calibration and the rules section
 * (reproduce_dean_rules.c). Each figure (reproduce_fig4.c, reproduce_fig5.c) declares itself
 * to reproduce_frame with these. Private to those files. */
#ifndef SIM_REPRODUCE_DEAN_H
#define SIM_REPRODUCE_DEAN_H

#include <jansson.h>
#include <stddef.h>

#include "sim/lab/reproduce.h"
#include "sim/lab/reproduce_frame.h"

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
#define TEST 20000              /* held-out examples of every evaluation */
#define TEST_TEXT "20000"
#define DIFFICULTY 1.5          /* N* = 1.5 x the examples the SGD baseline processes in the horizon */
#define DIFFICULTY_TEXT "1.5"
#define TIMING_STEPS 3          /* steps of the timing run that measures the baseline's step */
#define ROBUST_MAX_REPLICAS 50  /* the robustness table reruns configurations of at most this many replicas */
#define ROBUST_MAX_REPLICAS_TEXT "50"
#define NOISE_ROWS 100000       /* examples the calibration measures the gradient noise scale on */
#define NOISE_ROWS_TEXT "100,000"
#define NOISE_FACTOR 10         /* rule 2: the noise scale at N* at least this many times BATCH */
#define RISE_SE 10              /* ... and SGD's gain over the horizon at least this many standard errors */
#define CURVATURE_ROWS 4096    /* held-out examples the calibration measures lambda_max on (run.curvature_examples) */
#define CURVATURE_ROWS_TEXT "4,096"
#define STALE_TAU 20            /* rule 2: the staleness the best rate must survive, Downpour's smallest replica count */
#define CAL_EVALS 30            /* evaluations of a calibration run up to N* (N* / 15, N* / 2, N* / 1.5 among them) */

/* Rule 2's candidate proxies, in the order they are tried: the 48-64-10 MLP on the linear
 * teacher with inputs of variance (i + 1)^-decay and labels replaced one time in 1/noise;
 * the first is the ill-conditioned proxy of the earlier rules (the robustness table's). */
typedef struct proxy {
  const char *decay, *noise;
} proxy;
static const proxy proxies[] = {{"2", "0.2"}, {"2", "0.5"},   {"1.5", "0.2"}, {"1.5", "0.5"},
                                {"1", "0.2"}, {"1", "0.5"}, {"0.5", "0.5"}, {"0", "0.5"}};
#define N_PROXIES (sizeof(proxies) / sizeof(proxies[0]))

/* The run store both figures share, beside their results folders (results/dean-runs). */
#define DEAN_STORE "dean-runs"

/* The tables are static: each file has its own copy. */

/* The rate ladder every method climbs: a factor of about 3 (sqrt 10) between rungs. */
static const char *const ladder[] = {"0.001", "0.003", "0.01", "0.03", "0.1", "0.3", "1", "3", "10", "30", "100"};
#define N_RUNGS (sizeof(ladder) / sizeof(ladder[0]))
/* Every rate, fixed or Adagrad's gamma, starts on 0.03 (rung 3), 0.1, 0.3 and climbs from there; the
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

/* What-if rows of the robustness table (fig4 only): each reruns fig4's configurations of at
 * most ROBUST_MAX_REPLICAS replicas with one assumption changed, at their chosen rates; the
 * ill-conditioned proxy's row and the row of the proxy rule 2's noise criteria alone choose
 * (PREV_PROXY), which change the proxy, each with its own target and ladders. */
typedef enum variant {
  V_NONE, V_SHARDS_HALF, V_SHARDS_DOUBLE, V_EASIER, V_HARDER, V_BW_HALF, V_BW_DOUBLE, V_SPLIT, V_ILL, V_PREV
} variant;
/* The candidate rule 2's noise scale and gain alone choose (the proxy before its curvature
 * criterion): proxies[PREV_PROXY], inputs (i + 1)^-1.5, label noise 0.2. */
#define PREV_PROXY 2
/* Whether variant v changes the proxy (its runs climb their ladders again), and the proxy. */
static inline int proxy_variant(variant v) { return v == V_ILL || v == V_PREV; }
static inline size_t proxy_of_variant(variant v, int chosen) { return v == V_ILL ? 0 : v == V_PREV ? PREV_PROXY : (size_t)chosen; }
static const char *const variant_names[] = {
    "as run", "half the shards", "twice the shards", "target after N*/2 examples", "target after 2 N* examples",
    "half the link bandwidth", "twice the link bandwidth", "replicas split over 8 machines",
    "the ill-conditioned proxy (inputs (i + 1)^-2, label noise 0.2)",
    "the proxy of the noise criteria alone (inputs (i + 1)^-1.5, label noise 0.2)"};
#define N_VARIANTS (sizeof(variant_names) / sizeof(variant_names[0]))

/* Every configuration is simulated: Downpour's and Sandblaster's parameter-server bank
 * (algorithm_bank_choose: from 100 whole replicas on the pooled fat tree) makes the 200- and
 * 2,000-replica ones affordable (rule 9). */
static inline int distributed(method m) { return m == M_DOWNPOUR || m == M_ADAGRAD || m == M_SANDBLASTER; }

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
  double *noise;         /* calibration runs: the gradient noise scale at each evaluation */
  double lambda;         /* calibration runs: lambda_max at the last evaluation (NaN: not measured) */
} run;

static inline const char *rate_of(const run *r) { return r->rung >= 0 ? ladder[r->rung] : NULL; }

/* The utilized cores of a run: its core-seconds over the time it ran. */
static inline double cores_of(const run *r) { return r->sim_time > 0 ? r->core_s / r->sim_time : 0; }

/* Rule 2's screening of one candidate proxy: its ladder's best rate at N* and what the
 * criterion reads on that rate's curve. */
typedef struct screened {
  int rung;          /* the best rate's rung */
  double target;     /* its accuracy after N* examples */
  double easier;     /* the best accuracy after N* / 2 */
  double at[4];      /* the best rate's accuracy after N* / 15, N* / 2, N* / 1.5 (the horizon's), N* */
  double noise[4];   /* and its gradient noise scale there */
  double rise_se;    /* (at[2] - at[0]) in standard errors: the SGD baseline's gain over the horizon */
  double lambda[2];  /* lambda_max of the held-out loss at the warmstart and after N* at the best rate */
  double stale;      /* the best rate x the larger of them, against curvature_delay_bound(STALE_TAU) */
  int passes;        /* noise[3] >= NOISE_FACTOR x BATCH, rise_se >= RISE_SE, stale <= the bound */
} screened;

/* What the calibration measured: the baseline's step, N*, the proxy and the targets. */
typedef struct calibration {
  double sgd_step;   /* simulated s of one step of the SGD baseline (8 machines) */
  double gpu_step;   /* and of the GPU's */
  double n_star;     /* examples: DIFFICULTY x the baseline's examples in the horizon */
  long star_steps;   /* n_star / BATCH */
  int proxy;         /* the chosen candidate (proxies[]): the first that passes, else the last */
  size_t n_screened; /* candidates screened: proxies[0 .. n_screened) */
  screened cand[N_PROXIES];
  double target;     /* the chosen proxy's: sequential SGD's accuracy after n_star examples, best rate */
  double easier;     /* after n_star / 2 examples */
  double harder;     /* after 2 n_star (fig4's robustness only; else -1) */
  int rung;          /* the best rate's rung */
  int lo, hi;        /* rungs tried */
  double acc[N_RUNGS];
} calibration;

/* What a figure's simulate() leaves in reproduce_data's state: the calibration and the
 * figure's configurations. */
typedef struct dean_state {
  calibration cal;
  const config *cs;
  size_t nc;
} dean_state;

/* The scenario of every run of both figures (written as fig4.ini and fig5.ini). */
extern const char dean_ini[];

/* ---- the method (reproduce_dean.c) ---------------------------------------------------- */

/* A figure: its configurations, and whether it has the robustness runs (Fig. 4). */
typedef struct dean_figure {
  const config *cs;
  size_t nc;
  int robustness;
} dean_figure;

/* A figure's runs with the calibration cal (robust: the robustness rows too) into *runs[0..*n)
 * (freed by dean_release through the reproduction's data): 0, or 2 with one line in err. */
int dean_run_figure(const reproduce_opts *o, const char *ini, const dean_figure *fig, const calibration *cal,
                    int robust, run **runs, size_t *n, char *err, size_t len);
/* Frees what dean_simulate left in d. */
void dean_release(reproduce_data *d);
/* The chosen run of configuration c in variant v among runs[0..n), or NULL if none ran. */
const run *dean_chosen(const run *runs, size_t n, const config *c, variant v);
/* The lowest and highest rungs configuration c has run in variant v. */
void dean_rungs_of(const run *runs, size_t n, const config *c, variant v, int *lo, int *hi);
/* Reads the evaluations of j's progress.csv into r (t, acc, steps; r owns them): those on the
 * EVAL_EVERY grid when on_grid, else all of them. 0, or -1 with err. */
int dean_read_progress(run *r, const reproduce_job *j, int on_grid, char *err, size_t len);
/* Frees the evaluations of runs[0..n) (not the array). */
void dean_free_runs(run *runs, size_t n);

/* ---- the rules (reproduce_dean_rules.c) ----------------------------------------------- */

/* Both figures' simulate(), the figure being d->r->arg (dean_figure): rule 2's calibration,
 * then dean_run_figure on its targets; the state in d, freed by dean_release. */
int dean_simulate(reproduce_data *d, char *err, size_t len);
/* Rule 2's calibration into cal (robust: the robustness table's targets too): 0 or 2 with err. */
int dean_calibrate(const reproduce_opts *o, const char *ini, int robust, calibration *cal, char *err, size_t len);
/* values["rules"] = templates/dean_rules.md filled from cal: 0, or -1 with one line in err. */
int dean_set_rules(json_t *v, const calibration *cal, char *err, size_t len);
/* The standard error of a held-out accuracy p measured on TEST examples. */
double dean_standard_error(double p);
/* item[key] = hours to the target (s simulated; < 0: "not reached"). */
void dean_set_hours(json_t *item, const char *key, double s);
/* A configuration's name in the tables and plots, in buf (returned). */
const char *dean_label_of(const config *c, char *buf, size_t len);
/* item[key] = dean_label_of(c). */
void dean_set_label(json_t *item, const char *key, const config *c);
/* A new item of both results tables (values["results"]) for configuration c, saying whether
 * it "ran"; *r is its chosen run, or NULL. */
json_t *dean_result_item(json_t *v, const run *runs, size_t n, const config *c, const run **r);

#endif

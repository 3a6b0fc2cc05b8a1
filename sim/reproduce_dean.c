/* reproduce_dean.c - `dtsim reproduce fig4` and `fig5`: Dean et al. 2012, Figs. 4 and 5
 * (Dean et al. 2012, sec. 5): accuracy against time of SGD on 8 partitions, one GPU, Downpour with a
 * fixed rate and with Adagrad, and Sandblaster L-BFGS; then time to a target accuracy
 * against machines and cores. Timing comes from the virtual speech-42m net on the
 * distbelief-2012 (or gpu-2012) preset, accuracy from a small numeric proxy trained for
 * real; every run starts from the same SGD warmstart, and every rate comes from the same
 * grid by the same rule. One simulation per process. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "sim/output.h"
#include "sim/fileio.h"
#include "sim/reproduce.h"

/* The proxy's target: held-out accuracy of the 32-64-10 MLP on the teacher's labels
 * (about 0.81 after the warmstart; 0.88 takes sequential SGD a few hundred steps). */
#define TARGET 0.88
#define TARGET_TEXT "0.88"
#define HORIZON "1800"       /* simulated s every run may take */
#define QUICK_HORIZON "600"  /* --quick: the same runs, cut at 10 min */
#define EVAL_EVERY 30.0      /* simulated s between evaluations */
#define CORES_PER_MACHINE 16 /* distbelief-2012; a gpu-2012 GPU counts as 1 */

static const char dean_ini[] =
    "; dtsim reproduce fig4 / fig5: Dean et al. 2012, Figs. 4 and 5 (optimizers compared).\n"
    "; Each run sets run.algorithm and the method's keys (see the README); fig4's runs also set\n"
    "; run.target_accuracy = 0 to draw whole curves, --quick runs run.max_sim_time = " QUICK_HORIZON ".\n"
    "[run]\n"
    "algorithm = sgd\n"
    "max_sim_time = " HORIZON "      ; s simulated\n"
    "eval_every = 30\n"
    "target_accuracy = " TARGET_TEXT "    ; fig5: time to this held-out accuracy\n"
    "[platform]\n"
    "preset = distbelief-2012   ; gpu: gpu-2012\n"
    "msg_overhead = 0.0003      ; as fig3: s of CPU per message of a split replica\n"
    "[model]\n"
    "type = mlp                 ; the numeric proxy that really trains ...\n"
    "layers = 32,64,10\n"
    "virtual = speech-42m       ; ... timed as DistBelief's 42M-parameter speech net\n"
    "efficiency = 0.12          ; as fig3\n"
    "warmstart_steps = 200      ; every run starts from the same sequential SGD warmstart\n"
    "warmstart_batch = 32\n"
    "warmstart_lr = 0.2\n"
    "[data]\n"
    "source = synthetic-teacher\n"
    "train = 200000\n"
    "test = 5000\n"
    "[sgd]\n"
    "batch = 512\n"
    "partitions = 8             ; gpu: 1\n"
    "[downpour]\n"
    "batch = 512\n"
    "ps_shards = 10\n"
    "[sandblaster]\n"
    "ps_shards = 10\n";

/* One rate grid for every method: sgd.lr, downpour.lr or downpour.adagrad_gamma. */
static const char *const rates[] = {"0.03", "0.1", "0.3", "1"};
static const char *const quick_rates[] = {"0.03", "1"};
#define N_RATES (sizeof(rates) / sizeof(rates[0]))

typedef enum method { M_SGD, M_GPU, M_DOWNPOUR, M_ADAGRAD, M_SANDBLASTER } method;
static const char *const method_names[] = {"sgd", "gpu", "downpour", "downpour-adagrad", "sandblaster"};

/* A configuration: a method and its replica count (sgd: 8 partitions of one replica). */
typedef struct config {
  method m;
  int replicas;
  int quick; /* run by --quick too */
} config;

static const config fig4_configs[] = {
    {M_SGD, 1, 1},      {M_GPU, 1, 1},      {M_DOWNPOUR, 20, 0},
    {M_ADAGRAD, 20, 1}, {M_SANDBLASTER, 125, 0}, {M_ADAGRAD, 200, 0},
};
static const config fig5_configs[] = {
    {M_SGD, 1, 1},          {M_GPU, 1, 1},          {M_DOWNPOUR, 10, 0},     {M_DOWNPOUR, 20, 1},
    {M_DOWNPOUR, 50, 0},    {M_DOWNPOUR, 200, 0},   {M_ADAGRAD, 10, 1},      {M_ADAGRAD, 20, 1},
    {M_ADAGRAD, 50, 0},     {M_ADAGRAD, 200, 0},    {M_SANDBLASTER, 31, 1},  {M_SANDBLASTER, 62, 0},
    {M_SANDBLASTER, 125, 0}, {M_SANDBLASTER, 250, 0},
};

/* One simulation: a configuration at one rate (Sandblaster has none), and its result. */
typedef struct run {
  const config *c;
  const char *rate;       /* NULL for sandblaster */
  double t_target;        /* simulated s to the target; -1: not reached */
  double final_acc;
  long hosts;             /* machines used */
  size_t n;               /* evaluations (fig4) */
  double *t, *acc;
} run;

static int uses_rate(method m)
{
  return m != M_SANDBLASTER;
}

/* The job's sets: the method's keys (at most 6, reproduce_job's capacity). */
static void describe(reproduce_job *j, const run *r, int fig4, int quick, const char *work, size_t index)
{
  const config *c = r->c;
  int n = 0;
#define SET(...) snprintf(j->sets[n++], sizeof(j->sets[0]), __VA_ARGS__)
  switch (c->m) {
  case M_SGD:
    SET("run.algorithm=sgd");
    SET("sgd.lr=%s", r->rate);
    break;
  case M_GPU:
    SET("run.algorithm=sgd");
    SET("platform.preset=gpu-2012");
    SET("sgd.partitions=1");
    SET("sgd.lr=%s", r->rate);
    break;
  case M_DOWNPOUR:
  case M_ADAGRAD:
    SET("run.algorithm=downpour");
    SET("downpour.replicas=%d", c->replicas);
    SET(c->m == M_ADAGRAD ? "downpour.adagrad=on" : "downpour.adagrad=off");
    SET(c->m == M_ADAGRAD ? "downpour.adagrad_gamma=%s" : "downpour.lr=%s", r->rate);
    break;
  case M_SANDBLASTER:
    SET("run.algorithm=sandblaster");
    SET("sandblaster.replicas=%d", c->replicas);
    break;
  }
  if (fig4)
    SET("run.target_accuracy=0");
  if (quick && fig4) /* fig5's --quick runs are whole: their times to the target are the full grid's */
    SET("run.max_sim_time=" QUICK_HORIZON);
#undef SET
  xbt_assert(n <= (int)(sizeof(j->sets) / sizeof(j->sets[0])), "too many sets for one job");
  j->n_sets = n;
  j->may_miss = 1; /* a run that misses the target (or diverges) is a point of the figure */
  snprintf(j->label, sizeof(j->label), "%s x%d%s%s", method_names[c->m], c->replicas, r->rate ? " at rate " : "",
           r->rate ? r->rate : "");
  snprintf(j->dir, sizeof(j->dir), "%s/run-%zu", work, index);
}

/* Reads the run's summary.json and, for fig4, its evaluations on the EVAL_EVERY grid
 * (not the last one a run makes when it stops between two), so that a shorter run's
 * are the first ones of a longer run. */
static int read_run(run *r, const reproduce_job *j, int fig4, char *err, size_t len)
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
  r->hosts = (long)json_integer_value(json_object_get(s, "hosts_used"));
  json_decref(s);
  if (!fig4)
    return 0;
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
  for (const char *p = strchr(text, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
    double t, loss, acc;
    long step;
    if (sscanf(p + 1, "%lf,%ld,%lf,%lf", &t, &step, &loss, &acc) == 4 && fmod(t, EVAL_EVERY) == 0) {
      r->t[r->n] = t;
      r->acc[r->n] = acc;
      if (r->t_target < 0 && acc >= TARGET)
        r->t_target = t;
      r->n++;
    }
  }
  free(text);
  return 0;
}

/* The rule every method's rate is chosen by: the shortest time to the target; if no
 * rate reaches it, the highest final accuracy; ties go to the smaller rate (the grid's
 * order). Returns the chosen run of configuration c among runs[0..n). */
static const run *chosen(const run *runs, size_t n, const config *c)
{
  const run *best = NULL;
  for (size_t i = 0; i < n; i++) {
    const run *r = &runs[i];
    if (r->c != c)
      continue;
    if (best == NULL || (r->t_target >= 0 && (best->t_target < 0 || r->t_target < best->t_target)) ||
        (r->t_target < 0 && best->t_target < 0 && r->final_acc > best->final_acc))
      best = r;
  }
  return best;
}

static long cores_of(const run *r)
{
  return r->c->m == M_GPU ? r->hosts : r->hosts * CORES_PER_MACHINE;
}

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
    for (size_t k = 0; k < runs[i].n; k++)
      fprintf(f, "%s,%.17g,%.17g,%d,%s\n", method_names[runs[i].c->m], runs[i].t[k] / 3600, runs[i].acc[k],
              runs[i].c->replicas, runs[i].rate ? runs[i].rate : "none");
  fclose(f);
  return text;
}

/* fig5.csv: the documented method,replicas,machines,cores,time_to_target_h, then the rate;
 * time_to_target_h is empty when the target was not reached. */
static char *fig5_csv(const run *runs, size_t n)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fputs("method,replicas,machines,cores,time_to_target_h,rate\n", f);
  for (size_t i = 0; i < n; i++) {
    const run *r = &runs[i];
    fprintf(f, "%s,%d,%ld,%ld,", method_names[r->c->m], r->c->replicas, r->hosts, cores_of(r));
    if (r->t_target >= 0)
      fprintf(f, "%.17g", r->t_target / 3600);
    fprintf(f, ",%s\n", r->rate ? r->rate : "none");
  }
  fclose(f);
  return text;
}

/* The common part of both READMEs: the set-up, every choice and its reason. */
static const char dean_setup[] =
    "## Set-up (the same for every method)\n\n"
    "- **Timing**: DistBelief's speech net (`model.virtual = speech-42m`, 41.8M parameters, 6 x 41.8M\n"
    "  flops per example) on the `distbelief-2012` preset (16 cores of 20.8 Gflop/s per machine, 1 GbE,\n"
    "  racks of 40 with 10:1 uplinks), at the Fig. 3 calibration (`model.efficiency = 0.12`,\n"
    "  `platform.msg_overhead = 0.0003`); the GPU baseline on the `gpu-2012` preset (one 1,331 Gflop/s\n"
    "  GPU at the same efficiency). Every message carries the speech net's bytes (fp32).\n"
    "- **Accuracy**: a numeric proxy really trains: a 32-64-10 tanh MLP on 200,000 synthetic examples\n"
    "  labelled by a random teacher network, held-out accuracy on 5,000 more. The target is " TARGET_TEXT ".\n"
    "  The paper's 16% on its speech test set cannot be simulated; the proxy gives the shapes of the\n"
    "  curves real staleness and real updates, not the paper's accuracies or hours.\n"
    "- **Warmstart**: every run starts from the same 200 steps of sequential SGD (batch 32, rate 0.2,\n"
    "  `model.warmstart_steps`), as the paper's runs start from one ~10 h SGD warmstart.\n"
    "- **Methods**: `sgd`: one replica split over 8 machines (`sgd.partitions = 8`; the speech net's\n"
    "  partitions take the time, the proxy takes sequential SGD's steps); `gpu`: one replica on one\n"
    "  GPU; `downpour` and `downpour-adagrad`: R replicas, each on one machine, against 10\n"
    "  parameter-server shards (the paper's example count), n_fetch = n_push = 1; `sandblaster`:\n"
    "  R replicas of one machine each (R x 16 cores), 10 shards, a coordinator, the whole training set\n"
    "  as its batch, portions of 1/(10 R) of it, backup tasks on. SGD-family steps take 512 examples\n"
    "  (the paper does not give its batch size: an assumption).\n"
    "- **Rates, one rule for all**: each method runs every rate of {0.03, 0.1, 0.3, 1} (`sgd.lr`,\n"
    "  `downpour.lr`, or Adagrad's `downpour.adagrad_gamma`) and keeps the one with the shortest time to\n"
    "  the target (if none reaches it, the highest final accuracy; ties to the smaller rate). L-BFGS\n"
    "  needs no rate.\n"
    "- **Deviation from the paper**: a Downpour or Sandblaster replica here is one machine, not a model\n"
    "  split over several: a split replica with a numeric proxy is not built for Downpour yet, and the\n"
    "  all-to-all traffic of split replicas makes hundreds of them too slow to simulate in a\n"
    "  reproduction. So each replica moves all 167 MB of parameters through its own 1 GbE NIC at\n"
    "  every step (1.3 s each way), and the 10 shards' NICs and their rack's uplinks carry every\n"
    "  replica's traffic.\n"
    "- Time is simulated seconds, shown in hours. Each evaluation every 30 simulated s measures the\n"
    "  proxy's held-out accuracy from the parameters at that moment.\n";

/* Why the paper's order does not come out here (both READMEs). */
static const char dean_why[] =
    "\n## Why the paper's order does not come out\n\n"
    "Two things in this set-up work against it:\n\n"
    "1. **Parameter traffic.** Every replica exchanges the whole speech net (2 x 167 MB) at every\n"
    "   step of 512 examples, and 10 shards on 1 GbE in one rack behind 10:1 uplinks serve every\n"
    "   replica: Downpour's steps and Sandblaster's batches wait for the network, not for compute (a\n"
    "   replica's compute is 3.2 s of a step). SGD on 8 partitions and the GPU move no parameters.\n"
    "2. **The proxy needs few examples.** Sequential SGD at rate 1 reaches the target after about\n"
    "   200,000 examples; asynchronous replicas must use smaller rates against staleness and then\n"
    "   need several times more examples. Extra replicas pay off only when a problem needs many\n"
    "   more examples than one worker can process (the paper's speech net trained for days).\n\n"
    "results/README.md (\"Limits of the reproductions\") gives a what-if run of the same configurations on a\n"
    "platform without the first limit (10 GbE, no oversubscription): Sandblaster then reaches the\n"
    "target, Downpour-Adagrad with 200 replicas too, but SGD on 8 machines still arrives first,\n"
    "which is the second limit.\n";

/* The paper's Fig. 4 order, slowest first (Dean et al. 2012, sec. 5 and Fig. 4). */
static const config paper_order[] = {
    {M_SGD, 1, 0}, {M_DOWNPOUR, 20, 0}, {M_ADAGRAD, 20, 0}, {M_SANDBLASTER, 125, 0}, {M_ADAGRAD, 200, 0}};

static const run *find_chosen(const run *runs, size_t n, method m, int replicas)
{
  for (size_t i = 0; i < n; i++)
    if (runs[i].c->m == m && runs[i].c->replicas == replicas)
      return chosen(runs, n, runs[i].c);
  return NULL;
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

static char *fig4_readme(const run *runs, size_t n, const config *cs, size_t nc, int quick)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fprintf(f,
          "# Fig. 4 of Dean et al. 2012: held-out accuracy against training time, per optimizer\n\n"
          "Made by `dtsim reproduce fig4%s` from `fig4.ini` (each run adds the `--set` options of its\n"
          "method and rate, below, and `run.target_accuracy=0` to draw whole curves%s). `fig4.csv` holds\n"
          "every run's evaluations (`method,sim_time_h,accuracy`, then `replicas` and `rate`); `fig4.png`\n"
          "draws the chosen rate's curve of each method.\n\n",
          quick ? " --quick" : "", quick ? "; --quick cuts every run at " QUICK_HORIZON " s" : "");
  fputs("## Results\n\n| method | rate chosen | time to " TARGET_TEXT " (h) | accuracy at the end | machines |\n"
        "|---|---|---|---|---|\n", f);
  const run *order[16];
  size_t k = 0;
  for (size_t c = 0; c < nc && k < 16; c++) {
    const run *r = chosen(runs, n, &cs[c]);
    if (r == NULL)
      continue;
    order[k++] = r;
    fputs("| ", f);
    put_label(f, r->c);
    fprintf(f, " | %s | ", r->rate ? r->rate : "-");
    put_hours(f, r->t_target);
    fprintf(f, " | %.4f | %ld |\n", r->n ? r->acc[r->n - 1] : r->final_acc, r->hosts);
  }
  qsort(order, k, sizeof(order[0]), slower_first);
  fputs("\n## Paper vs dtsim\n\n| claim (Dean et al. 2012, sec. 5) | paper | dtsim |\n|---|---|---|\n"
        "| order, slowest to fastest to the target | ",
        f);
  for (size_t i = 0; i < sizeof(paper_order) / sizeof(paper_order[0]); i++) {
    fputs(i ? " < " : "", f);
    put_label(f, &paper_order[i]);
  }
  fputs(" | ", f);
  for (size_t i = 0; i < k; i++) {
    fputs(i ? " < " : "", f);
    put_label(f, order[i]->c);
    if (order[i]->t_target < 0)
      fputs(" (never)", f);
  }
  const run *gpu = find_chosen(runs, n, M_GPU, 1);
  fputs(" |\n| cluster methods beat the GPU | all of them (Downpour-Adagrad and Sandblaster \"substantially\") | ", f);
  int any = 0;
  for (size_t i = 0; gpu && i < k; i++) {
    const run *r = order[i];
    if (r->c->m == M_GPU || r->c->m == M_SGD)
      continue;
    int beats = r->t_target >= 0 && (gpu->t_target < 0 || r->t_target < gpu->t_target);
    fprintf(f, "%s", any++ ? "; " : "");
    put_label(f, r->c);
    fputs(beats ? ": yes" : ": no", f);
  }
  fputs(" |\n\n", f);
  fputs(dean_setup, f);
  fputs(dean_why, f);
  fclose(f);
  return text;
}

static char *fig5_readme(const run *runs, size_t n, const config *cs, size_t nc, int quick)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fprintf(f,
          "# Fig. 5 of Dean et al. 2012: time to a fixed accuracy against machines and cores\n\n"
          "Made by `dtsim reproduce fig5%s` from `fig5.ini` (each run adds the `--set` options of its\n"
          "method, replica count and rate%s). Every run stops at held-out accuracy " TARGET_TEXT " or at " HORIZON
          " simulated s.\n`fig5.csv` holds every run (`method,replicas,machines,cores,time_to_target_h`, then\n"
          "`rate`; an empty time: not reached); `fig5.png` plots each point's chosen rate. Machines count\n"
          "every host a run uses (replicas, shards, coordinator); cores are machines x 16 (a GPU counts 1).\n\n",
          quick ? " --quick" : "", quick ? "; --quick runs fewer points and rates" : "");
  fputs("## Results\n\n| method | replicas | machines | cores | rate chosen | time to " TARGET_TEXT " (h) |\n"
        "|---|---|---|---|---|---|\n",
        f);
  for (size_t c = 0; c < nc; c++) {
    const run *r = chosen(runs, n, &cs[c]);
    if (r == NULL)
      continue;
    fprintf(f, "| %s | %d | %ld | %ld | %s | ", method_names[r->c->m], r->c->replicas, r->hosts, cores_of(r),
            r->rate ? r->rate : "-");
    put_hours(f, r->t_target);
    fputs(" |\n", f);
  }
  /* the claims, from the chosen runs */
  const run *best = NULL;
  for (size_t c = 0; c < nc; c++) {
    const run *r = chosen(runs, n, &cs[c]);
    if (r && r->c->m != M_GPU && cores_of(r) <= 2000 && r->t_target >= 0 &&
        (best == NULL || r->t_target < best->t_target))
      best = r;
  }
  fputs("\n## Paper vs dtsim\n\n| claim (Dean et al. 2012, sec. 5) | paper | dtsim |\n|---|---|---|\n"
        "| fastest to the target with at most 2,000 cores | Downpour with Adagrad | ",
        f);
  if (best) {
    put_label(f, best->c);
    fputs(" (", f);
    put_hours(f, best->t_target);
    fputs(" h)", f);
  } else {
    fputs("none reaches it", f);
  }
  fputs(" |\n| fixed-rate Downpour with many replicas | fails to reach the target, or is slow | ", f);
  int most = 0;
  for (size_t c = 0; c < nc; c++)
    if (cs[c].m == M_DOWNPOUR && cs[c].replicas > most)
      most = cs[c].replicas;
  const run *dp = find_chosen(runs, n, M_DOWNPOUR, most), *ada = find_chosen(runs, n, M_ADAGRAD, most);
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
    const run *r = chosen(runs, n, &cs[c]);
    if (r == NULL) /* --quick runs some configurations only */
      continue;
    fprintf(f, "%s%ld cores: ", first ? "" : ", ", cores_of(r));
    put_hours(f, r->t_target);
    first = 0;
  }
  fputs(" |\n\n", f);
  fputs(dean_setup, f);
  fputs(dean_why, f);
  fclose(f);
  return text;
}

/* gnuplot inline data blocks: one per chosen curve (fig4) or method (fig5). */
static int fig4_plot(const char *dir, const run *runs, size_t n, const config *cs, size_t nc, char *err, size_t len)
{
  char *script = NULL;
  size_t slen = 0;
  FILE *f = open_memstream(&script, &slen);
  xbt_assert(f, "open_memstream failed");
  size_t k = 0;
  for (size_t c = 0; c < nc; c++) {
    const run *r = chosen(runs, n, &cs[c]);
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
          "set title 'Dean et al. 2012 Fig. 4, simulated by dtsim (target " TARGET_TEXT ")'\n"
          "set arrow from graph 0, first " TARGET_TEXT " to graph 1, first " TARGET_TEXT " nohead dt 2\nplot ",
          dir);
  k = 0;
  for (size_t c = 0; c < nc; c++) {
    const run *r = chosen(runs, n, &cs[c]);
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
  for (int m = M_SGD; m <= M_SANDBLASTER; m++) {
    fprintf(f, "$m%d << EOD\n", m);
    for (size_t c = 0; c < nc; c++) {
      const run *r = cs[c].m == (method)m ? chosen(runs, n, &cs[c]) : NULL;
      if (r && r->t_target >= 0)
        fprintf(f, "%ld %ld %.9g\n", r->hosts, cores_of(r), r->t_target / 3600);
    }
    fputs("EOD\n", f);
  }
  fprintf(f,
          "set terminal pngcairo size 1100,480\nset output '%s/.fig5.png.tmp'\nset multiplot layout 1,2 "
          "title 'Dean et al. 2012 Fig. 5, simulated by dtsim: time to accuracy " TARGET_TEXT "'\n"
          "set logscale x\nset key top right\nset ylabel 'hours to the target'\n",
          dir);
  for (int axis = 1; axis <= 2; axis++) {
    fprintf(f, "set xlabel '%s'\nplot ", axis == 1 ? "machines" : "cores");
    for (int m = M_SGD; m <= M_SANDBLASTER; m++)
      fprintf(f, "%s$m%d using %d:3 with linespoints lw 2 pt 7 title '%s'", m ? ", " : "", m, axis,
              method_names[m]);
    fputs("\n", f);
  }
  fputs("unset multiplot\n", f);
  fclose(f);
  int rc = reproduce_plot(dir, "fig5", script, err, len);
  free(script);
  return rc;
}

/* Runs a figure's grid: 0, 1 (--check mismatch) or 2 with err. */
static int reproduce_dean(const reproduce_opts *o, int fig4, char *err, size_t len)
{
  const char *name = fig4 ? "fig4" : "fig5";
  const config *cs = fig4 ? fig4_configs : fig5_configs;
  size_t nc = fig4 ? sizeof(fig4_configs) / sizeof(config) : sizeof(fig5_configs) / sizeof(config);
  const char *const *grid = o->quick ? quick_rates : rates;
  size_t n_grid = o->quick ? sizeof(quick_rates) / sizeof(quick_rates[0]) : N_RATES;
  char ini_name[32];
  snprintf(ini_name, sizeof(ini_name), "%s.ini", name);
  if (fileio_write(o->work, ini_name, dean_ini, strlen(dean_ini), err, len) != 0)
    return 2;
  run *runs = xbt_malloc0(nc * N_RATES * sizeof(run));
  reproduce_job *jobs = xbt_malloc0(nc * N_RATES * sizeof(reproduce_job));
  size_t n = 0;
  for (size_t c = 0; c < nc; c++) {
    if (o->quick && !cs[c].quick)
      continue;
    for (size_t g = 0; g < (uses_rate(cs[c].m) ? n_grid : 1); g++) {
      runs[n].c = &cs[c];
      runs[n].rate = uses_rate(cs[c].m) ? grid[g] : NULL;
      describe(&jobs[n], &runs[n], fig4, o->quick, o->work, n);
      n++;
    }
  }
  int rc = reproduce_run_jobs(o, ini_name, jobs, n, err, len) == 0 ? 0 : 2;
  for (size_t i = 0; i < n && rc == 0; i++)
    if (read_run(&runs[i], &jobs[i], fig4, err, len) != 0)
      rc = 2;
  char *csv = rc == 0 ? (fig4 ? fig4_csv(runs, n) : fig5_csv(runs, n)) : NULL;
  if (rc == 0 && o->check) {
    char committed[600];
    snprintf(committed, sizeof(committed), "%s/%s.csv", o->out, name);
    /* keys: fig4 method, sim_time_h, replicas, rate; fig5 method, replicas, rate */
    rc = reproduce_check(csv, committed, o->quick, fig4 ? 0x1Bu : 0x23u, err, len);
    if (rc == 0 && !o->quiet)
      fprintf(stderr, "dtsim reproduce: %s matches %s\n", name, committed);
  } else if (rc == 0) {
    char *readme = fig4 ? fig4_readme(runs, n, cs, nc, o->quick) : fig5_readme(runs, n, cs, nc, o->quick);
    char csv_name[32];
    snprintf(csv_name, sizeof(csv_name), "%s.csv", name);
    const char *files[] = {ini_name, dean_ini, csv_name, csv, "README.md", readme};
    if (reproduce_write(o->out, files, 3, err, len) != 0 ||
        (fig4 ? fig4_plot(o->out, runs, n, cs, nc, err, len) : fig5_plot(o->out, runs, n, cs, nc, err, len)) != 0)
      rc = 2;
    free(readme);
    if (rc == 0 && !o->quiet)
      fprintf(stderr, "dtsim reproduce: wrote %s/%s.csv, %s.png, %s.ini, README.md\n", o->out, name, name, name);
  }
  for (size_t i = 0; i < n; i++) {
    reproduce_remove_run(&jobs[i]);
    xbt_free(runs[i].t);
    xbt_free(runs[i].acc);
  }
  char path[600];
  snprintf(path, sizeof(path), "%s/%s", o->work, ini_name);
  unlink(path);
  free(csv);
  xbt_free(jobs);
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

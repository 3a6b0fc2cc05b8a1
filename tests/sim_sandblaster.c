/* sim_sandblaster.c - Sandblaster L-BFGS end to end through the CLI (each simulation
 * in its own process): convergence on logistic and softmax regression, determinism
 * with one and two SimGrid threads, equality with the sequential L-BFGS reference
 * (models/lbfgs.c's lbfgs_net_minimize, run in this process on the same data), the
 * exactness of the batch gradient with stragglers and backup tasks, the traffic of one
 * iteration against lbfgs's command counters, the line-search failure status, and
 * bad input. */
#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli_util.h"
#include "models/data.h"
#include "models/lbfgs.h"
#include "models/minibatch.h"
#include "models/net.h"
#include "models/rng.h"

/* Tolerances and bounds, each with where it comes from (measured: this build; the README's
 * Sandblaster table has the same runs). */
/* SB_GTOL: the sandblaster.gtol the convergence runs ask for: converged means ||g|| at or
 * below it (measured 1.0e-7 logistic, 8.9e-7 softmax). It also bounds where a line search
 * with gtol = 0 gives up (measured 5e-11). */
#define SB_GTOL 1e-6
/* LOGISTIC_ACC_MIN, LOGISTIC_MAX_ITER: about 90% is what a linear model can do on the
 * teacher's labels (chance 50%); measured 0.973 in 17 iterations. */
#define LOGISTIC_ACC_MIN 0.85
#define LOGISTIC_MAX_ITER 60
/* SOFTMAX_ACC_MIN, SOFTMAX_MAX_ITER: chance 25%; measured 0.930 in 52 iterations. */
#define SOFTMAX_ACC_MIN 0.6
#define SOFTMAX_MAX_ITER 100
/* TOL_SUM_REL: totals added in rank order and dots in shard order round by a few u per
 * iteration (measured 2.4e-16 on f); a portion counted twice or lost moves the loss by
 * about 1/16 of a portion's share. */
#define TOL_SUM_REL 1e-12
/* BACKUP_GAIN: backup tasks took the mean batch time to 0.770 of no backups (measured). */
#define BACKUP_GAIN 0.85

/* A tiny full-batch problem: 512 training examples, so that a batch is 16 portions of
 * 32; synthetic-teacher labels (a 16-unit tanh teacher, data.teacher_hidden's default)
 * are not linearly separable, so logistic and softmax regression have a minimum. */
static const char base_ini[] =
    "[run]\nalgorithm = sandblaster\neval_every = 1000\n"
    "[model]\ntype = logistic\nlayers = 8,1\n"
    "[data]\ntrain = 512\ntest = 256\n"
    "[sandblaster]\nreplicas = 4\nps_shards = 3\nportion = 32\npush_every = 2\n";

static const json_t *sb_block(const json_t *j)
{
  const json_t *b = json_object_get(j, "sandblaster");
  ck_assert_ptr_nonnull(b);
  return b;
}

static double sbnum(const json_t *j, const char *key)
{
  return json_number_value(json_object_get(sb_block(j), key));
}

static long command_count(const json_t *j, const char *block, const char *cmd)
{
  return (long)json_integer_value(json_object_get(json_object_get(sb_block(j), block), cmd));
}

/* ---- the sequential reference ------------------------------------------------ */

typedef struct reference {
  lbfgs_result r;
  double test_loss; /* held-out loss at the final iterate, as the evaluator measures it */
} reference;

/* lbfgs_net_minimize on the data and initial parameters a run with this seed uses:
 * sim/engine_numerics.c's engine_numerics_data (synthetic-teacher from rng(seed, DATA, 0), train rows
 * first), minibatch_initial_params, the evaluator's net_evaluate with a workspace of
 * 1024 rows (eval.c), lbfgs's defaults but m, gtol and max_iter. */
static void sequential_reference(const size_t *sizes, net_loss loss, size_t classes, size_t portion, int m,
                                 double gtol, long max_iter, reference *out)
{
  uint64_t seed = 1;
  net *model = net_create(2, sizes, NET_ACT_TANH, loss);
  gsl_rng *r = rng_create(seed, RNG_ROLE_DATA, 0);
  dataset *all = data_synthetic_teacher(512 + 256, sizes[0], 16, classes, r);
  gsl_rng_free(r);
  dataset *train = data_slice(all, 0, 512), *test = data_slice(all, 512, 768);
  gsl_vector *w = minibatch_initial_params(model, seed);
  lbfgs_params p;
  lbfgs_params_default(&p);
  p.m = m;
  p.gtol = gtol;
  p.max_iter = max_iter;
  lbfgs_net_minimize(model, train, portion, &p, w, &out->r);
  net_ws *ws = net_ws_create(model, 1024);
  double acc;
  ck_assert_int_eq(net_evaluate(model, w, test->X, test->y, ws, &out->test_loss, &acc), 0);
  net_ws_free(ws);
  gsl_vector_free(w);
  data_free(all);
  data_free(train);
  data_free(test);
  net_free(model);
}

/* Every double and count the run reports about L-BFGS equals the reference's. */
static void assert_equals_reference(const json_t *j, const reference *ref)
{
  ck_assert_msg(sbnum(j, "f") == ref->r.f, "f %.17g vs %.17g", sbnum(j, "f"), ref->r.f);
  ck_assert_msg(sbnum(j, "gnorm") == ref->r.gnorm, "gnorm %.17g vs %.17g", sbnum(j, "gnorm"), ref->r.gnorm);
  ck_assert_msg(cli_num(j, "final_loss") == ref->test_loss, "held-out loss %.17g vs %.17g", cli_num(j, "final_loss"),
                ref->test_loss);
  ck_assert_int_eq((long)sbnum(j, "iterations"), ref->r.iterations);
  ck_assert_int_eq((long)sbnum(j, "evaluations"), ref->r.evaluations);
  ck_assert_int_eq(command_count(j, "commands", "dot"), ref->r.total.dot);
  ck_assert_int_eq(command_count(j, "commands", "axpy"), ref->r.total.axpy);
  ck_assert_str_eq(json_string_value(json_object_get(sb_block(j), "lbfgs_status")), lbfgs_status_name(ref->r.status));
}

START_TEST(test_sandblaster_equals_sequential)
{
  /* One replica, one shard: the replica computes the portions in order and its running
   * total is lbfgs_net_fdf's sum in its order; the shard's dot is gsl_blas_ddot over
   * the whole vector; so the whole run is the reference's, double for double. The
   * backup machinery is on but has no idle replica to use. */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *sets[] = {"sandblaster.replicas=1", "sandblaster.ps_shards=1", "sandblaster.gtol=1e-7", NULL};
  json_t *j = cli_run_sets(dir, "out", sets, NULL);
  size_t sizes[] = {8, 1};
  reference ref;
  sequential_reference(sizes, NET_LOSS_LOGISTIC, 2, 32, 10, 1e-7, LONG_MAX, &ref);
  ck_assert_int_eq(ref.r.status, LBFGS_CONVERGED);
  ck_assert_int_ge(ref.r.iterations, 5);
  assert_equals_reference(j, &ref);
  json_decref(j);
  free(dir);
}
END_TEST

/* ---- convergence ---------------------------------------------------------------- */

/* Converged (||grad||_2 <= gtol, the stated tolerance) and ok. */
static void assert_converged(const json_t *j, double gtol)
{
  ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "ok");
  ck_assert_str_eq(json_string_value(json_object_get(sb_block(j), "lbfgs_status")), "converged");
  ck_assert_msg(sbnum(j, "gnorm") <= gtol, "gnorm %.3g", sbnum(j, "gnorm"));
  ck_assert_int_eq((long)cli_num(j, "steps"), (long)sbnum(j, "iterations"));
  ck_assert_int_eq((long)cli_num(j, "examples"), 512 * (long)sbnum(j, "evaluations"));
}

START_TEST(test_sandblaster_converges_logistic)
{
  /* 4 replicas, 3 shards, backups on. Chance is 50%; the teacher's labels are not
   * linear, so about 90% is what a linear model can do on them. */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *sets[] = {"sandblaster.gtol=1e-6", NULL};
  json_t *j = cli_run_sets(dir, "out", sets, NULL);
  assert_converged(j, SB_GTOL);
  ck_assert_msg(cli_num(j, "final_accuracy") > LOGISTIC_ACC_MIN, "accuracy %.4f", cli_num(j, "final_accuracy"));
  ck_assert_msg(sbnum(j, "iterations") < LOGISTIC_MAX_ITER, "iterations %.0f", sbnum(j, "iterations"));
  json_decref(j);
  free(dir);
}
END_TEST

START_TEST(test_sandblaster_converges_softmax)
{
  /* Softmax regression on 4 teacher classes (chance 25%), 36 parameters on 3 shards. */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *sets[] = {"model.type=softmax", "model.layers=8,4", "sandblaster.gtol=1e-6", NULL};
  json_t *j = cli_run_sets(dir, "out", sets, NULL);
  assert_converged(j, SB_GTOL);
  ck_assert_msg(cli_num(j, "final_accuracy") > SOFTMAX_ACC_MIN, "accuracy %.4f", cli_num(j, "final_accuracy"));
  ck_assert_msg(sbnum(j, "iterations") < SOFTMAX_MAX_ITER, "iterations %.0f", sbnum(j, "iterations"));
  json_decref(j);
  free(dir);
}
END_TEST

/* ---- stragglers, backup tasks and exactness ---------------------------------------- */

/* A compute-bound set-up: a generated star of 1 Gflop/s single-core hosts (CM02, 2 us
 * links) and efficiency 0.01, so a portion of 32 examples of the 8-1 model (48 flops
 * each) takes 0.15 ms against a few microseconds per message; 2 of the 5 replicas
 * (0.4 x 5) compute 8 times slower. */
static void straggler_setup(const char *dir)
{
  cli_write(dir, "base.ini", base_ini);
  const char *plat[] = {"platform", "--hosts", "16", "--topology", "star", "-o", "star.xml", NULL};
  ck_assert_int_eq(cli_run(dir, plat), 0);
}

#define STRAGGLING "platform.file=star.xml", "model.efficiency=0.01", "sandblaster.replicas=5", \
                   "faults.stragglers=0.4:8"

/* Sums a column of batches.csv over its rows; checks every row's portions and
 * examples: 16 portions, and the whole training set counted, each example once. */
static long batches_total(const char *dir, const char *out, int column, long *rows)
{
  char path[256];
  snprintf(path, sizeof(path), "%s/batches.csv", out);
  char *csv = cli_read(dir, path);
  ck_assert_ptr_nonnull(csv);
  long total = 0;
  *rows = 0;
  for (char *line = strchr(csv, '\n') + 1; *line; line = strchr(line, '\n') + 1) {
    long v[11];
    double t[2];
    int got = sscanf(line, "%ld,%ld,%lf,%lf,%ld,%ld,%ld,%ld,%ld,%ld", &v[0], &v[1], &t[0], &t[1], &v[4], &v[5],
                     &v[6], &v[7], &v[8], &v[9]);
    ck_assert_int_eq(got, 10);
    ck_assert_int_eq(v[4], 16);
    ck_assert_int_eq(v[9], 512);
    ck_assert_int_eq(v[5], 16 + v[6]); /* copies = portions + backups */
    total += v[column];
    (*rows)++;
  }
  free(csv);
  return total;
}

/* Backup tasks did happen and won, and every copy is accounted for: each portion with
 * a backup has exactly one discarded copy (the one that finished second). */
static void assert_backups_worked(const json_t *j, const char *dir, const char *out)
{
  long rows;
  long backups = batches_total(dir, out, 6, &rows), wins = batches_total(dir, out, 7, &rows);
  long discarded = batches_total(dir, out, 8, &rows);
  ck_assert_int_eq(rows, (long)sbnum(j, "evaluations"));
  ck_assert_msg(backups > 0 && wins > 0, "backups %ld, wins %ld", backups, wins);
  ck_assert_int_eq(discarded, backups);
  ck_assert_int_eq((long)sbnum(j, "backups"), backups);
  ck_assert_int_eq(json_array_size(json_object_get(sb_block(j), "stragglers")), 2);
}

START_TEST(test_sandblaster_backups_exact)
{
  /* The gradient of every batch must be the full-batch gradient exactly, with
   * stragglers and backup copies racing. Gradients of real data are not exactly
   * representable, so a sum's rounding depends on its order; with exact_sum the shards
   * keep each counted portion's gradient and add them in portion order, as
   * lbfgs_net_fdf does, and one shard makes the dots the reference's too. Then any
   * portion counted twice or lost, or a gradient from the wrong parameters, would change
   * some double of the trajectory: the whole run must equal the sequential reference
   * bit for bit, while batches.csv shows backups winning and every example counted once
   * per batch. */
  char *dir = cli_tmpdir();
  straggler_setup(dir);
  const char *sets[] = {STRAGGLING, "sandblaster.ps_shards=1", "sandblaster.exact_sum=on", NULL};
  json_t *j = cli_run_sets(dir, "out", sets, NULL);
  size_t sizes[] = {8, 1};
  reference ref;
  sequential_reference(sizes, NET_LOSS_LOGISTIC, 2, 32, 10, 1e-5, LONG_MAX, &ref);
  assert_equals_reference(j, &ref);
  assert_backups_worked(j, dir, "out");
  json_decref(j);
  free(dir);
}
END_TEST

/* lbfgs_net_fdf's f at the initial parameters (the reference's first batch). */
static double reference_f0(void)
{
  size_t sizes[] = {8, 1};
  net *model = net_create(2, sizes, NET_ACT_TANH, NET_LOSS_LOGISTIC);
  gsl_rng *r = rng_create(1, RNG_ROLE_DATA, 0);
  dataset *all = data_synthetic_teacher(768, 8, 16, 2, r);
  dataset *train = data_slice(all, 0, 512);
  gsl_vector *w = minibatch_initial_params(model, 1), *g = gsl_vector_alloc(w->size);
  lbfgs_net *ln = lbfgs_net_create(model, train, 32);
  double f;
  ck_assert_int_eq(lbfgs_net_fdf(ln, w, &f, g), 0);
  lbfgs_net_free(ln);
  gsl_vector_free(w);
  gsl_vector_free(g);
  gsl_rng_free(r);
  data_free(all);
  data_free(train);
  net_free(model);
  return f;
}

START_TEST(test_sandblaster_backups_sum)
{
  /* The default mode, accumulated pushes, with 3 shards: replicas' totals are added in
   * rank order and the dots in shard order, so the trajectory matches the reference
   * only to rounding (TOL_SUM_REL: a portion counted twice or lost would move the
   * loss by about 1/16 of a portion's share). The loss, added at the coordinator in
   * portion order, is exact: the first batch's must be the reference's f(x_0). */
  char *dir = cli_tmpdir();
  straggler_setup(dir);
  const char *sets[] = {STRAGGLING, NULL};
  json_t *j = cli_run_sets(dir, "out", sets, NULL);
  size_t sizes[] = {8, 1};
  reference ref;
  sequential_reference(sizes, NET_LOSS_LOGISTIC, 2, 32, 10, 1e-5, LONG_MAX, &ref);
  ck_assert_msg(fabs(sbnum(j, "f") - ref.r.f) <= TOL_SUM_REL * ref.r.f, "f %.17g vs %.17g", sbnum(j, "f"), ref.r.f);
  ck_assert_int_eq((long)sbnum(j, "iterations"), ref.r.iterations);
  char *csv = cli_read(dir, "out/batches.csv");
  double f0 = 0;
  ck_assert_int_eq(sscanf(strchr(csv, '\n') + 1, "%*d,%*d,%*g,%*g,%*d,%*d,%*d,%*d,%*d,%*d,%lf", &f0), 1);
  ck_assert_msg(f0 == reference_f0(), "f(x_0) %.17g vs %.17g", f0, reference_f0());
  free(csv);
  assert_backups_worked(j, dir, "out");
  json_decref(j);
  free(dir);
}
END_TEST

START_TEST(test_sandblaster_backups_faster)
{
  /* Two of 5 replicas 8 times slower: without backups a batch waits for their last
   * portions; with them, idle replicas redo those and the batch ends sooner. */
  char *dir = cli_tmpdir();
  straggler_setup(dir);
  const char *on[] = {STRAGGLING, "run.max_steps=5", NULL};
  const char *off[] = {STRAGGLING, "run.max_steps=5", "sandblaster.backups=off", NULL};
  json_t *a = cli_run_sets(dir, "on", on, NULL), *b = cli_run_sets(dir, "off", off, NULL);
  double t_on = sbnum(a, "batch_time_mean_s"), t_off = sbnum(b, "batch_time_mean_s");
  ck_assert_msg(t_on < BACKUP_GAIN * t_off, "mean batch time %.6g s with backups, %.6g s without", t_on, t_off);
  ck_assert_int_eq((long)sbnum(b, "backups"), 0);
  ck_assert_int_eq((long)sbnum(b, "discarded"), 0);
  json_decref(a);
  json_decref(b);
  free(dir);
}
END_TEST

/* ---- determinism ---------------------------------------------------------------- */

START_TEST(test_sandblaster_determinism)
{
  /* With stragglers and backup copies racing, one and two SimGrid threads give the
   * same bytes in every result file; another seed (other data, start and stragglers)
   * gives other results. */
  char *dir = cli_tmpdir();
  straggler_setup(dir);
  const char *sets[] = {STRAGGLING, "run.eval_every=0.001", NULL};
  const char *other[] = {STRAGGLING, "run.eval_every=0.001", "run.seed=2", NULL};
  json_decref(cli_run_sets(dir, "a", sets, NULL));
  json_decref(cli_run_sets(dir, "b", sets, "--cfg=contexts/nthreads:2"));
  json_decref(cli_run_sets(dir, "c", other, NULL));
  const char *files[] = {"summary.json", "progress.csv", "batches.csv", "links.csv", "staleness.csv"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char pa[64], pb[64], pc[64];
    snprintf(pa, sizeof pa, "a/%s", files[i]);
    snprintf(pb, sizeof pb, "b/%s", files[i]);
    snprintf(pc, sizeof pc, "c/%s", files[i]);
    char *x = cli_read(dir, pa), *y = cli_read(dir, pb), *z = cli_read(dir, pc);
    ck_assert_msg(x && y && z, "%s missing", files[i]);
    ck_assert_msg(strcmp(x, y) == 0, "%s differs with two threads", files[i]);
    if (i < 3)
      ck_assert_msg(strcmp(x, z) != 0, "%s is the same with another seed", files[i]);
    if (i == 1)
      ck_assert_msg(cli_lines(x) > 5, "progress.csv has %d lines", cli_lines(x));
    free(x);
    free(y);
    free(z);
  }
  free(dir);
}
END_TEST

/* ---- traffic ------------------------------------------------------------------- */

START_TEST(test_sandblaster_iteration_traffic)
{
  /* One iteration of an 8-1 logistic model (n = 9 parameters, fp32) on 1 replica and
   * S = 2 shards (slices of 5 and 4), 64 examples in P = 2 portions, push_every = 2.
   * Commands: lbfgs.c's header gives the first iteration's counts with k = 0 pairs and
   * t trial points: dot 4 (+1, g.g at x_0), axpy t + 2, scale 1, copy t + 5, and 1 + t
   * evaluations. Each command is one message to each shard and one answer, H = 64
   * header bytes each; axpy and scale carry their coefficient (8 bytes), a dot's answer
   * its partial sum (8): 2H + 8 per shard for dot, axpy, scale, 2H for copy.
   * Each evaluation (batch): the coordinator hands portion 0 to the idle replica (H);
   * the replica fetches x (S requests H, S replies H + 4 x slice: 2SH + 4n); reports
   * portion 0 (H + 16: its id and loss) and gets portion 1 (H, no verdict: it holds 1 <
   * push_every and a fresh portion is left); reports both (H + 32), gets the verdict
   * with no further work (H + 2 flags); pushes its total (S x H + 4n); the coordinator
   * asks each shard to sum and each answers (2SH). That is 5H + 50 + 5SH + 8n. At the
   * end, MSG_STOP to the replica and the shards: H + SH. */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *sets[] = {"sandblaster.replicas=1", "sandblaster.ps_shards=2", "data.train=64", "run.max_steps=1", NULL};
  json_t *j = cli_run_sets(dir, "out", sets, NULL);
  long H = 64, S = 2, n = 9, E = (long)sbnum(j, "evaluations"), t = E - 1;
  ck_assert_int_eq((long)sbnum(j, "iterations"), 1);
  ck_assert_int_ge(t, 1);
  ck_assert_int_eq(command_count(j, "commands", "dot"), 5);
  ck_assert_int_eq(command_count(j, "commands", "axpy"), t + 2);
  ck_assert_int_eq(command_count(j, "commands", "scale"), 1);
  ck_assert_int_eq(command_count(j, "commands", "copy"), t + 5);
  ck_assert_int_eq(command_count(j, "commands", "evaluate"), E);
  long commands = (5 + (t + 2) + 1) * S * (2 * H + 8) + (t + 5) * S * 2 * H;
  long batch = 5 * H + 50 + 5 * S * H + 8 * n;
  double bytes = json_number_value(json_object_get(json_object_get(j, "comm"), "bytes_total"));
  ck_assert_msg(bytes == (double)(commands + E * batch + H + S * H), "bytes %.17g, expected %ld", bytes,
                commands + E * batch + H + S * H);
  json_decref(j);
  free(dir);
}
END_TEST

/* ---- statuses and bad input -------------------------------------------------------- */

START_TEST(test_sandblaster_linesearch_failure)
{
  /* gtol = 0 asks for a gradient norm below what f's rounding lets L-BFGS see: it
   * ends with no point of strict decrease (lbfgs.c, line_search), which is the run's
   * failure: status linesearch_failed, exit 1, results written. */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *args[] = {"run", "base.ini", "--quiet", "--out", "out", "--set", "sandblaster.gtol=0", NULL};
  ck_assert_int_eq(cli_run(dir, args), 1);
  char *summary = cli_read(dir, "out/summary.json");
  ck_assert_ptr_nonnull(summary);
  json_t *j = json_loads(summary, 0, NULL);
  ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "linesearch_failed");
  ck_assert_str_eq(json_string_value(json_object_get(sb_block(j), "lbfgs_status")), "linesearch_failed");
  ck_assert_msg(sbnum(j, "gnorm") < SB_GTOL, "gnorm %.3g", sbnum(j, "gnorm"));
  json_decref(j);
  free(summary);
  free(dir);
}
END_TEST

/* dtsim run base.ini --out o --set SETS...: exit 2, one line on stderr naming `key`,
 * no result folder. */
static void assert_rejected(const char *dir, const char *const *sets, const char *key)
{
  const char *args[32] = {"run", "base.ini", "--out", "o"};
  int n = 4;
  for (int i = 0; sets[i]; i++) {
    args[n++] = "--set";
    args[n++] = sets[i];
  }
  args[n] = NULL;
  ck_assert_int_eq(cli_run(dir, args), 2);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(strstr(err, key) != NULL, "no %s in: %s", key, err);
  ck_assert_int_eq(cli_lines(err), 1);
  ck_assert(!cli_exists(dir, "o"));
  free(err);
}

START_TEST(test_sandblaster_bad_input)
{
  char *dir = cli_tmpdir();
  straggler_setup(dir);
  const char *malformed[] = {"faults.stragglers=0.5", NULL};
  assert_rejected(dir, malformed, "faults.stragglers");
  const char *slowdown[] = {"faults.stragglers=0.5:0.5", NULL};
  assert_rejected(dir, slowdown, "faults.stragglers");
  /* other algorithms accept stragglers too since [faults] (sim_faults) */
  const char *timing[] = {"model.numerics=off", NULL};
  assert_rejected(dir, timing, "model.numerics");
  const char *shards[] = {"sandblaster.ps_shards=10", NULL}; /* 9 parameters */
  assert_rejected(dir, shards, "sandblaster.ps_shards");
  const char *hosts[] = {"platform.file=star.xml", "sandblaster.replicas=15", NULL}; /* 15 + 3 + 1 > 16 */
  assert_rejected(dir, hosts, "sandblaster.replicas x sandblaster.partitions + sandblaster.ps_shards + 1");
  const char *backup[] = {"sandblaster.backup_at=2", NULL};
  assert_rejected(dir, backup, "sandblaster.backup_at");
  const char *exact[] = {"sandblaster.partitions=2", "sandblaster.exact_sum=on", NULL};
  assert_rejected(dir, exact, "sandblaster.exact_sum");
  free(dir);
}
END_TEST

/* Split replicas (sandblaster.partitions): one replica of the speech net on 4 machines
 * computes exactly the whole replica's batch gradients (its machines push disjoint parts
 * of one running total; the numeric model trains as a proxy), so L-BFGS takes the same
 * iterates, in a third of the simulated time; 3 split replicas on spread shards agree to
 * rounding (their totals are added in another order). */
START_TEST(test_sandblaster_split)
{
  char *dir = cli_tmpdir();
  static const char ini[] = "[run]\nalgorithm = sandblaster\nmax_steps = 8\neval_every = 1e9\nmax_sim_time = 3600\n"
                            "[model]\ntype = mlp\nlayers = 16,24,4\nvirtual = speech-42m\nefficiency = 0.25\n"
                            "[data]\ntrain = 2048\ntest = 500\n[platform]\nmsg_overhead = 0.0002\n"
                            "[sandblaster]\nreplicas = 1\nps_shards = 3\nportion = 256\n";
  cli_write(dir, "split.ini", ini);
  const char *one[] = {"run", "split.ini", "--quiet", "--out", "one", NULL};
  const char *four[] = {"run", "split.ini", "--quiet", "--out", "four", "--set", "sandblaster.partitions=4", NULL};
  const char *three[] = {"run", "split.ini", "--quiet", "--out", "three", "--set", "sandblaster.partitions=4",
                         "--set", "sandblaster.replicas=3", "--set", "sandblaster.ps_placement=spread", NULL};
  json_t *a = cli_summary(dir, one, "one"), *b = cli_summary(dir, four, "four"), *c = cli_summary(dir, three, "three");
  ck_assert_msg(cli_num(a, "final_loss") == cli_num(b, "final_loss"), "loss %.17g vs %.17g", cli_num(a, "final_loss"),
                cli_num(b, "final_loss"));
  ck_assert_int_eq((long)cli_num(b, "steps"), 8);
  ck_assert_msg(cli_num(b, "sim_time_s") < cli_num(a, "sim_time_s") / 2, "4 machines %.6g s, 1 machine %.6g s",
                cli_num(b, "sim_time_s"), cli_num(a, "sim_time_s"));
  ck_assert_double_eq_tol(cli_num(c, "final_loss"), cli_num(a, "final_loss"), TOL_SUM_REL * cli_num(a, "final_loss"));
  ck_assert_int_eq((long)cli_num(c, "hosts_used"), 3 * 4 + 3 + 1);
  json_decref(a);
  json_decref(b);
  json_decref(c);
  free(dir);
}
END_TEST

START_TEST(test_sandblaster_listed)
{
  /* dtsim list names the algorithm; list keys documents both new sections. */
  char *dir = cli_tmpdir();
  const char *list[] = {"list", NULL};
  ck_assert_int_eq(cli_run(dir, list), 0);
  char *out = cli_read(dir, "stdout");
  ck_assert_ptr_nonnull(strstr(out, "algorithm  sandblaster "));
  free(out);
  const char *keys[] = {"list", "keys", NULL};
  ck_assert_int_eq(cli_run(dir, keys), 0);
  out = cli_read(dir, "stdout");
  ck_assert_ptr_nonnull(strstr(out, "**[sandblaster]**"));
  ck_assert_ptr_nonnull(strstr(out, "| `sandblaster.push_every` | `4` | portions |"));
  ck_assert_ptr_nonnull(strstr(out, "**[faults]**"));
  ck_assert_ptr_nonnull(strstr(out, "| `faults.stragglers` | (empty) |"));
  free(out);
  free(dir);
}
END_TEST

static Suite *sandblaster_suite(void)
{
  Suite *s = suite_create("sandblaster");
  TCase *tc = tcase_create("converges");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_sandblaster_converges_logistic);
  tcase_add_test(tc, test_sandblaster_converges_softmax);
  suite_add_tcase(s, tc);
  tc = tcase_create("sequential");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_sandblaster_equals_sequential);
  suite_add_tcase(s, tc);
  tc = tcase_create("backups");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_sandblaster_backups_exact);
  tcase_add_test(tc, test_sandblaster_backups_sum);
  tcase_add_test(tc, test_sandblaster_backups_faster);
  suite_add_tcase(s, tc);
  tc = tcase_create("determinism");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_sandblaster_determinism);
  suite_add_tcase(s, tc);
  tc = tcase_create("traffic");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_sandblaster_iteration_traffic);
  suite_add_tcase(s, tc);
  tc = tcase_create("split");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_sandblaster_split);
  suite_add_tcase(s, tc);
  tc = tcase_create("limits");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_sandblaster_linesearch_failure);
  tcase_add_test(tc, test_sandblaster_bad_input);
  tcase_add_test(tc, test_sandblaster_listed);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(sandblaster_suite)

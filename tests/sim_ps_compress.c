/* sim_ps_compress.c - Downpour's compressed pushes (downpour.compress) end to end through
 * the CLI: one replica with top-k equals a serial computation here of the same algorithm
 * with a selection of its own; each method's bytes per push equal its formula and the
 * network carries exactly them; the compression's flops are executed on the replica's host
 * and the decoding's on the shard's, in the formulas' proportions; compress = none writes
 * the default run's files; faults, determinism, and the refusals. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "topk_ref.h"
#include "cli_util.h"
#include "models/data.h"
#include "models/minibatch.h"
#include "models/net.h"
#include "models/optim.h"
#include "models/rng.h"

static const char base_ini[] =
    "[run]\nalgorithm = downpour\nmax_steps = 40\neval_every = 0.01\nmax_sim_time = 3600\n"
    "[model]\nlayers = 16,32,4\n"
    "[data]\ntrain = 4000\ntest = 1000\n"
    "[downpour]\nreplicas = 1\nps_shards = 2\nadagrad = off\nlr = 0.1\nbatch = 8\n";

/* TOL_SAME: the run and its serial computation do the same operations on the same numbers in
 * the same order (the shards' slices are disjoint, one replica waits for each push), so the
 * final losses are equal: tolerance 0. */
#define TOL_SAME 0.0
/* TOL_FLOPS: the ratios of execution times below hold in flops exactly; the times are
 * differences of SimGrid's clock (about 0.3 s, its ulp 5.6e-17) over executions of
 * milliseconds, each rounded: measured within 8.3e-14 relative, 1e-9 allows for it. */
#define TOL_FLOPS 1e-9
/* The layers 16,32,4: 16 x 32 + 32 + 32 x 4 + 4 = 676 parameters. */
#define N_PARAMS 676
#define RATIO 0.1
#define MOMENTUM 0.5
#define WARMUP 8

/* DGC's warm-up density at step (Lin et al. sec. 3.3), written out: a quarter of the
 * warm-up each at 1/4, 1/16, 1/64, 1/256, never below the ratio. */
static double density(long step)
{
  if (step >= WARMUP)
    return RATIO;
  double d = pow(0.25, (double)(step * 4 / WARMUP + 1));
  return d > RATIO ? d : RATIO;
}

/* One replica, two shards (slices [0, 338) and [338, 676)), fixed-rate SGD at 0.1, top-k
 * with DGC's momentum correction and warm-up, serially: per step the gradient at w; per
 * slice the velocity u = m u + g, the residual e += u, the top k of e sent (e and u cleared
 * there); the shard applies w -= lr d, d the sent entries and 0 elsewhere. Returns the
 * held-out loss after `steps` steps, the run's set-up as the CLI builds it (seed 1). */
static double serial_topk(long steps)
{
  size_t sizes[] = {16, 32, 4};
  net *model = net_create(3, sizes, NET_ACT_TANH, NET_LOSS_SOFTMAX);
  gsl_rng *dr = rng_create(1, RNG_ROLE_DATA, 0);
  dataset *all = data_synthetic_teacher(5000, 16, 16, 4, dr), *train = data_slice(all, 0, 4000),
          *test = data_slice(all, 4000, 5000);
  gsl_rng_free(dr);
  minibatch *mb = minibatch_create(model, train, 0, 4000, 8, 1, 0);
  gsl_vector *w = minibatch_initial_params(model, 1), *g = gsl_vector_alloc(N_PARAMS);
  ck_assert_uint_eq(w->size, N_PARAMS);
  double u[N_PARAMS] = {0}, e[N_PARAMS] = {0}, d[N_PARAMS];
  unsigned char mark[N_PARAMS];
  for (long step = 0; step < steps; step++) {
    ck_assert_int_eq(minibatch_gradient(mb, w, g, NULL), 0);
    for (size_t b = 0; b < N_PARAMS; b += N_PARAMS / 2) {
      size_t n = N_PARAMS / 2, k = (size_t)ceil(density(step) * (double)n);
      for (size_t i = b; i < b + n; i++) {
        u[i] = MOMENTUM * u[i] + g->data[i];
        e[i] += u[i];
      }
      topk_ref(e + b, n, k, mark);
      for (size_t i = 0; i < n; i++) {
        d[b + i] = mark[i] ? e[b + i] : 0;
        if (mark[i])
          e[b + i] = u[b + i] = 0;
      }
      optim_sgd_apply(w->data + b, d + b, n, 0.1);
    }
  }
  double loss, acc;
  net_ws *ws = net_ws_create(model, 1024);
  ck_assert_int_eq(net_evaluate(model, w, test->X, test->y, ws, &loss, &acc), 0);
  net_ws_free(ws);
  gsl_vector_free(w);
  gsl_vector_free(g);
  minibatch_free(mb);
  data_free(train);
  data_free(test);
  data_free(all);
  net_free(model);
  return loss;
}

START_TEST(test_topk_equals_serial)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *sets[] = {"downpour.compress=topk", "downpour.compress_ratio=0.1", "downpour.compress_momentum=0.5",
                        "downpour.compress_warmup=8", NULL};
  json_t *j = cli_run_sets(dir, "topk", sets, NULL);
  ck_assert_int_eq((long)cli_num(j, "steps"), 40);
  double got = cli_num(j, "final_loss"), want = serial_topk(40);
  ck_assert_msg(fabs(got - want) <= TOL_SAME, "topk %.17g, serial %.17g", got, want);
  json_decref(j);
  free(dir);
}
END_TEST

static double block_num(const json_t *j, const char *block, const char *key)
{
  return json_number_value(json_object_get(json_object_get(j, block), key));
}

/* 2 replicas, 3 shards (slices of 226, 225 and 225 of the 676 parameters), 10 steps each, a
 * push a step: 20 pushes. Per push, by each method's formula at 4 bytes a value:
 *  top-k 5%: ceil(0.05 x 226) = ceil(11.3) = 12, ceil(11.25) = 12, 12: 36 x (4 + 4) = 288;
 *  1-bit: ceil(226 / 8) + ceil(225 / 8) x 2 = 29 x 3 = 87, and 2 scales a slice: 87 + 24 = 111;
 *  QSGD s = 7: 1 + ceil(log2 8) = 4 bits an entry, ceil(904 / 8) = 113, ceil(900 / 8) = 113 x 2,
 *  and a norm a slice: 339 + 12 = 351;
 *  dense 676 x 4 = 2,704. Fetches and every other message are the same, so the network
 *  carries 20 x (2,704 - compressed) bytes fewer than the dense run. */
START_TEST(test_push_bytes)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  static const char *const method[] = {"downpour.compress=topk", "downpour.compress=onebit", "downpour.compress=qsgd"};
  static const double want[] = {288, 111, 351};
  const char *dense_sets[] = {"downpour.replicas=2", "downpour.ps_shards=3", "run.max_steps=10", NULL};
  json_t *dense = cli_run_sets(dir, "dense", dense_sets, NULL);
  ck_assert_int_eq((long)cli_num(dense, "steps"), 20);
  double dense_total = block_num(dense, "comm", "bytes_total");
  for (size_t m = 0; m < 3; m++) {
    const char *sets[] = {"downpour.replicas=2", "downpour.ps_shards=3", "run.max_steps=10", method[m],
                          "downpour.compress_ratio=0.05", "downpour.compress_levels=7", NULL};
    json_t *j = cli_run_sets(dir, "z", sets, NULL);
    ck_assert_int_eq((long)cli_num(j, "steps"), 20);
    ck_assert_msg(block_num(j, "downpour", "bytes_per_push") == want[m], "%s: %.17g bytes a push", method[m],
                  block_num(j, "downpour", "bytes_per_push"));
    ck_assert(block_num(j, "downpour", "dense_bytes_per_push") == N_PARAMS * 4);
    double saved = dense_total - block_num(j, "comm", "bytes_total");
    ck_assert_msg(saved == 20 * (N_PARAMS * 4 - want[m]), "%s: %.17g bytes fewer", method[m], saved);
    json_decref(j);
  }
  /* timing only: the same messages' sizes, without their values */
  const char *off[] = {"downpour.replicas=2", "downpour.ps_shards=3", "run.max_steps=10", "downpour.compress=topk",
                       "downpour.compress_ratio=0.05", "model.numerics=off", NULL};
  json_t *j = cli_run_sets(dir, "off", off, NULL);
  ck_assert(dense_total - block_num(j, "comm", "bytes_total") == 20 * (N_PARAMS * 4 - want[0]));
  json_decref(j);
  json_decref(dense);
  free(dir);
}
END_TEST

/* A role's actor's compute_s in OUT/breakdown.csv (actor,role,host,compute_s,...). */
static double compute_s(const char *dir, const char *out, const char *actor)
{
  char path[256], *csv;
  snprintf(path, sizeof path, "%s/breakdown.csv", out);
  csv = cli_read(dir, path);
  char key[64];
  snprintf(key, sizeof key, "\n%s,", actor);
  const char *row = strstr(csv, key);
  ck_assert_msg(row != NULL, "no %s in %s", actor, path);
  double t = -1;
  const char *c = row + 1;
  for (int f = 0; f < 3; f++)
    c = strchr(c, ',') + 1;
  ck_assert_int_eq(sscanf(c, "%lf", &t), 1);
  free(csv);
  return t;
}

/* Timing only, speech-42m (41,777,152 parameters) over 2 shards: slices of n = 20,888,576,
 * top-k 1% k = 208,886, L = log2(k + 1). One replica, 2 steps, so 2 pushes of 2 slices.
 * The replica's extra compute time over the dense run is its encoding: top-k n (1 + L) a
 * slice, with momentum n (3 + L), 1-bit 4 n; a shard's is its decoding, 1-bit n a push. So
 * top-k with momentum / top-k = (3 + L) / (1 + L), 1-bit / top-k = 4 / (1 + L), and a
 * shard's 1-bit time / the replica's = (2 n) / (2 x 2 x 4 n) = 1/8. */
START_TEST(test_compression_flops)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  static const char *const runs[] = {"dense", "topk", "topkm", "onebit"};
  static const char *const method[] = {"downpour.compress=none", "downpour.compress=topk", "downpour.compress=topk",
                                       "downpour.compress=onebit"};
  double rep[4], ps[4];
  for (size_t r = 0; r < 4; r++) {
    const char *sets[] = {"model.numerics=off", "model.virtual=speech-42m", "run.max_steps=2", method[r],
                          r == 2 ? "downpour.compress_momentum=0.5" : "downpour.compress_momentum=0", NULL};
    json_decref(cli_run_sets(dir, runs[r], sets, NULL));
    rep[r] = compute_s(dir, runs[r], "replica-0");
    ps[r] = compute_s(dir, runs[r], "ps-0");
  }
  double L = log2(208886.0 + 1), top = rep[1] - rep[0], mom = rep[2] - rep[0], one = rep[3] - rep[0];
  ck_assert_msg(fabs(mom / top - (3 + L) / (1 + L)) <= TOL_FLOPS * (3 + L) / (1 + L), "momentum / plain %.17g",
                mom / top);
  ck_assert_msg(fabs(one / top - 4 / (1 + L)) <= TOL_FLOPS * 4 / (1 + L), "1-bit / top-k %.17g", one / top);
  ck_assert_msg(fabs((ps[3] - ps[0]) / one - 0.125) <= TOL_FLOPS * 0.125, "shard / replica %.17g",
                (ps[3] - ps[0]) / one);
  free(dir);
}
END_TEST

/* compress = none, whatever the other compress keys say, is the default run: every file
 * but summary.json's echo of the keys the same. */
START_TEST(test_none_is_dense)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *none[] = {"downpour.compress=none", "downpour.compress_ratio=0.5", "downpour.replicas=3", NULL};
  const char *dflt[] = {"downpour.replicas=3", NULL};
  json_t *a = cli_run_sets(dir, "none", none, NULL), *b = cli_run_sets(dir, "default", dflt, NULL);
  ck_assert_ptr_null(json_object_get(a, "downpour"));
  static const char *const files[] = {"progress.csv", "staleness.csv", "links.csv", "breakdown.csv"};
  cli_assert_same_files(dir, "none", "default", files, 4);
  json_decref(a);
  json_decref(b);
  free(dir);
}
END_TEST

/* Under host faults (a shard down and back from its checkpoint, a replica lost): the
 * replicas' residuals are theirs and a shard keeps no compression state, so the run ends ok. */
START_TEST(test_faults)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *sets[] = {"downpour.replicas=4", "run.max_steps=0", "run.max_sim_time=0.2",
                        "faults.host_failures=replica1@0.05,shard1@0.08+0.03", "faults.wait_timeout=0.02",
                        "faults.checkpoint_interval=0.05", "downpour.compress=qsgd", NULL};
  json_t *j = cli_run_sets(dir, "out", sets, NULL);
  ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "ok");
  ck_assert_msg(cli_num(j, "steps") > 40, "%.0f steps", cli_num(j, "steps"));
  json_decref(j);
  free(dir);
}
END_TEST

START_TEST(test_bad_input)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  static const char *const bad[][2] = {
    {"downpour.compress=powersgd", "a shard receives one replica's gradient at a time"},
    {"downpour.compress_ratio=0", "downpour.compress_ratio"},
    {"downpour.compress_ratio=1.5", "downpour.compress_ratio"},
    {"downpour.compress_momentum=1", "downpour.compress_momentum"},
    {"downpour.compress_warmup=-1", "downpour.compress_warmup"},
    {"downpour.compress_levels=0", "downpour.compress_levels"},
    {"downpour.compress=dgc", "downpour.compress"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    const char *args[] = {"run", "base.ini", "--out", "out", "--set", bad[i][0], NULL};
    cli_assert_bad_input(dir, args, bad[i][1]);
  }
  free(dir);
}
END_TEST

/* Same seed: identical files on one or two SimGrid threads; another seed: others (QSGD's
 * draws are each replica's own stream). */
START_TEST(test_determinism)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  cli_write(dir, "four.ini", "[run]\nmax_steps = 20\neval_every = 0.002\n[model]\nlayers = 16,32,4\n"
                             "[data]\ntrain = 4000\ntest = 1000\n[downpour]\nreplicas = 4\nps_shards = 2\n");
  const char *files[] = {"summary.json", "progress.csv", "staleness.csv", "links.csv", "breakdown.csv"};
  cli_assert_deterministic(dir, "four.ini", "downpour.compress=qsgd", files, sizeof files / sizeof *files);
  free(dir);
}
END_TEST

static Suite *ps_compress_suite(void)
{
  Suite *s = suite_create("sim_ps_compress");
  TCase *tc = tcase_create("downpour");
  tcase_set_timeout(tc, 180);
  tcase_add_test(tc, test_topk_equals_serial);
  tcase_add_test(tc, test_push_bytes);
  tcase_add_test(tc, test_compression_flops);
  tcase_add_test(tc, test_none_is_dense);
  tcase_add_test(tc, test_faults);
  tcase_add_test(tc, test_bad_input);
  tcase_add_test(tc, test_determinism);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(ps_compress_suite)

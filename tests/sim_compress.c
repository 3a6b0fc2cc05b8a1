/* sim_compress.c - compressed gradients and local SGD in synchronous data parallelism, end
 * to end through the CLI: each method's run equals a serial computation of the same
 * algorithm here (the same minibatch and QSGD draws, the same first Q, the same sums in the
 * same order), local SGD equals its serial model averaging, H = 1 is the default run, the
 * wire bytes are those of models/compress.h, runs are deterministic on one or two SimGrid
 * threads, and bad combinations are refused. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/collectives.h"
#include "check_util.h"
#include "cli_util.h"
#include "models/compress.h"
#include "models/data.h"
#include "models/minibatch.h"
#include "models/net.h"
#include "models/optim.h"
#include "models/rng.h"

static const char base_ini[] =
    "[run]\nalgorithm = dataparallel\nmax_steps = 40\neval_every = 0.01\n"
    "[model]\nlayers = 16,32,4\n"
    "[data]\ntrain = 4000\ntest = 1000\n"
    "[dataparallel]\nreplicas = 4\nbatch = 8\nlr = 0.1\nbucket_mb = 0\n";

/* TOL_SAME: the run and its serial computation do the same operations on the same numbers
 * in the same order (the decodings added in rank order, the factors' sums in the ring's
 * order), so the final losses are equal: tolerance 0. */
#define TOL_SAME 0.0
/* The layers 16,32,4 as tensors in their order in one bucket: W1 32 x 16, b1, W2 4 x 32, b2. */
static const size_t rows[] = {32, 1, 4, 1}, cols[] = {16, 32, 32, 4};
#define NT 4

typedef struct serial {
  net *model;
  dataset *all, *train, *test;
  gsl_vector *w[4];
  minibatch *mb[4];
  gsl_vector *g[4];
  size_t n, k;
} serial;

/* The run's set-up, as the CLI builds it from base_ini (seed 1). */
static void serial_init(serial *s, size_t k)
{
  size_t sizes[] = {16, 32, 4};
  s->k = k;
  s->model = net_create(3, sizes, NET_ACT_TANH, NET_LOSS_SOFTMAX);
  gsl_rng *dr = rng_create(1, RNG_ROLE_DATA, 0);
  s->all = data_synthetic_teacher(5000, 16, 16, 4, dr);
  gsl_rng_free(dr);
  s->train = data_slice(s->all, 0, 4000);
  s->test = data_slice(s->all, 4000, 5000);
  for (size_t r = 0; r < k; r++) {
    size_t begin, end;
    data_shard_bounds(4000, k, r, &begin, &end);
    s->mb[r] = minibatch_create(s->model, s->train, begin, end, 8, 1, (int)r);
    s->w[r] = minibatch_initial_params(s->model, 1);
    s->g[r] = gsl_vector_alloc(s->w[r]->size);
  }
  s->n = s->w[0]->size;
}

/* The held-out loss of replica 0's model, and everything freed. */
static double serial_finish(serial *s)
{
  double loss, acc;
  net_ws *ews = net_ws_create(s->model, 1024);
  ck_assert_int_eq(net_evaluate(s->model, s->w[0], s->test->X, s->test->y, ews, &loss, &acc), 0);
  net_ws_free(ews);
  for (size_t r = 0; r < s->k; r++) {
    minibatch_free(s->mb[r]);
    gsl_vector_free(s->g[r]);
    gsl_vector_free(s->w[r]);
  }
  data_free(s->train);
  data_free(s->test);
  data_free(s->all);
  net_free(s->model);
  return loss;
}

static void gradients(serial *s)
{
  for (size_t r = 0; r < s->k; r++)
    ck_assert_int_eq(minibatch_gradient(s->mb[r], s->w[r], s->g[r], NULL), 0);
}

static void sgd_mean(serial *s, double *sum)
{
  for (size_t i = 0; i < s->n; i++)
    sum[i] /= (double)s->k;
  for (size_t r = 0; r < s->k; r++)
    optim_sgd_apply(s->w[r]->data, sum, s->n, 0.1);
}

/* Top-k, 1-bit or QSGD, serially: every replica encodes its tensors with its own state (and
 * QSGD's stream), the messages are decoded and added in rank order, then the mean step. */
static double serial_gathered(const compress_params *p, long steps)
{
  serial s;
  serial_init(&s, 4);
  compress_state *st[4][NT];
  compress_msg msg[4][NT];
  gsl_rng *rng[4];
  for (size_t r = 0; r < s.k; r++) {
    rng[r] = rng_create(1, RNG_ROLE_QSGD, (int)r);
    for (size_t t = 0; t < NT; t++) {
      st[r][t] = compress_state_create(p, rows[t], cols[t], NULL);
      compress_msg_alloc(st[r][t], &msg[r][t]);
    }
  }
  double *sum = calloc(s.n, sizeof(double));
  for (long step = 0; step < steps; step++) {
    gradients(&s);
    memset(sum, 0, s.n * sizeof(double));
    for (size_t r = 0; r < s.k; r++)
      for (size_t t = 0, off = 0; t < NT; off += rows[t] * cols[t], t++)
        compress_encode(st[r][t], s.g[r]->data + off, step, rng[r], &msg[r][t]);
    for (size_t r = 0; r < s.k; r++)
      for (size_t t = 0, off = 0; t < NT; off += rows[t] * cols[t], t++)
        compress_decode_add(&msg[r][t], sum + off);
    sgd_mean(&s, sum);
  }
  for (size_t r = 0; r < s.k; r++) {
    gsl_rng_free(rng[r]);
    for (size_t t = 0; t < NT; t++) {
      compress_msg_release(&msg[r][t]);
      compress_state_free(st[r][t]);
    }
  }
  free(sum);
  return serial_finish(&s);
}

/* The ring allreduce's sum of the replicas' buffers (length n) into every buffer. */
static void ring_sum(double *const *buf, size_t k, size_t n)
{
  double *out = malloc(n * sizeof(double));
  coll_reference(COLL_ALLREDUCE, COLL_RING, k, 0, 0, n, (const double *const *)buf, out);
  for (size_t r = 0; r < k; r++)
    memcpy(buf[r], out, n * sizeof(double));
  free(out);
}

/* PowerSGD, serially: P (factors and the uncompressed tensors) summed in the ring's order,
 * orthonormalised, Q summed likewise, the update P Qsum^T (or the summed raw tensor). */
static double serial_powersgd(const compress_params *p, long steps)
{
  serial s;
  serial_init(&s, 4);
  compress_state *st[4][NT];
  double *P[4], *Q[4];
  size_t plen = 0, qlen = 0, R = (size_t)p->rank;
  for (size_t t = 0; t < NT; t++) {
    int f = compress_powersgd_applies(p, rows[t], cols[t]);
    plen += f ? rows[t] * R : rows[t] * cols[t];
    qlen += f ? cols[t] * R : 0;
  }
  for (size_t r = 0; r < s.k; r++) {
    gsl_rng *init = rng_create(1, RNG_ROLE_POWERSGD, 0);
    for (size_t t = 0; t < NT; t++)
      st[r][t] = compress_state_create(p, rows[t], cols[t], init);
    gsl_rng_free(init);
    P[r] = calloc(plen, sizeof(double));
    Q[r] = calloc(qlen ? qlen : 1, sizeof(double));
  }
  double *sum = calloc(s.n, sizeof(double));
  for (long step = 0; step < steps; step++) {
    gradients(&s);
    for (size_t r = 0; r < s.k; r++)
      for (size_t t = 0, off = 0, po = 0; t < NT; off += rows[t] * cols[t], t++) {
        int f = compress_powersgd_applies(p, rows[t], cols[t]);
        if (f)
          compress_powersgd_p(st[r][t], s.g[r]->data + off, P[r] + po);
        else
          memcpy(P[r] + po, s.g[r]->data + off, rows[t] * cols[t] * sizeof(double));
        po += f ? rows[t] * R : rows[t] * cols[t];
      }
    ring_sum(P, s.k, plen);
    for (size_t r = 0; r < s.k; r++)
      for (size_t t = 0, po = 0, qo = 0; t < NT; t++) {
        int f = compress_powersgd_applies(p, rows[t], cols[t]);
        if (f)
          compress_powersgd_q(st[r][t], P[r] + po, Q[r] + qo);
        po += f ? rows[t] * R : rows[t] * cols[t];
        qo += f ? cols[t] * R : 0;
      }
    ring_sum(Q, s.k, qlen);
    for (size_t t = 0, off = 0, po = 0, qo = 0; t < NT; off += rows[t] * cols[t], t++) {
      int f = compress_powersgd_applies(p, rows[t], cols[t]);
      for (size_t r = 0; r < s.k; r++) /* every replica decodes; replica 0's is the update */
        if (f)
          compress_powersgd_decode(st[r][t], P[r] + po, Q[r] + qo, sum + off);
      if (!f)
        memcpy(sum + off, P[0] + po, rows[t] * cols[t] * sizeof(double));
      po += f ? rows[t] * R : rows[t] * cols[t];
      qo += f ? cols[t] * R : 0;
    }
    sgd_mean(&s, sum);
  }
  for (size_t r = 0; r < s.k; r++) {
    for (size_t t = 0; t < NT; t++)
      compress_state_free(st[r][t]);
    free(P[r]);
    free(Q[r]);
  }
  free(sum);
  return serial_finish(&s);
}

/* Local SGD, serially: every replica steps on its own gradient; every H steps the models'
 * ring sum divided by k replaces every model. */
static double serial_local_sgd(long H, long steps)
{
  serial s;
  serial_init(&s, 4);
  double *w[4];
  for (long step = 0; step < steps; step++) {
    gradients(&s);
    for (size_t r = 0; r < s.k; r++)
      optim_sgd_apply(s.w[r]->data, s.g[r]->data, s.n, 0.1);
    if ((step + 1) % H)
      continue;
    for (size_t r = 0; r < s.k; r++)
      w[r] = s.w[r]->data;
    ring_sum(w, s.k, s.n);
    for (size_t r = 0; r < s.k; r++)
      for (size_t i = 0; i < s.n; i++)
        w[r][i] /= (double)s.k;
  }
  return serial_finish(&s);
}

static double run_loss(const char *dir, const char *out, const char *const *sets)
{
  json_t *j = cli_run_sets(dir, out, sets, NULL);
  double loss = cli_num(j, "final_loss");
  json_decref(j);
  return loss;
}

START_TEST(test_compressed_equals_serial)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *topk[] = {"dataparallel.compress=topk", "dataparallel.compress_ratio=0.05",
                        "dataparallel.compress_momentum=0.5", "dataparallel.compress_warmup=8", NULL};
  const char *onebit[] = {"dataparallel.compress=onebit", NULL};
  const char *qsgd[] = {"dataparallel.compress=qsgd", "dataparallel.compress_levels=8", NULL};
  const char *psgd[] = {"dataparallel.compress=powersgd", "dataparallel.compress_rank=2", NULL};
  compress_params pt = {.method = COMPRESS_TOPK, .ratio = 0.05, .momentum = 0.5, .warmup_steps = 8};
  compress_params po = {.method = COMPRESS_ONEBIT};
  compress_params pq = {.method = COMPRESS_QSGD, .levels = 8};
  compress_params pp = {.method = COMPRESS_POWERSGD, .rank = 2};
  double got, want;
  got = run_loss(dir, "topk", topk), want = serial_gathered(&pt, 40);
  ck_assert_msg(fabs(got - want) <= TOL_SAME, "topk %.17g, serial %.17g", got, want);
  got = run_loss(dir, "onebit", onebit), want = serial_gathered(&po, 40);
  ck_assert_msg(fabs(got - want) <= TOL_SAME, "onebit %.17g, serial %.17g", got, want);
  got = run_loss(dir, "qsgd", qsgd), want = serial_gathered(&pq, 40);
  ck_assert_msg(fabs(got - want) <= TOL_SAME, "qsgd %.17g, serial %.17g", got, want);
  got = run_loss(dir, "powersgd", psgd), want = serial_powersgd(&pp, 40);
  ck_assert_msg(fabs(got - want) <= TOL_SAME, "powersgd %.17g, serial %.17g", got, want);
  free(dir);
}
END_TEST

START_TEST(test_local_sgd)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *h4[] = {"dataparallel.local_steps=4", NULL};
  const char *h1[] = {"dataparallel.local_steps=1", NULL};
  const char *none[] = {NULL};
  double got = run_loss(dir, "h4", h4), want = serial_local_sgd(4, 40);
  ck_assert_msg(fabs(got - want) <= TOL_SAME, "local SGD %.17g, serial %.17g", got, want);
  /* H = 1 is today's run: every file but summary.json's echo of the key the same */
  double a = run_loss(dir, "h1", h1), b = run_loss(dir, "none", none);
  ck_assert_msg(a == b, "H = 1 %.17g, default %.17g", a, b);
  static const char *const files[] = {"progress.csv", "breakdown.csv", "links.csv"};
  cli_assert_same_files(dir, "h1", "none", files, 3);
  free(dir);
}
END_TEST

/* summary.json's bytes per step: layers 16,32,4 at fp32 (4 bytes), top-k 1%: W1 512 -> 6
 * entries, b1 32 -> 1, W2 128 -> 2, b2 4 -> 1: 10 entries of 8 bytes; dense 676 x 4. The
 * network carries them: an allgather of 4 ranks sends each rank's 3 others' blocks. */
START_TEST(test_compressed_bytes)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *sets[] = {"dataparallel.compress=topk", NULL};
  json_t *j = cli_run_sets(dir, "topk", sets, NULL);
  json_t *dp = json_object_get(j, "dataparallel");
  ck_assert_double_eq(json_number_value(json_object_get(dp, "bytes_per_step")), 80);
  ck_assert_double_eq(json_number_value(json_object_get(dp, "dense_bytes_per_step")), 676 * 4);
  json_decref(j);
  free(dir);
}
END_TEST

START_TEST(test_compressed_bad_input)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *both[] = {"run", "base.ini", "--out", "out", "--set", "dataparallel.local_steps=2", "--set",
                        "dataparallel.compress=topk", NULL};
  cli_assert_bad_input(dir, both, "does not combine with dataparallel.compress = topk");
  const char *ratio[] = {"run", "base.ini", "--out", "out", "--set", "dataparallel.compress_ratio=0", NULL};
  cli_assert_bad_input(dir, ratio, "dataparallel.compress_ratio");
  /* ZeRO's reduce-scatters carry the dense gradient: no compression, no local SGD beside them */
  const char *zero[] = {"run", "base.ini", "--out", "out", "--set", "dataparallel.zero=2", "--set",
                        "dataparallel.compress=qsgd", NULL};
  cli_assert_bad_input(dir, zero, "ZeRO's stage 2 reduce-scatters the dense gradient");
  const char *zero_local[] = {"run", "base.ini", "--out", "out", "--set", "dataparallel.zero=1", "--set",
                              "dataparallel.local_steps=4", NULL};
  cli_assert_bad_input(dir, zero_local, "does not combine with local SGD");
  free(dir);
}
END_TEST

/* Same seed: identical files with one or two SimGrid threads (the replicas read each
 * other's messages from the board once the allgather has delivered them); another seed:
 * other files. QSGD draws, top-k and PowerSGD do not. */
START_TEST(test_compressed_determinism)
{
  static const char *const sets[] = {"dataparallel.compress=qsgd", "dataparallel.compress=topk",
                                     "dataparallel.compress=powersgd", "dataparallel.local_steps=3"};
  const char *files[] = {"summary.json", "progress.csv", "links.csv", "breakdown.csv"};
  for (size_t i = 0; i < sizeof sets / sizeof *sets; i++) {
    char *dir = cli_tmpdir();
    cli_write(dir, "base.ini", base_ini);
    cli_assert_deterministic(dir, "base.ini", sets[i], files, sizeof(files) / sizeof(files[0]));
    free(dir);
  }
}
END_TEST

static Suite *compress_suite(void)
{
  Suite *s = suite_create("sim_compress");
  TCase *tc = tcase_create("serial");
  tcase_set_timeout(tc, 180);
  tcase_add_test(tc, test_compressed_equals_serial);
  tcase_add_test(tc, test_local_sgd);
  tcase_add_test(tc, test_compressed_bytes);
  tcase_add_test(tc, test_compressed_bad_input);
  suite_add_tcase(s, tc);
  tc = tcase_create("determinism");
  tcase_set_timeout(tc, 180);
  tcase_add_test(tc, test_compressed_determinism);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(compress_suite)

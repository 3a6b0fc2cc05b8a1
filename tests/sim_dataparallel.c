/* sim_dataparallel.c - synchronous data parallelism end to end through the CLI (one
 * simulation per process): one replica is sequential SGD bit for bit; k replicas are
 * sequential SGD on the union of their minibatches (a reference computed here from the
 * same draws), and bit for bit the serial sum in the collective's order; the collective
 * does not change the result beyond rounding; bucket allreduces carry the
 * bytes counted by hand and overlapping them with backward saves time; one or two
 * SimGrid threads give the same files; bad input is refused. ZeRO's stages train what
 * plain data parallelism trains (SGD and Adam), move the bytes ZeRO says and hold the
 * memory its formula gives, to the shard's rounding. The bucket split itself
 * (dataparallel_buckets) is tested in check_dataparallel.c. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/collectives.h"
#include "check_util.h"
#include "cli_util.h"
#include "models/data.h"
#include "models/minibatch.h"
#include "models/net.h"
#include "models/optim.h"
#include "models/rng.h"

static const char base_ini[] =
    "[run]\nalgorithm = dataparallel\nmax_steps = 40\neval_every = 0.01\n"
    "[model]\nlayers = 16,32,4\n"
    "[data]\ntrain = 4000\ntest = 1000\n";

/* Tolerances and bounds, each with where it comes from. */
/* TRAINED_LOSS: below ln 4 = 1.386, the held-out loss of a uniform guess over the 4
 * classes: the model trained. */
#define TRAINED_LOSS 1.3
/* TOL_ORDER_REL: the same gradients averaged in another order (replicas' minibatch means,
 * or another collective's sum) round by a few u per step and parameter; over 40 steps the
 * loss may move by ~1e-14 (measured: equal, 0). */
#define TOL_ORDER_REL 1e-12
/* DRAWS_DIFFER_REL: other rows change the loss far above rounding (measured 5e-3). */
#define DRAWS_DIFFER_REL 1e-6
/* TOL_ACCURACY: an accuracy over 1000 test rows moves in steps of 1e-3, so within 1e-12
 * means equal. */
#define TOL_ACCURACY 1e-12
/* DEADLINE_END_MAX_S: a run stops at the first step end past run.max_sim_time = 0.5 s; a
 * step is ~5 ms here (measured: 96 steps, stopped at 0.5028 s). */
#define DEADLINE_END_MAX_S 0.6
/* BACKWARD_SLACK: overlap saves at most the backward pass, whose time is computed here as
 * flops / speed as SimGrid does, to rounding (measured: it saved 0.55 of it); 1 + 1e-6. */
#define BACKWARD_SLACK 1.000001
/* TOL_FORMULA_REL: ZeRO's formula in summary.json against the test's own arithmetic of it
 * (psi / 5 and its products, each rounded once or twice in double): a few u, 1e-9 is far
 * above that and far below a byte of these formulas (about 1e4 bytes). */
#define TOL_FORMULA_REL 1e-9

static double comm_bytes(const json_t *j)
{
  return json_number_value(json_object_get(json_object_get(j, "comm"), "bytes_total"));
}

static double rel(double a, double b)
{
  return fabs(a - b) / fabs(b);
}

START_TEST(test_dataparallel_one_replica_is_sgd)
{
  /* k = 1: replica 0 draws what sequential SGD draws (rank 0, every row), its allreduce
   * is empty and dividing by 1 is exact: the same doubles. */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *sgd[] = {"run.algorithm=sgd", "sgd.batch=16", "sgd.lr=0.1", NULL};
  const char *dp[] = {"dataparallel.replicas=1", "dataparallel.batch=16", "dataparallel.lr=0.1", NULL};
  json_t *a = cli_run_sets(dir, "sgd", sgd, NULL), *b = cli_run_sets(dir, "dp", dp, NULL);
  ck_assert_int_eq((long)cli_num(b, "steps"), 40);
  ck_assert_int_eq((long)cli_num(b, "examples"), 40 * 16);
  ck_assert_msg(cli_num(a, "final_loss") == cli_num(b, "final_loss"), "loss %.17g vs %.17g", cli_num(a, "final_loss"),
                cli_num(b, "final_loss"));
  ck_assert(cli_num(a, "final_accuracy") == cli_num(b, "final_accuracy"));
  ck_assert_msg(cli_num(b, "final_loss") < TRAINED_LOSS, "loss %.17g", cli_num(b, "final_loss"));
  ck_assert_double_eq(comm_bytes(b), 0);
  json_decref(a);
  json_decref(b);
  free(dir);
}
END_TEST

/* Sequential SGD with a batch of k*b rows: at every step the rows are replica 0's b
 * draws, then replica 1's, ..., each drawn as dataparallel's replica r draws them
 * (rows data_shard_bounds(n, k, r), stream minibatch rank r); one gradient, the mean
 * over all k*b rows, and w -= lr * gradient. Returns the held-out loss after `steps`
 * steps, measured as the evaluator does (net_evaluate in batches of 1024). The data and
 * the initial parameters are built as the engine builds them for base_ini (run.seed 1,
 * synthetic-teacher with 16 hidden units, 4000 + 1000 rows, tanh mlp 16-32-4). */
static double large_batch_sgd(size_t k, size_t b, double lr, long steps)
{
  size_t sizes[] = {16, 32, 4};
  net *model = net_create(3, sizes, NET_ACT_TANH, NET_LOSS_SOFTMAX);
  gsl_rng *dr = rng_create(1, RNG_ROLE_DATA, 0);
  dataset *all = data_synthetic_teacher(5000, 16, 16, 4, dr);
  gsl_rng_free(dr);
  dataset *train = data_slice(all, 0, 4000), *test = data_slice(all, 4000, 5000);
  gsl_vector *w = minibatch_initial_params(model, 1), *g = gsl_vector_alloc(w->size);
  gsl_rng **rng = malloc(k * sizeof(gsl_rng *));
  for (size_t r = 0; r < k; r++)
    rng[r] = rng_create(1, RNG_ROLE_WORKER, (int)r);
  gsl_matrix *X = gsl_matrix_alloc(k * b, 16);
  double *y = malloc(k * b * sizeof(double)), loss, acc;
  net_ws *ws = net_ws_create(model, k * b);
  for (long s = 0; s < steps; s++) {
    for (size_t r = 0; r < k; r++) {
      size_t begin, end;
      data_shard_bounds(4000, k, r, &begin, &end);
      gsl_matrix_view rows = gsl_matrix_submatrix(X, r * b, 0, b, 16);
      data_sample_batch(train, begin, end, rng[r], b, &rows.matrix, y + r * b);
    }
    ck_assert_int_eq(net_loss_grad(model, w, X, y, ws, &loss, g), 0);
    optim_sgd_apply(w->data, g->data, w->size, lr);
  }
  net_ws *ews = net_ws_create(model, 1024);
  ck_assert_int_eq(net_evaluate(model, w, test->X, test->y, ews, &loss, &acc), 0);
  net_ws_free(ews);
  net_ws_free(ws);
  free(y);
  gsl_matrix_free(X);
  for (size_t r = 0; r < k; r++)
    gsl_rng_free(rng[r]);
  free(rng);
  gsl_vector_free(g);
  gsl_vector_free(w);
  data_free(train);
  data_free(test);
  data_free(all);
  net_free(model);
  return loss;
}

START_TEST(test_dataparallel_equals_large_batch_sgd)
{
  /* 4 replicas x 8 rows against sequential SGD on their 32 rows: the replicas' mean of
   * minibatch means and the one mean over 32 rows differ only by rounding. */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *dp[] = {"dataparallel.replicas=4", "dataparallel.batch=8", "dataparallel.lr=0.1", NULL};
  json_t *j = cli_run_sets(dir, "dp", dp, NULL);
  double want = large_batch_sgd(4, 8, 0.1, 40), got = cli_num(j, "final_loss");
  ck_assert_int_eq((long)cli_num(j, "steps"), 40);
  ck_assert_int_eq((long)cli_num(j, "examples"), 40 * 4 * 8);
  ck_assert_msg(rel(got, want) < TOL_ORDER_REL, "loss %.17g, sequential %.17g", got, want);
  /* the comparison can tell draws apart: one replica of 32 rows draws other rows */
  double other = large_batch_sgd(1, 32, 0.1, 40);
  ck_assert_msg(rel(other, want) > DRAWS_DIFFER_REL, "%.17g vs %.17g", other, want);
  ck_assert_msg(got < TRAINED_LOSS, "loss %.17g", got);
  ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "ok");
  json_t *st = json_object_get(j, "staleness");
  ck_assert(cli_num(st, "max") == 0 && cli_num(st, "mean") == 0);
  json_decref(j);
  free(dir);
}
END_TEST

/* What dataparallel computes, serially: each replica's minibatch gradient as its actor
 * draws it (minibatch rank r on its shard), their sum in the allreduce's own order
 * (coll_reference over the whole vector: one bucket), divided by k, w -= lr * that.
 * Returns the held-out loss after `steps` steps, as large_batch_sgd. */
static double serial_dataparallel(size_t k, size_t b, double lr, long steps, coll_algo algo)
{
  size_t sizes[] = {16, 32, 4};
  net *model = net_create(3, sizes, NET_ACT_TANH, NET_LOSS_SOFTMAX);
  gsl_rng *dr = rng_create(1, RNG_ROLE_DATA, 0);
  dataset *all = data_synthetic_teacher(5000, 16, 16, 4, dr);
  gsl_rng_free(dr);
  dataset *train = data_slice(all, 0, 4000), *test = data_slice(all, 4000, 5000);
  gsl_vector *w = minibatch_initial_params(model, 1), *sum = gsl_vector_alloc(w->size);
  size_t n = w->size;
  minibatch **mb = malloc(k * sizeof(minibatch *));
  gsl_vector **g = malloc(k * sizeof(gsl_vector *));
  const double **x = malloc(k * sizeof(double *));
  for (size_t r = 0; r < k; r++) {
    size_t begin, end;
    data_shard_bounds(4000, k, r, &begin, &end);
    mb[r] = minibatch_create(model, train, begin, end, b, 1, (int)r);
    g[r] = gsl_vector_alloc(n);
    x[r] = g[r]->data;
  }
  for (long s = 0; s < steps; s++) {
    for (size_t r = 0; r < k; r++)
      ck_assert_int_eq(minibatch_gradient(mb[r], w, g[r], NULL), 0);
    coll_reference(COLL_ALLREDUCE, algo, k, 0, 0, n, x, sum->data);
    for (size_t i = 0; i < n; i++)
      sum->data[i] /= (double)k;
    optim_sgd_apply(w->data, sum->data, n, lr);
  }
  double loss, acc;
  net_ws *ews = net_ws_create(model, 1024);
  ck_assert_int_eq(net_evaluate(model, w, test->X, test->y, ews, &loss, &acc), 0);
  net_ws_free(ews);
  for (size_t r = 0; r < k; r++) {
    minibatch_free(mb[r]);
    gsl_vector_free(g[r]);
  }
  free(mb);
  free(g);
  free(x);
  gsl_vector_free(sum);
  gsl_vector_free(w);
  data_free(train);
  data_free(test);
  data_free(all);
  net_free(model);
  return loss;
}

START_TEST(test_dataparallel_bit_for_bit)
{
  /* 5 replicas, one bucket: the simulated run equals its serial computation in the
   * collective's sum order bit for bit, for ring and for tree. With these draws the two
   * orders end 1 ulp apart in the final loss, so the comparison does see the order. */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *ring[] = {"dataparallel.replicas=5", "dataparallel.batch=8", "dataparallel.lr=0.1",
                        "dataparallel.bucket_mb=0", "dataparallel.collective=ring", NULL};
  const char *tree[] = {"dataparallel.replicas=5", "dataparallel.batch=8", "dataparallel.lr=0.1",
                        "dataparallel.bucket_mb=0", "dataparallel.collective=tree", NULL};
  json_t *a = cli_run_sets(dir, "ring", ring, NULL), *b = cli_run_sets(dir, "tree", tree, NULL);
  double want_ring = serial_dataparallel(5, 8, 0.1, 40, COLL_RING);
  double want_tree = serial_dataparallel(5, 8, 0.1, 40, COLL_TREE);
  ck_assert_msg(want_ring != want_tree, "both orders give %.17g", want_ring);
  ck_assert_msg(cli_num(a, "final_loss") == want_ring, "ring %.17g, serial %.17g", cli_num(a, "final_loss"), want_ring);
  ck_assert_msg(cli_num(b, "final_loss") == want_tree, "tree %.17g, serial %.17g", cli_num(b, "final_loss"), want_tree);
  json_decref(a);
  json_decref(b);
  free(dir);
}
END_TEST

START_TEST(test_dataparallel_converges_and_stops)
{
  /* 4 replicas x 16 rows reach 80% held-out accuracy on the 4-class teacher data (a model
   * that learned nothing scores about 25%); the evaluator's stop ends every replica at
   * the same step, long before max_steps. A simulated deadline ends a run without
   * max_steps just past it (the step under way completes). */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *target[] = {"dataparallel.replicas=4", "dataparallel.batch=16", "dataparallel.lr=0.2",
                          "run.max_steps=400", "run.eval_every=0.05", "run.target_accuracy=0.8", NULL};
  json_t *j = cli_run_sets(dir, "target", target, NULL);
  ck_assert_msg(cli_num(j, "final_accuracy") >= 0.8, "accuracy %.4f", cli_num(j, "final_accuracy"));
  ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "ok");
  ck_assert(json_is_number(json_object_get(j, "time_to_target_s")));
  ck_assert_msg(cli_num(j, "steps") < 400, "steps %.0f", cli_num(j, "steps"));
  json_decref(j);
  const char *deadline[] = {"dataparallel.replicas=3", "run.max_steps=0", "run.max_sim_time=0.5", "run.eval_every=0.1",
                            NULL};
  j = cli_run_sets(dir, "deadline", deadline, NULL);
  ck_assert_msg(cli_num(j, "sim_time_s") >= 0.5 && cli_num(j, "sim_time_s") < DEADLINE_END_MAX_S, "%.9g s",
                cli_num(j, "sim_time_s"));
  ck_assert_msg(cli_num(j, "steps") > 10, "steps %.0f", cli_num(j, "steps"));
  json_decref(j);
  free(dir);
}
END_TEST

START_TEST(test_dataparallel_collective_independent)
{
  /* 3 replicas (not a power of two: halving-doubling pairs ranks 0 and 1 first) and one
   * bucket per layer: each collective sums in its own order, so results agree to rounding. */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *ring[] = {"dataparallel.replicas=3", "dataparallel.bucket_mb=0.0001", "dataparallel.collective=ring", NULL};
  const char *hd[] = {"dataparallel.replicas=3", "dataparallel.bucket_mb=0.0001",
                      "dataparallel.collective=halving-doubling", NULL};
  const char *tree[] = {"dataparallel.replicas=3", "dataparallel.bucket_mb=0.0001", "dataparallel.collective=tree", NULL};
  json_t *a = cli_run_sets(dir, "ring", ring, NULL);
  json_t *b = cli_run_sets(dir, "hd", hd, NULL);
  json_t *c = cli_run_sets(dir, "tree", tree, NULL);
  double la = cli_num(a, "final_loss"), lb = cli_num(b, "final_loss"), lc = cli_num(c, "final_loss");
  ck_assert_msg(rel(lb, la) < TOL_ORDER_REL && rel(lc, la) < TOL_ORDER_REL, "ring %.17g, hd %.17g, tree %.17g", la, lb,
                lc);
  ck_assert(fabs(cli_num(b, "final_accuracy") - cli_num(a, "final_accuracy")) < TOL_ACCURACY);
  /* the three really ran different schedules: their traffic differs */
  ck_assert(comm_bytes(a) != comm_bytes(b) && comm_bytes(b) != comm_bytes(c));
  json_decref(a);
  json_decref(b);
  json_decref(c);
  free(dir);
}
END_TEST

/* Timing only, 64-256-256-256-10 on distbelief-2012 (1 GbE), one core per host so that
 * backward takes about as long as the allreduces. */
static const char *const timing[] = {"model.numerics=off", "model.layers=64,256,256,256,10", "run.max_steps=5",
                                     "run.eval_every=100", "platform.cores=1", "dataparallel.replicas=4",
                                     "dataparallel.batch=256", NULL};

static json_t *run_timing(const char *dir, const char *out, const char *bucket_mb, const char *overlap)
{
  const char *sets[16];
  int n = 0;
  for (; timing[n]; n++)
    sets[n] = timing[n];
  sets[n++] = bucket_mb;
  sets[n++] = overlap;
  sets[n] = NULL;
  return cli_run_sets(dir, out, sets, NULL);
}

START_TEST(test_dataparallel_bucket_bytes)
{
  /* Layers (weights + biases): 64*256+256 = 16640, 256*256+256 = 65792 twice,
   * 256*10+10 = 2570; fp32. bucket_mb = 0.25 (262144 bytes), from the last layer down:
   * {2570 + 65792} = 68362 elements (273448 bytes, closes), {65792} (263168, closes),
   * {16640} (the rest): 3 buckets. A ring allreduce of n elements over p = 4 sends 2(p-1)
   * steps, each carrying every block once plus one 64-byte header per member:
   * 6 (4n + 4*64) bytes. Per step 6 * (4 * 150794 + 3 * 256) = 3623664, x 5 steps. One
   * bucket (bucket_mb = 0): 6 * (4 * 150794 + 256) x 5. */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  json_t *a = run_timing(dir, "b3", "dataparallel.bucket_mb=0.25", "dataparallel.overlap=on");
  json_t *b = run_timing(dir, "b1", "dataparallel.bucket_mb=0", "dataparallel.overlap=on");
  ck_assert_double_eq(comm_bytes(a), 5.0 * 6 * (4 * 150794 + 3 * 256));
  ck_assert_double_eq(comm_bytes(b), 5.0 * 6 * (4 * 150794 + 256));
  ck_assert(json_is_null(json_object_get(a, "final_loss")));
  ck_assert_int_eq((long)cli_num(a, "steps"), 5);
  /* the buckets, and one allreduce per bucket and step */
  json_t *dp = json_object_get(a, "dataparallel"), *be = json_object_get(dp, "bucket_elements");
  ck_assert_int_eq(json_array_size(be), 3);
  ck_assert_double_eq(json_number_value(json_array_get(be, 0)), 68362);
  ck_assert_double_eq(json_number_value(json_array_get(be, 1)), 65792);
  ck_assert_double_eq(json_number_value(json_array_get(be, 2)), 16640);
  ck_assert_int_eq(json_integer_value(json_object_get(dp, "allreduces_per_replica")), 5 * 3);
  dp = json_object_get(b, "dataparallel");
  ck_assert_int_eq(json_array_size(json_object_get(dp, "bucket_elements")), 1);
  ck_assert_int_eq(json_integer_value(json_object_get(dp, "allreduces_per_replica")), 5);
  /* fp16 halves the payload, not the headers */
  const char *half[] = {"model.numerics=off", "model.layers=64,256,256,256,10", "run.max_steps=5",
                        "run.eval_every=100", "dataparallel.replicas=4", "dataparallel.bucket_mb=0",
                        "model.dtype=fp16", NULL};
  json_t *c = cli_run_sets(dir, "fp16", half, NULL);
  ck_assert_double_eq(comm_bytes(c), 5.0 * 6 * (2 * 150794 + 256));
  json_decref(a);
  json_decref(b);
  json_decref(c);
  free(dir);
}
END_TEST

START_TEST(test_dataparallel_overlap_saves_time)
{
  /* The same 3 buckets with and without overlap: overlapping saves time, but never more
   * than the backward pass it hides communication behind (2/3 of 6 flops per parameter
   * and example x 150794 parameters x 256 examples / 20.8 Gflop/s per core, x 5 steps). */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  json_t *on = run_timing(dir, "on", "dataparallel.bucket_mb=0.25", "dataparallel.overlap=on");
  json_t *off = run_timing(dir, "off", "dataparallel.bucket_mb=0.25", "dataparallel.overlap=off");
  double t_on = cli_num(on, "sim_time_s"), t_off = cli_num(off, "sim_time_s");
  double backward = 5 * 4.0 * 150016 * 256 / 20.8e9; /* 150016 weights: 150794 less 778 biases */
  ck_assert_msg(t_on < t_off, "overlap %.9g s, none %.9g s", t_on, t_off);
  ck_assert_msg(t_off - t_on <= backward * BACKWARD_SLACK, "saved %.9g s of a %.9g s backward", t_off - t_on, backward);
  /* and the same bytes went over the wire */
  ck_assert_double_eq(comm_bytes(on), comm_bytes(off));
  json_decref(on);
  json_decref(off);
  free(dir);
}
END_TEST

/* ---- ZeRO (dataparallel.zero) ------------------------------------------------------- */

static json_t *dp_block(const json_t *j)
{
  return json_object_get(j, "dataparallel");
}

static double mem_field(const json_t *j, const char *key)
{
  return json_number_value(json_object_get(json_object_get(dp_block(j), "memory_per_gpu"), key));
}

static long dp_count(const json_t *j, const char *key)
{
  return (long)json_integer_value(json_object_get(dp_block(j), key));
}

/* Runs base_ini with 5 replicas of 8 rows, one bucket (bucket_mb = 0) unless `bucket` says
 * otherwise, at the stage and optimizer given: SGD at lr 0.1, Adam at 0.01 (both train). */
static json_t *run_zero(const char *dir, int stage, const char *optimizer, const char *bucket, const char *extra)
{
  char out[64], z[32], opt[48];
  snprintf(out, sizeof out, "z%d-%s-%s", stage, optimizer, bucket + strlen("dataparallel.bucket_mb="));
  snprintf(z, sizeof z, "dataparallel.zero=%d", stage);
  snprintf(opt, sizeof opt, "dataparallel.optimizer=%s", optimizer);
  const char *lr = strcmp(optimizer, "adam") == 0 ? "dataparallel.lr=0.01" : "dataparallel.lr=0.1";
  const char *sets[] = {"dataparallel.replicas=5", "dataparallel.batch=8", lr, bucket, z, opt,
                        extra, NULL};
  return cli_run_sets(dir, out, sets, NULL);
}

START_TEST(test_dataparallel_zero_equals_ddp)
{
  /* Every stage trains the parameters plain data parallelism trains, with SGD and with Adam.
   * Stages 1 and 2 sum each bucket in the ring's own order (a ring allreduce is its
   * reduce-scatter, then its allgather; coll_reference) and apply the same element-wise
   * update to each block: bit for bit. Stage 3 reduce-scatters each layer on its own, so
   * an element's block, hence where its ring sum starts, may differ: TOL_ORDER_REL (with a
   * bucket per layer its units are the buckets, and it too is bit for bit). Stage 3's
   * replicas start with a NaN buffer and only their parameter shard: a gather that did not
   * deliver would show as a NaN loss. */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *opts[] = {"sgd", "adam"};
  double loss[2];
  for (int o = 0; o < 2; o++) {
    json_t *ddp = run_zero(dir, 0, opts[o], "dataparallel.bucket_mb=0", NULL);
    loss[o] = cli_num(ddp, "final_loss");
    ck_assert_msg(isfinite(loss[o]) && loss[o] < TRAINED_LOSS, "%s loss %.17g", opts[o], loss[o]);
    for (int z = 1; z <= 3; z++) {
      json_t *j = run_zero(dir, z, opts[o], "dataparallel.bucket_mb=0", NULL);
      double got = cli_num(j, "final_loss");
      ck_assert_int_eq((long)cli_num(j, "steps"), 40);
      if (z < 3)
        ck_assert_msg(got == loss[o], "%s stage %d: loss %.17g, DDP %.17g", opts[o], z, got, loss[o]);
      else
        ck_assert_msg(rel(got, loss[o]) < TOL_ORDER_REL, "%s stage 3: loss %.17g, DDP %.17g", opts[o], got, loss[o]);
      ck_assert(fabs(cli_num(j, "final_accuracy") - cli_num(ddp, "final_accuracy")) < TOL_ACCURACY);
      ck_assert_int_eq(dp_count(j, "zero"), z);
      json_decref(j);
    }
    json_decref(ddp);
  }
  /* a bucket per layer: each replica's shard is a block of each, its moments one after the other */
  json_t *ddp = run_zero(dir, 0, "adam", "dataparallel.bucket_mb=0.0005", NULL);
  for (int z = 1; z <= 3; z++) {
    json_t *j = run_zero(dir, z, "adam", "dataparallel.bucket_mb=0.0005", NULL);
    ck_assert_msg(cli_num(j, "final_loss") == cli_num(ddp, "final_loss"), "stage %d, buckets per layer: %.17g, DDP %.17g",
                  z, cli_num(j, "final_loss"), cli_num(ddp, "final_loss"));
    json_decref(j);
  }
  json_decref(ddp);
  /* Adam ran: its trajectory is another one */
  ck_assert_msg(rel(loss[1], loss[0]) > DRAWS_DIFFER_REL, "adam %.17g, sgd %.17g", loss[1], loss[0]);
  free(dir);
}
END_TEST

START_TEST(test_dataparallel_zero_collectives)
{
  /* With a bucket per layer (bucket_mb = 0.0005 MiB = 524 bytes: the 16-32-4 layers hold 544
   * and 132 fp32 elements) stage 3's layer units are stage 0's buckets, and per step and
   * unit: stage 0 allreduces; stages 1 and 2 reduce-scatter, then allgather the updated
   * parameters; stage 3 allgathers before forward and before backward and reduce-scatters. A
   * ring reduce-scatter and a ring allgather each send half of a ring allreduce, headers
   * included (p - 1 steps of every block plus one header per member, against 2(p - 1)):
   * stages 1 and 2 move stage 0's bytes and stage 3 one and a half times them (ZeRO's sec. 7:
   * 2 psi for P_os and P_os+g, 3 psi for P_os+g+p, per replica), exactly. */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *b = "dataparallel.bucket_mb=0.0005";
  json_t *j[4];
  for (int z = 0; z < 4; z++)
    j[z] = run_zero(dir, z, "sgd", b, NULL);
  long steps = 40, units = 2;
  ck_assert_int_eq(dp_count(j[0], "allreduces_per_replica"), steps * units);
  ck_assert_int_eq(dp_count(j[1], "reduce_scatters_per_replica"), steps * units);
  ck_assert_int_eq(dp_count(j[1], "allgathers_per_replica"), steps * units);
  ck_assert_int_eq(dp_count(j[1], "allreduces_per_replica"), 0);
  ck_assert_int_eq(dp_count(j[2], "reduce_scatters_per_replica"), steps * units);
  ck_assert_int_eq(dp_count(j[2], "allgathers_per_replica"), steps * units);
  ck_assert_int_eq(dp_count(j[2], "allreduces_per_replica"), 0);
  ck_assert_int_eq(dp_count(j[3], "reduce_scatters_per_replica"), steps * units);
  ck_assert_int_eq(dp_count(j[3], "allgathers_per_replica"), 2 * steps * units);
  ck_assert_double_eq(comm_bytes(j[2]), comm_bytes(j[0]));
  ck_assert_double_eq(comm_bytes(j[1]), comm_bytes(j[0]));
  ck_assert_double_eq(comm_bytes(j[3]), 1.5 * comm_bytes(j[0]));
  for (int z = 0; z < 4; z++)
    json_decref(j[z]);
  free(dir);
}
END_TEST

START_TEST(test_dataparallel_zero_memory)
{
  /* What replica 0 holds, Adam in fp32 (8 bytes of state per parameter) over 5 replicas, one
   * bucket of psi = 16*32+32 + 32*4+4 = 676 parameters. Shards: coll_block(676, 5, 0) = 136
   * elements (stages 1, 2); stage 3's layer units, coll_block(544, 5, 0) + coll_block(132, 5,
   * 0) = 109 + 27 = 136 too. Model state against ZeRO's formula (mem_zero_state, psi / 5 =
   * 135.2 per sharded quantity): stage 0 (4+4+8) 676; stage 1 4*676 + 4*676 + 8*136; stage 2
   * 4*676 + 12*136; stage 3 16*136. Stage 3 also holds both layers gathered (544 + 132 fp32
   * elements); every stage the activations of 8 rows of the 16, 32 and 4 units. */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const double psi = 676, shard = 136, want[4] = {16 * psi, 8 * psi + 8 * shard, 4 * psi + 12 * shard, 16 * shard};
  const double formula[4] = {16 * psi, 8 * psi + 8 * psi / 5, 4 * psi + 12 * psi / 5, 16 * psi / 5};
  for (int z = 0; z < 4; z++) {
    json_t *j = run_zero(dir, z, "adam", "dataparallel.bucket_mb=0", "run.max_steps=2");
    double state = mem_field(j, "parameters_bytes") + mem_field(j, "gradients_bytes") + mem_field(j, "optimizer_bytes");
    ck_assert_double_eq(mem_field(j, "model_state_bytes"), state);
    ck_assert_msg(state == want[z], "stage %d holds %.17g bytes, want %.17g", z, state, want[z]);
    ck_assert_double_eq_tol(mem_field(j, "model_state_formula_bytes"), formula[z], TOL_FORMULA_REL * formula[z]);
    ck_assert_double_eq(mem_field(j, "gathered_bytes"), z == 3 ? 4 * (544 + 132) : 0);
    ck_assert_double_eq(mem_field(j, "activations_bytes"), 8 * (16 + 32 + 4) * 4);
    ck_assert_double_eq(mem_field(j, "total_bytes"),
                        state + mem_field(j, "gathered_bytes") + mem_field(j, "activations_bytes"));
    json_decref(j);
  }
  free(dir);
}
END_TEST

/* The first event of replica `pid`'s process (its host) in trace.json named `name` (a prefix,
 * with prefix set) into *ts, *dur (us); 0 if there is none. */
static int trace_event(const json_t *events, long pid, const char *name, int prefix, double *ts, double *dur)
{
  size_t i;
  json_t *e;
  json_array_foreach(events, i, e) {
    const char *n = json_string_value(json_object_get(e, "name"));
    if (n == NULL || json_integer_value(json_object_get(e, "pid")) != pid ||
        (prefix ? strncmp(n, name, strlen(name)) != 0 : strcmp(n, name) != 0))
      continue;
    *ts = json_number_value(json_object_get(e, "ts"));
    *dur = json_number_value(json_object_get(e, "dur"));
    return 1;
  }
  return 0;
}

START_TEST(test_dataparallel_zero3_prefetch)
{
  /* Stage 3 (timing only, 4 layers, 4 replicas): the gather of layer l + 1 (unit l) starts
   * when layer l's forward starts, not after it, and runs beside it (one step, replica 0's
   * trace). And the replicas update their shards at once: the lock they share with the
   * evaluator does not cover the update's flops. */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *sets[16];
  int n = 0;
  for (; timing[n]; n++)
    sets[n] = timing[n];
  sets[n++] = "dataparallel.zero=3";
  sets[n++] = "run.max_steps=1";
  sets[n] = NULL;
  json_decref(cli_run_sets(dir, "z3", sets, "--trace"));
  char *text = cli_read(dir, "z3/trace.json");
  json_t *t = json_loads(text, 0, NULL), *ev = json_object_get(t, "traceEvents");
  ck_assert(json_is_array(ev));
  for (int l = 1; l <= 3; l++) {
    char fw[64], ag[64];
    double fts, fdur, ats, adur;
    snprintf(fw, sizeof fw, "forward: forward layer %d", l);
    snprintf(ag, sizeof ag, "allgather %d: ", l);
    ck_assert_msg(trace_event(ev, 0, fw, 0, &fts, &fdur) && trace_event(ev, 0, ag, 1, &ats, &adur), "layer %d", l);
    ck_assert_msg(ats <= fts && ats + adur > fts && fdur > 0, "layer %d at %.9g us, layer %d's gather at %.9g us", l, fts,
                  l + 1, ats);
  }
  double u0, d0;
  ck_assert(trace_event(ev, 0, "update", 0, &u0, &d0) && d0 > 0);
  for (long r = 1; r < 4; r++) {
    double u, d;
    ck_assert(trace_event(ev, r, "update", 0, &u, &d));
    ck_assert_msg(u == u0, "replica %ld updates at %.9g us, replica 0 at %.9g us", r, u, u0);
  }
  json_decref(t);
  free(text);
  free(dir);
}
END_TEST

START_TEST(test_dataparallel_determinism)
{
  /* Same seed: identical files, with 1 or 2 SimGrid threads; another seed: other files. Plain,
   * and ZeRO's stage 3. */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *files[] = {"summary.json", "progress.csv", "links.csv", "staleness.csv"};
  cli_assert_deterministic(dir, "base.ini", "dataparallel.replicas=4", files, sizeof(files) / sizeof(files[0]));
  /* stage 3: every replica's shard locked against the evaluator's snapshot */
  cli_assert_deterministic(dir, "base.ini", "dataparallel.zero=3", files, sizeof(files) / sizeof(files[0]));
  free(dir);
}
END_TEST

START_TEST(test_dataparallel_bad_input)
{
  char *dir = cli_tmpdir();
  const char *virt[] = {"run", "--out", "out", "--set", "run.algorithm=dataparallel", "--set",
                        "model.virtual=speech-42m", NULL};
  cli_assert_bad_input(dir, virt, "model.virtual");
  const char *coll[] = {"run", "--out", "out", "--set", "run.algorithm=dataparallel", "--set",
                        "dataparallel.collective=butterfly", NULL};
  cli_assert_bad_input(dir, coll, "dataparallel.collective");
  const char *zero[] = {"run", "--out", "out", "--set", "run.algorithm=dataparallel", "--set",
                        "dataparallel.replicas=0", NULL};
  cli_assert_bad_input(dir, zero, "dataparallel.replicas");
  const char *neg[] = {"run", "--out", "out", "--set", "run.algorithm=dataparallel", "--set",
                       "dataparallel.bucket_mb=-1", NULL};
  cli_assert_bad_input(dir, neg, "dataparallel.bucket_mb");
  const char *stage[] = {"run", "--out", "out", "--set", "run.algorithm=dataparallel", "--set",
                         "dataparallel.zero=4", NULL};
  cli_assert_bad_input(dir, stage, "dataparallel.zero");
  const char *opt[] = {"run", "--out", "out", "--set", "run.algorithm=dataparallel", "--set",
                       "dataparallel.optimizer=lamb", NULL};
  cli_assert_bad_input(dir, opt, "dataparallel.optimizer");
  const char *rows[] = {"run", "--out", "out", "--set", "run.algorithm=dataparallel", "--set", "data.train=3",
                        "--set", "dataparallel.replicas=4", NULL};
  cli_assert_bad_input(dir, rows, "dataparallel.replicas");
  const char *gen[] = {"platform", "--hosts", "2", "--topology", "star", "-o", "two.xml", NULL};
  ck_assert_int_eq(cli_run(dir, gen), 0);
  const char *hosts[] = {"run", "--out", "out", "--set", "run.algorithm=dataparallel", "--set", "platform.file=two.xml",
                         "--set", "dataparallel.replicas=4", NULL};
  cli_assert_bad_input(dir, hosts, "the platform has 2 hosts, the run needs 4 (dataparallel.replicas)");
  free(dir);
}
END_TEST

static Suite *dataparallel_suite(void)
{
  Suite *s = suite_create("dataparallel");
  TCase *tc = tcase_create("sequential");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_dataparallel_one_replica_is_sgd);
  tcase_add_test(tc, test_dataparallel_equals_large_batch_sgd);
  tcase_add_test(tc, test_dataparallel_bit_for_bit);
  tcase_add_test(tc, test_dataparallel_converges_and_stops);
  tcase_add_test(tc, test_dataparallel_collective_independent);
  suite_add_tcase(s, tc);
  tc = tcase_create("buckets");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_dataparallel_bucket_bytes);
  tcase_add_test(tc, test_dataparallel_overlap_saves_time);
  suite_add_tcase(s, tc);
  tc = tcase_create("zero");
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, test_dataparallel_zero_equals_ddp);
  tcase_add_test(tc, test_dataparallel_zero_collectives);
  tcase_add_test(tc, test_dataparallel_zero_memory);
  tcase_add_test(tc, test_dataparallel_zero3_prefetch);
  suite_add_tcase(s, tc);
  tc = tcase_create("determinism");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_dataparallel_determinism);
  suite_add_tcase(s, tc);
  tc = tcase_create("limits");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_dataparallel_bad_input);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(dataparallel_suite)

/* sim_rounds.c - run.collectives = rounds through the CLI (one simulation per process), each
 * scenario run at message level and as rounds: the numerics of data and tensor parallelism bit
 * for bit, the bytes on every link (links.csv) and in total identical, simulated times within
 * TOL_ROUNDS_REL where the ring's routes are alike and nothing else shares its links, within
 * TOL_CONCURRENT_REL beside other traffic (algorithms/README.md, Collectives: the error table has
 * where rounds are further off), the same files on two SimGrid threads, halving-doubling left at
 * message level, and rounds refused with host failures; then tensor.fuse_layers against layer
 * by layer (the same time to rounding inside a node, the same bytes, refused with numerics).
 * The rounds themselves (every op and member count, the formula, uneven blocks, batches) are
 * tested in process in check_collectives.c. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli_util.h"

/* Tolerances, each with where it comes from. */
/* TOL_ROUNDS_REL: a round adds the same latencies and bytes as the step messages in another
 * grouping; on rings whose pairs take alike routes the times agree to rounding, ~events x u
 * (measured here: at most 6e-15); 1e-9 leaves a margin and is far below one latency of a step. */
#define TOL_ROUNDS_REL 1e-9
/* TOL_CONCURRENT_REL: a round's latencies pass before its bytes where message steps interleave
 * them, so other traffic on the same links (boundary messages beside a tensor group's
 * allreduces) meets the ring's bytes in one block: measured 9e-5 of Tflop/s on the 3D case
 * below, 3.3e-5 on PTD-P's 76.1B row; 1e-3 bounds it. */
#define TOL_CONCURRENT_REL 1e-3
/* TOL_FORMULA_REL: a ring allreduce on a contention-free star without cross traffic against its
 * alpha-beta formula, as check_collectives' TOL_ROUNDS_REL (measured 4e-16). */
#define TOL_FORMULA_REL 1e-12

static double rel(double a, double b)
{
  return fabs(a - b) / fmax(fabs(b), 1e-300);
}

static const json_t *block(const json_t *j, const char *name)
{
  return json_object_get(j, name);
}

static double bnum(const json_t *j, const char *b, const char *key)
{
  return json_number_value(json_object_get(block(j, b), key));
}

static double bytes_total(const json_t *j)
{
  return bnum(j, "comm", "bytes_total");
}

/* links.csv of runs a and b (under dir) name the same links with the same bytes (its
 * utilization column divides by each run's own simulated time). */
static void same_link_bytes(const char *dir, const char *a, const char *b)
{
  char pa[64], pb[64];
  snprintf(pa, sizeof pa, "%s/links.csv", a);
  snprintf(pb, sizeof pb, "%s/links.csv", b);
  char *x = cli_read(dir, pa), *y = cli_read(dir, pb);
  ck_assert(x != NULL && y != NULL);
  ck_assert_int_eq(cli_lines(x), cli_lines(y));
  ck_assert(cli_lines(x) > 1);
  for (char *p = x, *q = y; *p && *q;) {
    size_t lp = strcspn(p, "\n"), lq = strcspn(q, "\n");
    /* link,bytes,utilization: the line up to its second comma */
    size_t kp = strcspn(p, ","), kq = strcspn(q, ",");
    kp += kp < lp ? 1 + strcspn(p + kp + 1, ",\n") : 0;
    kq += kq < lq ? 1 + strcspn(q + kq + 1, ",\n") : 0;
    ck_assert_msg(kp == kq && strncmp(p, q, kp) == 0, "links.csv: '%.*s' against '%.*s'", (int)lp, p, (int)lq, q);
    p += lp + (p[lp] == '\n');
    q += lq + (q[lq] == '\n');
  }
  free(x);
  free(y);
}

/* `dtsim run base.ini` twice with the sets and (if not NULL) one more argument: with set `a`
 * into dir/A, then with `b` into dir/B; *ja and *jb receive the summaries. */
static void pair(const char *dir, const char *const *sets, const char *extra, const char *a, const char *da,
                 const char *b, const char *db, json_t **ja, json_t **jb)
{
  const char *s[32];
  size_t n = 0;
  for (; sets[n]; n++)
    s[n] = sets[n];
  s[n + 1] = NULL;
  s[n] = a;
  *ja = cli_run_sets(dir, da, s, extra);
  s[n] = b;
  *jb = cli_run_sets(dir, db, s, extra);
}

/* At message level into dir/m and as rounds into dir/r. */
static void both(const char *dir, const char *const *sets, const char *extra, json_t **m, json_t **r)
{
  pair(dir, sets, extra, "run.collectives=messages", "m", "run.collectives=rounds", "r", m, r);
}

static const char dp_ini[] = "[run]\nalgorithm = dataparallel\nmax_steps = 20\neval_every = 0.01\n"
                             "[model]\nlayers = 16,32,4\n"
                             "[data]\ntrain = 4000\ntest = 1000\n"
                             "[dataparallel]\nreplicas = 4\nbatch = 16\n";

/* Data parallelism, numerics on, 4 replicas on distbelief-2012, all in one rack (676 parameters,
 * even blocks: uneven ones make rounds shorter by up to one element per step, check_collectives): the same losses, accuracies and steps bit for bit (the ring's sums in its own order),
 * the same bytes on every link, the simulated time within TOL_ROUNDS_REL. With halving-doubling
 * rounds change nothing: the same files but for the key itself. */
START_TEST(test_rounds_dataparallel)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", dp_ini);
  const char *ring[] = {"dataparallel.collective=ring", NULL};
  json_t *m, *r;
  both(dir, ring, NULL, &m, &r);
  ck_assert_msg(cli_num(m, "final_loss") == cli_num(r, "final_loss"), "loss %.17g vs %.17g", cli_num(m, "final_loss"),
                cli_num(r, "final_loss"));
  ck_assert(cli_num(m, "final_accuracy") == cli_num(r, "final_accuracy"));
  ck_assert(cli_num(m, "steps") == 20 && cli_num(r, "steps") == 20);
  ck_assert(bytes_total(m) > 0 && bytes_total(m) == bytes_total(r));
  same_link_bytes(dir, "m", "r");
  ck_assert_msg(rel(cli_num(r, "sim_time_s"), cli_num(m, "sim_time_s")) <= TOL_ROUNDS_REL, "time %.17g vs %.17g",
                cli_num(r, "sim_time_s"), cli_num(m, "sim_time_s"));
  json_decref(m);
  json_decref(r);
  const char *hd[] = {"dataparallel.collective=halving-doubling", NULL};
  both(dir, hd, NULL, &m, &r);
  ck_assert(cli_num(m, "sim_time_s") == cli_num(r, "sim_time_s") && cli_num(m, "final_loss") == cli_num(r, "final_loss"));
  const char *files[] = {"links.csv", "progress.csv", "breakdown.csv"};
  cli_assert_same_files(dir, "m", "r", files, 3);
  json_decref(m);
  json_decref(r);
  free(dir);
}
END_TEST

/* The same rounds run on one and on two SimGrid threads: identical result files. */
START_TEST(test_rounds_threads)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", dp_ini);
  const char *sets[] = {"run.collectives=rounds", NULL};
  json_decref(cli_run_sets(dir, "one", sets, NULL));
  json_decref(cli_run_sets(dir, "two", sets, "--cfg=contexts/nthreads:2"));
  const char *files[] = {"summary.json", "progress.csv", "links.csv", "breakdown.csv"};
  cli_assert_same_files(dir, "one", "two", files, 4);
  free(dir);
}
END_TEST

static const char tensor_ini[] = "[run]\nalgorithm = tensor\n[platform]\npreset = dgx2h\nhosts = 16\n"
                                 "[tensor]\nranks = 4\nhidden = 32\nheads = 4\nlayers = 3\nseq = 8\n"
                                 "microbatch = 3\nmicrobatches = 2\nsteps = 2\n";

/* Tensor parallelism with numerics, plain and sequence-parallel (allreduces, then
 * reduce-scatters and allgathers), inside a dgx2h node: the check against the serial stack
 * finds the same largest error bit for bit, the bytes are the same and the step time agrees. */
START_TEST(test_rounds_tensor_numerics)
{
  static const char *sp[] = {"tensor.sequence_parallel=off", "tensor.sequence_parallel=on"};
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", tensor_ini);
  const char *sets[] = {sp[_i], NULL};
  json_t *m, *r;
  both(dir, sets, NULL, &m, &r);
  const json_t *cm = json_object_get(block(m, "tensor"), "check"), *cr = json_object_get(block(r, "tensor"), "check");
  ck_assert(json_is_true(json_object_get(cm, "numeric")) && json_is_true(json_object_get(cr, "numeric")));
  double em = json_number_value(json_object_get(cm, "max_rel_error")),
         er = json_number_value(json_object_get(cr, "max_rel_error"));
  ck_assert_msg(em == er, "%s: max relative error %.17g at message level, %.17g as rounds", sp[_i], em, er);
  ck_assert(bytes_total(m) > 0 && bytes_total(m) == bytes_total(r));
  double tm = bnum(m, "tensor", "step_time_s"), tr = bnum(r, "tensor", "step_time_s");
  ck_assert_msg(rel(tr, tm) <= TOL_ROUNDS_REL, "%s: step %.17g vs %.17g", sp[_i], tr, tm);
  json_decref(m);
  json_decref(r);
  free(dir);
}
END_TEST

static const char p3d_ini[] = "[run]\nalgorithm = pipeline\nmax_steps = 1\n[platform]\npreset = selene\n"
                              "[model]\nnumerics = off\ndtype = fp16\n"
                              "[pipeline]\nmodel = transformer\nstages = 2\nmicrobatches = 4\n"
                              "schedule = interleaved\nchunks = 2\n"
                              "[tensor]\nranks = 4\ndata_parallel = 2\nhidden = 256\nheads = 8\nlayers = 8\n"
                              "seq = 64\nmicrobatch = 2\nvocab = 1024\nrecompute = on\n";

/* 3D parallelism (t = 4, d = 2, p = 2 interleaved, over two selene nodes): tensor allreduces,
 * boundary allgathers, data-parallel and embedding allreduces all as rounds give the same
 * boundary and total bytes, the same bytes on every link and Tflop/s per GPU within
 * TOL_CONCURRENT_REL. */
START_TEST(test_rounds_pipeline3d)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", p3d_ini);
  const char *none[] = {NULL};
  json_t *m, *r;
  both(dir, none, NULL, &m, &r);
  ck_assert(bnum(m, "pipeline", "p2p_bytes") == bnum(r, "pipeline", "p2p_bytes"));
  ck_assert(bytes_total(m) > 0 && bytes_total(m) == bytes_total(r));
  same_link_bytes(dir, "m", "r");
  double fm = bnum(m, "pipeline", "tflops_per_gpu"), fr = bnum(r, "pipeline", "tflops_per_gpu");
  ck_assert_msg(fm > 0 && rel(fr, fm) <= TOL_CONCURRENT_REL, "Tflop/s per GPU %.17g vs %.17g", fr, fm);
  json_decref(m);
  json_decref(r);
  free(dir);
}
END_TEST

static const char gpt3d_ini[] = "[run]\nalgorithm = pipeline\nmax_steps = 6\neval_every = 0.00015\n"
                                "[platform]\npreset = selene\nhosts = 8\n"
                                "[model]\nnumerics = on\ndtype = bf16\nefficiency = 0.5\n"
                                "[data]\ntrain = 512\ntest = 32\n"
                                "[pipeline]\nmodel = transformer\nstages = 2\nmicrobatches = 4\n"
                                "schedule = 1f1b\noptimizer = adam\nlr = 0.01\n"
                                "[tensor]\nranks = 2\ndata_parallel = 2\nhidden = 32\nheads = 4\nlayers = 2\n"
                                "seq = 8\nmicrobatch = 2\nvocab = 32\n";

/* progress.csv of runs a and b (under dir) agree in every column but the first (the simulated
 * time of each evaluation). */
static void same_progress_numbers(const char *dir, const char *a, const char *b)
{
  char pa[64], pb[64];
  snprintf(pa, sizeof pa, "%s/progress.csv", a);
  snprintf(pb, sizeof pb, "%s/progress.csv", b);
  char *x = cli_read(dir, pa), *y = cli_read(dir, pb);
  ck_assert(x != NULL && y != NULL);
  ck_assert_int_eq(cli_lines(x), cli_lines(y));
  ck_assert(cli_lines(x) > 2);
  for (char *p = x, *q = y; *p && *q;) {
    size_t lp = strcspn(p, "\n"), lq = strcspn(q, "\n");
    size_t kp = strcspn(p, ","), kq = strcspn(q, ",");
    ck_assert_msg(lp - kp == lq - kq && strncmp(p + kp, q + kq, lp - kp) == 0, "progress.csv: '%.*s' against '%.*s'",
                  (int)lp, p, (int)lq, q);
    p += lp + (p[lp] == '\n');
    q += lq + (q[lq] == '\n');
  }
  free(x);
  free(y);
}

/* 3D parallelism training a real GPT (t = 2, d = 2, p = 2, Adam), without and with sequence
 * parallelism (which adds two numeric collectives): the tensor groups' reductions, boundary
 * allgathers, data-parallel and embedding-tie allreduces as rounds sum the same buffers in the
 * same order, so the losses and accuracies of every evaluation, the final parameters' hash and
 * the bytes on every link are those of message level, the Tflop/s per GPU within
 * TOL_CONCURRENT_REL. */
START_TEST(test_rounds_gpt3d_numerics)
{
  static const char *sp[] = {"tensor.sequence_parallel=off", "tensor.sequence_parallel=on"};
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", gpt3d_ini);
  const char *sets[] = {sp[_i], NULL};
  json_t *m, *r;
  both(dir, sets, NULL, &m, &r);
  const json_t *gm = json_object_get(block(m, "pipeline"), "gpt"), *gr = json_object_get(block(r, "pipeline"), "gpt");
  const char *hm = json_string_value(json_object_get(gm, "params_hash")),
             *hr = json_string_value(json_object_get(gr, "params_hash"));
  ck_assert(hm != NULL && hr != NULL);
  ck_assert_msg(strcmp(hm, hr) == 0, "%s: parameters' hash %s at message level, %s as rounds", sp[_i], hm, hr);
  double lm = json_number_value(json_object_get(gm, "train_loss")),
         lr = json_number_value(json_object_get(gr, "train_loss"));
  ck_assert_msg(lm > 0 && lm == lr, "%s: train loss %.17g vs %.17g", sp[_i], lm, lr);
  same_progress_numbers(dir, "m", "r");
  same_link_bytes(dir, "m", "r");
  double fm = bnum(m, "pipeline", "tflops_per_gpu"), fr = bnum(r, "pipeline", "tflops_per_gpu");
  ck_assert_msg(fm > 0 && rel(fr, fm) <= TOL_CONCURRENT_REL, "%s: Tflop/s per GPU %.17g vs %.17g", sp[_i], fr, fm);
  json_decref(m);
  json_decref(r);
  free(dir);
}
END_TEST

/* A numeric ring allreduce of 8 MiB over 8 ranks of a star without cross traffic (the README's
 * worked example): as rounds, every member's sum equals the serial reference bit for bit and the
 * time is the alpha-beta formula's. */
START_TEST(test_rounds_collective)
{
  char *dir = cli_tmpdir();
  const char *gen[] = {"platform", "--hosts", "8", "--topology", "star", "--bw", "12.5G", "--lat", "1us", "-o",
                       "star8.xml", NULL};
  ck_assert_int_eq(cli_run(dir, gen), 0);
  cli_write(dir, "base.ini",
            "[run]\nalgorithm = collective\ncollectives = rounds\n[platform]\nfile = star8.xml\n"
            "[collective]\nranks = 8\nbytes = 8388608\nalgorithm = ring\n");
  const char *none[] = {NULL};
  json_t *j = cli_run_sets(dir, "out", none, "--cfg=network/crosstraffic:0");
  const json_t *c = block(j, "collective"), *ck = json_object_get(c, "check");
  ck_assert(json_is_true(json_object_get(ck, "numeric")) && json_is_true(json_object_get(ck, "exact")));
  double t = bnum(j, "collective", "time_s"), f = bnum(j, "collective", "formula_s");
  ck_assert_msg(rel(t, f) <= TOL_FORMULA_REL, "time %.17g, formula %.17g", t, f);
  json_decref(j);
  free(dir);
}
END_TEST

/* ---- tensor.fuse_layers ------------------------------------------------------------ */

/* Layer by layer into dir/u and fused into dir/f. */
static void fuse_both(const char *dir, const char *const *sets, json_t **u, json_t **f)
{
  pair(dir, sets, NULL, "tensor.fuse_layers=off", "u", "tensor.fuse_layers=on", "f", u, f);
}

static const char fuse_ini[] = "[run]\nalgorithm = tensor\n[platform]\npreset = dgx2h\nhosts = 32\n"
                               "[model]\nnumerics = off\ndtype = fp16\n"
                               "[tensor]\nranks = 8\nhidden = 1024\nheads = 16\nlayers = 5\nseq = 512\n"
                               "microbatch = 2\nmicrobatches = 3\nsteps = 2\n";

/* A tensor group of 8 inside a dgx2h node (d = 2 puts a replica in each half), each variant at
 * message level and as rounds: a fused pass adds the same executions and the same collectives'
 * latencies and bytes in another grouping, so the step time agrees to rounding (TOL_ROUNDS_REL)
 * and every link carries the same bytes. The variants reach every branch of the fused pass:
 * recomputation, sequence parallelism, the weight gradients after their reductions, the
 * vocabulary's layers around it and data-parallel buckets that leave during the last backward
 * (that backward runs layer by layer). */
START_TEST(test_fuse_tensor)
{
  static const char *variant[][4] = {
    {NULL},
    {"tensor.recompute=on", "tensor.sequence_parallel=on", NULL},
    {"tensor.async_grad_allreduce=off", "tensor.recompute=on", NULL},
    {"tensor.vocab=4096", "tensor.kernels=fused", NULL},
    {"tensor.data_parallel=2", "tensor.dp_overlap=on", "tensor.bucket_bytes=4000000", NULL},
  };
  static const char *mode[] = {"run.collectives=messages", "run.collectives=rounds"};
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", fuse_ini);
  for (size_t k = 0; k < 2; k++) {
    const char *sets[8];
    size_t n = 0;
    for (; variant[_i][n]; n++)
      sets[n] = variant[_i][n];
    sets[n++] = mode[k];
    sets[n] = NULL;
    json_t *u, *f;
    fuse_both(dir, sets, &u, &f);
    double tu = bnum(u, "tensor", "step_time_s"), tf = bnum(f, "tensor", "step_time_s");
    ck_assert_msg(tu > 0 && rel(tf, tu) <= TOL_ROUNDS_REL, "variant %d, %s: step %.17g fused, %.17g layer by layer",
                  _i, mode[k], tf, tu);
    ck_assert(bytes_total(u) > 0 && bytes_total(u) == bytes_total(f));
    same_link_bytes(dir, "u", "f");
    json_decref(u);
    json_decref(f);
  }
  free(dir);
}
END_TEST

/* 3D parallelism as in test_rounds_pipeline3d, as rounds, fused: the boundary messages share the
 * hosts' links with the tensor groups' transfers, which a fused pass sends at other times, so
 * Tflop/s per GPU within TOL_CONCURRENT_REL; the bytes on every link are the same. */
START_TEST(test_fuse_pipeline3d)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", p3d_ini);
  const char *sets[] = {"run.collectives=rounds", NULL};
  json_t *u, *f;
  fuse_both(dir, sets, &u, &f);
  ck_assert(bnum(u, "pipeline", "p2p_bytes") == bnum(f, "pipeline", "p2p_bytes"));
  ck_assert(bytes_total(u) > 0 && bytes_total(u) == bytes_total(f));
  same_link_bytes(dir, "u", "f");
  double fu = bnum(u, "pipeline", "tflops_per_gpu"), ff = bnum(f, "pipeline", "tflops_per_gpu");
  ck_assert_msg(fu > 0 && rel(ff, fu) <= TOL_CONCURRENT_REL, "Tflop/s per GPU %.17g fused, %.17g layer by layer", ff,
                fu);
  json_decref(u);
  json_decref(f);
  free(dir);
}
END_TEST

/* A fused pass computes no layer's values: with numerics it exits 2 with one line, for the
 * tensor algorithm and for 3D stages. */
START_TEST(test_fuse_refused_with_numerics)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", tensor_ini);
  const char *args[] = {"run", "base.ini", "--quiet", "--out", "out", "--set", "tensor.fuse_layers=on", NULL};
  cli_assert_bad_input(dir, args, "tensor.fuse_layers: fused layer passes are timing only");
  cli_write(dir, "base.ini", gpt3d_ini);
  cli_assert_bad_input(dir, args, "tensor.fuse_layers: fused layer passes are timing only");
  free(dir);
}
END_TEST

/* A round waits for every member: rounds with host failures exit 2 with one line. */
START_TEST(test_rounds_refused_with_failures)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", dp_ini);
  const char *args[] = {"run", "base.ini", "--quiet", "--out", "out", "--set", "run.collectives=rounds", "--set",
                        "faults.host_failures=replica2@0.001", NULL};
  cli_assert_bad_input(dir, args, "run.collectives: rounds cannot lose a member");
  free(dir);
}
END_TEST

static Suite *rounds_suite(void)
{
  Suite *s = suite_create("rounds");
  TCase *tc = tcase_create("rounds");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_rounds_dataparallel);
  tcase_add_test(tc, test_rounds_threads);
  tcase_add_loop_test(tc, test_rounds_tensor_numerics, 0, 2);
  tcase_add_test(tc, test_rounds_pipeline3d);
  tcase_add_loop_test(tc, test_rounds_gpt3d_numerics, 0, 2);
  tcase_add_test(tc, test_rounds_collective);
  tcase_add_test(tc, test_rounds_refused_with_failures);
  tcase_add_loop_test(tc, test_fuse_tensor, 0, 5);
  tcase_add_test(tc, test_fuse_pipeline3d);
  tcase_add_test(tc, test_fuse_refused_with_numerics);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(rounds_suite)

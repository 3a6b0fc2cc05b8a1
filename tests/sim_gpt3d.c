/* sim_gpt3d.c - Check suite (label sim) for 3D parallelism with real numerics
 * (run.algorithm = pipeline, pipeline.model = transformer, model.numerics = on), through the
 * CLI, one simulation per process: for every schedule, with and without recomputation and
 * sequence parallelism, at p = 2 and 4 stages, t = 2, d = 2, the parameters after k steps
 * equal the serial GPT's after the same steps on the same batches within the tolerance below
 * (the run's own pipeline.serial_check), every copy of an entry agrees bit for bit, and
 * the schedules agree with each other bit for bit; Adam within its own bound; ZeRO-1
 * (pipeline.zero = 1) within the same bounds, hence near zero = 0's; the numerics
 * leave the simulated time and bytes of a timing-only run as they are (sequence parallelism
 * adds exactly its two numeric collectives); the committed tests/scenarios/gpt3d.ini lowers
 * the held-out loss; bad input exits 2. */
#include <check.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/msg.h"
#include "cli_util.h"
#include "check_util.h"

/* ---- the tolerance, from the order of the sums ----
 * The 3D run and the serial GPT (models/gpt.h: plain loops, one process) compute the same
 * function of the same inputs; they differ only in the order in which floating-point sums are
 * taken: BLAS GEMMs over a rank's columns or rows, then the tensor group's sum in the ring's
 * order, against the reference's loops; the step's gradient over the microbatches, then the d
 * replicas in the ring's order, and the tied embedding's two halves; the softmax denominator
 * over V/t tokens, then the ranks. Two orders of one sum of N terms differ by at most
 * 2 (N-1) u sum|x_i| to first order (Higham, "The accuracy of floating point summation",
 * SIAM J. Sci. Comput. 14, 1993: a sum of N terms, added in any order, errs by at most
 * (N-1) u sum|x_i|), u = 2^-53. The longest such sum is N = max(4h, V, m d b s): the MLP's
 * inner products, the softmax, and a weight gradient summed over the step's m d b s
 * predictions. Along the backward chain an error passes through at most D = 4L + 6 reordered
 * sums (2 per layer forward, 2 per layer backward, the embedding, the three reductions of the
 * cross-entropy, the data-parallel sum, the embedding tie), to first order adding; with
 * sum|x_i| at most KAPPA = 10 times |sum x_i| on the sums that matter (a stated allowance for
 * cancellation), a gradient entry is off by at most 2 D N u KAPPA of its size. SGD is linear
 * in the gradient, so after k steps |w_3d - w_serial| <= that fraction of lr x sum |g|, i.e.
 * of how far the parameters moved (the second-order effect, earlier differences changing later
 * gradients by lr x Lipschitz x |dw| per step, is negligible for k = 3 at lr = 0.05); the update
 * w -= lr g itself rounds w, at most u |w| per step whenever the two g differ, |w| <= W_MAX.
 * Hence, relative to the largest distance moved (pipeline.check.max_moved):
 *   TOL_SGD = 2 D N u KAPPA + 2 k u W_MAX / moved.
 * At the shapes below (h = 16, V = 16, L = 8, m = 4, d = 2, b = 2, s = 8: N = 128, D = 38) that
 * is about 1.1e-11; measured: 6e-15 (1.1e-16, half an ulp of a parameter near 1, over 0.0185
 * moved). A missing embedding-tie sum or sequence-parallel LayerNorm sum is off by 0.43 and
 * 0.041 (measured by removing them from the code). Adam divides each entry's update by
 * sqrt(vhat) + eps: a gradient error dg becomes at most lr |dg| / eps, and each step moves an
 * entry by at most about lr, so with gradients at most G_MAX:
 *   TOL_ADAM = 2 D N u KAPPA G_MAX / eps    (eps = 1e-8: about 2e-3; measured 2e-11). */
#define U (DBL_EPSILON / 2)
#define KAPPA 10.0
#define W_MAX 2.0 /* LayerNorm gains start at 1, weights within sqrt(6 / 2h) < 0.5: measured 1 */
#define G_MAX 2.0 /* the largest gradient entry at these shapes, measured at the start: 1.26 */
#define ADAM_EPS 1e-8
#define STEPS 3

static const size_t H = 16, V = 16, L = 8, M = 4, D = 2, B = 2, S = 8;

static double n_longest(void)
{
  double n = fmax(4.0 * (double)H, (double)V);
  return fmax(n, (double)(M * D * B * S));
}

static double tol_sgd(double moved)
{
  double depth = 4.0 * (double)L + 6;
  return 2 * depth * n_longest() * U * KAPPA + 2.0 * STEPS * U * W_MAX / moved;
}

static double tol_adam(void)
{
  double depth = 4.0 * (double)L + 6;
  return 2 * depth * n_longest() * U * KAPPA * G_MAX / ADAM_EPS;
}

/* A numeric 3D run of the small GPT above with the extra sets; returns summary.json. */
static json_t *run(const char *dir, const char *out, const char *const *sets)
{
  static const char *base[] = {"run.algorithm=pipeline", "pipeline.model=transformer", "model.numerics=on",
                               "tensor.ranks=2",         "tensor.data_parallel=2",     "tensor.hidden=16",
                               "tensor.heads=4",         "tensor.layers=8",            "tensor.seq=8",
                               "tensor.microbatch=2",    "tensor.vocab=16",            "pipeline.microbatches=4",
                               "run.max_steps=3",        "data.train=256",             "data.test=32",
                               "pipeline.serial_check=on"};
  const char *args[64] = {"run", "--quiet", "--out", out};
  size_t n = 4;
  for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) {
    args[n++] = "--set";
    args[n++] = base[i];
  }
  for (size_t i = 0; sets[i]; i++) {
    args[n++] = "--set";
    args[n++] = sets[i];
  }
  args[n] = NULL;
  ck_assert_uint_lt(n, 63);
  return cli_summary(dir, args, out);
}

static json_t *block(json_t *j, const char *a, const char *b)
{
  return json_object_get(json_object_get(json_object_get(j, "pipeline"), a), b);
}

static double num(json_t *j, const char *a, const char *b)
{
  return json_number_value(block(j, a, b));
}

static double pnum(json_t *j, const char *key)
{
  return json_number_value(json_object_get(json_object_get(j, "pipeline"), key));
}

/* Asserts the serial check and the copies of run j; returns its parameters' hash (strdup). */
static char *assert_serial(json_t *j, const char *what, double tol)
{
  ck_assert_msg(json_is_true(block(j, "check", "serial")), "%s: no serial check", what);
  ck_assert_int_eq((int)num(j, "check", "steps"), STEPS);
  double moved = num(j, "check", "max_moved"), rel = num(j, "check", "max_rel_error");
  double t = tol > 0 ? tol : tol_sgd(moved);
  ck_assert_msg(moved > 1e-3, "%s: the parameters moved only %g", what, moved);
  ck_assert_msg(rel <= t, "%s: parameters %.3g from the serial GPT's (relative), tolerance %.3g", what, rel, t);
  ck_assert_msg(num(j, "gpt", "copies_max_diff") == 0, "%s: copies of an entry differ by %g", what,
                num(j, "gpt", "copies_max_diff"));
  return strdup(json_string_value(block(j, "gpt", "params_hash")));
}

START_TEST(test_gpt3d_equals_serial)
{
  /* _i: p = 2 or 4. For each sequence-parallel setting, every schedule with and without
   * recomputation: the serial GPT within TOL_SGD, and all six bit for bit the same (every
   * schedule adds a chunk's microbatch gradients in microbatch order, and recomputation
   * recomputes the same values). */
  char *dir = cli_tmpdir(), stages[32];
  snprintf(stages, sizeof stages, "pipeline.stages=%d", _i == 0 ? 2 : 4);
  static const char *sched[][2] = {{"pipeline.schedule=gpipe", "pipeline.chunks=1"},
                                   {"pipeline.schedule=1f1b", "pipeline.chunks=1"},
                                   {"pipeline.schedule=interleaved", "pipeline.chunks=2"}};
  for (int sp = 0; sp < 2; sp++) {
    char *first = NULL;
    for (size_t k = 0; k < 3; k++)
      for (int rc = 0; rc < 2; rc++) {
        const char *sets[] = {stages, sched[k][0], sched[k][1],
                              sp ? "tensor.sequence_parallel=on" : "tensor.sequence_parallel=off",
                              rc ? "tensor.recompute=on" : "tensor.recompute=off", NULL};
        char what[160];
        snprintf(what, sizeof what, "%s %s %s %s", stages, sched[k][0], sets[3], sets[4]);
        json_t *j = run(dir, "out", sets);
        char *hash = assert_serial(j, what, 0);
        if (first == NULL)
          first = hash;
        else {
          ck_assert_msg(strcmp(hash, first) == 0, "%s: parameters %s, the first schedule's %s", what, hash, first);
          free(hash);
        }
        json_decref(j);
      }
    free(first);
  }
  free(dir);
}
END_TEST

START_TEST(test_gpt3d_adam)
{
  /* Adam on every schedule, sequence-parallel: within TOL_ADAM of the serial GPT's Adam */
  char *dir = cli_tmpdir();
  static const char *sched[][2] = {{"pipeline.schedule=gpipe", "pipeline.chunks=1"},
                                   {"pipeline.schedule=1f1b", "pipeline.chunks=1"},
                                   {"pipeline.schedule=interleaved", "pipeline.chunks=2"}};
  for (size_t k = 0; k < 3; k++) {
    const char *sets[] = {sched[k][0], sched[k][1], "tensor.sequence_parallel=on", "pipeline.optimizer=adam",
                          "pipeline.lr=0.01", NULL};
    json_t *j = run(dir, "out", sets);
    free(assert_serial(j, sched[k][0], tol_adam()));
    ck_assert_str_eq(json_string_value(block(j, "gpt", "optimizer")), "adam");
    json_decref(j);
  }
  free(dir);
}
END_TEST

START_TEST(test_gpt3d_edges)
{
  /* the corners of the composition: one stage (the tie is a local sum, also across two
   * interleaved chunks of one device), one tensor rank, one replica, three replicas, four
   * tensor ranks with sequence parallelism, whole boundaries (no scatter/gather), a given
   * split, tree allreduces, a synchronous input-gradient allreduce */
  char *dir = cli_tmpdir();
  static const char *cases[][4] = {
      {"pipeline.stages=1", NULL},
      {"pipeline.stages=1", "pipeline.schedule=interleaved", "pipeline.chunks=2", NULL},
      {"tensor.ranks=1", NULL},
      {"tensor.data_parallel=1", NULL},
      {"tensor.data_parallel=3", NULL},
      {"tensor.ranks=4", "tensor.sequence_parallel=on", NULL},
      {"pipeline.scatter_gather=off", "tensor.sequence_parallel=on", NULL},
      {"pipeline.split=3,5", "tensor.collective=tree", "tensor.async_grad_allreduce=off", NULL},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    json_t *j = run(dir, "out", cases[k]);
    free(assert_serial(j, cases[k][0], 0));
    json_decref(j);
  }
  free(dir);
}
END_TEST

START_TEST(test_gpt3d_zero1)
{
  /* pipeline.zero = 1: each replica's device updates only its block of the packed entries
   * (Adam's moments of that block only) and the allgather hands every device the others'.
   * Its sums differ from zero = 0's in order only: the tied embedding's two ends are summed
   * before the data-parallel ring (the ring then adds d such pairs) where zero = 0 adds the two
   * rings' results; the reduce-scatter and allgather are the allreduce's two halves. So its
   * parameters are the serial GPT's within the same TOL_SGD (TOL_ADAM with Adam), as zero = 0's
   * are, and the two within twice that of each other (|w1 - w0| <= |w1 - ws| + |ws - w0|,
   * max_abs_error, relative to the distance moved); every copy of an entry agrees bit for bit
   * (the allgather delivered). At p = 2 and 4 stages (interleaved with sequence parallelism:
   * the tensor group's sum of the replicated gradients comes first), t = 2, d = 2 and 3 (uneven
   * blocks), SGD and Adam. */
  char *dir = cli_tmpdir();
  static const char *cases[][5] = {
      {"pipeline.stages=2", NULL},
      {"pipeline.stages=4", "pipeline.schedule=interleaved", "pipeline.chunks=2", "tensor.sequence_parallel=on", NULL},
      {"pipeline.stages=2", "tensor.data_parallel=3", NULL},
  };
  static const char *opt[][3] = {{"pipeline.optimizer=sgd", NULL}, {"pipeline.optimizer=adam", "pipeline.lr=0.01", NULL}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (size_t o = 0; o < 2; o++) {
      json_t *j[2];
      for (int z = 0; z < 2; z++) {
        const char *sets[12];
        size_t n = 0;
        for (size_t i = 0; cases[c][i]; i++)
          sets[n++] = cases[c][i];
        for (size_t i = 0; opt[o][i]; i++)
          sets[n++] = opt[o][i];
        sets[n++] = z ? "pipeline.zero=1" : "pipeline.zero=0";
        sets[n] = NULL;
        char what[200];
        snprintf(what, sizeof what, "case %zu %s zero %d", c, opt[o][0], z);
        j[z] = run(dir, z ? "z1" : "z0", sets);
        free(assert_serial(j[z], what, o ? tol_adam() : 0));
      }
      double moved = num(j[0], "check", "max_moved"), tol = o ? tol_adam() : tol_sgd(moved);
      double apart = (num(j[0], "check", "max_abs_error") + num(j[1], "check", "max_abs_error")) / moved;
      ck_assert_msg(apart <= 2 * tol, "case %zu %s: ZeRO-1 within %.3g of zero = 0 (relative), tolerance %.3g", c,
                    opt[o][0], apart, 2 * tol);
      ck_assert_int_eq(json_integer_value(block(j[1], "zero", "stage")), 1);
      ck_assert(block(j[0], "zero", "stage") == NULL);
      json_decref(j[0]);
      json_decref(j[1]);
    }
  free(dir);
}
END_TEST

/* A timing-only run of the shapes above with the extra sets. */
static json_t *run_timing(const char *dir, const char *out, const char *const *sets, int numerics)
{
  const char *all[16];
  size_t n = 0;
  for (; sets[n]; n++)
    all[n] = sets[n];
  all[n++] = numerics ? "model.numerics=on" : "model.numerics=off";
  all[n++] = "pipeline.serial_check=off";
  all[n] = NULL;
  return run(dir, out, all);
}

START_TEST(test_gpt3d_timing_unchanged)
{
  /* The numerics set nothing about time: the same collectives in the same order with the
   * same sizes, so a numeric run's makespan and bytes are the timing-only run's, exactly
   * (plain tensor parallelism, with and without scatter/gather, interleaved). With sequence
   * parallelism the numerics need two collectives the timing model lacks, and add exactly
   * their bytes: the first stage's allgather of the input gradient (b s h elements) per
   * microbatch, and each device's allreduce of its replicated gradients (6h per layer, 2h
   * more on the last stage) per step; with t = 2 each rank's ring sends one block of the
   * allgather and two of the allreduce, each with a 64-byte header. */
  char *dir = cli_tmpdir();
  static const char *cases[][4] = {
      {"pipeline.scatter_gather=on", NULL},
      {"pipeline.scatter_gather=off", NULL},
      {"pipeline.schedule=interleaved", "pipeline.chunks=2", "tensor.recompute=on", NULL},
      {"tensor.sequence_parallel=on", NULL},
  };
  for (size_t k = 0; k < 4; k++) {
    json_t *a = run_timing(dir, "num", cases[k], 1), *b = run_timing(dir, "tim", cases[k], 0);
    double ba = json_number_value(json_object_get(json_object_get(a, "comm"), "bytes_total"));
    double bb = json_number_value(json_object_get(json_object_get(b, "comm"), "bytes_total"));
    if (k < 3) {
      ck_assert_msg(pnum(a, "makespan_s") == pnum(b, "makespan_s"), "case %zu: numeric %.17g s, timing only %.17g s", k,
                    pnum(a, "makespan_s"), pnum(b, "makespan_s"));
      ck_assert_msg(ba == bb, "case %zu: numeric %.17g bytes, timing only %.17g", k, ba, bb);
    } else {
      double eb = 4, hdr = MSG_HEADER_BYTES, steps = STEPS, per_stage = (double)L / 2;
      double gather = steps * (double)M * (double)D * 2 /* ranks */ * ((double)(B * S * H) / 2 * eb + hdr);
      double rep_first = per_stage * 6 * (double)H, rep_last = rep_first + 2 * (double)H;
      double reduce = steps * (double)D * 2 * ((rep_first * eb + 2 * hdr) + (rep_last * eb + 2 * hdr));
      ck_assert_msg(ba - bb == gather + reduce, "sequence parallelism: numeric adds %.17g bytes, want %.17g", ba - bb,
                    gather + reduce);
      ck_assert(pnum(a, "makespan_s") > pnum(b, "makespan_s"));
    }
    json_decref(a);
    json_decref(b);
  }
  free(dir);
}
END_TEST

START_TEST(test_gpt3d_scenario_learns)
{
  /* the committed scenario: the held-out loss falls below its value before training, and so
   * does the last step's training loss; the GPT is what the file says and every copy agrees */
  char *dir = cli_tmpdir();
  const char *args[] = {"run", SCENARIO_DIR "/gpt3d.ini", "--quiet", "--out", "out", NULL};
  json_t *j = cli_summary(dir, args, "out");
  double before = num(j, "gpt", "initial_loss");
  double after = json_number_value(json_object_get(j, "final_loss"));
  ck_assert_msg(fabs(before - log(64.0)) < 0.1, "initial loss %.4f, ln 64 = %.4f", before, log(64.0));
  ck_assert_msg(after < before - 1.0, "held-out loss %.4f after, %.4f before", after, before);
  ck_assert_msg(num(j, "gpt", "train_loss") < before - 1.0, "training loss %.4f", num(j, "gpt", "train_loss"));
  ck_assert_msg(after > num(j, "gpt", "loss_floor"), "loss %.4f below the language's floor %.4f", after,
                num(j, "gpt", "loss_floor"));
  ck_assert_int_eq((int)pnum(j, "gpus"), 8);
  ck_assert_int_eq((int)num(j, "gpt", "layers"), 4);
  ck_assert_int_eq((int)num(j, "gpt", "hidden"), 64);
  ck_assert(num(j, "gpt", "copies_max_diff") == 0);
  ck_assert_msg(json_number_value(json_object_get(j, "final_accuracy")) > 0.3, "accuracy %.3f",
                json_number_value(json_object_get(j, "final_accuracy")));
  char *progress = cli_read(dir, "out/progress.csv");
  ck_assert_int_ge(cli_lines(progress), 10);
  free(progress);
  json_decref(j);
  free(dir);
}
END_TEST

START_TEST(test_gpt3d_bad_input)
{
  char *dir = cli_tmpdir();
  static const struct {
    const char *set[3];
    const char *needle;
  } cases[] = {
      {{"tensor.vocab=2", NULL}, "tensor.vocab"},
      {{"tensor.vocab=15", NULL}, "tensor.vocab"},
      {{"data.source=csv:x.csv", NULL}, "data.source"},
      {{"model.virtual=speech-42m", NULL}, "model.virtual"},
      {{"tensor.hidden=2048", "tensor.heads=16", NULL}, "tensor.hidden"},
      {{"pipeline.model=dense", "pipeline.optimizer=adam", NULL}, "pipeline.optimizer"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const char *args[48] = {"run", "--out", "out", "--set", "run.algorithm=pipeline", "--set",
                            "pipeline.model=transformer", "--set", "model.numerics=on", "--set", "tensor.vocab=16",
                            "--set", "tensor.data_parallel=2"};
    size_t n = 13;
    for (size_t i = 0; cases[k].set[i]; i++) {
      args[n++] = "--set";
      args[n++] = cases[k].set[i];
    }
    args[n] = NULL;
    cli_assert_bad_input(dir, args, cases[k].needle);
  }
  /* a virtual network with timing-only transformer stages is refused too */
  const char *virt[] = {"run", "--out", "out", "--set", "run.algorithm=pipeline", "--set",
                        "pipeline.model=transformer", "--set", "model.numerics=off", "--set",
                        "model.virtual=speech-42m", NULL};
  cli_assert_bad_input(dir, virt, "model.virtual");
  free(dir);
}
END_TEST

static Suite *gpt3d_suite(void)
{
  Suite *s = suite_create("gpt3d");
  TCase *tc = tcase_create("serial");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, test_gpt3d_equals_serial, 0, 2);
  tcase_add_test(tc, test_gpt3d_adam);
  tcase_add_test(tc, test_gpt3d_edges);
  tcase_add_test(tc, test_gpt3d_zero1);
  suite_add_tcase(s, tc);
  TCase *tt = tcase_create("timing");
  tcase_set_timeout(tt, 600);
  tcase_add_test(tt, test_gpt3d_timing_unchanged);
  tcase_add_test(tt, test_gpt3d_scenario_learns);
  tcase_add_test(tt, test_gpt3d_bad_input);
  suite_add_tcase(s, tt);
  return s;
}

CHECK_MAIN(gpt3d_suite)

/* sim_modelpar.c - a model replica split over machines (Dean'12 sec. 3), timing
 * only: the bytes that cross partition boundaries equal the hand-computed boundary
 * sizes, one machine sends nothing, and more machines take less time per step for a
 * locally connected net; where the per-message work runs (msg_cores, msg_thread). One simulation per process, through the CLI. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli_util.h"

/* Tolerances and bounds, each with where it comes from. */
/* DEADLINE_END_MAX_S: a run stops at the first step end past run.max_sim_time = 1 s; a
 * step of the 8-machine replica takes about 0.04 s on distbelief-2012's 10 GbE. */
#define DEADLINE_END_MAX_S 1.5
/* TOL_PART_REL: only dLoss/dA of lower layers is summed across partitions, in rank order:
 * the last bits after 30 updates (measured <= 2.1e-16). */
#define TOL_PART_REL 1e-12
/* SPEEDUP8_MIN: 8 machines took 40 steps of the virtual speech-42m in 2.60 s against
 * 8.11 s on one (measured, x3.1; Dean et al. 2012 Fig. 3: about 2.2); at least x2 is asked. */
#define SPEEDUP8_MIN 2

/* Runs a timing-only sgd step with the given model and partitions; returns summary.json. */
static json_t *run_partitioned(const char *dir, const char *const *sets)
{
  const char *args[40] = {"run", "--quiet", "--out", "out", "--set", "run.algorithm=sgd", "--set",
                          "model.numerics=off", "--set", "run.eval_every=1e9"};
  int n = 10;
  for (int i = 0; sets[i]; i++) {
    args[n++] = "--set";
    args[n++] = sets[i];
  }
  args[n] = NULL;
  return cli_summary(dir, args, "out");
}

static double bytes_total(const json_t *j)
{
  return json_number_value(json_object_get(json_object_get(j, "comm"), "bytes_total"));
}

START_TEST(test_modelpar_fc_boundary)
{
  /* 10 -> 6 -> 4 on 2 machines, batch 8, one step. The input is local data. Each
   * machine owns 3 of the 6 hidden units; the output layer needs all 6, so each
   * sends its 3 activations forward and receives their 3 gradients back:
   * 4 messages x (3 units x 8 examples x 4 bytes + 64 header) = 640 bytes. The
   * softmax output couples its 4 units, so each machine also sends its 2 logits to
   * the other: 2 x (2 x 8 x 4 + 64) = 256. In all 896 bytes. */
  char *dir = cli_tmpdir();
  const char *sets[] = {"model.layers=10,6,4", "sgd.partitions=2", "sgd.batch=8", "run.max_steps=1", NULL};
  json_t *j = run_partitioned(dir, sets);
  ck_assert_double_eq(bytes_total(j), 896.0);
  json_decref(j);
  free(dir);
}
END_TEST

START_TEST(test_modelpar_lc_boundary)
{
  /* image-80m (models/arch.c: 100x100x3, then 3 stages of LC 10x10 stride 1, pooling 5x5
   * and LCN 5x5, 8 maps: 91 -> 87 -> 87, 78 -> 25 (pooling stride 3) -> 25, 16 -> 12 -> 12,
   * then dense 21841) on 2 x 1 tiles, batch 1, one step. Columns of each grid split at
   * floor(g/2); a tile of an LC or pooling layer reads input columns [x0*s, (x1-1)*s + r),
   * an LCN tile its columns widened by 2 on each side; rows likewise, 8 maps. Activations
   * from the other machine, tile 0 + tile 1:
   *  pool1 (87 of LC1's 91): [0,47) meets [45,91): 2 x 91 rows; [43,91) meets [0,45): 2
   *    x 91: 1456 + 1456;
   *  LCN1 (87 of 87): [0,45) meets [43,87): 2 x 87; [41,87) meets [0,43): 2: 1392 + 1392;
   *  LC2 (78 of 87): [0,48) meets [43,87): 5 x 87; [39,87) meets [0,43): 4: 3480 + 2784;
   *  pool2 (25 of 78, stride 3): [0,38) misses [39,78); [36,77) meets [0,39): 3 x 77
   *    rows: 0 + 1848;
   *  LCN2 (25 of 25): 2 x 25 each way: 400 + 400;
   *  LC3 (16 of 25): [0,17) meets [12,25): 5 x 25; [8,25) meets [0,12): 4: 1000 + 800;
   *  pool3 (12 of 16): 2 x 16 each way: 256 + 256; LCN3 (12 of 12): 2 x 12: 192 + 192;
   *  output (dense): each needs the other's 6 x 12 x 8 = 576 LCN3 units: 1152.
   * 18,456 activations forward, as many gradients back: 36,912 x 4 bytes, plus 34
   * messages (17 each way: pool2 has one) x 64 header bytes = 149,824 bytes. */
  char *dir = cli_tmpdir();
  const char *sets[] = {"model.virtual=image-80m", "sgd.partitions=2", "sgd.batch=1", "run.max_steps=1", NULL};
  json_t *j = run_partitioned(dir, sets);
  ck_assert_double_eq(bytes_total(j), 149824.0);
  json_decref(j);
  free(dir);
}
END_TEST

START_TEST(test_modelpar_one_machine_and_speedup)
{
  char *dir = cli_tmpdir();
  const char *one[] = {"model.virtual=image-1.7b", "sgd.partitions=1", "sgd.batch=32", "run.max_steps=2", NULL};
  json_t *a = run_partitioned(dir, one);
  ck_assert_double_eq(bytes_total(a), 0.0);
  ck_assert_int_eq((long)json_number_value(json_object_get(a, "steps")), 2);
  const char *four[] = {"model.virtual=image-1.7b", "sgd.partitions=4", "sgd.batch=32", "run.max_steps=2", NULL};
  json_t *b = run_partitioned(dir, four);
  double t1 = json_number_value(json_object_get(a, "sim_time_s"));
  double t4 = json_number_value(json_object_get(b, "sim_time_s"));
  /* a locally connected net has little to exchange: 4 machines must be faster */
  ck_assert_msg(t4 < t1 / 2, "1 machine %.4g s, 4 machines %.4g s", t1, t4);
  json_decref(a);
  json_decref(b);
  free(dir);
}
END_TEST

START_TEST(test_modelpar_bad_partitions)
{
  char *dir = cli_tmpdir();
  /* image-80m's last pooled grid is 12 wide: 13 columns of tiles would leave one empty */
  const char *args[] = {"run", "--out", "out", "--set", "run.algorithm=sgd", "--set", "model.numerics=off",
                        "--set", "model.virtual=image-80m", "--set", "sgd.partitions=13", "--set",
                        "run.max_steps=1", NULL};
  ck_assert_int_eq(cli_run(dir, args), 2);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(strstr(err, "sgd.partitions") && cli_lines(err) == 1, "%s", err);
  free(err);
  /* a numeric split replica of model.layers (archnet's layout) cannot start from a warmstart */
  const char *num[] = {"run", "--out", "out", "--set", "run.algorithm=downpour", "--set", "downpour.partitions=2",
                       "--set", "run.max_steps=2", "--set", "model.warmstart_steps=5", NULL};
  ck_assert_int_eq(cli_run(dir, num), 2);
  ck_assert(!cli_exists(dir, "out"));
  free(dir);
}
END_TEST

/* A virtual net timed on 8 machines with a numeric proxy (Dean'12 Fig. 4's SGD
 * baseline): the proxy takes exactly sequential SGD's steps, the 8 machines take less
 * simulated time than 1, and without run.max_steps the machines stop together at
 * max_sim_time. */
START_TEST(test_modelpar_proxy)
{
  char *dir = cli_tmpdir();
  const char *base[] = {"run", "--quiet", "--out", "out", "--set", "run.algorithm=sgd", "--set",
                        "model.virtual=speech-42m", "--set", "model.layers=16,24,4", "--set", "data.train=2000",
                        "--set", "data.test=500", "--set", "run.eval_every=1e9", "--set", "model.efficiency=0.12", "--set",
                        "run.max_steps=40", NULL};
  json_t *one = cli_summary(dir, base, "out");
  const char *split[32];
  size_t n = 0;
  while (base[n])
    split[n] = base[n], n++;
  split[n++] = "--set";
  split[n++] = "sgd.partitions=8";
  split[n] = NULL;
  json_t *eight = cli_summary(dir, split, "out");
  ck_assert_int_eq(json_integer_value(json_object_get(eight, "steps")), 40);
  ck_assert(json_number_value(json_object_get(one, "final_loss")) ==
            json_number_value(json_object_get(eight, "final_loss")));
  double t1 = json_number_value(json_object_get(one, "sim_time_s"));
  double t8 = json_number_value(json_object_get(eight, "sim_time_s"));
  ck_assert_msg(t8 < t1 / SPEEDUP8_MIN, "1 machine %.4g s, 8 machines %.4g s", t1, t8);
  split[n - 3] = "run.max_sim_time=1";  /* replaces run.max_steps=40 */
  json_t *timed = cli_summary(dir, split, "out");
  long steps = (long)json_integer_value(json_object_get(timed, "steps"));
  ck_assert_msg(steps > 0 && steps < 40, "%ld steps in 1 simulated s", steps);
  ck_assert_str_eq(json_string_value(json_object_get(timed, "status")), "ok");
  ck_assert(json_number_value(json_object_get(timed, "sim_time_s")) < DEADLINE_END_MAX_S);
  json_decref(one);
  json_decref(eight);
  json_decref(timed);
  free(dir);
}
END_TEST

/* Final held-out loss of a numeric sgd run of a 16-32-24-4 MLP, 30 steps; extra and
 * extra2, arguments added (NULL: none). */
static double numeric_loss(const char *dir, const char *partitions, const char *extra, const char *extra2)
{
  const char *args[32] = {"run", "--quiet", "--out", "out", "--set", "run.algorithm=sgd", "--set", partitions,
                          "--set", "run.max_steps=30", "--set", "model.layers=16,32,24,4", "--set",
                          "data.train=2000", "--set", "data.test=500", "--set", "run.eval_every=1e9", extra, extra2,
                          NULL};
  json_t *j = cli_summary(dir, args, "out");
  double loss = json_number_value(json_object_get(j, "final_loss"));
  json_decref(j);
  return loss;
}

START_TEST(test_modelpar_numerics_equal_unpartitioned)
{
  /* The partitions compute every unit exactly as the whole network does (models/archnet):
   * forward bit for bit; only dLoss/dA of lower layers is summed across partitions in rank
   * order, so after 30 updates the loss may differ in the last bits, not more. */
  char *dir = cli_tmpdir();
  double whole = numeric_loss(dir, "sgd.partitions=1", NULL, NULL);
  ck_assert_msg(whole < log(4.0), "the unpartitioned model did not learn: %.17g", whole);
  for (int P = 2; P <= 5; P++) {
    char set[32];
    snprintf(set, sizeof(set), "sgd.partitions=%d", P);
    double split = numeric_loss(dir, set, NULL, NULL);
    ck_assert_msg(fabs(split - whole) <= TOL_PART_REL * whole, "P=%d: %.17g vs %.17g", P, split, whole);
    /* and a split replica is deterministic, also on two SimGrid threads */
    ck_assert(numeric_loss(dir, set, "--cfg=contexts/nthreads:2", NULL) == split);
    /* each message reaches the phase it is for through a network thread too (its slot) */
    ck_assert(numeric_loss(dir, set, "--set", "platform.msg_thread=on") == split);
  }
  free(dir);
}
END_TEST

/* platform.speed_spread (Dean'12 sec. 3: all machines wait for the slowest in each phase):
 * each host keeps one slowdown factor of mean 1 for the run, so a replica on 8 machines
 * runs at its slowest machine's pace, slower than without the spread, and the same
 * seed gives the same hosts' factors again. */
START_TEST(test_modelpar_speed_spread)
{
  char *dir = cli_tmpdir();
  const char *flat[] = {"model.virtual=speech-42m", "sgd.partitions=8", "sgd.batch=32", "run.max_steps=3", NULL};
  const char *spread[] = {"model.virtual=speech-42m", "sgd.partitions=8", "sgd.batch=32", "run.max_steps=3",
                          "platform.speed_spread=0.2", NULL};
  json_t *a = run_partitioned(dir, flat), *b = run_partitioned(dir, spread), *c = run_partitioned(dir, spread);
  double ta = json_number_value(json_object_get(a, "sim_time_s"));
  double tb = json_number_value(json_object_get(b, "sim_time_s"));
  ck_assert_msg(tb > ta, "spread %.6g s, none %.6g s", tb, ta);
  ck_assert(tb == json_number_value(json_object_get(c, "sim_time_s")));
  json_decref(a);
  json_decref(b);
  json_decref(c);
  free(dir);
}
END_TEST

/* The message-work tests' runs: speech-42m on 8 machines, one step of batch 32. */
#define SPEECH8 "model.virtual=speech-42m", "sgd.partitions=8", "sgd.batch=32", "run.max_steps=1", "model.efficiency=0.25"

/* One run's simulated time; with `bytes`, also the bytes all its messages carried. */
static double run_time(const char *dir, const char *const *sets, double *bytes)
{
  json_t *j = run_partitioned(dir, sets);
  double t = json_number_value(json_object_get(j, "sim_time_s"));
  if (bytes)
    *bytes = bytes_total(j);
  json_decref(j);
  return t;
}

/* platform.msg_cores (Dean'12 sec. 3: a machine uses all its cores): speech-42m on 8
 * machines, one step, 10 ms of CPU per message. Each machine sends and receives 7 messages
 * in each of 18 phases (forward: 4 sends, 4 receives and the logits' send and receive;
 * backward: 4 receives, 4 sends): 126 messages, so one core needs at least 1.26 s, while 16
 * cores take one message's time per phase, 0.18 s, plus the step's compute (~0.012 s at
 * efficiency 0.25, and latencies of a few ms), well under 0.5 s (measured 1.274 s and 0.207 s).
 * msg_cores = 1 is the default
 * path to the last bit, and without message work the cores change nothing. */
START_TEST(test_modelpar_msg_cores)
{
  char *dir = cli_tmpdir();
  const char *one[] = {SPEECH8, "platform.msg_overhead=0.01", NULL};
  const char *one_set[] = {SPEECH8, "platform.msg_overhead=0.01", "platform.msg_cores=1", NULL};
  const char *sixteen[] = {SPEECH8, "platform.msg_overhead=0.01", "platform.msg_cores=16", NULL};
  const char *free1[] = {SPEECH8, NULL};
  const char *free16[] = {SPEECH8, "platform.msg_cores=16", NULL};
  const char *const *runs[] = {one, one_set, sixteen, free1, free16};
  double t[5];
  for (int i = 0; i < 5; i++)
    t[i] = run_time(dir, runs[i], NULL);
  ck_assert_msg(t[0] >= 1.26, "one core: %.6g s", t[0]);
  ck_assert(t[1] == t[0]);
  ck_assert_msg(t[2] >= 0.18 && t[2] < 0.5, "16 cores: %.6g s", t[2]);
  ck_assert(t[4] == t[3]);
  free(dir);
}
END_TEST

/* platform.msg_thread (Dean'12 sec. 3: the framework "manages communication" beside the
 * cores that compute): speech-42m on 8 machines, one step, as test_modelpar_msg_cores. With
 * no message work the thread changes nothing, to the last bit (the same bytes on the same
 * routes); at 10 ms a message its one thread still does the 126 messages' work one at a
 * time, at least 1.26 s, and nothing twice: under 1.30 s (plus the step's compute, ~0.012 s,
 * and latencies of a few ms; measured 1.2737 s, 1.2742 s without the thread). */
START_TEST(test_modelpar_msg_thread)
{
  char *dir = cli_tmpdir();
  const char *free_off[] = {SPEECH8, NULL};
  const char *free_on[] = {SPEECH8, "platform.msg_thread=on", NULL};
  const char *costly[] = {SPEECH8, "platform.msg_overhead=0.01", "platform.msg_thread=on", NULL};
  const char *const *runs[] = {free_off, free_on, costly};
  double t[3];
  for (int i = 0; i < 3; i++)
    t[i] = run_time(dir, runs[i], NULL);
  ck_assert_msg(t[1] == t[0], "free work: %.17g s with the thread, %.17g s without", t[1], t[0]);
  ck_assert_msg(t[2] >= 1.26 && t[2] < 1.30, "10 ms a message on the thread: %.6g s", t[2]);
  free(dir);
}
END_TEST

/* platform.msg_byte_overhead (a TCP stack's work grows with the bytes): speech-42m on 8
 * machines, one step, as test_modelpar_msg_cores, with 1e-7 s of CPU per byte and none per
 * message. The net is symmetric, so every machine sends bytes_total / 8 and receives as
 * many: one core needs at least 1e-7 x bytes_total / 4 (0.643 s), plus the step's compute
 * (~0.012 s) and latencies of a few ms (measured 0.6573 s); the network thread does the
 * same work in the same order (measured 0.6568 s). 0 s a byte is the default to the last bit. */
START_TEST(test_modelpar_msg_byte_overhead)
{
  char *dir = cli_tmpdir();
  const char *core[] = {SPEECH8, "platform.msg_byte_overhead=1e-7", NULL};
  const char *thread[] = {SPEECH8, "platform.msg_byte_overhead=1e-7", "platform.msg_thread=on", NULL};
  const char *zero[] = {SPEECH8, "platform.msg_byte_overhead=0", NULL};
  const char *free1[] = {SPEECH8, NULL};
  const char *const *runs[] = {core, thread, zero, free1};
  double t[4], bytes = 0;
  for (int i = 0; i < 4; i++)
    t[i] = run_time(dir, runs[i], i == 0 ? &bytes : NULL);
  double work = 1e-7 * bytes / 4;
  ck_assert_msg(work > 0.6 && work < 0.7, "bytes a machine sends and receives: %.6g", bytes / 4);
  ck_assert_msg(t[0] >= work && t[0] < work + 0.05, "one core: %.6g s for %.6g s of work", t[0], work);
  ck_assert_msg(t[1] >= work && t[1] < work + 0.05, "network thread: %.6g s for %.6g s of work", t[1], work);
  ck_assert_msg(t[2] == t[3], "0 s a byte: %.17g s, default %.17g s", t[2], t[3]);
  free(dir);
}
END_TEST
#undef SPEECH8

static Suite *modelpar_suite(void)
{
  Suite *s = suite_create("modelpar");
  TCase *tc = tcase_create("boundary");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_modelpar_fc_boundary);
  tcase_add_test(tc, test_modelpar_lc_boundary);
  suite_add_tcase(s, tc);
  tc = tcase_create("numerics");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_modelpar_numerics_equal_unpartitioned);
  suite_add_tcase(s, tc);
  tc = tcase_create("timing");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_modelpar_one_machine_and_speedup);
  tcase_add_test(tc, test_modelpar_bad_partitions);
  tcase_add_test(tc, test_modelpar_proxy);
  tcase_add_test(tc, test_modelpar_speed_spread);
  tcase_add_test(tc, test_modelpar_msg_cores);
  tcase_add_test(tc, test_modelpar_msg_thread);
  tcase_add_test(tc, test_modelpar_msg_byte_overhead);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(modelpar_suite)

/* check_collectives_rounds.c - algorithms/collectives in rounds (COLL_ROUNDS): the same
 * numbers as message level bit for bit, times against the messages and the alpha-beta
 * formulas, gamma, batches; and the SMs and HBM a collective holds (opts.hold_sms,
 * coll_comm_set_hbm). The harness
 * (a simulation in a forked child, the platform, the serial expectations) is
 * coll_harness.h; message level is check_collectives.c. */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "algorithms/collectives.h"
#include "algorithms/msg.h"
#include "algorithms/run.h"
#include "check_util.h"
#include "cli_util.h"
#include "coll_harness.h"

/* TOL_ROUNDS_REL: rounds against messages and the formula on this contention-free star. A
 * round adds the same latencies and bytes as the step messages in another grouping (s - 1
 * chain transfers, one transfer of s steps' bytes), ~2s events x u ~ 1e-13 relative at
 * s = 126 steps; measured: at most 2e-15 over the grid; 1e-12 leaves a margin and is far
 * below one step's latency (1 / 126 of a latency-bound time). */
#define TOL_ROUNDS_REL 1e-12
/* TOL_HOLD_REL: a 1-s execution that shares its host with a bounded one for 0.1 s ends at
 * 1.02 s, a sum of a few event durations rounding at ~1e-15 relative; 1e-12 leaves a margin
 * and is far below what one SM more or less would move it (2e-3). */
#define TOL_HOLD_REL 1e-12
/* Rounds give every (op, algo) and p the numbers of messages bit for bit where the op
 * defines them (reduce-scatter leaves the rest of buf as scratch, which differs), the same
 * bytes on the wire, and, on this contention-free star, the messages' time but for uneven
 * blocks: 37 elements over p members make blocks of two sizes, each message step then waits
 * for its largest block while a round's transfers carry each member's own blocks, shorter
 * by up to one element per step (here up to 24 steps x 4 bytes x beta = 7.7e-8 s), never
 * longer. Halving-doubling and trees run as messages in rounds mode: equal times. */
START_TEST(test_collectives_rounds_numbers)
{
  spec s = {cases[_i / N_P][0], cases[_i / N_P][1], sizes_p[_i % N_P], 37, 0, 0, 1, 0, 1, {0}, {1}, 0, 0, 0, 0, 0, 0};
  s.root = s.p > 1 ? 1 : 0;
  result msgs = run_ok(&s);
  s.rounds = 1;
  result rnd = run_ok(&s);
  check_numbers(&s, &rnd, 0);
  for (size_t me = 0; me < s.p; me++)
    for (size_t i = 0; i < s.n; i++)
      ck_assert(!holds(&s, me, i) || memcmp(&msgs.buf[me * s.n + i], &rnd.buf[me * s.n + i], sizeof(double)) == 0);
  ck_assert_msg(rnd.bytes == msgs.bytes, "rounds %.17g bytes, messages %.17g", rnd.bytes, msgs.bytes);
  int ring = s.algo == COLL_RING || s.op == COLL_REDUCE_SCATTER || s.op == COLL_ALLGATHER;
  size_t steps = !ring || s.p < 2 ? 0 : s.op == COLL_ALLREDUCE ? 2 * (s.p - 1) : s.p - 1;
  double uneven = (double)steps * 4 * BETA;
  ck_assert_msg(rnd.t <= msgs.t * (1 + TOL_ROUNDS_REL) && msgs.t - rnd.t <= uneven + TOL_ROUNDS_REL * msgs.t,
                "%s %s p=%zu: rounds %.17g s, messages %.17g s", coll_op_name((coll_op)s.op),
                coll_algo_name((coll_algo)s.algo), s.p, rnd.t, msgs.t);
  free(msgs.buf), free(rnd.buf);
}
END_TEST

/* Timing only, ring ops, p = 2 .. 64 and 1 KiB .. 64 MiB (even blocks): a round's time is
 * the formula's within TOL_ROUNDS_REL (each step's latency is in it: dropping one latency of
 * 2(p-1) would miss by more than 1e-4 at 1 KiB), with the messages' bytes. */
START_TEST(test_collectives_rounds_formula)
{
  static const int ring_ops[] = {COLL_ALLREDUCE, COLL_REDUCE_SCATTER, COLL_ALLGATHER};
  static const size_t ps[] = {2, 4, 8, 64};
  static const double bytes[] = {1024, 1048576, 67108864};
  for (size_t a = 0; a < 4; a++)
    for (size_t b = 0; b < 3; b++) {
      spec s = {ring_ops[_i], COLL_RING, ps[a], (size_t)(bytes[b] / 4), 0, 0, 0, 0, 1, {0}, {1}, 0, 0, 0, 1, 0, 0};
      result r = run_ok(&s);
      double f = coll_formula((coll_op)s.op, COLL_RING, s.p, bytes[b], ALPHA, BETA, 0);
      ck_assert_msg(fabs(r.t - f) <= TOL_ROUNDS_REL * f, "%s p=%zu %.0f bytes: rounds %.17g, formula %.17g",
                    coll_op_name((coll_op)s.op), s.p, bytes[b], r.t, f);
      size_t steps = s.op == COLL_ALLREDUCE ? 2 * (s.p - 1) : s.p - 1;
      double wire = (double)s.p * steps * (bytes[b] / (double)s.p + MSG_HEADER_BYTES);
      ck_assert_msg(fabs(r.bytes - wire) <= 0.5, "%.17g bytes, messages send %.17g", r.bytes, wire);
    }
}
END_TEST

/* Rounds with the gamma term (one addition per received element, 1 Gflop/s hosts): the
 * formula's time, and numbers equal to messages'. */
START_TEST(test_collectives_rounds_gamma)
{
  static const int ring_ops[] = {COLL_ALLREDUCE, COLL_REDUCE_SCATTER, COLL_ALLGATHER};
  spec s = {ring_ops[_i], COLL_RING, 8, 4096, 0, 0, 1, 1, 1, {0}, {1}, 0, 0, 0, 1, 0, 0};
  result r = run_ok(&s);
  check_numbers(&s, &r, 0);
  double f = coll_formula((coll_op)s.op, COLL_RING, s.p, 4096 * 4, ALPHA, BETA, 1e-9 / 4);
  ck_assert_msg(fabs(r.t - f) <= TOL_GAMMA_REL * f, "rounds %.17g, formula %.17g", r.t, f);
  free(r.buf);
}
END_TEST

/* Rounds: identical clocks and buffers run to run and on two SimGrid threads; two groups
 * side by side each get their own sums and take one group's time; chunked communicators
 * run as messages (the messages' chunked time exactly); members that disagree abort. */
START_TEST(test_collectives_rounds_misc)
{
  spec s = {COLL_ALLREDUCE, COLL_RING, 6, 1000, 0, 0, 1, 0, 1, {0}, {1}, 0, 0, 0, 1, 0, 0};
  result a = run_ok(&s), b = run_ok(&s);
  s.threads = 2;
  result c = run_ok(&s);
  ck_assert(a.t == b.t && a.t == c.t);
  ck_assert(memcmp(a.buf, b.buf, s.p * s.n * sizeof(double)) == 0 && memcmp(a.buf, c.buf, s.p * s.n * sizeof(double)) == 0);
  free(a.buf), free(b.buf), free(c.buf);

  spec g = {COLL_ALLREDUCE, COLL_RING, 4, 100, 0, 0, 1, 0, 2, {0, 1}, {2, 2}, 0, 0, 0, 1, 0, 0};
  result both = run_ok(&g);
  check_numbers(&g, &both, 0);
  check_numbers(&g, &both, 1);
  g.groups = 1;
  result alone = run_ok(&g);
  ck_assert_msg(fabs(both.t - alone.t) <= TOL_TIME_REL * alone.t, "two groups %.17g, one %.17g", both.t, alone.t);
  free(both.buf), free(alone.buf);

  spec k = {COLL_ALLREDUCE, COLL_RING, 5, 1000, 0, 20, 1, 0, 1, {0}, {1}, 0, 0, 0, 1, 0, 0};
  result kr = run_ok(&k);
  k.rounds = 0;
  result km = run_ok(&k);
  ck_assert(kr.t == km.t && memcmp(kr.buf, km.buf, k.p * k.n * sizeof(double)) == 0);
  free(kr.buf), free(km.buf);

  spec bad = {COLL_ALLREDUCE, COLL_RING, 4, 16, 0, 0, 1, 0, 1, {0}, {1}, 0, 0, 1, 1, 0, 0};
  result r = {0, 0, NULL};
  int st = run_spec(&bad, &r);
  ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "status %d", st);
}
END_TEST

/* A batch (an allreduce, an allgather and a reduce-scatter, 5 times; algorithms/tensor.c's
 * fused layers) against the same collectives one by one, p = 2, 5 and 8, 4,000 elements (even
 * and uneven blocks): as one round, the same bytes and, on this contention-free star, the time
 * of the rounds one after another within TOL_ROUNDS_REL (a chain of all the steps' latencies,
 * one transfer of all their bytes; dropping one latency of the 5 x 4(p - 1) steps would miss by
 * more than 1e-4); at message level, and with a halving-doubling allreduce in rounds mode, the
 * batch runs them one by one: equal clocks. */
START_TEST(test_collectives_rounds_batch)
{
  static const size_t ps[] = {2, 5, 8};
  for (size_t a = 0; a < 3; a++)
    for (int rounds = 0; rounds < 2; rounds++)
      for (int algo = COLL_RING; algo <= COLL_HALVING_DOUBLING; algo++) {
        spec s = {COLL_ALLREDUCE, algo, ps[a], 4000, 0, 0, 0, 0, 1, {0}, {1}, 0, 0, 0, rounds, 5, 0};
        result one = run_ok(&s);
        s.batched = 1;
        result batch = run_ok(&s);
        ck_assert_msg(batch.bytes == one.bytes, "p=%zu: batch %.17g bytes, one by one %.17g", s.p, batch.bytes,
                      one.bytes);
        if (rounds && algo == COLL_RING)
          ck_assert_msg(fabs(batch.t - one.t) <= TOL_ROUNDS_REL * one.t, "p=%zu: batch %.17g s, one by one %.17g s",
                        s.p, batch.t, one.t);
        else
          ck_assert_msg(batch.t == one.t, "p=%zu %s %s: batch %.17g s, one by one %.17g s", s.p,
                        rounds ? "rounds" : "messages", coll_algo_name((coll_algo)algo), batch.t, one.t);
      }
}
END_TEST

/* Two GPU hosts of 1 Gflop/s whose collectives hold 2 of their 10 SMs (a share of 0.2),
 * on the star's links. */
static const char gpu_xml[] =
    "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    "<platform version=\"4.1\">\n  <config>\n    <prop id=\"network/model\" value=\"CM02\"/>\n"
    "    <prop id=\"network/crosstraffic\" value=\"0\"/>\n  </config>\n"
    "  <cluster id=\"g\" prefix=\"gpu-\" suffix=\"\" radical=\"0-1\" speed=\"1Gf\" core=\"1\" bw=\"1.25GBps\" "
    "lat=\"1us\" sharing_policy=\"SPLITDUPLEX\">\n"
    "    <prop id=\"gpu_sms\" value=\"10\"/>\n    <prop id=\"gpu_comm_sms\" value=\"2\"/>\n"
    "  </cluster>\n</platform>\n";
#define HOLD_SHARE 0.2
#define HOLD_ELEMS 31250000 /* 125 MB: a 2-member ring allreduce of 2 (alpha + 62.5 MB beta) = 0.1 s */
typedef struct hold_case {
  coll_comm *c;
  int batched;
  double exec_end; /* member 0: when its 1-s execution beside the allreduce ended */
} hold_case;

static void hold_member(int argc, char **argv)
{
  (void)argc;
  hold_case *hc = sg_actor_self_get_data();
  size_t me = (size_t)atoi(argv[0]);
  sg_exec_t e = NULL;
  if (me == 0) {
    e = sg_actor_exec_init(1e9);
    sg_exec_start(e);
  }
  const coll_op op = COLL_ALLREDUCE;
  if (hc->batched)
    coll_batch(hc->c, me, &op, 1, 1, HOLD_ELEMS, COLL_RING);
  else
    coll_allreduce(hc->c, me, NULL, HOLD_ELEMS, COLL_RING);
  if (e) {
    sg_exec_wait(e);
    hc->exec_end = simgrid_get_clock();
  }
}

/* In a child: member 0 runs 1 s of compute beside a 0.1-s allreduce (hold on or off, messages
 * or rounds, alone or as a batch); exits 0 when the execution ended, and the engine with it,
 * at 1 + share x 0.1 s (the compute loses the held share while the allreduce runs and nothing
 * after: the hold ends with the collective), else 3. */
static void hold_child(const char *plat, int hold, int rounds, int batched)
{
  char *argv[] = {"check_collectives", "--log=root.thresh:critical", SANITIZE_CONTEXTS NULL};
  int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
  simgrid_init(&argc, argv);
  simgrid_load_platform(plat);
  sg_host_t h[2] = {sg_host_by_name("gpu-0"), sg_host_by_name("gpu-1")};
  coll_opts o = {4, 0, NULL, 0, rounds ? COLL_ROUNDS : COLL_MESSAGES, hold};
  hold_case hc = {coll_comm_create("hold", h, 2, &o), batched, 0};
  for (int r = 0; r < 2; r++) {
    char *args[] = {r ? "1" : "0"};
    sg_actor_t a = sg_actor_init(r ? "m1" : "m0", h[r]);
    sg_actor_set_data(a, &hc);
    sg_actor_start(a, hold_member, 1, args);
  }
  simgrid_run();
  double t = 2 * (ALPHA + HOLD_ELEMS / 2 * 4.0 * BETA), want = 1 + (hold ? HOLD_SHARE * t : 0);
  int ok = fabs(hc.exec_end - want) <= TOL_HOLD_REL * want && simgrid_get_clock() == hc.exec_end;
  if (!ok)
    fprintf(stdout, "hold %d rounds %d batch %d: compute ended at %.17g s (want %.17g), engine at %.17g s\n", hold,
            rounds, batched, hc.exec_end, want, simgrid_get_clock());
  fflush(stdout);
  _exit(ok ? 0 : 3);
}

/* The HBM a collective takes (coll_comm_set_hbm): a first 0.1-s allreduce alone sets each
 * member's rate, 2 (p-1)/p n 4 bytes over its time t (1.25e9 B/s); with HOLD_HBM per B/s that
 * is 0.25 of the GPU, taken from what the SMs leave: the second allreduce's hold is
 * 0.2 + 0.8 x 0.25 = 0.4 of member 0's GPU, so a 1-s execution beside it ends 0.4 t late. */
#define HOLD_HBM 2e-10
/* TOL_RATE: the measured rate is 1.25e9 B/s less the latency's share of t (2 alpha of 0.1 s,
 * about 4e-5 relative) */
#define TOL_RATE 1e-3
static void hbm_member(int argc, char **argv)
{
  (void)argc;
  hold_case *hc = sg_actor_self_get_data();
  size_t me = (size_t)atoi(argv[0]);
  coll_allreduce(hc->c, me, NULL, HOLD_ELEMS, COLL_RING);
  sg_exec_t e = NULL;
  if (me == 0) {
    e = sg_actor_exec_init(1e9);
    sg_exec_start(e);
  }
  double t1 = simgrid_get_clock();
  coll_allreduce(hc->c, me, NULL, HOLD_ELEMS, COLL_RING);
  if (e) {
    sg_exec_wait(e);
    hc->exec_end = simgrid_get_clock() - t1;
  }
}

static void hbm_child(const char *plat)
{
  char *argv[] = {"check_collectives", "--log=root.thresh:critical", SANITIZE_CONTEXTS NULL};
  int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
  simgrid_init(&argc, argv);
  simgrid_load_platform(plat);
  sg_host_t h[2] = {sg_host_by_name("gpu-0"), sg_host_by_name("gpu-1")};
  coll_opts o = {4, 0, NULL, 0, COLL_MESSAGES, 1};
  hold_case hc = {coll_comm_create("hbm", h, 2, &o), 0, 0};
  coll_comm_set_hbm(hc.c, HOLD_HBM);
  for (int r = 0; r < 2; r++) {
    char *args[] = {r ? "1" : "0"};
    sg_actor_t a = sg_actor_init(r ? "m1" : "m0", h[r]);
    sg_actor_set_data(a, &hc);
    sg_actor_start(a, hbm_member, 1, args);
  }
  simgrid_run();
  double t = 2 * (ALPHA + HOLD_ELEMS / 2 * 4.0 * BETA), rate = HOLD_ELEMS * 4.0 / t;
  double share = HOLD_SHARE + (1 - HOLD_SHARE) * HOLD_HBM * rate, want = 1 + share * t;
  int ok = fabs(hc.exec_end - want) <= TOL_HOLD_REL * want && fabs(HOLD_HBM * rate - 0.25) < TOL_RATE;
  if (!ok)
    fprintf(stdout, "hbm: compute took %.17g s (want %.17g)\n", hc.exec_end, want);
  fflush(stdout);
  _exit(ok ? 0 : 3);
}

START_TEST(test_collectives_hold_hbm)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "gpu.xml", gpu_xml);
  char plat[600];
  snprintf(plat, sizeof(plat), "%s/gpu.xml", dir);
  pid_t pid = fork();
  if (pid == 0)
    hbm_child(plat);
  int st;
  waitpid(pid, &st, 0);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "hbm: status %d", st);
  free(dir); /* removed at exit */
}
END_TEST

START_TEST(test_collectives_hold_sms)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "gpu.xml", gpu_xml);
  char plat[600];
  snprintf(plat, sizeof(plat), "%s/gpu.xml", dir);
  for (int k = 0; k < 8; k++) {
    pid_t pid = fork();
    if (pid == 0)
      hold_child(plat, k & 1, (k >> 1) & 1, (k >> 2) & 1);
    int st;
    waitpid(pid, &st, 0);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "hold %d rounds %d batch %d: status %d", k & 1, (k >> 1) & 1,
                  (k >> 2) & 1, st);
  }
  free(dir); /* removed at exit */
}
END_TEST

static Suite *collectives_rounds_suite(void)
{
  Suite *s = suite_create("collectives_rounds");
  TCase *tc = tcase_create("rounds");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, test_collectives_rounds_numbers, 0, N_CASES * N_P);
  tcase_add_loop_test(tc, test_collectives_rounds_formula, 0, 3);
  tcase_add_loop_test(tc, test_collectives_rounds_gamma, 0, 3);
  tcase_add_test(tc, test_collectives_rounds_misc);
  tcase_add_test(tc, test_collectives_rounds_batch);
  suite_add_tcase(s, tc);
  tc = tcase_create("hold");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_collectives_hold_sms);
  tcase_add_test(tc, test_collectives_hold_hbm);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(collectives_rounds_suite)

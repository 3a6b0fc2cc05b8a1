/* check_collectives.c - algorithms/collectives: numeric results equal serial sums in each
 * algorithm's stated order bit for bit (and the rank-order sum within 1e-12), identical
 * run to run (1 and 2 SimGrid threads), chunked equal to unchunked, communicators side by
 * side, simulated times equal to the alpha-beta formulas over a (p, size) grid, the
 * all-to-all of variable blocks delivering each block with each pair's bytes. Rounds and
 * the SMs a collective holds are in check_collectives_rounds.c, the harness both use in
 * coll_harness.h. The CLI
 * entry (`run.algorithm = collective`) and `dtsim reproduce collectives` are in
 * sim_collectives.c.
 *
 * Every simulation runs in a child process forked by the test (SimGrid allows one engine
 * per process), which writes the clock and every member's buffer to a file for the test
 * to compare. The platform, written by the test: 64 hosts of 1 Gflop/s, each on its own
 * SPLITDUPLEX link of 1.25e9 B/s and 1 us to one switch, CM02 and no TCP cross traffic
 * (results/collectives/README.md says why): alpha = 2 us + 64 header bytes / 1.25e9,
 * beta = 1 / 1.25e9 s per byte. */
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

/* Tolerances, each with where it comes from (the shared ones in coll_harness.h). */
/* TOL_P2P_S: one transfer's latency + size / bandwidth, rounding ~1e-21 s on 2e-6 s; 1e-15 s
 * is far above that and far below one byte more (8e-10 s at 1.25e9 B/s). */
#define TOL_P2P_S 1e-15
/* TOL_MODEL_REL: the accuracy accepted for CM02 against the alpha-beta formulas (the
 * measured worst is 4.7e-15 over the whole grid, results/collectives/README.md). */
#define TOL_MODEL_REL 0.03
/* TOL_KNOWN_S: a hand sum of <= 6 terms below 5e-2 s rounds by < 6 u 5e-2 ~ 3e-17 s;
 * 1e-15 s leaves a margin. */
#define TOL_KNOWN_S 1e-15

/* ---- numbers ------------------------------------------------------------------------ */

/* 37 elements (not a multiple of any p above but 1: uneven blocks); root 1 where p > 1. */
START_TEST(test_collectives_serial_sum)
{
  spec s = {cases[_i / N_P][0], cases[_i / N_P][1], sizes_p[_i % N_P], 37, 0, 0, 1, 0, 1, {0}, {1}, 0, 0, 0, 0, 0, 0};
  s.root = s.p > 1 ? 1 : 0;
  result r = run_ok(&s);
  check_numbers(&s, &r, 0);
  free(r.buf);
}
END_TEST

/* Fewer elements than members: empty blocks still travel (as header-only messages). */
START_TEST(test_collectives_tiny)
{
  spec s = {cases[_i][0], cases[_i][1], 8, 3, 2, 0, 1, 0, 1, {0}, {1}, 0, 0, 0, 0, 0, 0};
  result r = run_ok(&s);
  check_numbers(&s, &r, 0);
  free(r.buf);
}
END_TEST

/* The same simulation twice, and with two SimGrid threads: identical clocks and buffers. */
START_TEST(test_collectives_determinism)
{
  spec s = {cases[_i][0], cases[_i][1], 6, 1000, 0, 0, 1, 0, 1, {0}, {1}, 0, 0, 0, 0, 0, 0};
  result a = run_ok(&s), b = run_ok(&s);
  s.threads = 2;
  result c = run_ok(&s);
  ck_assert(a.t == b.t && a.t == c.t);
  ck_assert(memcmp(a.buf, b.buf, s.p * s.n * sizeof(double)) == 0);
  ck_assert(memcmp(a.buf, c.buf, s.p * s.n * sizeof(double)) == 0);
  free(a.buf), free(b.buf), free(c.buf);
}
END_TEST

/* Chunks of 5 elements (20 bytes) over 1000 elements: the same numbers as unchunked, and
 * a different (longer, as each chunk pays alpha) time, so chunking did happen. */
START_TEST(test_collectives_chunked)
{
  spec s = {cases[_i][0], cases[_i][1], 5, 1000, 2, 0, 1, 0, 1, {0}, {1}, 0, 0, 0, 0, 0, 0};
  result whole = run_ok(&s);
  s.chunk = 20;
  result chunked = run_ok(&s);
  check_numbers(&s, &chunked, 0);
  ck_assert(memcmp(whole.buf, chunked.buf, s.p * s.n * sizeof(double)) == 0);
  ck_assert_msg(chunked.t != whole.t, "chunked %.17g, whole %.17g", chunked.t, whole.t);
  free(whole.buf), free(chunked.buf);
}
END_TEST

/* Two communicators side by side: "tp" on even hosts, "dp" on odd ones, each runs the
 * collective on its own data at once; then each member joins an allreduce over all 8
 * hosts with its result. Group results must be their own sums, and on this
 * non-blocking switch two disjoint groups take the time of one alone. */
START_TEST(test_collectives_subgroups)
{
  spec s = {COLL_ALLREDUCE, cases[_i][1], 4, 100, 0, 0, 1, 0, 2, {0, 1}, {2, 2}, 0, 0, 0, 0, 0, 0}; /* cases 0-2 */
  result both = run_ok(&s);
  check_numbers(&s, &both, 0);
  check_numbers(&s, &both, 1);
  spec one = s;
  one.groups = 1;
  result alone = run_ok(&one);
  ck_assert_msg(fabs(both.t - alone.t) <= TOL_TIME_REL * alone.t, "two groups %.17g, one %.17g", both.t, alone.t);
  /* then a world allreduce over the 8 hosts: every member holds the sum of the eight group
   * results, member h's result sitting at world rank h */
  spec w = s;
  w.world = 8;
  result all = run_ok(&w);
  double *first = &all.buf[0];
  for (size_t k = 1; k < 8; k++)
    ck_assert(memcmp(first, &all.buf[k * s.n], s.n * sizeof(double)) == 0);
  for (size_t i = 0; i < s.n; i++) {
    double sum = 0, mag = 0;
    for (size_t g = 0; g < 2; g++)
      for (size_t r = 0; r < s.p; r++) {
        sum += both.buf[(g * s.p + r) * s.n + i];
        mag += fabs(both.buf[(g * s.p + r) * s.n + i]);
      }
    ck_assert(fabs(first[i] - sum) <= TOL_SUM_REL * mag);
  }
  free(both.buf), free(alone.buf), free(all.buf);
}
END_TEST

/* Members that call with different sizes break an invariant: the simulation aborts. */
START_TEST(test_collectives_mismatch_aborts)
{
  spec s = {COLL_ALLREDUCE, COLL_RING, 4, 16, 0, 0, 1, 0, 1, {0}, {1}, 0, 0, 1, 0, 0, 0};
  result r = {0, 0, NULL};
  int st = run_spec(&s, &r);
  ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "status %d", st);
}
END_TEST

/* Point to point: 10 elements from host-3 to host-40 arrive intact after alpha + 40 beta
 * (checked in the child: exit 3 for wrong values, 4 for a wrong time). */
static void sender(int argc, char **argv)
{
  (void)argc, (void)argv;
  double out[10];
  for (int i = 0; i < 10; i++)
    out[i] = i + 0.5;
  coll_send(sg_actor_self_get_data(), 0, 1, out, 10);
}

static void receiver(int argc, char **argv)
{
  (void)argc, (void)argv;
  double in[10];
  coll_recv(sg_actor_self_get_data(), 1, 0, in, 10);
  for (int i = 0; i < 10; i++)
    if (in[i] != i + 0.5)
      _exit(3);
  if (fabs(simgrid_get_clock() - (ALPHA + 40 * BETA)) > TOL_P2P_S)
    _exit(4);
}

START_TEST(test_collectives_sendrecv)
{
  const char *plat = plat_path();
  pid_t pid = fork();
  if (pid == 0) {
    char *argv[] = {"check_collectives", "--log=root.thresh:critical", SANITIZE_CONTEXTS NULL};
    int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
    simgrid_init(&argc, argv);
    simgrid_load_platform(plat);
    sg_host_t h[2] = {sg_host_by_name("host-3"), sg_host_by_name("host-40")};
    coll_opts o = {4, 0, NULL, 0, COLL_MESSAGES, 0};
    coll_comm *c = coll_comm_create("p2p", h, 2, &o);
    sg_actor_t a = sg_actor_init("s", h[0]);
    sg_actor_set_data(a, c);
    sg_actor_start(a, sender, 0, NULL);
    sg_actor_t b = sg_actor_init("r", h[1]);
    sg_actor_set_data(b, c);
    sg_actor_start(b, receiver, 0, NULL);
    simgrid_run();
    _exit(0);
  }
  int st;
  waitpid(pid, &st, 0);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
}
END_TEST

/* All-to-all of variable blocks: 4 members on hosts 0, 9, 21, 40; member s sends member d
 * A2A_COUNT[s][d] elements, value 1000 s + 10 d + i (zeros included: no message). In the
 * child: every member receives its blocks intact (exit 3), each pair's bytes (msg_traffic)
 * are its block's elements x 4 + the header, none for an empty block (exit 4), and a timing-only run
 * sends the same bytes (exit 5). */
#define A2A_P 4
static const size_t A2A_COUNT[A2A_P][A2A_P] = {{2, 5, 0, 1}, {3, 0, 7, 0}, {0, 4, 1, 6}, {9, 0, 2, 3}};
static const char *const A2A_HOSTS[A2A_P] = {"host-0", "host-9", "host-21", "host-40"};

typedef struct a2a_member {
  coll_comm *c;
  size_t me;
  int numeric;
} a2a_member;

static void a2a_actor(int argc, char **argv)
{
  (void)argc, (void)argv;
  a2a_member *a = sg_actor_self_get_data();
  size_t sc[A2A_P], rc[A2A_P], st = 0, rt = 0;
  for (size_t q = 0; q < A2A_P; q++) {
    sc[q] = A2A_COUNT[a->me][q];
    rc[q] = A2A_COUNT[q][a->me];
    st += sc[q];
    rt += rc[q];
  }
  double *send = malloc((st + 1) * sizeof(double)), *recv = malloc((rt + 1) * sizeof(double));
  for (size_t q = 0, o = 0; q < A2A_P; o += sc[q], q++)
    for (size_t i = 0; i < sc[q]; i++)
      send[o + i] = 1000.0 * (double)a->me + 10.0 * (double)q + (double)i;
  coll_alltoallv(a->c, a->me, a->numeric ? send : NULL, sc, a->numeric ? recv : NULL, rc);
  for (size_t q = 0, o = 0; a->numeric && q < A2A_P; o += rc[q], q++)
    for (size_t i = 0; i < rc[q]; i++)
      if (recv[o + i] != 1000.0 * (double)q + 10.0 * (double)a->me + (double)i)
        _exit(3);
  free(send);
  free(recv);
}

static sg_host_t a2a_hosts[A2A_P];
static int a2a_ok;

static void a2a_pair(void *ctx, sg_host_t src, sg_host_t dst, double bytes)
{
  (void)ctx;
  size_t s = A2A_P, d = A2A_P;
  for (size_t q = 0; q < A2A_P; q++) {
    s = a2a_hosts[q] == src ? q : s;
    d = a2a_hosts[q] == dst ? q : d;
  }
  double want = s < A2A_P && d < A2A_P && A2A_COUNT[s][d] ? msg_bytes((double)A2A_COUNT[s][d], 4) : -1;
  a2a_ok = a2a_ok && bytes == want;
}

static void a2a_run(int numeric)
{
  const char *plat = plat_path();
  char *argv[] = {"check_collectives", "--log=root.thresh:critical", SANITIZE_CONTEXTS NULL};
  int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
  simgrid_init(&argc, argv);
  simgrid_load_platform(plat);
  for (size_t q = 0; q < A2A_P; q++)
    a2a_hosts[q] = sg_host_by_name(A2A_HOSTS[q]);
  msg_traffic_init(a2a_hosts, A2A_P);
  coll_opts o = {4, 0, NULL, 0, COLL_MESSAGES, 0};
  coll_comm *c = coll_comm_create("a2a", a2a_hosts, A2A_P, &o);
  a2a_member m[A2A_P];
  for (size_t q = 0; q < A2A_P; q++) {
    m[q] = (a2a_member){c, q, numeric};
    sg_actor_t a = sg_actor_init("m", a2a_hosts[q]);
    sg_actor_set_data(a, &m[q]);
    sg_actor_start(a, a2a_actor, 0, NULL);
  }
  simgrid_run();
  double want = 0;
  for (size_t s = 0; s < A2A_P; s++)
    for (size_t d = 0; d < A2A_P; d++)
      if (s != d && A2A_COUNT[s][d])
        want += msg_bytes((double)A2A_COUNT[s][d], 4);
  a2a_ok = 1;
  msg_traffic_foreach(a2a_pair, NULL);
  if (!a2a_ok || msg_bytes_sent() != want)
    _exit(numeric ? 4 : 5);
  _exit(0);
}

START_TEST(test_collectives_alltoallv)
{
  for (int numeric = 1; numeric >= 0; numeric--) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
      a2a_run(numeric);
    int st;
    waitpid(pid, &st, 0);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "numeric %d: status %d (exit %d)", numeric, st,
                  WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  }
}
END_TEST

/* ---- timing --------------------------------------------------------------------------- */

/* Timing only, unchunked, free additions: the simulated time of every (op, algo) at
 * p = 2, 4, 8, 16, 64 and 1 KiB, 1 MiB, 64 MiB is coll_formula's within TOL_MODEL_REL (measured:
 * within 1e-14; results/collectives has the full grid); the formula's own known answers
 * are in test_collectives_formula. */
START_TEST(test_collectives_formula_grid)
{
  static const size_t ps[] = {2, 4, 8, 16, 64};
  static const double bytes[] = {1024, 1048576, 67108864};
  for (size_t a = 0; a < 5; a++)
    for (size_t b = 0; b < 3; b++) {
      spec s = {cases[_i][0], cases[_i][1], ps[a], (size_t)(bytes[b] / 4), 0, 0, 0, 0, 1, {0}, {1}, 0, 0, 0, 0, 0, 0};
      result r = run_ok(&s);
      double f = coll_formula((coll_op)s.op, (coll_algo)s.algo, s.p, bytes[b], ALPHA, BETA, 0);
      ck_assert_msg(fabs(r.t - f) <= TOL_MODEL_REL * f, "%s %s p=%zu %.0f bytes: simulated %.9g, formula %.9g",
                    coll_op_name((coll_op)s.op), coll_algo_name((coll_algo)s.algo), s.p, bytes[b], r.t, f);
    }
}
END_TEST

/* Numeric and timing-only runs take the same simulated time (the same bytes travel), and
 * with reduce_flops = 1 per element on 1 Gflop/s hosts the gamma term is 1e-9 / 4 s per
 * byte, which the formula adds exactly (unchunked: each addition follows its transfer). */
START_TEST(test_collectives_gamma)
{
  spec s = {cases[_i][0], cases[_i][1], 8, 4096, 0, 0, 1, 1, 1, {0}, {1}, 0, 0, 0, 0, 0, 0};
  result num = run_ok(&s);
  s.numeric = 0;
  result tim = run_ok(&s);
  ck_assert(num.t == tim.t);
  double f = coll_formula((coll_op)s.op, (coll_algo)s.algo, s.p, 4096 * 4, ALPHA, BETA, 1e-9 / 4);
  ck_assert_msg(fabs(tim.t - f) <= TOL_GAMMA_REL * f, "simulated %.17g, formula %.17g", tim.t, f);
  free(num.buf);
}
END_TEST

/* Known answers, by hand: p = 8, n = 8e6 bytes, alpha = 1e-6, beta = 1e-9, gamma = 1e-10.
 * ring: 14e-6 + 2 (7/8) 8e-3 + (7/8) 8e-4 = 14.014e-3; halving-doubling: 6e-6 + 14e-3 +
 * 0.7e-3 = 14.706e-3; tree: 6 (1e-6 + 8e-3) + 3 (8e-4) = 50.406e-3; reduce-scatter and
 * allgather 7 (1e-6 + 1e-3 [+ 1e-4]); broadcast 3 (1e-6 + 8e-3). p = 6 halving-doubling
 * (q = 4): 4e-6 + 2 (3/4) 8e-3 + (3/4) 8e-4 + 2 (1e-6 + 8e-3) + 8e-4. */
START_TEST(test_collectives_formula)
{
  double n = 8e6, a = 1e-6, b = 1e-9, g = 1e-10;
  ck_assert_double_eq_tol(coll_formula(COLL_ALLREDUCE, COLL_RING, 8, n, a, b, g), 14e-6 + 14e-3 + 0.7e-3, TOL_KNOWN_S);
  ck_assert_double_eq_tol(coll_formula(COLL_ALLREDUCE, COLL_HALVING_DOUBLING, 8, n, a, b, g), 6e-6 + 14e-3 + 0.7e-3,
                          TOL_KNOWN_S);
  ck_assert_double_eq_tol(coll_formula(COLL_ALLREDUCE, COLL_TREE, 8, n, a, b, g), 6 * (a + 8e-3) + 3 * 8e-4,
                          TOL_KNOWN_S);
  ck_assert_double_eq_tol(coll_formula(COLL_REDUCE_SCATTER, COLL_RING, 8, n, a, b, g), 7 * (a + 1e-3 + 1e-4),
                          TOL_KNOWN_S);
  ck_assert_double_eq_tol(coll_formula(COLL_ALLGATHER, COLL_RING, 8, n, a, b, g), 7 * (a + 1e-3), TOL_KNOWN_S);
  ck_assert_double_eq_tol(coll_formula(COLL_BCAST, COLL_TREE, 8, n, a, b, g), 3 * (a + 8e-3), TOL_KNOWN_S);
  ck_assert_double_eq_tol(coll_formula(COLL_REDUCE, COLL_TREE, 8, n, a, b, g), 3 * (a + 8e-3 + 8e-4), TOL_KNOWN_S);
  ck_assert_double_eq_tol(coll_formula(COLL_ALLREDUCE, COLL_HALVING_DOUBLING, 6, n, a, b, g),
                          4e-6 + 12e-3 + 6e-4 + 2 * (a + 8e-3) + 8e-4, TOL_KNOWN_S);
  ck_assert_double_eq_tol(coll_formula(COLL_BCAST, COLL_TREE, 5, n, a, b, g), 3 * (a + 8e-3), TOL_KNOWN_S);
  ck_assert(coll_formula(COLL_ALLREDUCE, COLL_RING, 1, n, a, b, g) == 0);
  /* nccl-tests PERFORMANCE.md: allreduce 2(n-1)/n, reduce-scatter and allgather (n-1)/n, bcast 1 */
  ck_assert(coll_busbw_factor(COLL_ALLREDUCE, 8) == 1.75 && coll_busbw_factor(COLL_ALLGATHER, 8) == 0.875 &&
            coll_busbw_factor(COLL_BCAST, 8) == 1);
  coll_op op;
  coll_algo al;
  ck_assert(coll_op_parse("reduce-scatter", &op) == 0 && op == COLL_REDUCE_SCATTER);
  ck_assert(coll_algo_parse("halving-doubling", &al) == 0 && al == COLL_HALVING_DOUBLING);
  ck_assert(coll_op_parse("alltoall", &op) == -1 && coll_algo_parse("rabenseifner", &al) == -1);
  size_t off, len;
  coll_block(10, 4, 1, &off, &len);
  ck_assert(off == 3 && len == 3);
  coll_block(10, 4, 3, &off, &len);
  ck_assert(off == 8 && len == 2);
  coll_opts bad = {0, 0, NULL, 0, COLL_MESSAGES, 0};
  ck_assert_ptr_null(coll_comm_create("x", NULL, 0, &bad));
}
END_TEST

static Suite *collectives_suite(void)
{
  Suite *s = suite_create("collectives");
  TCase *tc = tcase_create("numbers");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_collectives_serial_sum, 0, N_CASES * N_P);
  tcase_add_loop_test(tc, test_collectives_tiny, 0, N_CASES);
  tcase_add_test(tc, test_collectives_mismatch_aborts);
  tcase_add_test(tc, test_collectives_sendrecv);
  tcase_add_test(tc, test_collectives_alltoallv);
  suite_add_tcase(s, tc);
  tc = tcase_create("determinism");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_collectives_determinism, 0, N_CASES);
  suite_add_tcase(s, tc);
  tc = tcase_create("chunked");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_collectives_chunked, 0, N_CASES);
  suite_add_tcase(s, tc);
  tc = tcase_create("subgroups");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_collectives_subgroups, 0, 3);
  suite_add_tcase(s, tc);
  tc = tcase_create("timing");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, test_collectives_formula_grid, 0, N_CASES);
  tcase_add_loop_test(tc, test_collectives_gamma, 0, N_CASES);
  tcase_add_test(tc, test_collectives_formula);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(collectives_suite)

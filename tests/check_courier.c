/* check_courier.c - transfers started on multiples of a time quantum (algorithms/courier.h),
 * on a two-host CM02 cluster written by the test (1 Gflop/s hosts, 1.25 GB/s and 1 us per
 * private link, no cross traffic), where a header-only message takes ALPHA = 2 LAT + 64 / BW
 * and k of them sent together take 2 LAT + k 64 / BW (they share the links).
 *
 * One simulation in a child process (one SimGrid engine per process); the child exits with a
 * code naming the first check that failed. A sender on host-0, to a permanent receiver on host-1:
 *  - at 0.013 s hands the courier (quantum 0.01 s) three messages, numbered 0 to 2, for host-1;
 *    the courier starts them at 0.02 s, so they arrive at 0.02 + 2 LAT + 3 x 64 / BW, in the
 *    order handed over (exit 3: a wrong time; 4: a wrong order);
 *  - at 0.04 s, a multiple already, hands it one more: it starts at once, arriving at
 *    0.04 + ALPHA (exit 5);
 *  - then closes the courier, which must end so that the simulation returns (exit 6 if the
 *    receiver did not get all four).
 * quantum_align: from 0.013 with q = 0.01 the caller wakes at 0.02, from 0.02 it does not
 * sleep, and q = 0 never sleeps (exit 7). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <xbt/sysdep.h>

#include "algorithms/courier.h"
#include "algorithms/msg.h"
#include "check_util.h"
#include "cli_util.h"

#ifdef DTSIM_SANITIZE
#define SANITIZE_CONTEXTS "--cfg=contexts/factory:thread",
#else
#define SANITIZE_CONTEXTS
#endif

#define BW 1.25e9
#define LAT 1e-6
#define QUANTUM 0.01
/* TOL_TIME_S: SimGrid's clock is a sum of doubles near 0.02 s; its rounding (1e-17 s) and
 * the solver's default precision (surf/precision 1e-9 s) stay far below 1e-12 s, while a
 * transfer started at 0.013 s instead of 0.02 s misses by 7e-3 s. */
#define TOL_TIME_S 1e-12

static const char platform_xml[] =
    "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    "<platform version=\"4.1\">\n  <config>\n    <prop id=\"network/model\" value=\"CM02\"/>\n"
    "    <prop id=\"network/crosstraffic\" value=\"0\"/>\n  </config>\n"
    "  <cluster id=\"c\" prefix=\"host-\" suffix=\"\" radical=\"0-1\" speed=\"1Gf\" core=\"1\" bw=\"1.25GBps\" "
    "lat=\"1us\" sharing_policy=\"SPLITDUPLEX\"/>\n</platform>\n";

typedef struct numbered {
  msg hdr;
  int n;
} numbered;

static void numbered_free(msg *m) { xbt_free(m); }

static msg *numbered_create(int n)
{
  numbered *m = xbt_malloc0(sizeof(*m));
  m->hdr.free_fn = numbered_free;
  m->n = n;
  return &m->hdr;
}

/* what the child's actors leave for its main once the run returns */
static courier *sent_by;
static int received;

static int near(double t, double want) { return fabs(t - want) <= TOL_TIME_S; }

static void sender(int argc, char **argv)
{
  (void)argc, (void)argv;
  sg_host_t to = sg_host_by_name("host-1");
  sg_mailbox_t box = sg_mailbox_by_name("box");
  courier *c = courier_start(QUANTUM, "courier", sg_host_self());
  sg_actor_sleep_until(0.013);
  for (int n = 0; n < 3; n++)
    courier_send(c, box, to, numbered_create(n), MSG_HEADER_BYTES);
  sg_actor_sleep_until(0.04);
  courier_send(c, box, to, numbered_create(3), MSG_HEADER_BYTES);
  courier_close(c);
  sent_by = c; /* the courier ends on its own; it is freed after the run */
}

static void receiver(int argc, char **argv)
{
  (void)argc, (void)argv;
  sg_mailbox_t box = sg_mailbox_by_name("box");
  sg_mailbox_set_receiver("box"); /* transfers start when sent, as a replica's replies do */
  for (int k = 0; k < 4; k++) {
    msg *m = sg_mailbox_get(box);
    int n = ((numbered *)m)->n;
    double now = simgrid_get_clock();
    double want = k < 3 ? 0.02 + 2 * LAT + 3 * MSG_HEADER_BYTES / BW : 0.04 + 2 * LAT + MSG_HEADER_BYTES / BW;
    msg_free(m);
    if (!near(now, want))
      _exit(k < 3 ? 3 : 5);
    if (n != k)
      _exit(4);
  }
  received = 1;
}

static void aligner(int argc, char **argv)
{
  (void)argc, (void)argv;
  sg_actor_sleep_until(0.013);
  quantum_align(QUANTUM);
  int ok = near(simgrid_get_clock(), 0.02);
  quantum_align(QUANTUM);
  ok = ok && near(simgrid_get_clock(), 0.02);
  quantum_align(0);
  ok = ok && near(simgrid_get_clock(), 0.02);
  if (!ok)
    _exit(7);
}

START_TEST(test_courier_quantum)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "two.xml", platform_xml);
  char plat[512];
  snprintf(plat, sizeof(plat), "%s/two.xml", dir);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    char *argv[] = {"check_courier", "--log=root.thresh:critical", SANITIZE_CONTEXTS NULL};
    int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
    simgrid_init(&argc, argv);
    simgrid_load_platform(plat);
    sg_actor_create("sender", sg_host_by_name("host-0"), sender, 0, NULL);
    sg_actor_create("receiver", sg_host_by_name("host-1"), receiver, 0, NULL);
    sg_actor_create("aligner", sg_host_by_name("host-0"), aligner, 0, NULL);
    simgrid_run();
    if (!received)
      _exit(6);
    courier_free(sent_by);
    _exit(0);
  }
  int st;
  waitpid(pid, &st, 0);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d (the header names each exit code)", st);
  free(dir);
}
END_TEST

static Suite *courier_suite(void)
{
  Suite *s = suite_create("courier");
  ADD_TCASE(s, "quantum", test_courier_quantum);
  return s;
}

CHECK_MAIN(courier_suite)

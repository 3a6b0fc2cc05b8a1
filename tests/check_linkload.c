/* check_linkload.c - the links' windows in process (algorithms/linkload.h, and what
 * sim/placement.c and sim/output_links.c make of them): a window's share of each message,
 * the same windows whatever the order messages are added in, and a bursty link ranked
 * above a steadier one that carried ten times its bytes, each in a SimGrid engine run
 * inside Check's forked test. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "algorithms/linkload.h"
#include "algorithms/msg.h"
#include "check_util.h"
#include "cli_util.h"
#include "sim/output_links.h"
#include "sim/placement.h"
#include "sim/platform.h"

/* The 4-host star every test runs on: 1.25e9 B/s and 1 us per host link, a FATPIPE
 * backbone of the same bandwidth and no latency, CM02 without cross traffic, so that a
 * message of B bytes from one host to another takes exactly 2 us + B / 1.25e9 s. */
#define STAR_BW 1.25e9
#define STAR_LAT 1e-6

static sg_host_t *hosts;

/* Writes the star, starts SimGrid on it and numbers its hosts for the traffic count. */
static void star_start(const char *dir)
{
  char path[1024], err[256];
  snprintf(path, sizeof path, "%s/star.xml", dir);
  platform_spec spec = {.topology = PLATFORM_STAR, .hosts = 4, .speed = 1e9, .cores = 1, .bw = STAR_BW,
                        .lat = STAR_LAT, .network_model = "CM02", .name = "host"};
  FILE *f = fopen(path, "w");
  ck_assert_int_eq(platform_write(&spec, f, err, sizeof err), 0);
  fclose(f);
  int argc = 3;
  char *argv[] = {"check_linkload", "--cfg=network/crosstraffic:0", "--log=root.thres:critical", NULL};
  simgrid_init(&argc, argv);
  simgrid_load_platform(path);
  ck_assert_uint_eq(platform_hosts_in_order(path, &hosts), 4);
  msg_traffic_init(hosts, 4);
  account_setup();
}

static void star_stop(void)
{
  linkload_stop();
  msg_traffic_free();
  account_teardown();
  xbt_free(hosts);
}

/* ---- a window's share, and the order messages come in ---- */

static long long order_bins[2][4];

/* The windows of host_link_0_UP after two messages host-0 -> host-1, added in the order
 * `reverse` says, at most 4 windows: 1000 bytes in flight over [0, 0.3] s and 5000 over
 * [0.5, 3.7] s. */
static void order_windows(int reverse)
{
  linkload_start(4);
  linkload_route *r = linkload_route_of(hosts[0], hosts[1]);
  if (reverse)
    linkload_add(r, 5000, 0.5, 3.7);
  linkload_add(r, 1000, 0, 0.3);
  if (!reverse)
    linkload_add(r, 5000, 0.5, 3.7);
  ck_assert(linkload_close(3.7) == 4 && linkload_width() == 1);
  memcpy(order_bins[reverse], linkload_bytes(sg_link_by_name("host_link_0_UP")), sizeof order_bins[reverse]);
  linkload_stop();
}

static void order_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  order_windows(0);
  order_windows(1);
}

/* Known answer, by hand: 3.7 s in at most 4 windows takes windows of 1 s (4 x 0.5 s end at
 * 2). The first message is all in window 0; the second moves 5000 / 3.2 bytes a second
 * from 0.5 s, so floor(5000 x 0.5 / 3.2) = 781 by 1 s, floor(5000 x 1.5 / 3.2) = 2343 by
 * 2 s, floor(5000 x 2.5 / 3.2) = 3906 by 3 s, and 5000 by 3.7 s. In order, the first
 * message went into windows of 2^-30 s that merged 30 times; in reverse, into windows of
 * 1 s at once: the same bytes. */
START_TEST(test_linkload_windows)
{
  char *dir = cli_tmpdir();
  star_start(dir);
  free(dir); /* the platform is loaded: cli_tmpdir's folder goes at exit */
  sg_actor_create("order-0", hosts[0], order_actor, 0, NULL);
  simgrid_run();
  const long long want[4] = {1000 + 781, 2343 - 781, 3906 - 2343, 5000 - 3906};
  for (int k = 0; k < 4; k++) {
    ck_assert_msg(order_bins[0][k] == want[k], "window %d: %lld bytes, not %lld", k, order_bins[0][k], want[k]);
    ck_assert_msg(order_bins[1][k] == want[k], "reversed, window %d: %lld bytes, not %lld", k, order_bins[1][k],
                  want[k]);
  }
  star_stop();
}
END_TEST

/* ---- a burst against a steady stream ---- */

/* The steady stream: host-0 sends host-1 a message of STEADY_BYTES every STEADY_EVERY s,
 * 100 of them (5 ms of sending every 10 ms: half the link for a second). The burst: at 0.5 s
 * host-2 sends host-3 one message of BURST_BYTES (50 ms of the link alone). */
#define STEADY_BYTES 6.25e6
#define STEADY_EVERY 0.01
#define STEADY_COUNT 100
#define BURST_BYTES 62.5e6
#define BURST_AT 0.5

static void plain_free(msg *m)
{
  xbt_free(m);
}

static void send_one(const char *box, sg_host_t to, double bytes)
{
  msg *m = xbt_malloc0(sizeof(*m));
  m->free_fn = plain_free;
  msg_send(sg_mailbox_by_name(box), to, m, bytes);
}

static void steady_sender(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  for (int k = 0; k < STEADY_COUNT; k++) {
    sg_actor_sleep_until(k * STEADY_EVERY);
    send_one("steady", hosts[1], STEADY_BYTES);
  }
}

static void burst_sender(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  sg_actor_sleep_until(BURST_AT);
  send_one("burst", hosts[3], BURST_BYTES);
}

/* Takes argv[1] messages from mailbox argv[0], each as it comes: the receiver waits. */
static void receiver(int argc, char **argv)
{
  (void)argc;
  for (long k = atol(argv[1]); k > 0; k--)
    msg_free(msg_recv(sg_mailbox_by_name(argv[0])));
}

static const link_stat *link_named(const link_stat *links, size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp(links[i].name, name) == 0)
      return &links[i];
  ck_abort_msg("no link %s", name);
  return NULL;
}

/* BURST_PEAK: a window inside the burst holds the bytes it moved at an even rate over its
 * 2 us + 50 ms: BURST_BYTES / (STAR_BW x (2 us + BURST_BYTES / STAR_BW)) of the link, 1 /
 * (1 + 2 us x 1.25e9 / 62.5e6) = 1 / 1.00004. PEAK_TOL: a window's bytes are the difference
 * of two cumulative counts each floored to a whole byte, so within 2 bytes of the even
 * rate's, 2 / (STAR_BW x a window of 2^-6 s) = 1.03e-7 of the link. */
#define BURST_PEAK (1 / 1.00004)
#define PEAK_TOL 1.1e-7
/* STEADY_PEAK_MAX: a window of 2^-6 s = 15.625 ms meets at most two of the steady 5.002 ms
 * transfers (every 10 ms), so at most 10.004 / 15.625 = 0.64 of the link. */
#define STEADY_PEAK_MAX 0.641

/* The steady link carries ten times the burst's bytes, so it is busier on average; the
 * burst's link is busier at its peak, and top_links puts it first. */
START_TEST(test_linkload_burst_ranks_first)
{
  char *dir = cli_tmpdir();
  star_start(dir);
  free(dir); /* the platform is loaded: cli_tmpdir's folder goes at exit */
  linkload_start(100); /* run.link_windows = 50 */
  char *steady_args[] = {"steady", "100", NULL}, *burst_args[] = {"burst", "1", NULL};
  sg_actor_create("steady-0", hosts[0], steady_sender, 0, NULL);
  sg_actor_create("steady-1", hosts[1], receiver, 2, steady_args);
  sg_actor_create("burst-2", hosts[2], burst_sender, 0, NULL);
  sg_actor_create("burst-3", hosts[3], receiver, 2, burst_args);
  simgrid_run();
  double t = simgrid_get_clock();
  size_t windows = linkload_close(t), n;
  ck_assert_uint_eq(windows, 64); /* 0.995 s: 64 windows of 2^-6 s (100 of 2^-7 s end at 0.78 s) */
  ck_assert(linkload_width() == 1.0 / 64);
  platform_layout none = {.kind = PLATFORM_LAYOUT_NONE};
  link_stat *links = placement_links(t, windows, &none, hosts, 4, &n);
  const link_stat *steady = link_named(links, n, "host_link_0_UP"), *burst = link_named(links, n, "host_link_2_UP");
  ck_assert(steady->bytes == STEADY_COUNT * STEADY_BYTES && burst->bytes == BURST_BYTES);
  ck_assert_msg(steady->utilization > 9 * burst->utilization, "averages %g, %g", steady->utilization,
                burst->utilization);
  ck_assert_msg(fabs(burst->peak_utilization - BURST_PEAK) <= PEAK_TOL, "burst peak %.17g", burst->peak_utilization);
  ck_assert(burst->peak_at >= BURST_AT && burst->peak_at < BURST_AT + 0.05);
  ck_assert_msg(steady->peak_utilization <= STEADY_PEAK_MAX, "steady peak %.17g", steady->peak_utilization);
  ck_assert(steady->where[0] == '\0'); /* no layout: a file dtsim did not write */
  run_result r = {.links = links, .n_links = n, .link_windows = windows, .link_window = linkload_width()};
  json_t *top = output_links_top(&r, 1);
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(top, 0), "name")), "host_link_2_UP");
  json_decref(top);
  placement_links_free(links, n);
  star_stop();
}
END_TEST

static Suite *linkload_suite(void)
{
  Suite *s = suite_create("linkload");
  TCase *tc = tcase_create("windows");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_linkload_windows);
  suite_add_tcase(s, tc);
  tc = tcase_create("ranking");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_linkload_burst_ranks_first);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(linkload_suite)

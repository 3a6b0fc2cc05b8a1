/* check_platform_p2p.c - point-to-point transfers on generated platforms and presets,
 * checked against latency + size/bandwidth under each network model (CM02, LV08, TCP's
 * window), flows sharing links, --cfg over a file's own settings. Fork mode: one SimGrid
 * engine per test process. The generator, presets, pre-check and host order are
 * check_platform.c's. */

#include "check_util.h"
#include "platform_util.h"
#include "sim/fileio.h"
#include "sim/platform.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <xbt/sysdep.h>

/* 100 MB: long enough that the bandwidth term dominates, so both the latency factor and
 * the bandwidth factor of a model show in the total. */
#define P2P_BYTES 1e8

/* SimGrid 3.32, src/kernel/resource/NetworkModel.cpp: default network/TCP-gamma, the
 * largest TCP window in bytes; a flow never goes faster than gamma / (2 x latency). */
#define TCP_GAMMA 4194304.0

/* SimGrid 3.32, src/surf/network_cm02.cpp (surf_network_model_init_LegrandVelho):
 * LV08 multiplies the route latency by 13.01 and the bandwidth by 0.97. CM02 uses 1, 1. */
#define LV08_LAT_FACTOR 13.01
#define LV08_BW_FACTOR 0.97

/* Tolerances, each with where it comes from (u = 2^-53 ~ 1.1e-16). */
/* TOL_P2P_REL: a transfer's simulated time against alpha_beta, which redoes SimGrid's
 * computation for one flow: measured within 2.2e-16 on every route here. 1% is what the
 * tests ask: any wrong factor, route or sharing moves the time by more (LV08's: 3%). */
#define TOL_P2P_REL 0.01
/* TOL_LAT_S, TOL_LAT_LOOSE_S: a route latency sums <= 15 link latencies (<= 2e-4 s),
 * rounding <= 15 u 2e-4 ~ 3e-19 s; both are far above that and far below one link's
 * latency (the looser one is used on distbelief-2012's 50 us links). */
#define TOL_LAT_S 1e-15
#define TOL_LAT_LOOSE_S 1e-12
/* LV08_MIN_RATIO: LV08's factors make the 0.0801 s alpha-beta transfer of the same-rack test
 * 0.0838 s (x1.046); on 1 GbE, 0.8001 s became 0.826 s (x1.032). */
#define LV08_MIN_RATIO 1.02
/* GAMMA_MIN_S: capped by the TCP window the transfer takes 0.974 s, uncapped 0.1 s. */
#define GAMMA_MIN_S 0.9

/* ------------------------------------------------------------- point to point */

static void p2p_sender(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  char *payload = xbt_malloc(1);
  sg_mailbox_put(sg_mailbox_by_name("p2p"), payload, P2P_BYTES);
}

static void p2p_receiver(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  xbt_free(sg_mailbox_get(sg_mailbox_by_name("p2p")));
}

typedef struct p2p_result {
  double lat; /* sum of the route's link latencies, s */
  double bw;  /* smallest bandwidth on the route, bytes/s */
  double t;   /* simulated end of the transfer, s */
} p2p_result;

/* One transfer of P2P_BYTES from host `from` to host `to` on the platform of `spec`;
 * `cfg` is an extra SimGrid option or NULL. */
static p2p_result run_p2p(const platform_spec *spec, const char *from, const char *to,
                          const char *cfg)
{
  char *path = write_spec(spec);
  start_engine(cfg);
  simgrid_load_platform(path);
  unlink(path);
  xbt_free(path);

  sg_host_t src = sg_host_by_name(from), dst = sg_host_by_name(to);
  ck_assert_ptr_nonnull(src);
  ck_assert_ptr_nonnull(dst);
  p2p_result r;
  r.lat = sg_host_get_route_latency(src, dst);
  r.bw = sg_host_get_route_bandwidth(src, dst);
  sg_actor_create("sender", src, p2p_sender, 0, NULL);
  sg_actor_create("receiver", dst, p2p_receiver, 0, NULL);
  simgrid_run();
  r.t = simgrid_get_clock();
  return r;
}

/* What SimGrid 3.32 computes for one flow alone on its route (network_cm02.cpp,
 * comm_action_set_bounds and comm_action_set_variable): the latency is the sum of link
 * latencies times the latency factor; the rate is the bandwidth factor times the smaller of
 * the slowest link and TCP-gamma / (2 x raw latency). */
static double alpha_beta(double bytes, double lat, double bw, double lat_factor, double bw_factor)
{
  double window = lat > 0 ? TCP_GAMMA / (2 * lat) : bw;
  double rate = bw < window ? bw : window;
  return lat_factor * lat + bytes / (bw_factor * rate);
}

static void assert_within_1pct(double got, double want, const char *what)
{
  double rel = (got - want) / want;
  ck_assert_msg(rel < TOL_P2P_REL && rel > -TOL_P2P_REL, "%s: simulated %.9g s, expected %.9g s (%+.3g%%)",
                what, got, want, 100 * rel);
}

START_TEST(test_platform_p2p_preset_same_rack)
{
  platform_spec spec;
  ck_assert_int_eq(platform_preset("distbelief-2012", 0, &spec), 0);
  /* host-0 and host-1 share rack 0: host link up, host link down = 2 x 50 us. */
  p2p_result r = run_p2p(&spec, "host-0", "host-1", NULL);
  ck_assert_double_eq_tol(r.lat, 2 * spec.lat, TOL_LAT_LOOSE_S);
  ck_assert_double_eq_tol(r.bw, spec.bw, TOL_BW);
  /* LV08: 13.01 x 100 us + 1e8 B / (0.97 x 1.25e9 B/s) = 0.0837725 s */
  assert_within_1pct(r.t, alpha_beta(P2P_BYTES, r.lat, r.bw, LV08_LAT_FACTOR, LV08_BW_FACTOR),
                     "distbelief-2012 same rack, LV08");
  /* and it is not the plain alpha-beta time (0.0801 s): the factors are in effect */
  ck_assert_double_gt(r.t / alpha_beta(P2P_BYTES, r.lat, r.bw, 1, 1), LV08_MIN_RATIO);
}
END_TEST

START_TEST(test_platform_p2p_preset_cross_rack)
{
  platform_spec spec;
  ck_assert_int_eq(platform_preset("distbelief-2012", 0, &spec), 0);
  /* host-20 is the first host of rack 1: host -> leaf -> spine -> leaf -> host = 4 links. */
  p2p_result r = run_p2p(&spec, "host-0", "host-20", NULL);
  ck_assert_double_eq_tol(r.lat, 4 * spec.lat, TOL_LAT_LOOSE_S);
  ck_assert_double_eq_tol(r.bw, spec.bw, TOL_BW);
  /* LV08: 13.01 x 200 us + 1e8 B / (0.97 x 1.25e9 B/s) = 0.0850735 s */
  assert_within_1pct(r.t, alpha_beta(P2P_BYTES, r.lat, r.bw, LV08_LAT_FACTOR, LV08_BW_FACTOR),
                     "distbelief-2012 across racks, LV08");
}
END_TEST

START_TEST(test_platform_p2p_dgx2h_in_node)
{
  platform_spec spec;
  ck_assert_int_eq(platform_preset("dgx2h", 32, &spec), 0);
  /* GPU 0 to GPU 1 of node 0: host link up, host link down (non-blocking NVSwitch) */
  p2p_result r = run_p2p(&spec, "gpu-0", "gpu-1", NULL);
  ck_assert_double_eq_tol(r.lat, 2 * spec.lat, TOL_LAT_S);
  ck_assert_double_eq_tol(r.bw, 120e9, TOL_BW); /* NVSwitch's 150e9 x NCCL's 0.8 */
  /* CM02: 1 us + 1e8 B / 120e9 B/s = 834.33 us */
  assert_within_1pct(r.t, alpha_beta(P2P_BYTES, r.lat, r.bw, 1, 1), "dgx2h in a node, CM02");
}
END_TEST

START_TEST(test_platform_p2p_dgx2h_across_nodes)
{
  platform_spec spec;
  ck_assert_int_eq(platform_preset("dgx2h", 32, &spec), 0);
  /* gpu-16 is GPU 0 of node 1: host link, node 0's IB up, node 1's IB down, host link */
  p2p_result r = run_p2p(&spec, "gpu-0", "gpu-16", NULL);
  ck_assert_double_eq_tol(r.lat, 2 * spec.lat + 2 * spec.node_lat, TOL_LAT_S);
  ck_assert_double_eq_tol(r.bw, 96e9, TOL_BW); /* the node's 100e9 x NCCL's 0.96 */
  /* CM02: 3 us + 1e8 B / 96e9 B/s = 1.0447 ms */
  assert_within_1pct(r.t, alpha_beta(P2P_BYTES, r.lat, r.bw, 1, 1), "dgx2h across nodes, CM02");
}
END_TEST

static void flow_sender(int argc, char **argv)
{
  ck_assert_int_eq(argc, 2);
  sg_mailbox_put(sg_mailbox_by_name(argv[1]), xbt_malloc(1), P2P_BYTES);
}

static void flow_receiver(int argc, char **argv)
{
  ck_assert_int_eq(argc, 2);
  xbt_free(sg_mailbox_get(sg_mailbox_by_name(argv[1])));
}

/* Concurrent flows between nodes 0 and 1 of selene; returns the simulated end. */
static double run_flows(size_t n, const char *const (*pairs)[2])
{
  platform_spec spec;
  ck_assert_int_eq(platform_preset("selene", 16, &spec), 0);
  char *path = write_spec(&spec);
  start_engine(NULL);
  simgrid_load_platform(path);
  unlink(path);
  xbt_free(path);
  for (size_t i = 0; i < n; i++) {
    char name[16];
    snprintf(name, sizeof name, "flow-%zu", i);
    const char *argv[] = {"flow", name};
    sg_actor_create("sender", sg_host_by_name(pairs[i][0]), flow_sender, 2, (char **)argv);
    sg_actor_create("receiver", sg_host_by_name(pairs[i][1]), flow_receiver, 2, (char **)argv);
  }
  simgrid_run();
  return simgrid_get_clock();
}

START_TEST(test_platform_p2p_selene_duplex)
{
  /* opposite directions between nodes: each at the full 192e9 B/s (200e9 x NCCL's 0.96;
   * split duplex, and the symmetric route's reverse uses the links' other directions) */
  const char *const pairs[][2] = {{"gpu-0", "gpu-8"}, {"gpu-9", "gpu-1"}};
  double tt = run_flows(2, pairs);
  assert_within_1pct(tt, 3e-6 + P2P_BYTES / 192e9, "selene, opposite directions");
}
END_TEST

START_TEST(test_platform_p2p_selene_shared_ib)
{
  /* two flows out of node 0 share its 192e9 B/s adapters */
  const char *const pairs[][2] = {{"gpu-0", "gpu-8"}, {"gpu-1", "gpu-9"}};
  assert_within_1pct(run_flows(2, pairs), 3e-6 + 2 * P2P_BYTES / 192e9, "selene, one node's IB shared");
}
END_TEST

START_TEST(test_platform_p2p_selene_mixed)
{
  /* an intra-node flow beside an inter-node one leaves the latter its adapter's full rate
   * (a FATPIPE backbone in each node halved it: SimGrid weights sharing by latency) */
  const char *const pairs[][2] = {{"gpu-15", "gpu-0"}, {"gpu-1", "gpu-2"}};
  assert_within_1pct(run_flows(2, pairs), 3e-6 + P2P_BYTES / 192e9, "selene, intra- and inter-node flows");
}
END_TEST

START_TEST(test_platform_p2p_cfg_overrides_file)
{
  platform_spec spec;
  ck_assert_int_eq(platform_preset("distbelief-2012", 0, &spec), 0);
  /* The file says LV08; --cfg on the command line wins (SimGrid applies a <config> prop
   * only while the option still has its default value). CM02: 200 us + 0.08 s. */
  p2p_result r = run_p2p(&spec, "host-0", "host-20", "--cfg=network/model:CM02");
  assert_within_1pct(r.t, alpha_beta(P2P_BYTES, r.lat, r.bw, 1, 1),
                     "distbelief-2012 with --cfg=network/model:CM02");
}
END_TEST

START_TEST(test_platform_p2p_star_cm02)
{
  platform_spec spec = generated(PLATFORM_STAR, 16);
  /* Star: host link up, FATPIPE backbone (no latency, bw = link bw), host link down. */
  p2p_result r = run_p2p(&spec, "host-3", "host-11", NULL);
  ck_assert_double_eq_tol(r.lat, 2 * spec.lat, TOL_LAT_S);
  ck_assert_double_eq_tol(r.bw, spec.bw, TOL_BW);
  /* CM02: 2 us + 1e8 B / 1.25e9 B/s = 0.080002 s */
  assert_within_1pct(r.t, alpha_beta(P2P_BYTES, r.lat, r.bw, 1, 1), "star, CM02");
}
END_TEST

START_TEST(test_platform_p2p_torus_cm02)
{
  platform_spec spec = generated(PLATFORM_TORUS, 1000);
  /* 10x10x10 torus; host-555 is at (5,5,5): dimension-order routing takes 5 hops in each
   * dimension from (0,0,0), 15 links of 1 us. */
  p2p_result r = run_p2p(&spec, "host-0", "host-555", NULL);
  ck_assert_double_eq_tol(r.lat, 15 * spec.lat, TOL_LAT_S);
  assert_within_1pct(r.t, alpha_beta(P2P_BYTES, r.lat, r.bw, 1, 1), "torus, CM02");
}
END_TEST

START_TEST(test_platform_p2p_tcp_gamma)
{
  platform_spec spec = generated(PLATFORM_STAR, 2);
  spec.lat = 10e-3;
  /* 2 x 10 ms: the TCP window caps the rate at 4194304 / 0.04 = 104.9e6 B/s, below the
   * 1.25e9 B/s links, so 20 ms + 1e8 / 104.9e6 = 0.97367 s (0.1 s without the cap). */
  p2p_result r = run_p2p(&spec, "host-0", "host-1", NULL);
  assert_within_1pct(r.t, alpha_beta(P2P_BYTES, r.lat, r.bw, 1, 1), "star at 10 ms, CM02");
  ck_assert_double_gt(r.t, GAMMA_MIN_S);
}
END_TEST

static Suite *platform_p2p_suite(void)
{
  Suite *s = suite_create("platform_p2p");
  TCase *tc = tcase_create("p2p");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_platform_p2p_preset_same_rack);
  tcase_add_test(tc, test_platform_p2p_preset_cross_rack);
  tcase_add_test(tc, test_platform_p2p_cfg_overrides_file);
  tcase_add_test(tc, test_platform_p2p_star_cm02);
  tcase_add_test(tc, test_platform_p2p_torus_cm02);
  tcase_add_test(tc, test_platform_p2p_tcp_gamma);
  tcase_add_test(tc, test_platform_p2p_dgx2h_in_node);
  tcase_add_test(tc, test_platform_p2p_dgx2h_across_nodes);
  tcase_add_test(tc, test_platform_p2p_selene_duplex);
  tcase_add_test(tc, test_platform_p2p_selene_shared_ib);
  tcase_add_test(tc, test_platform_p2p_selene_mixed);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(platform_p2p_suite)

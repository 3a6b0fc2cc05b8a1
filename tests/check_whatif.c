/* check_whatif.c - the bottleneck report's link bytes in process: SimGrid's link-load
 * plugin against msg_traffic's route count (the count behind links.csv), one message on a
 * generated star, in an engine run inside Check's forked test. The what-if knobs and
 * reports through the CLI are in sim_whatif.c. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/plugins/load.h>
#include <xbt/dynar.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "algorithms/msg.h"
#include "algorithms/run.h"
#include "check_util.h"
#include "cli_util.h"
#include "sim/platform.h"

/* Tolerances, each with where it comes from (u = 2^-53 ~ 1.1e-16). */
/* TOL_TIME_S: latency + size / bandwidth = 8.02e-4 s rounds by ~1e-19 s; 1e-15 s is far
 * above that and far below one byte more (8e-10 s at 1.25e9 B/s). */
#define TOL_TIME_S 1e-15
/* TOL_LOAD_BYTES: the plugin's load is bandwidth x time, 1.0025e6 bytes, rounding ~u x 1e6
 * ~ 1e-10 per product (three summed on the route); 1e-6 bytes leaves a margin. */
#define TOL_LOAD_BYTES 1e-6

/* SimGrid's link-load plugin against our count, in this (forked) process: one 1e6-byte
 * message from host-0 to host-2 of a 4-host star (1.25e9 B/s, 1 us links, CM02, no cross
 * traffic). Tracked from an actor at time 0 (after Engine::run sealed the platform) it
 * works on split-duplex halves, but reads bandwidth x the whole transfer time, latency
 * included: 1e6 + 1.25e9 x 2 us = 1.0025e6 on each of the 3 links of the route, where
 * the message carried 1e6 (+64 header) bytes. This is why links.csv keeps the route count. */
static sg_link_t *plugin_links;
static size_t plugin_n;

static void plugin_tracker(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  for (size_t i = 0; i < plugin_n; i++)
    sg_link_load_track(plugin_links[i]);
}

/* One message of 1e6 simulated bytes and no payload. */
static void plain_free(msg *m)
{
  xbt_free(m);
}

static void plugin_sender(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  msg *m = xbt_malloc0(sizeof(*m));
  m->free_fn = plain_free;
  msg_send(sg_mailbox_by_name("in-2"), sg_host_by_name("host-2"), m, 1e6);
}

static void plugin_receiver(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  msg_free(msg_recv(sg_mailbox_by_name("in-2")));
}

static void add_route_bytes(void *ctx, sg_host_t src, sg_host_t dst, double bytes)
{
  double *sum = ctx;
  xbt_dynar_t route = xbt_dynar_new(sizeof(sg_link_t), NULL);
  sg_host_get_route(src, dst, route);
  sum[0] += bytes * (double)xbt_dynar_length(route);
  xbt_dynar_free(&route);
}

START_TEST(test_whatif_links_plugin)
{
  char *dir = cli_tmpdir(), path[1024], err[256];
  snprintf(path, sizeof path, "%s/star.xml", dir);
  platform_spec spec = {.topology = PLATFORM_STAR, .hosts = 4, .speed = 1e9, .cores = 1, .bw = 1.25e9,
                        .lat = 1e-6, .network_model = "CM02", .name = "host"};
  FILE *f = fopen(path, "w");
  ck_assert_int_eq(platform_write(&spec, f, err, sizeof err), 0);
  fclose(f);
  int argc = 3;
  char *argv[] = {"check_whatif", "--cfg=network/crosstraffic:0", "--log=root.thres:critical", NULL};
  simgrid_init(&argc, argv);
  sg_link_load_plugin_init();
  simgrid_load_platform(path);
  sg_host_t *hosts;
  size_t nh = platform_hosts_in_order(path, &hosts);
  ck_assert_uint_eq(nh, 4);
  msg_traffic_init(hosts, nh);
  account_setup();
  plugin_n = sg_link_count();
  plugin_links = sg_link_list();
  sg_actor_create("tracker-0", hosts[0], plugin_tracker, 0, NULL);
  sg_actor_create("sender-0", hosts[0], plugin_sender, 0, NULL);
  sg_actor_create("receiver-2", hosts[2], plugin_receiver, 0, NULL);
  simgrid_run();
  double t = simgrid_get_clock(), counted[1] = {0};
  ck_assert_double_eq_tol(t, 2e-6 + 1e6 / 1.25e9, TOL_TIME_S);
  msg_traffic_foreach(add_route_bytes, counted);
  ck_assert_double_eq(counted[0], 3 * 1e6); /* host_link_0_UP, backbone, host_link_2_DOWN */
  double on_route = 0;
  for (size_t i = 0; i < plugin_n; i++) {
    const char *name = sg_link_get_name(plugin_links[i]);
    double load = sg_link_get_cum_load(plugin_links[i]);
    if (strcmp(name, "host_link_0_UP") == 0 || strcmp(name, "host_backbone") == 0 ||
        strcmp(name, "host_link_2_DOWN") == 0) {
      ck_assert_msg(fabs(load - (1e6 + 1.25e9 * 2e-6)) <= TOL_LOAD_BYTES, "%s: plugin %.17g bytes", name, load);
      on_route += load;
    } else {
      ck_assert_msg(load == 0, "%s: plugin %.17g bytes off the route", name, load);
    }
  }
  ck_assert_double_eq_tol(on_route, 3 * 1.0025e6, TOL_LOAD_BYTES);
  msg_traffic_free();
  account_teardown();
  xbt_free(plugin_links);
  xbt_free(hosts);
  remove(path);
  rmdir(dir);
  free(dir);
}
END_TEST

static Suite *whatif_suite(void)
{
  Suite *s = suite_create("whatif");
  TCase *tc = tcase_create("links");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_whatif_links_plugin);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(whatif_suite)

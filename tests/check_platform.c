/* check_platform.c - the platform generator, the distbelief-2012 preset, the pre-check
 * of platform files, hosts in file order, and point-to-point transfers checked against
 * latency + size/bandwidth under each network model. Fork mode: one SimGrid engine per
 * test process. */

#include "check_util.h"
#include "sim/fileio.h"
#include "sim/platform.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
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
/* TOL_BW: a route's bandwidth is one of its links', copied: equal; 1e-3 B/s is below 1e-11
 * of any bandwidth here (1.25e8 .. 1.5e11 B/s). */
#define TOL_BW 1e-3
/* LV08_MIN_RATIO: LV08's factors make the 0.0801 s alpha-beta transfer of the same-rack test
 * 0.0838 s (x1.046); on 1 GbE, 0.8001 s became 0.826 s (x1.032). */
#define LV08_MIN_RATIO 1.02
/* GAMMA_MIN_S: capped by the TCP window the transfer takes 0.974 s, uncapped 0.1 s. */
#define GAMMA_MIN_S 0.9

/* simgrid_init with quiet logs, an optional extra option, and thread contexts under the
 * sanitizers (ASan does not follow SimGrid's own stack switching). */
static void start_engine(const char *cfg)
{
  static char arg0[] = "check_platform", quiet[] = "--log=root.thresh:warning",
              threads[] = "--cfg=contexts/factory:thread", extra[128];
  char *argv[5];
  int argc = 0;
  argv[argc++] = arg0;
  argv[argc++] = quiet;
#ifdef DTSIM_SANITIZE
  argv[argc++] = threads;
#else
  (void)threads;
#endif
  if (cfg) {
    snprintf(extra, sizeof extra, "%s", cfg);
    argv[argc++] = extra;
  }
  argv[argc] = NULL;
  simgrid_init(&argc, argv);
}

static char *write_spec(const platform_spec *spec)
{
  char *path = xbt_malloc(64);
  char err[256] = "";
  snprintf(path, 64, "/tmp/check_platform-XXXXXX");
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  FILE *f = fdopen(fd, "w");
  ck_assert_ptr_nonnull(f);
  ck_assert_msg(platform_write(spec, f, err, sizeof err) == 0, "platform_write: %s", err);
  ck_assert_int_eq(fclose(f), 0);
  return path;
}

static platform_spec generated(platform_topology t, size_t hosts)
{
  platform_spec s;
  memset(&s, 0, sizeof s);
  s.topology = t;
  s.hosts = hosts;
  s.speed = 1e9;
  s.cores = 1;
  s.bw = 1.25e9;
  s.lat = 1e-6;
  s.network_model = "CM02";
  s.name = "host";
  return s;
}

/* ------------------------------------------------------------- generate */

static const platform_topology all_topologies[] = {PLATFORM_STAR, PLATFORM_FAT_TREE,
                                                   PLATFORM_TORUS, PLATFORM_DRAGONFLY,
                                                   PLATFORM_RING};
static const size_t sizes[] = {1, 7, 100, 1000};
#define N_SIZES (sizeof sizes / sizeof *sizes)
#define N_TOPOLOGIES (sizeof all_topologies / sizeof *all_topologies)

START_TEST(test_platform_generate_loads)
{
  platform_topology t = all_topologies[_i / (int)N_SIZES];
  size_t n = sizes[_i % (int)N_SIZES];
  platform_spec spec = generated(t, n);
  char *path = write_spec(&spec);
  char err[512] = "";
  char arg0[] = "check_platform";
  char *argv[] = {arg0, NULL};

  long got = platform_check(path, 1, argv, err, sizeof err);
  ck_assert_msg(got >= (long)n, "%s with %zu hosts: %ld (%s)", platform_topology_name(t), n, got,
                err);
  /* rounding up to a whole shape never doubles the request */
  ck_assert_msg(got <= 2 * (long)n, "%s with %zu hosts: %ld", platform_topology_name(t), n, got);
  if (t == PLATFORM_STAR || t == PLATFORM_RING)
    ck_assert_int_eq(got, (long)n);
  unlink(path);
  xbt_free(path);
}
END_TEST

START_TEST(test_platform_generate_shapes)
{
  /* Known shapes: 7 hosts round up to a 2x2x2 torus; 1000 is 10x10x10 exactly; the
   * preset's 100 hosts are 5 whole racks of 20, google-2004's 3 whole racks of 40. */
  char buf[4096];
  platform_spec spec = generated(PLATFORM_TORUS, 7);
  FILE *f = fmemopen(buf, sizeof buf, "w");
  ck_assert_int_eq(platform_write(&spec, f, NULL, 0), 0);
  fclose(f);
  ck_assert_ptr_nonnull(strstr(buf, "radical=\"0-7\""));
  ck_assert_ptr_nonnull(strstr(buf, "topo_parameters=\"2,2,2\""));
  ck_assert_ptr_nonnull(strstr(buf, "<prop id=\"network/model\" value=\"CM02\"/>"));

  spec.hosts = 1000;
  f = fmemopen(buf, sizeof buf, "w");
  ck_assert_int_eq(platform_write(&spec, f, NULL, 0), 0);
  fclose(f);
  ck_assert_ptr_nonnull(strstr(buf, "topo_parameters=\"10,10,10\""));

  ck_assert_int_eq(platform_preset("distbelief-2012", 100, &spec), 0);
  f = fmemopen(buf, sizeof buf, "w");
  ck_assert_int_eq(platform_write(&spec, f, NULL, 0), 0);
  fclose(f);
  ck_assert_ptr_nonnull(strstr(buf, "radical=\"0-99\""));
  ck_assert_ptr_nonnull(strstr(buf, "topo_parameters=\"2;20,5;1,4;1,1\""));
  ck_assert_int_eq(platform_preset("google-2004", 100, &spec), 0); /* 3 whole racks of 40 */
  f = fmemopen(buf, sizeof buf, "w");
  ck_assert_int_eq(platform_write(&spec, f, NULL, 0), 0);
  fclose(f);
  ck_assert_ptr_nonnull(strstr(buf, "radical=\"0-119\""));
  ck_assert_ptr_nonnull(strstr(buf, "topo_parameters=\"2;40,3;1,4;1,1\""));
  ck_assert_ptr_nonnull(strstr(buf, "<prop id=\"network/model\" value=\"LV08\"/>"));
}
END_TEST

/* ------------------------------------------------------------- presets */

START_TEST(test_platform_preset_distbelief)
{
  platform_spec spec;
  const char *desc = NULL;
  ck_assert_int_eq(platform_preset("distbelief-2012", 0, &spec), 0);
  ck_assert_int_eq(spec.topology, PLATFORM_FAT_TREE);
  ck_assert_uint_eq(spec.hosts, 1280);          /* 64 racks of 20 */
  ck_assert_double_eq(spec.speed, 20.8e9);      /* 2.6 GHz x 8 DP flops/cycle (AVX) */
  ck_assert_int_eq(spec.cores, 16);             /* Dean'12: "16 cores" per machine */
  ck_assert_double_eq(spec.bw, 1.25e9);         /* Saturn's 10 GbE servers (Jupiter Rising) */
  ck_assert_double_eq(spec.lat, 50e-6);
  ck_assert_uint_eq(spec.hosts_per_rack, 20);   /* a Pluto ToR's 20 servers ... */
  ck_assert_uint_eq(spec.uplinks, 4);           /* ... and 4 x 10G uplinks: 5:1 */
  ck_assert_str_eq(spec.network_model, "LV08");
  ck_assert_int_eq(platform_preset("google-2004", 0, &spec), 0);
  ck_assert_uint_eq(spec.hosts, 1280);          /* 32 racks of 40 */
  ck_assert_double_eq(spec.speed, 20.8e9);
  ck_assert_double_eq(spec.bw, 125e6);          /* 1 GbE */
  ck_assert_uint_eq(spec.hosts_per_rack, 40);
  ck_assert_uint_eq(spec.uplinks, 4);           /* 40:4 = 10:1 */
  ck_assert_str_eq(spec.network_model, "LV08");
  ck_assert_int_eq(platform_preset("distbelief-2012", 2000, &spec), 0);
  ck_assert_uint_eq(spec.hosts, 2000);
  ck_assert_int_eq(platform_preset("no-such-preset", 0, &spec), -1);
  ck_assert_str_eq(platform_preset_at(0, &desc), "distbelief-2012");
  ck_assert_ptr_nonnull(desc);
  ck_assert_str_eq(platform_preset_at(1, &desc), "gpu-2012");
  ck_assert_str_eq(platform_preset_at(2, &desc), "dgx2h");
  ck_assert_str_eq(platform_preset_at(3, &desc), "selene");
  ck_assert_str_eq(platform_preset_at(4, &desc), "google-2004");
  ck_assert_ptr_null(platform_preset_at(5, &desc));
}
END_TEST

START_TEST(test_platform_preset_gpu)
{
  platform_spec spec;
  ck_assert_int_eq(platform_preset("gpu-2012", 0, &spec), 0);
  ck_assert_uint_eq(spec.hosts, 1);               /* one GPU */
  ck_assert_double_eq(spec.speed, 1331.2e9);      /* Tesla M2090: 512 cores x 1.3 GHz x 2 */
  ck_assert_int_eq(spec.cores, 1);
  ck_assert_int_eq(spec.topology, PLATFORM_STAR);
  ck_assert_int_eq(platform_preset("gpu-2012", 3, &spec), 0);
  ck_assert_uint_eq(spec.hosts, 3);
}
END_TEST

START_TEST(test_platform_preset_dgx2h)
{
  platform_spec spec;
  ck_assert_int_eq(platform_preset("dgx2h", 0, &spec), 0);
  ck_assert_uint_eq(spec.gpus_per_node, 16);   /* DGX-2H: 16 V100 (Megatron-LM sec. 5) */
  ck_assert_uint_eq(spec.hosts, 512);          /* up to 32 DGX-2H = 512 GPUs */
  ck_assert_double_eq(spec.speed, 125e12);     /* V100 fp16 tensor-core peak; 39e12 is 30% */
  ck_assert_int_eq(spec.cores, 1);             /* one host per GPU */
  ck_assert_double_eq(spec.bw, 150e9);         /* NVSwitch "300 GB/s", both directions */
  ck_assert_double_eq(spec.node_bw, 100e9);    /* 8 x 100 Gb/s IB = "100 GB/s between servers" */
  ck_assert_double_eq(spec.lat, 0.5e-6);       /* assumption */
  ck_assert_double_eq(spec.node_lat, 1e-6);    /* assumption */
  ck_assert_double_eq(spec.mem_bw, 900e9);     /* V100 HBM2, NVIDIA's datasheet */
  ck_assert_uint_eq(spec.gpu_sms, 80);         /* V100: 80 SMs */
  ck_assert_uint_eq(spec.gpu_comm_sms, 16);    /* NCCL on a DGX with 8 NICs (nccl issue 689) */
  ck_assert_double_eq(spec.gpu_gemm_eff, 0.8631); /* fitted on DeepBench's largest V100 GEMM */
  ck_assert_double_eq(spec.gpu_l2_bw, 2155e9); /* measured by Jia et al. 2018 */
  ck_assert_double_eq(spec.gpu_launch, 7e-6);  /* DeepBench's V100 GEMM floor */
  ck_assert_ptr_null(spec.gpu_tiles);          /* cuBLAS's tiles, models/gemm.h */
  ck_assert_double_eq(spec.bw_eff, 0.8);       /* NCCL: 20 of an NVLink's 25 GB/s */
  ck_assert_double_eq(spec.node_bw_eff, 0.96); /* NCCL: 12 of a 100 Gb/s NIC's 12.5 GB/s */
  ck_assert_str_eq(spec.network_model, "CM02");
  ck_assert_int_eq(platform_preset("dgx2h", 20, &spec), 0);
  ck_assert_uint_eq(spec.hosts, 20);           /* written as 2 whole nodes */
}
END_TEST

START_TEST(test_platform_preset_selene)
{
  platform_spec spec;
  ck_assert_int_eq(platform_preset("selene", 0, &spec), 0);
  ck_assert_uint_eq(spec.gpus_per_node, 8);    /* PTD-P sec. 5: 8 A100 per node */
  ck_assert_uint_eq(spec.hosts, 64);           /* 8 nodes by default */
  ck_assert_double_eq(spec.speed, 312e12);     /* A100 fp16 peak (PTD-P) */
  ck_assert_int_eq(spec.cores, 1);
  ck_assert_double_eq(spec.bw, 300e9);         /* NVSwitch 600 GB/s, both directions */
  ck_assert_double_eq(spec.node_bw, 200e9);    /* 8 x 200 Gb/s HDR IB */
  ck_assert_double_eq(spec.mem_bw, 2039e9);    /* A100 80GB HBM2e, NVIDIA's datasheet */
  ck_assert_uint_eq(spec.gpu_sms, 108);        /* A100: 108 SMs */
  ck_assert_double_eq(spec.gpu_gemm_eff, 0.8631); /* the V100's (no A100 DeepBench results) */
  ck_assert_double_eq(spec.gpu_l2_bw, 4.965e12); /* V100's measured x the whitepapers' ratio */
  ck_assert_double_eq(spec.bw_eff, 230.0 / 300); /* NCCL: ~230 of 300 GB/s on A100 */
  ck_assert_double_eq(spec.node_bw_eff, 0.96); /* NCCL: 24 of a 200 Gb/s NIC's 25 GB/s */
  ck_assert_str_eq(spec.network_model, "CM02");
  ck_assert_int_eq(platform_preset("distbelief-2012", 0, &spec), 0);
  ck_assert_double_eq(spec.mem_bw, 0);         /* no mem_bw property written */
  ck_assert_uint_eq(spec.gpu_sms, 0);          /* nor a GPU description */
  ck_assert_double_eq(spec.bw_eff, 0);         /* links at their nominal bandwidth */
}
END_TEST

START_TEST(test_platform_preset_gpu_nodes_load)
{
  platform_spec spec;
  char err[512] = "";
  char arg0[] = "check_platform";
  char *argv[] = {arg0, NULL};
  ck_assert_int_eq(platform_preset("dgx2h", 0, &spec), 0);
  char *path = write_spec(&spec);
  ck_assert_int_eq(platform_check(path, 1, argv, err, sizeof err), 512);
  unlink(path);
  xbt_free(path);
  ck_assert_int_eq(platform_preset("selene", 100, &spec), 0);
  path = write_spec(&spec);
  ck_assert_int_eq(platform_check(path, 1, argv, err, sizeof err), 104); /* 13 whole nodes */
  unlink(path);
  xbt_free(path);
}
END_TEST

START_TEST(test_platform_preset_loads)
{
  platform_spec spec;
  char err[512] = "";
  char arg0[] = "check_platform";
  char *argv[] = {arg0, NULL};
  ck_assert_int_eq(platform_preset("distbelief-2012", 0, &spec), 0);
  char *path = write_spec(&spec);
  ck_assert_int_eq(platform_check(path, 1, argv, err, sizeof err), 1280);
  unlink(path);
  xbt_free(path);
}
END_TEST

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

/* ------------------------------------------------------------- pre-check */

static int has_core_file(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  int found = 0;
  ck_assert_ptr_nonnull(d);
  while ((e = readdir(d)) != NULL)
    if (strncmp(e->d_name, "core", 4) == 0)
      found = 1;
  closedir(d);
  return found;
}

START_TEST(test_platform_check_malformed)
{
  const char *path = TEST_DATA_DIR "/platform_malformed.xml";
  char dir[] = "/tmp/check_platform-core-XXXXXX";
  char err[1024] = "";
  char arg0[] = "check_platform";
  char *argv[] = {arg0, NULL};
  struct rlimit rl;

  /* Allow core dumps here, so that a child that really aborted would leave one in dir. */
  ck_assert_ptr_nonnull(mkdtemp(dir));
  ck_assert_int_eq(chdir(dir), 0);
  getrlimit(RLIMIT_CORE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_CORE, &rl);

  ck_assert_int_eq(platform_check(path, 1, argv, err, sizeof err), -1);
  ck_assert_msg(strncmp(err, path, strlen(path)) == 0, "message does not name the file: %s", err);
  ck_assert_msg(strstr(err, ": malformed platform: Parse error at ") != NULL, "%s", err);
  ck_assert_msg(strstr(err, "platform_malformed.xml:9") != NULL, "no line number: %s", err);
  ck_assert_ptr_null(strchr(err, '\n'));
  ck_assert_msg(!has_core_file(dir), "core file left in %s", dir);
  ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_platform_check_missing)
{
  char err[1024] = "";
  char arg0[] = "check_platform";
  char *argv[] = {arg0, NULL};
  ck_assert_int_eq(platform_check("/nonexistent/platform.xml", 1, argv, err, sizeof err), -1);
  ck_assert_str_eq(err, "/nonexistent/platform.xml: cannot open: No such file or directory");
}
END_TEST

START_TEST(test_platform_check_bad_option)
{
  platform_spec spec = generated(PLATFORM_STAR, 4);
  char *path = write_spec(&spec);
  char err[1024] = "";
  char arg0[] = "check_platform", bad[] = "--cfg=network/model:NOPE";
  char *argv[] = {arg0, bad, NULL};
  /* the child gets the caller's SimGrid options: a bad one is reported, not fatal */
  ck_assert_int_eq(platform_check(path, 2, argv, err, sizeof err), -1);
  ck_assert_msg(strstr(err, "cannot load with these SimGrid options") != NULL, "%s", err);
  ck_assert_msg(strstr(err, "NOPE") != NULL, "%s", err);
  unlink(path);
  xbt_free(path);
}
END_TEST

/* ------------------------------------------------------------- hosts in order */

START_TEST(test_platform_hosts_file_order)
{
  const char *path = TEST_DATA_DIR "/platform_unordered.xml";
  static const char *const want[] = {"zeta",        "node-3.lab",  "node-0.lab", "node-1.lab",
                                     "node-10.lab", "node-11.lab", "mu",         "alpha"};
  sg_host_t *hosts = NULL;

  start_engine(NULL);
  simgrid_load_platform(path);
  size_t n = platform_hosts_in_order(path, &hosts);
  ck_assert_uint_eq(n, sizeof want / sizeof *want);
  for (size_t i = 0; i < n; i++)
    ck_assert_str_eq(sg_host_get_name(hosts[i]), want[i]);
  xbt_free(hosts);
}
END_TEST

START_TEST(test_platform_hosts_radical_order)
{
  platform_spec spec = generated(PLATFORM_STAR, 12);
  char *path = write_spec(&spec);
  sg_host_t *hosts = NULL;
  char name[32];

  start_engine(NULL);
  simgrid_load_platform(path);
  /* SimGrid 3.32 lists hosts by name: host-0, host-1, host-10, host-11, host-2, ... */
  sg_host_t *by_name = sg_host_list();
  ck_assert_str_eq(sg_host_get_name(by_name[2]), "host-10");
  xbt_free(by_name);
  /* the file's radical 0-11 gives numeric order */
  ck_assert_uint_eq(platform_hosts_in_order(path, &hosts), 12);
  for (int i = 0; i < 12; i++) {
    snprintf(name, sizeof name, "host-%d", i);
    ck_assert_str_eq(sg_host_get_name(hosts[i]), name);
  }
  xbt_free(hosts);
  unlink(path);
  xbt_free(path);
}
END_TEST

START_TEST(test_platform_hosts_unscanned_by_name)
{
  /* hosts the scan cannot see (here: no file to scan) follow in name order */
  const char *path = TEST_DATA_DIR "/platform_unordered.xml";
  sg_host_t *hosts = NULL;

  start_engine(NULL);
  simgrid_load_platform(path);
  ck_assert_uint_eq(platform_hosts_in_order("/nonexistent/platform.xml", &hosts), 8);
  ck_assert_str_eq(sg_host_get_name(hosts[0]), "alpha");
  ck_assert_str_eq(sg_host_get_name(hosts[1]), "mu");
  ck_assert_str_eq(sg_host_get_name(hosts[7]), "zeta");
  xbt_free(hosts);
}
END_TEST

static void assert_rejected(const platform_spec *spec, const char *what);

/* A GPU description and a link efficiency in a generated star: every host carries the
 * properties compute_gpu reads, and its link the bandwidth times the efficiency (4 hosts
 * of 1.25e9 B/s at 0.5: 6.25e8 between two hosts). */
START_TEST(test_platform_gpu_description)
{
  platform_spec spec = generated(PLATFORM_STAR, 4);
  spec.mem_bw = 1e12;
  spec.gpu_sms = 10;
  spec.gpu_gemm_eff = 0.75;
  spec.gpu_l2_bw = 2e12;
  spec.gpu_launch = 5e-6;
  spec.gpu_comm_sms = 2;
  spec.gpu_tiles = "128x128,64x64";
  spec.bw_eff = 0.5;
  char *path = write_spec(&spec);
  start_engine(NULL);
  simgrid_load_platform(path);
  unlink(path);
  xbt_free(path);
  sg_host_t h = sg_host_by_name("host-2");
  ck_assert_str_eq(sg_host_get_property_value(h, "gpu_sms"), "10");
  ck_assert_str_eq(sg_host_get_property_value(h, "gpu_gemm_eff"), "0.75");
  ck_assert_str_eq(sg_host_get_property_value(h, "gpu_l2_bw"), "2000000000000");
  ck_assert_str_eq(sg_host_get_property_value(h, "gpu_launch"), "5e-06");
  ck_assert_str_eq(sg_host_get_property_value(h, "gpu_comm_sms"), "2");
  ck_assert_str_eq(sg_host_get_property_value(h, "gpu_tiles"), "128x128,64x64");
  ck_assert_str_eq(sg_host_get_property_value(h, "mem_bw"), "1000000000000");
  ck_assert_double_eq_tol(sg_host_get_route_bandwidth(sg_host_by_name("host-0"), h), 6.25e8, TOL_BW);
  /* without a GPU description only mem_bw is written */
  spec.gpu_sms = 0;
  path = write_spec(&spec);
  char *xml = fileio_read(path, NULL);
  unlink(path);
  xbt_free(path);
  ck_assert_ptr_nonnull(xml);
  ck_assert_ptr_null(strstr(xml, "gpu_"));
  ck_assert_ptr_nonnull(strstr(xml, "mem_bw"));
  xbt_free(xml);
  /* collectives must leave a GPU SMs to compute on */
  spec.gpu_sms = 10;
  spec.gpu_comm_sms = 10;
  assert_rejected(&spec, "--gpu-comm-sms below --gpu-sms");
}
END_TEST

/* ------------------------------------------------------------- limits */

static void assert_rejected(const platform_spec *spec, const char *what)
{
  char buf[4096] = "";
  char err[256] = "";
  FILE *f = fmemopen(buf, sizeof buf, "w");
  ck_assert_int_eq(platform_write(spec, f, err, sizeof err), -1);
  ck_assert_int_eq(ftell(f), 0); /* nothing written */
  fclose(f);
  ck_assert_msg(strstr(err, what) != NULL, "expected '%s' in '%s'", what, err);
}

START_TEST(test_platform_write_rejects)
{
  platform_spec spec = generated(PLATFORM_STAR, 0);
  assert_rejected(&spec, "zero hosts");
  spec = generated(PLATFORM_FAT_TREE, 8);
  spec.bw = 0;
  assert_rejected(&spec, "bandwidth");
  spec.bw = -125e6;
  assert_rejected(&spec, "bandwidth");
  spec = generated(PLATFORM_TORUS, 8);
  spec.speed = 0;
  assert_rejected(&spec, "speed");
  spec.speed = -1e9;
  assert_rejected(&spec, "speed");
  spec = generated(PLATFORM_RING, 8);
  spec.lat = -1e-6;
  assert_rejected(&spec, "latency");
  spec = generated(PLATFORM_DRAGONFLY, 8);
  spec.cores = 0;
  assert_rejected(&spec, "cores");
  spec = generated(PLATFORM_STAR, 8);
  spec.network_model = "IB";
  assert_rejected(&spec, "network model");
  spec = generated(PLATFORM_STAR, 8);
  spec.bw_eff = 1.5;
  assert_rejected(&spec, "efficienc");
  spec = generated(PLATFORM_STAR, 8);
  spec.gpu_sms = 80;
  assert_rejected(&spec, "memory bandwidth"); /* a GPU description needs mem_bw */
  spec.mem_bw = 900e9;
  spec.gpu_tiles = "256by128";
  assert_rejected(&spec, "GPU description");
}
END_TEST

START_TEST(test_platform_topology_names)
{
  platform_topology t;
  for (size_t i = 0; i < N_TOPOLOGIES; i++) {
    ck_assert_int_eq(platform_topology_parse(platform_topology_name(all_topologies[i]), &t), 0);
    ck_assert_int_eq(t, all_topologies[i]);
  }
  ck_assert_int_eq(platform_topology_parse("hypercube", &t), -1);
}
END_TEST

/* ------------------------------------------------------------- command line */

static int run_main(int argc, const char *const *args)
{
  char *argv[16];
  for (int i = 0; i < argc; i++)
    argv[i] = (char *)args[i];
  argv[argc] = NULL;
  return platform_main(argc, argv);
}

START_TEST(test_platform_main_output_file)
{
  char dir[] = "/tmp/check_platform-cli-XXXXXX";
  char path[96], tmp[128], err[512] = "";
  char arg0[] = "check_platform";
  char *argv[] = {arg0, NULL};
  struct stat st;
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/db.xml", dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  const char *args[] = {"platform", "distbelief-2012", "--hosts", "100", "-o", path};
  ck_assert_int_eq(run_main(6, args), 0);
  ck_assert_int_eq(stat(path, &st), 0);
  ck_assert_int_ne(stat(tmp, &st), 0); /* renamed into place */
  ck_assert_int_eq(platform_check(path, 1, argv, err, sizeof err), 100); /* 5 racks of 20 */

  const char *gen[] = {"platform", "--hosts=10", "--topology", "ring", "--bw", "1Gbps",
                       "--lat",    "50us",       "-o",         path};
  ck_assert_int_eq(run_main(10, gen), 0);
  FILE *f = fopen(path, "r");
  char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  ck_assert_ptr_nonnull(strstr(buf, "bw=\"125000000Bps\" lat=\"5e-05s\""));
  ck_assert_ptr_nonnull(strstr(buf, "topology=\"TORUS\" topo_parameters=\"10\""));
  unlink(path);
  ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_platform_main_bad_input)
{
  static const char *const cases[][6] = {
      {"platform", NULL},
      {"platform", "no-such-preset", NULL},
      {"platform", "--hosts", "0", "--topology", "star", NULL},
      {"platform", "--hosts", "10", "--topology", "mesh", NULL},
      {"platform", "--hosts", "10", NULL},
      {"platform", "--topology", "ring", NULL},
      {"platform", "--hosts", "ten", "--topology", "star", NULL},
      {"platform", "distbelief-2012", "--bw", "-1", NULL},
      {"platform", "distbelief-2012", "--lat", "5 parsecs", NULL},
      {"platform", "distbelief-2012", "--network-model", "IB", NULL},
      {"platform", "distbelief-2012", "--frobnicate", "1", NULL},
      {"platform", "distbelief-2012", "-o", NULL},
      {"platform", "dgx2h", "--gpu-tiles", "256x", NULL},
      {"platform", "dgx2h", "--bw-eff", "1.2", NULL},
      {"platform", "dgx2h", "--node-bw-eff", "0", NULL},
      {"platform", "dgx2h", "--gpu-sms", "-1", NULL},
      {"platform", "dgx2h", "--gpu-launch", "fast", NULL},
      {"platform", "dgx2h", "--gpu-gemm-eff", "1.5", NULL},
  };
  ck_assert_ptr_nonnull(freopen("/dev/null", "w", stderr));
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int argc = 0;
    while (cases[i][argc])
      argc++;
    ck_assert_msg(run_main(argc, cases[i]) == 2, "case %zu accepted", i);
  }
}
END_TEST

START_TEST(test_platform_main_help)
{
  const char *args[] = {"platform", "--help"};
  ck_assert_ptr_nonnull(freopen("/dev/null", "w", stdout));
  ck_assert_int_eq(run_main(2, args), 0);
}
END_TEST

Suite *platform_suite(void)
{
  Suite *s = suite_create("platform");
  TCase *tc;

  tc = tcase_create("generate");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_platform_generate_loads, 0, (int)(N_TOPOLOGIES * N_SIZES));
  tcase_add_test(tc, test_platform_generate_shapes);
  suite_add_tcase(s, tc);

  tc = tcase_create("presets");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_platform_preset_distbelief);
  tcase_add_test(tc, test_platform_preset_gpu);
  tcase_add_test(tc, test_platform_preset_loads);
  tcase_add_test(tc, test_platform_preset_dgx2h);
  tcase_add_test(tc, test_platform_preset_selene);
  tcase_add_test(tc, test_platform_preset_gpu_nodes_load);
  tcase_add_test(tc, test_platform_gpu_description);
  suite_add_tcase(s, tc);

  tc = tcase_create("p2p");
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

  tc = tcase_create("check");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_platform_check_malformed);
  tcase_add_test(tc, test_platform_check_missing);
  tcase_add_test(tc, test_platform_check_bad_option);
  suite_add_tcase(s, tc);

  tc = tcase_create("order");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_platform_hosts_file_order);
  tcase_add_test(tc, test_platform_hosts_radical_order);
  tcase_add_test(tc, test_platform_hosts_unscanned_by_name);
  suite_add_tcase(s, tc);

  tc = tcase_create("limits");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_platform_write_rejects);
  tcase_add_test(tc, test_platform_topology_names);
  suite_add_tcase(s, tc);

  tc = tcase_create("cli");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_platform_main_output_file);
  tcase_add_test(tc, test_platform_main_bad_input);
  tcase_add_test(tc, test_platform_main_help);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(platform_suite)

/* check_platform.c - the platform generator, the presets, the pre-check of platform
 * files, hosts in file order, limits and `dtsim platform`. Point-to-point transfers
 * against latency + size/bandwidth are check_platform_p2p.c's. Fork mode: one SimGrid
 * engine per test process. */

#include "check_util.h"
#include "platform_util.h"
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
  ck_assert_str_eq(platform_preset_at(5, &desc), "dgx-h100");
  ck_assert_str_eq(platform_preset_at(6, &desc), "dgx-b200");
  ck_assert_str_eq(platform_preset_at(7, &desc), "gb200-nvl72");
  ck_assert_ptr_null(platform_preset_at(8, &desc));
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

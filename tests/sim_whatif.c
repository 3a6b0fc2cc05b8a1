/* sim_whatif.c - what-if knobs ([platform] bw_factor, lat_factor, speed_factor,
 * topology, host_cores, sharing; dtsim platform --sharing and --*-factor) and the
 * bottleneck reports (links.csv against hand-computed bytes, the compute / communication /
 * exposed-communication breakdown, --trace), each simulation a run of the dtsim binary.
 * SimGrid's link-load plugin against links.csv's count runs in process in check_whatif.c. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli_util.h"

/* Tolerances and bounds, each with where it comes from (u = 2^-53 ~ 1.1e-16; measured:
 * this build). */
/* TOL_RING_S: an 8-rank ring of 1e8 bytes, 14 steps of alpha + bytes / bw (~1.2e-3 s),
 * summed by SimGrid and here: ~14 u 1.2e-3 ~ 2e-18 s (measured: equal). */
#define TOL_RING_S 1e-12
/* TOL_SAME_REL: quantities both sides compute with the same operations, or a division
 * apart: summary.json's formula against the time, speed_factor's halving (measured: equal). */
#define TOL_SAME_REL 1e-12
/* BW2_RATIO_MAX: bw_factor 2 halves the bandwidth term only: the formula's ratio is 0.506. */
#define BW2_RATIO_MAX 0.51
/* TOL_LAT_S: the 1 KiB ring, ~2.6e-5 s and 2.6e-4 s, rounds by ~1e-20 s (measured
 * 2.7e-20). */
#define TOL_LAT_S 1e-15
/* LAT10_RATIO_MIN: lat_factor 10 on a latency-bound ring: the formula's ratio is 9.988. */
#define LAT10_RATIO_MIN 9.9
/* TOL_SHARE_S: a lone 0.084 s transfer against latency + bytes x 1.05 / (0.97 bw) (the
 * LV08 factors): measured within 1e-16 s. */
#define TOL_SHARE_S 1e-9
/* TOL_BREAKDOWN_REL: per-role sums of event durations (and trace events) against closed
 * forms or each other: the same durations added in another order (measured <= 2.5e-14). */
#define TOL_BREAKDOWN_REL 1e-9
/* MIN_HIDDEN_S: DDP's overlap hides 0.024 s of its allreduces here (measured). */
#define MIN_HIDDEN_S 1e-3

/* An 8-rank ring allreduce inside one DGX-2H node (16 GPUs on 150e9 B/s, 0.5 us
 * split-duplex links, CM02: the preset's nominal links, platform.link_efficiency = off):
 * its time is exactly the alpha-beta formula (README, Collectives), which summary.json
 * reports beside it. */
static const char coll_ini[] =
    "[run]\nalgorithm = collective\n[platform]\npreset = dgx2h\nhosts = 16\nlink_efficiency = off\n"
    "[model]\nnumerics = off\n"
    "[collective]\nranks = 8\nbytes = 100000000\n";

/* Sequential SGD: one actor that only computes (no message), so compute-bound. */
static const char sgd_ini[] =
    "[run]\nalgorithm = sgd\nmax_steps = 50\neval_every = 1000\n[model]\nlayers = 16,32,4\n"
    "[data]\ntrain = 1000\ntest = 200\n";

/* The small Downpour run of sim_cli: 4 replicas, 2 shards, 30 steps each. */
static const char downpour_ini[] =
    "[run]\nalgorithm = downpour\nmax_steps = 30\neval_every = 0.002\n[model]\nlayers = 16,32,4\n"
    "[data]\ntrain = 2000\ntest = 500\n[downpour]\nreplicas = 4\nps_shards = 2\n";

static json_t *run_ini(const char *dir, const char *ini, const char *out, const char *const *sets)
{
  cli_write(dir, "base.ini", ini);
  return cli_run_sets(dir, out, sets, NULL);
}

static const json_t *coll_block(const json_t *j)
{
  return json_object_get(j, "collective");
}

static double coll_num(const json_t *j, const char *key)
{
  return json_number_value(json_object_get(coll_block(j), key));
}

static const json_t *role_of(const json_t *j, const char *role)
{
  const json_t *r = json_object_get(json_object_get(j, "breakdown"), role);
  ck_assert_msg(r != NULL, "summary.json has no breakdown for role %s", role);
  return r;
}

static double role_num(const json_t *j, const char *role, const char *key)
{
  return json_number_value(json_object_get(role_of(j, role), key));
}

/* ---- knobs ---------------------------------------------------------------- */

/* bw_factor 2 halves the bandwidth term of the ring, not its latency term: 2(p-1) steps
 * of alpha + (n/p + 64) / bw, alpha = two 0.5 us links. Same bytes on the wire. */
START_TEST(test_whatif_bw_factor)
{
  char *dir = cli_tmpdir();
  const char *none[] = {NULL}, *twice[] = {"platform.bw_factor=2", NULL};
  json_t *a = run_ini(dir, coll_ini, "a", none), *b = run_ini(dir, coll_ini, "b", twice);
  double ta = cli_num(a, "sim_time_s"), tb = cli_num(b, "sim_time_s");
  double p = 8, steps = 2 * (p - 1), chunk = 1e8 / p + 64;
  ck_assert_double_eq_tol(ta, steps * (1e-6 + chunk / 150e9), TOL_RING_S);
  ck_assert_double_eq_tol(tb, steps * (1e-6 + chunk / 300e9), TOL_RING_S);
  ck_assert_msg(tb < BW2_RATIO_MAX * ta, "bw x2: %.17g s against %.17g s", tb, ta);
  ck_assert_double_eq(json_number_value(json_object_get(json_object_get(a, "comm"), "bytes_total")),
                      json_number_value(json_object_get(json_object_get(b, "comm"), "bytes_total")));
  /* the effective factor is recorded with the scenario */
  const json_t *plat = json_object_get(json_object_get(b, "scenario"), "platform");
  ck_assert_str_eq(json_string_value(json_object_get(plat, "bw_factor")), "2");
  ck_assert_double_eq_tol(coll_num(b, "formula_s"), tb, TOL_SAME_REL * tb);
  json_decref(a);
  json_decref(b);
  free(dir);
}
END_TEST

/* A 1 KiB allreduce is latency-bound: lat_factor 10 multiplies alpha by 10. */
START_TEST(test_whatif_lat_factor)
{
  char *dir = cli_tmpdir();
  const char *one[] = {"collective.bytes=1024", NULL};
  const char *ten[] = {"collective.bytes=1024", "platform.lat_factor=10", NULL};
  json_t *a = run_ini(dir, coll_ini, "a", one), *b = run_ini(dir, coll_ini, "b", ten);
  double ta = cli_num(a, "sim_time_s"), tb = cli_num(b, "sim_time_s");
  double steps = 14, chunk = 1024.0 / 8 + 64;
  ck_assert_double_eq_tol(ta, steps * (1e-6 + chunk / 150e9), TOL_LAT_S);
  ck_assert_double_eq_tol(tb, steps * (10e-6 + chunk / 150e9), TOL_LAT_S);
  ck_assert_msg(tb > LAT10_RATIO_MIN * ta, "lat x10: %.17g s against %.17g s", tb, ta);
  json_decref(a);
  json_decref(b);
  free(dir);
}
END_TEST

/* speed_factor 2 halves a compute-only run exactly (tolerance TOL_SAME_REL: one division
 * of the flops) and leaves the numerics alone. */
START_TEST(test_whatif_speed_factor)
{
  char *dir = cli_tmpdir();
  const char *none[] = {NULL}, *twice[] = {"platform.speed_factor=2", NULL};
  json_t *a = run_ini(dir, sgd_ini, "a", none), *b = run_ini(dir, sgd_ini, "b", twice);
  double ta = cli_num(a, "sim_time_s"), tb = cli_num(b, "sim_time_s");
  ck_assert_msg(ta > 0 && fabs(tb - ta / 2) <= TOL_SAME_REL * ta, "speed x2: %.17g s against %.17g s", tb, ta);
  ck_assert_double_eq(cli_num(a, "final_loss"), cli_num(b, "final_loss"));
  ck_assert_double_eq_tol(role_num(b, "sgd", "compute_s"), tb, TOL_SAME_REL * tb);
  json_decref(a);
  json_decref(b);
  free(dir);
}
END_TEST

/* sharing = shared puts a flow's TCP acknowledgements (LV08 cross traffic, weight 0.05)
 * on its own links: a lone 1e8-byte transfer on distbelief-2012's 10 GbE gets bandwidth /
 * 1.05 (0.0879 s against 0.0838 s; platforms/README.md, Network model, works the same
 * on 1 GbE); fatpipe shares nothing, and the flow and its acknowledgements together are
 * still bounded by the link. */
START_TEST(test_whatif_sharing)
{
  char *dir = cli_tmpdir();
  static const char p2p_ini[] =
      "[run]\nalgorithm = collective\n[model]\nnumerics = off\n"
      "[collective]\nranks = 2\nbytes = 100000000\nop = broadcast\n";
  const char *split[] = {NULL}, *shared[] = {"platform.sharing=shared", NULL};
  json_t *a = run_ini(dir, p2p_ini, "a", split), *b = run_ini(dir, p2p_ini, "b", shared);
  double lat = 13.01 * 2 * 50e-6, bytes = 1e8 + 64;
  ck_assert_double_eq_tol(cli_num(a, "sim_time_s"), lat + bytes / (0.97 * 1.25e9), TOL_SHARE_S);
  ck_assert_double_eq_tol(cli_num(b, "sim_time_s"), lat + bytes * 1.05 / (0.97 * 1.25e9), TOL_SHARE_S);
  json_decref(a);
  json_decref(b);
  free(dir);
}
END_TEST

/* topology and host_cores regenerate the preset: distbelief-2012 as a star of 2-core
 * hosts. A star route is 2 links (not 2 or 4 in racks), and 4 cores are then too many. */
START_TEST(test_whatif_generated)
{
  char *dir = cli_tmpdir();
  const char *star[] = {"platform.topology=star", "platform.host_cores=2", NULL};
  json_t *a = run_ini(dir, downpour_ini, "a", star);
  /* the star's backbone is FATPIPE: the busiest link, ranked apart from the shared ones */
  json_t *top = json_object_get(json_object_get(a, "comm"), "top_unshared_links");
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(top, 0), "name")), "host_backbone");
  json_decref(a);
  const char *args[] = {"run",      "base.ini", "--out", "out", "--set", "platform.topology=star", "--set",
                        "platform.host_cores=2", "--set", "platform.cores=4", NULL};
  cli_assert_bad_input(dir, args, "platform.cores: 4 cores asked, but host host-0 has 2");
  free(dir);
}
END_TEST

START_TEST(test_whatif_bad_values)
{
  static const char *const bad[][2] = {
      {"platform.bw_factor=0", "platform.bw_factor=0: must be > 0, got 0"},
      {"platform.lat_factor=-1", "platform.lat_factor=-1: must be > 0, got -1"},
      {"platform.speed_factor=fast", "'fast' is not a number"},
      {"platform.bw_factor=", "platform.bw_factor"},
      {"platform.topology=cube", "'cube' is not a topology"},
      {"platform.sharing=half", "'half' is not a sharing policy"},
      {"platform.host_cores=-2", "platform.host_cores"},
  };
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", sgd_ini);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const char *args[] = {"run", "base.ini", "--out", "out", "--set", bad[i][0], NULL};
    cli_assert_bad_input(dir, args, bad[i][1]);
  }
  cli_write(dir, "file.ini", "[platform]\nfile = x.xml\ntopology = torus\n");
  const char *args[] = {"run", "file.ini", "--out", "out", NULL};
  cli_assert_bad_input(dir, args, "platform.topology: changes a preset's generated platform");
  free(dir);
}
END_TEST

/* dtsim platform --sharing and --*-factor write the changed values into the file. */
START_TEST(test_whatif_platform_cli)
{
  char *dir = cli_tmpdir();
  const char *args[] = {"platform", "--hosts", "4", "--topology", "star", "--sharing", "shared",
                        "--bw-factor", "2", "--lat-factor", "3", "--speed-factor", "0.5", NULL};
  ck_assert_int_eq(cli_run(dir, args), 0);
  char *xml = cli_read(dir, "stdout");
  ck_assert_msg(strstr(xml, "sharing_policy=\"SHARED\"") && strstr(xml, "bw=\"2500000000Bps\"") &&
                    strstr(xml, "lat=\"3e-06s\"") && strstr(xml, "speed=\"500000000f\""),
                "%s", xml);
  free(xml);
  const char *bad[] = {"platform", "--hosts", "4", "--topology", "star", "--bw-factor", "0", NULL};
  ck_assert_int_eq(cli_run(dir, bad), 2);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(cli_lines(err) == 1 && strstr(err, "a factor must be a positive number, not '0'"), "%s", err);
  free(err);
  free(dir);
}
END_TEST

/* ---- links ---------------------------------------------------------------- */

/* A 4-rank ring allreduce of 4e6 bytes on a generated 4-host star: each rank sends
 * 2(p-1) = 6 chunks of 1e6 bytes + a 64-byte header to the next rank, so each host's
 * _UP and _DOWN link carries 6 x 1000064 bytes and the backbone all 4 ranks' 24001536.
 * Utilization is bytes / (1.25e9 B/s x simulated time) (a FATPIPE backbone bounds each
 * flow, not their sum, so it can exceed 1). The backbone, fatpipe, carries the most bytes
 * but heads top_unshared_links, not top_links, which the shared host links lead. */
START_TEST(test_whatif_links_hand)
{
  char *dir = cli_tmpdir();
  const char *gen[] = {"platform", "--hosts", "4", "--topology", "star", "-o", "star.xml", NULL};
  ck_assert_int_eq(cli_run(dir, gen), 0);
  static const char ini[] = "[run]\nalgorithm = collective\n[platform]\nfile = star.xml\n[model]\nnumerics = off\n"
                            "[collective]\nranks = 4\nbytes = 4000000\n";
  const char *none[] = {NULL};
  json_t *j = run_ini(dir, ini, "out", none);
  double t = cli_num(j, "sim_time_s");
  char *csv = cli_read(dir, "out/links.csv"), got[4096], want[4096];
  /* the tier and endpoints: rank h's NIC sends to h + 1 (_UP) and receives from h - 1
   * (_DOWN); the backbone carries everyone's; and where each is on the star dtsim wrote */
  int n = snprintf(want, sizeof want,
                   "link,bytes,utilization,tier,from,to,sharing,where\nhost_backbone,24001536,%.17g,core,host-0..host-3 "
                   "(4 hosts),host-0..host-3 (4 hosts),fatpipe,core\n", 24001536 / (1.25e9 * t));
  for (int h = 0; h < 4; h++)
    for (int up = 0; up < 2; up++)
      n += snprintf(want + n, sizeof want - (size_t)n,
                    "host_link_%d_%s,6000384,%.17g,host,host-%d,host-%d,shared,host-%d NIC %s\n", h, up ? "UP" : "DOWN",
                    6000384 / (1.25e9 * t), up ? h : (h + 3) % 4, up ? (h + 1) % 4 : h, h, up ? "up" : "down");
  /* links.csv without its peak_utilization and peak_at_s columns (the eighth and ninth) */
  size_t m = 0;
  for (const char *p = csv; *p; p += strcspn(p, "\n") + 1)
    for (int c = 0; c < 10; c++) {
      size_t len = strcspn(p, ",\n");
      if (c < 7 || c == 9)
        m += (size_t)snprintf(got + m, sizeof got - m, "%.*s%s", (int)len, p, c == 9 ? "\n" : ",");
      p += len + (c < 9);
    }
  ck_assert_str_eq(got, want);
  ck_assert_double_eq(json_number_value(json_object_get(json_object_get(j, "comm"), "bytes_total")), 24001536);
  const json_t *shared = json_object_get(json_object_get(j, "comm"), "top_links");
  const json_t *unshared = json_object_get(json_object_get(j, "comm"), "top_unshared_links");
  ck_assert_int_eq(json_array_size(shared), 8);
  ck_assert_int_eq(json_array_size(unshared), 1);
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(shared, 0), "sharing")), "shared");
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(unshared, 0), "name")), "host_backbone");
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(unshared, 0), "sharing")), "fatpipe");
  free(csv);
  json_decref(j);
  free(dir);
}
END_TEST

/* ---- breakdown ------------------------------------------------------------ */

/* Megatron tensor ranks (sim_tensor's closed forms: 2 ranks in one DGX-2H node, 4
 * layers, hidden 1024, 4 x 512 tokens, fp16, efficiency 0.5). Per rank: compute =
 * 3 L f / t / (0.5 x 125e12); 4 L ring allreduces of 2(t-1) steps each. Synchronous, all
 * of them are exposed; with the asynchronous input-gradient allreduce the two backward
 * allreduces of each layer hide behind the weight-gradient GEMM, so exactly the 2 L
 * forward ones stay exposed, and the GEMM, which runs beside an allreduce holding NCCL's SMs
 * (platform.comm_sms, the preset's 16 of 80), computes 16/80 of that allreduce longer. */
START_TEST(test_whatif_breakdown_tensor)
{
  char *dir = cli_tmpdir();
  const char *sets[] = {"tensor.ranks=2",   "tensor.hidden=1024",     "tensor.heads=8",
                        "tensor.layers=4",  "tensor.seq=512",         "tensor.microbatch=4",
                        "model.numerics=off", "model.dtype=fp16",     "model.efficiency=0.5",
                        "tensor.async_grad_allreduce=off", NULL};
  /* the flat rate and the nominal links, so that the closed forms hold */
  static const char ini[] = "[run]\nalgorithm = tensor\n[platform]\npreset = dgx2h\nlink_efficiency = off\n"
                            "[model]\nkernel_model = flat\n";
  double t = 2, b = 4, s = 512, h = 1024, L = 4, f = 24 * b * s * h * h + 4 * b * s * s * h;
  double compute = 3 * L * f / t / (0.5 * 125e12), ar = 2 * (t - 1) * (1e-6 + (b * s * h * 2 / t + 64) / 150e9);
  for (int async = 0; async < 2; async++) {
    sets[9] = async ? "tensor.async_grad_allreduce=on" : "tensor.async_grad_allreduce=off";
    json_t *j = run_ini(dir, ini, async ? "async" : "sync", sets);
    ck_assert_int_eq(json_integer_value(json_object_get(role_of(j, "tensor"), "actors")), 2);
    /* asynchronous: NCCL's 16 of 80 SMs, held while each of the 2 L backward allreduces runs beside
     * its weight-gradient GEMM, stretch that GEMM by 16/80 of the allreduce */
    double held = async ? 16.0 / 80 * 2 * L * ar : 0;
    ck_assert_double_eq_tol(role_num(j, "tensor", "compute_s"), compute + held, TOL_BREAKDOWN_REL * compute);
    ck_assert_double_eq_tol(role_num(j, "tensor", "comm_s"), 4 * L * ar, TOL_BREAKDOWN_REL * ar);
    ck_assert_double_eq_tol(role_num(j, "tensor", "exposed_comm_s"), (async ? 2 : 4) * L * ar, TOL_BREAKDOWN_REL * ar);
    json_decref(j);
  }
  free(dir);
}
END_TEST

/* DDP (dataparallel, speech-42m timing, 25 MB buckets): a replica computes, then waits
 * for its reduced gradients; its communicator's allreduces partly overlap backward
 * (comm > exposed), and with overlap off they are all exposed. A replica's compute and
 * comm add up to the run (nothing else blocks it but the step barrier, instantaneous). */
START_TEST(test_whatif_breakdown_dataparallel)
{
  char *dir = cli_tmpdir();
  static const char ini[] = "[run]\nalgorithm = dataparallel\nmax_steps = 3\n[model]\nvirtual = speech-42m\n"
                            "numerics = off\n[dataparallel]\nbucket_mb = 25\n";
  const char *on[] = {NULL}, *off[] = {"dataparallel.overlap=off", NULL};
  json_t *a = run_ini(dir, ini, "on", on), *b = run_ini(dir, ini, "off", off);
  double ta = cli_num(a, "sim_time_s");
  ck_assert_int_eq(json_integer_value(json_object_get(role_of(a, "dp-replica"), "actors")), 4);
  ck_assert_double_eq_tol(role_num(a, "dp-replica", "compute_s") + role_num(a, "dp-replica", "comm_s"), ta,
                          TOL_BREAKDOWN_REL * ta);
  ck_assert_double_eq(role_num(a, "dp-comm", "compute_s"), 0);
  ck_assert_msg(role_num(a, "dp-comm", "exposed_comm_s") < role_num(a, "dp-comm", "comm_s") - MIN_HIDDEN_S,
                "overlap hides nothing: exposed %.17g, comm %.17g", role_num(a, "dp-comm", "exposed_comm_s"),
                role_num(a, "dp-comm", "comm_s"));
  ck_assert_double_eq(role_num(b, "dp-comm", "exposed_comm_s"), role_num(b, "dp-comm", "comm_s"));
  json_decref(a);
  json_decref(b);
  free(dir);
}
END_TEST

/* Downpour: roles and actor counts, breakdown.csv's header and one row per actor, and
 * byte-identical breakdown.csv and summary.json across runs, also with two threads. */
START_TEST(test_whatif_breakdown_determinism)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", downpour_ini);
  const char *none[] = {NULL};
  json_t *a = cli_run_sets(dir, "a", none, NULL);
  json_decref(cli_run_sets(dir, "b", none, NULL));
  json_decref(cli_run_sets(dir, "c", none, "--cfg=contexts/nthreads:2"));
  ck_assert_int_eq(json_integer_value(json_object_get(role_of(a, "replica"), "actors")), 4);
  ck_assert_int_eq(json_integer_value(json_object_get(role_of(a, "ps"), "actors")), 2);
  ck_assert_msg(role_num(a, "replica", "compute_s") > 0 && role_num(a, "replica", "comm_s") > 0, "replica times");
  char *csv = cli_read(dir, "a/breakdown.csv");
  ck_assert_msg(strncmp(csv, "actor,role,host,compute_s,comm_s,exposed_comm_s\nps-0,ps,host-4,", 63) == 0, "%s", csv);
  ck_assert_int_eq(cli_lines(csv), 7);
  static const char *files[] = {"summary.json", "breakdown.csv", "links.csv"};
  for (int i = 0; i < 3; i++) {
    char pa[64], pb[64];
    snprintf(pa, sizeof pa, "a/%s", files[i]);
    for (int k = 0; k < 2; k++) {
      snprintf(pb, sizeof pb, "%s/%s", k ? "c" : "b", files[i]);
      char *x = cli_read(dir, pa), *y = cli_read(dir, pb);
      ck_assert_msg(x && y && strcmp(x, y) == 0, "%s differs from %s", pa, pb);
      free(x);
      free(y);
    }
  }
  free(csv);
  json_decref(a);
  free(dir);
}
END_TEST

/* --trace: trace.json is valid JSON in Chrome's trace-event format, byte-identical across
 * runs and with two threads, and leaves the other result files as they are without it.
 * The tensor run of the breakdown test (synchronous): per rank, the compute events add
 * up to compute_s and the wait events to comm_s; every message is one send event, whose
 * bytes add up to comm.bytes_total; events are named by what the rank was doing (layer,
 * pass, microbatch, collective); every send starts a flow arrow that ends, once, where
 * the other rank takes the message, no earlier. */
/* The trace's flow events: one start and one end per message sent (a synchronous run takes
 * every message), each end no earlier than its start and on another actor's thread. */
static void assert_flows_paired(json_t *starts, json_t *ends, size_t sends)
{
  ck_assert_int_eq(json_object_size(starts), sends);
  ck_assert_int_eq(json_object_size(ends), sends);
  const char *id;
  json_t *s;
  json_object_foreach(starts, id, s)
  {
    json_t *f = json_object_get(ends, id);
    ck_assert_msg(f != NULL, "flow %s never ends", id);
    ck_assert(json_number_value(json_object_get(f, "ts")) >= json_number_value(json_object_get(s, "ts")));
    ck_assert(json_integer_value(json_object_get(f, "tid")) != json_integer_value(json_object_get(s, "tid")));
  }
}

START_TEST(test_whatif_trace)
{
  char *dir = cli_tmpdir();
  static const char ini[] = "[run]\nalgorithm = tensor\n[platform]\npreset = dgx2h\n";
  const char *sets[] = {"tensor.ranks=2", "tensor.hidden=1024", "tensor.heads=8", "tensor.layers=4",
                        "tensor.seq=512", "tensor.microbatch=4", "model.numerics=off", "model.dtype=fp16",
                        "model.efficiency=0.5", NULL};
  json_t *plain = run_ini(dir, ini, "plain", sets);
  json_decref(plain);
  json_decref(cli_run_sets(dir, "a", sets, "--trace"));
  json_t *j = cli_run_sets(dir, "b", sets, "--trace");
  const char *two[32] = {"run", "base.ini", "--quiet", "--out", "c", "--trace", "--cfg=contexts/nthreads:2"};
  size_t n = 7;
  for (size_t k = 0; sets[k]; k++) {
    two[n++] = "--set";
    two[n++] = sets[k];
  }
  two[n] = NULL;
  json_decref(cli_summary(dir, two, "c"));
  char *ta = cli_read(dir, "a/trace.json"), *tb = cli_read(dir, "b/trace.json");
  ck_assert_msg(ta && tb && strcmp(ta, tb) == 0, "trace.json differs between runs");
  char *sp = cli_read(dir, "plain/summary.json"), *sa = cli_read(dir, "a/summary.json");
  ck_assert_str_eq(sp, sa);
  ck_assert(!cli_exists(dir, "plain/trace.json"));
  json_error_t je;
  json_t *tr = json_loads(ta, 0, &je);
  ck_assert_msg(tr != NULL, "trace.json: %s (line %d)", je.text, je.line);
  double compute[2] = {0, 0}, wait[2] = {0, 0}, bytes = 0;
  size_t i, sends = 0, named[3] = {0, 0, 0};
  json_t *e, *starts = json_object(), *ends = json_object();
  json_array_foreach(json_object_get(tr, "traceEvents"), i, e)
  {
    const char *name = json_string_value(json_object_get(e, "name"));
    const char *cat = json_string_value(json_object_get(e, "cat"));
    const char *ph = json_string_value(json_object_get(e, "ph"));
    size_t tid = (size_t)json_integer_value(json_object_get(e, "tid"));
    double dur = json_number_value(json_object_get(e, "dur")) * 1e-6;
    if (cat == NULL) /* the process and thread names */
      continue;
    if (strcmp(cat, "compute") == 0)
      compute[tid] += dur;
    else if (strcmp(cat, "wait") == 0)
      wait[tid] += dur;
    else if (strcmp(cat, "send") == 0) {
      bytes += json_number_value(json_object_get(json_object_get(e, "args"), "bytes"));
      sends++;
    } else if (strcmp(cat, "flow") == 0) {
      const char *id = json_string_value(json_object_get(e, "id"));
      json_t *side = strcmp(ph, "s") == 0 ? starts : ends;
      ck_assert_msg(id && json_object_get(side, id) == NULL, "flow %s: two '%s' events", id, ph);
      json_object_set(side, id, e);
    }
    named[0] += strstr(name, "forward layer ") != NULL && strcmp(cat, "compute") == 0;
    named[1] += strstr(name, "backward layer ") != NULL && strcmp(cat, "compute") == 0;
    named[2] += strstr(name, "mb 0: forward layer 0: allreduce ring") == name && strcmp(cat, "wait") == 0;
  }
  ck_assert_msg(named[0] > 0 && named[1] > 0 && named[2] > 0, "unnamed events: %zu forward, %zu backward, %zu allreduce",
                named[0], named[1], named[2]);
  assert_flows_paired(starts, ends, sends);
  json_decref(starts);
  json_decref(ends);
  for (int r = 0; r < 2; r++) {
    ck_assert_double_eq_tol(compute[r], role_num(j, "tensor", "compute_s"), TOL_BREAKDOWN_REL * compute[r]);
    ck_assert_double_eq_tol(wait[r], role_num(j, "tensor", "comm_s"), TOL_BREAKDOWN_REL * wait[r]);
  }
  ck_assert_double_eq(bytes, json_number_value(json_object_get(json_object_get(j, "comm"), "bytes_total")));
  char *tc = cli_read(dir, "c/trace.json");
  ck_assert_str_eq(ta, tc);
  free(tc);
  json_decref(tr);
  json_decref(j);
  free(ta);
  free(tb);
  free(sp);
  free(sa);
  free(dir);
}
END_TEST

/* Every algorithm's trace names what its compute events are (the names an actor pushes with
 * account_label_push): no "compute" event goes unnamed. Sequential SGD, Sandblaster's
 * replicas and shards, consensus's agents, Downpour's replicas. */
START_TEST(test_whatif_trace_names)
{
  static const char *const cases[][3] = {
      {"sgd", "step 0: compute gradient", "step 1: update"},
      {"sandblaster", "portion 0", "L-BFGS command"},
      {"consensus", "round 0: subgradient", "round 1: mix and step"},
      {"downpour", "compute gradient", "apply gradient of client"},
  };
  char *dir = cli_tmpdir();
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    char alg[64];
    snprintf(alg, sizeof alg, "run.algorithm=%s", cases[k][0]);
    const char *args[] = {"run", "--set", alg, "--set", "run.max_steps=3", "--trace", "--quiet", "--out", cases[k][0],
                          NULL};
    ck_assert_int_eq(cli_run(dir, args), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/trace.json", cases[k][0]);
    char *text = cli_read(dir, path);
    json_error_t je;
    json_t *tr = json_loads(text, 0, &je);
    ck_assert_msg(tr != NULL, "%s: %s", path, je.text);
    size_t i, unnamed = 0, found[2] = {0, 0};
    json_t *e;
    json_array_foreach(json_object_get(tr, "traceEvents"), i, e)
    {
      const char *name = json_string_value(json_object_get(e, "name"));
      const char *cat = json_string_value(json_object_get(e, "cat"));
      if (cat == NULL || strcmp(cat, "compute") != 0)
        continue;
      unnamed += name == NULL || strcmp(name, "compute") == 0 || name[0] == '\0';
      for (int f = 0; f < 2; f++)
        found[f] += name && strstr(name, cases[k][1 + f]) != NULL;
    }
    ck_assert_msg(unnamed == 0 && found[0] > 0 && found[1] > 0, "%s: %zu unnamed compute events; '%s' %zu, '%s' %zu",
                  cases[k][0], unnamed, cases[k][1], found[0], cases[k][2], found[1]);
    json_decref(tr);
    free(text);
  }
  free(dir);
}
END_TEST

static Suite *whatif_suite(void)
{
  Suite *s = suite_create("whatif");
  TCase *tc = tcase_create("knobs");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_whatif_bw_factor);
  tcase_add_test(tc, test_whatif_lat_factor);
  tcase_add_test(tc, test_whatif_speed_factor);
  tcase_add_test(tc, test_whatif_sharing);
  tcase_add_test(tc, test_whatif_generated);
  tcase_add_test(tc, test_whatif_bad_values);
  tcase_add_test(tc, test_whatif_platform_cli);
  suite_add_tcase(s, tc);
  tc = tcase_create("links");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_whatif_links_hand);
  suite_add_tcase(s, tc);
  tc = tcase_create("breakdown");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_whatif_breakdown_tensor);
  tcase_add_test(tc, test_whatif_breakdown_dataparallel);
  tcase_add_test(tc, test_whatif_breakdown_determinism);
  tcase_add_test(tc, test_whatif_trace);
  tcase_add_test(tc, test_whatif_trace_names);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(whatif_suite)

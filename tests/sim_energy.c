/* sim_energy.c - a run's energy through SimGrid's energy plugins (sim/energy.c), each
 * simulation a run of the dtsim binary: a small run's joules worked out by hand from the
 * plugins' power figures and its timeline (platform, split, fabric, PUE, emissions, a power
 * cap), mirrored pipeline replicas against the full simulation, byte-identical repeats on
 * one and two threads, the refusals, model.dtype's peak on a GPU that lists its peaks, and
 * platform.power's figures for a preset without any. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli_util.h"

/* TOL_J_REL: joules summed by the plugin over a handful of intervals (~1e-2 s at ~1e2 W)
 * and by hand here: a few ulps of each (measured: within 3e-16 relative). */
#define TOL_J_REL 1e-12
/* TOL_MIRROR_REL: the mirrored and the full pipeline add the same device joules in another
 * order (measured: within 4e-15 relative on 8 devices). */
#define TOL_MIRROR_REL 1e-12

/* A ring allreduce of 1e6 bytes over the two hosts of tests/data/energy_pair.xml (1e9 flop/s
 * at 100 W idle and 200 W flat out; one 1e8 B/s link each way at 10 W idle and 30 W busy;
 * CM02, no latency), adding each received element at 8 flops. */
static const char pair_ini[] =
    "[run]\nalgorithm = collective\n[platform]\nfile = " TEST_DATA_DIR "/energy_pair.xml\n"
    "[model]\nnumerics = off\n[collective]\nranks = 2\nbytes = 1000000\nreduce_flops = 8\n";

/* 3D parallelism on one DGX H100 node: 2 stages x 2 tensor ranks x 2 replicas, one step. */
static const char gpt_ini[] =
    "[run]\nalgorithm = pipeline\nmax_steps = 1\n[platform]\npreset = dgx-h100\n"
    "[model]\nnumerics = off\ndtype = bf16\nefficiency = 0.75\n"
    "[pipeline]\nmodel = transformer\nstages = 2\nmicrobatches = 4\nschedule = 1f1b\n"
    "[tensor]\nranks = 2\ndata_parallel = 2\nhidden = 1024\nheads = 16\nlayers = 4\nseq = 512\nmicrobatch = 2\n"
    "vocab = 0\n";

static json_t *run_ini(const char *dir, const char *ini, const char *out, const char *const *sets)
{
  cli_write(dir, "base.ini", ini);
  return cli_run_sets(dir, out, sets, NULL);
}

static double energy_num(const json_t *j, const char *group, const char *key)
{
  const json_t *e = json_object_get(j, "energy");
  ck_assert_msg(e != NULL, "summary.json has no energy block");
  const json_t *g = group ? json_object_get(e, group) : e;
  return json_number_value(json_object_get(g, key));
}

static void assert_rel(double got, double want, double tol, const char *what)
{
  ck_assert_msg(fabs(got - want) <= tol * fabs(want), "%s: %.17g, want %.17g", what, got, want);
}

/* energy.csv's row of a host: its five numbers. */
static void csv_row(const char *dir, const char *out, const char *host, double v[5])
{
  char path[64];
  snprintf(path, sizeof path, "%s/energy.csv", out);
  char *csv = cli_read(dir, path), *p = csv ? strstr(csv, host) : NULL;
  ck_assert_msg(p != NULL, "%s has no row for %s", path, host);
  ck_assert_int_eq(sscanf(p + strlen(host), ",%lf,%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3], &v[4]), 5);
  free(csv);
}

/* The run by hand (trace.json's timeline): each member sends its half, 5e5 bytes + the 64-byte
 * header, at 1e8 B/s: 5.00064 ms; adds the 125,000 elements it received, 1e6 flops at 1e9
 * flop/s: 1 ms; sends its reduced half: 5.00064 ms. T = 11.00128 ms.
 * A host: 1 ms computing at 200 W = 0.2 J, 10.00128 ms waiting for messages at its idle
 * 100 W (nothing executes on it) = 1.000128 J; 1.200128 J, 109.09 W on average.
 * A link: 10.00128 ms carrying a flow at its full rate, 30 W = 0.3000384 J, and 1 ms idle at
 * 10 W = 0.01 J: 0.3100384 J; the two, 0.6200768 J. IT: 2 x 1.200128 + 0.6200768 = 3.0203328 J.
 * PUE 1.2: facility 3.62439936 J = 1.0067776e-6 kWh; at 400 g/kWh, 4.0271104e-7 kg. */
START_TEST(test_energy_by_hand)
{
  char *dir = cli_tmpdir();
  const char *sets[] = {"platform.pue=1.2", "platform.carbon_intensity=400", NULL};
  json_t *j = run_ini(dir, pair_ini, "out", sets);
  double t = 11.00128e-3, host = 0.2 + 1.000128, net = 2 * (0.3000384 + 0.01), it = 2 * host + net;
  assert_rel(cli_num(j, "sim_time_s"), t, TOL_J_REL, "sim_time_s");
  assert_rel(energy_num(j, "joules", "compute"), 2 * 0.2, TOL_J_REL, "compute");
  assert_rel(energy_num(j, "joules", "comm"), 2 * 1.000128, TOL_J_REL, "comm");
  ck_assert_double_eq(energy_num(j, "joules", "idle"), 0);
  assert_rel(energy_num(j, "joules", "devices"), 2 * host, TOL_J_REL, "devices");
  assert_rel(energy_num(j, "joules", "network"), net, TOL_J_REL, "network");
  assert_rel(energy_num(j, "joules", "facility"), 1.2 * it, TOL_J_REL, "facility");
  assert_rel(energy_num(j, "avg_power_w", "per_device"), host / t, TOL_J_REL, "avg W per device");
  assert_rel(energy_num(j, NULL, "facility_kwh"), 1.2 * it / 3.6e6, TOL_J_REL, "kWh");
  assert_rel(energy_num(j, NULL, "co2e_kg"), 1.2 * it / 3.6e6 * 400 / 1e3, TOL_J_REL, "co2e");
  ck_assert_double_eq(energy_num(j, NULL, "gpu_power_limit_w"), 700);
  double v[5];
  csv_row(dir, "out", "h1", v);
  assert_rel(v[0], 0.2, TOL_J_REL, "h1 compute");
  assert_rel(v[1], 1.000128, TOL_J_REL, "h1 comm");
  assert_rel(v[3], host, TOL_J_REL, "h1 total");
  char *stdout_text = cli_read(dir, "stdout");
  ck_assert_msg(stdout_text == NULL || stdout_text[0] == '\0', "--quiet printed: %s", stdout_text);
  free(stdout_text);
  json_decref(j);
  free(dir);
}
END_TEST

/* platform.power_cap = 600 W: the hosts' highest state at most 600 W is their second (GPU
 * limit 500 W), 0.5e9 flop/s at 90 W idle and 150 W flat out. By hand: the additions take
 * 2 ms at 150 W = 0.3 J, the two transfers 10.00128 ms at 90 W = 0.9001152 J; T = 12.00128 ms.
 * The links: 10.00128 ms at 30 W + 2 ms at 10 W = 0.3200384 J each. A cap below the lowest
 * limit, and a cap on a platform without power states, are refused before the run. */
START_TEST(test_energy_power_cap)
{
  char *dir = cli_tmpdir();
  const char *sets[] = {"platform.power_cap=600", NULL};
  json_t *j = run_ini(dir, pair_ini, "good", sets);
  assert_rel(cli_num(j, "sim_time_s"), 12.00128e-3, TOL_J_REL, "sim_time_s");
  assert_rel(energy_num(j, "joules", "compute"), 2 * 0.3, TOL_J_REL, "compute");
  assert_rel(energy_num(j, "joules", "comm"), 2 * 0.9001152, TOL_J_REL, "comm");
  assert_rel(energy_num(j, "joules", "network"), 2 * 0.3200384, TOL_J_REL, "network");
  ck_assert_double_eq(energy_num(j, NULL, "gpu_power_limit_w"), 500);
  ck_assert_double_eq(energy_num(j, NULL, "power_cap_w"), 600);
  json_decref(j);
  const char *low[] = {"run", "base.ini", "--out", "out", "--set", "platform.power_cap=400", NULL};
  cli_assert_bad_input(dir, low, "400 W is below host h0's lowest GPU power limit (500 W)");
  const char *none[] = {"run", "base.ini", "--out", "out", "--set", "platform.file=", "--set", "platform.preset=selene",
                        "--set", "platform.power_cap=300", NULL};
  cli_assert_bad_input(dir, none, "platform.power_cap: the platform carries no power states");
  free(dir);
}
END_TEST

/* pipeline.mirror_replicas = on simulates replica 0 only and gives each mirror its twin's
 * joules: the same devices', compute's, communication's and idle joules as the full
 * simulation, within TOL_MIRROR_REL. */
START_TEST(test_energy_mirrors)
{
  char *dir = cli_tmpdir();
  const char *on[] = {"pipeline.mirror_replicas=on", NULL}, *off[] = {"pipeline.mirror_replicas=off", NULL};
  json_t *a = run_ini(dir, gpt_ini, "a", on), *b = run_ini(dir, gpt_ini, "b", off);
  static const char *const keys[] = {"compute", "comm", "idle", "devices", "network"};
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
    assert_rel(energy_num(a, "joules", keys[i]), energy_num(b, "joules", keys[i]), TOL_MIRROR_REL, keys[i]);
  ck_assert_double_gt(energy_num(b, "joules", "idle"), 0); /* the pipeline's bubble */
  ck_assert_int_eq((int)energy_num(a, NULL, "devices"), 8);
  json_decref(a);
  json_decref(b);
  free(dir);
}
END_TEST

/* The same run twice, the second on two SimGrid threads: byte-identical results, energy
 * included (a DDP replica and its communicator share each host: two actors starting
 * executions on one host, which the plugin updates). */
START_TEST(test_energy_deterministic)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "dp.ini",
            "[run]\nalgorithm = dataparallel\nmax_steps = 5\neval_every = 1000\n[platform]\npreset = dgx-h100\n"
            "hosts = 16\n[model]\nlayers = 64,256,256,10\nvirtual = speech-42m\nnumerics = off\ndtype = bf16\n"
            "[data]\ntrain = 2000\ntest = 200\n[dataparallel]\nreplicas = 16\n");
  const char *a1[] = {"run", "dp.ini", "--quiet", "--out", "t1", NULL};
  const char *a2[] = {"run", "dp.ini", "--quiet", "--out", "t2", "--cfg=contexts/nthreads:2", NULL};
  json_decref(cli_summary(dir, a1, "t1"));
  json_decref(cli_summary(dir, a2, "t2"));
  static const char *const files[] = {"summary.json", "energy.csv", "breakdown.csv"};
  cli_assert_same_files(dir, "t1", "t2", files, 3);
  free(dir);
}
END_TEST

/* model.dtype on a GPU that lists its peaks: fp8 computes at the H100's fp8 peak (the
 * performance block's peak is 1979 Tflop/s, twice bf16's), a datatype a GPU lacks is refused
 * in one line, and platforms without power figures write no energy block or energy.csv. */
START_TEST(test_energy_dtype_and_absence)
{
  char *dir = cli_tmpdir();
  const char *fp8[] = {"model.dtype=fp8", NULL};
  json_t *j = run_ini(dir, gpt_ini, "good", fp8);
  ck_assert_double_eq(json_number_value(json_object_get(json_object_get(j, "performance"), "peak_tflops_per_device")),
                      1979);
  json_decref(j);
  const char *sel[] = {"run", "base.ini", "--out", "out", "--set", "platform.preset=selene", "--set", "model.dtype=fp8",
                       NULL};
  cli_assert_bad_input(dir, sel, "model.dtype = fp8: host gpu-0 lists no fp8 peak");
  const char *plain[] = {"platform.preset=selene", NULL};
  j = run_ini(dir, gpt_ini, "sel", plain);
  ck_assert_ptr_null(json_object_get(j, "energy"));
  ck_assert_msg(!cli_exists(dir, "sel/energy.csv"), "energy.csv written without power figures");
  json_decref(j);
  free(dir);
}
END_TEST

/* platform.power gives a preset the figures `dtsim platform --power` writes: selene with DGX
 * A100's (energy.md) runs as the same file made by the command does, byte for byte; its fifth
 * figure is the GPU's idle power (each state's host idle and busy W written "50:400,50:300,...",
 * the rest of the node having no share here); a platform.file with it, and a lowest limit at or
 * under the idle power (a state that would not compute), are refused in one line. */
START_TEST(test_energy_preset_power)
{
  char *dir = cli_tmpdir();
  const char *gen[] = {"platform", "selene", "--hosts", "8", "--power", "400,100,812.5,140", "-o", "sel.xml", NULL};
  ck_assert_int_eq(cli_run(dir, gen), 0);
  const char *key[] = {"platform.preset=selene", "platform.power=400,100,812.5,140", NULL};
  const char *file[] = {"platform.file=sel.xml", NULL};
  json_t *a = run_ini(dir, gpt_ini, "key", key), *b = run_ini(dir, gpt_ini, "file", file);
  ck_assert_double_eq(energy_num(a, NULL, "gpu_power_limit_w"), 400);
  ck_assert_double_eq(energy_num(a, "joules", "devices"), energy_num(b, "joules", "devices"));
  static const char *const files[] = {"energy.csv", "breakdown.csv"};
  cli_assert_same_files(dir, "key", "file", files, 2);
  json_decref(a);
  json_decref(b);
  const char *idle[] = {"platform", "selene", "--hosts", "8", "--power", "400,100,400,0,50", "-o", "idle.xml", NULL};
  ck_assert_int_eq(cli_run(dir, idle), 0);
  char *xml = cli_read(dir, "idle.xml");
  ck_assert_ptr_nonnull(strstr(xml, "\"wattage_per_state\" value=\"50:400,50:300,50:200,50:100\""));
  free(xml);
  const char *both[] = {"run", "base.ini", "--out", "out", "--set", "platform.file=sel.xml", "--set",
                        "platform.power=400,100,400", NULL};
  cli_assert_bad_input(dir, both, "platform.power: changes a preset's generated platform");
  const char *low[] = {"run", "base.ini", "--out", "out", "--set", "platform.preset=selene", "--set",
                       "platform.power=400,40,400", NULL};
  cli_assert_bad_input(dir, low, "is not MAX,MIN,NODE[,FABRIC[,IDLE]] in W");
  free(dir);
}
END_TEST

static Suite *energy_suite(void)
{
  Suite *s = suite_create("energy");
  TCase *tc = tcase_create("plugin");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_energy_by_hand);
  tcase_add_test(tc, test_energy_power_cap);
  suite_add_tcase(s, tc);
  tc = tcase_create("pipeline");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_energy_mirrors);
  tcase_add_test(tc, test_energy_dtype_and_absence);
  tcase_add_test(tc, test_energy_preset_power);
  suite_add_tcase(s, tc);
  tc = tcase_create("determinism");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_energy_deterministic);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(energy_suite)

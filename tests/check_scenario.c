/* check_scenario.c - the scenario module: defaults, INI parsing, --set overrides, the
 * key reference. Its error messages and validation are check_scenario_validate.c's. */

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algorithms/downpour.h"
#include "algorithms/sgd.h"
#include "sim/scenario.h"
#include "check_util.h"
#include "scenario_util.h"

/* Every field of the common sections compared explicitly, so a field without a key
 * (never written by scenario_defaults or scenario_set) makes two differently pre-filled
 * structs differ; the algorithms' sections compared key by key. */
static int scenario_equal(const scenario *a, const scenario *b)
{
#define STR_EQ(f) (strcmp(a->f, b->f) == 0)
#define NUM_EQ(f) (a->f == b->f)
  int common = STR_EQ(run.algorithm) && NUM_EQ(run.seed) && NUM_EQ(run.max_sim_time) && NUM_EQ(run.max_steps) &&
               NUM_EQ(run.target_accuracy) && NUM_EQ(run.eval_every) && NUM_EQ(run.collectives) && STR_EQ(platform.preset) &&
               STR_EQ(platform.file) && NUM_EQ(platform.hosts) && STR_EQ(platform.placement) &&
               NUM_EQ(platform.cores) && NUM_EQ(platform.jitter) && NUM_EQ(platform.msg_overhead) &&
               NUM_EQ(platform.msg_byte_overhead) && NUM_EQ(platform.msg_cores) &&
               STR_EQ(model.type) && STR_EQ(model.layers) && STR_EQ(model.activation) && STR_EQ(model.virtual_net) &&
               NUM_EQ(model.numerics) && NUM_EQ(model.efficiency) && STR_EQ(model.dtype) && NUM_EQ(model.warm_steps) &&
               NUM_EQ(model.warm_batch) && NUM_EQ(model.warm_lr) && STR_EQ(data.source) && NUM_EQ(data.train) &&
               NUM_EQ(data.test) && NUM_EQ(data.test_fraction) && NUM_EQ(data.teacher_hidden) &&
               NUM_EQ(data.input_decay) && NUM_EQ(data.separation) && STR_EQ(faults.stragglers) && NUM_EQ(platform.bw_factor) &&
               NUM_EQ(platform.lat_factor) && NUM_EQ(platform.speed_factor) && STR_EQ(platform.gen_topology) &&
               NUM_EQ(platform.host_cores) && STR_EQ(platform.sharing) && STR_EQ(faults.host_failures) &&
               STR_EQ(faults.link_failures) && STR_EQ(faults.link_degrade) && NUM_EQ(faults.wait_timeout) &&
               NUM_EQ(faults.checkpoint_interval) && NUM_EQ(faults.checkpoint_bw);
#undef STR_EQ
#undef NUM_EQ
  for (size_t i = 0; common && i < scenario_key_count(); i++) {
    char va[SCENARIO_STR + 64], vb[SCENARIO_STR + 64];
    scenario_key_at(a, i, NULL, NULL, va, sizeof va, NULL, NULL, NULL);
    scenario_key_at(b, i, NULL, NULL, vb, sizeof vb, NULL, NULL, NULL);
    common = strcmp(va, vb) == 0;
  }
  return common;
}

/* Each algorithm's section, as its descriptor's key table fills it. */
#define SGD(s) ((const sgd_params *)algorithm_params(&(s), &sgd_algorithm))
#define DP(s) ((const downpour_params *)algorithm_params(&(s), &downpour_algorithm))

/* Keys in all: the common sections' and every registered algorithm's. */
#define N_FIELDS 189 /* 123 (tensor.steps became an old name of run.max_steps) + model.kernel_model,
                        * platform.link_efficiency, run.collectives, platform.speed_spread, data.label_noise,
                        * data.stream, downpour.ps_placement, sandblaster.partitions, sandblaster.ps_placement,
                        * tensor.fuse_layers, platform.comm_sms, pipeline.mirror_replicas,
                        * downpour.comm_quantum, dataparallel.zero and dataparallel.optimizer,
                        * dataparallel's compress, compress_ratio, compress_momentum, compress_warmup,
                        * compress_levels, compress_rank and local_steps, and pipeline.zero; + the 15 keys
                        * of [moe]; + downpour's compress, compress_ratio, compress_momentum, compress_warmup
                        * and compress_levels; + data.input_decay; + platform.msg_cores; + platform.uplink_routing,
                        * downpour.ps_bank and sandblaster.ps_bank; + run.noise_scale_examples; + run.link_windows; + platform.pue,
                        * platform.carbon_intensity and platform.power_cap; + platform.power; + pipeline's
                        * zero_gather, zero_persistence, zero_prefetch, zero_host, zero_latency and zero_reduce;
                        * + model.framework and tensor.comm_hbm; + tensor.rng_pinned; + platform.msg_thread;
                        * + run.curvature_examples; + platform.msg_byte_overhead */

static const char *key_value(const scenario *s, const char *section, const char *key, char *buf,
                             size_t len)
{
  for (size_t i = 0; i < scenario_key_count(); i++) {
    const char *sec, *k;
    scenario_key_at(s, i, &sec, &k, buf, len, NULL, NULL, NULL);
    if (strcmp(sec, section) == 0 && strcmp(k, key) == 0)
      return buf;
  }
  return NULL;
}

/* ---------- defaults ---------- */

START_TEST(test_scenario_defaults_valid)
{
  scenario s;
  char err[ERRLEN] = "";
  scenario_defaults(&s);
  ck_assert_msg(scenario_validate(&s, NULL, err, sizeof err) == 0, "%s", err);
  /* The documented defaults (sim/README.md, Key reference), which are the built-in
   * scenario's (8 simulated seconds, evaluated every 0.25 s;
   * test_scenario_default_ini_is_defaults). */
  ck_assert_str_eq(s.run.algorithm, "downpour");
  ck_assert_uint_eq(s.run.seed, 1);
  ck_assert_int_eq(s.run.collectives, 0); /* messages */
  ck_assert_double_eq(s.run.max_sim_time, 8);
  ck_assert_int_eq(s.run.max_steps, 0);
  ck_assert_double_eq(s.run.target_accuracy, 0);
  ck_assert_double_eq(s.run.eval_every, 0.25);
  ck_assert_str_eq(s.platform.preset, "distbelief-2012");
  ck_assert_str_eq(s.platform.file, "");
  ck_assert_str_eq(s.platform.placement, "packed");
  ck_assert_str_eq(s.model.type, "mlp");
  ck_assert_str_eq(s.model.layers, "32,64,10");
  ck_assert_str_eq(s.model.activation, "tanh");
  ck_assert_str_eq(s.model.virtual_net, "");
  ck_assert_int_eq(s.model.numerics, 1);
  ck_assert_double_eq(s.model.efficiency, 1);
  ck_assert_str_eq(s.model.dtype, "fp32");
  ck_assert_str_eq(s.model.framework, ""); /* no framework host unless asked */
  ck_assert_str_eq(s.data.source, "synthetic-teacher");
  ck_assert_int_eq(s.data.train, 20000);
  ck_assert_int_eq(s.data.test, 5000);
  ck_assert_double_eq(s.data.test_fraction, 0.2);
  ck_assert_int_eq(SGD(s)->batch, 32);
  ck_assert_double_eq(SGD(s)->lr, 0.05);
  ck_assert_int_eq(DP(s)->replicas, 20);
  ck_assert_int_eq(DP(s)->ps_shards, 10);
  ck_assert_int_eq(DP(s)->adagrad, 1);
  ck_assert_double_eq(DP(s)->adagrad_gamma, 0.1);
  ck_assert_int_eq(DP(s)->overlap, 0);
  ck_assert_int_eq(DP(s)->partitions, 1);
  ck_assert_double_eq(s.platform.bw_factor, 1); /* what-if knobs: the platform as it is */
  ck_assert_double_eq(s.platform.lat_factor, 1);
  ck_assert_double_eq(s.platform.speed_factor, 1);
  ck_assert_str_eq(s.platform.gen_topology, "");
  ck_assert_int_eq(s.platform.host_cores, 0);
  ck_assert_str_eq(s.platform.sharing, "");
}
END_TEST

START_TEST(test_scenario_defaults_cover_every_field)
{
  scenario a, b;
  memset(&a, 0x00, sizeof a);
  memset(&b, 0xA5, sizeof b);
  scenario_defaults(&a);
  scenario_defaults(&b);
  ck_assert(scenario_equal(&a, &b));
  ck_assert_uint_eq(scenario_key_count(), N_FIELDS);
}
END_TEST

START_TEST(test_scenario_default_ini_valid)
{
  scenario s;
  char err[ERRLEN] = "";
  scenario_defaults(&s);
  ck_assert_msg(scenario_load_string(&s, scenario_default_ini, "<default>", err, sizeof err) == 0,
                "%s", err);
  ck_assert_msg(scenario_validate(&s, "<default>", err, sizeof err) == 0, "%s", err);
  ck_assert_str_eq(s.run.algorithm, "downpour");
  ck_assert_int_eq(DP(s)->replicas, 20);
  ck_assert_int_eq(DP(s)->adagrad, 1);
  ck_assert_str_eq(s.platform.preset, "distbelief-2012");
  ck_assert_str_eq(s.model.type, "mlp");
  ck_assert_str_eq(s.data.source, "synthetic-teacher");
}
END_TEST

/* An empty scenario file is the built-in scenario: every value the built-in one sets is
 * its key's default, so `dtsim run empty.ini` and `dtsim` run the same thing. */
START_TEST(test_scenario_default_ini_is_defaults)
{
  scenario d, b;
  char err[ERRLEN] = "";
  scenario_defaults(&d);
  scenario_defaults(&b);
  ck_assert_msg(scenario_load_string(&b, scenario_default_ini, "<default>", err, sizeof err) == 0, "%s", err);
  for (size_t i = 0; i < scenario_key_count(); i++) {
    const char *sec, *key;
    char vd[SCENARIO_STR + 64], vb[SCENARIO_STR + 64];
    scenario_key_at(&d, i, &sec, &key, vd, sizeof vd, NULL, NULL, NULL);
    scenario_key_at(&b, i, NULL, NULL, vb, sizeof vb, NULL, NULL, NULL);
    ck_assert_msg(strcmp(vd, vb) == 0, "%s.%s: the built-in scenario sets %s, its default is %s", sec, key, vb, vd);
  }
  ck_assert(scenario_equal(&d, &b));
}
END_TEST

/* ---------- parse ---------- */

static const char every_section[] =
    "; every section, values away from the defaults\n"
    "[run]\n"
    "algorithm = sgd\n"
    "seed = 18446744073709551615\n"
    "max_sim_time = 12.5\n"
    "max_steps = 700\n"
    "target_accuracy = 0.9\n"
    "eval_every = 0.5\n"
    "\n"
    "[platform]\n"
    "file = plat/my cluster.xml\n"
    "hosts = 33\n"
    "placement = spread\n"
    "cores = 4\n"
    "[model]\n"
    "type = softmax\n"
    "layers = 784, 10\n"
    "activation = relu\n"
    "virtual = speech-42m\n"
    "numerics = off\n"
    "efficiency = 0.5\n"
    "dtype = bf16\n"
    "[data]\n"
    "source = libsvm:data/a9a.txt\n"
    "train = 100\n"
    "test = 50\n"
    "test_fraction = 0.1\n"
    "teacher_hidden = 7\n"
    "separation = 2.5\n"
    "[sgd]\n"
    "batch = 8\n"
    "lr = 1e-3\n"
    "[downpour]\n"
    "replicas = 3\n"
    "ps_shards = 2\n"
    "n_fetch = 5\n"
    "n_push = 6\n"
    "batch = 16\n"
    "lr = 0.25\n"
    "adagrad = no\n"
    "adagrad_gamma = 0.125\n"
    "warmstart_steps = 40\n"
    "overlap = TRUE\n";

START_TEST(test_scenario_parse_every_section)
{
  scenario s;
  char err[ERRLEN] = "", path[64];
  scenario_defaults(&s);
  ck_assert_msg(load_temp(&s, every_section, path, sizeof path, err) == 0, "%s", err);
  /* values away from the defaults include a target accuracy in a timing-only run, which
   * could only end target_not_reached */
  ck_assert_int_eq(scenario_validate(&s, path, err, sizeof err), -1);
  ck_assert_msg(strstr(err, "run.target_accuracy: a timing-only run") != NULL, "%s", err);
  s.run.target_accuracy = 0;
  ck_assert_msg(scenario_validate(&s, path, err, sizeof err) == 0, "%s", err);
  s.run.target_accuracy = 0.9;
  ck_assert_str_eq(s.run.algorithm, "sgd");
  ck_assert_uint_eq(s.run.seed, UINT64_MAX);
  ck_assert_double_eq(s.run.max_sim_time, 12.5);
  ck_assert_int_eq(s.run.max_steps, 700);
  ck_assert_double_eq(s.run.target_accuracy, 0.9);
  ck_assert_double_eq(s.run.eval_every, 0.5);
  ck_assert_str_eq(s.platform.preset, ""); /* setting file empties the preset */
  /* relative paths are the scenario file's folder's (load_temp writes it in /tmp) */
  char want[256];
  snprintf(want, sizeof want, "%.*splat/my cluster.xml", (int)(strrchr(path, '/') - path + 1), path);
  ck_assert_str_eq(s.platform.file, want);
  ck_assert_int_eq(s.platform.hosts, 33);
  ck_assert_str_eq(s.platform.placement, "spread");
  ck_assert_int_eq(s.platform.cores, 4);
  ck_assert_str_eq(s.model.type, "softmax");
  ck_assert_str_eq(s.model.layers, "784, 10");
  ck_assert_str_eq(s.model.activation, "relu");
  ck_assert_str_eq(s.model.virtual_net, "speech-42m");
  ck_assert_int_eq(s.model.numerics, 0);
  ck_assert_double_eq(s.model.efficiency, 0.5);
  ck_assert_str_eq(s.model.dtype, "bf16");
  snprintf(want, sizeof want, "libsvm:%.*sdata/a9a.txt", (int)(strrchr(path, '/') - path + 1), path);
  ck_assert_str_eq(s.data.source, want);
  ck_assert_int_eq(s.data.train, 100);
  ck_assert_int_eq(s.data.test, 50);
  ck_assert_double_eq(s.data.test_fraction, 0.1);
  ck_assert_int_eq(s.data.teacher_hidden, 7);
  ck_assert_double_eq(s.data.separation, 2.5);
  ck_assert_int_eq(SGD(s)->batch, 8);
  ck_assert_double_eq(SGD(s)->lr, 1e-3);
  ck_assert_int_eq(DP(s)->replicas, 3);
  ck_assert_int_eq(DP(s)->ps_shards, 2);
  ck_assert_int_eq(DP(s)->n_fetch, 5);
  ck_assert_int_eq(DP(s)->n_push, 6);
  ck_assert_int_eq(DP(s)->batch, 16);
  ck_assert_double_eq(DP(s)->lr, 0.25);
  ck_assert_int_eq(DP(s)->adagrad, 0);
  ck_assert_double_eq(DP(s)->adagrad_gamma, 0.125);
  ck_assert_int_eq(DP(s)->warmstart_steps, 40);
  ck_assert_int_eq(DP(s)->overlap, 1);
}
END_TEST

/* Comments, blanks, indentation, CRLF and a byte order mark: the syntax users get. */
START_TEST(test_scenario_parse_syntax)
{
  scenario s;
  char err[ERRLEN] = "";
  const char *text = "\xEF\xBB\xBF; leading comment\r\n"
                     "# hash comment\r\n"
                     "  [ downpour ]   ; section comment\r\n"
                     "\tlr = 0.1 ; inline comment\r\n"
                     "    adagrad_gamma = 0.2 # hash inline comment\r\n"
                     "  replicas: 7\r\n"
                     "\r\n"
                     "[model]\n"
                     "layers = 1;2\n"      /* ';' without a blank before it is data */
                     "virtual = none\n"; /* "none" means empty */
  scenario_defaults(&s);
  ck_assert_msg(scenario_load_string(&s, text, "t.ini", err, sizeof err) != 0, "accepted 1;2");
  ck_assert_msg(strstr(err, "t.ini:9: model.layers") != NULL, "%s", err);
  scenario_defaults(&s);
  const char *good = "\xEF\xBB\xBF; leading comment\r\n"
                     "# hash comment\r\n"
                     "  [ downpour ]   ; section comment\r\n"
                     "\tlr = 0.1 ; inline comment\r\n"
                     "    adagrad_gamma = 0.2 # hash inline comment\r\n"
                     "  replicas: 7\r\n"
                     "[model]\n"
                     "virtual = none";  /* no final newline */
  ck_assert_msg(scenario_load_string(&s, good, "t.ini", err, sizeof err) == 0, "%s", err);
  ck_assert_double_eq(DP(s)->lr, 0.1);
  ck_assert_double_eq(DP(s)->adagrad_gamma, 0.2);
  ck_assert_int_eq(DP(s)->replicas, 7);
  ck_assert_str_eq(s.model.virtual_net, "");
  /* An empty file and a file of comments change nothing. */
  scenario d;
  scenario_defaults(&d);
  scenario_defaults(&s);
  ck_assert_int_eq(scenario_load_string(&s, "", "e.ini", err, sizeof err), 0);
  ck_assert_int_eq(scenario_load_string(&s, "; nothing\n\n# here\n", "e.ini", err, sizeof err), 0);
  ck_assert(scenario_equal(&s, &d));
}
END_TEST

/* A later file is read over an earlier one's values (a file only sets what it names). */
START_TEST(test_scenario_parse_over_values)
{
  scenario s;
  char err[ERRLEN] = "";
  scenario_defaults(&s);
  ck_assert_int_eq(scenario_load_string(&s, "[sgd]\nlr = 0.5\n", "a.ini", err, sizeof err), 0);
  ck_assert_int_eq(scenario_load_string(&s, "[sgd]\nbatch = 2\n", "b.ini", err, sizeof err), 0);
  ck_assert_double_eq(SGD(s)->lr, 0.5);
  ck_assert_int_eq(SGD(s)->batch, 2);
}
END_TEST

/* ---------- set ---------- */

START_TEST(test_scenario_set_overrides)
{
  scenario s;
  char err[ERRLEN] = "", path[64];
  scenario_defaults(&s);
  ck_assert_int_eq(load_temp(&s, "[downpour]\nlr = 0.3\nreplicas = 4\nadagrad = off\n", path, sizeof path, err), 0);
  ck_assert_msg(scenario_set(&s, "downpour.lr=0.01", err, sizeof err) == 0, "%s", err);
  ck_assert_msg(scenario_set(&s, "\n downpour . replicas = 9 \r\n", err, sizeof err) == 0, "%s", err);
  ck_assert_msg(scenario_set(&s, "data.source=csv:x=y.csv", err, sizeof err) == 0, "%s", err);
  ck_assert_msg(scenario_set(&s, "model.virtual=none", err, sizeof err) == 0, "%s", err);
  ck_assert_msg(scenario_set(&s, "downpour.overlap=yes", err, sizeof err) == 0, "%s", err);
  ck_assert_double_eq(DP(s)->lr, 0.01);
  ck_assert_int_eq(DP(s)->replicas, 9);
  ck_assert_str_eq(s.data.source, "csv:x=y.csv");
  ck_assert_str_eq(s.model.virtual_net, "");
  ck_assert_int_eq(DP(s)->overlap, 1);
  /* A platform is a preset or a file: naming one empties the other. */
  ck_assert_int_eq(scenario_set(&s, "platform.file=my.xml", err, sizeof err), 0);
  ck_assert_str_eq(s.platform.preset, "");
  ck_assert_int_eq(scenario_validate(&s, "x.ini", err, sizeof err), 0);
  ck_assert_int_eq(scenario_set(&s, "platform.preset=distbelief-2012", err, sizeof err), 0);
  ck_assert_str_eq(s.platform.file, "");
}
END_TEST

START_TEST(test_scenario_set_bad_forms)
{
  scenario s, before;
  char err[ERRLEN] = "";
  static const struct {
    const char *assignment, *expect;
  } bad[] = {
      {"foo", "--set foo: expected SECTION.KEY=VALUE"},
      /* found by fuzz_set: the messages quoted the newline (two lines on stderr) */
      {"model.layers=3,\n1", "--set model.layers=3,...: a newline cannot be part of SECTION.KEY=VALUE"},
      {" run.seed=1\n2", "--set run.seed=1...: a newline"},
      {"faults.scers=0r\n", "--set faults.scers=0r: unknown key 'scers' in section [faults]"},
      {"run.seed", "--set run.seed: expected SECTION.KEY=VALUE"},
      {".x=1", "--set .x=1: expected SECTION.KEY=VALUE, the section is empty"},
      {"run.=1", "the key is empty"},
      {"seed=1", "no '.'"},
      {"run.nokey=1", "--set run.nokey=1: unknown key 'nokey' in section [run]"},
      {"runn.seed=1", "unknown section [runn]; did you mean [run]?"},
      {"downpour.lr=x", "--set downpour.lr=x: 'x' is not a number"},
      {"downpour.lr=-1", "--set downpour.lr=-1: must be > 0, got -1"},
      {"downpour.lr=", "--set downpour.lr=: a number is required"},
      {"downpour.replica=3", "did you mean 'replicas'?"},
      {"run.lr=3", "unknown key 'lr' in section [run]; it belongs in [sgd]"},
      {"run.seed=-1", "'-1' is not an integer"},
      {"run.seed=18446744073709551616", "out of range"},
      {"run.max_steps=1.5", "'1.5' is not an integer"},
      {"run.max_steps=99999999999999999999", "out of range"},
      {"run.max_sim_time=inf", "'inf' is not a finite number"},
      {"run.max_sim_time=nan", "'nan' is not a finite number"},
      {"run.max_sim_time=1e999", "out of range"},
      {"run.algorithm=adam", "'adam' is not one of: sgd, downpour"},
      {"model.numerics=maybe", "'maybe' is not on or off"},
      {"model.dtype=fp64", "'fp64' is not one of: fp32, fp16, bf16"},
      {"model.virtual=speech-43m", "unknown virtual network 'speech-43m'"},
      {"platform.preset=nowhere", "unknown preset 'nowhere'"},
      {"model.layers=64,,10", "is not a comma-separated list"},
      {"model.layers=64,0,10", "is not a comma-separated list"},
      {"model.layers=64", "has 1 size"},
      {"data.source=libsvm:", "needs a file name"},
      {"data.source=mnist", "is not a data source"},
  };
  scenario_defaults(&s);
  before = s;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = '\0';
    ck_assert_msg(scenario_set(&s, bad[i].assignment, err, sizeof err) == -1, "accepted %s",
                  bad[i].assignment);
    ck_assert_msg(strstr(err, bad[i].expect) != NULL, "%s: got \"%s\", want \"%s\"",
                  bad[i].assignment, err, bad[i].expect);
    ck_assert_msg(strchr(err, '\n') == NULL, "multi-line message: %s", err);
  }
  ck_assert_msg(scenario_equal(&s, &before), "a failed --set changed the scenario");
}
END_TEST

/* Every key's formatted value sets back to the same struct. */
START_TEST(test_scenario_set_round_trip)
{
  scenario a, b;
  char err[ERRLEN] = "", path[64];
  scenario_defaults(&a);
  ck_assert_int_eq(load_temp(&a, every_section, path, sizeof path, err), 0);
  a.run.max_sim_time = 0.1 + 0.2; /* a double whose shortest form needs 17 digits */
  DPW(a)->lr = 1.0 / 3.0;
  a.run.seed = 12345678901234567890ULL;
  for (int pass = 0; pass < 2; pass++) {
    memset(&b, pass ? 0xFF : 0x00, sizeof b);
    scenario_defaults(&b);
    for (size_t i = 0; i < scenario_key_count(); i++) {
      const char *sec, *key;
      char value[SCENARIO_STR + 64], assignment[SCENARIO_STR + 160];
      scenario_key_at(&a, i, &sec, &key, value, sizeof value, NULL, NULL, NULL);
      snprintf(assignment, sizeof assignment, "%s.%s=%s", sec, key, value);
      ck_assert_msg(scenario_set(&b, assignment, err, sizeof err) == 0, "%s", err);
    }
    ck_assert(scenario_equal(&a, &b));
  }
  /* Short values stay short. */
  char buf[64];
  scenario_defaults(&a);
  ck_assert_str_eq(key_value(&a, "sgd", "lr", buf, sizeof buf), "0.05");
  ck_assert_str_eq(key_value(&a, "model", "numerics", buf, sizeof buf), "on");
  ck_assert_str_eq(key_value(&a, "run", "max_sim_time", buf, sizeof buf), "8");
}
END_TEST

/* ---------- reference ---------- */

START_TEST(test_scenario_reference_table)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert_ptr_nonnull(f);
  scenario_print_reference(f);
  fclose(f);
  ck_assert_ptr_nonnull(strstr(buf, "| key | default | unit | meaning |"));
  size_t rows = 0;
  for (const char *p = buf; (p = strstr(p, "\n| `")) != NULL; p++)
    rows++;
  ck_assert_uint_eq(rows, scenario_key_count());
  for (size_t i = 0; i < scenario_key_count(); i++) {
    const char *sec, *key, *def, *unit, *doc;
    char name[128];
    scenario_key_at(NULL, i, &sec, &key, NULL, 0, &def, &unit, &doc);
    snprintf(name, sizeof name, "| `%s.%s` |", sec, key);
    ck_assert_msg(strstr(buf, name) != NULL, "missing %s", name);
    ck_assert_msg(doc && *doc, "%s.%s has no documentation", sec, key);
    ck_assert_ptr_nonnull(def);
    ck_assert_ptr_nonnull(unit);
  }
  ck_assert_ptr_nonnull(strstr(buf, "| `downpour.lr` | `0.05` |"));
  ck_assert_ptr_nonnull(
      strstr(buf, "One of: `sgd`, `downpour`, `consensus`, `sandblaster`, `collective`, `dataparallel`, `tensor`, "
                  "`pipeline`, `moe`."));
  ck_assert_ptr_nonnull(strstr(buf, "Range: in (0, 1]."));
  free(buf);
}
END_TEST

Suite *scenario_suite(void)
{
  Suite *s = suite_create("scenario");
  TCase *tc = tcase_create("defaults");
  tcase_add_test(tc, test_scenario_defaults_valid);
  tcase_add_test(tc, test_scenario_defaults_cover_every_field);
  tcase_add_test(tc, test_scenario_default_ini_valid);
  tcase_add_test(tc, test_scenario_default_ini_is_defaults);
  suite_add_tcase(s, tc);
  tc = tcase_create("parse");
  tcase_add_test(tc, test_scenario_parse_every_section);
  tcase_add_test(tc, test_scenario_parse_syntax);
  tcase_add_test(tc, test_scenario_parse_over_values);
  suite_add_tcase(s, tc);
  tc = tcase_create("set");
  tcase_add_test(tc, test_scenario_set_overrides);
  tcase_add_test(tc, test_scenario_set_bad_forms);
  tcase_add_test(tc, test_scenario_set_round_trip);
  suite_add_tcase(s, tc);
  tc = tcase_create("reference");
  tcase_add_test(tc, test_scenario_reference_table);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(scenario_suite)

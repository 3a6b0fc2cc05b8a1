/* sim_ps_bank.c - the parameter-server bank (downpour.ps_bank) end to end: against the exact
 * model on the same platform (pooled uplinks) within its measured bound, timing and numerics,
 * whole and split replicas; the shards' traffic the same bytes through one link; auto's
 * choice; what it refuses. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli_util.h"

static const char base_ini[] =
    "[run]\nmax_sim_time = 3600\neval_every = 100\n"
    "[platform]\npreset = distbelief-2012\nuplink_routing = pooled\nspeed_spread = 0.1\n"
    "[model]\nnumerics = off\nvirtual = speech-42m\nefficiency = 0.25\n"
    "[downpour]\nbatch = 512\noverlap = on\nps_placement = spread\n";

/* BANK_TOL: the bank's largest error against exact on the same platform in the error table
 * of algorithms/doc/downpour.md (Bank): +6.7e-5 in step time at 20-200 replicas; 1e-3 leaves
 * room for other seeds yet fails a bank without its summed capacity (checked: one shard
 * host's link and cores for the bank gives +335% here). */
#define BANK_TOL 1e-3
/* BANK_STALENESS_TOL: mean staleness, same table: at most 0.03% apart (-0.01% at 50, -0.03%
 * at 100). */
#define BANK_STALENESS_TOL 3e-3

static double block_num(const json_t *j, const char *block, const char *key)
{
  return json_number_value(json_object_get(json_object_get(j, block), key));
}

static void assert_close(const char *what, double bank, double exact, double tol)
{
  ck_assert_msg(fabs(bank - exact) <= tol * fabs(exact), "%s: bank %.17g against exact %.17g (tolerance %g)", what,
                bank, exact, tol);
}

/* The bytes of link `name` in OUT/links.csv, or -1. */
static double link_bytes(const char *dir, const char *out, const char *name)
{
  char sub[512];
  snprintf(sub, sizeof sub, "%s/%s", dir, out);
  char *csv = cli_read(sub, "links.csv");
  ck_assert_msg(csv != NULL, "no %s/links.csv", sub);
  size_t n = strlen(name);
  double bytes = -1;
  for (char *line = csv; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
    if (strncmp(line, name, n) == 0 && line[n] == ',') {
      bytes = strtod(line + n + 1, NULL);
      break;
    }
  free(csv);
  return bytes;
}

START_TEST(test_bank_timing_equals_exact)
{
  /* Fig. 4's Downpour-Adagrad at 50 replicas and 7 shards, timing only, 20 steps each. */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *exact[] = {"downpour.replicas=50", "downpour.ps_shards=7", "run.max_steps=20",
                         "downpour.ps_bank=exact", NULL};
  const char *bank[] = {"downpour.replicas=50", "downpour.ps_shards=7", "run.max_steps=20",
                        "downpour.ps_bank=bank", NULL};
  json_t *e = cli_run_sets(dir, "exact", exact, NULL), *b = cli_run_sets(dir, "bank", bank, NULL);
  ck_assert_int_eq((long)cli_num(b, "steps"), 50 * 20);
  assert_close("step time", block_num(b, "performance", "step_time_s"), block_num(e, "performance", "step_time_s"),
               BANK_TOL);
  assert_close("throughput", block_num(b, "performance", "examples_per_s"),
               block_num(e, "performance", "examples_per_s"), BANK_TOL);
  assert_close("simulated time", cli_num(b, "sim_time_s"), cli_num(e, "sim_time_s"), BANK_TOL);
  assert_close("mean staleness", block_num(b, "staleness", "mean"), block_num(e, "staleness", "mean"),
               BANK_STALENESS_TOL);
  const char *q[] = {"p50", "p99", "max"}; /* the histogram's quantiles, to the update */
  for (size_t i = 0; i < 3; i++)
    ck_assert_msg(fabs(block_num(b, "staleness", q[i]) - block_num(e, "staleness", q[i])) <= 1,
                  "staleness %s: bank %g, exact %g", q[i], block_num(b, "staleness", q[i]),
                  block_num(e, "staleness", q[i]));
  /* the same bytes: a replica's own link, and the shards' links summed in the bank's */
  assert_close("replica 0's link", link_bytes(dir, "bank", "host-rack0_link_0_DOWN"),
               link_bytes(dir, "exact", "host-rack0_link_0_DOWN"), BANK_TOL);
  double shards = 0;
  const char *shard_links[] = {"host-rack0_link_7_UP",  "host-rack0_link_15_UP", "host-rack1_link_23_UP",
                               "host-rack1_link_31_UP", "host-rack1_link_39_UP", "host-rack2_link_47_UP",
                               "host-rack2_link_56_UP"};
  for (size_t i = 0; i < 7; i++) {
    double x = link_bytes(dir, "exact", shard_links[i]);
    ck_assert_msg(x > 0, "no traffic on shard link %s", shard_links[i]);
    shards += x;
  }
  assert_close("the shards' links, summed", link_bytes(dir, "bank", "bank_link_0_UP"), shards, BANK_TOL);
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(b, "downpour"), "ps_bank")), "bank");
  ck_assert_ptr_null(json_object_get(e, "downpour")); /* exact runs report as before */
  json_decref(e);
  json_decref(b);
  free(dir);
}
END_TEST

/* SPLIT_BANK_TOL: the bank's largest error against exact with split replicas in the second
 * error table of algorithms/doc/downpour.md (Bank, split replicas): -0.23% in step time at 50
 * replicas of 8 partitions, +0.16% in this smaller case; 5e-3 leaves room for other seeds yet
 * fails a bank made wrong on purpose (checked here: one shard host's link and cores for the
 * bank gives +643% of step time; one loop serving every shard's updates in turn, without its
 * lanes, +1.9%). */
#define SPLIT_BANK_TOL 5e-3

START_TEST(test_bank_split_replicas)
{
  /* Fig. 4's Downpour-Adagrad without overlap on 16 replicas each split over 8 machines, 8
   * shards, timing only, batches of 64 so that the shards' updates weigh, 10 steps each: each
   * machine's parts for the shards it talks to go to the bank as one message, and the step
   * time, throughput and staleness stay within SPLIT_BANK_TOL of exact; the machines' links
   * carry the same bytes (but for the done messages: one to the bank, one per shard in exact),
   * and the shards' links together what the bank's one carries. */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  const char *exact[] = {"downpour.replicas=16", "downpour.partitions=8", "downpour.overlap=off",
                         "downpour.ps_shards=8", "downpour.batch=64", "run.max_steps=10",
                         "downpour.ps_bank=exact", NULL};
  const char *bank[] = {"downpour.replicas=16", "downpour.partitions=8", "downpour.overlap=off",
                        "downpour.ps_shards=8", "downpour.batch=64", "run.max_steps=10", "downpour.ps_bank=bank", NULL};
  json_t *e = cli_run_sets(dir, "exact", exact, NULL), *b = cli_run_sets(dir, "bank", bank, NULL);
  ck_assert_int_eq((long)cli_num(b, "steps"), 16 * 10);
  assert_close("step time", block_num(b, "performance", "step_time_s"), block_num(e, "performance", "step_time_s"),
               SPLIT_BANK_TOL);
  assert_close("throughput", block_num(b, "performance", "examples_per_s"),
               block_num(e, "performance", "examples_per_s"), SPLIT_BANK_TOL);
  assert_close("mean staleness", block_num(b, "staleness", "mean"), block_num(e, "staleness", "mean"),
               SPLIT_BANK_TOL);
  const char *machine[] = {"host-rack0_link_0_DOWN", "host-rack0_link_1_UP", "host-rack1_link_31_UP"};
  for (size_t i = 0; i < 3; i++)
    assert_close(machine[i], link_bytes(dir, "bank", machine[i]), link_bytes(dir, "exact", machine[i]), BANK_TOL);
  /* the shards' hosts with spread placement (ps_place_shard), idle beside the bank */
  const char *shard_links[] = {"host-rack0_link_16_UP", "host-rack1_link_33_UP",  "host-rack2_link_50_UP",
                               "host-rack3_link_67_UP", "host-rack4_link_84_UP",  "host-rack5_link_101_UP",
                               "host-rack5_link_118_UP", "host-rack6_link_135_UP"};
  double shards = 0;
  for (size_t i = 0; i < 8; i++) {
    double x = link_bytes(dir, "exact", shard_links[i]);
    double idle = link_bytes(dir, "bank", shard_links[i]); /* an idle link is not listed: -1 */
    ck_assert_msg(x > 0 && idle <= 0, "shard link %s: %g bytes exact, %g bank", shard_links[i], x, idle);
    shards += x;
  }
  assert_close("the shards' links, summed", link_bytes(dir, "bank", "bank_link_0_UP"), shards, BANK_TOL);
  json_decref(e);
  json_decref(b);
  free(dir);
}
END_TEST

/* The accuracy column of OUT/progress.csv (sim_time_s,step,loss,accuracy) into acc[0..max). */
static size_t accuracies(const char *dir, const char *out, double *acc, size_t max)
{
  char sub[512];
  snprintf(sub, sizeof sub, "%s/%s", dir, out);
  char *csv = cli_read(sub, "progress.csv");
  ck_assert_msg(csv != NULL, "no %s/progress.csv", sub);
  size_t n = 0;
  char *save = NULL;
  strtok_r(csv, "\n", &save); /* the header */
  for (char *l; n < max && (l = strtok_r(NULL, "\n", &save)) != NULL;)
    acc[n++] = strtod(strrchr(l, ',') + 1, NULL);
  free(csv);
  return n;
}

/* TEST_EXAMPLES: data.test's default; an accuracy p over it has standard error
 * sqrt(p (1 - p) / TEST_EXAMPLES), the bound of each evaluation below. */
#define TEST_EXAMPLES 5000

START_TEST(test_bank_numerics_equal_exact)
{
  /* With numerics on, each shard applies the same pushes, each in arrival order: the
   * held-out curve is the exact one within the test set's standard error (the default
   * scenario: its arrivals move by microseconds, its evaluations by a few steps). */
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", "[run]\nmax_sim_time = 3\neval_every = 0.25\n[platform]\nuplink_routing = pooled\n");
  const char *exact[] = {"downpour.ps_bank=exact", NULL}, *bank[] = {"downpour.ps_bank=bank", NULL};
  json_t *e = cli_run_sets(dir, "exact", exact, NULL), *b = cli_run_sets(dir, "bank", bank, NULL);
  double ae[64], ab[64];
  size_t ne = accuracies(dir, "exact", ae, 64), nb = accuracies(dir, "bank", ab, 64);
  ck_assert_msg(ne == nb && ne >= 10, "%zu evaluations exact, %zu bank", ne, nb);
  for (size_t i = 0; i < ne; i++) {
    double se = sqrt(ae[i] * (1 - ae[i]) / TEST_EXAMPLES);
    ck_assert_msg(fabs(ab[i] - ae[i]) <= se, "evaluation %zu: accuracy %g bank, %g exact (standard error %g)", i,
                  ab[i], ae[i], se);
  }
  json_decref(e);
  json_decref(b);
  free(dir);
}
END_TEST

START_TEST(test_bank_auto_and_refusals)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  /* auto: the bank from 100 replicas up on a platform that takes it, said on stderr */
  const char *big[] = {"run", "base.ini", "--out", "auto", "--set", "downpour.replicas=100", "--set",
                       "downpour.ps_shards=13", "--set", "run.max_steps=2", NULL};
  json_t *a = cli_summary(dir, big, "auto");
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(strstr(err, "downpour.ps_bank = auto: 100 replicas >= 100") != NULL, "stderr: %s", err);
  ck_assert_int_eq((long)block_num(a, "downpour", "bank_hosts"), 1);
  free(err);
  json_decref(a);
  /* the same rule for 100 split replicas */
  const char *split[] = {"run", "base.ini", "--out", "split", "--set", "downpour.replicas=100", "--set",
                         "downpour.partitions=2", "--set", "downpour.overlap=off", "--set", "downpour.ps_shards=13",
                         "--set", "run.max_steps=2", NULL};
  json_t *sp = cli_summary(dir, split, "split");
  err = cli_read(dir, "stderr");
  ck_assert_msg(strstr(err, "downpour.ps_bank = auto: 100 replicas >= 100") != NULL, "stderr: %s", err);
  ck_assert_int_eq((long)block_num(sp, "downpour", "bank_hosts"), 1);
  free(err);
  json_decref(sp);
  /* auto below 100 replicas, or on SimGrid's FAT_TREE: exact, silently */
  const char *dmodk[] = {"run", "base.ini", "--out", "dmodk", "--set", "downpour.replicas=100", "--set",
                         "downpour.ps_shards=13", "--set", "run.max_steps=2", "--set", "platform.uplink_routing=dmodk", NULL};
  json_t *d = cli_summary(dir, dmodk, "dmodk");
  ck_assert_ptr_null(json_object_get(d, "downpour"));
  json_decref(d);
  /* asked for where it cannot run: one line, exit 2, nothing written */
  const char *on_dmodk[] = {"run", "base.ini", "--out", "out", "--set", "downpour.ps_bank=bank", "--set",
                            "platform.uplink_routing=dmodk", NULL};
  cli_assert_bad_input(dir, on_dmodk, "set platform.uplink_routing = pooled");
  const char *faulty[] = {"run", "base.ini", "--out", "out", "--set", "downpour.ps_bank=bank", "--set",
                          "faults.host_failures=host-1@1", NULL};
  cli_assert_bad_input(dir, faulty, "downpour.ps_bank");
  const char *compressed[] = {"run", "base.ini", "--out", "out", "--set", "downpour.ps_bank=bank", "--set",
                              "downpour.compress=topk", NULL};
  cli_assert_bad_input(dir, compressed, "downpour.ps_bank");
  const char *file[] = {"run", "--out", "out", "--set", "platform.file=../../nope.xml", "--set",
                        "platform.uplink_routing=pooled", NULL};
  cli_assert_bad_input(dir, file, "platform.uplink_routing");
  free(dir);
}
END_TEST

static Suite *ps_bank_suite(void)
{
  Suite *s = suite_create("ps_bank");
  TCase *tc = tcase_create("bank");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_bank_timing_equals_exact);
  tcase_add_test(tc, test_bank_split_replicas);
  tcase_add_test(tc, test_bank_numerics_equal_exact);
  tcase_add_test(tc, test_bank_auto_and_refusals);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(ps_bank_suite)

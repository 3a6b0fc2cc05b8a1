/* sim_guards.c - what is checked before a simulation starts, so that a run is never
 * wasted nor ends in an abort: the platform pre-check (hosts of no speed, unroutable
 * pairs, links of no bandwidth), SimGrid options named when refused. Each bad input
 * must end with exit status 2, one line on stderr and no result folder. */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_util.h"
#include "cli_util.h"

/* Runs dtsim with args in a fresh folder; checks exit 2, one line holding every one of
 * the NULL-terminated needles, no result folder, and that the line names no temporary
 * file of dtsim's own. */
static void bad_input(const char *const *args, const char *const *needles)
{
  char *dir = cli_tmpdir();
  cli_assert_bad_input(dir, args, needles[0]);
  char *err = cli_read(dir, "stderr");
  for (size_t i = 1; needles[i]; i++)
    ck_assert_msg(strstr(err, needles[i]) != NULL, "stderr lacks '%s': %s", needles[i], err);
  ck_assert_msg(strstr(err, "/tmp/dtsim-") == NULL, "the message blames a temporary file: %s", err);
  free(err);
  free(dir);
}

START_TEST(test_guards_host_speed_zero)
{
  /* dataparallel computes on both hosts; host "dead" has 0 flop/s */
  const char *args[] = {"run", "--set", "run.algorithm=dataparallel", "--set", "dataparallel.replicas=2",
                        "--set", "platform.file=" TEST_DATA_DIR "/platform-speed0.xml", "--set", "run.max_steps=2",
                        "--out", "out", NULL};
  const char *needles[] = {"platform-speed0.xml", "host dead", "speed of 0", NULL};
  bad_input(args, needles);
}
END_TEST

START_TEST(test_guards_no_route)
{
  const char *args[] = {"run", "--set", "run.algorithm=collective", "--set", "collective.ranks=3",
                        "--set", "platform.file=" TEST_DATA_DIR "/platform-noroute.xml", "--out", "out", NULL};
  const char *needles[] = {"platform-noroute.xml", "no route from host h0 to host h2", NULL};
  bad_input(args, needles);
}
END_TEST

/* Platforms SimGrid's authors wrote, which SimGrid loads and runs messages on: the
 * pre-check once asked for their routes before SimGrid had sealed the platform and
 * refused them ("No route from 'AS_grenoble' to 'AS_bordeaux'", "unordered_map::at"). */
START_TEST(test_guards_simgrid_platforms_run)
{
  static const char *const files[] = {"g5k.xml", "meta_cluster.xml", "vivaldi.xml", "bypassRoute.xml"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    char *dir = cli_tmpdir();
    char set[512];
    snprintf(set, sizeof set, "platform.file=" TEST_DATA_DIR "/simgrid/%s", files[i]);
    const char *args[] = {"run", "--set", "run.algorithm=collective", "--set", "collective.ranks=4", "--set",
                          "collective.bytes=1024", "--set", "platform.placement=spread", "--set", set, "--quiet",
                          "--out", "out", NULL};
    int rc = cli_run(dir, args);
    char *err = cli_read(dir, "stderr");
    ck_assert_msg(rc == 0 && cli_exists(dir, "out/summary.json"), "%s: exit %d: %s", files[i], rc, err);
    /* the formula from the route between members 0 and 1, or none (null) where that route has
     * no link to read a bandwidth from (Vivaldi's coordinates): never a negative time */
    char *sum = cli_read(dir, "out/summary.json"), f[64] = "";
    ck_assert(cli_json_field(sum, "formula_s", f, sizeof f) == 0);
    ck_assert_msg(strcmp(f, "null") == 0 ? strcmp(files[i], "vivaldi.xml") == 0 : atof(f) > 0, "%s: formula_s %s",
                  files[i], f);
    free(sum);
    free(err);
    free(dir);
  }
  /* a zone without routing: SimGrid aborts on any route; refused in words, not a raw abort */
  const char *none[] = {"run", "--set", "run.algorithm=collective", "--set", "collective.ranks=2", "--set",
                        "platform.file=" TEST_DATA_DIR "/simgrid/small_platform_routing_none.xml", "--out", "out", NULL};
  const char *needles[] = {"SimGrid cannot route between the hosts the run uses", "Empty zone", NULL};
  bad_input(none, needles);
}
END_TEST

/* What SimGrid loads but dtsim's actors would not survive: a host or link the file turns off
 * mid-run (a state profile: SimGrid kills the host's actors or throws out of a transfer, and
 * the run aborted with exit 134 or ended "ok" with 0 steps) and WiFi links, whose stations'
 * rates only a program sets (SimGrid aborted at the first message): refused before the run,
 * the host or link named. An ns-3 platform runs, and ends without ns-3's crash at exit. */
START_TEST(test_guards_simgrid_hazards)
{
  static const char *const cases[][3] = {
      {"simgrid/two_hosts_profiles.xml", "host Cpu A has a state profile", "faults.host_failures"},
      {"simgrid/two_hosts_platform_with_availability_included.xml", "host Cpu A has a state profile",
       "faults.host_failures"},
      {"platform-linkstate.xml", "link flaky-link on the route from host h0 to host h1 has a state profile",
       "faults.link_failures"},
      {"simgrid/wifi.xml", "link AP1 on the route from host Station 1 to host Station 2 is a WIFI link",
       "set_host_rate"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char set[512];
    snprintf(set, sizeof set, "platform.file=" TEST_DATA_DIR "/%s", cases[i][0]);
    const char *args[] = {"run", "--set", "run.algorithm=collective", "--set", "collective.ranks=2", "--set", set,
                          "--out", "out", NULL};
    const char *needles[] = {cases[i][1], cases[i][2], NULL};
    bad_input(args, needles);
  }
  char *dir = cli_tmpdir();
  const char *ns3[] = {"run", "--set", "run.algorithm=collective", "--set", "collective.ranks=2", "--set",
                       "collective.bytes=1024", "--set", "platform.placement=spread", "--set",
                       "platform.file=" TEST_DATA_DIR "/simgrid/wifi_ns3.xml", "--quiet", "--out", "out", NULL};
  int rc = cli_run(dir, ns3);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 0 && cli_exists(dir, "out/summary.json"), "wifi_ns3.xml: exit %d: %s", rc, err);
  free(err);
  free(dir);
}
END_TEST

START_TEST(test_guards_link_bandwidth_zero)
{
  const char *args[] = {"run", "--set", "run.algorithm=collective", "--set", "collective.ranks=2",
                        "--set", "platform.file=" TEST_DATA_DIR "/platform-bw0.xml", "--out", "out", NULL};
  const char *needles[] = {"platform-bw0.xml", "link stuck", "bandwidth 0", NULL};
  bad_input(args, needles);
}
END_TEST

START_TEST(test_guards_simgrid_option_named)
{
  const char *args[] = {"run", "--set", "run.max_steps=2", "--cfg=nosuch/opt:1", "--out", "out", NULL};
  const char *needles[] = {"--cfg=nosuch/opt:1", "nosuch/opt", NULL};
  bad_input(args, needles);
  /* one bad option among good ones is the one named */
  const char *two[] = {"run", "--set", "run.max_steps=2", "--cfg=network/model:CM02", "--cfg=contexts/nthreads:abc",
                       "--out", "out", NULL};
  const char *n2[] = {"--cfg=contexts/nthreads:abc", NULL};
  bad_input(two, n2);
}
END_TEST

START_TEST(test_guards_memory_refused)
{
  /* 30 hosts x 4 copies of 4.3e10 parameters: refused with the figure, before GSL's
   * allocator aborts */
  const char *args[] = {"run", "--set", "model.layers=32,1000000000,10", "--out", "out", NULL};
  const char *needles[] = {"needs about 41.3 TB of memory", "model.layers has 4.3e+10 parameters", NULL};
  bad_input(args, needles);
  /* consensus's dense weight matrix on a fixed graph of 100,000 agents: 80 GB */
  const char *cons[] = {"run", "--set", "run.algorithm=consensus", "--set", "run.max_steps=1", "--set",
                        "consensus.agents=100000", "--out", "out", NULL};
  const char *n2[] = {"needs about 80.2 GB", "agents^2 weights", NULL};
  bad_input(cons, n2);
}
END_TEST

START_TEST(test_guards_stacks_refused)
{
  /* more actors than vm.max_map_count allows two memory maps each (SimGrid's stack and
   * its guard page): refused up front, not by SimGrid's "Failed to protect stack" */
  FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
  long maps = 0;
  ck_assert(f && fscanf(f, "%ld", &maps) == 1 && maps > 0);
  fclose(f);
  long n = maps / 2 + 1;
  if (n > 1000000)
    return; /* beyond collective.ranks' range on this machine: nothing to refuse */
  char ranks[64];
  snprintf(ranks, sizeof ranks, "collective.ranks=%ld", n);
  const char *args[] = {"run", "--set", "run.algorithm=collective", "--set", ranks, "--set", "model.numerics=off",
                        "--out", "out", NULL};
  const char *needles[] = {"vm.max_map_count", "--cfg=contexts/guard-size:0", NULL};
  bad_input(args, needles);
}
END_TEST

/* A small Downpour run: 2 replicas, 1 shard, 10 steps each. */
static const char *const small[] = {"--set", "run.max_steps=10", "--set", "downpour.replicas=2", "--set",
                                    "downpour.ps_shards=1", "--set", "data.train=500", "--set", "data.test=100"};
#define N_SMALL (sizeof small / sizeof *small)

/* args = "run" + small + extra (NULL-terminated) */
static void small_args(const char **args, const char *const *extra)
{
  size_t n = 0;
  args[n++] = "run";
  for (size_t i = 0; i < N_SMALL; i++)
    args[n++] = small[i];
  for (size_t i = 0; extra[i]; i++)
    args[n++] = extra[i];
  args[n] = NULL;
}

START_TEST(test_guards_out_not_writable)
{
  /* root may write into /proc by access(), not create a folder there: refused before
   * the run, in the words of --out (the old check let it run, then failed) */
  const char *args[40], *extra[] = {"--out", "/proc/dtsim-forbidden", NULL};
  small_args(args, extra);
  const char *needles[] = {"--out /proc/dtsim-forbidden", "cannot create a folder in /proc", NULL};
  bad_input(args, needles);
}
END_TEST

START_TEST(test_guards_expect_checked_first)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "bad.json", "{\"algorithm\": \"downpour\", \n");
  cli_write(dir, "breakdown.csv", "actor,role,host,compute_s,comm_s,exposed_comm_s\nreplica-0,replica,h,1,2,3\n");
  cli_write(dir, "other.json", "{\"a\": 1}\n");
  const char *args[40], *e1[] = {"--out", "out", "--expect", "bad.json", NULL};
  small_args(args, e1);
  cli_assert_bad_input(dir, args, "bad.json:2: not valid JSON");
  const char *e2[] = {"--out", "out", "--expect", "breakdown.csv", NULL};
  small_args(args, e2);
  cli_assert_bad_input(dir, args, "takes a saved summary.json, progress.csv or consensus.csv");
  const char *e3[] = {"--out", "out", "--expect", "other.json", NULL};
  small_args(args, e3);
  cli_assert_bad_input(dir, args, "not a dtsim summary.json");
  const char *e4[] = {"--out", "out", "--rtol", "-1", "--expect", "other.json", NULL};
  small_args(args, e4);
  cli_assert_bad_input(dir, args, "--rtol -1");
  free(dir);
}
END_TEST

/* The 15th of the 17 significant digits of the number ending at end changed: a
 * relative change of about 1e-14, a different double. */
static void nudge(char *end)
{
  end[-3] = end[-3] == '9' ? '8' : (char)(end[-3] + 1);
}

/* The first number of line 2 nudged. */
static char *nudge_first_number(const char *csv)
{
  char *s = strdup(csv);
  nudge(strchr(strchr(s, '\n') + 1, ','));
  return s;
}

START_TEST(test_guards_expect_rtol_and_verdict)
{
  char *dir = cli_tmpdir();
  const char *args[40], *e0[] = {"--quiet", "--out", "a", NULL};
  small_args(args, e0);
  ck_assert_int_eq(cli_run(dir, args), 0);
  char *p = cli_read(dir, "a/progress.csv"), *q = nudge_first_number(p);
  cli_write(dir, "near.csv", q);
  /* exactly: a mismatch, and nothing on stdout reads like success before or after it */
  const char *e1[] = {"--out", "b", "--expect", "near.csv", NULL};
  small_args(args, e1);
  ck_assert_int_eq(cli_run(dir, args), 1);
  char *out = cli_read(dir, "stdout"), *err = cli_read(dir, "stderr");
  ck_assert_msg(strcmp(out, "") == 0, "stdout before a mismatch: %s", out);
  ck_assert_msg(cli_lines(err) == 1 && strstr(err, "MISMATCH") && strstr(err, "column sim_time_s"), "%s", err);
  free(out);
  free(err);
  /* within rtol 1e-9: the closing line, then one line saying it matches */
  const char *e2[] = {"--out", "b", "--expect", "near.csv", "--rtol", "1e-9", NULL};
  small_args(args, e2);
  ck_assert_int_eq(cli_run(dir, args), 0);
  out = cli_read(dir, "stdout");
  ck_assert_msg(cli_lines(out) == 2 && strstr(out, "-> b/\ndtsim: --expect near.csv: matches (numbers within rtol 1e-09)"),
                "%s", out);
  free(out);
  /* the same for summary.json: sim_time_s nudged matches within rtol, not exactly */
  char *sum = cli_read(dir, "a/summary.json");
  char *t = strstr(sum, "\"sim_time_s\": ") + strlen("\"sim_time_s\": ");
  nudge(t + strcspn(t, ",\n"));
  cli_write(dir, "near.json", sum);
  const char *e3[] = {"--quiet", "--out", "c", "--expect", "near.json", NULL};
  small_args(args, e3);
  ck_assert_int_eq(cli_run(dir, args), 1);
  err = cli_read(dir, "stderr");
  ck_assert_msg(strstr(err, "summary.json: sim_time_s: expected"), "%s", err);
  free(err);
  const char *e4[] = {"--out", "c", "--expect", "near.json", "--rtol", "1e-12", NULL};
  small_args(args, e4);
  ck_assert_int_eq(cli_run(dir, args), 0);
  out = cli_read(dir, "stdout");
  ck_assert_msg(strstr(out, "matches (numbers within rtol 1e-12)"), "%s", out);
  free(out);
  free(sum);
  free(p);
  free(q);
  free(dir);
}
END_TEST

/* An option word is never an option's value: `--out --quiet` is refused before the run
 * (it ran to the end into a folder ./--quiet), in run, sweep and reproduce alike. */
START_TEST(test_guards_option_as_value)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "s.ini", "[run]\nmax_sim_time = 0.01\n");
  const char *run[] = {"run", "s.ini", "--out", "--quiet", NULL};
  cli_assert_bad_input(dir, run, "dtsim run: unknown or incomplete option '--out'");
  const char *expect[] = {"run", "s.ini", "--expect", "--quiet", "--out", "out", NULL};
  cli_assert_bad_input(dir, expect, "dtsim run: unknown or incomplete option '--expect'");
  const char *sweep[] = {"sweep", "s.ini", "--vary", "run.max_sim_time=0.01,0.02", "--out", "--quiet", NULL};
  cli_assert_bad_input(dir, sweep, "dtsim sweep: unknown or incomplete option '--out'");
  const char *repro[] = {"reproduce", "collectives", "--quick", "--out", "--quiet", NULL};
  cli_assert_bad_input(dir, repro, "dtsim reproduce: unknown or incomplete option '--out'");
  ck_assert_msg(!cli_exists(dir, "--quiet"), "a folder --quiet was written");
  free(dir);
}
END_TEST

START_TEST(test_guards_reproduce_check_found_first)
{
  char *dir = cli_tmpdir();
  /* a folder without the committed CSV: refused before any simulation runs */
  const char *args[] = {"reproduce", "collectives", "--quick", "--check", "--results", "nowhere", NULL};
  cli_assert_bad_input(dir, args, "nowhere/collectives/collectives.csv: cannot read");
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(strstr(err, "done") == NULL, "runs started: %s", err);
  free(err);
#ifndef DTSIM_SANITIZE /* 81 runs take minutes under ASan's thread contexts: Release only */
  /* from a folder that is not the source tree, the committed CSV is still found, and
   * --out (where a run without --check would write) does not move it */
  const char *quick[] = {"reproduce", "collectives", "--quick", "--check", "--quiet", "--out", "elsewhere", NULL};
  int rc = cli_run(dir, quick);
  err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
  ck_assert(!cli_exists(dir, "elsewhere"));
  free(err);
#endif
  free(dir);
}
END_TEST

START_TEST(test_guards_reproduce_out_checked_first)
{
  char *dir = cli_tmpdir();
  /* a folder that cannot be made: refused before the first simulation (it used to fail
   * after all of them), one line, exit 2 */
  const char *args[] = {"reproduce", "collectives", "--quick", "--out", "/proc/dtsim-forbidden/a", NULL};
  cli_assert_bad_input(dir, args, "--out /proc/dtsim-forbidden/a: cannot create a folder in /proc");
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(strstr(err, "done") == NULL, "runs started: %s", err);
  free(err);
  /* missing parents are made, as run and sweep make them */
  const char *deep[] = {"reproduce", "gemm", "--quick", "--quiet", "--out", "deep/a/b", NULL};
  int rc = cli_run(dir, deep);
  err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 0 && cli_exists(dir, "deep/a/b/gemm.csv"), "exit %d: %s", rc, err);
  free(err);
  free(dir);
}
END_TEST

/* Starts `dtsim args` in dir with stdout and stderr to dir/stdout and dir/stderr;
 * returns its pid. */
static pid_t start_dtsim(const char *dir, const char *const *args)
{
  char out[1024], err[1024];
  snprintf(out, sizeof(out), "%s/stdout", dir);
  snprintf(err, sizeof(err), "%s/stderr", dir);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644), 1);
    dup2(open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644), 2);
    if (chdir(dir) != 0)
      _exit(126);
    const char *argv[64] = {DTSIM_BIN};
    for (int n = 0; args[n] && n < 62; n++)
      argv[n + 1] = args[n];
    execv(DTSIM_BIN, (char *const *)argv);
    _exit(127);
  }
  return pid;
}

static void sleep_ms(long ms)
{
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* A /tmp/dtsim-XXXXXX folder holding a gpu-2012.xml of 7 hosts ("radical 0-6"), other
 * than `except`: the temporary platform of the run below, told apart from other runs' on
 * this machine (and from one a killed run may have left). */
static int find_tmp_platform(char *path, size_t len, const char *except)
{
  DIR *d = opendir("/tmp");
  struct dirent *e;
  int found = 0;
  while (!found && d && (e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, "dtsim-", 6) != 0 || strlen(e->d_name) != 12)
      continue;
    char file[300];
    snprintf(file, sizeof file, "/tmp/%s", e->d_name);
    if (except && strcmp(file, except) == 0)
      continue;
    char *xml = cli_read(file, "gpu-2012.xml");
    if (xml && strstr(xml, "radical=\"0-6\"")) {
      snprintf(path, len, "%s", file);
      found = 1;
    }
    free(xml);
  }
  if (d)
    closedir(d);
  return found;
}

/* A long SGD run on a generated 7-host gpu-2012 platform, stopped by sig once it
 * simulates: exit 128 + sig, one line, no result folder, its temporary platform gone. */
static void interrupt_run(int sig, const char *line)
{
  char *dir = cli_tmpdir();
  const char *args[] = {"run", "--set", "run.algorithm=sgd", "--set", "platform.preset=gpu-2012", "--set",
                        "platform.hosts=7", "--set", "run.max_sim_time=1e9", "--set", "run.eval_every=1e8",
                        "--out", "out", NULL};
  char stale[300] = "", tmp[300] = "";
  find_tmp_platform(stale, sizeof stale, NULL);
  pid_t pid = start_dtsim(dir, args);
  for (int i = 0; i < 400 && !find_tmp_platform(tmp, sizeof tmp, stale[0] ? stale : NULL); i++)
    sleep_ms(25);
  ck_assert_msg(tmp[0], "the run's temporary platform never appeared");
  sleep_ms(1500); /* past the pre-check: SimGrid's engine runs, with its own SIGINT handler */
  kill(pid, sig);
  int st;
  waitpid(pid, &st, 0);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 128 + sig, "status %d: %s", st, err);
  ck_assert_msg(cli_lines(err) == 1 && strstr(err, line), "stderr: %s", err);
  ck_assert_msg(!cli_exists(dir, "out"), "a result folder was left");
  struct stat sb;
  ck_assert_msg(stat(tmp, &sb) != 0, "%s was left behind", tmp);
  free(err);
  free(dir);
}

START_TEST(test_guards_sigint) { interrupt_run(SIGINT, "dtsim: interrupted (SIGINT); no results written"); }
END_TEST

START_TEST(test_guards_sigterm) { interrupt_run(SIGTERM, "dtsim: terminated (SIGTERM); no results written"); }
END_TEST

/* A sweep stopped by SIGTERM stops its running points (each cleaning up as above) and
 * writes no sweep.csv. */
START_TEST(test_guards_sweep_sigterm)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "long.ini", "[run]\nalgorithm = sgd\nmax_sim_time = 1e9\neval_every = 1e8\n");
  const char *args[] = {"sweep", "long.ini", "--vary", "sgd.batch=8,16,32", "--jobs", "2", "--out", "sw", NULL};
  pid_t pid = start_dtsim(dir, args);
  sleep_ms(2500);
  kill(pid, SIGTERM);
  int st;
  waitpid(pid, &st, 0);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 143, "status %d: %s", st, err);
  ck_assert_msg(cli_lines(err) == 1 && strstr(err, "terminated (SIGTERM) with 0 of 3 points finished"), "%s", err);
  ck_assert(!cli_exists(dir, "sw/sweep.csv"));
  char *log = cli_read(dir, "sw/points/001-batch=8/run.log");
  ck_assert_msg(log && strstr(log, "terminated (SIGTERM); no results written"), "point 1's log: %s", log);
  ck_assert(!cli_exists(dir, "sw/points/003-batch=32/run.log")); /* never started */
  free(log);
  free(err);
  free(dir);
}
END_TEST

/* Issue 47: `dtsim run --set run.algorithm=sgd` with the defaults ran 21 minutes without a
 * word, and --progress's first line came after 41 s, at the first evaluation (0.25 simulated
 * s). Now its first stderr line, after PROGRESS_CALIBRATE (2) wall seconds, says how long it
 * will take, and the first progress line comes with it, before the first evaluation. The
 * horizon is ten times the default's (80 simulated s, hours here), so that even a machine
 * twenty times faster than these is past PROGRESS_LONG. */
START_TEST(test_guards_long_run_says_so)
{
  char *dir = cli_tmpdir();
  const char *args[] = {"run", "--set", "run.algorithm=sgd", "--set", "run.max_sim_time=80", "--progress", "--out",
                        "out", NULL};
  pid_t pid = start_dtsim(dir, args);
  char *err = NULL;
  /* the run builds its data and platform first: seconds, up to 45 on a loaded machine (within
   * the tcase's 60 s timeout, so that the run is always stopped); not a bound on its speed */
  for (int i = 0; i < 900 && cli_lines(err) < 2; i++) {
    free(err);
    sleep_ms(50);
    err = cli_read(dir, "stderr");
  }
  kill(pid, SIGTERM);
  int st;
  waitpid(pid, &st, 0);
  ck_assert_msg(err && cli_lines(err) >= 2, "no estimate and progress line: %s", err ? err : "(none)");
  ck_assert_msg(strncmp(err, "dtsim: this run will take about ", 32) == 0 && strstr(err, " of wall time: an estimate"),
                "first line: %s", err);
  const char *second = strchr(err, '\n') + 1;
  ck_assert_msg(strncmp(second, "dtsim: sim ", 11) == 0, "second line: %s", second);
  double t = strtod(second + 11, NULL);
  ck_assert_msg(t > 0 && t < 0.25, "the first progress line is at %g simulated s, not before the first evaluation "
                "(run.eval_every = 0.25): %s", t, second);
  ck_assert_msg(!cli_exists(dir, "out"), "a result folder was left");
  free(err);
  free(dir);
}
END_TEST

START_TEST(test_guards_out_reused)
{
  char *dir = cli_tmpdir();
  const char *pipe[] = {"run", "--set", "run.algorithm=pipeline", "--set", "run.max_steps=2", "--trace", "--quiet",
                        "--out", "out", NULL};
  ck_assert_int_eq(cli_run(dir, pipe), 0);
  ck_assert(cli_exists(dir, "out/pipeline.csv") && cli_exists(dir, "out/trace.json"));
  cli_write(dir, "out/notes.txt", "mine\n");
  /* a Downpour run over it: the pipeline's files and the trace go, the user's note stays */
  const char *args[40], *extra[] = {"--quiet", "--out", "out", NULL};
  small_args(args, extra);
  ck_assert_int_eq(cli_run(dir, args), 0);
  ck_assert_msg(!cli_exists(dir, "out/pipeline.csv"), "a pipeline.csv beside a Downpour summary.json");
  ck_assert(!cli_exists(dir, "out/trace.json"));
  ck_assert(cli_exists(dir, "out/notes.txt") && cli_exists(dir, "out/breakdown.csv"));
  char *sum = cli_read(dir, "out/summary.json");
  ck_assert(strstr(sum, "\"algorithm\": \"downpour\""));
  free(sum);
  /* a folder whose summary.json is not a dtsim run's is refused */
  char other[1100];
  snprintf(other, sizeof other, "%s/other", dir);
  ck_assert_int_eq(mkdir(other, 0777), 0);
  cli_write(dir, "other/summary.json", "{\"results\": [1, 2]}\n");
  const char *e2[] = {"--out", "other", NULL};
  small_args(args, e2);
  int rc = cli_run(dir, args);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 2 && cli_lines(err) == 1 && strstr(err, "not a dtsim run's"), "exit %d: %s", rc, err);
  ck_assert(!cli_exists(dir, "other/progress.csv"));
  free(err);
  free(dir);
}
END_TEST

static Suite *guards_suite(void)
{
  Suite *s = suite_create("guards");
  ADD_TCASE(s, "platform", test_guards_host_speed_zero, test_guards_no_route, test_guards_link_bandwidth_zero,
            test_guards_simgrid_option_named, test_guards_simgrid_platforms_run, test_guards_simgrid_hazards);
  ADD_TCASE(s, "memory", test_guards_memory_refused, test_guards_stacks_refused);
  ADD_TCASE(s, "before", test_guards_option_as_value, test_guards_out_not_writable, test_guards_expect_checked_first,
            test_guards_expect_rtol_and_verdict, test_guards_out_reused);
  ADD_TCASE(s, "signals", test_guards_sigint, test_guards_sigterm, test_guards_sweep_sigterm);
  ADD_TCASE(s, "long", test_guards_long_run_says_so);
  TCase *tc = tcase_create("reproduce");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_guards_reproduce_check_found_first);
  tcase_add_test(tc, test_guards_reproduce_out_checked_first);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(guards_suite)

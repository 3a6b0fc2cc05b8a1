/* sim_reproduce_resume.c - `dtsim reproduce` resuming an interrupted reproduction from the
 * runs it keeps in OUT/.runs: `reproduce pipeline --quick` (16 bubble runs, then 3 PTD-P
 * runs: two calls of the job runner, about 2 s on 2 cores, the cheapest reproduction with
 * several runs and two calls) written whole into one folder, and into another stopped by
 * SIGTERM to its process group after some runs ended, then resumed: the kept runs are not
 * run again, a kept run of another identity is, and every file written equals the
 * uninterrupted reproduction's byte for byte, with OUT/.runs gone. Also: --fresh runs
 * everything again, --check touches no store, --fresh --check is refused. And rule 6's claim
 * that a bounded rung's evaluations are the unbounded run's, up to its bound; and a store
 * shared by two reproductions (--store). */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_util.h"
#include "cli_util.h"

/* MIN_KEPT: runs that must have ended (and been kept) before the signal; 3 of the 19, so
 * that one can be made stale and two still be reused. POLL_NS: how often the kept runs are
 * counted (10 ms; a quick bubble run takes about 100 ms alone). */
#define MIN_KEPT 3
#define POLL_NS 10000000L

/* The files `reproduce pipeline` writes, compared byte for byte. */
static const char *const written[] = {"README.md", "pipeline.csv", "pipeline.png", "ptdp.csv",
                                      "ptdp.png",  "pipeline.ini", "ptdp.ini"};
#define N_WRITTEN (sizeof written / sizeof written[0])

/* Runs kept in store dir/store (names not starting with a dot: a copy being made does). */
static int stored_runs(const char *dir, const char *store)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, store);
  DIR *d = opendir(path);
  int n = 0;
  for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;)
    n += e->d_name[0] != '.';
  if (d != NULL)
    closedir(d);
  return n;
}

/* Runs kept in dir/out/.runs. */
static int kept_runs(const char *dir, const char *out)
{
  char store[600];
  snprintf(store, sizeof store, "%s/.runs", out);
  return stored_runs(dir, store);
}

/* `dtsim reproduce pipeline --quick --jobs 1 --out OUT` in dir, in a process group of its
 * own (stderr to dir/stderr), sent SIGTERM (the whole group, as when a session ends) once
 * MIN_KEPT runs are kept. Returns the exit status. */
static int interrupted_run(const char *dir, const char *out)
{
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    char err[1024];
    snprintf(err, sizeof err, "%s/stderr", dir);
    int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fe, 2);
    if (chdir(dir) != 0)
      _exit(126);
    execl(DTSIM_BIN, DTSIM_BIN, "reproduce", "pipeline", "--quick", "--jobs", "1", "--out", out, (char *)NULL);
    _exit(127);
  }
  setpgid(pid, pid); /* either side may run first */
  int st;
  while (kept_runs(dir, out) < MIN_KEPT) {
    ck_assert_msg(waitpid(pid, &st, WNOHANG) == 0, "the reproduction ended before %d runs were kept", MIN_KEPT);
    nanosleep(&(struct timespec){0, POLL_NS}, NULL);
  }
  kill(-pid, SIGTERM);
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Lines of s that contain both a and b. */
static int lines_with(const char *s, const char *a, const char *b)
{
  int n = 0;
  for (const char *p = s; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    size_t len = strcspn(p, "\n");
    const char *x = strstr(p, a), *y = strstr(p, b);
    n += x && y && (size_t)(x - p) < len && (size_t)(y - p) < len;
  }
  return n;
}

/* The name (into name) of the run kept in dir/out/.runs whose run.json holds each of the
 * NULL-terminated strings want: the store names a run by the hash of its identity. */
static void kept_run_with(const char *dir, const char *out, const char *const *want, char *name, size_t len)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/%s/.runs", dir, out);
  DIR *d = opendir(path);
  ck_assert_ptr_nonnull(d);
  name[0] = '\0';
  for (struct dirent *e; name[0] == '\0' && (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.')
      continue;
    snprintf(path, sizeof path, "%s/.runs/%s/run.json", out, e->d_name);
    char *id = cli_read(dir, path);
    int all = id != NULL;
    for (size_t k = 0; all && want[k]; k++)
      all = strstr(id, want[k]) != NULL;
    if (all)
      snprintf(name, len, "%s", e->d_name);
    free(id);
  }
  closedir(d);
  ck_assert_msg(name[0] != '\0', "no kept run holds %s", want[0]);
}

/* Makes the kept run dir/out/.runs/NAME stale (another dtsim version in its run.json) and
 * breaks its summary.json, which a reproduction that took it would fail on. */
static void make_stale(const char *dir, const char *out, const char *name)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/.runs/%s/run.json", out, name);
  char *id = cli_read(dir, path);
  ck_assert_ptr_nonnull(id);
  char *v = strstr(id, "\"dtsim_version\": \"");
  ck_assert_ptr_nonnull(v);
  v[strlen("\"dtsim_version\": \"")] = 'X'; /* "0.1.0" -> "X.1.0" */
  cli_write(dir, path, id);
  free(id);
  snprintf(path, sizeof path, "%s/.runs/%s/out/summary.json", out, name);
  cli_write(dir, path, "{}\n");
}

START_TEST(test_reproduce_resume)
{
  char *dir = cli_tmpdir();
  /* the uninterrupted reproduction, into pipeline/ (so that --check --results . reads it) */
  const char *whole[] = {"reproduce", "pipeline", "--quick", "--jobs", "2", "--out", "pipeline", NULL};
  int rc = cli_run(dir, whole);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
  ck_assert_msg(strstr(err, "(reused)") == NULL, "%s", err);
  free(err);
  ck_assert(cli_exists(dir, "pipeline/pipeline.csv") && !cli_exists(dir, "pipeline/.runs"));

  /* stopped: exit 128 + SIGTERM, the finished runs kept, the message says how to resume */
  ck_assert_int_eq(interrupted_run(dir, "b"), 128 + SIGTERM);
  err = cli_read(dir, "stderr");
  ck_assert_msg(strstr(err, "kept in b/.runs: the same command resumes") != NULL, "%s", err);
  free(err);
  int kept = kept_runs(dir, "b");
  ck_assert_int_ge(kept, MIN_KEPT);
  ck_assert(!cli_exists(dir, "b/pipeline.csv"));
  /* --jobs 1 ran the grid in order: the first run is kept; make it stale */
  static const char *const first[] = {"\"pipeline.schedule=gpipe\"", "\"pipeline.stages=2\"",
                                      "\"pipeline.microbatches=1\"", NULL};
  char name[256], path[600];
  kept_run_with(dir, "b", first, name, sizeof name);
  snprintf(path, sizeof path, "b/.runs/%s/run.log", name);
  ck_assert(cli_exists(dir, path));
  snprintf(path, sizeof path, "b/.runs/%s/out/summary.json", name);
  ck_assert(cli_exists(dir, path));
  make_stale(dir, "b", name);

  /* resumed (another --jobs: it plays no part in a run's identity) */
  const char *resume[] = {"reproduce", "pipeline", "--quick", "--jobs", "2", "--out", "b", NULL};
  rc = cli_run(dir, resume);
  err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
  ck_assert_msg(lines_with(err, "done: ", "(reused)") == kept - 1, "want %d reused: %s", kept - 1, err);
  ck_assert_msg(lines_with(err, "done: gpipe p=2 m=1 v=1", "(reused)") == 0, "the stale run was reused: %s", err);
  ck_assert_msg(lines_with(err, "done: gpipe p=2 m=1 v=1", "") == 1, "%s", err);
  free(err);
  cli_assert_same_files(dir, "pipeline", "b", written, N_WRITTEN);
  ck_assert(!cli_exists(dir, "b/.runs"));

  /* --fresh: the kept runs are deleted, everything runs */
  ck_assert_int_eq(interrupted_run(dir, "c"), 128 + SIGTERM);
  const char *fresh[] = {"reproduce", "pipeline", "--quick", "--jobs", "2", "--out", "c", "--fresh", NULL};
  rc = cli_run(dir, fresh);
  err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 0 && strstr(err, "(reused)") == NULL, "exit %d: %s", rc, err);
  free(err);
  cli_assert_same_files(dir, "pipeline", "c", written, N_WRITTEN);
  ck_assert(!cli_exists(dir, "c/.runs"));

  /* --check reads and writes no store; --fresh with it is refused before anything runs */
  const char *check[] = {"reproduce", "pipeline", "--quick", "--jobs", "2", "--check", "--results", ".", NULL};
  rc = cli_run(dir, check);
  err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
  free(err);
  ck_assert(!cli_exists(dir, "pipeline/.runs") && !cli_exists(dir, "results"));
  const char *both[] = {"reproduce", "pipeline", "--quick", "--fresh", "--check", "--results", ".", NULL};
  cli_assert_bad_input(dir, both, "--fresh: not with --check");
  free(dir);
}
END_TEST

/* `--store S`: a reproduction written into one folder with its runs kept in S, then into
 * another with the same S: every run reused (its name the hash of its identity, not its
 * place in the grid), the same files byte for byte, S kept after both; with --check,
 * refused. */
START_TEST(test_reproduce_shared_store)
{
  char *dir = cli_tmpdir();
  static const char *const outs[] = {"a", "b"};
  for (int i = 0; i < 2; i++) {
    const char *args[] = {"reproduce", "pipeline", "--quick", "--jobs", "2", "--store", "S", "--out", outs[i], NULL};
    int rc = cli_run(dir, args);
    char *err = cli_read(dir, "stderr");
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    int reused = 0;
    for (const char *p = strstr(err, "(reused)"); p; p = strstr(p + 1, "(reused)"))
      reused++;
    ck_assert_msg(reused == (i ? 19 : 0), "run %d: %d reused: %s", i, reused, err);
    free(err);
  }
  cli_assert_same_files(dir, "a", "b", written, N_WRITTEN);
  ck_assert(!cli_exists(dir, "a/.runs") && !cli_exists(dir, "b/.runs"));
  ck_assert_int_eq(stored_runs(dir, "S"), 19);
  const char *check[] = {"reproduce", "pipeline", "--quick", "--store", "S", "--check", "--results", ".", NULL};
  cli_assert_bad_input(dir, check, "--store: not with --check");
  free(dir);
}
END_TEST

/* Rule 6 of `reproduce fig4|fig5` bounds a rung at run.max_sim_time = (best time to the target so
 * far) + EVAL_EVERY / 2, on the claim that a bounded run's evaluations are those of the
 * unbounded run up to its bound, so the ladder chooses as an unbounded one would. Fig. 4's
 * Downpour-Adagrad 20 (results/fig4/fig4.ini, rate 0.1, a target it never reaches: about 2 s
 * each) run to 120 s and to 67.5 s: every evaluation of the bounded run on the 15-s grid (all
 * but its last, at its stop) is a line of the unbounded run's progress.csv, byte for byte, in
 * the same place, and those are the four at 15 to 60 s. */
START_TEST(test_reproduce_bounded_prefix)
{
  char *dir = cli_tmpdir();
  char *full = NULL, *bounded = NULL;
  static const char *const bound[] = {"run.max_sim_time=120", "run.max_sim_time=67.5"};
  for (int i = 0; i < 2; i++) {
    const char *args[] = {"run", RESULTS_DIR "/fig4/fig4.ini", "--set", "run.algorithm=downpour", "--set",
                          "downpour.replicas=20", "--set", "downpour.ps_shards=3", "--set", "downpour.adagrad=on",
                          "--set", "downpour.adagrad_gamma=0.1", "--set", "run.target_accuracy=0.99", "--set",
                          bound[i], "--quiet", "--out", i ? "bounded" : "full", NULL};
    int rc = cli_run(dir, args);
    char *err = cli_read(dir, "stderr");
    ck_assert_msg(rc == 0 || rc == 1, "exit %d: %s", rc, err); /* 1: the target was not reached */
    free(err);
    *(i ? &bounded : &full) = cli_read(dir, i ? "bounded/progress.csv" : "full/progress.csv");
  }
  ck_assert_ptr_nonnull(full);
  ck_assert_ptr_nonnull(bounded);
  const char *last = strrchr(bounded, '\n');
  ck_assert(last != NULL && last[1] == '\0');
  while (last > bounded && last[-1] != '\n')
    last--; /* the bounded run's final line: its evaluation at the stop, off the grid */
  size_t prefix = (size_t)(last - bounded);
  ck_assert_int_eq(cli_lines(bounded), 6); /* header, 15, 30, 45, 60 and the stop */
  ck_assert(strtod(last, NULL) > 60 && strtod(last, NULL) < 75);
  ck_assert_msg(strncmp(bounded, full, prefix) == 0, "bounded:\n%.*s\nunbounded:\n%s", (int)prefix, bounded, full);
  ck_assert(strncmp(full + prefix, "75,", 3) == 0);
  free(full);
  free(bounded);
  free(dir);
}
END_TEST

/* One tcase, one ctest entry: sim_reproduce_resume (tests/CMakeLists.txt names the
 * sim_reproduce* suites' entries after their tcases). */
static Suite *reproduce_resume_suite(void)
{
  Suite *s = suite_create("reproduce_resume");
  TCase *tc = tcase_create("resume"); /* five reproductions: about 25 s in Release, several times that under ASan */
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_reproduce_resume);
  suite_add_tcase(s, tc);
  tc = tcase_create("shared_store"); /* pipeline --quick twice, the second from the store: about 5 s */
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_reproduce_shared_store);
  suite_add_tcase(s, tc);
  tc = tcase_create("bounded_prefix"); /* two runs of about 2 s each in Release */
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_reproduce_bounded_prefix);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(reproduce_resume_suite)

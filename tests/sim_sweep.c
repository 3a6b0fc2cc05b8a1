/* sim_sweep.c - `dtsim sweep` end to end: the product of --vary lists in order, one
 * row per point taken from its summary.json, led by the metric the algorithm is run for and
 * its ratio to point 1's, holding only what the points report; the same sweep.csv whatever
 * --jobs; the built-in scenario without a file; bad --vary options, metrics no point reports
 * and bad platform files refused before anything runs; --emit-jobs lines run by sh and
 * merged giving the direct sweep's bytes, and failed points. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli_util.h"

/* Plain SGD of a tiny MLP for 20 steps: about 40 ms per point. */
static const char tiny_ini[] =
    "[run]\nalgorithm = sgd\nmax_steps = 20\neval_every = 0.001\n"
    "[model]\nlayers = 8,16,3\n"
    "[data]\ntrain = 400\ntest = 100\n";

static char *tiny_dir(void)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "tiny.ini", tiny_ini);
  return dir;
}

/* Runs dtsim with args in dir; asserts the exit status; returns stderr (caller frees). */
static char *run_expect(const char *dir, const char *const *args, int want)
{
  int rc = cli_run(dir, args);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(rc == want, "exit status %d (want %d): %s", rc, want, err);
  return err;
}

/* Field f (0-based) of line `row` (0: the header) of csv, into out. */
static void csv_field(const char *csv, int row, int f, char *out, size_t len)
{
  const char *p = csv;
  for (int r = 0; r < row && p; r++) {
    p = strchr(p, '\n');
    p = p ? p + 1 : NULL;
  }
  ck_assert_msg(p && *p, "no line %d in:\n%s", row, csv);
  for (int i = 0; i < f; i++) {
    p = p + strcspn(p, ",\n");
    ck_assert_msg(*p == ',', "line %d has no field %d:\n%s", row, f, csv);
    p++;
  }
  size_t n = strcspn(p, ",\n");
  snprintf(out, len, "%.*s", (int)n, p);
}

/* The index of column name in csv's header line, or -1. */
static int csv_column(const char *csv, const char *name)
{
  size_t nl = strlen(name);
  int f = 0;
  for (const char *p = csv; *p && *p != '\n'; f++) {
    size_t n = strcspn(p, ",\n");
    if (n == nl && strncmp(p, name, n) == 0)
      return f;
    p += n + (p[n] == ',');
  }
  return -1;
}

/* sweep.csv writes reals to 6 significant digits (sim/lab/sweep_merge.c, SWEEP_CSV_DIGITS):
 * a cell is within half a unit of its 6th digit of summary.json's number. */
#define CSV_REL 5e-6

/* Asserts that cell (text) is summary.json's number x as sweep.csv writes it: within
 * CSV_REL, with at most 6 significant digits, or whole (a whole number is written whole). */
static void assert_cell(const char *cell, double x, const char *what)
{
  double v = strtod(cell, NULL);
  ck_assert_msg(fabs(v - x) <= CSV_REL * fabs(x), "%s: csv %s, summary %.17g", what, cell, x);
  size_t digits = 0;
  const char *p = cell + (*cell == '-');
  while (*p == '0' || *p == '.')
    p++;
  for (; *p && *p != 'e'; p++)
    digits += *p >= '0' && *p <= '9';
  ck_assert_msg(digits <= 6 || x == floor(x), "%s: %s has %zu significant digits", what, cell, digits);
}

static const char *const lr_batch[] = {"sweep", "tiny.ini", "--vary", "sgd.lr=0.01,0.1,0.5", "--vary",
                                       "sgd.batch=8,32", "--quiet", "--out"};

/* The 3 x 2 sweep into out with --jobs jobs; asserts success. */
static void sweep_lr_batch(const char *dir, const char *out, const char *jobs)
{
  const char *args[16];
  size_t n = sizeof(lr_batch) / sizeof(lr_batch[0]);
  memcpy(args, lr_batch, sizeof(lr_batch));
  args[n++] = out;
  args[n++] = "--jobs";
  args[n++] = jobs;
  args[n] = NULL;
  free(run_expect(dir, args, 0));
}

START_TEST(test_sweep_product)
{
  char *dir = tiny_dir();
  sweep_lr_batch(dir, "out", "2");
  char *csv = cli_read(dir, "out/sweep.csv");
  ck_assert_ptr_nonnull(csv);
  ck_assert_int_eq(cli_lines(csv), 1 + 6);
  /* the varied keys, then the answer: the step time (what SGD is run for) and its ratio to
   * point 1's; then what the points report: plain SGD has no target (no time_to_target_s)
   * and is synchronous (no staleness columns) */
  static const char header[] = "sgd.lr,sgd.batch,step_time_s,step_time_s_ratio,sim_time_s,steps,examples,final_loss,"
                               "final_accuracy,status,bytes_total,hosts_used,examples_per_s,tflops_per_device,mfu,"
                               "compute_pct,comm_pct,exposed_comm_pct,performance.step,";
  ck_assert_msg(strncmp(csv, header, strlen(header)) == 0, "%s", csv);
  ck_assert_msg(strstr(csv, "staleness") == NULL && strstr(csv, "time_to_target_s") == NULL, "%s", csv);
  /* the first --vary slowest; each row is its point folder's summary.json */
  static const char *lr[] = {"0.01", "0.01", "0.1", "0.1", "0.5", "0.5"};
  static const char *batch[] = {"8", "32", "8", "32", "8", "32"};
  double step1 = 0;
  for (int i = 0; i < 6; i++) {
    char f[64], folder[128], name[512];
    csv_field(csv, i + 1, 0, f, sizeof(f));
    ck_assert_str_eq(f, lr[i]);
    csv_field(csv, i + 1, 1, f, sizeof(f));
    ck_assert_str_eq(f, batch[i]);
    snprintf(folder, sizeof(folder), "out/points/%03d-lr=%s-batch=%s", i + 1, lr[i], batch[i]);
    ck_assert_msg(cli_exists(dir, folder), "no point folder %s", folder);
    snprintf(name, sizeof(name), "%s/point.json", folder);
    ck_assert_msg(cli_exists(dir, name), "no %s", name);
    snprintf(name, sizeof(name), "%s/%s/summary.json", dir, folder);
    json_t *summary = json_load_file(name, 0, NULL);
    ck_assert_msg(summary != NULL, "cannot read %s", name);
    static const char *const keys[] = {"sim_time_s", "steps", "examples", "final_loss", "final_accuracy"};
    for (int k = 0; k < 5; k++) {
      csv_field(csv, i + 1, csv_column(csv, keys[k]), f, sizeof(f));
      assert_cell(f, cli_num(summary, keys[k]), keys[k]);
    }
    double step = json_number_value(json_object_get(json_object_get(summary, "performance"), "step_time_s"));
    step1 = i == 0 ? step : step1;
    csv_field(csv, i + 1, 2, f, sizeof(f));
    assert_cell(f, step, "step_time_s");
    csv_field(csv, i + 1, 3, f, sizeof(f)); /* the baseline is point 1 */
    assert_cell(f, step / step1, "step_time_s_ratio");
    /* 20 steps of `batch` examples */
    csv_field(csv, i + 1, csv_column(csv, "examples"), f, sizeof(f));
    ck_assert_int_eq(atoi(f), 20 * atoi(batch[i]));
    csv_field(csv, i + 1, csv_column(csv, "status"), f, sizeof(f));
    ck_assert_str_eq(f, "ok");
    json_decref(summary);
  }
  ck_assert(cli_exists(dir, "out/sweep.png"));
  ck_assert(!cli_exists(dir, "out/.sweep.png.tmp"));
  ck_assert(!cli_exists(dir, "out/.sweep.csv.tmp"));
  free(csv);
  free(dir);
}
END_TEST

START_TEST(test_sweep_jobs_identical)
{
  char *dir = tiny_dir();
  sweep_lr_batch(dir, "one", "1");
  sweep_lr_batch(dir, "two", "2");
  char *a = cli_read(dir, "one/sweep.csv"), *b = cli_read(dir, "two/sweep.csv");
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_nonnull(b);
  ck_assert_msg(strcmp(a, b) == 0, "--jobs 1:\n%s--jobs 2:\n%s", a, b);
  /* the rows differ (the learning rate changes the loss), so an order mix-up would show */
  char l1[64], l3[64];
  csv_field(a, 1, csv_column(a, "final_loss"), l1, sizeof(l1));
  csv_field(a, 3, csv_column(a, "final_loss"), l3, sizeof(l3));
  ck_assert_str_ne(l1, l3);
  free(a);
  free(b);
  free(dir);
}
END_TEST

/* One bad sweep: exit 2, one line containing needle, no folder `out`. */
static void bad_sweep(const char *vary1, const char *vary2, const char *needle)
{
  char *dir = tiny_dir();
  const char *args[12] = {"sweep", "tiny.ini", "--out", "out", "--vary", vary1};
  int n = 6;
  if (vary2) {
    args[n++] = "--vary";
    args[n++] = vary2;
  }
  args[n] = NULL;
  cli_assert_bad_input(dir, args, needle);
  free(dir);
}

START_TEST(test_sweep_bad_vary)
{
  bad_sweep("sgd.lrr=0.1,0.2", NULL, "--vary sgd.lrr=0.1,0.2: unknown key 'lrr'");
  bad_sweep("nosection.lr=0.1", NULL, "unknown section");
  bad_sweep("sgd.lr=0.1,-1", NULL, "value '-1'");
  bad_sweep("sgd.lr=0.1,abc", NULL, "value 'abc'");
  bad_sweep("sgd.batch=8,0", NULL, "--vary sgd.batch=8,0: value '0'");
  /* valid as a number, invalid for this scenario: a linear model needs 2 sizes */
  bad_sweep("model.type=mlp,linear", NULL, "--vary model.type=mlp,linear: value 'linear'");
  bad_sweep("sgd.lr", NULL, "expected SECTION.KEY=V1,V2");
  bad_sweep("lr=0.1", NULL, "expected SECTION.KEY=V1,V2");
  bad_sweep("sgd.lr=", NULL, "no values");
  bad_sweep("sgd.lr=0.1,,0.2", NULL, "empty value");
  bad_sweep("sgd.lr=0.1,", NULL, "empty value");
  bad_sweep("sgd.lr=0.1,0.1", NULL, "listed twice");
  bad_sweep("sgd.lr=0.1", "sgd.lr=0.2", "already varied");
}
END_TEST

START_TEST(test_sweep_bad_options)
{
  char *dir = tiny_dir();
  const char *set[] = {"sweep", "tiny.ini", "--out", "out", "--vary", "sgd.lr=0.1", "--set", "sgd.lr=0.2", NULL};
  cli_assert_bad_input(dir, set, "also fixed by --set");
  const char *seed[] = {"sweep", "tiny.ini", "--out", "out", "--vary", "run.seed=1,2", "--seed", "3", NULL};
  cli_assert_bad_input(dir, seed, "also fixed by --seed");
  const char *none[] = {"sweep", "tiny.ini", "--out", "out", NULL};
  cli_assert_bad_input(dir, none, "nothing to vary");
  const char *missing[] = {"sweep", "nope.ini", "--out", "out", "--vary", "sgd.lr=0.1", NULL};
  cli_assert_bad_input(dir, missing, "nope.ini");
  /* an assignment the shell split at its blanks is named as such, not taken for a second
   * scenario file */
  const char *split_vary[] = {"sweep", "tiny.ini", "--out", "out", "--vary", "sgd.lr", "=", "0.1,0.2", NULL};
  cli_assert_bad_input(dir, split_vary, "the shell split the assignment");
  const char *split_set[] = {"sweep", "tiny.ini", "--out", "out", "--vary", "sgd.lr=0.1", "--set", "run.seed=", "2", NULL};
  cli_assert_bad_input(dir, split_set, "--set run.seed= 2: the shell split");
  const char *jobs[] = {"sweep", "tiny.ini", "--out", "out", "--vary", "sgd.lr=0.1", "--jobs", "0", NULL};
  cli_assert_bad_input(dir, jobs, "--jobs");
  /* a block's member is known only once a point has run (test_sweep_headline_metrics), but a
   * name no block can have is refused at once */
  const char *metric[] = {"sweep", "tiny.ini", "--out", "out", "--vary", "sgd.lr=0.1", "--plot-metric", "speed.up", NULL};
  cli_assert_bad_input(dir, metric, "--plot-metric speed.up");
  const char *status[] = {"sweep", "tiny.ini", "--out", "out", "--vary", "sgd.lr=0.1", "--plot-metric", "status", NULL};
  cli_assert_bad_input(dir, status, "--plot-metric status");
  const char *opt[] = {"sweep", "tiny.ini", "--out", "out", "--vary", "sgd.lr=0.1", "--frobnicate", NULL};
  cli_assert_bad_input(dir, opt, "--frobnicate");
  /* each value is valid alone, one combination is not: the point is named */
  cli_write(dir, "split.ini",
            "[run]\nalgorithm = downpour\nmax_steps = 5\n[model]\nlayers = 8,16,3\n"
            "[data]\ntrain = 400\ntest = 100\n[downpour]\nreplicas = 2\nps_shards = 1\n");
  const char *combo[] = {"sweep", "split.ini", "--out", "out", "--vary", "downpour.partitions=1,2", "--vary",
                         "downpour.overlap=off,on", "--emit-jobs", NULL};
  cli_assert_bad_input(dir, combo, "point 004-partitions=2-overlap=on: split.ini: downpour.overlap");
  /* another sweep into the same folder would mix two sweeps' points (the same one resumes:
   * test_sweep_resume) */
  const char *ok[] = {"sweep", "tiny.ini", "--quiet", "--out", "s", "--vary", "sgd.lr=0.1", NULL};
  free(run_expect(dir, ok, 0));
  const char *other[] = {"sweep", "tiny.ini", "--quiet", "--out", "s", "--vary", "sgd.lr=0.2", NULL};
  char *err = run_expect(dir, other, 2);
  ck_assert_msg(cli_lines(err) == 1 && strstr(err, "--out s: holds a sweep of another grid"), "%s", err);
  free(err);
  /* a folder with points/ but no sweep.json (an older dtsim's) cannot be told apart */
  char path[1024];
  snprintf(path, sizeof(path), "%s/s/sweep.json", dir);
  ck_assert_int_eq(remove(path), 0);
  err = run_expect(dir, ok, 2);
  ck_assert_msg(cli_lines(err) == 1 && strstr(err, "already holds a sweep that cannot be resumed"), "%s", err);
  free(err);
  free(dir);
}
END_TEST

/* Runs shell command cmd in dir; returns its exit status. */
static int sh_in(const char *dir, const char *cmd)
{
  char line[2048];
  snprintf(line, sizeof(line), "cd '%s' && %s", dir, cmd);
  int st = system(line);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

START_TEST(test_sweep_emit_merge)
{
  char *dir = tiny_dir();
  sweep_lr_batch(dir, "direct", "2");
  /* a folder name with a blank: the commands must quote it */
  const char *emit[] = {"sweep", "tiny.ini", "--vary", "sgd.lr=0.01,0.1,0.5", "--vary", "sgd.batch=8,32",
                        "--quiet", "--out", "by jobs", "--emit-jobs", NULL};
  free(run_expect(dir, emit, 0));
  ck_assert_int_eq(sh_in(dir, "cp stdout jobs.txt"), 0);
  char *jobs = cli_read(dir, "jobs.txt");
  ck_assert_int_eq(cli_lines(jobs), 6);
  ck_assert_msg(strncmp(jobs, "cd /", 4) == 0 && strstr(jobs, " && /") && strstr(jobs, "/dtsim run tiny.ini "),
                "%s", jobs);
  ck_assert_msg(strstr(jobs, "--out 'by jobs/points/001-lr=0.01-batch=8'"), "%s", jobs);
  ck_assert(!cli_exists(dir, "by jobs/sweep.csv"));
  /* before the points have run, --merge says which one has no result */
  const char *merge[] = {"sweep", "--merge", "by jobs", "--quiet", NULL};
  char *err = run_expect(dir, merge, 2);
  ck_assert_msg(cli_lines(err) == 1 && strstr(err, "001-lr=0.01-batch=8"), "%s", err);
  free(err);
  /* a Slurm array task runs line N: sed -n "${SLURM_ARRAY_TASK_ID}p" jobs.txt | sh */
  for (int task = 6; task >= 1; task--) {
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "sed -n '%dp' jobs.txt | sh", task);
    ck_assert_int_eq(sh_in(dir, cmd), 0);
  }
  free(run_expect(dir, merge, 0));
  char *a = cli_read(dir, "direct/sweep.csv"), *b = cli_read(dir, "by jobs/sweep.csv");
  ck_assert_ptr_nonnull(b);
  ck_assert_msg(strcmp(a, b) == 0, "direct:\n%semitted and merged:\n%s", a, b);
  ck_assert(cli_exists(dir, "by jobs/sweep.png"));
  /* the point folders alone, in any order, into another folder */
  const char *points[] = {"sweep", "--merge", "by jobs/points/004-lr=0.1-batch=32",
                          "by jobs/points/001-lr=0.01-batch=8", "by jobs/points/002-lr=0.01-batch=32",
                          "by jobs/points/006-lr=0.5-batch=32", "by jobs/points/003-lr=0.1-batch=8",
                          "by jobs/points/005-lr=0.5-batch=8", "--out", "merged", "--quiet", NULL};
  free(run_expect(dir, points, 0));
  char *c = cli_read(dir, "merged/sweep.csv");
  ck_assert_ptr_nonnull(c);
  ck_assert_str_eq(a, c);
  /* a missing point and a point given twice are refused */
  const char *partial[] = {"sweep", "--merge", "by jobs/points/001-lr=0.01-batch=8", "--out", "m2", "--quiet", NULL};
  err = run_expect(dir, partial, 2);
  ck_assert_msg(strstr(err, "point 2 of 6 is missing"), "%s", err);
  free(err);
  const char *twice[] = {"sweep", "--merge", "by jobs", "by jobs/points/003-lr=0.1-batch=8", "--quiet", NULL};
  err = run_expect(dir, twice, 2);
  ck_assert_msg(strstr(err, "point 3 is given twice"), "%s", err);
  free(err);
  free(a);
  free(b);
  free(c);
  free(jobs);
  free(dir);
}
END_TEST

/* An interrupted sweep, rerun with the same command, runs only its unfinished points and
 * ends with the files an uninterrupted sweep writes; another grid or scenario is refused. */
START_TEST(test_sweep_resume)
{
  char *dir = tiny_dir();
  sweep_lr_batch(dir, "out", "2");
  char *csv = cli_read(dir, "out/sweep.csv");
  ck_assert_ptr_nonnull(csv);
  ck_assert_int_eq(sh_in(dir, "cp out/sweep.png first.png"), 0);
  /* as a sweep stopped by Ctrl-C leaves it: no sweep.csv or sweep.png, a point without its
   * result (a run ended before summary.json), a point never started (no folder) */
  ck_assert_int_eq(sh_in(dir, "rm out/sweep.csv out/sweep.png out/points/003-lr=0.1-batch=8/summary.json && "
                              "rm -r out/points/005-lr=0.5-batch=8 && echo kept >> out/points/001-lr=0.01-batch=8/run.log"),
                   0);
  const char *again[] = {"sweep", "tiny.ini", "--vary", "sgd.lr=0.01,0.1,0.5", "--vary", "sgd.batch=8,32",
                         "--out", "out", "--jobs", "2", NULL};
  char *err = run_expect(dir, again, 0);
  ck_assert_msg(strstr(err, "resuming out: 4 of 6 points finished already, 2 to run") && strstr(err, "6/6 done"),
                "%s", err);
  free(err);
  /* the finished points were not run again: point 1's log keeps what was added to it */
  char *log = cli_read(dir, "out/points/001-lr=0.01-batch=8/run.log");
  ck_assert_msg(log && strstr(log, "kept\n"), "point 1 was run again: %s", log ? log : "(no log)");
  free(log);
  ck_assert(cli_exists(dir, "out/points/005-lr=0.5-batch=8/summary.json"));
  char *csv2 = cli_read(dir, "out/sweep.csv");
  ck_assert_ptr_nonnull(csv2);
  ck_assert_msg(strcmp(csv, csv2) == 0, "uninterrupted:\n%sresumed:\n%s", csv, csv2);
  ck_assert_msg(sh_in(dir, "cmp -s first.png out/sweep.png") == 0, "sweep.png differs from the uninterrupted sweep's");
  /* another scenario (a --set), another grid, another --cfg: one line, exit 2, nothing run */
  const char *set[] = {"sweep", "tiny.ini", "--vary", "sgd.lr=0.01,0.1,0.5", "--vary", "sgd.batch=8,32", "--set",
                       "run.max_steps=30", "--out", "out", NULL};
  err = run_expect(dir, set, 2);
  ck_assert_msg(cli_lines(err) == 1 && strstr(err, "another scenario (run.max_steps = 20 there, 30 here)"), "%s", err);
  free(err);
  const char *grid[] = {"sweep", "tiny.ini", "--vary", "sgd.lr=0.01,0.1", "--vary", "sgd.batch=8,32", "--out", "out", NULL};
  err = run_expect(dir, grid, 2);
  ck_assert_msg(cli_lines(err) == 1 && strstr(err, "another grid"), "%s", err);
  free(err);
  const char *cfg[] = {"sweep", "tiny.ini", "--vary", "sgd.lr=0.01,0.1,0.5", "--vary", "sgd.batch=8,32", "--out", "out",
                       "--cfg=network/crosstraffic:0", NULL};
  err = run_expect(dir, cfg, 2);
  ck_assert_msg(cli_lines(err) == 1 && strstr(err, "--cfg"), "%s", err);
  free(err);
  free(csv);
  free(csv2);
  free(dir);
}
END_TEST

/* A size sweep of a timing-only allreduce: each algorithm's summary.json blocks are
 * sweep.csv columns (collective.busbw_gbps), and --plot-metric names one by its end. */
START_TEST(test_sweep_headline_metrics)
{
  char *dir = tiny_dir();
  cli_write(dir, "coll.ini", "[run]\nalgorithm = collective\n[model]\nnumerics = off\n");
  const char *args[] = {"sweep", "coll.ini", "--vary", "collective.bytes=1024,65536,4194304", "--out", "out",
                        "--quiet", "--plot-metric", "busbw_gbps", NULL};
  free(run_expect(dir, args, 0));
  ck_assert(cli_exists(dir, "out/sweep.png"));
  char *csv = cli_read(dir, "out/sweep.csv");
  ck_assert_ptr_nonnull(csv);
  /* the plotted metric leads; a synchronous collective has no staleness columns, a
   * timing-only one no numeric check (null: left out) */
  int busbw = csv_column(csv, "collective.busbw_gbps"), algbw = csv_column(csv, "collective.algbw_gbps");
  ck_assert_msg(busbw == 1 && csv_column(csv, "collective.busbw_gbps_ratio") == 2 && algbw > 0 &&
                    csv_column(csv, "staleness.max") == -1 && csv_column(csv, "collective.check.exact") == -1 &&
                    csv_column(csv, "examples_per_s") == -1,
                "%s", csv);
  ck_assert_int_eq(csv_column(csv, "collective.per_stage"), -1); /* arrays are left out */
  static const char *const pts[] = {"001-bytes=1024", "002-bytes=65536", "003-bytes=4194304"};
  for (int i = 0; i < 3; i++) {
    char f[64], path[512];
    snprintf(path, sizeof(path), "%s/out/points/%s/summary.json", dir, pts[i]);
    json_t *summary = json_load_file(path, 0, NULL);
    ck_assert_ptr_nonnull(summary);
    json_t *coll = json_object_get(summary, "collective");
    csv_field(csv, i + 1, busbw, f, sizeof(f));
    assert_cell(f, json_real_value(json_object_get(coll, "busbw_gbps")), "busbw_gbps");
    csv_field(csv, i + 1, algbw, f, sizeof(f));
    assert_cell(f, json_real_value(json_object_get(coll, "algbw_gbps")), "algbw_gbps");
    json_decref(summary);
  }
  free(csv);
  /* a text column cannot be drawn: sweep.csv is kept, the line says how to draw another */
  const char *text[] = {"sweep", "--merge", "out", "--quiet", "--plot-metric", "collective.op", NULL};
  char *err = run_expect(dir, text, 2);
  ck_assert_msg(cli_lines(err) == 1 && strstr(err, "--plot-metric collective.op: not a numeric column") &&
                    strstr(err, "collective.busbw_gbps"),
                "%s", err);
  free(err);
  /* a name no summary.json block can have is refused before anything runs */
  char *fresh = tiny_dir();
  const char *bad[] = {"sweep", "tiny.ini", "--vary", "sgd.lr=0.1,0.2", "--out", "out", "--plot-metric",
                       "nosuchblock.busbw_gbps", NULL};
  cli_assert_bad_input(fresh, bad, "--plot-metric nosuchblock.busbw_gbps");
  free(fresh);
  free(dir);
}
END_TEST

START_TEST(test_sweep_failed_point)
{
  char *dir = tiny_dir();
  /* 20 steps reach about 0.7 accuracy (sim_sweep's tiny.ini): 0.5 is reached, 0.999 missed */
  const char *missed[] = {"sweep", "tiny.ini", "--vary", "run.target_accuracy=0.5,0.999", "--out", "out", NULL};
  char *err = run_expect(dir, missed, 0);
  ck_assert_msg(strstr(err, "2/2 done") != NULL, "no progress line: %s", err);
  free(err);
  char *csv = cli_read(dir, "out/sweep.csv"), f[64];
  ck_assert_int_eq(cli_lines(csv), 3);
  /* the points set a target and one reached it: the time to it is the metric, empty where
   * it was not reached */
  ck_assert_msg(strncmp(csv, "run.target_accuracy,time_to_target_s,time_to_target_s_ratio,", 60) == 0, "%s", csv);
  csv_field(csv, 1, csv_column(csv, "status"), f, sizeof(f));
  ck_assert_str_eq(f, "ok");
  csv_field(csv, 2, csv_column(csv, "status"), f, sizeof(f));
  ck_assert_str_eq(f, "target_not_reached");
  csv_field(csv, 2, 1, f, sizeof(f)); /* time_to_target_s: null */
  ck_assert_str_eq(f, "");
  free(csv);
  /* distbelief-2012 hosts have 16 cores: the second point's run fails with exit 2, found
   * only once its platform is loaded; the sweep names it and its log */
  const char *broken[] = {"sweep", "tiny.ini", "--vary", "platform.cores=1,32,2", "--out", "bad", "--quiet", NULL};
  err = run_expect(dir, broken, 2);
  ck_assert_msg(cli_lines(err) == 1 && strstr(err, "bad/points/002-cores=32") &&
                    strstr(err, "bad/points/002-cores=32/run.log") && strstr(err, "platform.cores"),
                "%s", err);
  ck_assert(cli_exists(dir, "bad/points/002-cores=32/run.log"));
  ck_assert(!cli_exists(dir, "bad/points/003-cores=2/summary.json")); /* not started after the failure */
  ck_assert(!cli_exists(dir, "bad/sweep.csv"));
  free(err);
  free(dir);
}
END_TEST

/* Without a scenario file a sweep runs the built-in scenario, as `dtsim run` does (issue 47:
 * it asked "which scenario?"); the built-in Downpour's updates can be stale, so its
 * staleness columns are there. */
START_TEST(test_sweep_default_scenario)
{
  char *dir = cli_tmpdir();
  const char *args[] = {"sweep", "--vary", "run.max_steps=2,3", "--out", "out", "--quiet", NULL};
  free(run_expect(dir, args, 0));
  char *csv = cli_read(dir, "out/sweep.csv");
  ck_assert_ptr_nonnull(csv);
  ck_assert_msg(strncmp(csv, "run.max_steps,step_time_s,step_time_s_ratio,", 44) == 0, "%s", csv);
  ck_assert_msg(csv_column(csv, "staleness.p99") > 0, "%s", csv);
  char f[64];
  csv_field(csv, 2, csv_column(csv, "steps"), f, sizeof f);
  ck_assert_str_eq(f, "60"); /* 3 steps of each of the built-in scenario's 20 replicas */
  char *jobs = NULL;
  const char *emit[] = {"sweep", "--vary", "run.max_steps=2,3", "--out", "emitted", "--emit-jobs", NULL};
  free(run_expect(dir, emit, 0));
  jobs = cli_read(dir, "stdout");
  ck_assert_msg(strstr(jobs, "/dtsim run --quiet --out emitted/points/001-max_steps=2 --set run.max_steps=2 "), "%s",
                jobs);
  free(jobs);
  free(csv);
  free(dir);
}
END_TEST

/* Everything knowable is checked before the first point runs, in one line with exit
 * status 2 and no sweep folder (issue 47: these ran the points first, or left the folder):
 * a metric no point reports, a truncated platform file, a platform with too few hosts. */
START_TEST(test_sweep_checks_first)
{
  char *dir = tiny_dir();
  const char *accuracy[] = {"sweep", "tiny.ini", "--set", "model.numerics=off", "--vary", "sgd.batch=8,16",
                            "--plot-metric", "final_accuracy", "--out", "out", NULL};
  cli_assert_bad_input(dir, accuracy, "--plot-metric final_accuracy: no point of this sweep reports it (timing only");
  const char *bare[] = {"sweep", "tiny.ini", "--vary", "sgd.batch=8,16", "--plot-metric", "accuracy", "--out", "out",
                        NULL};
  cli_assert_bad_input(dir, bare, "--plot-metric accuracy: no point of this sweep reports it");
  const char *stale[] = {"sweep", "tiny.ini", "--vary", "sgd.batch=8,16", "--plot-metric", "staleness.p99", "--out",
                         "out", NULL};
  cli_assert_bad_input(dir, stale, "--plot-metric staleness.p99: no point");
  /* one point of two reporting it is enough: the second runs Downpour */
  const char *either[] = {"sweep", "tiny.ini", "--vary", "run.algorithm=sgd,downpour", "--plot-metric", "p99",
                          "--emit-jobs", "--out", "either", NULL};
  free(run_expect(dir, either, 0));
  const char *mk[] = {"platform", "--hosts", "4", "--topology", "star", "-o", "star4.xml", NULL};
  free(run_expect(dir, mk, 0));
  char *xml = cli_read(dir, "star4.xml");
  ck_assert_ptr_nonnull(xml);
  xml[strlen(xml) / 2] = '\0';
  cli_write(dir, "cut.xml", xml);
  free(xml);
  const char *cut[] = {"sweep", "tiny.ini", "--vary", "platform.file=star4.xml,cut.xml", "--out", "out", NULL};
  cli_assert_bad_input(dir, cut, "platform.file cut.xml: looks truncated");
  /* the built-in Downpour needs 30 hosts */
  const char *small[] = {"sweep", "--vary", "platform.file=star4.xml", "--out", "out", NULL};
  cli_assert_bad_input(dir, small, "platform.file star4.xml: the platform has 4 hosts, point 1 needs 30");
  ck_assert(!cli_exists(dir, "dtsim-sweep"));
  free(dir);
}
END_TEST

START_TEST(test_sweep_categories_and_help)
{
  char *dir = tiny_dir();
  /* a non-numeric first key (categories on x) and values holding commas (';' lists) */
  const char *args[] = {"sweep", "tiny.ini", "--vary", "model.activation=tanh,relu", "--vary",
                        "model.layers=8,16,3;8,4,3", "--out", "out", "--quiet", "--plot-metric", "final_loss", NULL};
  free(run_expect(dir, args, 0));
  char *csv = cli_read(dir, "out/sweep.csv");
  ck_assert_int_eq(cli_lines(csv), 5);
  ck_assert_msg(strstr(csv, "\ntanh,\"8,16,3\",") && strstr(csv, "\nrelu,\"8,4,3\","), "%s", csv);
  ck_assert(cli_exists(dir, "out/sweep.png"));
  ck_assert(cli_exists(dir, "out/points/004-activation=relu-layers=8_4_3/summary.json"));
  free(csv);
  const char *help[] = {"sweep", "--help", NULL};
  free(run_expect(dir, help, 0));
  char *out = cli_read(dir, "stdout");
  ck_assert_msg(strstr(out, "--emit-jobs") && strstr(out, "--merge") && strstr(out, "SLURM_ARRAY_TASK_ID") &&
                    strstr(out, "(default: 1)"),
                "%s", out);
  free(out);
  free(dir);
}
END_TEST

static Suite *sweep_suite(void)
{
  Suite *s = suite_create("sweep");
  TCase *tc = tcase_create("product");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_sweep_product);
  tcase_add_test(tc, test_sweep_categories_and_help);
  tcase_add_test(tc, test_sweep_headline_metrics);
  tcase_add_test(tc, test_sweep_default_scenario);
  suite_add_tcase(s, tc);
  tc = tcase_create("determinism");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_sweep_jobs_identical);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_sweep_bad_vary);
  tcase_add_test(tc, test_sweep_bad_options);
  tcase_add_test(tc, test_sweep_failed_point);
  tcase_add_test(tc, test_sweep_checks_first);
  suite_add_tcase(s, tc);
  tc = tcase_create("emit");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_sweep_emit_merge);
  suite_add_tcase(s, tc);
  tc = tcase_create("resume");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_sweep_resume);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(sweep_suite)

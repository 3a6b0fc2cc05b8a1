/* sim_outputs.c - result files and closing lines that answer what a user compares: no
 * loss or accuracy where the run measures none (timing only, consensus), the common
 * "performance" block (step time, examples/s, flop rate per device and MFU, the workers'
 * compute / communication / exposed shares), per-GPU memory estimates for tensor and
 * pipeline runs. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_util.h"
#include "cli_util.h"
#include "sim/lab/reproduce.h"

/* Relative agreement of figures computed two ways from the same doubles (a few roundings). */
#define SAME_FIGURE_RTOL 1e-12

static const json_t *at(const json_t *j, const char *a, const char *b)
{
  const json_t *x = json_object_get(j, a);
  return b ? json_object_get(x, b) : x;
}

static double num(const json_t *j, const char *a, const char *b) { return json_number_value(at(j, a, b)); }

static int near(double a, double b) { return fabs(a - b) <= SAME_FIGURE_RTOL * fmax(fabs(a), fabs(b)); }

/* Runs dtsim with the NULL-terminated arguments in a fresh folder, into out/; returns
 * summary.json and the folder (*dir, to free) and the closing line (*line, to free). */
static json_t *run_out(const char *const *args, char **dir, char **line)
{
  *dir = cli_tmpdir();
  const char *a[64];
  size_t n = 0;
  for (; args[n]; n++)
    a[n] = args[n];
  a[n++] = "--out";
  a[n++] = "out";
  a[n] = NULL;
  json_t *j = cli_summary(*dir, a, "out");
  *line = cli_read(*dir, "stdout");
  return j;
}

START_TEST(test_outputs_timing_only_no_nan)
{
  const char *args[] = {"run", "--set", "model.numerics=off", "--set", "run.max_steps=10", "--set",
                        "downpour.replicas=2", "--set", "downpour.ps_shards=1", NULL};
  char *dir, *line;
  json_t *j = run_out(args, &dir, &line);
  ck_assert_msg(strstr(line, "nan") == NULL && strstr(line, "loss") == NULL && strstr(line, "accuracy") == NULL,
                "%s", line);
  char *csv = cli_read(dir, "out/progress.csv");
  ck_assert_msg(strncmp(csv, "sim_time_s,step,loss,accuracy\n", 30) == 0, "the header stays: %s", csv);
  ck_assert_msg(strstr(csv, "nan") == NULL, "%s", csv);
  const char *row = strchr(csv, '\n') + 1;
  ck_assert_msg(strcmp(row + strlen(row) - 3, ",,\n") == 0, "loss and accuracy empty: %s", row);
  ck_assert(json_is_null(at(j, "final_loss", NULL)) && json_is_null(at(j, "final_accuracy", NULL)));
  free(csv);
  free(line);
  json_decref(j);
  free(dir);
}
END_TEST

START_TEST(test_outputs_consensus_measures)
{
  const char *args[] = {"run", TEST_GOLDEN_DIR "/consensus-sync.ini", NULL};
  char *dir, *line;
  json_t *j = run_out(args, &dir, &line);
  ck_assert_msg(strstr(line, "consensus error") && strstr(line, "optimality gap") && strstr(line, "iteration 60"),
                "%s", line);
  ck_assert_msg(!strstr(line, "accuracy") && !strstr(line, "nan"), "%s", line);
  char *csv = cli_read(dir, "out/progress.csv");
  ck_assert_msg(strstr(csv, "nan") == NULL, "accuracy is not measured: an empty field, %s", csv);
  free(csv);
  /* its progress line (--progress, off a terminal) names the gap, never a loss or accuracy */
  const char *prog[] = {"run", TEST_GOLDEN_DIR "/consensus-sync.ini", "--progress", "--out", "p", NULL};
  ck_assert_int_eq(cli_run(dir, prog), 0);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(strstr(err, "dtsim: sim ") && strstr(err, " steps, gap ") && !strstr(err, "loss") &&
                    !strstr(err, "accuracy"),
                "%s", err);
  free(err);
  /* 9 agents x 60 iterations: an iteration takes sim_time / 60 */
  ck_assert(near(num(j, "performance", "step_time_s"), num(j, "sim_time_s", NULL) / 60));
  ck_assert_str_eq(json_string_value(at(j, "performance", "worker_role")), "agent");
  free(line);
  json_decref(j);
  free(dir);
}
END_TEST

/* The block's figures against the run's own: Downpour's replica step is sim_time x
 * replicas / steps, examples/s examples / sim_time; the shares are the replicas' mean in
 * breakdown, in per cent of the simulated time. */
START_TEST(test_outputs_performance_downpour)
{
  const char *args[] = {"run", TEST_GOLDEN_DIR "/downpour-plain.ini", NULL};
  char *dir, *line;
  json_t *j = run_out(args, &dir, &line);
  double t = num(j, "sim_time_s", NULL), steps = num(j, "steps", NULL), ex = num(j, "examples", NULL);
  double replicas = atof(json_string_value(at(at(j, "scenario", "downpour"), "replicas", NULL)));
  ck_assert(near(num(j, "performance", "step_time_s"), t * replicas / steps));
  ck_assert(near(num(j, "performance", "examples_per_s"), ex / t));
  ck_assert_str_eq(json_string_value(at(j, "performance", "worker_role")), "replica");
  const json_t *rep = at(j, "breakdown", "replica");
  ck_assert(near(num(j, "performance", "compute_pct"), 100 * json_number_value(json_object_get(rep, "compute_s")) / t));
  ck_assert(near(num(j, "performance", "comm_pct"), json_number_value(json_object_get(rep, "comm_pct"))));
  ck_assert(near(num(j, "performance", "mfu"),
                 num(j, "performance", "tflops_per_device") / num(j, "performance", "peak_tflops_per_device")));
  ck_assert_msg(strstr(line, "per replica step") && strstr(line, "examples/s") && strstr(line, "MFU") &&
                    strstr(line, "replica: compute"), "%s", line);
  /* the shares add up: these replicas compute 0.0074% and wait 95.2% (the committed golden
   * summary), the rest, idle, is said, not left for the reader to find */
  double c = num(j, "performance", "compute_pct"), w = num(j, "performance", "comm_pct");
  double idle = num(j, "performance", "idle_pct");
  ck_assert_msg(json_is_number(at(j, "performance", "idle_pct")) && idle > 1, "idle %g", idle);
  ck_assert_msg(fabs(c + w + idle - 100) < 100 * SAME_FIGURE_RTOL, "compute %g + comm %g + idle %g", c, w, idle);
  char said[64];
  snprintf(said, sizeof said, ", idle %.3g%%", idle);
  ck_assert_msg(strstr(line, said), "%s not in %s", said, line);
  free(line);
  json_decref(j);
  free(dir);
}
END_TEST

/* summary.json's comm.network_model is the model SimGrid ran: LV08 (SimGrid's default) for a
 * platform file without <config>, the file's own, or --cfg's over both. */
START_TEST(test_outputs_network_model)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "bare.xml",
            "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
            "<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n"
            "<host id=\"a\" speed=\"1Gf\"/>\n<host id=\"b\" speed=\"1Gf\"/>\n"
            "<link id=\"l\" bandwidth=\"125MBps\" latency=\"50us\"/>\n"
            "<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route>\n</zone>\n</platform>\n");
  const char *gen[] = {"platform", "--hosts", "2", "--topology", "star", "--network-model", "CM02", "-o", "cm02.xml",
                       NULL};
  ck_assert_int_eq(cli_run(dir, gen), 0);
  static const struct {
    const char *file, *cfg, *model;
  } runs[] = {{"bare.xml", NULL, "LV08"}, {"cm02.xml", NULL, "CM02"}, {"bare.xml", "--cfg=network/model:CM02", "CM02"}};
  for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
    char file[64], out[16];
    snprintf(file, sizeof file, "platform.file=%s", runs[i].file);
    snprintf(out, sizeof out, "out%zu", i);
    const char *args[] = {"run", "--set", "run.algorithm=collective", "--set", "collective.ranks=2", "--set", file,
                          "--quiet", "--out", out, runs[i].cfg, NULL};
    json_t *j = cli_summary(dir, args, out);
    ck_assert_str_eq(json_string_value(at(j, "comm", "network_model")), runs[i].model);
    json_decref(j);
  }
  free(dir);
}
END_TEST

/* SGD on one host at model.efficiency 1: the flops counted are the flops executed, so the
 * model flop utilisation is the compute share (minus what is executed but not counted). */
START_TEST(test_outputs_mfu_is_compute_share)
{
  const char *args[] = {"run", "--set", "run.algorithm=sgd", "--set", "run.max_steps=40", NULL};
  char *dir, *line;
  json_t *j = run_out(args, &dir, &line);
  double mfu = num(j, "performance", "mfu"), share = num(j, "performance", "compute_pct") / 100;
  ck_assert_msg(mfu > 0.9 * share && mfu <= share * (1 + SAME_FIGURE_RTOL), "MFU %g, compute share %g", mfu, share);
  free(line);
  json_decref(j);
  free(dir);
}
END_TEST

/* Tensor: the block agrees with the tensor block, and memory_per_gpu adds up: 2 ranks of
 * 2 layers of h = 64 in fp16: (12h^2 + 7h)/2 + 6h parameters per layer each, Adam's 12
 * bytes per parameter, Korthikanti's 2sbh/t per layer with recomputation and sequence
 * parallelism (s 16, b 2). */
START_TEST(test_outputs_tensor_memory)
{
  const char *args[] = {"run", TEST_GOLDEN_DIR "/tensor.ini", NULL};
  char *dir, *line;
  json_t *j = run_out(args, &dir, &line);
  const json_t *m = at(j, "tensor", "memory_per_gpu");
  double h = 64, params = 2 * ((12 * h * h + 7 * h) / 2 + 6 * h);
  ck_assert(near(json_number_value(json_object_get(m, "parameters")), params));
  ck_assert(near(json_number_value(json_object_get(m, "parameters_bytes")), 2 * params));
  ck_assert(near(json_number_value(json_object_get(m, "optimizer_bytes")), 12 * params));
  ck_assert(near(json_number_value(json_object_get(m, "activations_bytes")), 2 * 2 * 16 * 2 * h / 2));
  ck_assert(near(json_number_value(json_object_get(m, "total_bytes")), 16 * params + 2 * 2 * 16 * 2 * h / 2));
  ck_assert(near(num(j, "performance", "mfu"), num(j, "tensor", "fraction_of_peak")));
  ck_assert(near(num(j, "performance", "step_time_s"), num(j, "tensor", "step_time_s")));
  ck_assert_msg(strstr(line, "810 kB per GPU") && strstr(line, "MFU"), "%s", line);
  free(line);
  json_decref(j);
  free(dir);
}
END_TEST

/* Pipeline: memory_per_gpu is the most loaded stage's parameters, gradients and stash. */
START_TEST(test_outputs_pipeline_memory)
{
  const char *args[] = {"run", TEST_GOLDEN_DIR "/pipeline.ini", NULL};
  char *dir, *line;
  json_t *j = run_out(args, &dir, &line);
  const json_t *m = at(j, "pipeline", "memory_per_gpu"), *stages = at(j, "pipeline", "per_stage");
  double best = 0, eb = 4; /* fp32 */
  for (size_t s = 0; s < json_array_size(stages); s++) {
    const json_t *x = json_array_get(stages, s);
    double total = 2 * eb * json_number_value(json_object_get(x, "params")) +
                   json_number_value(json_object_get(x, "peak_stash_bytes"));
    best = fmax(best, total);
  }
  ck_assert(near(json_number_value(json_object_get(m, "total_bytes")), best));
  ck_assert(json_number_value(json_object_get(m, "optimizer_bytes")) == 0); /* SGD */
  ck_assert_msg(strstr(line, "per device") && strstr(line, "bubble") && strstr(line, "pp-device: compute"), "%s", line);
  free(line);
  json_decref(j);
  free(dir);
}
END_TEST

/* Every algorithm's summary.json has the block, with a step time. */
START_TEST(test_outputs_performance_everywhere)
{
  static const char *const golden[] = {"sgd", "downpour-plain", "consensus-async", "sandblaster", "collective",
                                       "dataparallel", "tensor-dp", "pipeline-3d"};
  for (size_t g = 0; g < sizeof golden / sizeof *golden; g++) {
    char ini[512];
    snprintf(ini, sizeof ini, "%s/%s.ini", TEST_GOLDEN_DIR, golden[g]);
    const char *args[] = {"run", ini, NULL};
    char *dir, *line;
    json_t *j = run_out(args, &dir, &line);
    double st = num(j, "performance", "step_time_s");
    ck_assert_msg(st > 0 && st <= num(j, "sim_time_s", NULL), "%s: step time %g", golden[g], st);
    /* shares of the simulated time; compute and communication may overlap (an asynchronous
     * allreduce behind a GEMM), the exposed part of communication may not exceed it */
    double c = num(j, "performance", "compute_pct"), w = num(j, "performance", "comm_pct");
    double x = num(j, "performance", "exposed_comm_pct"), top = 100 * (1 + SAME_FIGURE_RTOL);
    ck_assert_msg(c >= 0 && c <= top && w >= 0 && w <= top && x <= w * (1 + SAME_FIGURE_RTOL), "%s: %g, %g, %g",
                  golden[g], c, w, x);
    /* idle is the rest: the three add up to 100% unless compute and comm overlap */
    double idle = num(j, "performance", "idle_pct");
    ck_assert_msg(idle >= 0 && c + w + idle >= 100 * (1 - SAME_FIGURE_RTOL) &&
                      (idle == 0 || fabs(c + w + idle - 100) <= 100 * SAME_FIGURE_RTOL),
                  "%s: compute %g + comm %g + idle %g", golden[g], c, w, idle);
    ck_assert_msg(strstr(line, "compute") && strstr(line, ", idle ") && !strstr(line, "nan"), "%s: %s", golden[g],
                  line);
    free(line);
    json_decref(j);
    free(dir);
  }
}
END_TEST

/* The i-th (0-based) comma-separated field of line `line` (0: the header) of csv. */
static void csv_field_at(const char *csv, int line, int i, char *out, size_t len)
{
  const char *p = csv;
  for (int l = 0; l < line; l++)
    p = strchr(p, '\n') + 1;
  for (int k = 0; k < i; k++)
    p = strchr(p, ',') + 1;
  snprintf(out, len, "%.*s", (int)strcspn(p, ",\n"), p);
}

/* sweep.csv carries the performance figures, and sweep.png can plot them: --plot-metric mfu
 * leads the columns, then the others in their order. */
START_TEST(test_outputs_sweep_metrics)
{
  char *dir = cli_tmpdir();
  const char *args[] = {"sweep", TEST_GOLDEN_DIR "/sgd.ini", "--vary", "sgd.batch=8,16", "--plot-metric", "mfu",
                        "--quiet", "--out", "sw", NULL};
  int rc = cli_run(dir, args);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
  free(err);
  char *csv = cli_read(dir, "sw/sweep.csv");
  static const char *const cols[] = {"mfu", "mfu_ratio", "step_time_s", "examples_per_s", "tflops_per_device",
                                     "compute_pct", "comm_pct", "exposed_comm_pct"};
  static const int at[] = {1, 2, 11, 12, 13, 14, 15, 16}; /* sgd.batch, mfu and its ratio, then 8 columns first */
  char path[1200];
  snprintf(path, sizeof path, "%s/sw/points/002-batch=16/summary.json", dir);
  json_t *j = json_load_file(path, 0, NULL);
  snprintf(path, sizeof path, "%s/sw/points/001-batch=8/summary.json", dir);
  json_t *j1 = json_load_file(path, 0, NULL);
  for (int c = 0; c < 8; c++) {
    char name[64], value[64];
    csv_field_at(csv, 0, at[c], name, sizeof name);
    ck_assert_str_eq(name, cols[c]);
    csv_field_at(csv, 2, at[c], value, sizeof value);
    double want = c == 1 ? num(j, "performance", "mfu") / num(j1, "performance", "mfu") : num(j, "performance", cols[c]);
    /* sweep.csv's 6 significant digits (sim/lab/sweep_merge.c): within half a unit of the 6th */
    ck_assert_msg(fabs(strtod(value, NULL) - want) <= 5e-6 * fabs(want), "%s: %s against %.17g", cols[c], value, want);
  }
  json_decref(j);
  json_decref(j1);
  ck_assert(cli_exists(dir, "sw/sweep.png"));
  free(csv);
  free(dir);
}
END_TEST

/* The row of links.csv whose link is `name`, or NULL (a pointer into csv). */
static const char *link_row(const char *csv, const char *name)
{
  for (const char *p = csv; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
    if (strncmp(p, name, strlen(name)) == 0 && p[strlen(name)] == ',')
      return p;
  return NULL;
}

/* The row's fourth to seventh fields: "tier,from,to,sharing". */
static void row_tail(const char *row, char *out, size_t len)
{
  const char *p = row, *q;
  for (int k = 0; k < 3; k++)
    p = strchr(p, ',') + 1;
  q = p;
  for (int k = 0; k < 4; k++)
    q = strchr(q, ',') + 1;
  snprintf(out, len, "%.*s", (int)(q - p - 1), p);
}

/* links.csv names every link by its tier and the hosts whose messages crossed it. A ring
 * allreduce of 8 ranks on a star: host i's NIC carries i's sends (to i + 1) and the
 * backbone everything. 60 ranks on distbelief-2012 (two racks of 40): the ring crosses
 * racks between host-39 and host-40 and between host-59 and host-0, on rack uplinks. */
START_TEST(test_outputs_links_named)
{
  char *dir = cli_tmpdir();
  const char *gen[] = {"platform", "--hosts", "8", "--topology", "star", "-o", "star8.xml", NULL};
  ck_assert_int_eq(cli_run(dir, gen), 0);
  const char *star[] = {"run", "--set", "run.algorithm=collective", "--set", "collective.ranks=8", "--set",
                        "platform.file=star8.xml", "--quiet", "--out", "a", NULL};
  ck_assert_int_eq(cli_run(dir, star), 0);
  char *csv = cli_read(dir, "a/links.csv"), tail[256];
  ck_assert_msg(strncmp(csv, "link,bytes,utilization,tier,from,to,sharing,", 44) == 0, "%.60s", csv);
  row_tail(link_row(csv, "host_link_3_UP"), tail, sizeof tail);
  ck_assert_str_eq(tail, "host,host-3,host-4,shared");
  row_tail(link_row(csv, "host_link_3_DOWN"), tail, sizeof tail);
  ck_assert_str_eq(tail, "host,host-2,host-3,shared");
  row_tail(link_row(csv, "host_backbone"), tail, sizeof tail);
  ck_assert_str_eq(tail, "core,host-0..host-7 (8 hosts),host-0..host-7 (8 hosts),fatpipe");
  free(csv);
  /* racks of 40 (google-2004's; distbelief-2012's are 20) */
  const char *racks[] = {"run", "--set", "run.algorithm=collective", "--set", "collective.ranks=60", "--set",
                         "collective.bytes=65536", "--set", "model.numerics=off", "--set", "platform.preset=google-2004",
                         "--quiet", "--out", "b", NULL};
  ck_assert_int_eq(cli_run(dir, racks), 0);
  csv = cli_read(dir, "b/links.csv");
  int uplinks = 0, crossing = 0;
  for (const char *p = strchr(csv, '\n') + 1; *p; p = strchr(p, '\n') + 1) {
    row_tail(p, tail, sizeof tail);
    if (strncmp(tail, "uplink,", 7) == 0) {
      uplinks++;
      crossing +=
          strcmp(tail, "uplink,host-39,host-40,shared") == 0 || strcmp(tail, "uplink,host-59,host-0,shared") == 0;
    }
  }
  ck_assert_msg(uplinks == 4 && crossing == 4, "%d uplinks, %d on the two crossings: %s", uplinks, crossing, csv);
  free(csv);
  free(dir);
}
END_TEST

/* Every run with a curve draws it: progress.png (loss and accuracy against simulated
 * time); a run without one (a collective: one timing, no evaluation) draws none and a
 * rerun into the folder removes the earlier picture; without gnuplot one line says so
 * and the run ends as it would, its other files complete. */
START_TEST(test_outputs_progress_plot)
{
  char *dir = cli_tmpdir();
  /* 2,000 steps of 0.1 us, an evaluation every 20 us: 11 points */
  const char *sgd[] = {"run", "--set", "run.algorithm=sgd", "--set", "run.max_steps=2000", "--set",
                       "run.eval_every=0.00002", "--set", "model.layers=8,16,3", "--set", "data.train=400",
                       "--set", "data.test=100", "--quiet", "--out", "out", NULL};
  ck_assert_int_eq(cli_run(dir, sgd), 0);
  char png[1100];
  snprintf(png, sizeof png, "%s/out/progress.png", dir);
  unsigned w, h;
  cli_png_size(png, &w, &h);
  ck_assert_msg(w == 640 && h == 400, "%ux%u", w, h);
  ck_assert(!cli_exists(dir, "out/.progress.png.tmp"));
  const char *coll[] = {"run", "--set", "run.algorithm=collective", "--quiet", "--out", "out", NULL};
  ck_assert_int_eq(cli_run(dir, coll), 0);
  ck_assert_msg(!cli_exists(dir, "out/progress.png"), "a collective run has no curve to draw");
  setenv("PATH", "/nonexistent-dtsim-test", 1); /* no gnuplot to be found */
  ck_assert_int_eq(cli_run(dir, sgd), 0);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(cli_lines(err) == 1 && strstr(err, "no progress.png") && strstr(err, "is gnuplot installed"), "%s",
                err);
  ck_assert(cli_exists(dir, "out/summary.json") && cli_exists(dir, "out/progress.csv"));
  ck_assert(!cli_exists(dir, "out/progress.png") && !cli_exists(dir, "out/.progress.png.tmp"));
  free(err);
  free(dir);
}
END_TEST

/* When gnuplot runs but fails, the one line says how: its exit status, or the signal that
 * stopped it (a Ctrl-C reaches it too), not a question whether it is installed. */
START_TEST(test_outputs_gnuplot_failures)
{
  char *dir = cli_tmpdir();
  const char *sgd[] = {"run", "--set", "run.algorithm=sgd", "--set", "run.max_steps=200", "--set",
                       "run.eval_every=0.00002", "--set", "model.layers=8,16,3", "--set", "data.train=400",
                       "--set", "data.test=100", "--quiet", "--out", "out", NULL};
  const struct {
    const char *script, *says;
  } cases[] = {{"#!/bin/sh\nexit 3\n", "gnuplot failed to draw"}, {"#!/bin/sh\nkill -INT $$\n", "signal 2"}};
  char path[1100];
  snprintf(path, sizeof path, "%s/bin", dir);
  setenv("PATH", path, 1); /* the fake gnuplot below, and nothing else, is found */
  cli_mkdir(dir, "bin");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cli_write(dir, "bin/gnuplot", cases[i].script);
    char exe[1100];
    snprintf(exe, sizeof exe, "%s/bin/gnuplot", dir);
    ck_assert_int_eq(chmod(exe, 0755), 0);
    ck_assert_int_eq(cli_run(dir, sgd), 0);
    char *err = cli_read(dir, "stderr");
    ck_assert_msg(cli_lines(err) == 1 && strstr(err, "no progress.png") && strstr(err, cases[i].says) &&
                      !strstr(err, "installed"),
                  "%s", err);
    ck_assert(cli_exists(dir, "out/summary.json") && !cli_exists(dir, "out/progress.png"));
    free(err);
  }
  free(dir);
}
END_TEST

/* The plots draw the formula (the collectives' "paper") beside dtsim for both panels, with
 * the legends outside the plots (the canvas widened for them); the shared helper writes a
 * paper's numbers as a datablock, skipping what the paper leaves empty. */
START_TEST(test_outputs_reproduction_plots)
{
  char buf[256];
  const double x[] = {1, 2, 3}, y[] = {10, NAN, 0.25};
  int n = reproduce_gp_block(buf, sizeof buf, "paper", x, y, 3);
  ck_assert_str_eq(buf, "$paper << EOD\n1 10\n3 0.25\nEOD\n");
  ck_assert_int_eq(n, (int)strlen(buf));
  ck_assert_msg(strstr(REPRODUCE_GP_KEY, "outside"), "%s", REPRODUCE_GP_KEY);
#ifndef DTSIM_SANITIZE /* 81 runs take minutes under ASan's thread contexts: Release only */
  char *dir = cli_tmpdir();
  const char *args[] = {"reproduce", "collectives", "--quick", "--quiet", "--out", "q", NULL};
  ck_assert_int_eq(cli_run(dir, args), 0);
  char png[1100];
  snprintf(png, sizeof png, "%s/q/collectives.png", dir);
  unsigned w, h;
  cli_png_size(png, &w, &h);
  ck_assert_msg(w == 1800 && h == 640, "%ux%u", w, h);
  char *readme = cli_read(dir, "q/README.md");
  ck_assert_msg(strstr(readme, "the formula's (dashed, busbw x sim_time_s / formula_s)") &&
                    strstr(readme, "the legends are\noutside the plots"), "%s", readme);
  free(readme);
  free(dir);
#endif
}
END_TEST

static Suite *outputs_suite(void)
{
  Suite *s = suite_create("outputs");
  ADD_TCASE(s, "measures", test_outputs_timing_only_no_nan, test_outputs_consensus_measures);
  ADD_TCASE(s, "performance", test_outputs_performance_downpour, test_outputs_mfu_is_compute_share,
            test_outputs_tensor_memory, test_outputs_pipeline_memory, test_outputs_sweep_metrics,
            test_outputs_links_named, test_outputs_network_model);
  ADD_TCASE(s, "plots", test_outputs_reproduction_plots, test_outputs_progress_plot,
           test_outputs_gnuplot_failures);
  TCase *tc = tcase_create("everywhere");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_outputs_performance_everywhere);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(outputs_suite)

/* reproduce_pipeline.c - `dtsim reproduce pipeline`: the pipeline bubble of GPipe, 1F1B
 * (PipeDream-Flush) and Megatron's interleaved 1F1B (REFERENCES 3 and 4) against its
 * formula (p-1)/(m+p-1), or (p-1)/(vm+p-1) interleaved, for p in {2, 4, 8} stages and m in
 * {1, 4, 8, 16, 32} microbatches, on one Selene node (the PTD-P cluster), timing only. One
 * simulation per process. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "sim/output.h"
#include "sim/reproduce.h"

/* 16 dense layers of 8192 units (a GPT MLP's width at PTD-P's 8.3B-class scale); each stage
 * gets 16/p of them, each model chunk 16/(pv). b = 64 examples per microbatch makes a
 * layer's forward 2 x 8192^2 x 64 = 8.6 Gflop, 55 us at 156 Tflop/s (A100 fp16 peak 312
 * x efficiency 0.5, PTD-P's 52% of peak rounded), against 1 MiB activation messages that
 * cross the 300e9 B/s NVSwitch in 3.5 us: communication is small but not free. */
static const char pp_ini[] =
    "; dtsim reproduce pipeline: the pipeline bubble against its formula (GPipe, 1F1B, interleaved).\n"
    "; Each run sets pipeline.stages, pipeline.microbatches, pipeline.schedule and pipeline.chunks.\n"
    "; Timing only, one step.\n"
    "[run]\n"
    "algorithm = pipeline\n"
    "max_steps = 1\n"
    "[platform]\n"
    "preset = selene            ; 8 A100 (312e12 flop/s fp16) per node on NVSwitch, 300e9 B/s per GPU\n"
    "[model]\n"
    "layers = 8192,8192,8192,8192,8192,8192,8192,8192,8192,8192,8192,8192,8192,8192,8192,8192,8192\n"
    "numerics = off             ; timing only: flops from shapes, messages carry their size\n"
    "dtype = fp16               ; 2 bytes per element on the wire\n"
    "efficiency = 0.5           ; PTD-P reaches 52% of peak; only scales compute against communication\n"
    "[pipeline]\n"
    "stages = 2                 ; set per run: p\n"
    "microbatches = 1           ; set per run: m\n"
    "microbatch = 64            ; b\n"
    "schedule = 1f1b            ; set per run\n"
    "chunks = 1                 ; set per run: v (interleaved: 2)\n"
    "recompute = off\n";

static const long pp_stages[] = {2, 4, 8};
static const long pp_micro[] = {1, 4, 8, 16, 32};
static const char *const pp_sched[] = {"gpipe", "1f1b", "interleaved"};
#define PP_V 2 /* chunks per device for the interleaved rows */
#define PP_MAX_RUNS 45

typedef struct pp_run {
  const char *schedule;
  long stages, micro, chunks;
  double bubble, formula, makespan;
  long peak;
} pp_run;

/* --quick: p in {2, 4}, m in {1, 4, 8}: 16 runs of the full grid's 41, a few seconds. */
static size_t pp_grid(int quick, pp_run *runs, reproduce_job *jobs, const char *work)
{
  size_t n = 0;
  for (size_t k = 0; k < 3; k++)
    for (size_t i = 0; i < (quick ? 2 : 3); i++)
      for (size_t j = 0; j < (quick ? 3 : 5); j++) {
        long p = pp_stages[i], m = pp_micro[j], v = k == 2 ? PP_V : 1;
        if (k == 2 && m % p != 0)
          continue; /* Megatron's interleaved schedule needs m to be a multiple of p */
        runs[n] = (pp_run){pp_sched[k], p, m, v, 0, 0, 0, 0};
        reproduce_job *jb = &jobs[n];
        snprintf(jb->label, sizeof(jb->label), "%s p=%ld m=%ld v=%ld", pp_sched[k], p, m, v);
        snprintf(jb->sets[0], sizeof(jb->sets[0]), "pipeline.schedule=%s", pp_sched[k]);
        snprintf(jb->sets[1], sizeof(jb->sets[1]), "pipeline.stages=%ld", p);
        snprintf(jb->sets[2], sizeof(jb->sets[2]), "pipeline.microbatches=%ld", m);
        snprintf(jb->sets[3], sizeof(jb->sets[3]), "pipeline.chunks=%ld", v);
        jb->n_sets = 4;
        snprintf(jb->dir, sizeof(jb->dir), "%s/%s-p%ld-m%ld-v%ld", work, pp_sched[k], p, m, v);
        n++;
      }
  return n;
}

static int pp_read(pp_run *r, const reproduce_job *j, char *err, size_t len)
{
  char path[700];
  snprintf(path, sizeof(path), "%s/summary.json", j->dir);
  json_t *s = json_load_file(path, 0, NULL), *b = s ? json_object_get(s, "pipeline") : NULL;
  if (b == NULL) {
    json_decref(s);
    snprintf(err, len, "%s: no pipeline result", path);
    return -1;
  }
  r->bubble = json_number_value(json_object_get(b, "bubble_fraction"));
  r->formula = json_number_value(json_object_get(b, "formula"));
  r->makespan = json_number_value(json_object_get(b, "makespan_s"));
  json_t *st = json_object_get(b, "per_stage");
  for (size_t s2 = 0; s2 < json_array_size(st); s2++) {
    long pk = (long)json_integer_value(json_object_get(json_array_get(st, s2), "peak_stashed"));
    r->peak = pk > r->peak ? pk : r->peak;
  }
  json_decref(s);
  return 0;
}

static char *pp_csv(const pp_run *runs, size_t n)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fputs("schedule,stages,microbatches,chunks,bubble_fraction,formula,peak_stashed\n", f);
  for (size_t k = 0; k < n; k++)
    fprintf(f, "%s,%ld,%ld,%ld,%.17g,%.17g,%ld\n", runs[k].schedule, runs[k].stages, runs[k].micro, runs[k].chunks,
            runs[k].bubble, runs[k].formula, runs[k].peak);
  fclose(f);
  return text;
}

static char *pp_readme(const pp_run *runs, size_t n, int quick)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  double worst = 0, least = INFINITY;
  for (size_t k = 0; k < n; k++) {
    worst = fmax(worst, runs[k].bubble - runs[k].formula);
    least = fmin(least, runs[k].bubble - runs[k].formula);
  }
  fprintf(f,
          "# Pipeline bubble: GPipe, 1F1B and interleaved 1F1B against the formula\n\n"
          "Made by `dtsim reproduce pipeline%s` from `pipeline.ini` (one point by hand, from this folder:\n"
          "`dtsim run pipeline.ini --set pipeline.schedule=interleaved --set pipeline.stages=4 --set\n"
          "pipeline.microbatches=8 --set pipeline.chunks=2`). Each point is one simulation in its own\n"
          "process: one training step of `algorithms/pipeline.c`, every activation and gradient a message\n"
          "between stages, every forward and backward a SimGrid execution of its flops.\n\n"
          "## Set-up\n\n"
          "- Platform: the `selene` preset (PTD-P's cluster), stage s on GPU s of one node: 312e12 flop/s\n"
          "  fp16 peak at `model.efficiency = 0.5`, NVSwitch at 300e9 B/s per GPU per direction.\n"
          "- Model: 16 dense layers of 8192 units, timing only, fp16 on the wire; the layers split into\n"
          "  p (or p x v) equal contiguous chunks; microbatch b = 64 examples. A layer's forward is\n"
          "  2 x 8192^2 x 64 flops = 55 us, its backward twice that; an activation message is\n"
          "  64 x 8192 x 2 bytes + 64 = 1 MiB, 3.5 us on NVSwitch plus latency.\n"
          "- Grid: p in {2, 4, 8}, m in {1, 4, 8, 16, 32}; `gpipe` and `1f1b` with v = 1; `interleaved`\n"
          "  with v = 2 only where m is a multiple of p (Megatron's schedule requires it): its rows\n"
          "  p = 2, m = 1; p = 4, m = 1; p = 8, m = 1 and 4 are skipped.\n\n"
          "## What is reported\n\n"
          "`bubble_fraction` is the idle share of the step's makespan averaged over the stages: for each\n"
          "stage, (makespan - time computing forwards and backwards - time applying the update) /\n"
          "makespan. Idle includes waiting for messages. `formula` is the same share for equal stages and\n"
          "free communication: (p-1)/(m+p-1) for GPipe and 1F1B, (p-1)/(vm+p-1) for interleaved. PTD-P\n"
          "(sec. 2.2) writes the bubble as (p-1)/m (interleaved (p-1)/(vm)), a ratio to the *ideal* time\n"
          "m(t_f+t_b), not to the total; summary.json's `formula_ideal` gives that convention. Both say\n"
          "the same thing: the bubble time is (p-1)(t_f+t_b), divided by v when interleaved.\n"
          "`peak_stashed` is the most (microbatch, chunk) pairs any stage holds activations for: m for\n"
          "GPipe, p for 1F1B (stage 0; stage s holds p-s), more for interleaved, whose warm-up runs\n"
          "(p-s-1) x 2 + (v-1) x p chunk-forwards (every one of the m v when m = p) and whose chunks are\n"
          "each 1/v of a stage.\n\n"
          "## Simulated vs formula\n\n"
          "| schedule | p | m | v | simulated bubble | formula | difference | peak stashed |\n"
          "|---|---|---|---|---|---|---|---|\n",
          quick ? " --quick" : "");
  for (size_t k = 0; k < n; k++)
    fprintf(f, "| %s | %ld | %ld | %ld | %.4f | %.4f | %+.4f | %ld |\n", runs[k].schedule, runs[k].stages,
            runs[k].micro, runs[k].chunks, runs[k].bubble, runs[k].formula, runs[k].bubble - runs[k].formula,
            runs[k].peak);
  fprintf(f,
          "\nThe simulated bubble is %s the formula by %.4f to %.4f. The formula\n"
          "assumes free communication; here each stage boundary costs a message per microbatch each way\n"
          "(and interleaving has v times as many boundaries), which the last stages wait for during the\n"
          "warm-up and the first stages during the cool-down. GPipe and 1F1B share the formula (the\n"
          "same (m+p-1)(t_f+t_b) step) and differ in the stash, m against p; with communication 1F1B\n"
          "comes out slightly above GPipe, as its alternation puts a message wait between more pairs of\n"
          "operations. With equal stages and negligible communication, `tests/check_pipeline.c` checks\n"
          "the makespan (m+p-1)(t_f+t_b) and the bubble within 1%%, and interleaving's 1/v of the\n"
          "bubble time within 2%%.\n\n"
          "## PTD-P Table 1 comparison\n\n"
          "**Not done yet (placeholder).** A comparison with PTD-P's Table 1 (REFERENCES 3: e.g. 39.1B on\n"
          "512 GPUs with t = 8, p = 2 at 138 Tflop/s per GPU) needs tensor-parallel transformer stages\n"
          "(3D parallelism) and belongs here when they exist; no number in this folder stands for it.\n\n"
          "## Files\n\n"
          "`pipeline.csv`: `schedule,stages,microbatches,chunks,bubble_fraction,formula,peak_stashed`.\n"
          "`pipeline.png`: bubble fraction against microbatches, simulated points over the formula's\n"
          "lines. `--quick` runs p in {2, 4} and m in {1, 4, 8} (16 of the 41 runs), the same runs as the\n"
          "full grid's, so `dtsim reproduce pipeline --quick --check` compares them with this CSV.\n",
          least >= 0 ? "above" : "around", least, worst);
  fclose(f);
  return text;
}

static int pp_plot(const char *dir, const pp_run *runs, size_t n, char *err, size_t len)
{
  char *script = NULL;
  size_t slen = 0;
  FILE *f = open_memstream(&script, &slen);
  xbt_assert(f, "open_memstream failed");
  fprintf(f, "set terminal pngcairo size 1100,650\nset output '%s/.pipeline.png.tmp'\n", dir);
  /* one data block per (schedule, p): m, simulated, formula */
  int blocks = 0;
  char titles[9][64];
  for (size_t k = 0; k < 3; k++)
    for (size_t i = 0; i < 3; i++) {
      int any = 0;
      for (size_t r = 0; r < n; r++) {
        if (strcmp(runs[r].schedule, pp_sched[k]) != 0 || runs[r].stages != pp_stages[i])
          continue;
        if (!any)
          fprintf(f, "$d%d << EOD\n", blocks);
        any = 1;
        fprintf(f, "%ld %.6f %.6f\n", runs[r].micro, runs[r].bubble, runs[r].formula);
      }
      if (any) {
        fputs("EOD\n", f);
        snprintf(titles[blocks], sizeof(titles[blocks]), "%s p=%ld", pp_sched[k], pp_stages[i]);
        blocks++;
      }
    }
  fputs("set title 'Pipeline bubble on one Selene node: simulated (points) vs (p-1)/(m+p-1), (p-1)/(vm+p-1) (lines)'\n"
        "set logscale x 2\nset xrange [0.8:40]\nset yrange [0:1]\nset xlabel 'microbatches m'\n"
        "set ylabel 'bubble fraction (idle share of the step)'\nset key outside right\nset grid\nplot ",
        f);
  static const char *colors[] = {"#4477aa", "#ee6677", "#228833"};
  for (int b = 0; b < blocks; b++) {
    const char *c = colors[b % 3];
    int pt = 4 + 2 * (b / 3);
    fprintf(f, "%s$d%d using 1:2 with points pt %d ps 1.3 lc rgb '%s' title '%s', $d%d using 1:3 with lines dt %d lc rgb '%s' notitle",
            b ? ", " : "", b, pt, c, titles[b], b, 1 + b / 3, c);
  }
  fputs("\n", f);
  fclose(f);
  int rc = reproduce_plot(dir, "pipeline", script, err, len);
  free(script); /* open_memstream's */
  return rc;
}

int reproduce_pipeline(const reproduce_opts *o, char *err, size_t len)
{
  if (output_write_file(o->work, "pipeline.ini", pp_ini, strlen(pp_ini), err, len) != 0)
    return 2;
  pp_run runs[PP_MAX_RUNS];
  reproduce_job *jobs = xbt_malloc0(PP_MAX_RUNS * sizeof(reproduce_job));
  size_t n = pp_grid(o->quick, runs, jobs, o->work);
  int rc = reproduce_run_jobs(o, "pipeline.ini", jobs, n, err, len) == 0 ? 0 : 2;
  for (size_t k = 0; k < n && rc == 0; k++)
    if (pp_read(&runs[k], &jobs[k], err, len) != 0)
      rc = 2;
  char *csv = rc == 0 ? pp_csv(runs, n) : NULL;
  if (rc == 0 && o->check) {
    char committed[600];
    snprintf(committed, sizeof(committed), "%s/pipeline.csv", o->out);
    rc = reproduce_check(csv, committed, o->quick, 0xFu, err, len); /* key: schedule,stages,microbatches,chunks */
    if (rc == 0 && !o->quiet)
      fprintf(stderr, "dtsim reproduce: pipeline matches %s\n", committed);
  } else if (rc == 0) {
    char *readme = pp_readme(runs, n, o->quick);
    const char *files[] = {"pipeline.ini", pp_ini, "pipeline.csv", csv, "README.md", readme};
    if (reproduce_write(o->out, files, 3, err, len) != 0 || pp_plot(o->out, runs, n, err, len) != 0)
      rc = 2;
    free(readme); /* open_memstream's */
    if (rc == 0 && !o->quiet)
      fprintf(stderr, "dtsim reproduce: wrote %s/pipeline.csv, pipeline.png, pipeline.ini, README.md\n", o->out);
  }
  for (size_t k = 0; k < n; k++)
    reproduce_remove_run(&jobs[k]);
  char path[600];
  snprintf(path, sizeof(path), "%s/pipeline.ini", o->work);
  unlink(path);
  free(csv); /* open_memstream's */
  xbt_free(jobs);
  return rc;
}

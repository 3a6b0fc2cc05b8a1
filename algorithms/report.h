#ifndef ALGORITHMS_REPORT_H
#define ALGORITHMS_REPORT_H
/* report.h - what an algorithm adds to a run's results once the engine has run: the
 * examples it trained on, blocks of summary.json and result files of its own (one CSV
 * row per batch, per stage...), collected here and written by sim/output; and the text
 * helpers those files are written with (doubles as %.17g, so that they round-trip). */

#include <stddef.h>
#include <jansson.h>

/* A growing text buffer; zero-initialise it, free s with xbt_free. */
typedef struct report_text {
  char *s;
  size_t len, cap;
} report_text;

void report_printf(report_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* x as %.17g; NaN is written "nan" whatever its sign bit. */
void report_double(report_text *t, double x);
/* A JSON number for x, or null when x is not finite. */
json_t *report_num(double x);

/* What users compare across runs, as summary.json's "performance" block holds it (sim
 * builds it from the report and the breakdown); NaN where a figure does not exist. */
typedef struct report_perf {
  double step_time_s;      /* simulated s of one step (report.step says of what) */
  const char *step;        /* "replica step", "step", "iteration", ... */
  double examples_per_s;   /* training examples per simulated s */
  double tflops_per_device; /* model flops per s per device that computes them, in 1e12 */
  double peak_tflops_per_device; /* a device's peak: host speed x cores x platform.speed_factor */
  double mfu;              /* tflops_per_device / peak_tflops_per_device */
  const char *worker_role; /* the breakdown role of the shares below */
  double compute_pct, comm_pct, exposed_comm_pct; /* its actors' mean, per cent of sim_time_s */
  double idle_pct;         /* 100 - compute_pct - comm_pct, at least 0: the rest, waits declared idle
                              (a pipeline's bubble) and what follows an actor's end, so the three
                              add up to 100% unless compute and comm overlap */
} report_perf;

/* How the run ended, as every algorithm's closing line may tell it. */
typedef struct report_outcome {
  const char *status;  /* metrics_status_name */
  double sim_time;     /* simulated s */
  long steps;          /* metrics_total_steps */
  int evaluated;       /* 1: loss and accuracy below are the last evaluation's */
  double loss, accuracy; /* NaN when the run measures none (timing only, consensus's accuracy) */
  int has_loss, has_accuracy; /* the run measures them (a diverged loss is measured, as NaN) */
  report_perf perf;
} report_outcome;

/* The closing line's common part after an algorithm's own words: "4.52 ms per replica
 * step, 8.9e+04 examples/s, 0.31 Tflop/s per device (MFU 1.5%); replica: compute 71%,
 * comm 25% (exposed 20%), idle 4%", figures that do not exist left out; with_rate 0 leaves out
 * the step time, examples/s and flop rate (an algorithm that says them its own way). */
void report_perf_text(const report_perf *p, int with_rate, char *buf, size_t len);
/* bytes as "812 MB", "41.3 TB" (decimal units, 3 digits). */
void report_bytes_text(double bytes, char *buf, size_t len);

typedef struct report_file {
  char name[64];
  report_text text;
} report_file;

typedef struct report {
  long examples;       /* training examples the run processed (summary.json "examples") */
  /* For the "performance" block (report_create leaves the doubles NaN, the rest 0): */
  double step_time_s;  /* simulated s of one step of one worker; NaN: sim_time_s x step_workers /
                          steps (the steps counted over that many workers), or none */
  size_t step_workers;
  const char *step;    /* what that step is ("replica step", "iteration"); NULL: "step" */
  double model_flops;  /* training flops of the run, from the shapes as the algorithm's paper counts
                          them; NaN: not counted */
  double flops_time_s; /* the simulated s those flops took; NaN: sim_time_s */
  size_t devices;      /* hosts that compute them; 0: hosts_used */
  const char *worker_role; /* the breakdown role whose shares the closing line gives; NULL: the first */
  json_t *blocks;      /* summary.json entries after "status", in the order added */
  report_file *files;  /* result files beside the common ones */
  size_t n_files;
  /* progress.csv columns of its own after the common four: their names ("a,b"), or NULL;
   * progress_rows holds one line per evaluation, in order, of their values ("1.5,0.02") */
  const char *progress_columns;
  report_text progress_rows;
  /* Devices the run does not simulate in full but mirrors exactly (pipeline.mirror_replicas):
   * device i (the run's hosts[i]) does what device twins[i] does, so its energy is its twin's
   * (sim/energy.c); n_twins entries, or NULL: every device is simulated. Freed by report_free. */
  size_t *twins;
  size_t n_twins;
} report;

/* An empty report; free with report_free (NULL is a no-op). */
report *report_create(void);
void report_free(report *r);
/* Adds summary.json's `key` block; takes the reference to block. */
void report_add_block(report *r, const char *key, json_t *block);
/* Adds the result file `name` (at most 63 characters) holding text; takes text's buffer
 * and leaves *text empty. */
void report_add_file(report *r, const char *name, report_text *text);

#endif

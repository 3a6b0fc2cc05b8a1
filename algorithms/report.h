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

/* How the run ended, as every algorithm's closing line may tell it. */
typedef struct report_outcome {
  const char *status;  /* metrics_status_name */
  double sim_time;     /* simulated s */
  long steps;          /* metrics_total_steps */
  int evaluated;       /* 1: loss and accuracy below are the last evaluation's */
  double loss, accuracy;
} report_outcome;

typedef struct report_file {
  char name[64];
  report_text text;
} report_file;

typedef struct report {
  long examples;       /* training examples the run processed (summary.json "examples") */
  json_t *blocks;      /* summary.json entries after "status", in the order added */
  report_file *files;  /* result files beside the common ones */
  size_t n_files;
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

#ifndef SIM_OUTPUT_H
#define SIM_OUTPUT_H
/* output.h - the result files of a run: summary.json, progress.csv, staleness.csv,
 * links.csv, breakdown.csv, the pictures and the algorithm's own (report.h), each written
 * to a temporary name and renamed when complete; and --expect, the comparison with a
 * saved result. */

#include <stddef.h>
#include <jansson.h>

#include "sim/output_result.h"
#include "sim/scenario.h"

/* Creates dir if needed and writes the five result files (summary.json, progress.csv,
 * staleness.csv, links.csv, breakdown.csv) into it atomically, trace.json when
 * r->trace_ev is set, and the algorithm's own files (r->rep); summary.json holds the
 * algorithm's blocks after "status" and is written last, so a folder holding it holds
 * the whole result (a resumed sweep counts such a point as finished). When dir held another run (a dtsim summary.json),
 * that run's result files this one did not write are removed afterwards; other files
 * stay. Returns 0, or -1 with one line in err. */
int output_write_all(const char *dir, const run_result *r, char *err, size_t errlen);

/* A saved result --expect compares with: summary.json, or progress.csv or consensus.csv
 * (told apart by the CSV's header line, whatever the file's name). */
typedef struct output_expected {
  const char *name;   /* the result file of the run it compares with */
  char *text;
  json_t *json;       /* summary.json parsed, or NULL for a CSV */
} output_expected;

/* Reads and checks a saved file before the run: 0, or -1 with one line in err (cannot
 * be read, not valid JSON, not one of the three kinds). Free with output_expect_free. */
int output_expect_load(const char *path, output_expected *e, char *err, size_t len);
void output_expect_free(output_expected *e);

/* What the run's results cannot match whatever they are: a summary.json's "scenario" block
 * against sc (every key, as the run's summary.json would write it). Returns 0 when it
 * agrees (or e is a CSV, which holds no scenario), 1 with the first difference in msg. */
int output_expect_scenario(const output_expected *e, const scenario *sc, char *msg, size_t msglen);

/* Compares dir's file of e's kind with e: 0 when equal (numbers within rtol: |a - b| <=
 * rtol x max(|a|, |b|); rtol 0: exactly), 1 with the first difference in msg. */
int output_expect_compare(const char *dir, const output_expected *e, double rtol, char *msg, size_t msglen);

/* Compares dir's summary.json, progress.csv or consensus.csv (chosen by expect_path's file name)
 * with the saved file. Returns 0 when equal, 1 with the first differing value in
 * msg, or 2 if expect_path cannot be read or is neither kind of file. */
int output_expect(const char *dir, const char *expect_path, char *msg, size_t msglen);

/* Whether a result folder can be created at out later: out, or else its nearest existing
 * ancestor, must be a directory a folder can be made in, and out must not hold a
 * summary.json of another kind than dtsim's. Returns 0, or -1 with a one-line message. */
int output_dir_unusable(const char *out, char *err, size_t len);


#endif

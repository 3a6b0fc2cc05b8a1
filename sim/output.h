#ifndef SIM_OUTPUT_H
#define SIM_OUTPUT_H
/* output.h - the result files of a run (SPEC section 6): summary.json,
 * progress.csv, staleness.csv, links.csv (and Sandblaster's batches.csv), each written
 * to a temporary name and renamed when complete; and --expect, the comparison with a
 * saved result. */

#include <stddef.h>
#include <stdint.h>

#include "algorithms/consensus.h"
#include "algorithms/metrics.h"
#include "algorithms/sandblaster.h"
#include "sim/scenario.h"

typedef struct link_stat {
  char *name;
  double bytes;       /* cumulated load from SimGrid's link-load plugin */
  double utilization; /* bytes / (bandwidth * simulated time) */
} link_stat;

typedef struct run_result {
  const scenario *sc;
  double sim_time;
  long steps;
  long examples;
  metrics *m;
  const link_stat *links; /* sorted by name */
  size_t n_links;
  double bytes_total;     /* simulated bytes of all messages sent */
  size_t hosts_used;
  const char *status;
  const consensus_point *trace; /* consensus runs: written to consensus.csv; else NULL */
  size_t n_trace;
  const sandblaster *sandblaster; /* a Sandblaster run (its batches and L-BFGS state), or NULL */
} run_result;

/* Creates dir if needed and writes the four result files into it atomically, and
 * consensus.csv when r->trace is set, batches.csv for Sandblaster (summary.json then has
 * a "sandblaster" block).
 * Returns 0, or -1 with one line in err. */
int output_write_all(const char *dir, const run_result *r, char *err, size_t errlen);

/* Compares dir's summary.json, progress.csv or consensus.csv (chosen by expect_path's file name)
 * with the saved file. Returns 0 when equal, 1 with the first differing value in
 * msg, or 2 if expect_path cannot be read or is neither kind of file. */
int output_expect(const char *dir, const char *expect_path, char *msg, size_t msglen);

/* Writes len bytes to dir/name through dir/.name.tmp and rename(2). Returns 0 or -1. */
int output_write_file(const char *dir, const char *name, const char *data, size_t len, char *err,
                      size_t errlen);

/* The whole file at path, NUL-terminated (its length, without the NUL, into *len if
 * len is not NULL), or NULL if it cannot be opened. Caller frees with xbt_free. */
char *output_read_file(const char *path, size_t *len);

#endif

#ifndef SIM_OUTPUT_H
#define SIM_OUTPUT_H
/* output.h - the result files of a run (SPEC section 6): summary.json,
 * progress.csv, staleness.csv, links.csv (and Sandblaster's batches.csv), each written
 * to a temporary name and renamed when complete; and --expect, the comparison with a
 * saved result. */

#include <stddef.h>
#include <stdint.h>

#include "algorithms/collbench.h"
#include "algorithms/consensus.h"
#include "algorithms/dataparallel.h"
#include "algorithms/faults.h"
#include "algorithms/metrics.h"
#include "algorithms/pipeline.h"
#include "algorithms/sandblaster.h"
#include "algorithms/tensor.h"
#include "sim/scenario.h"

typedef struct link_stat {
  char *name;
  double bytes;       /* bytes of every message whose route crosses the link */
  double utilization; /* bytes / (bandwidth * simulated time) */
} link_stat;

/* A collective run (run.algorithm = collective): what summary.json's "collective" block
 * holds. alpha, beta and gamma come from the platform (the route between members 0 and
 * 1, the header bytes counted in alpha); formula_s is coll_formula with them. */
typedef struct collective_report {
  const char *op, *algorithm;
  size_t ranks, elements;
  double bytes, chunk_bytes;
  long iterations;
  collbench_result r;
  double alpha_s, beta_s_per_byte, gamma_s_per_byte, formula_s;
  double algbw_gbps, busbw_gbps; /* nccl-tests: bytes / time per iteration / 1e9, x busbw factor */
} collective_report;

/* A tensor-parallel run (run.algorithm = tensor): summary.json's "tensor" block. */
typedef struct tensor_report {
  const tensor_params *p;
  tensor_result r;
  double peak_flops;   /* per GPU host: its speed (model.efficiency not applied) */
} tensor_report;

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
  const collective_report *collective; /* a collective run, or NULL */
  const dataparallel *dataparallel;    /* a dataparallel run (its buckets), or NULL */
  const tensor_report *tensor;         /* a tensor run, or NULL */
  const run_actor_time *actors;        /* time breakdown per actor (run_breakdown), pid order */
  size_t n_actors;
  const run_trace_event *trace_ev;     /* dtsim run --trace: the timeline for trace.json, or NULL */
  size_t n_trace_ev;
  const fault_plan *faults;            /* a run with [faults] events ("faults" block), or NULL */
  const pipeline *pipeline;            /* a pipeline run (summary "pipeline" block, pipeline.csv), or NULL */
} run_result;

/* Creates dir if needed and writes the five result files (summary.json, progress.csv,
 * staleness.csv, links.csv, breakdown.csv) into it atomically, trace.json when
 * r->trace_ev is set, and
 * consensus.csv when r->trace is set, batches.csv for Sandblaster (summary.json then has
 * a "sandblaster" block).
 * Returns 0, or -1 with one line in err. */
int output_write_all(const char *dir, const run_result *r, char *err, size_t errlen);

/* Compares dir's summary.json, progress.csv or consensus.csv (chosen by expect_path's file name)
 * with the saved file. Returns 0 when equal, 1 with the first differing value in
 * msg, or 2 if expect_path cannot be read or is neither kind of file. */
int output_expect(const char *dir, const char *expect_path, char *msg, size_t msglen);

/* Writes len bytes to dir/name through dir/.name.tmp and rename(2). Returns 0 or -1. */
/* Whether a result folder can be created at out later: out, or else its nearest existing
 * ancestor, must be a writable directory. Returns 0, or -1 with a one-line message. */
int output_dir_unusable(const char *out, char *err, size_t len);

int output_write_file(const char *dir, const char *name, const char *data, size_t len, char *err,
                      size_t errlen);

/* The whole file at path, NUL-terminated (its length, without the NUL, into *len if
 * len is not NULL), or NULL if it cannot be opened. Caller frees with xbt_free. */
char *output_read_file(const char *path, size_t *len);

#endif

#ifndef SIM_OUTPUT_RESULT_H
#define SIM_OUTPUT_RESULT_H
/* output_result.h - what one run's result files are written from (output.h writes them,
 * output_links.h its links): the run's figures, its links with their traffic, the
 * algorithm's report, the time breakdown and the timeline. */

#include <stddef.h>
#include <stdint.h>

#include "algorithms/account.h"
#include "algorithms/faults.h"
#include "algorithms/metrics.h"
#include "algorithms/report.h"
#include "sim/energy.h"
#include "sim/scenario.h"

typedef struct link_stat {
  char *name;
  double bytes;       /* bytes of every message whose route crosses the link */
  double utilization; /* bytes / (bandwidth * simulated time) */
  char tier[8];       /* host, uplink, core or direct (sim/placement.c, placement_links) */
  char *from, *to;    /* the hosts whose messages crossed it: "host-3", "host-0..host-39 (40 hosts)" */
  char sharing[10];   /* shared (its bandwidth split among the flows crossing it), fatpipe (each
                         flow gets all of it) or loopback (only a host's messages to itself) */
  double peak_utilization; /* the busiest window's bytes / (bandwidth * the window's length) */
  double peak_at;     /* when that window starts, simulated s */
  double *series;     /* every window's utilization, run_result's link_windows of them */
  char where[64];     /* where the link is, on a platform dtsim wrote ("rack 3 uplink 2 up"), else "" */
} link_stat;

typedef struct run_result {
  const scenario *sc;
  double sim_time;
  long steps;
  metrics *m;
  const link_stat *links; /* sorted by name */
  size_t n_links;
  double link_window;     /* the windows' width (linkload.h), simulated s */
  size_t link_windows;    /* how many cover the run */
  double bytes_total;     /* simulated bytes of all messages sent */
  size_t hosts_used;
  const char *status;
  const report *rep;      /* what the algorithm adds: examples, summary blocks, result files */
  const account_actor *actors;        /* time breakdown per actor (account_breakdown), pid order */
  size_t n_actors;
  const account_event *trace_ev;     /* dtsim run --trace: the timeline for trace.json, or NULL */
  size_t n_trace_ev;
  const fault_plan *faults;            /* a run with [faults] events ("faults" block), or NULL */
  report_perf perf;                    /* the "performance" block */
  char network_model[32];              /* SimGrid's network/model for the run: LV08, CM02, ... */
  int has_loss, has_accuracy;          /* the run measures them: else progress.csv's fields are empty */
  energy_report *energy;               /* on a platform with power figures (the "energy" block and
                                          energy.csv), or NULL */
} run_result;

#endif

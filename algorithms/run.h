#ifndef ALGORITHMS_RUN_H
#define ALGORITHMS_RUN_H
/* run.h - what every algorithm's actors are handed: the validated run
 * configuration (hosts, model, data, costs, algorithm parameters) and the
 * metrics sink. sim/ fills it in; algorithms/ only reads it. */

#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_vector.h>
#include <simgrid/forward.h>

#include "models/data.h"
#include "models/net.h"
#include "models/objective.h"
#include "algorithms/settings.h"

/* Called by the evaluator after every evaluation (progress display); may be NULL. */
typedef void (*run_eval_fn)(void *ctx, double sim_time, long steps, double loss, double accuracy);

typedef struct run_config {
  uint64_t seed;
  double max_sim_time;    /* simulated s: no step starts after it */
  long max_steps;         /* minibatches per worker; 0: no limit */
  double target_accuracy; /* 0: none */
  double eval_every;      /* simulated s */

  sg_host_t *hosts;       /* in placement order; each algorithm documents who gets which */
  size_t n_hosts;
  int cores;              /* cores each training actor uses on its host (>= 1) */

  const net *model;       /* the numeric network (always set: its shapes are the default costs) */
  int numerics;           /* 0: timing only, no parameters or data are touched */
  const dataset *train;   /* NULL when numerics are off */
  const dataset *test;
  const gsl_vector *init; /* cfg->model's starting parameters (a warmstart), or NULL */
  double sim_params;      /* parameters that set message sizes (virtual or numeric) */
  double train_flops;     /* forward + backward flops per example (virtual or numeric) */
  double efficiency;      /* fraction of peak flop/s achieved, (0, 1] */
  double speed_factor;    /* what-if: hosts compute this many times faster; 0 counts as 1 */
  size_t elem_bytes;      /* bytes per element on the wire */
  double jitter;          /* coefficient of variation of per-phase processing time */
  double msg_overhead;    /* s of one core per message sent or received (RPC/TCP stack) */

  double straggler_fraction; /* [faults] stragglers: this share of the workers ... */
  double straggler_slowdown; /* ... computes this many times slower (>= 1) */
  const double *host_slowdown; /* [i]: factor on what hosts[i] computes (stragglers), or NULL */
  struct fault_plan *faults;   /* [faults] failures (faults.h), or NULL: no fault, no bounded waits */

  const scenario *sc;     /* the whole validated scenario: each algorithm reads its own section
                             (algorithm_params) and the common sections there */

  run_eval_fn on_eval;
  void *on_eval_ctx;
} run_config;

/* Call run_engine_setup once after simgrid_init and before any actor runs, and
 * run_engine_teardown after simgrid_run: they hold the lock run_execute needs. */
void run_engine_setup(void);
void run_engine_teardown(void);

/* Simulates `flops` of computation spread evenly over cfg->cores cores of the calling
 * actor's host, at cfg->efficiency of peak: it takes flops / (efficiency * cores * speed)
 * when the actor has its host to itself, as every actor here has. */
void run_execute(const run_config *cfg, double flops);

/* As run_execute, plus `bytes` of memory-bound work (elementwise kernels) at the host's
 * memory bandwidth, run_host_mem_bw: bytes / mem_bw seconds more, in the same execution.
 * Model efficiency and platform.speed_factor do not apply to that part (a faster ALU
 * does not move bytes faster); a straggler's slowdown does. The host must have mem_bw
 * when bytes > 0 (sim/ checks it before the run). */
void run_execute_mem(const run_config *cfg, double flops, double bytes);

/* The host's memory bandwidth in bytes/s: its `mem_bw` property (the dgx2h and selene
 * presets set it; <prop id="mem_bw" value="900e9"/> in a host or cluster of a platform
 * file), or 0 when it has none or it is not a positive finite number. */
double run_host_mem_bw(sg_host_t host);

/* As run_execute, but returns at once with the execution started; the caller waits for
 * it with sg_exec_wait (which frees it), so the actor can communicate meanwhile. */
sg_exec_t run_execute_async(const run_config *cfg, double flops);

/* The network whose shapes set the run's costs: model.virtual's, or else cfg->model's
 * layers as an arch, which *own then holds (the caller frees it with arch_free; *own is
 * NULL otherwise). */
const struct arch *run_shapes(const run_config *cfg, struct arch **own);

/* A role address "<prefix><number>" with nothing after ("replica3"): 1 with the number
 * in *k, else 0. */
int run_role_number(const char *name, const char *prefix, long *k);

/* A fresh copy of the run's starting parameters of cfg->model: cfg->init, or
 * minibatch_initial_params when it is NULL. Caller frees with gsl_vector_free. */
gsl_vector *run_initial_params(const run_config *cfg);

/* Keeps one core of the calling actor's host busy for `seconds` (per-message
 * protocol work, which does not spread over cores). No-op for seconds <= 0. */
void run_busy(double seconds);

/* ---- time breakdown: compute, communication and exposed communication per actor ----
 * Every actor is accounted under its role, its name without a trailing "-<rank>"
 * (mbox_name's names: "replica-3" is a "replica", "dp-comm-0" a "dp-comm"):
 *  - compute_s: seconds of its executions (run_execute, run_busy, run_execute_async);
 *  - comm_s: seconds it was blocked waiting for communication: msg_recv, run_comm_wait,
 *    run_comm_wait_all, or any other blocking call bracketed by run_comm_begin/_end
 *    (a server's idle wait for requests counts: it is blocked on the network);
 *  - exposed_comm_s: the part of comm_s during which no execution ran on its host, i.e.
 *    communication that compute did not hide (another actor on the same host computing,
 *    as DDP's communicator beside its replica, or the actor's own asynchronous execution,
 *    hides it).
 * To adopt it in a new algorithm: name actors with mbox_name, compute with run_execute or
 * run_execute_async + run_exec_wait, and wait with msg_recv / run_comm_wait /
 * run_comm_wait_all instead of sg_comm_wait / sg_comm_wait_all. An asynchronous
 * execution is taken to end flops / host speed after its start (exact when it has a
 * core to itself, as every execution here has). Thread-safe under parallel contexts;
 * sums do not depend on thread order. Needs run_engine_setup and host numbering
 * (msg_traffic_init) before actors run. */
void run_comm_begin(void);
void run_comm_end(void);
/* sg_comm_wait / sg_comm_wait_all, with the blocked time accounted. */
void run_comm_wait(sg_comm_t comm);
void run_comm_wait_all(sg_comm_t *comms, size_t n);
/* sg_exec_wait for an execution from run_execute_async (its time is already counted). */
void run_exec_wait(sg_exec_t exec);

/* ---- timeline (dtsim run --trace): the same events, kept one by one ----
 * Off by default; run_trace_enable(1) before the run keeps every execution and wait of
 * every accounted actor and every message sent (msg.c calls run_trace_send), for a
 * Chrome trace. Memory grows with the events: meant for short runs. */
typedef enum run_trace_kind {
  RUN_TRACE_COMPUTE, /* an execution: start, duration */
  RUN_TRACE_WAIT,    /* blocked on communication: start, duration */
  RUN_TRACE_SEND     /* a message handed to the network: start, bytes, destination host */
} run_trace_kind;

typedef struct run_trace_event {
  run_trace_kind kind;
  size_t actor;       /* index into run_breakdown's records */
  double start, dur;  /* simulated s (dur 0 for a send) */
  double bytes;       /* sends */
  const char *dst;    /* sends: the destination host's name (SimGrid's, valid during the run) */
} run_trace_event;

void run_trace_enable(int on);
/* Records a send of `bytes` by the calling actor to host dst (no-op unless enabled). */
void run_trace_send(sg_host_t dst, double bytes);
/* After run_breakdown: the events sorted by start, actor and order within the actor;
 * the array belongs to run.c (freed by run_engine_teardown). */
size_t run_trace(const run_trace_event **out);

/* One actor's breakdown, valid until run_engine_teardown. */
typedef struct run_actor_time {
  char *name;            /* SimGrid actor name, e.g. "replica-3" */
  char *role;            /* name without its "-<rank>", e.g. "replica" */
  char *host;            /* its host's name */
  double compute_s, comm_s, exposed_comm_s;
} run_actor_time;

/* After simgrid_run: closes every interval still open at end_time (actors blocked when
 * the run ended) and returns the number of accounted actors, their records in *out in
 * creation (pid) order. The array belongs to run.c (freed by run_engine_teardown). */
size_t run_breakdown(double end_time, const run_actor_time **out);

#endif

#ifndef ALGORITHMS_RUN_H
#define ALGORITHMS_RUN_H
/* run.h - what every algorithm's actors are handed: the run's configuration (hosts,
 * model, data, costs, the validated scenario with the algorithm's own section). sim/
 * fills it in; algorithms/ only reads it. What work costs is compute.h; how actors'
 * time is recorded, account.h. */

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
  sg_host_t *banks;       /* a parameter-server bank's hosts (algorithm_plan's bank), or NULL */
  size_t n_banks;
  int cores;              /* cores each training actor uses on its host (>= 1) */

  const net *model;       /* the numeric network (always set: its shapes are the default costs) */
  int numerics;           /* 0: timing only, no parameters or data are touched */
  const dataset *train;   /* NULL when numerics are off */
  const dataset *test;
  const dataset *noise_set; /* rows the gradient noise scale is measured on at each evaluation, or NULL */
  long curvature_rows;    /* the test set's first rows lambda_max is measured on at the last evaluation; 0: none */
  const gsl_vector *init; /* cfg->model's starting parameters (a warmstart), or NULL */
  double sim_params;      /* parameters that set message sizes (virtual or numeric) */
  double train_flops;     /* forward + backward flops per example (virtual or numeric) */
  double efficiency;      /* fraction of peak flop/s achieved, (0, 1] */
  double speed_factor;    /* what-if: hosts compute this many times faster; 0 counts as 1 */
  int kernel_shapes;      /* model.kernel_model = shapes: GPU hosts time kernels by shape (compute_gpu) */
  int comm_sms;           /* platform.comm_sms: collectives hold their GPU host's gpu_comm_sms SMs */
  const struct framework *framework; /* model.framework's era (models/framework.h), or NULL: none */
  size_t elem_bytes;      /* bytes per element on the wire (and kept: cost_dtype_wire_bytes) */
  size_t gemm_bytes;      /* bytes per element of a GEMM's operands (model.dtype's); 0: elem_bytes */
  double jitter;          /* coefficient of variation of per-phase processing time */
  double msg_overhead;    /* s of one core per message sent or received (RPC/TCP stack) */
  double msg_byte_overhead; /* s of one core per byte sent or received, on top (the TCP stack's) */
  size_t msg_cores;       /* cores that do that work side by side (list-scheduled); 0 counts as 1 */
  int msg_thread;         /* 1: that work on a network thread beside the compute (modelpar_net.h) */

  double straggler_fraction; /* [faults] stragglers: this share of the workers ... */
  double straggler_slowdown; /* ... computes this many times slower (>= 1) */
  const double *host_slowdown; /* [i]: factor on what hosts[i] computes (stragglers, speed spread), or NULL */
  struct fault_plan *faults;   /* [faults] failures (faults.h), or NULL: no fault, no bounded waits */

  const scenario *sc;     /* the whole validated scenario: each algorithm reads its own section
                             (algorithm_params) and the common sections there */

  run_eval_fn on_eval;
  void *on_eval_ctx;
} run_config;

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

#endif

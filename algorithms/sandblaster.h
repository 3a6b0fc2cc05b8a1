#ifndef ALGORITHMS_SANDBLASTER_H
#define ALGORITHMS_SANDBLASTER_H
/* sandblaster.h - Sandblaster L-BFGS (Dean et al. 2012, section 4.2 and Appendix): a
 * coordinator runs L-BFGS through small commands that parameter-server shards execute
 * on their slices of every vector, while model replicas compute the full-batch gradient
 * in portions the coordinator hands out, with backup copies near the end of a batch. */

#include <stddef.h>

#include "algorithms/algorithm.h"
#include "algorithms/metrics.h"
#include "algorithms/run.h"
#include "models/arch.h"
#include "models/lbfgs.h"

/* The [sandblaster] section. */
typedef struct sandblaster_params {
  int replicas;
  int ps_shards;
  int history;            /* L-BFGS pairs kept (m) */
  long portion;           /* examples per portion; 0: about ten portions per replica */
  long push_every;        /* a replica pushes after this many counted portions */
  int backups;            /* backup copies of outstanding portions near a batch's end */
  double backup_at;       /* fraction of a batch's portions counted before backups start */
  double gtol;            /* converged when ||grad||_2 <= gtol */
  int exact_sum;          /* pushes carry per-portion gradients, shards add them in portion order */
  int partitions;         /* machines per replica (model parallelism, sandblaster.c) */
  int ps_spread;          /* sandblaster.ps_placement = spread (ps_place_client, ps_place_shard) */
  int ps_bank;            /* sandblaster.ps_bank: ALGORITHM_BANK_AUTO, _EXACT or _ON */
} sandblaster_params;


/* run.algorithm = sandblaster */
extern const algorithm sandblaster_algorithm;

typedef struct sandblaster sandblaster;

/* One evaluation of the loss and its gradient over the training set (a batch). */
typedef struct sandblaster_batch {
  long iteration;    /* L-BFGS iterations completed when the batch started */
  double start, end; /* simulated s: the first portion handed out; the gradient summed on the shards */
  long portions;     /* portions the batch was cut into */
  long copies;       /* portion copies handed out: portions + backups */
  long backups;      /* backup copies handed out */
  long backup_wins;  /* portions whose counted copy was the backup */
  long discarded;    /* finished copies that did not count (another copy counted first) */
  long examples;     /* examples of the counted portions: the training set, each example once */
  double f;          /* mean training loss */
} sandblaster_batch;

/* Hosts the run needs: the R*K replicas' machines (K = partitions) and the S shards,
 * placed by ps_place_client and ps_place_shard (sandblaster.ps_placement; `after` with K = 1:
 * replicas on cfg->hosts[0..R-1], shards on [R..R+S-1]), then the coordinator on [R*K+S]. */
size_t sandblaster_hosts_needed(const sandblaster_params *p);
/* Metrics slots: one, the coordinator's (steps = L-BFGS iterations). */
size_t sandblaster_metrics_slots(void);

/* Creates the coordinator, replica, shard and evaluator actors for cfg (numerics on:
 * cfg->train is the batch; cfg and m outlive the run). With partitions = K > 1 each
 * replica is split by plan (K parts of the timed network, outliving the run; modelpar.h,
 * gather_logits as there), NULL for K = 1. Returns NULL if numerics are off, cfg has
 * fewer hosts than sandblaster_hosts_needed, more shards than parameters, or the plan
 * does not fit K.
 * Run the engine, then read the results below and free with sandblaster_free. */
sandblaster *sandblaster_deploy(const run_config *cfg, const sandblaster_params *p, const arch_plan *plan,
                                int gather_logits, metrics *m);
void sandblaster_free(sandblaster *sb);

/* After the run: L-BFGS's final state and counters. */
void sandblaster_result(const sandblaster *sb, lbfgs_result *r);
/* The batches in order; returns their number, the array stays owned by sb. */
size_t sandblaster_batches(const sandblaster *sb, const sandblaster_batch **b);
/* Examples of every counted portion of every batch. */
long sandblaster_examples(const sandblaster *sb);
/* Ranks of the straggling replicas, increasing; returns their number (array owned by sb). */
size_t sandblaster_stragglers(const sandblaster *sb, const int **ranks);

#endif

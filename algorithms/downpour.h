#ifndef ALGORITHMS_DOWNPOUR_H
#define ALGORITHMS_DOWNPOUR_H
/* downpour.h - Downpour SGD (Dean et al. 2012, section 4.1): R model replicas,
 * each on its own host and data shard, train asynchronously against S
 * parameter-server shards on their own hosts. */

#include <stddef.h>

#include "algorithms/algorithm.h"
#include "algorithms/metrics.h"
#include "algorithms/run.h"
#include "models/arch.h"
#include "models/archnet.h"

/* The [downpour] section. */
typedef struct downpour_params {
  int replicas;
  int ps_shards;
  long n_fetch;
  long n_push;
  long batch;
  double lr;
  int adagrad;
  double adagrad_gamma;
  long warmstart_steps;
  int overlap;
  int partitions;         /* machines per replica (model parallelism) */
  int waited_sends;       /* downpour.sends = waited (msg_set_waited_sends) */
  int ps_spread;          /* downpour.ps_placement = spread (ps_place_client, ps_place_shard) */
  double comm_quantum;    /* s; > 0: communication starts aligned on its multiples (an approximation) */
  int compress;           /* a compress_method (models/compress.h): how pushes are compressed */
  double compress_ratio, compress_momentum;
  long compress_warmup;
  int compress_levels;
  int ps_bank;            /* downpour.ps_bank: ALGORITHM_BANK_AUTO, _EXACT or _ON */
} downpour_params;


/* run.algorithm = downpour */
extern const algorithm downpour_algorithm;

typedef struct downpour downpour;

/* Hosts the run needs: R*K replica machines (replica r's partition q is client r*K + q;
 * K = partitions) and the S shards, placed among cfg->hosts by ps_place_client and
 * ps_place_shard (downpour.ps_placement). */
size_t downpour_hosts_needed(const downpour_params *p);

/* Creates the replica, shard and evaluator actors for cfg (numerics, data, hosts and
 * costs already set up by the caller, who keeps cfg and m alive until downpour_free).
 * With cfg->downpour.partitions = K > 1, every replica is split by plan (K parts,
 * arch of the simulated network; modelpar.h) and, with numerics, numeric (archnet
 * of the plan's arch) gives the numerics, with gather_logits as modelpar_deploy; with
 * numerics and numeric NULL (a virtual net's plan), cfg->model trains as a proxy
 * (downpour.c); plan is NULL for K = 1. All outlive the run. Returns NULL if cfg has fewer hosts
 * than downpour_hosts_needed or the plan does not fit K. Run the engine, then free
 * with downpour_free. */
downpour *downpour_deploy(const run_config *cfg, const downpour_params *p, const arch_plan *plan,
                          const archnet *numeric, int gather_logits, metrics *m);
void downpour_free(downpour *d);

/* The metrics slots a run uses: S shard slots then R replica slots. */
size_t downpour_metrics_slots(const downpour_params *p);

#endif

#ifndef ALGORITHMS_SGD_H
#define ALGORITHMS_SGD_H
/* sgd.h - plain sequential minibatch SGD on one host: the baseline every
 * distributed algorithm is measured against, and the reference that Downpour with
 * one replica and one shard must equal bit for bit. With sgd.partitions > 1 (or timing
 * only) the replica is split over machines (modelpar.h). */

#include <stddef.h>

#include "algorithms/algorithm.h"
#include "algorithms/metrics.h"
#include "algorithms/run.h"

/* The [sgd] section. */
typedef struct sgd_params {
  long batch;
  long partitions; /* machines the replica is split over (modelpar.h) */
  double lr;
} sgd_params;

/* run.algorithm = sgd */
extern const algorithm sgd_algorithm;

typedef struct sgd sgd;

/* The worker runs on cfg->hosts[0]. */
size_t sgd_hosts_needed(void);
size_t sgd_metrics_slots(void);

/* Creates the worker and evaluator actors; returns NULL if cfg has no host.
 * Run the engine, then free with sgd_free. */
sgd *sgd_deploy(const run_config *cfg, const sgd_params *p, metrics *m);
void sgd_free(sgd *s);

#endif

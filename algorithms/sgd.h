#ifndef ALGORITHMS_SGD_H
#define ALGORITHMS_SGD_H
/* sgd.h - plain sequential minibatch SGD on one host: the baseline every
 * distributed algorithm is measured against, and the reference that Downpour with
 * one replica and one shard must equal bit for bit. */

#include <stddef.h>

#include "algorithms/metrics.h"
#include "algorithms/run.h"

typedef struct sgd sgd;

/* The worker runs on cfg->hosts[0]. */
size_t sgd_hosts_needed(void);
size_t sgd_metrics_slots(void);

/* Creates the worker and evaluator actors; returns NULL if cfg has no host.
 * Run the engine, then free with sgd_free. */
sgd *sgd_deploy(const run_config *cfg, metrics *m);
void sgd_free(sgd *s);

#endif

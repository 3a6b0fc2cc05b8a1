#ifndef ALGORITHMS_DOWNPOUR_H
#define ALGORITHMS_DOWNPOUR_H
/* downpour.h - Downpour SGD (Dean et al. 2012, section 4.1): R model replicas,
 * each on its own host and data shard, train asynchronously against S
 * parameter-server shards on their own hosts. */

#include <stddef.h>

#include "algorithms/metrics.h"
#include "algorithms/run.h"

typedef struct downpour downpour;

/* Hosts the run needs: replicas on cfg->hosts[0..R-1], shards on [R..R+S-1]. */
size_t downpour_hosts_needed(const downpour_params *p);

/* Creates the replica, shard and evaluator actors for cfg (numerics, data, hosts and
 * costs already set up by the caller, who keeps cfg and m alive until downpour_free).
 * Returns NULL if cfg has fewer hosts than downpour_hosts_needed. Run the engine,
 * then free with downpour_free. */
downpour *downpour_deploy(const run_config *cfg, metrics *m);
void downpour_free(downpour *d);

/* The metrics slots a run uses: S shard slots then R replica slots. */
size_t downpour_metrics_slots(const downpour_params *p);

#endif

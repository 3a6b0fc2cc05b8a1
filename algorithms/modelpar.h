#ifndef ALGORITHMS_MODELPAR_H
#define ALGORITHMS_MODELPAR_H
/* modelpar.h - one model replica partitioned over P machines (Dean et al. 2012,
 * section 3), trained with plain minibatch SGD: every step each partition runs the
 * forward pass of its units layer by layer, receiving the activations it needs from
 * the partitions that own them and sending its own to those that need them, then the
 * backward pass the other way, then updates its own parameters. All machines wait
 * for the slowest one in each phase, as in the paper. Flops and message sizes come
 * from the network's shapes (models/arch); with numerics on, the messages carry the
 * real activations and gradients and every partition computes its units exactly
 * (models/archnet), so the replica trains the unpartitioned model. */

#include <stddef.h>

#include "algorithms/metrics.h"
#include "algorithms/run.h"
#include "models/arch.h"
#include "models/archnet.h"

typedef struct modelpar modelpar;

/* Partition p runs on cfg->hosts[p], p < arch_plan_parts(plan). */
size_t modelpar_hosts_needed(const arch_plan *plan);
size_t modelpar_metrics_slots(const arch_plan *plan);

/* Creates the partition actors for a replica of `a` split by `plan` (both outlive the
 * run); every partition runs exactly cfg->max_steps steps of cfg->sgd.batch examples.
 * With cfg->numerics, `numeric` (made for `a`; outlives the run) gives the numerics and
 * the data is cfg->train and cfg->test. `gather_logits`: the output layer couples its
 * units (softmax), so every partition receives all logits before the loss; 1 whenever
 * numerics are on with a softmax loss. Returns NULL if cfg has too few hosts or
 * max_steps is 0. Free after the run. */
modelpar *modelpar_deploy(const run_config *cfg, const arch *a, const arch_plan *plan,
                          const archnet *numeric, int gather_logits, metrics *m);
void modelpar_free(modelpar *mp);

#endif

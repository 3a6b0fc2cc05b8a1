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
#include <gsl/gsl_vector.h>
#include <simgrid/forward.h>

#include "algorithms/metrics.h"
#include "algorithms/run.h"
#include "models/arch.h"
#include "models/archnet.h"

typedef struct modelpar modelpar;
typedef struct modelpar_replica modelpar_replica;

/* A replica split over machines, as sgd.partitions and downpour.partitions ask: the
 * shapes timed (model.virtual's, or model.layers'), their partition plan, and with
 * numerics on a numeric model.layers the partitioned numerics. */
typedef struct modelpar_split {
  const arch *shapes;
  arch *own_shapes;       /* model.layers as an arch, when no virtual network is set */
  arch_plan *plan;
  archnet *numeric;       /* NULL: timing only, or a virtual net timed while model.layers trains (a proxy) */
  int gather_logits;      /* the output layer couples its units (softmax): see modelpar_deploy */
} modelpar_split;

/* Plans cfg's network over `parts` machines; NULL with one line in err (naming `key`)
 * when a tile would be empty or the numerics cannot be partitioned. Free with
 * modelpar_split_free (NULL is a no-op). */
modelpar_split *modelpar_split_create(const run_config *cfg, size_t parts, const char *key, char *err, size_t len);
void modelpar_split_free(modelpar_split *s);

/* Partition p runs on cfg->hosts[p], p < arch_plan_parts(plan). */
size_t modelpar_hosts_needed(const arch_plan *plan);
size_t modelpar_metrics_slots(const arch_plan *plan);

/* Creates the partition actors for a replica split by plan (which outlives the run);
 * every partition runs the same steps of p->batch examples (p is copied), until cfg->max_steps
 * (0: no limit) or the evaluator's stop (max_sim_time, target accuracy), and updates
 * its own parameters with plain SGD. With cfg->numerics and `numeric` (made for the
 * plan's arch; outlives the run) the partitions compute the numerics; with
 * cfg->numerics and numeric NULL (a virtual net timed, cfg->model trained: a proxy)
 * the plan's partitions take the time and cfg->model takes sequential SGD's steps
 * (sgd.c's parameters and minibatch stream). The data is cfg->train and cfg->test.
 * `gather_logits`: the output layer couples its units (softmax), so every partition
 * receives all logits before the loss; 1 whenever numerics are on with a softmax
 * loss. Returns NULL if cfg has too few hosts. Free after the run. */
/* What a replica split over machines trains with: sgd.batch and sgd.lr for sgd. */
typedef struct modelpar_opts {
  long batch;   /* examples per step */
  double lr;    /* plain SGD's rate */
} modelpar_opts;

modelpar *modelpar_deploy(const run_config *cfg, const modelpar_opts *p, const arch_plan *plan,
                          const archnet *numeric, int gather_logits, metrics *m);
void modelpar_free(modelpar *mp);

/* The forward and backward passes of one replica split by plan (Dean'12 sec. 3),
 * for algorithms that drive the partitions' actors themselves (sgd above, Downpour):
 * replica `rank`'s partition p runs on hosts[p] (the array outlives the replica) and
 * draws its minibatches of `batch` examples from rows [rows_begin, rows_end)
 * of cfg->train with the stream an unpartitioned replica of that rank uses. With
 * numerics (cfg->numerics and numeric not NULL), the passes read w and write each
 * partition's own entries of grad (both archnet_n_params long, owned by the caller,
 * outliving the replica). Never NULL; free with modelpar_replica_free after the run. */
modelpar_replica *modelpar_replica_create(const run_config *cfg, const arch_plan *plan, const archnet *numeric,
                                          int gather_logits, int rank, long batch, const sg_host_t *hosts,
                                          size_t rows_begin, size_t rows_end, const gsl_vector *w, gsl_vector *grad);
void modelpar_replica_free(modelpar_replica *r);
/* From partition p's actor, before its first step: its mailboxes take messages as
 * they are sent. */
void modelpar_replica_listen(modelpar_replica *r, size_t p);
/* From partition p's actor: its share of one minibatch's forward and backward pass,
 * exchanging activations and gradients with the other partitions (all of them must
 * run the same steps, in order). */
void modelpar_replica_step(modelpar_replica *r, size_t p, long step);
/* From partition p's actor before step `step`: whether to run it. The replica's
 * machines all run the same steps and none waits for a partner that has left: the
 * first to call with `stop` set (a stop request it sees) fixes the end at the
 * furthest step any of them has started. */
int modelpar_replica_goes_on(modelpar_replica *r, long step, int stop);

#endif

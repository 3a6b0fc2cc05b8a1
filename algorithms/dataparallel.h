#ifndef ALGORITHMS_DATAPARALLEL_H
#define ALGORITHMS_DATAPARALLEL_H
/* dataparallel.h - synchronous data parallelism (run.algorithm = dataparallel): k
 * replicas on k hosts sum their minibatch gradients with allreduces of gradient
 * buckets that overlap the backward pass (PyTorch DDP), then apply one SGD or Adam update;
 * dataparallel.zero shards the optimizer state, gradients and parameters over the replicas
 * (ZeRO stages 1 to 3, Rajbhandari et al. SC'20). */

#include <stddef.h>

#include "algorithms/algorithm.h"
#include "algorithms/compressed.h"
#include "algorithms/metrics.h"
#include "algorithms/run.h"
#include "models/arch.h"

/* The [dataparallel] section: replica r on hosts[r]. algo holds a coll_algo value
 * (collectives.h). */
typedef struct dataparallel_params {
  int replicas;
  long batch;          /* examples per replica per step */
  double lr;
  int algo;
  double bucket_mb;    /* MiB of wire bytes a gradient bucket reaches before it closes; 0: one bucket */
  int overlap;         /* 1: a bucket's allreduce starts as soon as backward has produced it */
  int zero;            /* ZeRO's stage, 0 to 3: 0 replicates everything (DDP); 1 shards the
                          optimizer state, 2 the gradients too, 3 the parameters too */
  int optimizer;       /* DATAPARALLEL_SGD or DATAPARALLEL_ADAM */
  int compress;        /* a compress_method (models/compress.h): how the buckets are exchanged */
  double compress_ratio, compress_momentum;
  long compress_warmup;
  int compress_levels, compress_rank;
  long local_steps;    /* H: local SGD averages the models every H steps; 1: gradients every step */
} dataparallel_params;

enum { DATAPARALLEL_SGD, DATAPARALLEL_ADAM };

/* run.algorithm = dataparallel */
extern const algorithm dataparallel_algorithm;

typedef struct dataparallel dataparallel;

/* One slot: the global steps (replica 0 counts them). */
size_t dataparallel_metrics_slots(void);

/* The gradient buckets of shapes (layers 1..n-1, filled from the last layer backwards;
 * a bucket closes once it holds at least bucket_bytes of elem_bytes elements; 0: one
 * bucket): returns their number, and with first != NULL writes bucket b's lowest layer
 * into first[b] and its element count into elems[b] (arrays of arch_n_layers(shapes)). */
size_t dataparallel_buckets(const arch *shapes, double bucket_bytes, size_t elem_bytes, size_t *first,
                            double *elems);

/* Creates the replica, communication and evaluator actors. shapes gives per-layer
 * parameters and flops (a virtual net, or model.layers as an arch); a numeric run needs
 * shapes to have cfg->model's layers. cfg, shapes and m outlive the run. Returns NULL
 * if cfg has fewer hosts than replicas, or a numeric run's shapes do not match
 * cfg->model or its data has fewer rows than replicas. Free with dataparallel_free
 * after the engine has run. */
dataparallel *dataparallel_deploy(const run_config *cfg, const dataparallel_params *p, const arch *shapes,
                                  metrics *m);
void dataparallel_free(dataparallel *d);

/* After the run: the buckets (returns their number; their simulated elements, last
 * layer's bucket first, into *elems, owned by d), and the bucket allreduces replica 0
 * ran (every replica runs as many). */
size_t dataparallel_bucket_elems(const dataparallel *d, const double **elems);
long dataparallel_allreduces(const dataparallel *d);
/* The compressed exchange (NULL for compress = none), owned by d. */
const compressed *dataparallel_compressed(const dataparallel *d);

#endif

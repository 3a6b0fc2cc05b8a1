#ifndef ALGORITHMS_DATAPARALLEL_IMPL_H
#define ALGORITHMS_DATAPARALLEL_IMPL_H
/* dataparallel_impl.h - synchronous data parallelism's private state: a replica, the run's
 * state, and the descriptor's state of a run. Shared by dataparallel.c (the actors, set-up),
 * dataparallel_config.c (the descriptor) and dataparallel_report.c (summary.json's block);
 * not part of the algorithm's interface (dataparallel.h). */

#include <stddef.h>
#include <gsl/gsl_vector.h>
#include <simgrid/forward.h>

#include "algorithms/collectives.h"
#include "algorithms/compute.h"
#include "algorithms/dataparallel.h"
#include "algorithms/eval.h"
#include "models/minibatch.h"

/* What a communicator runs, in the order its replica posts it: an allreduce or a
 * reduce-scatter of a unit's gradient, an allgather of a unit's parameters, or the end. */
typedef enum dp_op { DP_ALLREDUCE, DP_REDUCE_SCATTER, DP_ALLGATHER, DP_STOP } dp_op;

typedef struct dp_job {
  dp_op op;
  size_t unit;
} dp_job;

/* ZeRO's units (dataparallel.zero): the ranges of the parameter vector a collective carries
 * and a replica owns a block of. Stages 0 to 2: the gradient buckets; stage 3: the layers
 * (unit u is layer u + 1), each gathered before its forward and its backward and its
 * gradient reduce-scattered after its backward (FSDP with every layer wrapped). Replica r
 * owns block r (coll_block) of every unit: its shard. */
typedef struct replica {
  struct dataparallel *d;
  size_t rank;
  gsl_vector *w, *grad;  /* numerics: the whole parameters (stage 3: the buffer the layers are
                            gathered into) and this step's local gradient, summed in place */
  double *ws;            /* stage 3: its parameter shard */
  double *gs;            /* stages 2 and 3: its shard of the summed gradient */
  double *m1, *m2;       /* Adam's moments: of every parameter (stage 0) or of its shard */
  size_t *soff;          /* [u]: where its block of unit u starts in its shards; [nu]: their length */
  double shard_sim;      /* its shard's simulated elements */
  long adam_step;        /* updates applied, counted from 1 at the first */
  minibatch *mb;
  dp_job *queue;         /* jobs posted to its communicator, qcap of them in a ring */
  size_t qcap, posted, taken, seen; /* jobs posted, taken by the communicator, seen done */
  sg_sem_t ready;        /* released once per job posted */
  sg_sem_t done;         /* released once per job done */
  long allreduces;       /* allreduces, reduce-scatters and allgathers its communicator ran */
  long reduce_scatters, allgathers;
  long step;             /* the step it is in (a compressed exchange's DGC warm-up reads it) */
  int has_gpu;           /* its host has a GPU description: dense layers run as GEMMs */
  gemm_device gpu;
} replica;

struct dataparallel {
  const run_config *cfg;
  const dataparallel_params *p;
  size_t n_layers;       /* shapes' layers, input (layer 0) included */
  double fwd_flops;      /* forward flops per example, all layers */
  double *bwd_flops;     /* [l]: layer l's backward flops per example */
  gemm_shape *gemm;      /* [3 l + i], dense layer l on a GPU: forward, input and weight gradient
                            GEMMs of the minibatch (batch 0: not a dense layer) */
  size_t nb;             /* buckets; bucket 0 holds the last layer */
  size_t *first;         /* [b]: bucket b's lowest layer */
  double *elems;         /* [b]: its simulated elements */
  size_t nu;             /* ZeRO's units: nb buckets, or (stage 3) n_layers - 1 layers */
  double *uelems;        /* [u]: unit u's simulated elements */
  size_t *off, *len;     /* [u]: numerics, unit u's range of the parameter vector */
  coll_comm *comm;
  compressed *cz;        /* the compressed exchange, NULL for compress = none */
  double *avg;           /* local SGD: the buffer the models are averaged in, per replica */
  replica *reps;
  sg_bar_t start;        /* every step starts with every replica */
  int go;                /* replica 0's decision for the step about to start */
  sg_mutex_t mu;         /* guards the parameters the evaluator's snapshot reads: replica 0's w,
                            or (stage 3) every replica's shard */
  const arch *shapes;    /* outlives the run (dataparallel_deploy's contract) */
  metrics_slot *slot;
  eval_ctl *eval;
};

/* Elements a collective on unit u carries: its numeric or its simulated ones. */
size_t dataparallel_unit_n(const dataparallel *d, size_t u);

typedef struct dataparallel_run {
  const dataparallel_params *p;
  const arch *shapes;     /* the layers whose parameters and flops set the buckets and backward */
  arch *own_shapes;
  dataparallel *d;
} dataparallel_run;

/* summary.json's "dataparallel" block (dataparallel_report.c). */
void dataparallel_report(void *state, const run_config *cfg, metrics *m, report *rep);

#endif

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

typedef struct replica {
  struct dataparallel *d;
  size_t rank;
  gsl_vector *w, *grad;  /* numerics: parameters and this step's gradient, summed in place */
  minibatch *mb;
  sg_sem_t ready;        /* released once per bucket backward has produced, and once to stop */
  sg_sem_t reduced;      /* released once per step, when every bucket is reduced */
  int stopping;          /* set before the last release of ready */
  long allreduces;       /* bucket allreduces its communicator ran */
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
  size_t *off, *len;     /* [b]: numerics, its range of the parameter vector */
  coll_comm *comm;
  replica *reps;
  sg_bar_t start;        /* every step starts with every replica */
  int go;                /* replica 0's decision for the step about to start */
  sg_mutex_t mu;         /* guards replica 0's w against the evaluator's snapshot */
  const arch *shapes;    /* outlives the run (dataparallel_deploy's contract) */
  metrics_slot *slot;
  eval_ctl *eval;
};

typedef struct dataparallel_run {
  const dataparallel_params *p;
  const arch *shapes;     /* the layers whose parameters and flops set the buckets and backward */
  arch *own_shapes;
  dataparallel *d;
} dataparallel_run;

/* summary.json's "dataparallel" block (dataparallel_report.c). */
void dataparallel_report(void *state, const run_config *cfg, metrics *m, report *rep);

#endif

#ifndef ALGORITHMS_DOWNPOUR_IMPL_H
#define ALGORITHMS_DOWNPOUR_IMPL_H
/* downpour_impl.h - Downpour SGD's private state (Dean et al. 2012, sections 3 and 4.1):
 * a replica or a split replica's machine as a client of the shards, a split replica's
 * shared state, the run's state, and the descriptor's state of a run. Shared by
 * downpour.c (the replicas, set-up), downpour_config.c (the descriptor) and
 * downpour_report.c; not part of the algorithm's interface (downpour.h). */

#include <stddef.h>
#include <gsl/gsl_vector.h>
#include <simgrid/forward.h>

#include "algorithms/downpour.h"
#include "algorithms/eval.h"
#include "algorithms/faults.h"
#include "algorithms/modelpar.h"
#include "algorithms/msg.h"
#include "algorithms/ps.h"
#include "algorithms/ps_compress.h"
#include "algorithms/ps_layout.h"
#include "algorithms/ps_msg.h"
#include "models/minibatch.h"

/* With partitions = K > 1 each replica is split over K machines (Dean'12 sec. 3,
 * modelpar.c) and each machine fetches from and pushes to only the shards that hold
 * its own parameters, only those parameters (sec. 4.1): what a machine exchanges with
 * which shard is its layout (ps_layout.h), and a whole replica's layout is every
 * shard's whole slice, so that one loop runs both. A split replica of a virtual network
 * with numerics on trains a proxy: the virtual net's plan sets every machine's compute
 * and its shard traffic, while the numeric model.layers takes, once per replica step,
 * the gradient of a minibatch of the replica's own data at the parameters its machines
 * fetched, each machine pushing its block of it (ps_layout_proxy). Under [faults] (whole
 * replicas only) every wait of a step is bounded. */

struct rset;

/* One client of the shards: a whole replica, or machine `part` of a replica split over
 * K machines. */
typedef struct replica {
  struct downpour *d;
  int rank;                /* the replica */
  int part;                /* its machine; 0 for a whole replica */
  int client;              /* rank * K + part: its rank at the shards, its host and mailbox */
  sg_mailbox_t inbox;
  const ps_layout *lay;    /* what it exchanges with which shard: link i below is lay->link[i] */
  gsl_vector *w;           /* parameters last fetched (numerics); a split replica's machines share it, */
  gsl_vector *grad;        /* and the gradient of one minibatch: each touches its own entries */
  double *accrued;         /* gradients accrued since the last push, packed as lay says */
  long *fetched_version;   /* [i]: the shard's version of the parameters in w */
  long *accrued_version;   /* [i]: the version the oldest accrued gradient used */
  long accrued_steps;
  sg_comm_t *fetch_comms;  /* overlap: replies of the fetch in flight */
  msg **replies;
  int fetch_in_flight;
  sg_comm_t *push_comms;   /* overlap: the push in flight */
  ps_push_msg **push_msgs; /* [faults]: the push in flight, freed here if undelivered */
  int *push_served;        /* [faults]: [i] set by the shard that took push_msgs[i] */
  size_t push_next;        /* [faults]: the first push whose comm nobody waited for yet */
  int push_in_flight;
  minibatch *mb;           /* a whole replica's draws from its own shard of the data */
  modelpar_replica *mp;    /* a split replica's passes, run with its partners; NULL when whole */
  struct rset *set;        /* a split replica's shared state; NULL when whole */
  metrics_slot *slot;
  int stop;                /* a whole replica: the evaluator said stop after the last step */
  int released;            /* warmstart: replica 0 has released the others */
  long fetch_serial;       /* [faults]: numbers fetches, so that a late reply is recognised */
  long step;               /* the step it is in (top-k's warm-up reads it) */
  ps_compress *cz;         /* downpour.compress: its slices' error-feedback states; NULL: dense pushes */
} replica;

/* A split replica's shared state; its machines stop together (modelpar_replica_goes_on). */
typedef struct rset {
  modelpar_replica *rep;
  gsl_vector *w, *grad;    /* the replica's parameters and gradient (numerics) */
  minibatch *mb;           /* a proxy's draws from the replica's own data shard; NULL otherwise */
  long grad_step;          /* the step whose proxy gradient grad holds; -1: none yet */
} rset;

struct downpour {
  const run_config *cfg;
  const downpour_params *p;
  sg_host_t *client_hosts; /* [c]: client c's host (downpour.ps_placement) */
  gsl_vector *w;           /* the global parameters, sliced by the shards */
  ps_shard **shards;
  sg_mailbox_t *shard_box;
  struct ps_bank **banks;  /* downpour.ps_bank: the shards' network endpoints (ps_bank.h), or NULL */
  const sg_host_t *bank_hosts; /* [g]: bank g's host (cfg->banks) */
  int n_banks;
  double *shard_slowdown;  /* [s]: what shard s's own host would compute at (the bank's shards) */
  replica *replicas;       /* [r * K + q]: replica r's machine q */
  ps_layout **layouts;     /* [q]: what machine q of every replica exchanges with the shards */
  eval_ctl *eval;
  /* partitioned replicas (p->partitions > 1) */
  const arch_plan *plan;
  const archnet *numeric;
  int gather_logits;
  int proxy;               /* a virtual net's split replicas train model.layers in their place */
  rset *sets;              /* [replica] */
  archnet_ws *eval_ws;
  /* [faults] */
  fault_plan *fp;
  sg_mutex_t gone_mu;      /* guards finished and dead */
  int *finished, *dead;    /* [replica] */
  compress_params zp;      /* downpour.compress and its parameters */
};

/* The descriptor's state of a run (downpour_config.c), read by its report. */
typedef struct downpour_run {
  const downpour_params *p;
  modelpar_split *split; /* partitions > 1 */
  downpour *d;
} downpour_run;

/* The descriptor's report (downpour_report.c). */
void downpour_report_run(void *state, const run_config *cfg, metrics *m, report *rep);

#endif

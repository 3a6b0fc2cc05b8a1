#ifndef ALGORITHMS_MOE_IMPL_H
#define ALGORITHMS_MOE_IMPL_H
/* moe_impl.h - expert parallelism's private state, shared by moe.c (the actors),
 * moe_config.c (the descriptor) and moe_report.c (summary.json's block, moe_steps.csv,
 * the closing line); not part of the algorithm's interface (moe.h). */

#include <stddef.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_vector.h>
#include <simgrid/forward.h>

#include "algorithms/collectives.h"
#include "algorithms/eval.h"
#include "algorithms/moe.h"
#include "models/data.h"
#include "models/gpt.h"

/* One step's routing as rank 0 records it once every rank has routed. */
typedef struct moe_ep_step {
  double imbalance;      /* max / mean of the assignments routed to each expert, mean over the layers */
  double kept_imbalance; /* the same of the assignments kept (the rows each expert computes) */
  double dropped;        /* dropped assignments / all assignments */
  double bytes;          /* all-to-all payload bytes of the step, every pair and pass */
  double end_s;          /* simulated time at the step's end (rank 0) */
} moe_ep_step;

/* A rank: its data stream, its shard's rows and gradient, its packed non-expert gradient. */
typedef struct moe_ep_rank {
  struct moe_ep *m;
  size_t rank;
  gsl_rng *rng;
  gsl_matrix *seqs;   /* batch x (seq + 1) */
  double *y;          /* data_sample_batch's labels, unused */
  gsl_vector *g;      /* the gradient of its shard's loss, every parameter */
  double *pack;       /* its non-expert entries of g, as the allreduce carries them */
  double loss;        /* its shard's training loss this step */
  double a2a_s;       /* simulated s blocked in the dispatch and combine all-to-alls */
  size_t *scount, *rcount; /* P: an all-to-all's elements per peer */
} moe_ep_rank;

typedef struct moe_ep {
  const run_config *cfg;
  const moe_params *p;
  gpt_dims gd;            /* the rank's GPT: one routing group (its shard) */
  size_t n_params, n_dense; /* every parameter; the non-expert ones */
  size_t *dense_idx;      /* [n_dense]: where the non-expert entries are */
  size_t expert_size;
  dataset *tok_train, *tok_test;
  gsl_vector *w0, *w;     /* the initial and current parameters (one copy: ranks read it between updates) */
  double *m1, *m2;        /* Adam's moments of every entry (the experts' owners' and the replicated ones) */
  double *pm1, *pm2;      /* Adam's moments of the packed non-expert entries (replicated, applied once) */
  double *wpack;          /* the packed non-expert parameters, for their update */
  long updates;
  double initial_loss, initial_accuracy;
  /* this step's routing: [(l P + s) E + e] */
  size_t *kept, *routed, *dropped_of; /* dropped_of: [l P + s] */
  /* over the run */
  double *bytes;          /* [q P + r]: payload bytes member q sent member r in the all-to-alls */
  double *tokens;         /* [s P + q]: assignments rank s's dispatch sent rank q's experts */
  moe_ep_step *steps;
  size_t n_steps, cap_steps;
  double dropped_all, assigned_all;
  double train_loss;      /* the last step's, mean over the ranks */
  double end;             /* simulated time the last step ended */
  int go;
  coll_comm *comm;
  moe_ep_rank *ranks;
  sg_bar_t bar;
  sg_mutex_t mu;          /* the parameters the evaluator's snapshot reads */
  metrics_slot *slot;
  eval_ctl *eval;
  /* serial_check */
  int checked;
  double max_diff, max_moved;
} moe_ep;

/* The experts' owner: expert e of a layer lives on rank e / (E / P). */
static inline size_t moe_ep_owner(const moe_params *p, size_t e) { return e / (p->experts / p->ranks); }
/* Where layer l's expert e starts in the parameter vector. */
size_t moe_ep_expert_at(const moe_ep *m, size_t l, size_t e);

void *moe_ep_prepare(const run_config *cfg, char *err, size_t len);
void moe_ep_deploy(void *state, const run_config *cfg, metrics *mt);
void moe_ep_free(void *state);
/* After the run, with serial_check: the serial MoE GPT (routing groups = the ranks' shards)
 * trained on the same draws for the same steps; sets checked, max_diff, max_moved. */
void moe_ep_serial_check(moe_ep *m);
void moe_ep_report(void *state, const run_config *cfg, metrics *mt, report *rep);
void moe_ep_closing(void *state, const run_config *cfg, const report_outcome *o, char *line, size_t len);

#endif

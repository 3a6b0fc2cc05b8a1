#ifndef ALGORITHMS_SANDBLASTER_IMPL_H
#define ALGORITHMS_SANDBLASTER_IMPL_H
/* sandblaster_impl.h - Sandblaster L-BFGS's private state (Dean et al. 2012, section 4.2
 * and Appendix): the shards, the replicas and their machines, the coordinator's run,
 * and where each runs. Shared by sandblaster.c (coordinator, set-up),
 * sandblaster_workers.c (shards, replicas), sandblaster_config.c (the descriptor) and
 * sandblaster_report.c; not part of the algorithm's interface (sandblaster.h). */

#include <stddef.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>
#include <simgrid/forward.h>

#include "algorithms/eval.h"
#include "algorithms/faults.h"
#include "algorithms/modelpar.h"
#include "algorithms/msg.h"
#include "algorithms/portions.h"
#include "algorithms/ps_layout.h"
#include "algorithms/sandblaster.h"
/* before the typedefs below: its prototypes name parameters shard, replica, machine */
#include "algorithms/sandblaster_msg.h"

/* Simulated bytes of a scalar (a dot's partial sum, a command's coefficient, a loss, a
 * portion id): one double. A counted-or-not flag is one byte. */
#define SCALAR_BYTES 8.0

typedef struct shard {
  sandblaster *sb;
  int rank;
  size_t begin, end;  /* numeric slice of every slot */
  double sim_elems;   /* simulated elements of the slice (flops and bytes) */
  gsl_matrix *slots;  /* row i: the slice of slot i */
  sg_mailbox_t inbox;
  const ps_link **link; /* [q]: what machine q of every replica exchanges with it; NULL: nothing */
  /* the batch being gathered */
  long batch;         /* 0: none yet */
  long *received;     /* [q]: portions in the gradients received for it from the replicas' machines q */
  gsl_matrix *totals; /* [r]: replica r's latest running total (sum mode) */
  long *counts;       /* [r*K + q]: portions in the part of it machine q of replica r pushed */
  gsl_matrix *parts;  /* [p]: portion p's gradient (exact_sum) */
  char *have;         /* [p]: received */
  int *from;          /* [p]: the replica that pushed it (exact_sum) */
  int reduce_slot;    /* slot g of a reduce asked for, -1: none */
} shard;

struct replica;

/* Split replicas (partitions = K > 1, Dean'12 sec. 3 and 4.1). A replica's machines run
 * each portion's passes together (modelpar.c) over the plan of the timed network, and
 * each fetches and pushes only its own parameters, with the shards that hold them: its
 * layout (ps_layout_proxy), the numeric model training as a proxy whose values each shard
 * splits among the machines that talk to it. The first machine talks to the coordinator
 * and passes on to the others, in a PART message, what each answer asks of them; it adds
 * the counted gradients into the replica's running total, which every machine pushes its
 * part of, and takes the numeric gradient of a portion once the passes are done. A shard
 * has a replica's total when each of its machines that holds parameters of the shard has
 * pushed. With K = 1 a replica's layout is every shard's whole slice (ps_layout_whole). */

/* One machine of a replica: machine 0 is the replica's own actor, the others follow it. */
typedef struct machine {
  struct replica *r;
  int q;
  sg_mailbox_t inbox;
  sg_host_t host;
  const ps_layout *lay; /* what it exchanges with which shard */
  long batch;         /* the batch whose parameters it fetched; 0: none */
  sg_comm_t *push;    /* the push in flight, one comm per link */
  int pushing;
  sg_comm_t *comms;   /* fetch replies */
  msg **replies;
} machine;

typedef struct replica {
  sandblaster *sb;
  int rank;
  double slowdown;    /* [faults] stragglers: factor on its compute time */
  sg_mailbox_t inbox;
  long batch;         /* the batch whose parameters w holds; 0: none */
  gsl_vector *w;
  net_ws *ws;
  gsl_matrix *held;   /* row i: gradient of the i-th finished portion not yet counted */
  long *held_id;
  double *held_loss;
  long n_held;
  gsl_vector *total;  /* running total of its counted portions this batch (sum mode) */
  long n_counted;
  machine *m;         /* [K]: its machines, m[0] this actor's */
  modelpar_replica *mp; /* K > 1: the passes its machines run together */
  sg_host_t *hosts;   /* K > 1: [q]: machine q's host */
  long steps;         /* K > 1: portions computed (the passes' step numbers) */
} replica;

struct sandblaster {
  const run_config *cfg;
  const sandblaster_params *p;
  int R, S, K;        /* replicas, shards, machines per replica */
  const arch_plan *plan; /* K > 1: the timed network's partition over a replica's machines */
  int gather_logits;  /* K > 1: the timed network's output couples its units (modelpar.h) */
  ps_layout **layouts; /* [q]: what machine q of every replica exchanges with the shards */
  size_t n;           /* numeric parameters */
  size_t N;           /* examples in a batch: the training set */
  size_t portion;     /* rows per portion */
  long P;             /* portions per batch */
  shard *shards;
  replica *replicas;
  sg_mailbox_t coord_box;  /* replicas' reports */
  sg_mailbox_t answer_box; /* shards' answers */
  eval_ctl *eval;
  metrics *m;
  metrics_slot *slot;
  sg_mutex_t x_lock;  /* held by the coordinator while a command writes slot X */
  double *partials;   /* [k]: shard k's partial dot */
  lbfgs_result result;
  int *stragglers;
  size_t n_stragglers;
  /* the current batch, the coordinator's alone */
  long batch;         /* 1-based; 0 before the first */
  int slot_x;
  portions *work;     /* who computes which portion, and which copy counts */
  double *loss;       /* [p]: the counted copy's loss */
  sandblaster_batch *log;
  size_t n_log, cap_log;
  fault_plan *fp;     /* [faults] */
  long reissued_logged; /* the batch's reissues already added to fp */
  msg **out;          /* [k]: the coordinator's message to shard k being sent (send_to_shards) */
  /* sandblaster.ps_bank: the shards' network endpoint, one bank on cfg->banks[0] */
  int banked;
  sg_mailbox_t bank_box;
  sg_host_t bank_host;
  double *shard_slowdown; /* [k]: what shard k's own host would compute at */
  sg_exec_t *bank_execs;  /* [k]: shard k's work in the bank's current bundle */
};

/* Roles. Replica r is machines r*K .. r*K + K - 1 (K = partitions), placed with the S
 * shards among the first R*K + S hosts by ps_place_client and ps_place_shard
 * (sandblaster.ps_placement; `after`: replica r on cfg->hosts[r], shard k on hosts[R + k]
 * when K = 1); the coordinator runs on hosts[R*K + S]. Shard k owns the k-th contiguous
 * slice of every slot vector (the iterate, the gradients, the direction, the L-BFGS
 * history: lbfgs_n_slots(m) slots); the coordinator holds only lbfgs's scalars. */

/* Where machine c = r*K + q of the replicas, shard k and the coordinator run. */
static inline size_t client_index(const sandblaster_params *p, size_t c)
{
  return ps_place_client((size_t)p->replicas * (size_t)p->partitions, (size_t)p->ps_shards, c, p->ps_spread);
}
static inline size_t shard_index(const sandblaster_params *p, size_t k)
{
  return ps_place_shard((size_t)p->replicas * (size_t)p->partitions, (size_t)p->ps_shards, k, p->ps_spread);
}
static inline size_t coord_index(const sandblaster_params *p)
{
  return (size_t)p->replicas * (size_t)p->partitions + (size_t)p->ps_shards;
}
static inline sg_host_t shard_host(const sandblaster *sb, int k) { return sb->cfg->hosts[shard_index(sb->p, (size_t)k)]; }
static inline sg_host_t coord_host(const sandblaster *sb) { return sb->cfg->hosts[coord_index(sb->p)]; }
static inline sg_host_t replica_host(const sandblaster *sb, int r) { return sb->replicas[r].m[0].host; }

static inline size_t portion_rows(const sandblaster *sb, long p, size_t *begin)
{
  return portions_rows(sb->N, sb->portion, p, begin);
}

static inline double portion_weight(const sandblaster *sb, long p) { return portions_weight(sb->N, sb->portion, p); }

/* The descriptor's state of a run (sandblaster_config.c), read by its report. */
typedef struct sandblaster_run {
  const sandblaster_params *p;
  modelpar_split *split; /* partitions > 1 */
  sandblaster *sb;
} sandblaster_run;

/* The actors (sandblaster_workers.c): a shard, the bank of all shards (sandblaster.ps_bank;
 * its data is the run), a replica (its first machine), and machine q > 0 of a split
 * replica. */
void sandblaster_shard_actor(int argc, char **argv);
void sandblaster_bank_actor(int argc, char **argv);
void sandblaster_replica_actor(int argc, char **argv);
void sandblaster_partner_actor(int argc, char **argv);

/* The descriptor's report (sandblaster_report.c). */
void sandblaster_report_run(void *state, const run_config *cfg, metrics *m, report *rep);

#endif

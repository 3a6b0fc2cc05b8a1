/* sandblaster.c - Sandblaster L-BFGS: a coordinator, sliced slots on shards, and
 * replicas working through portions of the batch (Dean'12 4.2 and Appendix).
 *
 * Roles. Replica r is machines r*K .. r*K + K - 1 (K = partitions), placed with the S
 * shards among the first R*K + S hosts by ps_place_client and ps_place_shard
 * (sandblaster.ps_placement; `after`: replica r on cfg->hosts[r], shard k on hosts[R + k]
 * when K = 1); the coordinator runs on hosts[R*K + S]. Shard k owns the k-th contiguous
 * slice of every slot vector (the iterate, the gradients, the direction, the L-BFGS
 * history: lbfgs_n_slots(m) slots); the coordinator holds only lbfgs's scalars.
 *
 * Commands. The coordinator runs lbfgs_step (models/lbfgs.c) with `shard_ops`: dot,
 * axpy, scale and copy each become one COMMAND message to every shard and one ANSWER
 * back from each, the coordinator waiting for all S answers; a dot's answers carry the
 * slices' partial sums, added in shard-rank order (never in arrival order, which
 * could differ between runs with several threads), so one shard gives the sequential
 * reference's dot exactly. Each command costs its shard 2n flops (dot,
 * axpy) or n (scale, copy), n the shard's slice of the simulated parameters.
 *
 * Batches. evaluate(x, g) is one pass over the whole training set (full-batch L-BFGS),
 * cut into P portions of `portion` contiguous rows, as lbfgs_net cuts it. The
 * coordinator hands portions out in order, one at a time, to the replica that asks;
 * a replica fetches slot x from the shards only when it gets its first portion of a
 * batch. When it finishes a portion it reports it (a DONE message, carrying every
 * portion it finished and has not yet had counted, with their losses); the
 * coordinator answers with the next portion, or none, and, once the replica holds
 * push_every finished portions or no fresh portion is left, with which of them count:
 * the first copy of a portion to be reported that way counts, a later one is
 * discarded. The replica adds the counted portions' gradients (weighted rows / N) to
 * its running total and pushes it to the shards, which keep each replica's latest
 * total. Backup tasks: once every portion is handed out and backup_at of them count,
 * an idle replica gets a copy of the oldest portion still outstanding with one copy.
 * When all P count, the coordinator tells the shards to add the replicas' totals, in
 * rank order, into slot g; the loss is the sum of the counted portions' losses in
 * portion order. Which replica computes which portion, and which copy counts, is
 * portions.c's decision; the coordinator sends what it decides.
 *
 * Exactness. A portion counts exactly once, and a replica adds only the portions the
 * coordinator counted for it, so every example's gradient enters g once. With one
 * replica, its running total is lbfgs_net_fdf's sum in lbfgs_net_fdf's order, bit for
 * bit. With exact_sum, pushes carry each counted portion's gradient separately and
 * shards add them in portion order, so g is lbfgs_net_fdf's for any number of
 * replicas, stragglers and backups.
 *
 * Split replicas (partitions = K > 1, Dean'12 sec. 3 and 4.1). A replica's machines run
 * each portion's passes together (modelpar.c) over the plan of the timed network, and
 * each fetches and pushes only its own parameters, with the shards that hold them: its
 * layout (ps_layout_proxy), the numeric model training as a proxy whose values each shard
 * splits among the machines that talk to it. The first machine talks to the coordinator
 * and passes on to the others, in a PART message, what each answer asks of them; it adds
 * the counted gradients into the replica's running total, which every machine pushes its
 * part of, and takes the numeric gradient of a portion once the passes are done. A shard
 * has a replica's total when each of its machines that holds parameters of the shard has
 * pushed. With K = 1 a replica's layout is every shard's whole slice (ps_layout_whole).
 *
 * Stopping. Replicas wait for work until a STOP message; shards serve until one. At
 * the end the coordinator collects the report of every replica still computing (a
 * copy that will not count) and answers it with STOP. The messages are declared in
 * sandblaster_msg.h. */
#include "algorithms/sandblaster.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_randist.h>
#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/mailbox.h>
#include <simgrid/mutex.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/compute.h"
#include "algorithms/eval.h"
#include "algorithms/faults.h"
#include "algorithms/msg.h"
#include "algorithms/modelpar.h"
#include "algorithms/portions.h"
#include "algorithms/ps_layout.h"
#include "algorithms/sandblaster_msg.h"
#include "models/minibatch.h"
#include "models/rng.h"

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
};

size_t sandblaster_hosts_needed(const sandblaster_params *p)
{
  return (size_t)p->replicas * (size_t)p->partitions + (size_t)p->ps_shards + 1;
}

size_t sandblaster_metrics_slots(void) { return 1; }

/* Where machine c = r*K + q of the replicas, shard k and the coordinator run. */
static size_t client_index(const sandblaster_params *p, size_t c)
{
  return ps_place_client((size_t)p->replicas * (size_t)p->partitions, (size_t)p->ps_shards, c, p->ps_spread);
}
static size_t shard_index(const sandblaster_params *p, size_t k)
{
  return ps_place_shard((size_t)p->replicas * (size_t)p->partitions, (size_t)p->ps_shards, k, p->ps_spread);
}
static size_t coord_index(const sandblaster_params *p)
{
  return (size_t)p->replicas * (size_t)p->partitions + (size_t)p->ps_shards;
}
static sg_host_t shard_host(const sandblaster *sb, int k) { return sb->cfg->hosts[shard_index(sb->p, (size_t)k)]; }
static sg_host_t coord_host(const sandblaster *sb) { return sb->cfg->hosts[coord_index(sb->p)]; }
static sg_host_t replica_host(const sandblaster *sb, int r) { return sb->replicas[r].m[0].host; }

static size_t portion_rows(const sandblaster *sb, long p, size_t *begin)
{
  return portions_rows(sb->N, sb->portion, p, begin);
}

static double portion_weight(const sandblaster *sb, long p) { return portions_weight(sb->N, sb->portion, p); }

/* ---- shards ------------------------------------------------------------------- */

static void answer(shard *s, double partial, int has_value)
{
  sandblaster_answer_msg *a = sandblaster_answer_msg_create(s->rank, partial);
  msg_send(s->sb->answer_box, coord_host(s->sb), &a->hdr, MSG_HEADER_BYTES + (has_value ? SCALAR_BYTES : 0));
}

static gsl_vector_view slot_row(shard *s, int slot)
{
  xbt_assert(slot >= 0 && (size_t)slot < s->slots->size1, "shard %d: slot %d out of range", s->rank, slot);
  return gsl_matrix_row(s->slots, (size_t)slot);
}

/* A dot, axpy, scale or copy on the shard's slice; answers when done. */
static void run_command(shard *s, const sandblaster_command_msg *m)
{
  gsl_vector_view a = slot_row(s, m->a), b = slot_row(s, m->b);
  double partial = 0, n = s->sim_elems;
  switch (m->op) {
  case SANDBLASTER_DOT:
    gsl_blas_ddot(&a.vector, &b.vector, &partial);
    compute_execute(s->sb->cfg, 2 * n);
    break;
  case SANDBLASTER_AXPY:
    gsl_blas_daxpy(m->alpha, &a.vector, &b.vector);
    compute_execute(s->sb->cfg, 2 * n);
    break;
  case SANDBLASTER_SCALE:
    gsl_blas_dscal(m->alpha, &a.vector);
    compute_execute(s->sb->cfg, n);
    break;
  case SANDBLASTER_COPY:
    gsl_blas_dcopy(&a.vector, &b.vector);
    compute_execute(s->sb->cfg, n);
    break;
  default:
    xbt_die("shard %d: unknown command %d", s->rank, (int)m->op);
  }
  answer(s, partial, m->op == SANDBLASTER_DOT);
}

/* Once every portion of the batch is in and the coordinator asked: slot g = the
 * replicas' totals added in rank order (sum mode), or the portions' gradients weighted
 * and added in portion order (exact_sum, lbfgs_net_fdf's very operations). Costs n
 * flops per total added, or 2n per portion. */
static void try_reduce(shard *s)
{
  sandblaster *sb = s->sb;
  int q0 = -1; /* the first machine index with parameters here: its count stands for its replica's */
  for (int q = 0; q < sb->K; q++) {
    if (s->link[q] == NULL)
      continue;
    if (s->reduce_slot < 0 || s->received[q] < sb->P)
      return;
    xbt_assert(s->received[q] == sb->P, "shard %d: %ld portions for a batch of %ld", s->rank, s->received[q], sb->P);
    q0 = q0 < 0 ? q : q0;
  }
  if (q0 < 0 || s->reduce_slot < 0)
    return;
  gsl_vector_view g = slot_row(s, s->reduce_slot);
  double flops = 0;
  int first = 1;
  gsl_vector_set_zero(&g.vector);
  for (long i = 0; sb->p->exact_sum && i < sb->P; i++) {
    gsl_vector_view part = gsl_matrix_row(s->parts, (size_t)i);
    gsl_blas_daxpy(portion_weight(sb, i), &part.vector, &g.vector);
    s->have[i] = 0;
    flops += 2 * s->sim_elems;
  }
  for (int r = 0; !sb->p->exact_sum && r < sb->R; r++) {
    gsl_vector_view t = gsl_matrix_row(s->totals, (size_t)r);
    if (s->counts[r * sb->K + q0] == 0)
      continue;
    if (first)
      gsl_blas_dcopy(&t.vector, &g.vector); /* the first total as it is: one replica's is the reference's */
    else
      gsl_blas_daxpy(1.0, &t.vector, &g.vector);
    first = 0;
    flops += s->sim_elems;
    for (int q = 0; q < sb->K; q++)
      s->counts[r * sb->K + q] = 0;
  }
  compute_execute(sb->cfg, flops);
  s->batch = 0;
  for (int q = 0; q < sb->K; q++)
    s->received[q] = 0;
  s->reduce_slot = -1;
  answer(s, 0, 0);
}

/* A push belongs to the batch being gathered. A replica's pushes arrive in order (it
 * waits for one before the next). */
static void push_batch(shard *s, long batch)
{
  xbt_assert(s->batch == 0 || s->batch == batch, "shard %d: a push of batch %ld during batch %ld", s->rank, batch,
             s->batch);
  s->batch = batch;
}

/* Sum mode: a replica's running total (the pushing machine's values of it) replaces its
 * last one, counting more portions. */
static void store_total(shard *s, const sandblaster_push_total_msg *m)
{
  const ps_link *k = s->link[m->machine];
  long *count = &s->counts[m->replica * s->sb->K + m->machine];
  push_batch(s, m->batch);
  xbt_assert(k && m->n == k->values && m->counted > *count, "shard %d: a stale or malformed push", s->rank);
  ps_ranges_scatter(gsl_matrix_ptr(s->totals, (size_t)m->replica, 0), s->begin, m->total, k->rb, k->re, k->n_ranges);
  s->received[m->machine] += m->counted - *count;
  *count = m->counted;
  try_reduce(s);
}

/* exact_sum: the gradients of portions newly counted, each kept apart. */
static void store_portions(shard *s, const sandblaster_push_portions_msg *m)
{
  sandblaster *sb = s->sb;
  size_t len = s->end - s->begin;
  push_batch(s, m->batch);
  xbt_assert(m->len == len, "shard %d: a push of %zu values per portion for a slice of %zu", s->rank, m->len, len);
  for (size_t i = 0; i < m->k; i++) {
    long p = m->ids[i];
    xbt_assert(p >= 0 && p < sb->P && !s->have[p], "shard %d: portion %ld pushed twice", s->rank, p);
    memcpy(gsl_matrix_ptr(s->parts, (size_t)p, 0), m->grads + i * len, len * sizeof(double));
    s->have[p] = 1;
    s->from[p] = m->replica;
  }
  s->received[0] += (long)m->k;
  try_reduce(s);
}

/* [faults] Replica r died: what it pushed for the batch no longer counts (the
 * coordinator hands its portions out again). Its pushes all came before this command:
 * a dead host sends nothing more. */
static void forget_replica(shard *s, const sandblaster_forget_msg *m)
{
  int r = m->replica;
  if (s->batch != m->batch)
    return;
  for (long p = 0; s->sb->p->exact_sum && p < s->sb->P; p++)
    if (s->have[p] && s->from[p] == r) {
      s->have[p] = 0;
      s->received[0]--;
    }
  if (!s->sb->p->exact_sum) { /* [faults] runs have whole replicas (K = 1) */
    s->received[0] -= s->counts[r];
    s->counts[r] = 0;
  }
}

/* A replica machine's fetch: a copy of its values of the slot asked for (of the shard's
 * whole slice for a whole replica). */
static void send_slot(shard *s, const sandblaster_fetch_msg *m)
{
  const ps_link *k = s->link[m->machine];
  const machine *to = &s->sb->replicas[m->replica].m[m->machine];
  xbt_assert(k, "shard %d: a fetch from machine %d, which holds none of its parameters", s->rank, m->machine);
  gsl_vector_view v = slot_row(s, m->slot);
  sandblaster_slice_msg *r = sandblaster_slice_msg_create(s->rank, k->values);
  ps_ranges_gather(r->data, v.vector.data, s->begin, k->rb, k->re, k->n_ranges);
  msg_send(to->inbox, to->host, &r->hdr, msg_bytes(k->sim_elems, s->sb->cfg->elem_bytes));
}

/* Serves commands, fetches and pushes in arrival order until stopped. */
static void shard_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  shard *s = sg_actor_self_get_data();
  sg_mailbox_set_receiver(sg_mailbox_get_name(s->inbox));
  msg *m;
  while ((m = msg_recv(s->inbox))->kind != SANDBLASTER_MSG_STOP) {
    switch (m->kind) {
    case SANDBLASTER_MSG_COMMAND:
      run_command(s, sandblaster_command_msg_of(m));
      break;
    case SANDBLASTER_MSG_REDUCE:
      s->reduce_slot = sandblaster_reduce_msg_of(m)->slot;
      try_reduce(s);
      break;
    case SANDBLASTER_MSG_FORGET:
      forget_replica(s, sandblaster_forget_msg_of(m));
      break;
    case SANDBLASTER_MSG_FETCH:
      send_slot(s, sandblaster_fetch_msg_of(m));
      break;
    case SANDBLASTER_MSG_PUSH_TOTAL:
      store_total(s, sandblaster_push_total_msg_of(m));
      break;
    default:
      store_portions(s, sandblaster_push_portions_msg_of(m));
    }
    msg_free(m);
  }
  msg_free(m);
}

/* ---- replicas ----------------------------------------------------------------- */

static void wait_push(machine *mc)
{
  if (mc->pushing)
    msg_wait_all(mc->push, mc->lay->n_links);
  mc->pushing = 0;
}

/* Dean'12 4.2: workers fetch the parameters only at the start of a batch; a machine its
 * own, from the shards that hold them (4.1). */
static void fetch_parameters(machine *mc, long batch, int slot)
{
  replica *r = mc->r;
  sandblaster *sb = r->sb;
  const ps_layout *lay = mc->lay;
  for (size_t i = 0; i < lay->n_links; i++) {
    int k = lay->link[i].shard;
    msg_send(sb->shards[k].inbox, shard_host(sb, k), &sandblaster_fetch_msg_create(r->rank, mc->q, slot)->hdr,
             MSG_HEADER_BYTES);
  }
  for (size_t i = 0; i < lay->n_links; i++)
    mc->comms[i] = sg_mailbox_get_async(mc->inbox, (void **)&mc->replies[i]);
  msg_wait_all(mc->comms, lay->n_links);
  for (size_t i = 0; i < lay->n_links; i++) {
    const sandblaster_slice_msg *m = sandblaster_slice_msg_of(mc->replies[i]);
    const ps_link *k = &lay->link[ps_layout_find(lay, m->shard)];
    xbt_assert(m->n == k->values, "machine %d of replica %d: %zu values from shard %d", mc->q, r->rank, m->n,
               m->shard);
    ps_ranges_scatter(r->w->data, 0, m->data, k->rb, k->re, k->n_ranges);
    msg_free(mc->replies[i]);
  }
  mc->batch = batch;
}

/* The first machine's side of a new batch: the replica's counts start again. */
static void begin_replica_batch(replica *r, long batch)
{
  r->batch = batch;
  r->n_held = 0;
  r->n_counted = 0;
  gsl_vector_set_zero(r->total);
}

/* The portion's mean loss and gradient at w, held until the coordinator counts it. A
 * whole replica's time is train_flops per example, times the straggler's slowdown; a
 * split one's is its machines' passes (modelpar.c), run before the numerics. */
static void compute_gradient(replica *r, long p)
{
  sandblaster *sb = r->sb;
  const dataset *d = sb->cfg->train;
  size_t begin, rows = portion_rows(sb, p, &begin);
  xbt_assert(r->n_held < (long)r->held->size1, "replica %d holds too many portions", r->rank);
  if (r->mp)
    modelpar_replica_step(r->mp, 0, r->steps++);
  gsl_matrix_const_view X = gsl_matrix_const_submatrix(d->X, begin, 0, rows, data_dim(d));
  gsl_vector_view g = gsl_matrix_row(r->held, (size_t)r->n_held);
  int rc = net_loss_grad(sb->cfg->model, r->w, &X.matrix, d->y + begin, r->ws, &r->held_loss[r->n_held], &g.vector);
  xbt_assert(rc == 0, "replica %d: portion %ld does not fit the model", r->rank, p);
  r->held_id[r->n_held++] = p;
  if (!r->mp)
    compute_execute(sb->cfg, sb->cfg->train_flops * (double)rows * r->slowdown);
}

/* Dean'12 4.2: send the gradients every few completed portions. Sum mode: the running
 * total, to every shard a machine talks to its values of it (packed as its layout, or
 * NULL: read from the replica's total); exact_sum (whole replicas): the k newly counted
 * portions' gradients. */
static void push_gradient(machine *mc, const long *ids, long k, long counted, const double *packed)
{
  replica *r = mc->r;
  sandblaster *sb = r->sb;
  const ps_layout *lay = mc->lay;
  wait_push(mc);
  for (size_t i = 0; i < lay->n_links; i++) {
    const ps_link *link = &lay->link[i];
    const shard *sh = &sb->shards[link->shard];
    size_t len = sh->end - sh->begin;
    msg *m;
    if (sb->p->exact_sum) {
      sandblaster_push_portions_msg *pp = sandblaster_push_portions_msg_create(r->rank, r->batch, (size_t)k, len);
      for (long j = 0; j < k; j++) {
        pp->ids[j] = ids[j];
        memcpy(pp->grads + (size_t)j * len, gsl_matrix_const_ptr(r->held, (size_t)ids[k + j], sh->begin),
               len * sizeof(double));
      }
      m = &pp->hdr;
    } else {
      sandblaster_push_total_msg *pt =
          sandblaster_push_total_msg_create(r->rank, mc->q, mc->batch, counted, link->values);
      if (packed)
        memcpy(pt->total, packed + link->offset, link->values * sizeof(double));
      else
        ps_ranges_gather(pt->total, r->total->data, 0, link->rb, link->re, link->n_ranges);
      m = &pt->hdr;
    }
    double elems = sb->p->exact_sum ? (double)k * link->sim_elems : link->sim_elems;
    double bytes = msg_bytes(elems, sb->cfg->elem_bytes) + (sb->p->exact_sum ? (double)k * SCALAR_BYTES : 0);
    mc->push[i] = msg_send_async(sh->inbox, shard_host(sb, link->shard), m, bytes);
  }
  mc->pushing = 1;
}

/* The coordinator's verdict on the held portions (counts[i]: held portion i counts):
 * add the counted ones, weighted, to the running total in the order they were finished
 * (with one replica: portion order, as lbfgs_net_fdf), then push. Returns how many
 * count; ids gets their ids, then their rows in held (exact_sum's push). */
static long accumulate_gradient(replica *r, const sandblaster_portion_msg *verdict, long *ids)
{
  sandblaster *sb = r->sb;
  xbt_assert(verdict->n == (size_t)r->n_held, "replica %d: a verdict on %zu of %ld portions", r->rank, verdict->n,
             r->n_held);
  long k = 0;
  for (long i = 0; i < r->n_held; i++) {
    if (verdict->counts[i] == 0)
      continue;
    gsl_vector_view g = gsl_matrix_row(r->held, (size_t)i);
    if (!sb->p->exact_sum)
      gsl_blas_daxpy(portion_weight(sb, r->held_id[i]), &g.vector, r->total);
    ids[k] = r->held_id[i];
    ids[r->n_held + k++] = i; /* its row in held, for exact_sum's push */
  }
  memmove(ids + k, ids + r->n_held, (size_t)k * sizeof(long));
  r->n_counted += k;
  r->n_held = 0;
  return k;
}

/* Tells the coordinator a portion is finished, with every held one. */
static void report_portion(replica *r)
{
  sandblaster *sb = r->sb;
  sandblaster_done_msg *m = sandblaster_done_msg_create(r->rank, r->batch, (size_t)r->n_held);
  memcpy(m->ids, r->held_id, (size_t)r->n_held * sizeof(long));
  memcpy(m->loss, r->held_loss, (size_t)r->n_held * sizeof(double));
  msg_send(sb->coord_box, coord_host(sb), &m->hdr, MSG_HEADER_BYTES + 2 * SCALAR_BYTES * (double)r->n_held);
}

/* A split replica's first machine passes on to the others what the answer asks, with,
 * when it counted portions, each one's part of the running total as it is now. */
static void tell_partners(replica *r, long batch, int slot_x, long portion, long counted, int stop)
{
  for (int q = 1; q < r->sb->K; q++) {
    const ps_layout *lay = r->m[q].lay;
    size_t n = counted > 0 ? lay->n_values : 0;
    sandblaster_part_msg *m = sandblaster_part_msg_create(batch, slot_x, portion, r->steps, counted, stop, n);
    for (size_t i = 0; n && i < lay->n_links; i++)
      ps_ranges_gather(m->values + lay->link[i].offset, r->total->data, 0, lay->link[i].rb, lay->link[i].re,
                       lay->link[i].n_ranges);
    msg_send(r->m[q].inbox, r->m[q].host, &m->hdr, MSG_HEADER_BYTES);
  }
}

/* Dean'12 4.2: a replica asks for a portion, computes its gradient and reports it; the
 * coordinator's answer may say which finished portions count, and those it pushes to
 * the shards. Until stopped. A split replica's first machine runs this with its
 * partners following (partner_actor). */
static void replica_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  replica *r = sg_actor_self_get_data();
  machine *mc = &r->m[0];
  sg_mailbox_set_receiver(sg_mailbox_get_name(r->inbox));
  if (r->mp)
    modelpar_replica_listen(r->mp, 0);
  long *ids = xbt_malloc((2 * (size_t)r->held->size1 + 1) * sizeof(long));
  msg *m;
  while ((m = msg_recv(r->inbox))->kind != SANDBLASTER_MSG_STOP) {
    const sandblaster_portion_msg *w = sandblaster_portion_msg_of(m);
    long k = w->judged ? accumulate_gradient(r, w, ids) : 0;
    int work = w->portion != SANDBLASTER_NO_PORTION; /* else nothing to do for now */
    if (r->sb->K > 1)
      tell_partners(r, w->batch, w->slot_x, w->portion, k > 0 ? r->n_counted : 0, 0);
    if (k > 0)
      push_gradient(mc, ids, k, r->n_counted, NULL);
    if (work) {
      if (w->batch != r->batch)
        begin_replica_batch(r, w->batch);
      if (w->batch != mc->batch)
        fetch_parameters(mc, w->batch, w->slot_x);
      compute_gradient(r, w->portion);
      report_portion(r);
    }
    msg_free(m);
  }
  msg_free(m);
  if (r->sb->K > 1)
    tell_partners(r, 0, 0, SANDBLASTER_NO_PORTION, 0, 1);
  wait_push(mc);
  xbt_free(ids);
}

/* Machine q > 0 of a split replica: pushes its part of the running total, fetches its
 * parameters at a new batch and runs its share of each portion's passes, as its first
 * machine says. */
static void partner_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  machine *mc = sg_actor_self_get_data();
  replica *r = mc->r;
  sg_mailbox_set_receiver(sg_mailbox_get_name(mc->inbox));
  modelpar_replica_listen(r->mp, (size_t)mc->q);
  for (;;) {
    msg *m = msg_recv(mc->inbox);
    const sandblaster_part_msg *w = sandblaster_part_msg_of(m);
    int stop = w->stop;
    if (!stop && w->counted > 0)
      push_gradient(mc, NULL, 0, w->counted, w->values);
    if (!stop && w->portion != SANDBLASTER_NO_PORTION) {
      if (w->batch != mc->batch)
        fetch_parameters(mc, w->batch, w->slot_x);
      modelpar_replica_step(r->mp, (size_t)mc->q, w->step);
    }
    msg_free(m);
    if (stop)
      break;
  }
  wait_push(mc);
}

/* ---- the coordinator: commands -------------------------------------------------- */

/* One command to every shard, then their S answers; returns the sum of the partial
 * results in shard-rank order. A command that writes slot X holds x_lock, so that the
 * evaluator's snapshot never mixes two iterates. */
static double command(sandblaster *sb, sandblaster_op op, int a, int b, double alpha, int writes)
{
  int locks = writes == LBFGS_SLOT_X;
  if (locks)
    sg_mutex_lock(sb->x_lock);
  double bytes = MSG_HEADER_BYTES + (op == SANDBLASTER_AXPY || op == SANDBLASTER_SCALE ? SCALAR_BYTES : 0);
  for (int k = 0; k < sb->S; k++)
    msg_send(sb->shards[k].inbox, shard_host(sb, k), &sandblaster_command_msg_create(op, a, b, alpha)->hdr, bytes);
  for (int k = 0; k < sb->S; k++) {
    msg *m = msg_recv(sb->answer_box);
    const sandblaster_answer_msg *ans = sandblaster_answer_msg_of(m);
    sb->partials[ans->shard] = ans->partial;
    msg_free(m);
  }
  if (locks)
    sg_mutex_unlock(sb->x_lock);
  double sum = sb->partials[0];
  for (int k = 1; k < sb->S; k++)
    sum += sb->partials[k];
  return sum;
}

static double shard_dot(void *ctx, int a, int b) { return command(ctx, SANDBLASTER_DOT, a, b, 0, -1); }
static void shard_axpy(void *ctx, double alpha, int x, int y) { command(ctx, SANDBLASTER_AXPY, x, y, alpha, y); }
static void shard_scale(void *ctx, double alpha, int x) { command(ctx, SANDBLASTER_SCALE, x, x, alpha, x); }
static void shard_copy(void *ctx, int src, int dst) { command(ctx, SANDBLASTER_COPY, src, dst, 0, dst); }

/* ---- the coordinator: batches ---------------------------------------------------- */

/* The batch's log entry follows the scheduler's tally after every change, before the
 * next send: a run stopped mid-batch ([faults]) reports the batch as far as it went. */
static void log_tally(sandblaster *sb)
{
  const portions_tally *t = portions_tally_of(sb->work);
  sandblaster_batch *b = &sb->log[sb->n_log - 1];
  b->copies = t->copies;
  b->backups = t->backups;
  b->backup_wins = t->backup_wins;
  b->discarded = t->discarded;
  b->examples = t->examples;
  if (t->reissued > sb->reissued_logged)
    atomic_fetch_add(&sb->fp->reissued_portions, t->reissued - sb->reissued_logged);
  sb->reissued_logged = t->reissued;
}

/* Portion p (or PORTIONS_NONE) for replica r, with the verdict on the n portions it
 * held when it reported, if counts is not NULL. */
static void send_portion(sandblaster *sb, int r, long p, const char *counts, size_t n)
{
  long portion = p == PORTIONS_NONE ? SANDBLASTER_NO_PORTION : p;
  sandblaster_portion_msg *m = sandblaster_portion_msg_create(sb->batch, portion, sb->slot_x, counts, n);
  msg_send(sb->replicas[r].inbox, replica_host(sb, r), &m->hdr, MSG_HEADER_BYTES + (double)m->n);
}

/* Gives work to the waiting replicas, in rank order, while there is some. */
static void dispatch_waiting(sandblaster *sb)
{
  long p;
  int r;
  while ((r = portions_dispatch(sb->work, &p)) >= 0) {
    log_tally(sb);
    send_portion(sb, r, p, NULL, 0);
  }
}

/* A report from a replica: if it is time to judge (portions_judge_now), each held
 * portion that has not counted yet counts now, for this replica, the others are
 * discarded; the answer carries that verdict and its next portion. A report from an
 * earlier batch counts nothing. */
static void on_report(sandblaster *sb, const sandblaster_done_msg *d)
{
  char *verdict = NULL;
  if (d->batch != sb->batch) {
    sb->log[d->batch - 1].discarded += (long)d->n;
  } else if (portions_judge_now(sb->work, (long)d->n)) {
    verdict = xbt_malloc(d->n);
    for (size_t i = 0; i < d->n; i++) {
      verdict[i] = (char)portions_done(sb->work, d->replica, d->ids[i]);
      if (verdict[i])
        sb->loss[d->ids[i]] = d->loss[i];
    }
  }
  long p = portions_next(sb->work, d->replica);
  log_tally(sb);
  send_portion(sb, d->replica, p, verdict, d->n);
  xbt_free(verdict);
}

/* [faults] A replica died (Dean'12 4.2: the coordinator hands a slow or dead replica's
 * work to others): the scheduler hands its portions out again, and the shards forget
 * what it pushed for the batch (its pushes in flight died with it). */
static void on_death(sandblaster *sb, const sandblaster_death_msg *d)
{
  if (!portions_replica_lost(sb->work, d->replica))
    return;
  log_tally(sb);
  for (int k = 0; k < sb->S; k++)
    msg_send(sb->shards[k].inbox, shard_host(sb, k), &sandblaster_forget_msg_create(sb->batch, d->replica)->hdr,
             MSG_HEADER_BYTES + SCALAR_BYTES);
}

static void begin_batch(sandblaster *sb, int x)
{
  sb->batch++;
  sb->slot_x = x;
  portions_begin(sb->work);
  sb->reissued_logged = 0;
  if (sb->n_log == sb->cap_log) {
    sb->cap_log = sb->cap_log ? 2 * sb->cap_log : 64;
    sb->log = xbt_realloc(sb->log, sb->cap_log * sizeof(*sb->log));
  }
  sb->log[sb->n_log++] = (sandblaster_batch){.iteration = sb->result.iterations, .start = simgrid_get_clock(),
                                             .portions = sb->P};
}

/* The shards add what the replicas pushed into slot g (try_reduce). */
static void reduce_gradient(sandblaster *sb, int g)
{
  for (int k = 0; k < sb->S; k++)
    msg_send(sb->shards[k].inbox, shard_host(sb, k), &sandblaster_reduce_msg_create(g)->hdr, MSG_HEADER_BYTES);
  for (int k = 0; k < sb->S; k++) {
    msg *m = msg_recv(sb->answer_box);
    sandblaster_answer_msg_of(m);
    msg_free(m);
  }
}

/* lbfgs's evaluate: one batch over the training set (Dean'12 4.2, load balancing and
 * backup tasks). Portions go to the replicas that ask until every one counts; then the
 * shards sum the gradient. f is the portions' losses weighted and added in portion
 * order, as lbfgs_net_fdf adds them. */
static int batch_evaluate(void *ctx, int x, int g, double *f)
{
  sandblaster *sb = ctx;
  begin_batch(sb, x);
  dispatch_waiting(sb);
  while (!portions_complete(sb->work)) {
    msg *m = msg_recv(sb->coord_box);
    if (m->kind == SANDBLASTER_MSG_DEATH)
      on_death(sb, sandblaster_death_msg_of(m));
    else
      on_report(sb, sandblaster_done_msg_of(m));
    msg_free(m);
    dispatch_waiting(sb); /* work freed or handed back goes to the waiting */
  }
  reduce_gradient(sb, g);
  double sum = 0;
  for (long p = 0; p < sb->P; p++)
    sum += portion_weight(sb, p) * sb->loss[p];
  *f = sum;
  sb->log[sb->n_log - 1].f = sum;
  sb->log[sb->n_log - 1].end = simgrid_get_clock();
  return 0;
}

static const lbfgs_ops shard_ops = {shard_dot, shard_axpy, shard_scale, shard_copy, batch_evaluate};

static void send_stop(sg_mailbox_t box, sg_host_t host)
{
  msg_send(box, host, &sandblaster_stop_msg_create()->hdr, MSG_HEADER_BYTES);
}

/* Every replica stops: an idle one at once, a busy one when it reports its copy (which
 * cannot count: every batch is complete). Then the shards. */
static void stop_everyone(sandblaster *sb)
{
  for (int r = 0; r < sb->R; r++)
    if (!portions_busy(sb->work, r))
      send_stop(sb->replicas[r].inbox, replica_host(sb, r));
  while (portions_n_busy(sb->work) > 0) {
    msg *m = msg_recv(sb->coord_box);
    if (m->kind == SANDBLASTER_MSG_DEATH) {
      on_death(sb, sandblaster_death_msg_of(m)); /* the batch is complete: nothing to redo, no stop */
    } else {
      const sandblaster_done_msg *d = sandblaster_done_msg_of(m);
      sb->log[d->batch - 1].discarded += (long)d->n;
      portions_replica_stopped(sb->work, d->replica);
      send_stop(sb->replicas[d->replica].inbox, replica_host(sb, d->replica));
    }
    msg_free(m);
  }
  for (int k = 0; k < sb->S; k++)
    send_stop(sb->shards[k].inbox, shard_host(sb, k));
}

/* L-BFGS's outcome as the run's status: no point of sufficient decrease is a failure
 * of the run, a non-finite loss or gradient is divergence. */
static void record_status(sandblaster *sb, lbfgs_status s)
{
  xbt_assert(s != LBFGS_ERR_EVALUATE && s != LBFGS_ERR_PARAMS, "coordinator: L-BFGS status %s",
             lbfgs_status_name(s));
  if (s == LBFGS_ERR_LINESEARCH)
    metrics_set_status(sb->m, METRICS_LINESEARCH_FAILED);
  else if (s == LBFGS_ERR_NONFINITE)
    metrics_set_status(sb->m, METRICS_DIVERGED);
}

/* Runs L-BFGS one iteration at a time (N&W Alg. 7.5 through the shards) until it ends,
 * run.max_steps iterations are done, or the evaluator asks to stop. */
static void coordinator_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  sandblaster *sb = sg_actor_self_get_data();
  sg_mailbox_set_receiver(sg_mailbox_get_name(sb->coord_box));
  sg_mailbox_set_receiver(sg_mailbox_get_name(sb->answer_box));
  portions_params pp = {.examples = sb->N, .rows = sb->portion, .replicas = sb->R, .backups = sb->p->backups,
                        .backup_at = sb->p->backup_at, .push_every = sb->p->push_every};
  sb->work = portions_create(&pp);
  xbt_assert(portions_count(sb->work) == sb->P, "coordinator: %ld portions, not %ld", portions_count(sb->work), sb->P);
  lbfgs_params lp;
  lbfgs_params_default(&lp);
  lp.m = sb->p->history;
  lp.gtol = sb->p->gtol;
  lp.max_iter = sb->cfg->max_steps > 0 ? sb->cfg->max_steps : LONG_MAX;
  lbfgs_state *st = lbfgs_create(&shard_ops, sb, &lp);
  xbt_assert(st != NULL, "coordinator: invalid L-BFGS parameters");
  lbfgs_status s;
  int stop = 0;
  do {
    long before = sb->result.iterations;
    s = lbfgs_step(st);
    lbfgs_get_result(st, &sb->result);
    if (sb->result.iterations > before) {
      sb->slot->steps++;
      stop = eval_step_done(sb->eval);
    }
  } while (s == LBFGS_RUNNING && !stop);
  lbfgs_free(st);
  record_status(sb, s);
  stop_everyone(sb);
  eval_finished(sb->eval);
}

/* ---- set-up ---------------------------------------------------------------------- */

/* The evaluator's copy of slot X, never taken while a command writes it. */
static void snapshot(void *ctx, gsl_vector *w)
{
  sandblaster *sb = ctx;
  sg_mutex_lock(sb->x_lock);
  for (int k = 0; k < sb->S; k++) {
    const shard *s = &sb->shards[k];
    memcpy(w->data + s->begin, gsl_matrix_const_ptr(s->slots, LBFGS_SLOT_X, 0), (s->end - s->begin) * sizeof(double));
  }
  sg_mutex_unlock(sb->x_lock);
}

/* [faults] stragglers: round(fraction * R) replicas (at least one when fraction > 0),
 * drawn from the run's own stream, compute slowdown times slower. */
static void pick_stragglers(sandblaster *sb)
{
  const run_config *cfg = sb->cfg;
  double want = cfg->straggler_fraction * sb->R;
  size_t k = cfg->straggler_fraction > 0 ? (size_t)(want + 0.5) : 0;
  k = cfg->straggler_fraction > 0 && k == 0 ? 1 : k;
  k = k > (size_t)sb->R ? (size_t)sb->R : k;
  int *all = xbt_malloc((size_t)sb->R * sizeof(int));
  for (int r = 0; r < sb->R; r++)
    all[r] = r;
  sb->stragglers = xbt_malloc((k + 1) * sizeof(int));
  sb->n_stragglers = k;
  if (k > 0) {
    gsl_rng *rng = rng_create(cfg->seed, RNG_ROLE_STRAGGLER, 0);
    gsl_ran_choose(rng, sb->stragglers, k, all, (size_t)sb->R, sizeof(int)); /* keeps rank order */
    gsl_rng_free(rng);
  }
  for (size_t i = 0; i < k; i++)
    sb->replicas[sb->stragglers[i]].slowdown = cfg->straggler_slowdown;
  xbt_free(all);
}

static void shard_init(sandblaster *sb, shard *s, int k, const gsl_vector *x0)
{
  size_t sim_b, sim_e;
  s->sb = sb;
  s->rank = k;
  data_shard_bounds(sb->n, (size_t)sb->S, (size_t)k, &s->begin, &s->end);
  data_shard_bounds((size_t)sb->cfg->sim_params, (size_t)sb->S, (size_t)k, &sim_b, &sim_e);
  s->sim_elems = (double)(sim_e - sim_b);
  size_t len = s->end - s->begin;
  s->slots = gsl_matrix_calloc((size_t)lbfgs_n_slots(sb->p->history), len);
  memcpy(gsl_matrix_ptr(s->slots, LBFGS_SLOT_X, 0), x0->data + s->begin, len * sizeof(double));
  if (sb->p->exact_sum) {
    s->parts = gsl_matrix_alloc((size_t)sb->P, len);
    s->have = xbt_malloc0((size_t)sb->P);
    s->from = xbt_malloc0((size_t)sb->P * sizeof(int));
  } else {
    s->totals = gsl_matrix_alloc((size_t)sb->R, len);
    s->counts = xbt_malloc0((size_t)sb->R * (size_t)sb->K * sizeof(long));
  }
  s->received = xbt_malloc0((size_t)sb->K * sizeof(long));
  s->link = xbt_malloc0((size_t)sb->K * sizeof(*s->link));
  for (int q = 0; q < sb->K; q++) {
    int i = ps_layout_find(sb->layouts[q], k);
    s->link[q] = i >= 0 ? &sb->layouts[q]->link[i] : NULL;
  }
  s->reduce_slot = -1;
  s->inbox = mbox_of("sb-shard", k);
}

static void replica_init(sandblaster *sb, replica *r, int rank)
{
  /* it is counted as soon as it holds push_every, and a batch has only P */
  size_t hold = (size_t)(sb->p->push_every < sb->P ? sb->p->push_every : sb->P);
  r->sb = sb;
  r->rank = rank;
  r->slowdown = 1;
  r->w = gsl_vector_calloc(sb->n);
  r->total = gsl_vector_calloc(sb->n);
  r->ws = net_ws_create(sb->cfg->model, sb->portion);
  r->held = gsl_matrix_alloc(hold, sb->n);
  r->held_id = xbt_malloc(hold * sizeof(long));
  r->held_loss = xbt_malloc(hold * sizeof(double));
  r->inbox = mbox_of("sb-replica", rank);
  r->m = xbt_malloc0((size_t)sb->K * sizeof(machine));
  for (int q = 0; q < sb->K; q++) {
    machine *mc = &r->m[q];
    size_t c = (size_t)rank * (size_t)sb->K + (size_t)q, links = sb->layouts[q]->n_links + 1;
    mc->r = r;
    mc->q = q;
    mc->inbox = q == 0 ? r->inbox : mbox_of("sb-part", (int)c);
    mc->host = sb->cfg->hosts[client_index(sb->p, c)];
    mc->lay = sb->layouts[q];
    mc->push = xbt_malloc0(links * sizeof(sg_comm_t));
    mc->comms = xbt_malloc0(links * sizeof(sg_comm_t));
    mc->replies = xbt_malloc0(links * sizeof(msg *));
  }
  if (sb->K > 1) { /* the passes are timed; the numerics are the proxy's (compute_gradient) */
    sg_host_t *hosts = xbt_malloc((size_t)sb->K * sizeof(sg_host_t));
    for (int q = 0; q < sb->K; q++)
      hosts[q] = r->m[q].host;
    r->hosts = hosts;
    r->mp = modelpar_replica_create(sb->cfg, sb->plan, NULL, sb->gather_logits, rank, (long)sb->portion, r->hosts, 0,
                                    0, NULL, NULL);
  }
}

static void start_actor(const char *role, int rank, sg_host_t host, void *data, void (*body)(int, char **))
{
  char name[32];
  mbox_name(name, sizeof(name), role, rank);
  sg_actor_t a = sg_actor_init(name, host);
  sg_actor_set_data(a, data);
  sg_actor_start(a, body, 0, NULL);
}

static size_t portion_size(const sandblaster_params *p, size_t N) { return portions_size(p->portion, p->replicas, N); }

/* Injector hook: the loss of a shard or of the coordinator stops the run (their state
 * is not checkpointed); a replica's death is notified to the coordinator, which hands
 * its work out again (replica_died). */
static void on_fault(void *ctx, const fault_event *ev)
{
  sandblaster *sb = ctx;
  if (ev->kind != FAULT_HOST_OFF)
    return;
  for (int k = 0; k <= sb->S; k++) /* [faults] runs keep the shards and the coordinator after the replicas */
    if (sb->cfg->hosts[sb->R + k] == ev->host) {
      faults_stop_run(sb->fp);
      return;
    }
  for (int r = 0; r < sb->R; r++)
    if (replica_host(sb, r) == ev->host) {
      atomic_fetch_add(&sb->fp->workers_lost, 1);
      msg_send(sb->coord_box, coord_host(sb), &sandblaster_death_msg_create(r)->hdr, MSG_HEADER_BYTES);
    }
  if (atomic_load(&sb->fp->workers_lost) >= sb->R)
    faults_stop_run(sb->fp);
}

sandblaster *sandblaster_deploy(const run_config *cfg, const sandblaster_params *p, const arch_plan *plan,
                                int gather_logits, metrics *m)
{
  if (!cfg->numerics || cfg->n_hosts < sandblaster_hosts_needed(p) || (size_t)p->ps_shards > net_n_params(cfg->model) ||
      (p->partitions > 1) != (plan != NULL) || (plan && arch_plan_parts(plan) != (size_t)p->partitions))
    return NULL;
  sandblaster *sb = xbt_malloc0(sizeof(*sb));
  sb->cfg = cfg;
  sb->p = p;
  sb->R = p->replicas;
  sb->S = p->ps_shards;
  sb->K = p->partitions;
  sb->plan = plan;
  sb->gather_logits = gather_logits;
  sb->n = net_n_params(cfg->model);
  sb->layouts = xbt_malloc0((size_t)sb->K * sizeof(*sb->layouts));
  for (int q = 0; q < sb->K; q++)
    sb->layouts[q] = plan ? ps_layout_proxy(plan, (size_t)q, sb->n, (size_t)cfg->sim_params, (size_t)sb->S)
                          : ps_layout_whole(sb->n, (size_t)cfg->sim_params, (size_t)sb->S);
  sb->N = data_n(cfg->train);
  sb->portion = portion_size(p, sb->N);
  sb->P = (long)((sb->N + sb->portion - 1) / sb->portion);
  sb->m = m;
  sb->slot = metrics_slot_at(m, 0);
  sb->x_lock = sg_mutex_init();
  sb->partials = xbt_malloc0((size_t)sb->S * sizeof(double));
  sb->loss = xbt_malloc0((size_t)sb->P * sizeof(double));
  sb->coord_box = mbox_of("sb-coord", 0);
  sb->answer_box = mbox_of("sb-answers", 0);
  gsl_vector *x0 = run_initial_params(cfg);
  sb->shards = xbt_malloc0((size_t)sb->S * sizeof(shard));
  for (int k = 0; k < sb->S; k++)
    shard_init(sb, &sb->shards[k], k, x0);
  gsl_vector_free(x0);
  sb->replicas = xbt_malloc0((size_t)sb->R * sizeof(replica));
  for (int r = 0; r < sb->R; r++)
    replica_init(sb, &sb->replicas[r], r);
  pick_stragglers(sb);
  if (cfg->faults) {
    sb->fp = cfg->faults;
    sb->fp->hook = on_fault;
    sb->fp->hook_ctx = sb;
  }
  sb->eval = eval_ctl_create(cfg, m, 1, snapshot, sb);
  for (int k = 0; k < sb->S; k++)
    start_actor("sb-shard", k, shard_host(sb, k), &sb->shards[k], shard_actor);
  for (int r = 0; r < sb->R; r++) {
    start_actor("sb-replica", r, replica_host(sb, r), &sb->replicas[r], replica_actor);
    for (int q = 1; q < sb->K; q++)
      start_actor("sb-part", r * sb->K + q, sb->replicas[r].m[q].host, &sb->replicas[r].m[q], partner_actor);
  }
  start_actor("sb-coord", 0, coord_host(sb), sb, coordinator_actor);
  eval_start(sb->eval, coord_host(sb));
  return sb;
}

void sandblaster_free(sandblaster *sb)
{
  if (sb == NULL)
    return;
  for (int k = 0; k < sb->S; k++) {
    shard *s = &sb->shards[k];
    gsl_matrix_free(s->slots);
    if (s->parts)
      gsl_matrix_free(s->parts);
    if (s->totals)
      gsl_matrix_free(s->totals);
    xbt_free(s->have);
    xbt_free(s->from);
    xbt_free(s->counts);
    xbt_free(s->received);
    xbt_free(s->link);
  }
  for (int r = 0; r < sb->R; r++) {
    replica *rp = &sb->replicas[r];
    gsl_vector_free(rp->w);
    gsl_vector_free(rp->total);
    net_ws_free(rp->ws);
    gsl_matrix_free(rp->held);
    xbt_free(rp->held_id);
    xbt_free(rp->held_loss);
    for (int q = 0; q < sb->K; q++) {
      xbt_free(rp->m[q].push);
      xbt_free(rp->m[q].comms);
      xbt_free(rp->m[q].replies);
    }
    xbt_free(rp->m);
    modelpar_replica_free(rp->mp);
    xbt_free(rp->hosts);
  }
  for (int q = 0; sb->layouts && q < sb->K; q++)
    ps_layout_free(sb->layouts[q]);
  xbt_free(sb->layouts);
  eval_ctl_free(sb->eval);
  sg_mutex_destroy(sb->x_lock);
  xbt_free(sb->shards);
  xbt_free(sb->replicas);
  xbt_free(sb->partials);
  portions_free(sb->work);
  xbt_free(sb->loss);
  xbt_free(sb->log);
  xbt_free(sb->stragglers);
  xbt_free(sb);
}

void sandblaster_result(const sandblaster *sb, lbfgs_result *r) { *r = sb->result; }

size_t sandblaster_batches(const sandblaster *sb, const sandblaster_batch **b)
{
  *b = sb->log;
  return sb->n_log;
}

long sandblaster_examples(const sandblaster *sb)
{
  long n = 0;
  for (size_t i = 0; i < sb->n_log; i++)
    n += sb->log[i].examples;
  return n;
}

size_t sandblaster_stragglers(const sandblaster *sb, const int **ranks)
{
  *ranks = sb->stragglers;
  return sb->n_stragglers;
}

/* ---- the descriptor: run.algorithm = sandblaster -------------------------------- */

static const key_spec sandblaster_keys[] = {
  {"sandblaster", "replicas", KEY_INT, KEY_FIELD(sandblaster_params, replicas), .def = "20", .unit = "replicas",
   .doc = "Model replicas, each on its own host, computing portions of every batch.", KEY_GE(1)},
  {"sandblaster", "ps_shards", KEY_INT, KEY_FIELD(sandblaster_params, ps_shards), .def = "10", .unit = "shards",
   .doc = "Parameter-server shards, each on its own host, each owning a contiguous slice of every "
          "vector (parameters, gradients, L-BFGS history); at most the model's parameters.",
   KEY_GE(1)},
  {"sandblaster", "history", KEY_INT, KEY_FIELD(sandblaster_params, history), .def = "10", .unit = "pairs",
   .doc = "L-BFGS memory m: (s, y) pairs kept on the shards.", KEY_GE(1), KEY_LE(10000)},
  {"sandblaster", "portion", KEY_LONG, KEY_FIELD(sandblaster_params, portion), .def = "0", .unit = "examples",
   .doc = "Examples per portion of a batch (the training set); 0: the training set / (10 x "
          "replicas), rounded up.",
   KEY_GE(0)},
  {"sandblaster", "push_every", KEY_LONG, KEY_FIELD(sandblaster_params, push_every), .def = "4", .unit = "portions",
   .doc = "A replica pushes its accumulated gradient every this many counted portions (and at once "
          "when no fresh portion is left).",
   KEY_GE(1), KEY_LE(100000)},
  {"sandblaster", "backups", KEY_BOOL, KEY_FIELD(sandblaster_params, backups), .def = "on", .unit = "",
   .doc = "Backup tasks: near the end of a batch idle replicas get copies of outstanding portions; "
          "the first copy the coordinator counts wins, the other is discarded."},
  {"sandblaster", "backup_at", KEY_DOUBLE, KEY_FIELD(sandblaster_params, backup_at), .def = "0", .unit = "fraction",
   .doc = "Backup copies start once every portion is handed out and this share of the batch's "
          "portions counts.",
   KEY_GE(0), KEY_LE(1)},
  {"sandblaster", "gtol", KEY_DOUBLE, KEY_FIELD(sandblaster_params, gtol), .def = "1e-05", .unit = "",
   .doc = "L-BFGS stops, converged, when the gradient's 2-norm is at most this.", KEY_GE(0)},
  {"sandblaster", "partitions", KEY_INT, KEY_FIELD(sandblaster_params, partitions), .def = "1", .unit = "machines",
   .doc = "Machines each replica is split over (model parallelism, as `sgd.partitions`): its machines run "
          "each portion's passes together and each fetches and pushes only its own parameters, with the "
          "shards that hold them. Not with exact_sum or [faults].",
   KEY_GE(1)},
  {"sandblaster", "ps_placement", KEY_CHOICE, KEY_FIELD(sandblaster_params, ps_spread), .def = "after", .unit = "",
   .doc = "Where the shards sit among the hosts: `after` the replicas' machines; `spread`: one after each of "
          "ps_shards equal groups of them (as `downpour.ps_placement`); the coordinator after all. Not with "
          "host or link faults when `spread`.",
   .choices = "after|spread"},
  {"sandblaster", "exact_sum", KEY_BOOL, KEY_FIELD(sandblaster_params, exact_sum), .def = "off", .unit = "",
   .doc = "`on`: pushes carry each counted portion's gradient and shards add them in portion order, "
          "so the gradient equals the sequential full-batch one bit for bit (one slice per portion on "
          "the wire); `off`: pushes carry the replica's accumulated gradient."},
};

static int validate(const scenario *sc, const void *params, char *why, size_t len)
{
  const sandblaster_params *p = params;
  int faulty = settings_faulty(sc) || sc->faults.stragglers[0];
  if (!sc->model.numerics)
    snprintf(why, len, "model.numerics: sandblaster needs numerics (its line search and stopping test read "
             "the values); time a large network with model.virtual and a small numeric model.layers instead");
  else if (p->partitions > 1 && p->exact_sum)
    snprintf(why, len, "sandblaster.exact_sum: per-portion pushes are not available with split replicas "
             "(sandblaster.partitions = %d)", p->partitions);
  else if (p->partitions > 1 && faulty)
    snprintf(why, len, "faults: not supported with split replicas (sandblaster.partitions = %d)", p->partitions);
  else if (p->ps_spread && settings_faulty(sc))
    snprintf(why, len, "faults: host and link faults are not supported with sandblaster.ps_placement = spread");
  else
    return 0;
  return -1;
}

static size_t hosts_needed(const scenario *sc, const void *params, const char **why)
{
  (void)sc;
  *why = "sandblaster.replicas x sandblaster.partitions + sandblaster.ps_shards + 1 coordinator";
  return sandblaster_hosts_needed(params);
}

/* [faults]: the replicas are the workers; replicaK, shardK and the coordinator are
 * addressed by role. */
static size_t fault_workers(const scenario *sc, size_t n_hosts)
{
  (void)n_hosts;
  return (size_t)((const sandblaster_params *)algorithm_params(sc, &sandblaster_algorithm))->replicas;
}

static long fault_role(const scenario *sc, const char *name, size_t n_hosts)
{
  (void)n_hosts;
  const sandblaster_params *p = algorithm_params(sc, &sandblaster_algorithm);
  long k, R = p->replicas, S = p->ps_shards;
  if (run_role_number(name, "replica", &k))
    return k >= 0 && k < R ? (long)client_index(p, (size_t)k * (size_t)p->partitions) : -1;
  if (run_role_number(name, "shard", &k))
    return k >= 0 && k < S ? (long)shard_index(p, (size_t)k) : -1;
  if (strcmp(name, "coordinator") == 0)
    return (long)coord_index(p);
  return -1;
}

typedef struct sandblaster_run {
  const sandblaster_params *p;
  modelpar_split *split; /* partitions > 1 */
  sandblaster *sb;
} sandblaster_run;

static void *prepare(const run_config *cfg, char *err, size_t len)
{
  const sandblaster_params *p = algorithm_params(cfg->sc, &sandblaster_algorithm);
  if ((size_t)p->ps_shards > net_n_params(cfg->model)) {
    snprintf(err, len, "sandblaster.ps_shards: %d shards, but the model has only %zu parameters to slice",
             p->ps_shards, net_n_params(cfg->model));
    return NULL;
  }
  sandblaster_run *r = xbt_malloc0(sizeof(*r));
  r->p = p;
  if (p->partitions > 1) { /* the plan times the passes; model.layers' numerics train as a proxy */
    r->split = modelpar_split_create(cfg, (size_t)p->partitions, "sandblaster.partitions", err, len);
    if (r->split == NULL) {
      xbt_free(r);
      return NULL;
    }
  }
  return r;
}

static void deploy(void *state, const run_config *cfg, metrics *m)
{
  sandblaster_run *r = state;
  modelpar_split *s = r->split;
  r->sb = sandblaster_deploy(cfg, r->p, s ? s->plan : NULL, s ? s->gather_logits : 0, m);
  xbt_assert(r->sb, "sandblaster_deploy refused a configuration the engine checked");
}

static json_t *counts_json(const lbfgs_counts *c)
{
  json_t *o = json_object();
  json_object_set_new(o, "dot", json_integer(c->dot));
  json_object_set_new(o, "axpy", json_integer(c->axpy));
  json_object_set_new(o, "scale", json_integer(c->scale));
  json_object_set_new(o, "copy", json_integer(c->copy));
  json_object_set_new(o, "evaluate", json_integer(c->evaluate));
  return o;
}

/* summary.json's "sandblaster" block (L-BFGS's final state and command counts, the
 * batches' backup work, the straggling replicas) and batches.csv, one row per batch. */
static void report_run(void *state, const run_config *cfg, metrics *m, report *rep)
{
  (void)m;
  const sandblaster_run *run = state;
  const sandblaster *sb = run->sb;
  rep->examples = sandblaster_examples(sb);
  rep->step_workers = 1;
  rep->step = "L-BFGS iteration";
  rep->model_flops = (double)rep->examples * cfg->train_flops; /* the portions' gradients */
  rep->devices = (size_t)run->p->replicas;
  rep->worker_role = "sb-replica";
  lbfgs_result lr;
  sandblaster_result(sb, &lr);
  json_t *o = json_object();
  json_object_set_new(o, "lbfgs_status", json_string(lbfgs_status_name(lr.status)));
  json_object_set_new(o, "iterations", json_integer(lr.iterations));
  json_object_set_new(o, "evaluations", json_integer(lr.evaluations));
  json_object_set_new(o, "skipped_pairs", json_integer(lr.skipped));
  json_object_set_new(o, "f", report_num(lr.f));
  json_object_set_new(o, "gnorm", report_num(lr.gnorm));
  json_object_set_new(o, "commands", counts_json(&lr.total));
  json_object_set_new(o, "last_iteration_commands", counts_json(&lr.last));
  const sandblaster_batch *b;
  size_t nb = sandblaster_batches(sb, &b);
  long backups = 0, wins = 0, discarded = 0;
  double time = 0;
  for (size_t i = 0; i < nb; i++) {
    backups += b[i].backups;
    wins += b[i].backup_wins;
    discarded += b[i].discarded;
    time += b[i].end - b[i].start;
  }
  json_object_set_new(o, "batches", json_integer((json_int_t)nb));
  json_object_set_new(o, "batch_time_mean_s", report_num(nb ? time / (double)nb : NAN));
  json_object_set_new(o, "backups", json_integer(backups));
  json_object_set_new(o, "backup_wins", json_integer(wins));
  json_object_set_new(o, "discarded", json_integer(discarded));
  const int *ranks;
  size_t ns = sandblaster_stragglers(sb, &ranks);
  json_t *st = json_array();
  for (size_t i = 0; i < ns; i++)
    json_array_append_new(st, json_integer(ranks[i]));
  json_object_set_new(o, "stragglers", st);
  report_add_block(rep, "sandblaster", o);

  report_text t = {0};
  report_printf(&t, "batch,iteration,start_s,time_s,portions,copies,backups,backup_wins,discarded,examples,loss\n");
  for (size_t i = 0; i < nb; i++) {
    report_printf(&t, "%zu,%ld,", i + 1, b[i].iteration);
    report_double(&t, b[i].start);
    report_printf(&t, ",");
    report_double(&t, b[i].end - b[i].start);
    report_printf(&t, ",%ld,%ld,%ld,%ld,%ld,%ld,", b[i].portions, b[i].copies, b[i].backups, b[i].backup_wins,
                  b[i].discarded, b[i].examples);
    report_double(&t, b[i].f);
    report_printf(&t, "\n");
  }
  report_add_file(rep, "batches.csv", &t);
}

static void free_run(void *state)
{
  sandblaster_run *r = state;
  sandblaster_free(r->sb);
  modelpar_split_free(r->split);
  xbt_free(r);
}

/* The shards hold every vector of L-BFGS (parameters, gradient, direction, 2 x history
 * pairs, a few work vectors); each replica its parameters, gradient and accumulated
 * push. */
static double footprint(const scenario *sc, const void *params, double *actors, const char **what)
{
  const sandblaster_params *p = params;
  double P = sc->model.numerics ? algorithm_layers_params(sc) : 0;
  *actors = (double)p->replicas + (double)p->ps_shards + 2;
  *what = "(2 x sandblaster.history + 6 + 3 x sandblaster.replicas) copies of model.layers' parameters";
  return (2.0 * p->history + 6 + 3.0 * p->replicas) * P * 8;
}

const algorithm sandblaster_algorithm = {
  .name = "sandblaster",
  .summary = "Sandblaster L-BFGS: coordinator, sharded vectors, load-balanced replicas (Dean et al. 2012)",
  .section_doc = "Sandblaster L-BFGS (Dean et al. 2012): a coordinator, parameter-server shards holding every "
                 "vector, and replicas computing the full-batch gradient in portions",
  ALGORITHM_SECTION(sandblaster_keys, sandblaster_params),
  .files = "batches.csv",
  .trains_layers = 1,
  .uses_data = 1,
  .own_stragglers = 1,
  .validate = validate,
  .hosts_needed = hosts_needed,
  .fault_workers = fault_workers,
  .fault_role = fault_role,
  .footprint = footprint,
  .prepare = prepare,
  .deploy = deploy,
  .report = report_run,
  .free = free_run,
};

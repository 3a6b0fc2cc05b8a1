/* sandblaster_workers.c - Sandblaster L-BFGS's shards and replicas (Dean et al. 2012,
 * section 4.2 and Appendix): a shard runs the coordinator's commands on its slice of every
 * slot and gathers the replicas' pushes into a batch's gradient; a replica fetches the
 * iterate at a batch's start, computes the portions it is handed and pushes the counted
 * ones (Dean'12 4.2), split over K machines when partitions > 1 (Dean'12 sec. 3, 4.1).
 * The coordinator and the set-up are in sandblaster.c, the state in sandblaster_impl.h. */
#include "algorithms/sandblaster_impl.h"

#include <stdint.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/mailbox.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "algorithms/compute.h"
#include "models/minibatch.h"

/* Exactness. A portion counts exactly once, and a replica adds only the portions the
 * coordinator counted for it, so every example's gradient enters g once. With one
 * replica, its running total is lbfgs_net_fdf's sum in lbfgs_net_fdf's order, bit for
 * bit. With exact_sum, pushes carry each counted portion's gradient separately and
 * shards add them in portion order, so g is lbfgs_net_fdf's for any number of
 * replicas, stragglers and backups. */

/* ---- shards ------------------------------------------------------------------- */

/* What a shard does to its state for each message is one function, used by the shard's
 * own actor, which then computes and sends the answer itself, and by the bank
 * (sandblaster.ps_bank), which does so for every shard's part of a bundle at once. */

/* The answer to the coordinator: its message, and its wire size in *bytes. */
static msg *answer_create(const shard *s, double partial, int has_value, double *bytes)
{
  *bytes = MSG_HEADER_BYTES + (has_value ? SCALAR_BYTES : 0);
  return &sandblaster_answer_msg_create(s->rank, partial)->hdr;
}

static void answer(shard *s, double partial, int has_value)
{
  double bytes;
  msg *a = answer_create(s, partial, has_value, &bytes);
  msg_send(s->sb->answer_box, coord_host(s->sb), a, bytes);
}

static gsl_vector_view slot_row(shard *s, int slot)
{
  xbt_assert(slot >= 0 && (size_t)slot < s->slots->size1, "shard %d: slot %d out of range", s->rank, slot);
  return gsl_matrix_row(s->slots, (size_t)slot);
}

/* A dot, axpy, scale or copy on the shard's slice; returns a dot's partial sum (else 0)
 * and its cost in *flops. */
static double command_apply(shard *s, const sandblaster_command_msg *m, double *flops)
{
  gsl_vector_view a = slot_row(s, m->a), b = slot_row(s, m->b);
  double partial = 0, n = s->sim_elems;
  switch (m->op) {
  case SANDBLASTER_DOT:
    gsl_blas_ddot(&a.vector, &b.vector, &partial);
    *flops = 2 * n;
    break;
  case SANDBLASTER_AXPY:
    gsl_blas_daxpy(m->alpha, &a.vector, &b.vector);
    *flops = 2 * n;
    break;
  case SANDBLASTER_SCALE:
    gsl_blas_dscal(m->alpha, &a.vector);
    *flops = n;
    break;
  case SANDBLASTER_COPY:
    gsl_blas_dcopy(&a.vector, &b.vector);
    *flops = n;
    break;
  default:
    xbt_die("shard %d: unknown command %d", s->rank, (int)m->op);
  }
  return partial;
}

/* A command on the shard's slice, computed; answers when done. */
static void run_command(shard *s, const sandblaster_command_msg *m)
{
  double flops, partial = command_apply(s, m, &flops);
  compute_execute(s->sb->cfg, flops);
  answer(s, partial, m->op == SANDBLASTER_DOT);
}

/* Whether the batch's gradient can be summed: every portion of it is in and the
 * coordinator asked. */
static int reduce_ready(const shard *s)
{
  const sandblaster *sb = s->sb;
  int any = 0;
  for (int q = 0; q < sb->K; q++) {
    if (s->link[q] == NULL)
      continue;
    if (s->reduce_slot < 0 || s->received[q] < sb->P)
      return 0;
    xbt_assert(s->received[q] == sb->P, "shard %d: %ld portions for a batch of %ld", s->rank, s->received[q], sb->P);
    any = 1;
  }
  return any && s->reduce_slot >= 0;
}

/* Once reduce_ready: slot g = the replicas' totals added in rank order (sum mode), or
 * the portions' gradients weighted and added in portion order (exact_sum,
 * lbfgs_net_fdf's very operations), and the shard ready for the next batch. Returns its
 * cost: n flops per total added, or 2n per portion. */
static double reduce_apply(shard *s)
{
  sandblaster *sb = s->sb;
  int q0 = 0; /* the first machine index with parameters here: its count stands for its replica's */
  while (s->link[q0] == NULL)
    q0++;
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
  s->batch = 0;
  for (int q = 0; q < sb->K; q++)
    s->received[q] = 0;
  s->reduce_slot = -1;
  return flops;
}

/* The reduce, computed and answered, if it is time. */
static void try_reduce(shard *s)
{
  if (!reduce_ready(s))
    return;
  compute_execute(s->sb->cfg, reduce_apply(s));
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
 * whole slice for a whole replica), and its wire size in *bytes. */
static msg *slice_create(shard *s, const sandblaster_fetch_msg *m, double *bytes)
{
  const ps_link *k = s->link[m->machine];
  xbt_assert(k, "shard %d: a fetch from machine %d, which holds none of its parameters", s->rank, m->machine);
  gsl_vector_view v = slot_row(s, m->slot);
  sandblaster_slice_msg *r = sandblaster_slice_msg_create(s->rank, k->values);
  ps_ranges_gather(r->data, v.vector.data, s->begin, k->rb, k->re, k->n_ranges);
  *bytes = msg_bytes(k->sim_elems, s->sb->cfg->elem_bytes);
  return &r->hdr;
}

static void send_slot(shard *s, const sandblaster_fetch_msg *m)
{
  const machine *to = &s->sb->replicas[m->replica].m[m->machine];
  double bytes;
  msg *r = slice_create(s, m, &bytes);
  msg_send(to->inbox, to->host, r, bytes);
}

/* Serves commands, fetches and pushes in arrival order until stopped. */
static const char *shard_work_name(int kind)
{
  switch (kind) {
  case SANDBLASTER_MSG_COMMAND:
    return "L-BFGS command";
  case SANDBLASTER_MSG_REDUCE:
    return "reduce gradients";
  case SANDBLASTER_MSG_FORGET:
    return "forget replica";
  case SANDBLASTER_MSG_FETCH:
    return "send parameters";
  default:
    return "store gradient";
  }
}

void sandblaster_shard_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  shard *s = sg_actor_self_get_data();
  sg_mailbox_set_receiver(sg_mailbox_get_name(s->inbox));
  msg *m;
  while ((m = msg_recv(s->inbox))->kind != SANDBLASTER_MSG_STOP) {
    account_label_push("%s", shard_work_name(m->kind)); /* the timeline's names (--trace) */
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
      try_reduce(s);
      break;
    default:
      store_portions(s, sandblaster_push_portions_msg_of(m));
      try_reduce(s);
    }
    account_label_pop();
    msg_free(m);
  }
  msg_free(m);
}

/* ---- the bank (sandblaster.ps_bank) -------------------------------------------- */

/* The bank: every shard's network endpoint on one host of S times a shard host's link and
 * cores (sandblaster.c, Bank). A bundle holds one message for each shard, part[k] for
 * shard k; the bank does to each shard's state what the shard would (the functions above),
 * runs the S shards' flops side by side, each its own execution at its own host's
 * slowdown, and answers with one bundle of the S answers once the last is done. The shards
 * get every bundle together, so they are always at the same point of a batch. */

/* Shard k's flops started on the bank; bank_wait waits for all S. */
static void bank_execute(sandblaster *sb, int k, double flops)
{
  sb->bank_execs[k] = compute_execute_async_as(sb->cfg, flops, sb->shard_slowdown[k]);
}

static void bank_wait(sandblaster *sb)
{
  for (int k = 0; k < sb->S; k++)
    account_exec_wait(sb->bank_execs[k]);
}

static void bank_run_commands(sandblaster *sb, const sandblaster_bundle_msg *in)
{
  sandblaster_bundle_msg *out = sandblaster_bundle_msg_create((size_t)sb->S);
  double bytes = 0, part;
  for (int k = 0; k < sb->S; k++) {
    const sandblaster_command_msg *c = sandblaster_command_msg_of(in->part[k]);
    double flops, partial = command_apply(&sb->shards[k], c, &flops);
    bank_execute(sb, k, flops);
    out->part[k] = answer_create(&sb->shards[k], partial, c->op == SANDBLASTER_DOT, &part);
    bytes += part;
  }
  bank_wait(sb);
  msg_send(sb->answer_box, coord_host(sb), &out->hdr, bytes); /* the sum of the answers' sizes */
}

/* The shards' reduces, when it is time for them (for all at once: they are in step). */
static void bank_try_reduce(sandblaster *sb)
{
  int ready = reduce_ready(&sb->shards[0]);
  for (int k = 1; k < sb->S; k++)
    xbt_assert(reduce_ready(&sb->shards[k]) == ready, "bank: shard %d is not in step with shard 0", k);
  if (!ready)
    return;
  sandblaster_bundle_msg *out = sandblaster_bundle_msg_create((size_t)sb->S);
  double bytes = 0, part;
  for (int k = 0; k < sb->S; k++) {
    bank_execute(sb, k, reduce_apply(&sb->shards[k]));
    out->part[k] = answer_create(&sb->shards[k], 0, 0, &part);
    bytes += part;
  }
  bank_wait(sb);
  msg_send(sb->answer_box, coord_host(sb), &out->hdr, bytes); /* the sum of the answers' sizes */
}

static void bank_send_slots(sandblaster *sb, const sandblaster_bundle_msg *in)
{
  sandblaster_bundle_msg *out = sandblaster_bundle_msg_create((size_t)sb->S);
  double bytes = 0, part;
  const sandblaster_fetch_msg *f = sandblaster_fetch_msg_of(in->part[0]);
  for (int k = 0; k < sb->S; k++) {
    const sandblaster_fetch_msg *fk = sandblaster_fetch_msg_of(in->part[k]);
    xbt_assert(fk->replica == f->replica && fk->machine == f->machine, "bank: a fetch bundle of two machines");
    out->part[k] = slice_create(&sb->shards[k], fk, &part);
    bytes += part;
  }
  const machine *to = &sb->replicas[f->replica].m[f->machine];
  msg_send(to->inbox, to->host, &out->hdr, bytes); /* the sum of the slices' sizes */
}

/* One bundle: each part applied to its shard, as the shard's actor would. */
static void bank_serve(sandblaster *sb, const sandblaster_bundle_msg *b)
{
  for (int k = 0; k < sb->S; k++) {
    msg *m = b->part[k];
    switch (m->kind) {
    case SANDBLASTER_MSG_REDUCE:
      sb->shards[k].reduce_slot = sandblaster_reduce_msg_of(m)->slot;
      break;
    case SANDBLASTER_MSG_PUSH_TOTAL:
      store_total(&sb->shards[k], sandblaster_push_total_msg_of(m));
      break;
    case SANDBLASTER_MSG_PUSH_PORTIONS:
      store_portions(&sb->shards[k], sandblaster_push_portions_msg_of(m));
      break;
    default:
      xbt_die("bank: a bundle of message kind %d", m->kind);
    }
  }
  bank_try_reduce(sb);
}

/* Serves the bundles in arrival order until a bundle of stops. */
void sandblaster_bank_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  sandblaster *sb = sg_actor_self_get_data();
  sg_mailbox_set_receiver(sg_mailbox_get_name(sb->bank_box));
  for (;;) {
    msg *m = msg_recv(sb->bank_box);
    const sandblaster_bundle_msg *b = sandblaster_bundle_msg_of(m);
    xbt_assert(b->n == (size_t)sb->S, "bank: a bundle of %zu parts for %d shards", b->n, sb->S);
    int kind = b->part[0]->kind;
    if (kind == SANDBLASTER_MSG_STOP) {
      msg_free(m);
      break;
    }
    account_label_push("%s", shard_work_name(kind));
    if (kind == SANDBLASTER_MSG_COMMAND)
      bank_run_commands(sb, b);
    else if (kind == SANDBLASTER_MSG_FETCH)
      bank_send_slots(sb, b);
    else
      bank_serve(sb, b);
    account_label_pop();
    msg_free(m);
  }
}

/* ---- replicas ----------------------------------------------------------------- */

static void wait_push(machine *mc)
{
  if (mc->pushing)
    msg_wait_all(mc->push, (size_t)mc->pushing);
  mc->pushing = 0;
}

/* A shard's slice of the slot fetched, into the replica's parameters. */
static void install_slice(machine *mc, msg *reply)
{
  const sandblaster_slice_msg *m = sandblaster_slice_msg_of(reply);
  const ps_link *k = &mc->lay->link[ps_layout_find(mc->lay, m->shard)];
  xbt_assert(m->n == k->values, "machine %d of replica %d: %zu values from shard %d", mc->q, mc->r->rank, m->n,
             m->shard);
  ps_ranges_scatter(mc->r->w->data, 0, m->data, k->rb, k->re, k->n_ranges);
}

/* sandblaster.ps_bank: the fetch of every shard's slice as one request of S headers, and
 * the bank's one answer. */
static void fetch_from_bank(machine *mc, int slot)
{
  sandblaster *sb = mc->r->sb;
  sandblaster_bundle_msg *b = sandblaster_bundle_msg_create((size_t)sb->S);
  for (int k = 0; k < sb->S; k++)
    b->part[k] = &sandblaster_fetch_msg_create(mc->r->rank, mc->q, slot)->hdr;
  msg_send(sb->bank_box, sb->bank_host, &b->hdr, sb->S * (double)MSG_HEADER_BYTES);
  msg *m = msg_recv(mc->inbox);
  const sandblaster_bundle_msg *in = sandblaster_bundle_msg_of(m);
  for (size_t k = 0; k < in->n; k++)
    install_slice(mc, in->part[k]);
  msg_free(m);
}

/* Dean'12 4.2: workers fetch the parameters only at the start of a batch; a machine its
 * own, from the shards that hold them (4.1). */
static void fetch_parameters(machine *mc, long batch, int slot)
{
  replica *r = mc->r;
  sandblaster *sb = r->sb;
  const ps_layout *lay = mc->lay;
  mc->batch = batch;
  if (sb->banked) {
    fetch_from_bank(mc, slot);
    return;
  }
  for (size_t i = 0; i < lay->n_links; i++) {
    int k = lay->link[i].shard;
    msg_send(sb->shards[k].inbox, shard_host(sb, k), &sandblaster_fetch_msg_create(r->rank, mc->q, slot)->hdr,
             MSG_HEADER_BYTES);
  }
  for (size_t i = 0; i < lay->n_links; i++)
    mc->comms[i] = sg_mailbox_get_async(mc->inbox, (void **)&mc->replies[i]);
  msg_wait_all(mc->comms, lay->n_links);
  for (size_t i = 0; i < lay->n_links; i++) {
    msg_received(mc->replies[i]);
    install_slice(mc, mc->replies[i]);
    msg_free(mc->replies[i]);
  }
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

/* Dean'12 4.2: the push to the shard of link i, and its wire size in *bytes. Sum mode:
 * the running total, the machine's values of it (packed as its layout, or NULL: read
 * from the replica's total); exact_sum (whole replicas): the k newly counted portions'
 * gradients. */
static msg *push_message(machine *mc, size_t i, const long *ids, long k, long counted, const double *packed,
                         double *bytes)
{
  replica *r = mc->r;
  sandblaster *sb = r->sb;
  const ps_link *link = &mc->lay->link[i];
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
    sandblaster_push_total_msg *pt = sandblaster_push_total_msg_create(r->rank, mc->q, mc->batch, counted, link->values);
    if (packed)
      memcpy(pt->total, packed + link->offset, link->values * sizeof(double));
    else
      ps_ranges_gather(pt->total, r->total->data, 0, link->rb, link->re, link->n_ranges);
    m = &pt->hdr;
  }
  double elems = sb->p->exact_sum ? (double)k * link->sim_elems : link->sim_elems;
  *bytes = msg_bytes(elems, sb->cfg->elem_bytes) + (sb->p->exact_sum ? (double)k * SCALAR_BYTES : 0);
  return m;
}

/* Dean'12 4.2: send the gradients every few completed portions, to every shard the
 * machine talks to (push_message), or, with the bank, as one message of them all. */
static void push_gradient(machine *mc, const long *ids, long k, long counted, const double *packed)
{
  sandblaster *sb = mc->r->sb;
  const ps_layout *lay = mc->lay;
  double bytes;
  wait_push(mc);
  if (sb->banked) {
    sandblaster_bundle_msg *b = sandblaster_bundle_msg_create(lay->n_links);
    double sum = 0;
    for (size_t i = 0; i < lay->n_links; i++) {
      b->part[i] = push_message(mc, i, ids, k, counted, packed, &bytes);
      sum += bytes;
    }
    mc->push[0] = msg_send_async(sb->bank_box, sb->bank_host, &b->hdr, sum);
    mc->pushing = 1;
    return;
  }
  for (size_t i = 0; i < lay->n_links; i++) {
    msg *m = push_message(mc, i, ids, k, counted, packed, &bytes);
    mc->push[i] = msg_send_async(sb->shards[lay->link[i].shard].inbox, shard_host(sb, lay->link[i].shard), m, bytes);
  }
  mc->pushing = (int)lay->n_links;
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
void sandblaster_replica_actor(int argc, char **argv)
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
    if (k > 0) {
      account_label_push("push gradient"); /* the timeline's names (--trace) */
      push_gradient(mc, ids, k, r->n_counted, NULL);
      account_label_pop();
    }
    if (work) {
      if (w->batch != r->batch)
        begin_replica_batch(r, w->batch);
      if (w->batch != mc->batch) {
        account_label_push("fetch parameters, batch %ld", w->batch);
        fetch_parameters(mc, w->batch, w->slot_x);
        account_label_pop();
      }
      account_label_push("portion %ld", w->portion);
      compute_gradient(r, w->portion);
      report_portion(r);
      account_label_pop();
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
void sandblaster_partner_actor(int argc, char **argv)
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

/* sandblaster.c - Sandblaster L-BFGS (Dean et al. 2012, section 4.2 and Appendix): the
 * coordinator runs L-BFGS (N&W Alg. 7.5, models/lbfgs.c) through commands the shards
 * execute on their slices, hands each batch's portions out to the replicas with backup
 * copies near its end, and the set-up deploys them all. The shards and replicas are in
 * sandblaster_workers.c, the descriptor in sandblaster_config.c, the report in
 * sandblaster_report.c, the shared state in sandblaster_impl.h; messages in
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
#include "algorithms/sandblaster_impl.h"

/* The hosts and metrics slots a deployment takes (the descriptor's plan asks the same). */
size_t sandblaster_hosts_needed(const sandblaster_params *p)
{
  return (size_t)p->replicas * (size_t)p->partitions + (size_t)p->ps_shards + 1;
}

size_t sandblaster_metrics_slots(void) { return 1; }

/* ---- the coordinator: commands -------------------------------------------------- */

/* Commands. The coordinator runs lbfgs_step (models/lbfgs.c) with `shard_ops`: dot,
 * axpy, scale and copy each become one COMMAND message to every shard and one ANSWER
 * back from each, the coordinator waiting for all S answers; a dot's answers carry the
 * slices' partial sums, added in shard-rank order (never in arrival order, which
 * could differ between runs with several threads), so one shard gives the sequential
 * reference's dot exactly. Each command costs its shard 2n flops (dot,
 * axpy) or n (scale, copy), n the shard's slice of the simulated parameters. */

/* Bank. With sandblaster.ps_bank the S shards keep their slices and their work, but meet
 * the network through one bank host (cfg->banks[0], of S times a shard host's link and
 * cores): what the coordinator or a replica sends to each shard travels as one BUNDLE
 * message of the S parts, sized by their sum, and the bank answers with one bundle of
 * the S answers (sandblaster_bank_actor). A dot's partial sums still add in shard-rank
 * order, so the iterates are those of the exact model's. */

/* sb->out[k], a message for shard k of wire size `bytes`, to every shard, or as one
 * bundle of S times the bytes to the bank. */
static void send_to_shards(sandblaster *sb, double bytes)
{
  if (sb->banked) {
    sandblaster_bundle_msg *b = sandblaster_bundle_msg_create((size_t)sb->S);
    for (int k = 0; k < sb->S; k++)
      b->part[k] = sb->out[k];
    msg_send(sb->bank_box, sb->bank_host, &b->hdr, sb->S * bytes);
    return;
  }
  for (int k = 0; k < sb->S; k++)
    msg_send(sb->shards[k].inbox, shard_host(sb, k), sb->out[k], bytes);
}

/* The S shards' answers (one bundle from the bank), each one's partial result into
 * partials[shard]. */
static void collect_answers(sandblaster *sb)
{
  if (sb->banked) {
    msg *m = msg_recv(sb->answer_box);
    const sandblaster_bundle_msg *b = sandblaster_bundle_msg_of(m);
    for (size_t k = 0; k < b->n; k++) {
      const sandblaster_answer_msg *ans = sandblaster_answer_msg_of(b->part[k]);
      sb->partials[ans->shard] = ans->partial;
    }
    msg_free(m);
    return;
  }
  for (int k = 0; k < sb->S; k++) {
    msg *m = msg_recv(sb->answer_box);
    const sandblaster_answer_msg *ans = sandblaster_answer_msg_of(m);
    sb->partials[ans->shard] = ans->partial;
    msg_free(m);
  }
}

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
    sb->out[k] = &sandblaster_command_msg_create(op, a, b, alpha)->hdr;
  send_to_shards(sb, bytes);
  collect_answers(sb);
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

/* Batches. evaluate(x, g) is one pass over the whole training set (full-batch L-BFGS),
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
 * portions.c's decision; the coordinator sends what it decides. */

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
  xbt_assert(!sb->banked, "coordinator: a replica's death with the bank, which refuses [faults]");
  for (int k = 0; k < sb->S; k++)
    sb->out[k] = &sandblaster_forget_msg_create(sb->batch, d->replica)->hdr;
  send_to_shards(sb, MSG_HEADER_BYTES + SCALAR_BYTES);
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
    sb->out[k] = &sandblaster_reduce_msg_create(g)->hdr;
  send_to_shards(sb, MSG_HEADER_BYTES);
  collect_answers(sb);
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

/* Stopping. Replicas wait for work until a STOP message; shards serve until one. At
 * the end the coordinator collects the report of every replica still computing (a
 * copy that will not count) and answers it with STOP. The messages are declared in
 * sandblaster_msg.h. */

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
    sb->out[k] = &sandblaster_stop_msg_create()->hdr;
  send_to_shards(sb, MSG_HEADER_BYTES);
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
static void sandblaster_snapshot(void *ctx, gsl_vector *w)
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

/* sandblaster.ps_bank: the shards' one endpoint on cfg->banks[0] (Bank, above), each
 * shard's work there at its own host's slowdown in the exact model; the shards' hosts,
 * placed as in the exact model, stay idle. */
static void start_bank(sandblaster *sb)
{
  const run_config *cfg = sb->cfg;
  xbt_assert(cfg->n_banks == 1 && sb->K == 1 && cfg->faults == NULL && sb->layouts[0]->n_links == (size_t)sb->S,
             "sandblaster: a bank for a configuration the plan did not allow");
  for (int k = 0; k < sb->S; k++) /* bundles carry shard k's part at k, as the whole layout's links */
    xbt_assert(sb->layouts[0]->link[k].shard == k, "sandblaster: link %d is shard %d's", k,
               sb->layouts[0]->link[k].shard);
  sb->banked = 1;
  sb->bank_host = cfg->banks[0];
  sb->bank_box = mbox_of("sb-bank", 0);
  sb->shard_slowdown = xbt_malloc((size_t)sb->S * sizeof(double));
  for (int k = 0; k < sb->S; k++)
    sb->shard_slowdown[k] = cfg->host_slowdown ? cfg->host_slowdown[shard_index(sb->p, (size_t)k)] : 1.0;
  sb->bank_execs = xbt_malloc0((size_t)sb->S * sizeof(sg_exec_t));
  start_actor("sb-bank", 0, sb->bank_host, sb, sandblaster_bank_actor);
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
  sb->out = xbt_malloc0((size_t)sb->S * sizeof(msg *));
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
  sb->eval = eval_ctl_create(cfg, m, 1, sandblaster_snapshot, sb);
  if (cfg->n_banks > 0)
    start_bank(sb);
  else
    for (int k = 0; k < sb->S; k++)
      start_actor("sb-shard", k, shard_host(sb, k), &sb->shards[k], sandblaster_shard_actor);
  for (int r = 0; r < sb->R; r++) {
    start_actor("sb-replica", r, replica_host(sb, r), &sb->replicas[r], sandblaster_replica_actor);
    for (int q = 1; q < sb->K; q++)
      start_actor("sb-part", r * sb->K + q, sb->replicas[r].m[q].host, &sb->replicas[r].m[q], sandblaster_partner_actor);
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
  xbt_free(sb->out);
  xbt_free(sb->shard_slowdown);
  xbt_free(sb->bank_execs);
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

/* consensus.c - distributed subgradient consensus over real messages (Nedic and
 * Ozdaglar, IEEE TAC 2009): each agent's loop (send its state, compute a subgradient,
 * receive its neighbours' values, mix, step), its async inbox actor, sync mode's stop
 * decision, and the set-up. Each round's weights are in consensus_rounds.c, the
 * meter in consensus_measure.c (fed the agents' states from here), the descriptor in consensus_config.c, the report
 * in consensus_report.c, the shared state in consensus_impl.h, the messages in
 * consensus_msg.h. */
#include "algorithms/consensus.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/mutex.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "algorithms/compute.h"
#include "algorithms/eval.h"
#include "algorithms/consensus_msg.h"
#include "models/rng.h"
#include "algorithms/consensus_impl.h"

/* The hosts and metrics slots a deployment takes (the descriptor's plan asks the same). */
size_t consensus_hosts_needed(const consensus_setup *p) { return p->agents; }
size_t consensus_metrics_slots(const consensus_setup *p) { return p->agents; }

/* ---- costs ------------------------------------------------------------------ */

/* One subgradient of f_i: two passes over the agent's rows x dim shard, the residuals
 * A x and then A^T s, each a multiply and an add per entry (as the cost model counts a dense
 * layer); the ridge term's 2 dim flops are left out. */
static double subgradient_flops(const consensus *c)
{
  return 4.0 * (double)c->rows * (double)c->dim;
}

/* Mixing n values (a multiply and an add per element each) and the step (another). */
static double mix_flops(const consensus *c, size_t n)
{
  return 2.0 * (double)c->dim * (double)(n + 1);
}

static double step_size(const consensus_setup *p, long k)
{
  switch (p->step_rule) {
  case CONSENSUS_STEP_CONSTANT: return p->alpha0;
  case CONSENSUS_STEP_HARMONIC: return p->alpha0 / (double)(k + 1);
  case CONSENSUS_STEP_SQRT: return p->alpha0 / sqrt((double)(k + 1));
  }
  xbt_die("unknown step rule %d", (int)p->step_rule);
}

/* Sync mode keeps rounds: an agent mixes only once it has every active neighbour's
 * round-k value, and keeps a value that arrives from a neighbour already in a later
 * round for that round. Async mode never waits: each agent mixes with the latest value
 * received from each active neighbour (x_j(0) = 0 until one arrives), so how stale it
 * is comes from simulated compute and network time; staleness = k minus the value's
 * round (0 if the neighbour is ahead) is recorded for every value mixed (all 0 in
 * sync mode). */

/* ---- messages ----------------------------------------------------------------------- */

/* Position of agent j among a's union neighbours. */
static size_t nbr_pos(const agent *a, size_t j)
{
  size_t lo = 0, hi = a->deg;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (a->nb[mid] < j)
      lo = mid + 1;
    else
      hi = mid;
  }
  xbt_assert(lo < a->deg && a->nb[lo] == j, "agent %zu: %zu is not a neighbour", a->rank, j);
  return lo;
}

/* Copies the iterate m carries into *x (dim values) and its round into *step, unless
 * *step is already later; returns whether it did. */
static int keep_newer(size_t dim, double *x, long *step, const consensus_state_msg *m)
{
  xbt_assert(m->dim == dim, "agent %d sent %zu values, not %zu", m->src, m->dim, dim);
  if (m->k < *step)
    return 0;
  memcpy(x, m->x, dim * sizeof(double));
  *step = m->k;
  return 1;
}

/* Sync: keeps an iterate as its sender's latest; frees the message. */
static void keep_value(agent *a, consensus_state_msg *m)
{
  size_t p = nbr_pos(a, (size_t)m->src), dim = a->c->dim;
  keep_newer(dim, a->latest + p * dim, &a->latest_step[p], m);
  msg_free(m);
}

/* Async, in the inbox actor: a neighbour's iterate. */
static void inbox_keep_state(agent *a, const consensus_state_msg *m)
{
  inbox *in = &a->in;
  size_t p = nbr_pos(a, (size_t)m->src), dim = a->c->dim;
  sg_mutex_lock(in->mu);
  in->received[p]++;
  if (keep_newer(dim, in->newest + p * dim, &in->newest_step[p], m))
    in->fresh[p] = 1;
  sg_mutex_unlock(in->mu);
}

/* Async, in the inbox actor: a neighbour has stopped, after `sent` iterates to us. */
static void inbox_keep_done(agent *a, const consensus_done_msg *m)
{
  inbox *in = &a->in;
  size_t p = nbr_pos(a, (size_t)m->src);
  sg_mutex_lock(in->mu);
  in->done[p] = 1;
  in->announced[p] = m->sent;
  sg_mutex_unlock(in->mu);
}

/* Async, in the inbox actor: an iterate or a done notice; frees the message. */
static void inbox_keep(agent *a, msg *m)
{
  if (m->kind == CONSENSUS_MSG_STATE)
    inbox_keep_state(a, consensus_state_msg_of(m));
  else
    inbox_keep_done(a, consensus_done_msg_of(m));
  msg_free(m);
}

/* Async, in the inbox actor: more messages will come (a neighbour is not done, or some
 * of its values are still on their way). The inbox actor is the only writer of these
 * counts, so it reads them without the lock. */
static int expecting(const agent *a)
{
  for (size_t p = 0; p < a->deg; p++)
    if (!a->in.done[p] || a->in.received[p] < a->in.announced[p])
      return 1;
  return 0;
}

/* Async: takes from the inbox every value that has arrived since the last take, and
 * which neighbours are done. */
static void inbox_take(agent *a)
{
  inbox *in = &a->in;
  size_t dim = a->c->dim;
  sg_mutex_lock(in->mu);
  for (size_t p = 0; p < a->deg; p++) {
    if (in->fresh[p]) {
      memcpy(a->latest + p * dim, in->newest + p * dim, dim * sizeof(double));
      a->latest_step[p] = in->newest_step[p];
      in->fresh[p] = 0;
    }
    a->nb_done[p] = in->done[p];
  }
  sg_mutex_unlock(in->mu);
}

/* Sync: takes the kept values of round k; returns how many. */
static size_t take_early(agent *a, long k)
{
  size_t got = 0, kept = 0;
  for (size_t e = 0; e < a->n_early; e++) {
    if (a->early[e]->k == k) {
      keep_value(a, a->early[e]);
      got++;
    } else {
      a->early[kept++] = a->early[e];
    }
  }
  a->n_early = kept;
  return got;
}

static void keep_early(agent *a, consensus_state_msg *m)
{
  if (a->n_early == a->cap_early) {
    a->cap_early = a->cap_early ? 2 * a->cap_early : 4;
    a->early = xbt_realloc(a->early, a->cap_early * sizeof(consensus_state_msg *));
  }
  a->early[a->n_early++] = m;
}

/* ---- steps of an agent ------------------------------------------------------------- */

/* Sync mode decides when to stop for all agents at once: the first agent to find the
 * step limit, the time limit or a divergence fixes the end at the furthest round any
 * agent has started, so none waits for a neighbour that has left. Async agents stop on
 * their own. */
static int goes_on(agent *a, long k)
{
  consensus *c = a->c;
  const run_config *cfg = c->cfg;
  if (c->p->async)
    return k < cfg->max_steps && !eval_should_stop(c->eval);
  sg_mutex_lock(c->mu);
  if (c->stop_at < 0 && (c->stop || k >= cfg->max_steps || simgrid_get_clock() >= cfg->max_sim_time))
    c->stop_at = c->started > k ? c->started : k;
  int go = c->stop_at < 0 || k < c->stop_at;
  if (go && k + 1 > c->started)
    c->started = k + 1;
  sg_mutex_unlock(c->mu);
  return go;
}

/* Nedic-Ozdaglar: x_i(k) goes to every neighbour j with a_ji(k) in use (an async agent
 * skips neighbours that are done). */
static void send_state(agent *a, const round_w *w, long k)
{
  consensus *c = a->c;
  for (size_t e = w->start[a->rank]; e < w->start[a->rank + 1]; e++) {
    size_t j = w->idx[e];
    if (j == a->rank)
      continue;
    size_t p = nbr_pos(a, j);
    if (c->p->async && a->nb_done[p])
      continue;
    consensus_state_msg *m = consensus_state_msg_create((int)a->rank, k, c->dim);
    memcpy(m->x, a->x->data, c->dim * sizeof(double));
    msg_send(c->agents[j].mbox, c->cfg->hosts[j], &m->hdr, msg_bytes((double)c->dim, c->cfg->elem_bytes));
    a->sent[p]++;
  }
}

/* d_i(k) in the subdifferential of f_i at x_i(k) (objective.h picks the element). */
static void compute_subgradient(agent *a)
{
  consensus *c = a->c;
  objective_subgrad(c->p->fs[a->rank], a->x, a->d);
  compute_execute(c->cfg, subgradient_flops(c));
}

/* Sync: every active neighbour's x_j(k); async: what has arrived. */
static void receive_neighbours(agent *a, const round_w *w, long k)
{
  if (a->c->p->async) {
    inbox_take(a);
    return;
  }
  size_t need = row_len(w, a->rank) - 1, got = take_early(a, k);
  while (got < need) {
    consensus_state_msg *m = consensus_state_msg_of(msg_recv(a->mbox));
    xbt_assert(m->k >= k, "agent %zu in round %ld got the iterate of round %ld", a->rank, k, m->k);
    if (m->k == k) {
      keep_value(a, m);
      got++;
    } else {
      keep_early(a, m);
    }
  }
}

/* v_i = sum_j a_ij(k) x_j, j ascending; records each neighbour value's staleness. */
static void mix(agent *a, const round_w *w, long k)
{
  consensus *c = a->c;
  gsl_vector_set_zero(a->v);
  for (size_t e = w->start[a->rank]; e < w->start[a->rank + 1]; e++) {
    size_t j = w->idx[e];
    const double *xj = a->x->data;
    if (j != a->rank) {
      size_t p = nbr_pos(a, j);
      xj = a->latest + p * c->dim;
      metrics_slot_staleness(a->slot, k > a->latest_step[p] ? k - a->latest_step[p] : 0);
    }
    gsl_vector_const_view xv = gsl_vector_const_view_array(xj, c->dim);
    gsl_blas_daxpy(w->a[e], &xv.vector, a->v);
  }
}

/* x_i(k+1) = v_i - alpha(k) d_i(k); x_i(k) joins the running sum. */
static void subgradient_step(agent *a, const round_w *w, long k)
{
  consensus *c = a->c;
  compute_execute(c->cfg, mix_flops(c, row_len(w, a->rank)));
  sg_mutex_lock(a->mu);
  gsl_vector_add(a->xsum, a->x);
  gsl_vector_memcpy(a->x, a->v);
  gsl_blas_daxpy(-step_size(c->p, k), a->d, a->x);
  a->k_done = k + 1;
  sg_mutex_unlock(a->mu);
}

/* Sync: deposits agent i's state of round r into the meter; the last of the m agents
 * measures the round, and a gap that diverged stops the run. */
static void deposit_state(agent *a, long r)
{
  consensus *c = a->c;
  sg_mutex_lock(c->mu);
  if (consensus_meter_deposit(c->meter, r, a->rank, a->x, a->xsum, a->k_done) != 0)
    c->stop = 1;
  sg_mutex_unlock(c->mu);
}

/* Counts the iteration; sync: deposits x_i(k+1) for round k+1's measurement. */
static void record_state(agent *a, long k)
{
  a->slot->steps++;
  if (a->c->p->async)
    eval_step_done(a->c->eval);
  else
    deposit_state(a, k + 1);
}

/* Async: tells every neighbour how many values it sent, so that its inbox actor knows
 * when it has them all. Sync needs no such end: every value sent was for a round its
 * receiver ran. */
static void say_done(agent *a)
{
  consensus *c = a->c;
  if (!c->p->async) {
    xbt_assert(a->n_early == 0, "agent %zu ends with %zu values of later rounds", a->rank, a->n_early);
    return;
  }
  eval_finished(c->eval);
  for (size_t p = 0; p < a->deg; p++) {
    consensus_done_msg *m = consensus_done_msg_create((int)a->rank, a->sent[p]);
    msg_send(c->agents[a->nb[p]].mbox, c->cfg->hosts[a->nb[p]], &m->hdr, MSG_HEADER_BYTES);
  }
}

/* Agent i repeats, for k = 0, 1, ... (Nedic and Ozdaglar, IEEE TAC 2009):
 *   send_state           x_i(k) to every neighbour j whose edge is active in round k
 *   compute_subgradient  d_i(k), a subgradient of f_i at x_i(k), while the values travel
 *   receive_neighbours   sync: x_j(k) from every active neighbour j;
 *                        async: whatever values have arrived, the latest from each j
 *   mix                  v_i = sum_j a_ij(k) x_j over j = i and the active neighbours
 *   subgradient_step     x_i(k+1) = v_i - alpha(k) d_i(k)
 * Every x_i(0) is 0. The weights a_ij(k) are one doubly-stochastic matrix for a fixed
 * graph, or each round's weights of the active subgraph of a time-varying graph
 * (graph_tv), generated once per round for all agents, so that an edge is active for
 * both of its ends: the exchange is symmetric, as the paper's doubly-stochastic case
 * needs. */
static void agent_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  agent *a = sg_actor_self_get_data();
  consensus *c = a->c;
  if (!c->p->async)
    sg_mailbox_set_receiver(sg_mailbox_get_name(a->mbox)); /* values travel as they are sent */
  sg_barrier_wait(c->ready);
  for (long k = 0; goes_on(a, k); k++) {
    const round_w *w = consensus_schedule_round(&c->sched, k);
    account_label_push("round %ld", k); /* the timeline's names (--trace) */
    account_label_push("send state");
    send_state(a, w, k);
    account_label_pop();
    account_label_push("subgradient");
    compute_subgradient(a);
    account_label_pop();
    account_label_push("wait for neighbours");
    receive_neighbours(a, w, k);
    account_label_pop();
    account_label_push("mix and step");
    mix(a, w, k);
    subgradient_step(a, w, k);
    account_label_pop();
    account_label_pop();
    consensus_schedule_done(&c->sched, k);
    record_state(a, k);
  }
  say_done(a);
}

/* Async messages are taken by a second actor per agent, its inbox (inbox_actor), which
 * receives with blocking calls and keeps the newest value of each neighbour; at
 * receive_neighbours the agent takes those kept so far, that is every value that has
 * arrived. The agent itself never polls a receive: in SimGrid 3.32 a comm that
 * sg_comm_test finds done stays in its actor's activity list for the actor's lifetime
 * (CommImpl::finish removes it only for a simcall waiting on it), and every
 * sg_actor_execute removes its exec from that list with a linear scan
 * (ExecImpl::post), so polling made each iteration cost O(values received so far)
 * and a run O(n^2) in its length. (sg_comm_wait_any_for with timeout 0 is no way out:
 * when it times out, 3.32's C wrapper drops a reference to every comm it was given,
 * freeing the pending receive under the caller.) */
/* Async: agent i's receiving side. It receives every message sent to agent i, each with
 * a blocking receive (which SimGrid drops from its activity list once done), and keeps
 * the newest value of each neighbour for the agent to take; it ends once every
 * neighbour is done and all of that neighbour's values are in, so no send is left
 * unmatched. */
static void inbox_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  agent *a = sg_actor_self_get_data();
  sg_mailbox_set_receiver(sg_mailbox_get_name(a->mbox)); /* values travel as they are sent */
  sg_barrier_wait(a->c->ready);
  while (expecting(a))
    inbox_keep(a, msg_recv(a->mbox));
}

/* ---- set-up ---------------------------------------------------------------------------- */

/* n neighbour slots of dim values each (x_j(0) = 0, round 0). */
static void inbox_init(inbox *in, size_t n, size_t dim)
{
  in->mu = sg_mutex_init();
  in->newest = xbt_malloc0(n * dim * sizeof(double));
  in->newest_step = xbt_malloc0(n * sizeof(long));
  in->fresh = xbt_malloc0(n * sizeof(int));
  in->received = xbt_malloc0(n * sizeof(long));
  in->announced = xbt_malloc0(n * sizeof(long));
  in->done = xbt_malloc0(n * sizeof(int));
}

/* Frees what inbox_init allocated; a zeroed inbox (sync mode) is a no-op. */
static void inbox_release(inbox *in)
{
  if (in->mu == NULL)
    return;
  sg_mutex_destroy(in->mu);
  xbt_free(in->newest);
  xbt_free(in->newest_step);
  xbt_free(in->fresh);
  xbt_free(in->received);
  xbt_free(in->announced);
  xbt_free(in->done);
}

static void agent_init(consensus *c, agent *a, size_t i)
{
  size_t dim = c->dim;
  a->c = c;
  a->rank = i;
  a->mbox = mbox_of("agent", (int)i);
  a->nb = graph_neighbors(c->p->g, i);
  a->deg = graph_degree(c->p->g, i);
  a->x = gsl_vector_calloc(dim);
  a->v = gsl_vector_calloc(dim);
  a->d = gsl_vector_calloc(dim);
  a->xsum = gsl_vector_calloc(dim);
  size_t n = a->deg ? a->deg : 1;
  a->latest = xbt_malloc0(n * dim * sizeof(double));
  a->latest_step = xbt_malloc0(n * sizeof(long));
  a->sent = xbt_malloc0(n * sizeof(long));
  a->nb_done = xbt_malloc0(n * sizeof(int));
  a->mu = sg_mutex_init();
  a->slot = metrics_slot_at(c->met, i);
  if (c->p->async)
    inbox_init(&a->in, n, dim);
}

static void agent_release(agent *a)
{
  gsl_vector_free(a->x);
  gsl_vector_free(a->v);
  gsl_vector_free(a->d);
  gsl_vector_free(a->xsum);
  xbt_free(a->latest);
  xbt_free(a->latest_step);
  xbt_free(a->sent);
  xbt_free(a->nb_done);
  inbox_release(&a->in);
  for (size_t e = 0; e < a->n_early; e++)
    msg_free(a->early[e]);
  xbt_free(a->early);
  sg_mutex_destroy(a->mu);
}

/* Async evaluator: copies every agent's state, each under its agent's lock. */
static void consensus_snapshot(void *ctx, gsl_vector *w)
{
  consensus *c = ctx;
  long done = 0;
  for (size_t i = 0; i < c->m; i++) {
    agent *a = &c->agents[i];
    sg_mutex_lock(a->mu);
    consensus_meter_state(a->x, a->xsum, a->k_done, w->data + i * CONSENSUS_STATE_LEN(c->dim));
    done += a->k_done;
    sg_mutex_unlock(a->mu);
  }
  c->snap_iteration = done / (long)c->m;
}

/* Async evaluator: the snapshot's measurement, its optimality gap as the loss. */
static int consensus_measure(void *ctx, const gsl_vector *w, double *loss, double *accuracy)
{
  consensus *c = ctx;
  *loss = consensus_meter_record(c->meter, c->snap_iteration, w->data);
  *accuracy = NAN;
  return 0;
}

/* Starts fn as "role-i" on agent i's host, with agent i as its data. */
static void start_actor(consensus *c, const char *role, size_t i, void (*fn)(int, char **))
{
  char name[32];
  mbox_name(name, sizeof(name), role, (int)i);
  sg_actor_t actor = sg_actor_init(name, c->cfg->hosts[i]);
  sg_actor_set_data(actor, &c->agents[i]);
  sg_actor_start(actor, fn, 0, NULL);
}

consensus *consensus_deploy(const run_config *cfg, const consensus_setup *p, metrics *m)
{
  if (cfg->n_hosts < consensus_hosts_needed(p) || cfg->max_steps <= 0 || !cfg->numerics || p->agents == 0)
    return NULL;
  consensus *c = xbt_malloc0(sizeof(*c));
  c->cfg = cfg;
  c->p = p;
  c->m = p->agents;
  c->dim = objective_dim(p->fs[0]);
  c->rows = objective_rows(p->fs[0]);
  c->met = m;
  c->mu = sg_mutex_init();
  c->stop_at = -1;
  c->meter = consensus_meter_create(cfg, m, c->m, c->dim, p->fs, p->fstar);
  consensus_schedule_init(&c->sched, cfg, p);
  c->ready = sg_barrier_init((unsigned)(p->async ? 2 * c->m : c->m));
  c->agents = xbt_malloc0(c->m * sizeof(agent));
  for (size_t i = 0; i < c->m; i++)
    agent_init(c, &c->agents[i], i);
  double *st0 = xbt_malloc0(c->m * CONSENSUS_STATE_LEN(c->dim) * sizeof(double));
  metrics_record_eval(m, 0.0, 0, consensus_meter_record(c->meter, 0, st0), NAN); /* every x_i(0) = 0, k = 0 */
  xbt_free(st0);
  if (p->async) {
    c->eval = eval_ctl_create(cfg, m, (int)c->m, consensus_snapshot, c);
    eval_set_snapshot_size(c->eval, c->m * CONSENSUS_STATE_LEN(c->dim));
    eval_set_measure(c->eval, consensus_measure, c);
  }
  for (size_t i = 0; i < c->m; i++)
    start_actor(c, "agent", i, agent_actor);
  for (size_t i = 0; i < c->m && p->async; i++)
    start_actor(c, "inbox", i, inbox_actor);
  if (c->eval)
    eval_start(c->eval, cfg->hosts[0]);
  return c;
}

void consensus_free(consensus *c)
{
  if (c == NULL)
    return;
  for (size_t i = 0; i < c->m; i++)
    agent_release(&c->agents[i]);
  xbt_free(c->agents);
  consensus_schedule_free(&c->sched);
  sg_barrier_destroy(c->ready);
  eval_ctl_free(c->eval);
  sg_mutex_destroy(c->mu);
  consensus_meter_free(c->meter);
  xbt_free(c);
}

size_t consensus_trace(const consensus *c, const consensus_point **points)
{
  return consensus_meter_trace(c->meter, points);
}

/* downpour.c - Downpour SGD: asynchronous replicas against a sharded parameter server.
 *
 * Each replica loops (Dean'12 4.1): every n_fetch steps fetch_parameters from the
 * shards; compute_gradient on a minibatch of its own data shard; accrue it; every
 * n_push steps push_gradient, one slice to each shard. Shards apply updates as they
 * arrive (ps.c). With overlap = on, fetch, compute and push run as three weakly
 * synchronised activities: the next fetch and the last push travel while the
 * replica computes. Warmstart: replica 0 trains alone for warmstart_steps steps,
 * then releases the others. Split replicas (Dean'12 sec. 3) and the shared state:
 * downpour_impl.h; the descriptor: downpour_config.c; the report: downpour_report.c. */
#include "algorithms/account.h"
#include "algorithms/downpour.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/mutex.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/compute.h"
#include "algorithms/courier.h"
#include "algorithms/eval.h"
#include "algorithms/faults.h"
#include "algorithms/modelpar.h"
#include "algorithms/msg.h"
#include "algorithms/ps.h"
#include "algorithms/ps_bank.h"
#include "algorithms/ps_layout.h"
#include "algorithms/ps_msg.h"
#include "models/minibatch.h"
#include "models/rng.h"
#include "algorithms/downpour_impl.h"

/* The hosts and metrics slots a deployment takes (the descriptor's plan asks the same). */
size_t downpour_hosts_needed(const downpour_params *p)
{
  return (size_t)p->replicas * (size_t)p->partitions + (size_t)p->ps_shards;
}

size_t downpour_metrics_slots(const downpour_params *p)
{
  return (size_t)p->ps_shards + (size_t)p->replicas;
}

/* ---- steps of a replica ------------------------------------------------- */

static sg_host_t shard_host(const downpour *d, int s)
{
  size_t M = (size_t)d->p->replicas * (size_t)d->p->partitions;
  return d->cfg->hosts[ps_place_shard(M, (size_t)d->p->ps_shards, (size_t)s, d->p->ps_spread)];
}

static double remaining(double deadline)
{
  double left = deadline - simgrid_get_clock();
  return left > 0 ? left : 0;
}

static void start_listening(replica *r)
{
  sg_mailbox_set_receiver(sg_mailbox_get_name(r->inbox)); /* replies flow as sent */
  if (r->mp)
    modelpar_replica_listen(r->mp, (size_t)r->part);
}

static int replica_gone(void *ctx, int rank)
{
  downpour *d = ctx;
  sg_mutex_lock(d->gone_mu);
  int gone = d->finished[rank] || d->dead[rank];
  sg_mutex_unlock(d->gone_mu);
  return gone;
}

/* [faults]: replica 0 may die before it releases the others. */
static void wait_for_release_bounded(replica *r)
{
  while (!replica_gone(r->d, 0)) {
    msg *m = NULL;
    sg_comm_t c = sg_mailbox_get_async(r->inbox, (void **)&m);
    if (sg_comm_wait_for(c, r->d->fp->wait_timeout) == SG_OK) {
      msg_received(m);
      int go = m->kind == PS_MSG_RELEASE;
      msg_free(m);
      if (go)
        return;
    }
  }
}

/* Dean'12 4.1: warmstart with replica 0 alone; the others wait for its release. */
static void wait_for_warmstart(replica *r)
{
  if (r->rank == 0 || r->d->p->warmstart_steps == 0)
    return;
  if (r->d->fp) {
    wait_for_release_bounded(r);
    return;
  }
  msg_free(ps_release_msg_of(msg_recv(r->inbox))); /* aborts on any other kind */
}

/* Detached: at the end of a run (say_done) nobody may be waiting for it. Without a
 * warmstart nobody waits for it at all, and a release would land in a replica's inbox among
 * its shards' replies. */
static void release_warmstart(replica *r)
{
  downpour *d = r->d;
  if (r->rank != 0 || r->released || d->p->warmstart_steps == 0)
    return;
  for (int i = 1; i < d->p->replicas; i++) {
    const replica *peer = &d->replicas[i * d->p->partitions + r->part];
    msg_send_detached(peer->inbox, d->client_hosts[peer->client], &ps_release_msg_create()->hdr, MSG_HEADER_BYTES);
  }
  r->released = 1;
}

/* Whether the replica starts step `step`: not after a stop request or max_steps. A whole
 * replica asks the evaluator before its first step, then takes end_step's answer; a
 * split one's machines agree on the same last step (modelpar_replica_goes_on). */
static int goes_on(replica *r, long step)
{
  const run_config *cfg = r->d->cfg;
  int last = cfg->max_steps > 0 && step >= cfg->max_steps;
  if (r->mp == NULL)
    return step == 0 ? !eval_should_stop(r->d->eval) : !r->stop && !last;
  return modelpar_replica_goes_on(r->mp, step, eval_should_stop(r->d->eval) || last);
}

/* The step is counted (by a split replica's machine 0) and told to the evaluator, and
 * the end of warmstart releases the others: a whole replica releases first, a split one
 * last, each in the order of simulation calls its results were recorded with. */
static void end_step(replica *r, long step)
{
  int release = step + 1 == r->d->p->warmstart_steps;
  if (r->part == 0)
    r->slot->steps++;
  if (r->mp == NULL) {
    if (release)
      release_warmstart(r);
    r->stop = eval_step_done(r->d->eval);
    return;
  }
  if (r->part == 0)
    eval_step_done(r->d->eval);
  if (release)
    release_warmstart(r);
}

/* The links of the machine's layout to bank g's shards (a whole replica's: all of them). */
static int bank_parts(const replica *r, int g)
{
  int first = ps_bank_first(r->d->banks[g]), n = 0;
  for (size_t i = 0; i < r->lay->n_links; i++)
    n += r->lay->link[i].shard >= first && r->lay->link[i].shard < first + ps_bank_size(r->d->banks[g]);
  return n;
}

/* The messages a fetch or a push exchanges: one with each of its shards, or with each
 * bank holding some of them. */
static size_t endpoints(const replica *r)
{
  size_t n = 0;
  for (int g = 0; r->d->banks && g < r->d->n_banks; g++)
    n += bank_parts(r, g) > 0;
  return r->d->banks ? n : r->lay->n_links;
}

static void request_parameters(replica *r)
{
  const ps_layout *lay = r->lay;
  quantum_align(r->d->p->comm_quantum);
  for (int g = 0; r->d->banks && g < r->d->n_banks; g++) /* one request for its shards in the bank */
    if (bank_parts(r, g) > 0)
      msg_send(ps_bank_mailbox(r->d->banks[g]), r->d->bank_hosts[g], &ps_fetch_msg_create(r->client, 0)->hdr,
               bank_parts(r, g) * (double)MSG_HEADER_BYTES);
  for (size_t i = 0; !r->d->banks && i < lay->n_links; i++) {
    int s = lay->link[i].shard;
    msg_send(r->d->shard_box[s], shard_host(r->d, s), &ps_fetch_msg_create(r->client, 0)->hdr, MSG_HEADER_BYTES);
  }
  for (size_t i = 0; i < endpoints(r); i++)
    r->fetch_comms[i] = sg_mailbox_get_async(r->inbox, (void **)&r->replies[i]);
  r->fetch_in_flight = 1;
}

/* Puts a shard's reply into w and notes its version. */
static void install(replica *r, const ps_params_msg *m)
{
  int i = ps_layout_find(r->lay, m->shard);
  xbt_assert(i >= 0 && m->n == r->lay->link[i].values, "replica %d: %zu values from shard %d", r->client, m->n,
             m->shard);
  const ps_link *k = &r->lay->link[i];
  r->fetched_version[i] = m->version;
  if (r->w)
    ps_ranges_scatter(r->w->data, 0, m->values, k->rb, k->re, k->n_ranges);
}

/* Waits for the replies of the fetch in flight and installs them. */
static void install_parameters(replica *r)
{
  msg_wait_all(r->fetch_comms, endpoints(r));
  for (size_t i = 0; i < endpoints(r); i++) {
    msg_received(r->replies[i]);
    if (r->d->banks) { /* a bank's reply: its shards' replies */
      ps_bundle_msg *b = ps_bundle_msg_of(r->replies[i]);
      for (size_t j = 0; j < b->n; j++)
        if (b->part[j]) /* NULL: a shard the machine does not talk to */
          install(r, ps_params_msg_of(b->part[j]));
    } else
      install(r, ps_params_msg_of(r->replies[i]));
    msg_free(r->replies[i]);
  }
  r->fetch_in_flight = 0;
}

/* [faults]: asks the shards that are up and installs the replies of this fetch that
 * come within faults.wait_timeout (late replies of an earlier one are dropped); a
 * slice that does not come keeps its last fetched values. */
static void fetch_parameters_bounded(replica *r)
{
  downpour *d = r->d;
  int asked = 0, got = 0;
  long serial = ++r->fetch_serial;
  quantum_align(r->d->p->comm_quantum);
  for (size_t i = 0; i < r->lay->n_links; i++) {
    int s = r->lay->link[i].shard;
    sg_mailbox_t box = ps_mailbox(d->shards[s]);
    if (box) {
      msg_send(box, shard_host(d, s), &ps_fetch_msg_create(r->client, serial)->hdr, MSG_HEADER_BYTES);
      asked++;
    }
  }
  double deadline = simgrid_get_clock() + d->fp->wait_timeout;
  while (got < asked && remaining(deadline) > 0) {
    msg *m = NULL;
    sg_comm_t c = sg_mailbox_get_async(r->inbox, (void **)&m);
    if (sg_comm_wait_for(c, remaining(deadline)) != SG_OK)
      break;
    msg_received(m);
    if (m->kind == PS_MSG_PARAMS && ps_params_msg_of(m)->serial == serial) {
      install(r, ps_params_msg_of(m));
      got++;
    }
    msg_free(m);
  }
  atomic_fetch_add(&d->fp->missed_fetches, (int)r->lay->n_links - got);
}

/* Dean'12 4.1: fetch the parameters it holds from their shards; with overlap, the
 * reply to the request sent during the step before. */
static void fetch_parameters(replica *r)
{
  account_label_push("fetch parameters");
  if (r->d->fp)
    fetch_parameters_bounded(r);
  else {
    if (!r->fetch_in_flight)
      request_parameters(r);
    install_parameters(r);
  }
  account_label_pop();
}

/* A proxy's gradient of step `step`, taken once for the replica by the first of its
 * machines to finish the step's passes: by then every machine has installed the step's
 * fetch, as each pass needs every machine's activations (the nets' dense outputs). */
static void proxy_gradient(rset *set, long step)
{
  if (set->grad_step == step)
    return;
  minibatch_gradient(set->mb, set->w, set->grad, NULL);
  set->grad_step = step;
}

/* Dean'12 4.1: the gradient of a minibatch of the replica's own data at w; a split
 * replica's machine runs its share of the passes with its partners (sec. 3). */
static void compute_gradient(replica *r, long step)
{
  const run_config *cfg = r->d->cfg;
  if (r->mp) {
    modelpar_replica_step(r->mp, (size_t)r->part, step);
    if (r->set->mb)
      proxy_gradient(r->set, step);
    return;
  }
  if (cfg->numerics)
    minibatch_gradient(r->mb, r->w, r->grad, NULL);
  account_label_push("compute gradient");
  compute_execute(cfg, cfg->train_flops * (double)r->d->p->batch);
  account_label_pop();
}

static void accrue_gradient(replica *r)
{
  if (r->accrued_steps == 0)
    memcpy(r->accrued_version, r->fetched_version, r->lay->n_links * sizeof(long));
  if (r->grad)
    ps_layout_accrue(r->lay, r->accrued, r->grad->data, r->accrued_steps == 0);
  r->accrued_steps++;
}

static void wait_push(replica *r)
{
  if (r->push_in_flight)
    msg_wait_all(r->push_comms, endpoints(r));
  r->push_in_flight = 0;
}

/* The accrued gradient of link i's values; downpour.compress: its compressed form. */
static ps_push_msg *push_message(const replica *r, size_t i)
{
  const ps_link *k = &r->lay->link[i];
  if (r->cz)
    return ps_compress_push(r->cz, i, r->client, r->accrued_version[i], r->grad ? r->accrued : NULL, r->step);
  ps_push_msg *m = ps_push_msg_create(r->client, r->accrued_version[i], k->values);
  memcpy(m->grad, r->accrued + k->offset, k->values * sizeof(double));
  return m;
}

/* The simulated bytes of link i's push: its values, or what their compressed form carries. */
static double push_bytes(const replica *r, size_t i)
{
  const ps_link *k = &r->lay->link[i];
  const run_config *cfg = r->d->cfg;
  if (r->cz)
    return ps_compress_bytes(&r->d->zp, k->sim_elems, r->step, cfg->elem_bytes) + MSG_HEADER_BYTES;
  return msg_bytes(k->sim_elems, cfg->elem_bytes);
}

/* downpour.compress: the replica's host compresses every slice before any leaves (under
 * [faults] before it learns which shards are down). */
static void compress_gradient(replica *r)
{
  if (r->cz == NULL)
    return;
  account_label_push("compress gradient");
  compute_execute(r->d->cfg, ps_compress_encode_flops(r->cz, r->step));
  account_label_pop();
}

/* [faults]: a slice whose shard is down, or that is not delivered within
 * faults.wait_timeout, is dropped and counted. */
static void push_gradient_bounded(replica *r)
{
  downpour *d = r->d;
  int lost = 0;
  compress_gradient(r);
  quantum_align(r->d->p->comm_quantum);
  for (size_t i = 0; i < r->lay->n_links; i++) {
    const ps_link *k = &r->lay->link[i];
    r->push_msgs[i] = NULL;
    sg_mailbox_t box = ps_mailbox(d->shards[k->shard]);
    if (box == NULL || !msg_route_ok(shard_host(d, k->shard))) {
      lost++;
      continue;
    }
    r->push_msgs[i] = push_message(r, i);
    r->push_served[i] = 0;
    r->push_msgs[i]->served = &r->push_served[i];
    r->push_comms[i] = msg_send_async(box, shard_host(d, k->shard), &r->push_msgs[i]->hdr, push_bytes(r, i));
  }
  r->push_next = 0;
  double deadline = simgrid_get_clock() + d->fp->wait_timeout;
  for (size_t i = 0; i < r->lay->n_links; i++) {
    if (r->push_msgs[i] == NULL)
      continue;
    r->push_next = i + 1; /* the wait takes the comm's reference, even if the actor dies in it */
    if (sg_comm_wait_for(r->push_comms[i], remaining(deadline)) != SG_OK) {
      msg_free(r->push_msgs[i]); /* a failed put hands nothing over */
      lost++;
    }
    r->push_msgs[i] = NULL;
  }
  r->push_next = r->lay->n_links;
  atomic_fetch_add(&d->fp->undelivered_pushes, lost);
  r->accrued_steps = 0;
}

/* Dean'12 4.1: push the accrued gradient, each shard its own values. Without overlap it
 * waits for the delivery: the next fetch must see this push applied. */
static void push_gradient(replica *r)
{
  if (r->d->fp) {
    push_gradient_bounded(r);
    return;
  }
  account_label_push("push gradient");
  wait_push(r);
  compress_gradient(r);
  quantum_align(r->d->p->comm_quantum);
  for (int g = 0, e = 0; r->d->banks && g < r->d->n_banks; g++) { /* its slices in the bank as one message */
    ps_bank *b = r->d->banks[g];
    if (bank_parts(r, g) == 0)
      continue;
    ps_bundle_msg *m = ps_bundle_msg_create(PS_MSG_BANK_PUSH, r->client, (size_t)ps_bank_size(b));
    double bytes = 0;
    for (size_t i = 0; i < r->lay->n_links; i++) { /* part j: shard first + j's, NULL if not the machine's */
      int j = r->lay->link[i].shard - ps_bank_first(b);
      if (j >= 0 && j < ps_bank_size(b)) {
        m->part[j] = &push_message(r, i)->hdr;
        bytes += push_bytes(r, i);
      }
    }
    r->push_comms[e++] = msg_send_async(ps_bank_mailbox(b), r->d->bank_hosts[g], &m->hdr, bytes);
  }
  for (size_t i = 0; !r->d->banks && i < r->lay->n_links; i++) {
    const ps_link *k = &r->lay->link[i];
    r->push_comms[i] = msg_send_async(r->d->shard_box[k->shard], shard_host(r->d, k->shard), &push_message(r, i)->hdr,
                                      push_bytes(r, i));
  }
  r->push_in_flight = 1;
  if (!r->d->p->overlap)
    wait_push(r);
  r->accrued_steps = 0;
  account_label_pop();
}

/* Pushes what it accrued, lets the fetch in flight land, releases the warmstart if it
 * has not yet and tells its shards it is done; under [faults] only those that are up,
 * which is why a shard also learns it from the shared flag (ps_watch). */
static void say_done(replica *r)
{
  downpour *d = r->d;
  if (r->accrued_steps > 0)
    push_gradient(r);
  wait_push(r);
  if (r->fetch_in_flight)
    install_parameters(r);
  release_warmstart(r);
  if (d->fp) {
    sg_mutex_lock(d->gone_mu);
    d->finished[r->rank] = 1;
    sg_mutex_unlock(d->gone_mu);
  }
  for (int g = 0; d->banks && g < d->n_banks; g++)
    if (bank_parts(r, g) > 0)
      msg_send(ps_bank_mailbox(d->banks[g]), d->bank_hosts[g], &ps_done_msg_create(r->client)->hdr, MSG_HEADER_BYTES);
  for (size_t i = 0; !d->banks && i < r->lay->n_links; i++) {
    int s = r->lay->link[i].shard;
    sg_mailbox_t box = d->fp ? ps_mailbox(d->shards[s]) : d->shard_box[s];
    if (box)
      msg_send(box, shard_host(d, s), &ps_done_msg_create(r->client)->hdr, MSG_HEADER_BYTES);
  }
  msg_flush(); /* downpour.sends = waited: its sends are delivered before it returns */
}

/* Dean'12 4.1, a model replica (or one machine of a replica split as in sec. 3): every
 * n_fetch steps fetch the parameters, compute a minibatch's gradient, accrue it, and
 * every n_push steps push the accrued gradient. With overlap the next fetch is asked
 * for during the step before, so that it travels while the replica computes. */
static void replica_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  replica *r = sg_actor_self_get_data();
  const downpour_params *p = r->d->p;
  start_listening(r);
  wait_for_warmstart(r);
  for (long step = 0; goes_on(r, step); step++) {
    account_label_push("step %ld", step); /* the timeline's names (--trace) */
    r->step = step;
    if (step % p->n_fetch == 0)
      fetch_parameters(r);
    if (p->overlap && (step + 1) % p->n_fetch == 0)
      request_parameters(r);
    compute_gradient(r, step);
    accrue_gradient(r);
    if ((step + 1) % p->n_push == 0)
      push_gradient(r);
    end_step(r, step);
    account_label_pop();
  }
  say_done(r);
}

/* Injector hook: replicas on a dead host are lost for good; a shard's host going
 * down rolls it back to its checkpoint, and coming back restarts it. */
static void on_fault(void *ctx, const fault_event *ev)
{
  downpour *d = ctx;
  if (ev->kind == FAULT_HOST_OFF) {
    for (int i = 0; i < d->p->replicas; i++) {
      if (d->client_hosts[i] != ev->host)
        continue;
      sg_mutex_lock(d->gone_mu);
      int lost = !d->finished[i] && !d->dead[i];
      d->dead[i] = 1;
      sg_mutex_unlock(d->gone_mu);
      if (lost)
        atomic_fetch_add(&d->fp->workers_lost, 1);
    }
  }
  for (int s = 0; s < d->p->ps_shards; s++) {
    if (shard_host(d, s) != ev->host)
      continue;
    if (ev->kind == FAULT_HOST_OFF)
      ps_fail(d->shards[s], ev->host);
    else if (ev->kind == FAULT_HOST_ON)
      ps_restart(d->shards[s], ev->host);
  }
}

/* ---- set-up -------------------------------------------------------------- */

/* Tells every shard what each machine of every replica fetches and pushes. */
static void serve_partitions(downpour *d)
{
  int K = d->p->partitions;
  for (int r = 0; r < d->p->replicas; r++)
    for (int p = 0; p < K; p++) {
      const ps_layout *lay = d->layouts[p];
      for (int s = 0; s < d->p->ps_shards; s++) {
        int i = ps_layout_find(lay, s);
        ps_serve_link(d->shards[s], r * K + p, i >= 0 ? &lay->link[i] : NULL);
      }
    }
}

static void rset_init(downpour *d, rset *set, int r)
{
  const run_config *cfg = d->cfg;
  size_t begin = 0, end = 0;
  set->grad_step = -1;
  if (d->w) {
    set->w = gsl_vector_calloc(d->w->size);
    set->grad = gsl_vector_calloc(d->w->size);
    data_shard_bounds(data_n(cfg->train), (size_t)d->p->replicas, (size_t)r, &begin, &end);
  }
  if (d->proxy) { /* the numeric model's draws, as a whole replica of this rank would make them */
    set->mb = minibatch_create(cfg->model, cfg->train, begin, end, (size_t)d->p->batch, cfg->seed, r);
    xbt_assert(set->mb, "replica %d has no training rows", r);
  }
  set->rep = modelpar_replica_create(cfg, d->plan, d->numeric, d->gather_logits, r, d->p->batch,
                                     d->client_hosts + (size_t)r * (size_t)d->p->partitions, begin, end,
                                     d->proxy ? NULL : set->w, d->proxy ? NULL : set->grad);
}

static void rset_release(rset *set)
{
  modelpar_replica_free(set->rep);
  minibatch_free(set->mb);
  if (set->w) {
    gsl_vector_free(set->w);
    gsl_vector_free(set->grad);
  }
}

static int measure(void *ctx, const gsl_vector *w, double *loss, double *accuracy)
{
  downpour *d = ctx;
  const dataset *t = d->cfg->test;
  return archnet_evaluate(d->numeric, w, t->X, t->y, d->eval_ws, loss, accuracy);
}

static void downpour_snapshot(void *ctx, gsl_vector *w)
{
  downpour *d = ctx;
  for (int s = 0; s < d->p->ps_shards; s++)
    ps_snapshot(d->shards[s], w);
}

/* Machine `part` of replica `rank`; a split replica's (set) holds its numerics. */
static void replica_init(downpour *d, replica *r, int rank, int part, rset *set, metrics_slot *slot)
{
  const run_config *cfg = d->cfg;
  r->d = d;
  r->rank = rank;
  r->part = part;
  r->client = rank * d->p->partitions + part;
  r->inbox = mbox_of(set ? "dpart" : "replica", r->client);
  r->lay = d->layouts[part];
  r->slot = slot;
  size_t n = r->lay->n_links + 1;
  r->fetched_version = xbt_malloc0(n * sizeof(long));
  r->accrued_version = xbt_malloc0(n * sizeof(long));
  r->fetch_comms = xbt_malloc0(n * sizeof(sg_comm_t));
  r->replies = xbt_malloc0(n * sizeof(msg *));
  r->push_comms = xbt_malloc0(n * sizeof(sg_comm_t));
  r->push_msgs = xbt_malloc0(n * sizeof(ps_push_msg *));
  r->push_served = xbt_malloc0(n * sizeof(int));
  r->push_next = r->lay->n_links;
  r->accrued = xbt_malloc0((r->lay->n_values + 1) * sizeof(double));
  if (set) {
    r->mp = set->rep;
    r->set = set;
    r->w = set->w;
    r->grad = set->grad;
  } else if (cfg->numerics) {
    size_t P = net_n_params(cfg->model), begin, end;
    r->w = gsl_vector_calloc(P);
    r->grad = gsl_vector_calloc(P);
    data_shard_bounds(data_n(cfg->train), (size_t)d->p->replicas, (size_t)rank, &begin, &end);
    r->mb = minibatch_create(cfg->model, cfg->train, begin, end, (size_t)d->p->batch, cfg->seed, rank);
    xbt_assert(r->mb, "replica %d has no training rows", rank);
  }
  r->cz = ps_compress_create(&d->zp, r->lay, r->grad != NULL, cfg->seed, r->client);
  xbt_assert(r->cz || d->zp.method == COMPRESS_NONE, "replica %d: compression the configuration checked", rank);
}

static void replica_release(replica *r)
{
  /* [faults]: a replica whose host died in push_gradient_bounded left its push in flight:
   * the comms it had not waited for still hold a reference, and a message no shard took is
   * still its own. */
  for (size_t i = 0; i < r->lay->n_links; i++) {
    if (r->push_msgs[i] == NULL)
      continue;
    if (i >= r->push_next)
      sg_comm_unref(r->push_comms[i]);
    if (!r->push_served[i])
      msg_free(&r->push_msgs[i]->hdr);
  }
  xbt_free(r->push_served);
  xbt_free(r->fetched_version);
  xbt_free(r->accrued_version);
  xbt_free(r->fetch_comms);
  xbt_free(r->replies);
  xbt_free(r->push_comms);
  xbt_free(r->push_msgs);
  xbt_free(r->accrued);
  if (r->mb) { /* a whole replica's own numerics */
    gsl_vector_free(r->w);
    gsl_vector_free(r->grad);
    minibatch_free(r->mb);
  }
  ps_compress_free(r->cz);
}

/* The layouts, and every machine of every replica (a split replica's shared state
 * first); the shards learn what split replicas exchange with them. */
static void replicas_init(downpour *d, metrics *m)
{
  const run_config *cfg = d->cfg;
  int R = d->p->replicas, S = d->p->ps_shards, K = d->p->partitions;
  size_t n_params = d->w ? net_n_params(cfg->model) : 0;
  d->layouts = xbt_malloc0((size_t)K * sizeof(*d->layouts));
  for (int q = 0; q < K; q++)
    d->layouts[q] = d->proxy  ? ps_layout_proxy(d->plan, (size_t)q, n_params, (size_t)cfg->sim_params, (size_t)S)
                    : d->plan ? ps_layout_partition(d->plan, (size_t)q, n_params, (size_t)cfg->sim_params, (size_t)S)
                              : ps_layout_whole(n_params, (size_t)cfg->sim_params, (size_t)S);
  if (d->plan) {
    serve_partitions(d);
    d->sets = xbt_malloc0((size_t)R * sizeof(rset));
  }
  d->replicas = xbt_malloc0((size_t)R * (size_t)K * sizeof(*d->replicas));
  for (int i = 0; i < R; i++) {
    if (d->plan)
      rset_init(d, &d->sets[i], i);
    for (int q = 0; q < K; q++)
      replica_init(d, &d->replicas[i * K + q], i, q, d->plan ? &d->sets[i] : NULL,
                   metrics_slot_at(m, (size_t)(S + i)));
  }
}

/* The bank (ps_bank.h): bank g holds shards ps_slice(S, G, g) and serves them from
 * cfg->banks[g]; its clients are the replicas' machines, each talking to its shards. */
static void start_banks(downpour *d)
{
  const run_config *cfg = d->cfg;
  int S = d->p->ps_shards, M = d->p->replicas * d->p->partitions;
  xbt_assert(d->fp == NULL && d->zp.method == COMPRESS_NONE,
             "downpour: a bank for a configuration the plan did not allow");
  d->n_banks = (int)cfg->n_banks;
  d->bank_hosts = cfg->banks;
  d->banks = xbt_malloc0(cfg->n_banks * sizeof(*d->banks));
  d->shard_slowdown = xbt_malloc((size_t)S * sizeof(double));
  for (int s = 0; s < S; s++) /* what shard s would compute on its own host */
    d->shard_slowdown[s] = cfg->host_slowdown ? cfg->host_slowdown[ps_place_shard((size_t)M, (size_t)S, (size_t)s,
                                                                                   d->p->ps_spread)] : 1.0;
  for (size_t g = 0; g < cfg->n_banks; g++) {
    size_t first, end;
    ps_slice((size_t)S, cfg->n_banks, g, &first, &end);
    d->banks[g] = ps_bank_create(cfg, (int)g, d->shards + first, (int)first, (int)(end - first),
                                 d->plan ? "dpart" : "replica", d->client_hosts, M);
    if (cfg->host_slowdown)
      ps_bank_slow_shards(d->banks[g], d->shard_slowdown + first);
    if (d->p->comm_quantum > 0)
      ps_bank_send_on_quantum(d->banks[g], d->p->comm_quantum);
    ps_bank_start(d->banks[g], cfg->banks[g]);
  }
}

static void start_replicas(downpour *d)
{
  for (int c = 0; c < d->p->replicas * d->p->partitions; c++) {
    char name[32];
    mbox_name(name, sizeof(name), d->plan ? "dpart" : "replica", c);
    sg_actor_t a = sg_actor_init(name, d->client_hosts[c]);
    sg_actor_set_data(a, &d->replicas[c]);
    sg_actor_start(a, replica_actor, 0, NULL);
  }
}

downpour *downpour_deploy(const run_config *cfg, const downpour_params *p, const arch_plan *plan,
                          const archnet *numeric, int gather_logits, metrics *m)
{
  int R = p->replicas, S = p->ps_shards, K = p->partitions;
  if (cfg->n_hosts < downpour_hosts_needed(p) || (K > 1) != (plan != NULL) ||
      (plan && arch_plan_parts(plan) != (size_t)K))
    return NULL;
  downpour *d = xbt_malloc0(sizeof(*d));
  d->cfg = cfg;
  d->p = p;
  d->client_hosts = xbt_malloc((size_t)R * (size_t)K * sizeof(sg_host_t));
  for (size_t c = 0; c < (size_t)R * (size_t)K; c++)
    d->client_hosts[c] = cfg->hosts[ps_place_client((size_t)R * (size_t)K, (size_t)S, c, p->ps_spread)];
  d->plan = plan;
  d->numeric = numeric;
  d->gather_logits = gather_logits;
  d->proxy = plan && cfg->numerics && numeric == NULL;
  if (cfg->numerics && plan && !d->proxy) { /* a partitioned replica trains archnet's layout (modelpar.c) */
    gsl_rng *init = rng_create(cfg->seed, RNG_ROLE_INIT, 0);
    d->w = gsl_vector_alloc(archnet_n_params(numeric));
    archnet_init_params(numeric, init, d->w);
    gsl_rng_free(init);
    d->eval_ws = archnet_ws_create(numeric, 1024);
  } else if (cfg->numerics) {
    d->w = run_initial_params(cfg);
  }
  msg_set_waited_sends(p->waited_sends);
  d->zp = (compress_params){(compress_method)p->compress, p->compress_ratio, p->compress_momentum,
                            p->compress_warmup, p->compress_levels, .rank = 1}; /* PowerSGD's: refused */
  d->eval = eval_ctl_create(cfg, m, S, downpour_snapshot, d);
  if (d->eval_ws)
    eval_set_measure(d->eval, measure, d);
  ps_rule rule = {p->lr, p->adagrad, p->adagrad_gamma};
  d->shards = xbt_malloc0((size_t)S * sizeof(*d->shards));
  d->shard_box = xbt_malloc0((size_t)S * sizeof(*d->shard_box));
  for (int s = 0; s < S; s++) {
    d->shards[s] = ps_create(cfg, d->w, s, S, rule, plan ? "dpart" : "replica", d->client_hosts, R * K,
                             metrics_slot_at(m, (size_t)s), d->eval);
    d->shard_box[s] = mbox_of("ps", s);
    ps_decode_pushes(d->shards[s], &d->zp);
  }
  replicas_init(d, m);
  if (cfg->faults && !plan) {
    d->fp = cfg->faults;
    d->gone_mu = sg_mutex_init();
    d->finished = xbt_malloc0((size_t)R * sizeof(int));
    d->dead = xbt_malloc0((size_t)R * sizeof(int));
    for (int s = 0; s < S; s++)
      ps_watch(d->shards[s], replica_gone, d);
    d->fp->hook = on_fault;
    d->fp->hook_ctx = d;
  }
  if (cfg->n_banks > 0)
    start_banks(d);
  else
    for (int s = 0; s < S; s++) {
      if (d->p->comm_quantum > 0)
        ps_send_on_quantum(d->shards[s], d->p->comm_quantum);
      ps_start(d->shards[s], shard_host(d, s));
    }
  start_replicas(d);
  eval_start(d->eval, cfg->hosts[0]);
  return d;
}

void downpour_free(downpour *d)
{
  if (d == NULL)
    return;
  for (int c = 0; d->replicas && c < d->p->replicas * d->p->partitions; c++)
    replica_release(&d->replicas[c]);
  for (int i = 0; d->sets && i < d->p->replicas; i++)
    rset_release(&d->sets[i]);
  for (int q = 0; d->layouts && q < d->p->partitions; q++)
    ps_layout_free(d->layouts[q]);
  for (int g = 0; g < d->n_banks; g++)
    ps_bank_free(d->banks[g]);
  xbt_free(d->banks);
  xbt_free(d->shard_slowdown);
  for (int s = 0; s < d->p->ps_shards; s++)
    ps_free(d->shards[s]);
  xbt_free(d->replicas);
  xbt_free(d->sets);
  xbt_free(d->layouts);
  xbt_free(d->shards);
  xbt_free(d->shard_box);
  xbt_free(d->client_hosts);
  eval_ctl_free(d->eval);
  archnet_ws_free(d->eval_ws);
  if (d->fp) {
    sg_mutex_destroy(d->gone_mu);
    xbt_free(d->finished);
    xbt_free(d->dead);
  }
  if (d->w)
    gsl_vector_free(d->w);
  xbt_free(d);
}


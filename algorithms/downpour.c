/* downpour.c - Downpour SGD: asynchronous replicas against a sharded parameter server.
 *
 * Each replica loops (Dean'12 4.1): every n_fetch steps fetch_parameters from all
 * shards; compute_gradient on a minibatch of its own data shard; accrue it; every
 * n_push steps push_gradient, one slice to each shard. Shards apply updates as they
 * arrive (ps.c). With overlap = on, fetch, compute and push run as three weakly
 * synchronised activities: the next fetch and the last push travel while the
 * replica computes. Warmstart: replica 0 trains alone for warmstart_steps steps,
 * then releases the others (PS_RELEASE).
 *
 * With partitions = K > 1 each replica is split over K machines (Dean'12 sec. 3,
 * modelpar.c) and each machine fetches from and pushes to only the shards that hold
 * its own parameters, only those parameters (sec. 4.1). */
#include "algorithms/downpour.h"

#include <string.h>
#include <gsl/gsl_blas.h>
#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/mutex.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/eval.h"
#include "algorithms/faults.h"
#include "algorithms/modelpar.h"
#include "algorithms/msg.h"
#include "algorithms/ps.h"
#include "algorithms/ps_msg.h"
#include "models/minibatch.h"
#include "models/rng.h"

typedef struct replica {
  const run_config *cfg;
  downpour *d;
  int rank;
  sg_mailbox_t inbox;
  gsl_vector *w;           /* parameters last fetched */
  gsl_vector *grad;        /* gradient of one minibatch */
  gsl_vector *accrued;     /* gradients accrued since the last push */
  long *fetched_version;   /* per shard: version of the parameters in w */
  long *accrued_version;   /* per shard: version the oldest accrued gradient used */
  long accrued_steps;
  sg_comm_t *fetch_comms;  /* overlap: replies of the fetch in flight */
  msg **replies;
  int fetch_in_flight;
  sg_comm_t *push_comms;   /* overlap: the push in flight */
  int push_in_flight;
  minibatch *mb;           /* draws from the replica's own shard of the data */
  metrics_slot *slot;
  int released;            /* warmstart: replica 0 has released the others */
  long fetch_serial;       /* [faults]: numbers fetches, so that a late reply is recognised */
  ps_push_msg **push_msgs; /* [faults]: the push in flight, freed here if undelivered */
} replica;

/* One machine of a partitioned replica. */
typedef struct rpart {
  struct downpour *d;
  int replica, p, client;  /* client = replica * K + p: its rank at the shards */
  sg_mailbox_t inbox;
  const ps_layout *lay;
  long *fetched_version;   /* [i]: as replica's, per shard of lay */
  long *accrued_version;
  double *accrued;         /* own gradient entries accrued since the last push, in lay order */
  long accrued_steps;
  sg_comm_t *comms;
  msg **replies;
  int released;
} rpart;

/* A partitioned replica's shared state; its machines stop together
 * (modelpar_replica_goes_on). */
typedef struct rset {
  modelpar_replica *rep;
  gsl_vector *w, *grad;    /* the replica's parameters (numerics): each machine touches its own */
  rpart *parts;
  metrics_slot *slot;
} rset;

struct downpour {
  const run_config *cfg;
  const downpour_params *p;
  gsl_vector *w;           /* the global parameters, sliced by the shards */
  ps_shard **shards;
  sg_mailbox_t *shard_box;
  replica *replicas;
  eval_ctl *eval;
  /* partitioned replicas (p->partitions > 1) */
  const arch_plan *plan;
  const archnet *numeric;
  int gather_logits;
  ps_layout **layouts;     /* [p]: what partition p of every replica exchanges with the shards */
  rset *sets;              /* [replica] */
  archnet_ws *eval_ws;
  /* [faults] */
  fault_plan *fp;
  sg_mutex_t gone_mu;      /* guards finished and dead */
  int *finished, *dead;    /* [replica] */
};

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
  return d->cfg->hosts[d->p->replicas * d->p->partitions + s];
}

static void request_parameters(replica *r)
{
  int S = r->d->p->ps_shards;
  for (int s = 0; s < S; s++)
    msg_send(r->d->shard_box[s], shard_host(r->d, s), &ps_fetch_create(r->rank, 0)->hdr, MSG_HEADER_BYTES);
  for (int s = 0; s < S; s++)
    r->fetch_comms[s] = sg_mailbox_get_async(r->inbox, (void **)&r->replies[s]);
  r->fetch_in_flight = 1;
}

/* Waits for the S replies of the fetch in flight and installs them. */
static void install_parameters(replica *r)
{
  int S = r->d->p->ps_shards;
  run_comm_wait_all(r->fetch_comms, (size_t)S);
  for (int s = 0; s < S; s++) {
    ps_params_msg *m = ps_params_of(r->replies[s]);
    xbt_assert(m, "replica %d expected parameters, got kind %d", r->rank, r->replies[s]->kind);
    r->fetched_version[m->shard] = m->version;
    if (m->n)
      memcpy(r->w->data + ps_begin(r->d->shards[m->shard]), m->values, m->n * sizeof(double));
    msg_free(m);
  }
  r->fetch_in_flight = 0;
}

static void fetch_parameters(replica *r)
{
  request_parameters(r);
  install_parameters(r);
}

static void compute_gradient(replica *r)
{
  const run_config *cfg = r->cfg;
  long batch = r->d->p->batch;
  if (cfg->numerics)
    minibatch_gradient(r->mb, r->w, r->grad, NULL);
  run_execute(cfg, cfg->train_flops * (double)batch);
}

static void accrue_gradient(replica *r)
{
  if (r->accrued_steps == 0) {
    memcpy(r->accrued_version, r->fetched_version, (size_t)r->d->p->ps_shards * sizeof(long));
    gsl_vector *t = r->accrued; /* the first gradient is the accrual: swap, don't copy */
    r->accrued = r->grad;
    r->grad = t;
  } else if (r->cfg->numerics) {
    gsl_vector_add(r->accrued, r->grad);
  }
  r->accrued_steps++;
}

static void wait_push(replica *r)
{
  if (r->push_in_flight)
    run_comm_wait_all(r->push_comms, (size_t)r->d->p->ps_shards);
  r->push_in_flight = 0;
}

/* Dean'12 4.1: push the accrued gradient, one slice to each shard. */
static void push_gradient(replica *r)
{
  int S = r->d->p->ps_shards;
  wait_push(r);
  for (int s = 0; s < S; s++) {
    ps_shard *sh = r->d->shards[s];
    size_t n = r->cfg->numerics ? ps_end(sh) - ps_begin(sh) : 0;
    ps_push_msg *m = ps_push_create(r->rank, r->accrued_version[s], n);
    if (n)
      memcpy(m->grad, r->accrued->data + ps_begin(sh), n * sizeof(double));
    r->push_comms[s] = msg_send_async(r->d->shard_box[s], shard_host(r->d, s), &m->hdr,
                                      msg_bytes(ps_sim_elems(sh), r->cfg->elem_bytes));
  }
  r->push_in_flight = 1;
  if (!r->d->p->overlap)
    wait_push(r);
  r->accrued_steps = 0;
}

/* Detached: at the end of a run (say_done) nobody may be waiting for it. */
static void release_warmstart(replica *r)
{
  if (r->rank != 0 || r->released)
    return;
  for (int i = 1; i < r->d->p->replicas; i++)
    msg_send_detached(r->d->replicas[i].inbox, r->cfg->hosts[i], &ps_release_create()->hdr, MSG_HEADER_BYTES);
  r->released = 1;
}

static void wait_for_warmstart(replica *r)
{
  if (r->rank == 0 || r->d->p->warmstart_steps == 0)
    return;
  msg *m = msg_recv(r->inbox);
  xbt_assert(ps_release_of(m), "replica %d expected the warmstart release, got kind %d", r->rank, m->kind);
  msg_free(m);
}

static void say_done(replica *r)
{
  if (r->accrued_steps > 0)
    push_gradient(r);
  wait_push(r);
  if (r->fetch_in_flight)
    install_parameters(r);
  release_warmstart(r);
  for (int s = 0; s < r->d->p->ps_shards; s++)
    msg_send(r->d->shard_box[s], shard_host(r->d, s), &ps_done_create(r->rank)->hdr, MSG_HEADER_BYTES);
}

/* ---- a replica under [faults]: every wait is bounded ------------------------ */

static double remaining(double deadline)
{
  double left = deadline - simgrid_get_clock();
  return left > 0 ? left : 0;
}

/* Dean'12 4.1 fetch, bounded by faults.wait_timeout: asks the shards that are up,
 * installs the replies of this fetch that come in time (late replies of an earlier one
 * are dropped); a slice that does not come keeps its last fetched values. */
static void fetch_parameters_ft(replica *r)
{
  downpour *d = r->d;
  int S = d->p->ps_shards, asked = 0, got = 0;
  long serial = ++r->fetch_serial;
  for (int s = 0; s < S; s++) {
    sg_mailbox_t box = ps_mailbox(d->shards[s]);
    if (box) {
      msg_send(box, shard_host(d, s), &ps_fetch_create(r->rank, serial)->hdr, MSG_HEADER_BYTES);
      asked++;
    }
  }
  double deadline = simgrid_get_clock() + d->fp->wait_timeout;
  while (got < asked && remaining(deadline) > 0) {
    msg *m = NULL;
    sg_comm_t c = sg_mailbox_get_async(r->inbox, (void **)&m);
    if (sg_comm_wait_for(c, remaining(deadline)) != SG_OK)
      break;
    ps_params_msg *pm = ps_params_of(m);
    if (pm && pm->serial == serial) {
      r->fetched_version[pm->shard] = pm->version;
      if (pm->n)
        memcpy(r->w->data + ps_begin(d->shards[pm->shard]), pm->values, pm->n * sizeof(double));
      got++;
    }
    msg_free(m);
  }
  atomic_fetch_add(&d->fp->missed_fetches, S - got);
}

/* Dean'12 4.1 push, bounded: a slice whose shard is down, or that is not delivered in
 * faults.wait_timeout, is dropped and counted. */
static void push_gradient_ft(replica *r)
{
  downpour *d = r->d;
  int S = d->p->ps_shards, lost = 0;
  for (int s = 0; s < S; s++) {
    ps_shard *sh = d->shards[s];
    r->push_msgs[s] = NULL;
    sg_mailbox_t box = ps_mailbox(sh);
    if (box == NULL || !msg_route_ok(shard_host(d, s))) {
      lost++;
      continue;
    }
    size_t n = r->cfg->numerics ? ps_end(sh) - ps_begin(sh) : 0;
    ps_push_msg *m = ps_push_create(r->rank, r->accrued_version[s], n);
    if (n)
      memcpy(m->grad, r->accrued->data + ps_begin(sh), n * sizeof(double));
    r->push_msgs[s] = m;
    r->push_comms[s] = msg_send_async(box, shard_host(d, s), &m->hdr, msg_bytes(ps_sim_elems(sh), r->cfg->elem_bytes));
  }
  double deadline = simgrid_get_clock() + d->fp->wait_timeout;
  for (int s = 0; s < S; s++)
    if (r->push_msgs[s] && sg_comm_wait_for(r->push_comms[s], remaining(deadline)) != SG_OK) {
      msg_free(r->push_msgs[s]); /* a failed put hands nothing over */
      lost++;
    }
  atomic_fetch_add(&d->fp->undelivered_pushes, lost);
  r->accrued_steps = 0;
}

static int replica_gone(void *ctx, int rank)
{
  downpour *d = ctx;
  sg_mutex_lock(d->gone_mu);
  int gone = d->finished[rank] || d->dead[rank];
  sg_mutex_unlock(d->gone_mu);
  return gone;
}

/* Warmstart under faults: replica 0 may die before it releases the others. */
static void wait_for_warmstart_ft(replica *r)
{
  while (!replica_gone(r->d, 0)) {
    msg *m = NULL;
    sg_comm_t c = sg_mailbox_get_async(r->inbox, (void **)&m);
    if (sg_comm_wait_for(c, r->d->fp->wait_timeout) == SG_OK) {
      int go = ps_release_of(m) != NULL;
      msg_free(m);
      if (go)
        return;
    }
  }
}

/* Pushes what it accrued and says it is done to the shards that are up; a shard also
 * learns that it finished from the shared flag (ps_watch), since a shard down at the
 * time never gets the message. */
static void say_done_ft(replica *r)
{
  if (r->accrued_steps > 0)
    push_gradient_ft(r);
  release_warmstart(r);
  sg_mutex_lock(r->d->gone_mu);
  r->d->finished[r->rank] = 1;
  sg_mutex_unlock(r->d->gone_mu);
  for (int s = 0; s < r->d->p->ps_shards; s++) {
    sg_mailbox_t box = ps_mailbox(r->d->shards[s]);
    if (box)
      msg_send(box, shard_host(r->d, s), &ps_done_create(r->rank)->hdr, MSG_HEADER_BYTES);
  }
}

/* Injector hook: replicas on a dead host are lost for good; a shard's host going
 * down rolls it back to its checkpoint, and coming back restarts it. */
static void on_fault(void *ctx, const fault_event *ev)
{
  downpour *d = ctx;
  if (ev->kind == FAULT_HOST_OFF) {
    for (int i = 0; i < d->p->replicas; i++) {
      if (d->cfg->hosts[i] != ev->host)
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

/* The replica's loop under [faults] (no overlap: the scenario refuses it). */
static void replica_actor_ft(replica *r)
{
  const downpour_params *p = r->d->p;
  sg_mailbox_set_receiver(sg_mailbox_get_name(r->inbox));
  if (r->rank != 0 && p->warmstart_steps > 0)
    wait_for_warmstart_ft(r);
  for (long step = 0; step > 0 || !eval_should_stop(r->d->eval); step++) {
    if (step % p->n_fetch == 0)
      fetch_parameters_ft(r);
    compute_gradient(r);
    accrue_gradient(r);
    if ((step + 1) % p->n_push == 0)
      push_gradient_ft(r);
    r->slot->steps++;
    if (r->rank == 0 && step + 1 == p->warmstart_steps)
      release_warmstart(r);
    if (eval_step_done(r->d->eval) || (r->cfg->max_steps > 0 && step + 1 >= r->cfg->max_steps))
      break;
  }
  say_done_ft(r);
}

/* One step of the overlapped loop fetches for the next step before computing. */
static void replica_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  replica *r = sg_actor_self_get_data();
  const downpour_params *p = r->d->p;
  if (r->d->fp) {
    replica_actor_ft(r);
    return;
  }
  sg_mailbox_set_receiver(sg_mailbox_get_name(r->inbox)); /* replies flow as sent */
  wait_for_warmstart(r);
  for (long step = 0; step > 0 || !eval_should_stop(r->d->eval); step++) {
    if (r->fetch_in_flight)
      install_parameters(r);
    else if (step % p->n_fetch == 0)
      fetch_parameters(r);
    if (p->overlap && (step + 1) % p->n_fetch == 0)
      request_parameters(r);
    compute_gradient(r);
    accrue_gradient(r);
    if ((step + 1) % p->n_push == 0)
      push_gradient(r);
    r->slot->steps++;
    if (r->rank == 0 && step + 1 == p->warmstart_steps)
      release_warmstart(r);
    if (eval_step_done(r->d->eval) || (r->cfg->max_steps > 0 && step + 1 >= r->cfg->max_steps))
      break;
  }
  say_done(r);
  msg_flush();
}

/* ---- steps of one machine of a partitioned replica ------------------------ */

static void part_fetch_parameters(rpart *pt)
{
  downpour *d = pt->d;
  const ps_layout *lay = pt->lay;
  for (size_t i = 0; i < lay->n_links; i++)
    msg_send(d->shard_box[lay->link[i].shard], shard_host(d, lay->link[i].shard), &ps_fetch_create(pt->client, 0)->hdr,
             MSG_HEADER_BYTES);
  for (size_t i = 0; i < lay->n_links; i++)
    pt->comms[i] = sg_mailbox_get_async(pt->inbox, (void **)&pt->replies[i]);
  run_comm_wait_all(pt->comms, lay->n_links);
  gsl_vector *w = d->sets[pt->replica].w;
  for (size_t k = 0; k < lay->n_links; k++) {
    ps_params_msg *m = ps_params_of(pt->replies[k]);
    xbt_assert(m, "partition %d expected parameters, got kind %d", pt->client, pt->replies[k]->kind);
    int i = ps_layout_find(lay, m->shard);
    pt->fetched_version[i] = m->version;
    if (w)
      ps_ranges_scatter(w->data, 0, m->values, lay->link[i].rb, lay->link[i].re, lay->link[i].n_ranges);
    msg_free(m);
  }
}

/* Adds (or, first, copies) the machine's own gradient entries into the accrual. */
static void part_accrue_gradient(rpart *pt)
{
  const ps_layout *lay = pt->lay;
  const gsl_vector *grad = pt->d->sets[pt->replica].grad;
  if (pt->accrued_steps == 0)
    memcpy(pt->accrued_version, pt->fetched_version, lay->n_links * sizeof(long));
  if (grad)
    ps_layout_accrue(lay, pt->accrued, grad->data, pt->accrued_steps == 0);
  pt->accrued_steps++;
}

/* Dean'12 4.1: push the accrued gradient of its own parameters to the shards holding them. */
static void part_push_gradient(rpart *pt)
{
  downpour *d = pt->d;
  const ps_layout *lay = pt->lay;
  for (size_t i = 0; i < lay->n_links; i++) {
    const ps_link *k = &lay->link[i];
    ps_push_msg *m = ps_push_create(pt->client, pt->accrued_version[i], k->values);
    memcpy(m->grad, pt->accrued + k->offset, k->values * sizeof(double));
    pt->comms[i] = msg_send_async(d->shard_box[k->shard], shard_host(d, k->shard), &m->hdr,
                                  msg_bytes(k->sim_elems, d->cfg->elem_bytes));
  }
  run_comm_wait_all(pt->comms, lay->n_links); /* the next fetch must see this push applied */
  pt->accrued_steps = 0;
}

static void part_release_warmstart(rpart *pt)
{
  downpour *d = pt->d;
  int K = d->p->partitions;
  if (pt->replica != 0 || pt->released)
    return;
  for (int i = 1; i < d->p->replicas; i++)
    msg_send(d->sets[i].parts[pt->p].inbox, d->cfg->hosts[i * K + pt->p], &ps_release_create()->hdr,
             MSG_HEADER_BYTES);
  pt->released = 1;
}

static void part_wait_for_warmstart(rpart *pt)
{
  if (pt->replica == 0 || pt->d->p->warmstart_steps == 0)
    return;
  msg *m = msg_recv(pt->inbox);
  xbt_assert(ps_release_of(m), "partition %d expected the warmstart release, got kind %d", pt->client, m->kind);
  msg_free(m);
}

/* Whether the machine starts step `step`; the replica's machines all run the same steps. */
static int part_goes_on(rpart *pt, long step)
{
  downpour *d = pt->d;
  int stop = eval_should_stop(d->eval) || (d->cfg->max_steps > 0 && step >= d->cfg->max_steps);
  return modelpar_replica_goes_on(d->sets[pt->replica].rep, step, stop);
}

static void part_say_done(rpart *pt)
{
  downpour *d = pt->d;
  if (pt->accrued_steps > 0)
    part_push_gradient(pt);
  part_release_warmstart(pt);
  for (size_t i = 0; i < pt->lay->n_links; i++)
    msg_send(d->shard_box[pt->lay->link[i].shard], shard_host(d, pt->lay->link[i].shard),
             &ps_done_create(pt->client)->hdr, MSG_HEADER_BYTES);
}

/* Dean'12 4.1 on a replica split as in sec. 3: each machine fetches its own
 * parameters, runs its share of the minibatch with its partners, and pushes its own
 * gradient. */
static void partition_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  rpart *pt = sg_actor_self_get_data();
  downpour *d = pt->d;
  const downpour_params *p = d->p;
  rset *set = &d->sets[pt->replica];
  sg_mailbox_set_receiver(sg_mailbox_get_name(pt->inbox));
  modelpar_replica_listen(set->rep, (size_t)pt->p);
  part_wait_for_warmstart(pt);
  for (long step = 0; part_goes_on(pt, step); step++) {
    if (step % p->n_fetch == 0)
      part_fetch_parameters(pt);
    modelpar_replica_step(set->rep, (size_t)pt->p, step);
    part_accrue_gradient(pt);
    if ((step + 1) % p->n_push == 0)
      part_push_gradient(pt);
    if (pt->p == 0) {
      set->slot->steps++;
      eval_step_done(d->eval);
    }
    if (pt->replica == 0 && step + 1 == p->warmstart_steps)
      part_release_warmstart(pt);
  }
  part_say_done(pt);
  msg_flush();
}

/* ---- set-up of partitioned replicas ---------------------------------------- */

/* Tells every shard what each machine of every replica fetches and pushes. */
static void serve_partitions(downpour *d)
{
  int K = d->p->partitions;
  for (int r = 0; r < d->p->replicas; r++)
    for (int p = 0; p < K; p++) {
      const ps_layout *lay = d->layouts[p];
      for (int s = 0; s < d->p->ps_shards; s++) {
        int i = ps_layout_find(lay, s);
        const ps_link *k = i >= 0 ? &lay->link[i] : NULL;
        ps_serve_ranges(d->shards[s], r * K + p, k ? k->rb : NULL, k ? k->re : NULL, k ? k->n_ranges : 0,
                        k ? k->sim_elems : 0.0);
      }
    }
}

static void rset_init(downpour *d, rset *set, int r, metrics_slot *slot)
{
  const run_config *cfg = d->cfg;
  int K = d->p->partitions;
  size_t begin = 0, end = 0;
  if (d->w) {
    set->w = gsl_vector_calloc(d->w->size);
    set->grad = gsl_vector_calloc(d->w->size);
    data_shard_bounds(data_n(cfg->train), (size_t)d->p->replicas, (size_t)r, &begin, &end);
  }
  set->rep = modelpar_replica_create(cfg, d->plan, d->numeric, d->gather_logits, r, d->p->batch,
                                     cfg->hosts + (size_t)r * (size_t)K, begin, end, set->w, set->grad);
  set->slot = slot;
  set->parts = xbt_malloc0((size_t)K * sizeof(rpart));
  for (int p = 0; p < K; p++) {
    rpart *pt = &set->parts[p];
    const ps_layout *lay = d->layouts[p];
    pt->d = d;
    pt->replica = r;
    pt->p = p;
    pt->client = r * K + p;
    pt->lay = lay;
    pt->inbox = mbox_of("dpart", pt->client);
    pt->fetched_version = xbt_malloc0((lay->n_links + 1) * sizeof(long));
    pt->accrued_version = xbt_malloc0((lay->n_links + 1) * sizeof(long));
    pt->comms = xbt_malloc0((lay->n_links + 1) * sizeof(sg_comm_t));
    pt->replies = xbt_malloc0((lay->n_links + 1) * sizeof(msg *));
    pt->accrued = xbt_malloc0((lay->n_values + 1) * sizeof(double));
  }
}

static void rset_release(downpour *d, rset *set)
{
  for (int p = 0; set->parts && p < d->p->partitions; p++) {
    rpart *pt = &set->parts[p];
    xbt_free(pt->fetched_version);
    xbt_free(pt->accrued_version);
    xbt_free(pt->comms);
    xbt_free(pt->replies);
    xbt_free(pt->accrued);
  }
  xbt_free(set->parts);
  modelpar_replica_free(set->rep);
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

static void start_partitions(downpour *d)
{
  int K = d->p->partitions;
  for (int r = 0; r < d->p->replicas; r++)
    for (int p = 0; p < K; p++) {
      char name[32];
      mbox_name(name, sizeof(name), "dpart", r * K + p);
      sg_actor_t a = sg_actor_init(name, d->cfg->hosts[r * K + p]);
      sg_actor_set_data(a, &d->sets[r].parts[p]);
      sg_actor_start(a, partition_actor, 0, NULL);
    }
}

/* ---- set-up -------------------------------------------------------------- */

static void snapshot(void *ctx, gsl_vector *w)
{
  downpour *d = ctx;
  for (int s = 0; s < d->p->ps_shards; s++)
    ps_snapshot(d->shards[s], w);
}

static void replica_init(downpour *d, replica *r, int rank, metrics_slot *slot)
{
  const run_config *cfg = d->cfg;
  int S = d->p->ps_shards;
  r->cfg = cfg;
  r->d = d;
  r->rank = rank;
  r->slot = slot;
  r->fetched_version = xbt_malloc0((size_t)S * sizeof(long));
  r->accrued_version = xbt_malloc0((size_t)S * sizeof(long));
  r->fetch_comms = xbt_malloc0((size_t)S * sizeof(sg_comm_t));
  r->replies = xbt_malloc0((size_t)S * sizeof(msg *));
  r->push_comms = xbt_malloc0((size_t)S * sizeof(sg_comm_t));
  r->push_msgs = xbt_malloc0((size_t)S * sizeof(ps_push_msg *));
  if (cfg->numerics) {
    size_t P = net_n_params(cfg->model);
    r->w = gsl_vector_calloc(P);
    r->grad = gsl_vector_calloc(P);
    r->accrued = gsl_vector_calloc(P);
    size_t begin, end;
    data_shard_bounds(data_n(cfg->train), (size_t)d->p->replicas, (size_t)rank, &begin, &end);
    r->mb = minibatch_create(cfg->model, cfg->train, begin, end, (size_t)d->p->batch, cfg->seed, rank);
    xbt_assert(r->mb, "replica %d has no training rows", rank);
  }
}

static void replica_release(replica *r)
{
  xbt_free(r->fetched_version);
  xbt_free(r->accrued_version);
  xbt_free(r->fetch_comms);
  xbt_free(r->replies);
  xbt_free(r->push_comms);
  xbt_free(r->push_msgs);
  if (r->w) {
    gsl_vector_free(r->w);
    gsl_vector_free(r->grad);
    gsl_vector_free(r->accrued);
    minibatch_free(r->mb);
  }
}

downpour *downpour_deploy(const run_config *cfg, const arch_plan *plan, const archnet *numeric, int gather_logits,
                          metrics *m)
{
  const downpour_params *p = &cfg->downpour;
  int R = p->replicas, S = p->ps_shards, K = p->partitions;
  if (cfg->n_hosts < downpour_hosts_needed(p) || (K > 1) != (plan != NULL) ||
      (plan && arch_plan_parts(plan) != (size_t)K) || (K > 1 && cfg->numerics && numeric == NULL))
    return NULL;
  downpour *d = xbt_malloc0(sizeof(*d));
  d->cfg = cfg;
  d->p = p;
  d->plan = plan;
  d->numeric = numeric;
  d->gather_logits = gather_logits;
  if (cfg->numerics && plan) { /* a partitioned replica trains archnet's layout (modelpar.c) */
    gsl_rng *init = rng_create(cfg->seed, RNG_ROLE_INIT, 0);
    d->w = gsl_vector_alloc(archnet_n_params(numeric));
    archnet_init_params(numeric, init, d->w);
    gsl_rng_free(init);
    d->eval_ws = archnet_ws_create(numeric, 1024);
  } else if (cfg->numerics) {
    d->w = run_initial_params(cfg);
  }
  msg_set_waited_sends(p->waited_sends);
  d->eval = eval_ctl_create(cfg, m, S, snapshot, d);
  if (d->eval_ws)
    eval_set_measure(d->eval, measure, d);
  ps_rule rule = {p->lr, p->adagrad, p->adagrad_gamma};
  d->shards = xbt_malloc0((size_t)S * sizeof(*d->shards));
  d->shard_box = xbt_malloc0((size_t)S * sizeof(*d->shard_box));
  for (int s = 0; s < S; s++) {
    d->shards[s] = ps_create(cfg, d->w, s, S, rule, plan ? "dpart" : "replica", cfg->hosts, R * K,
                             metrics_slot_at(m, (size_t)s), d->eval);
    d->shard_box[s] = mbox_of("ps", s);
  }
  if (plan) {
    d->layouts = xbt_malloc0((size_t)K * sizeof(*d->layouts));
    for (int q = 0; q < K; q++)
      d->layouts[q] = ps_layout_partition(plan, (size_t)q, d->w ? net_n_params(cfg->model) : 0, (size_t)cfg->sim_params,
                                          (size_t)S);
    serve_partitions(d);
    d->sets = xbt_malloc0((size_t)R * sizeof(rset));
    for (int i = 0; i < R; i++)
      rset_init(d, &d->sets[i], i, metrics_slot_at(m, (size_t)(S + i)));
  } else {
    d->replicas = xbt_malloc0((size_t)R * sizeof(*d->replicas));
    for (int i = 0; i < R; i++) {
      replica_init(d, &d->replicas[i], i, metrics_slot_at(m, (size_t)(S + i)));
      d->replicas[i].inbox = mbox_of("replica", i);
    }
  }
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
  for (int s = 0; s < S; s++)
    ps_start(d->shards[s], shard_host(d, s));
  if (plan)
    start_partitions(d);
  for (int i = 0; !plan && i < R; i++) {
    char name[32];
    mbox_name(name, sizeof(name), "replica", i);
    sg_actor_t a = sg_actor_init(name, cfg->hosts[i]);
    sg_actor_set_data(a, &d->replicas[i]);
    sg_actor_start(a, replica_actor, 0, NULL);
  }
  eval_start(d->eval, cfg->hosts[0]);
  return d;
}

void downpour_free(downpour *d)
{
  if (d == NULL)
    return;
  for (int i = 0; d->replicas && i < d->p->replicas; i++)
    replica_release(&d->replicas[i]);
  for (int i = 0; d->sets && i < d->p->replicas; i++)
    rset_release(d, &d->sets[i]);
  for (int q = 0; d->layouts && q < d->p->partitions; q++)
    ps_layout_free(d->layouts[q]);
  for (int s = 0; s < d->p->ps_shards; s++)
    ps_free(d->shards[s]);
  xbt_free(d->replicas);
  xbt_free(d->sets);
  xbt_free(d->layouts);
  xbt_free(d->shards);
  xbt_free(d->shard_box);
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

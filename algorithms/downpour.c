/* downpour.c - Downpour SGD: asynchronous replicas against a sharded parameter server.
 *
 * Each replica loops (Dean'12 4.1): every n_fetch steps fetch_parameters from all
 * shards; compute_gradient on a minibatch of its own data shard; accrue it; every
 * n_push steps push_gradient, one slice to each shard. Shards apply updates as they
 * arrive (ps.c). With overlap = on, fetch, compute and push run as three weakly
 * synchronised activities: the next fetch and the last push travel while the
 * replica computes. Warmstart: replica 0 trains alone for warmstart_steps steps,
 * then sends MSG_GO to the others. */
#include "algorithms/downpour.h"

#include <string.h>
#include <gsl/gsl_blas.h>
#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/eval.h"
#include "algorithms/msg.h"
#include "algorithms/ps.h"
#include "models/minibatch.h"

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
  int released;            /* warmstart: replica 0 has sent MSG_GO */
} replica;

struct downpour {
  const run_config *cfg;
  const downpour_params *p;
  gsl_vector *w;           /* the global parameters, sliced by the shards */
  ps_shard **shards;
  sg_mailbox_t *shard_box;
  replica *replicas;
  eval_ctl *eval;
};

size_t downpour_hosts_needed(const downpour_params *p)
{
  return (size_t)p->replicas + (size_t)p->ps_shards;
}

size_t downpour_metrics_slots(const downpour_params *p)
{
  return (size_t)p->ps_shards + (size_t)p->replicas;
}

/* ---- steps of a replica ------------------------------------------------- */

static sg_host_t shard_host(const downpour *d, int s)
{
  return d->cfg->hosts[d->p->replicas + s];
}

static void request_parameters(replica *r)
{
  int S = r->d->p->ps_shards;
  for (int s = 0; s < S; s++)
    msg_send(r->d->shard_box[s], shard_host(r->d, s), msg_create(MSG_FETCH, r->rank, 0, 0), MSG_HEADER_BYTES);
  for (int s = 0; s < S; s++)
    r->fetch_comms[s] = sg_mailbox_get_async(r->inbox, (void **)&r->replies[s]);
  r->fetch_in_flight = 1;
}

/* Waits for the S replies of the fetch in flight and installs them. */
static void install_parameters(replica *r)
{
  int S = r->d->p->ps_shards;
  sg_comm_wait_all(r->fetch_comms, (size_t)S);
  for (int s = 0; s < S; s++) {
    msg *m = r->replies[s];
    xbt_assert(m->kind == MSG_PARAMS, "replica %d expected parameters, got kind %d", r->rank, (int)m->kind);
    r->fetched_version[m->src] = m->version;
    if (m->n)
      memcpy(r->w->data + ps_begin(r->d->shards[m->src]), m->data, m->n * sizeof(double));
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
    sg_comm_wait_all(r->push_comms, (size_t)r->d->p->ps_shards);
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
    msg *m = msg_create(MSG_PUSH, r->rank, r->accrued_steps, n);
    m->version = r->accrued_version[s];
    if (n)
      memcpy(m->data, r->accrued->data + ps_begin(sh), n * sizeof(double));
    r->push_comms[s] = msg_send_async(r->d->shard_box[s], shard_host(r->d, s), m,
                                      msg_bytes(ps_sim_elems(sh), r->cfg->elem_bytes));
  }
  r->push_in_flight = 1;
  if (!r->d->p->overlap)
    wait_push(r);
  r->accrued_steps = 0;
}

static void release_warmstart(replica *r)
{
  if (r->rank != 0 || r->released)
    return;
  for (int i = 1; i < r->d->p->replicas; i++)
    msg_send(r->d->replicas[i].inbox, r->cfg->hosts[i], msg_create(MSG_GO, 0, 0, 0), MSG_HEADER_BYTES);
  r->released = 1;
}

static void wait_for_warmstart(replica *r)
{
  if (r->rank == 0 || r->d->p->warmstart_steps == 0)
    return;
  msg *m = msg_recv(r->inbox);
  xbt_assert(m->kind == MSG_GO, "replica %d expected MSG_GO, got kind %d", r->rank, (int)m->kind);
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
    msg_send(r->d->shard_box[s], shard_host(r->d, s), msg_create(MSG_DONE, r->rank, 0, 0), MSG_HEADER_BYTES);
}

/* One step of the overlapped loop fetches for the next step before computing. */
static void replica_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  replica *r = sg_actor_self_get_data();
  const downpour_params *p = r->d->p;
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
  if (r->w) {
    gsl_vector_free(r->w);
    gsl_vector_free(r->grad);
    gsl_vector_free(r->accrued);
    minibatch_free(r->mb);
  }
}

downpour *downpour_deploy(const run_config *cfg, metrics *m)
{
  const downpour_params *p = &cfg->downpour;
  int R = p->replicas, S = p->ps_shards;
  if (cfg->n_hosts < downpour_hosts_needed(p))
    return NULL;
  downpour *d = xbt_malloc0(sizeof(*d));
  d->cfg = cfg;
  d->p = p;
  if (cfg->numerics)
    d->w = minibatch_initial_params(cfg->model, cfg->seed);
  d->eval = eval_ctl_create(cfg, m, S, snapshot, d);
  ps_rule rule = {p->lr, p->adagrad, p->adagrad_gamma};
  d->shards = xbt_malloc0((size_t)S * sizeof(*d->shards));
  d->shard_box = xbt_malloc0((size_t)S * sizeof(*d->shard_box));
  for (int s = 0; s < S; s++) {
    d->shards[s] = ps_create(cfg, d->w, s, S, rule, "replica", cfg->hosts, R, metrics_slot_at(m, (size_t)s), d->eval);
    d->shard_box[s] = mbox_of("ps", s);
  }
  d->replicas = xbt_malloc0((size_t)R * sizeof(*d->replicas));
  for (int i = 0; i < R; i++) {
    replica_init(d, &d->replicas[i], i, metrics_slot_at(m, (size_t)(S + i)));
    d->replicas[i].inbox = mbox_of("replica", i);
  }
  for (int s = 0; s < S; s++)
    ps_start(d->shards[s], cfg->hosts[R + s]);
  for (int i = 0; i < R; i++) {
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
  for (int i = 0; i < d->p->replicas; i++)
    replica_release(&d->replicas[i]);
  for (int s = 0; s < d->p->ps_shards; s++)
    ps_free(d->shards[s]);
  xbt_free(d->replicas);
  xbt_free(d->shards);
  xbt_free(d->shard_box);
  eval_ctl_free(d->eval);
  if (d->w)
    gsl_vector_free(d->w);
  xbt_free(d);
}

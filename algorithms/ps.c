/* ps.c - parameter-server shard actor: one loop over the steps of serving fetches,
 * applying pushes and, under [faults], checkpointing. */
#include "algorithms/account.h"
#include "algorithms/ps.h"

#include <stdio.h>
#include <string.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/mailbox.h>
#include <simgrid/mutex.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/compute.h"
#include "algorithms/courier.h"
#include "algorithms/faults.h"
#include "algorithms/msg.h"
#include "algorithms/ps_compress.h"
#include "algorithms/ps_msg.h"
#include "models/cost.h"

/* What one client fetches and pushes: the whole slice unless ps_serve_link says
 * otherwise. */
typedef struct ps_client {
  size_t n_ranges; /* numeric ranges (0 when numerics are off) */
  size_t *rb, *re;
  size_t values;   /* numeric values in them */
  double sim_elems;
  int served;
} ps_client;

struct ps_shard {
  const run_config *cfg;
  int rank;
  size_t begin, end;     /* numeric slice */
  double sim_elems;      /* simulated elements of the slice (virtual network share) */
  gsl_vector_view w;     /* view of the global parameters (numerics on) */
  double *acc;           /* Adagrad sums of squared gradients */
  ps_rule rule;
  long version;          /* updates applied so far */
  sg_mutex_t mu;         /* guards w against the evaluator's snapshot */
  sg_mailbox_t inbox;
  sg_mailbox_t *client_box;
  const sg_host_t *client_hosts;
  int n_clients;
  ps_client *clients;
  metrics_slot *slot;
  eval_ctl *eval;
  int numerics;
  int *done;             /* [c]: client c's PS_MSG_DONE arrived */
  int n_done, n_served;  /* clients done; clients served (ps_serve_link) */
  /* [faults] */
  fault_plan *fp;
  int (*gone)(void *ctx, int client);
  void *gone_ctx;
  double *ck_w, *ck_acc; /* the last checkpoint (at first, the starting parameters) */
  long ck_version;
  double next_ckpt;
  int down, ended;       /* guarded by mu */
  int incarnation;       /* restarts so far: each incarnation listens on a fresh mailbox */
  double send_quantum;   /* ps_send_on_quantum */
  courier *courier;      /* starts the replies when send_quantum > 0 */
  compress_params z;     /* ps_decode_pushes: how pushes are compressed (COMPRESS_NONE: dense) */
  double *decoded;       /* numerics: a compressed push's dense gradient, the slice's length */
};

ps_shard *ps_create(const run_config *cfg, gsl_vector *w, int rank, int n_shards, ps_rule rule,
                    const char *client_role, const sg_host_t *client_hosts, int n_clients,
                    metrics_slot *slot, eval_ctl *eval)
{
  ps_shard *s = xbt_malloc0(sizeof(*s));
  s->client_box = xbt_malloc((size_t)n_clients * sizeof(sg_mailbox_t));
  s->clients = xbt_malloc0((size_t)n_clients * sizeof(ps_client));
  s->done = xbt_malloc0((size_t)(n_clients + 1) * sizeof(int));
  s->n_served = n_clients;
  s->client_hosts = client_hosts;
  s->cfg = cfg;
  s->rank = rank;
  s->rule = rule;
  s->n_clients = n_clients;
  s->slot = slot;
  s->eval = eval;
  s->numerics = cfg->numerics && w != NULL;
  ps_slice(net_n_params(cfg->model), (size_t)n_shards, (size_t)rank, &s->begin, &s->end);
  size_t sim_begin, sim_end;
  ps_slice((size_t)cfg->sim_params, (size_t)n_shards, (size_t)rank, &sim_begin, &sim_end);
  s->sim_elems = (double)(sim_end - sim_begin);
  for (int c = 0; c < n_clients; c++) { /* the whole slice */
    ps_client *cl = &s->clients[c];
    s->client_box[c] = mbox_of(client_role, c);
    cl->rb = xbt_malloc(sizeof(size_t));
    cl->re = xbt_malloc(sizeof(size_t));
    cl->rb[0] = s->begin;
    cl->re[0] = s->end;
    cl->n_ranges = s->numerics && s->end > s->begin ? 1 : 0;
    cl->values = cl->n_ranges ? s->end - s->begin : 0;
    cl->sim_elems = s->sim_elems;
    cl->served = 1;
  }
  if (s->numerics) {
    s->w = gsl_vector_subvector(w, s->begin, s->end - s->begin);
    if (rule.adagrad)
      s->acc = xbt_malloc0((s->end - s->begin) * sizeof(double));
  }
  s->mu = sg_mutex_init();
  s->fp = cfg->faults;
  return s;
}

void ps_free(ps_shard *s)
{
  if (s == NULL)
    return;
  sg_mutex_destroy(s->mu);
  courier_free(s->courier);
  for (int c = 0; c < s->n_clients; c++) {
    xbt_free(s->clients[c].rb);
    xbt_free(s->clients[c].re);
  }
  xbt_free(s->clients);
  xbt_free(s->client_box);
  xbt_free(s->done);
  xbt_free(s->ck_w);
  xbt_free(s->ck_acc);
  xbt_free(s->acc);
  xbt_free(s->decoded);
  xbt_free(s);
}

void ps_serve_link(ps_shard *s, int c, const ps_link *k)
{
  xbt_assert(c >= 0 && c < s->n_clients, "ps_serve_link: client %d of %d", c, s->n_clients);
  xbt_assert(k == NULL || k->shard == s->rank, "ps_serve_link: a link to shard %d given to shard %d", k->shard,
             s->rank);
  ps_client *cl = &s->clients[c];
  size_t n = k ? k->n_ranges : 0;
  cl->n_ranges = s->numerics ? n : 0;
  xbt_assert(cl->n_ranges == 0 || ps_ranges_inside(k->rb, k->re, cl->n_ranges, s->begin, s->end),
             "ps_serve_link: the ranges of client %d are not inside shard %d's slice", c, s->rank);
  xbt_free(cl->rb);
  xbt_free(cl->re);
  cl->rb = xbt_malloc((cl->n_ranges + 1) * sizeof(size_t));
  cl->re = xbt_malloc((cl->n_ranges + 1) * sizeof(size_t));
  for (size_t i = 0; i < cl->n_ranges; i++) {
    cl->rb[i] = k->rb[i];
    cl->re[i] = k->re[i];
  }
  cl->values = ps_ranges_len(cl->rb, cl->re, cl->n_ranges);
  cl->sim_elems = k ? k->sim_elems : 0.0;
  s->n_served -= cl->served;
  cl->served = n > 0 || cl->sim_elems > 0;
  s->n_served += cl->served;
}

void ps_snapshot(ps_shard *s, gsl_vector *w)
{
  if (!s->numerics)
    return;
  sg_mutex_lock(s->mu);
  memcpy(w->data + s->begin, s->w.vector.data, (s->end - s->begin) * sizeof(double));
  sg_mutex_unlock(s->mu);
}

int ps_serves(const ps_shard *s, int c)
{
  xbt_assert(c >= 0 && c < s->n_clients, "ps_serves: client %d of %d", c, s->n_clients);
  return s->clients[c].served;
}

ps_params_msg *ps_reply(ps_shard *s, int client, long serial, double *bytes)
{
  const ps_client *cl = &s->clients[client];
  ps_params_msg *m = ps_params_msg_create(s->rank, serial, s->version, cl->values);
  ps_ranges_gather(m->values, s->w.vector.data, s->begin, cl->rb, cl->re, cl->n_ranges);
  *bytes = msg_bytes(cl->sim_elems, s->cfg->elem_bytes);
  return m;
}

/* Replies to a fetch with a copy of the client's values and the version they are at. */
static void send_parameters(ps_shard *s, const ps_fetch_msg *fetch)
{
  double bytes;
  ps_params_msg *m = ps_reply(s, fetch->client, fetch->serial, &bytes);
  if (s->courier)
    courier_send(s->courier, s->client_box[fetch->client], s->client_hosts[fetch->client], &m->hdr, bytes);
  else
    msg_send(s->client_box[fetch->client], s->client_hosts[fetch->client], &m->hdr, bytes);
}

/* downpour.compress: the dense gradient a compressed push carries, decoded on the shard's
 * host (its flops executed); a dense push's own values otherwise. */
static const double *decode_push(ps_shard *s, const ps_push_msg *push, const ps_client *cl)
{
  if (push->z.method == COMPRESS_NONE)
    return push->grad;
  xbt_assert(push->z.method == s->z.method, "shard %d: a %s push, expected %s", s->rank,
             compress_method_name(push->z.method), compress_method_name(s->z.method));
  account_label_push("decompress gradient of client %d", push->client);
  compute_execute(s->cfg, ps_compress_decode_flops(&s->z, cl->sim_elems, push->step));
  account_label_pop();
  if (s->numerics)
    ps_compress_decode(push, s->decoded);
  return s->decoded;
}

void ps_record_staleness(ps_shard *s, const ps_push_msg *push)
{
  /* after a restart from a checkpoint the shard's version can be behind the fetch's */
  metrics_slot_staleness(s->slot, s->version >= push->version ? s->version - push->version : 0);
}

double ps_update_flops(const ps_shard *s, int client)
{
  return cost_update_flops((size_t)s->clients[client].sim_elems, s->rule.adagrad);
}

void ps_apply(ps_shard *s, const ps_push_msg *push, const double *g)
{
  const ps_client *cl = &s->clients[push->client];
  if (s->numerics) {
    xbt_assert(push->n == cl->values, "shard %d: a push of %zu values from client %d", s->rank, push->n,
               push->client);
    sg_mutex_lock(s->mu);
    ps_rule_apply(s->rule, s->w.vector.data, s->acc, s->begin, cl->rb, cl->re, cl->n_ranges, g ? g : push->grad);
    sg_mutex_unlock(s->mu);
  }
  s->version++;
}

/* Dean'12 4.1: the shard applies each gradient as it arrives. Staleness = updates
 * applied since the parameters this gradient was computed on were fetched. */
static void apply_update(ps_shard *s, const ps_push_msg *push)
{
  ps_record_staleness(s, push);
  const double *g = decode_push(s, push, &s->clients[push->client]);
  compute_execute(s->cfg, ps_update_flops(s, push->client));
  ps_apply(s, push, g);
}

/* ---- steps of a shard --------------------------------------------------------- */

/* [faults]: ps_watch was called. */
static int watched(const ps_shard *s)
{
  return s->gone != NULL;
}

/* Whether every client it serves is done: it said so, or ([faults]) it finished or
 * died, which a shard that was down when it said so only learns this way. */
static int all_done(const ps_shard *s)
{
  if (!watched(s))
    return s->n_done >= s->n_served;
  for (int c = 0; c < s->n_clients; c++)
    if (s->clients[c].served && !s->done[c] && !s->gone(s->gone_ctx, c))
      return 0;
  return 1;
}

/* The next message; under [faults] a wait bounded by faults.wait_timeout, NULL when
 * nothing came, so that clients that died cannot hold the shard forever. */
static msg *next_message(ps_shard *s)
{
  if (!watched(s))
    return msg_recv(s->inbox);
  msg *m = NULL;
  sg_comm_t c = sg_mailbox_get_async(s->inbox, (void **)&m);
  if (sg_comm_wait_for(c, s->fp->wait_timeout) != SG_OK)
    return NULL;
  msg_received(m);
  return m;
}

static void client_done(ps_shard *s, int client)
{
  xbt_assert(client >= 0 && client < s->n_clients, "shard %d: done from client %d", s->rank, client);
  s->n_done += !s->done[client];
  s->done[client] = 1;
}

static void serve(ps_shard *s, msg *m)
{
  if (m->kind == PS_MSG_FETCH) {
    account_label_push("send parameters to client %d", ps_fetch_msg_of(m)->client);
    send_parameters(s, ps_fetch_msg_of(m));
    account_label_pop();
  } else if (m->kind == PS_MSG_PUSH) {
    ps_push_msg *pm = ps_push_msg_of(m);
    if (pm->served)
      *pm->served = 1;
    account_label_push("apply gradient of client %d", pm->client);
    apply_update(s, pm);
    account_label_pop();
  }
  else if (m->kind == PS_MSG_DONE)
    client_done(s, ps_done_msg_of(m)->client);
  else
    xbt_die("shard %d: a message of kind %d", s->rank, m->kind);
  msg_free(m);
}

/* [faults]: the messages already in the mailbox when the last client was done (pushes
 * delivered before their senders finished). */
static void serve_queued(ps_shard *s)
{
  for (msg *m; watched(s) && sg_mailbox_listen(sg_mailbox_get_name(s->inbox)) && (m = next_message(s)) != NULL;)
    serve(s, m);
}

/* [faults]: saves the slice, the Adagrad sums and the version, as they are when the
 * write starts, every faults.checkpoint_interval; the write takes slice bytes /
 * checkpoint_bw of simulated time and counts only once complete (a shard that dies
 * while writing keeps the previous one). */
static void checkpoint_if_due(ps_shard *s)
{
  if (!watched(s))
    return;
  double now = simgrid_get_clock(), every = s->fp->checkpoint_interval;
  if (every <= 0 || now < s->next_ckpt)
    return;
  size_t n = s->numerics ? s->end - s->begin : 0;
  double *w = xbt_malloc((n + 1) * sizeof(double)), *acc = s->acc ? xbt_malloc((n + 1) * sizeof(double)) : NULL;
  sg_mutex_lock(s->mu);
  if (n)
    memcpy(w, s->w.vector.data, n * sizeof(double));
  if (acc)
    memcpy(acc, s->acc, n * sizeof(double));
  long version = s->version;
  sg_mutex_unlock(s->mu);
  double bytes = s->sim_elems * (double)s->cfg->elem_bytes * (s->rule.adagrad ? 2 : 1);
  if (s->fp->checkpoint_bw > 0)
    sg_actor_sleep_for(bytes / s->fp->checkpoint_bw);
  sg_mutex_lock(s->mu);
  xbt_free(s->ck_w);
  xbt_free(s->ck_acc);
  s->ck_w = w;
  s->ck_acc = acc;
  s->ck_version = version;
  sg_mutex_unlock(s->mu);
  atomic_fetch_add(&s->fp->checkpoints, 1);
  while (s->next_ckpt <= simgrid_get_clock())
    s->next_ckpt += every;
}

/* Its last replies are delivered (downpour.sends = waited); [faults] the injector
 * no longer sees it up; the evaluator learns that training lost one more shard. */
static void finish(ps_shard *s)
{
  msg_flush();
  if (s->courier)
    courier_close(s->courier);
  if (watched(s)) {
    sg_mutex_lock(s->mu);
    s->ended = 1;
    sg_mutex_unlock(s->mu);
  }
  eval_finished(s->eval);
}

/* Dean'12 4.1: a shard serves fetches and applies pushes in arrival order until every
 * client it serves is done; under [faults] it also checkpoints its slice. */
static void ps_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  ps_shard *s = sg_actor_self_get_data();
  /* A server's NIC takes messages as they come, not one rendezvous at a time: a
   * mailbox with a permanent receiver starts every transfer when it is sent. */
  sg_mailbox_set_receiver(sg_mailbox_get_name(s->inbox));
  while (!all_done(s)) {
    msg *m = next_message(s);
    if (m)
      serve(s, m);
    checkpoint_if_due(s);
  }
  serve_queued(s);
  finish(s);
}

void ps_watch(ps_shard *s, int (*gone)(void *ctx, int client), void *ctx)
{
  xbt_assert(s->fp, "ps_watch: the run has no fault plan");
  s->gone = gone;
  s->gone_ctx = ctx;
  size_t n = s->numerics ? s->end - s->begin : 0;
  s->ck_w = xbt_malloc((n + 1) * sizeof(double));
  if (n)
    memcpy(s->ck_w, s->w.vector.data, n * sizeof(double));
  s->ck_acc = s->acc ? xbt_malloc0((n + 1) * sizeof(double)) : NULL;
  s->next_ckpt = s->fp->checkpoint_interval;
}

sg_mailbox_t ps_mailbox(ps_shard *s)
{
  sg_mutex_lock(s->mu);
  sg_mailbox_t box = !s->down && !s->ended ? s->inbox : NULL;
  sg_mutex_unlock(s->mu);
  return box;
}

void ps_fail(ps_shard *s, sg_host_t host)
{
  sg_mutex_lock(s->mu);
  int was_up = !s->down && !s->ended;
  if (was_up) {
    size_t n = s->numerics ? s->end - s->begin : 0;
    if (n)
      memcpy(s->w.vector.data, s->ck_w, n * sizeof(double));
    if (s->acc)
      memcpy(s->acc, s->ck_acc, n * sizeof(double));
    atomic_fetch_add(&s->fp->lost_updates, s->version - s->ck_version);
    s->version = s->ck_version;
    s->down = 1;
    if (!faults_host_returns(s->fp, host, simgrid_get_clock()))
      s->ended = 1;
  }
  int gone_for_good = was_up && s->ended;
  sg_mutex_unlock(s->mu);
  if (gone_for_good)
    eval_finished(s->eval);
}

void ps_restart(ps_shard *s, sg_host_t host)
{
  sg_mutex_lock(s->mu);
  int restart = s->down && !s->ended;
  s->down = 0;
  sg_mutex_unlock(s->mu);
  if (!restart)
    return;
  atomic_fetch_add(&s->fp->shard_restarts, 1);
  s->next_ckpt = simgrid_get_clock() + s->fp->checkpoint_interval;
  s->incarnation++;
  ps_start(s, host);
}

void ps_start(ps_shard *s, sg_host_t host)
{
  char name[32], box[48];
  mbox_name(name, sizeof(name), "ps", s->rank);
  /* A restarted shard gets a fresh mailbox: SimGrid 3.32's mailbox of a dead permanent
   * receiver still holds the transfers it had accepted, which never complete. */
  if (s->incarnation > 0) { /* from the injector: replicas may be reading inbox */
    snprintf(box, sizeof(box), "%s.%d", name, s->incarnation);
    sg_mutex_lock(s->mu);
    s->inbox = sg_mailbox_by_name(box);
    sg_mutex_unlock(s->mu);
  } else {
    s->inbox = sg_mailbox_by_name(name);
  }
  if (s->send_quantum > 0 && s->courier == NULL) {
    char cname[48];
    snprintf(cname, sizeof(cname), "%s.courier", name);
    s->courier = courier_start(s->send_quantum, cname, host);
  }
  sg_actor_t a = sg_actor_init(name, host);
  sg_actor_set_data(a, s);
  sg_actor_start(a, ps_actor, 0, NULL);
}

void ps_decode_pushes(ps_shard *s, const compress_params *p)
{
  s->z = *p;
  xbt_free(s->decoded);
  s->decoded = NULL;
  if (s->numerics && p->method != COMPRESS_NONE)
    s->decoded = xbt_malloc0((s->end - s->begin + 1) * sizeof(double));
}

void ps_send_on_quantum(ps_shard *s, double q)
{
  xbt_assert(s->fp == NULL, "ps_send_on_quantum: not under [faults]");
  s->send_quantum = q;
}

void ps_bank_ended(ps_shard *s)
{
  eval_finished(s->eval);
}

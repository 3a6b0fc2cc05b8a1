/* ps_bank.c - the bank actor: one loop receiving a client's fetches and pushes to the shards
 * it talks to as one message each, and the clients' done. With whole replicas it serves
 * them itself; when some client talks to only some of its shards (split replicas), each
 * shard has a lane: an actor beside the bank serving that shard's parts in arrival order,
 * so that one shard's update holds up only its own queue, as on its own host. */
#include "algorithms/ps_bank.h"

#include <stdio.h>
#include <simgrid/actor.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <simgrid/semaphore.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "algorithms/compute.h"
#include "algorithms/courier.h"
#include "algorithms/msg.h"
#include "algorithms/ps_msg.h"

struct ps_bank {
  const run_config *cfg;
  int rank;
  ps_shard **shards;        /* [i]: shard first + i */
  int first, n;
  sg_mailbox_t inbox;
  sg_mailbox_t *client_box; /* [c] */
  const sg_host_t *client_hosts;
  int n_clients, n_done, n_served; /* n_served: clients talking to some of its shards */
  int *done;                /* [c]: client c's PS_MSG_DONE arrived */
  sg_exec_t *execs;         /* [i]: shard i's update in a push */
  const double *factor;     /* [i]: shard i's host's slowdown in the exact model, or NULL: 1 */
  double send_quantum;
  courier *courier;
  struct bank_lane *lanes;  /* [i]: shard i's lane, or NULL: the bank serves every part itself */
  sg_sem_t lanes_ended;     /* released by each lane as it ends */
};

/* A message whose parts lanes serve: a fetch's reply, sent when its last part is in, or a
 * push, freed when its last part is applied. */
typedef struct bank_job {
  msg *m;       /* the reply's or the push's bundle */
  int client, left;
  long serial;  /* a fetch's */
  double bytes; /* the reply's, summed as its parts come in */
} bank_job;

/* One entry of a lane's queue; job NULL: the lane ends. */
typedef struct bank_item {
  struct bank_item *next;
  bank_job *job;
} bank_item;

typedef struct bank_lane {
  ps_bank *b;
  int i;
  bank_item *head, *tail;
  sg_sem_t ready; /* one count per queued item */
} bank_lane;

ps_bank *ps_bank_create(const run_config *cfg, int rank, ps_shard **shards, int first, int n,
                        const char *client_role, const sg_host_t *client_hosts, int n_clients)
{
  xbt_assert(n >= 1 && cfg->faults == NULL, "ps_bank_create: %d shards%s", n, cfg->faults ? " under [faults]" : "");
  ps_bank *b = xbt_malloc0(sizeof(*b));
  b->cfg = cfg;
  b->rank = rank;
  b->shards = shards;
  b->first = first;
  b->n = n;
  b->client_hosts = client_hosts;
  b->n_clients = n_clients;
  b->client_box = xbt_malloc((size_t)n_clients * sizeof(sg_mailbox_t));
  for (int c = 0; c < n_clients; c++)
    b->client_box[c] = mbox_of(client_role, c);
  b->done = xbt_malloc0((size_t)n_clients * sizeof(int));
  b->execs = xbt_malloc0((size_t)n * sizeof(sg_exec_t));
  b->inbox = mbox_of("bank", rank);
  return b;
}

void ps_bank_free(ps_bank *b)
{
  if (b == NULL)
    return;
  courier_free(b->courier);
  for (int i = 0; b->lanes && i < b->n; i++)
    sg_sem_destroy(b->lanes[i].ready);
  if (b->lanes)
    sg_sem_destroy(b->lanes_ended);
  xbt_free(b->lanes);
  xbt_free(b->client_box);
  xbt_free(b->done);
  xbt_free(b->execs);
  xbt_free(b);
}

void ps_bank_slow_shards(ps_bank *b, const double *factor)
{
  b->factor = factor;
}

void ps_bank_send_on_quantum(ps_bank *b, double q)
{
  b->send_quantum = q;
}

sg_mailbox_t ps_bank_mailbox(const ps_bank *b) { return b->inbox; }
int ps_bank_first(const ps_bank *b) { return b->first; }
int ps_bank_size(const ps_bank *b) { return b->n; }

static void bank_send_reply(ps_bank *b, int c, ps_bundle_msg *m, double bytes)
{
  if (b->courier)
    courier_send(b->courier, b->client_box[c], b->client_hosts[c], &m->hdr, bytes);
  else
    msg_send(b->client_box[c], b->client_hosts[c], &m->hdr, bytes);
}

/* Dean'12 4.1, for each of its shards the client talks to: a copy of the client's values
 * and their version, all in one message whose size is the sum of the replies'; part i is
 * shard first + i's reply, or NULL. */
static void bank_send_parameters(ps_bank *b, const ps_fetch_msg *fetch)
{
  ps_bundle_msg *m = ps_bundle_msg_create(PS_MSG_BANK_PARAMS, fetch->client, (size_t)b->n);
  double bytes = 0;
  for (int i = 0; i < b->n; i++) {
    double part;
    if (!ps_serves(b->shards[i], fetch->client))
      continue;
    m->part[i] = &ps_reply(b->shards[i], fetch->client, fetch->serial, &part)->hdr;
    bytes += part;
  }
  bank_send_reply(b, fetch->client, m, bytes);
}

/* Dean'12 4.1, for each of its shards the push has a part for (part i: shard first + i's,
 * NULL for a shard the client does not talk to): the part is applied as it arrives; the
 * shards' updates run side by side, each on a core of its own, as they would on their own
 * hosts, and land together when the last is done. */
static void bank_apply_updates(ps_bank *b, const ps_bundle_msg *push)
{
  xbt_assert(push->n == (size_t)b->n, "bank %d: a push of %zu parts for %d shards", b->rank, push->n, b->n);
  for (int i = 0; i < b->n; i++) {
    b->execs[i] = NULL;
    if (push->part[i] == NULL)
      continue;
    ps_push_msg *pm = ps_push_msg_of(push->part[i]);
    ps_record_staleness(b->shards[i], pm);
    b->execs[i] = compute_execute_async_as(b->cfg, ps_update_flops(b->shards[i], pm->client),
                                           b->factor ? b->factor[i] : 1.0);
  }
  for (int i = 0; i < b->n; i++)
    if (b->execs[i])
      account_exec_wait(b->execs[i]);
  for (int i = 0; i < b->n; i++)
    if (push->part[i])
      ps_apply(b->shards[i], ps_push_msg_of(push->part[i]), NULL);
}

/* ---- lanes: each shard's parts served by an actor of its own ---------------------------- */

static void lane_put(bank_lane *l, bank_job *job)
{
  bank_item *it = xbt_malloc(sizeof(*it));
  it->next = NULL;
  it->job = job;
  if (l->tail)
    l->tail->next = it;
  else
    l->head = it;
  l->tail = it;
  sg_sem_release(l->ready);
}

/* Dean'12 4.1, shard i's part of a fetch: its copy of the client's values and their
 * version as the shard serves it; the last part in sends the reply. */
static void lane_reply(bank_lane *l, bank_job *job)
{
  ps_bank *b = l->b;
  ps_bundle_msg *m = ps_bundle_msg_of(job->m);
  double part;
  account_label_push("send parameters to client %d", job->client);
  m->part[l->i] = &ps_reply(b->shards[l->i], job->client, job->serial, &part)->hdr;
  job->bytes += part;
  if (--job->left == 0) {
    bank_send_reply(b, job->client, m, job->bytes);
    xbt_free(job);
  }
  account_label_pop();
}

/* Dean'12 4.1, shard i's part of a push: applied as it arrives, on a core of the bank's, as
 * long as on the shard's own host; the last part applied frees the push. */
static void lane_update(bank_lane *l, bank_job *job)
{
  ps_bank *b = l->b;
  ps_push_msg *pm = ps_push_msg_of(ps_bundle_msg_of(job->m)->part[l->i]);
  account_label_push("apply gradient of client %d", job->client);
  ps_record_staleness(b->shards[l->i], pm);
  account_exec_wait(compute_execute_async_as(b->cfg, ps_update_flops(b->shards[l->i], pm->client),
                                             b->factor ? b->factor[l->i] : 1.0));
  ps_apply(b->shards[l->i], pm, NULL);
  if (--job->left == 0) {
    msg_free(job->m);
    xbt_free(job);
  }
  account_label_pop();
}

/* Shard i's lane: its parts in arrival order until told to end. */
static void bank_lane_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  bank_lane *l = sg_actor_self_get_data();
  for (;;) {
    sg_sem_acquire(l->ready);
    bank_item *it = l->head;
    l->head = it->next;
    if (l->head == NULL)
      l->tail = NULL;
    bank_job *job = it->job;
    xbt_free(it);
    if (job == NULL)
      break;
    if (job->m->kind == PS_MSG_BANK_PARAMS)
      lane_reply(l, job);
    else
      lane_update(l, job);
  }
  msg_flush();
  sg_sem_release(l->b->lanes_ended);
}

/* A fetch or a push handed to the lanes of the shards it has parts for; the job takes a
 * push's bundle, which the caller then does not free. */
static void bank_dispatch(ps_bank *b, msg *m)
{
  bank_job *job = xbt_malloc0(sizeof(*job));
  int fetch = m->kind == PS_MSG_FETCH;
  job->client = fetch ? ps_fetch_msg_of(m)->client : ps_bundle_msg_of(m)->client;
  job->serial = fetch ? ps_fetch_msg_of(m)->serial : 0;
  job->m = fetch ? &ps_bundle_msg_create(PS_MSG_BANK_PARAMS, job->client, (size_t)b->n)->hdr : m;
  xbt_assert(fetch || ps_bundle_msg_of(m)->n == (size_t)b->n, "bank %d: a push of %zu parts for %d shards", b->rank,
             ps_bundle_msg_of(m)->n, b->n);
  for (int i = 0; i < b->n; i++)
    job->left += fetch ? ps_serves(b->shards[i], job->client) : ps_bundle_msg_of(m)->part[i] != NULL;
  xbt_assert(job->left > 0, "bank %d: a message from client %d for none of its shards", b->rank, job->client);
  for (int i = 0; i < b->n; i++)
    if (fetch ? ps_serves(b->shards[i], job->client) : ps_bundle_msg_of(m)->part[i] != NULL)
      lane_put(&b->lanes[i], job);
}

/* Lanes when some client it serves talks to only some of its shards; started beside it. */
static void bank_start_lanes(ps_bank *b)
{
  int partial = 0;
  for (int c = 0; c < b->n_clients; c++) {
    int talks = 0;
    for (int i = 0; i < b->n; i++)
      talks += ps_serves(b->shards[i], c);
    partial |= talks > 0 && talks < b->n;
  }
  if (!partial)
    return;
  b->lanes = xbt_malloc0((size_t)b->n * sizeof(bank_lane));
  b->lanes_ended = sg_sem_init(0);
  for (int i = 0; i < b->n; i++) {
    char name[32];
    mbox_name(name, sizeof(name), "bank", b->rank); /* the bank's role in the time breakdown */
    b->lanes[i] = (bank_lane){.b = b, .i = i, .ready = sg_sem_init(0)};
    sg_actor_t a = sg_actor_init(name, sg_host_self());
    sg_actor_set_data(a, &b->lanes[i]);
    sg_actor_start(a, bank_lane_actor, 0, NULL);
  }
}

static void bank_end_lanes(ps_bank *b)
{
  for (int i = 0; b->lanes && i < b->n; i++)
    lane_put(&b->lanes[i], NULL);
  for (int i = 0; b->lanes && i < b->n; i++)
    sg_sem_acquire(b->lanes_ended);
}

static void bank_serve(ps_bank *b, msg *m)
{
  if (b->lanes && (m->kind == PS_MSG_FETCH || m->kind == PS_MSG_BANK_PUSH)) {
    bank_dispatch(b, m);
    if (m->kind == PS_MSG_BANK_PUSH)
      return; /* the lanes free it */
  } else if (m->kind == PS_MSG_FETCH) {
    account_label_push("send parameters to client %d", ps_fetch_msg_of(m)->client);
    bank_send_parameters(b, ps_fetch_msg_of(m));
    account_label_pop();
  } else if (m->kind == PS_MSG_BANK_PUSH) {
    account_label_push("apply gradient of client %d", ps_bundle_msg_of(m)->client);
    bank_apply_updates(b, ps_bundle_msg_of(m));
    account_label_pop();
  } else if (m->kind == PS_MSG_DONE) {
    int c = ps_done_msg_of(m)->client;
    xbt_assert(c >= 0 && c < b->n_clients, "bank %d: done from client %d", b->rank, c);
    b->n_done += !b->done[c];
    b->done[c] = 1;
  } else
    xbt_die("bank %d: a message of kind %d", b->rank, m->kind);
  msg_free(m);
}

/* Dean'12 4.1: the bank serves its shards' fetches and pushes in arrival order until every
 * client that talks to one of them is done. */
static void ps_bank_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  ps_bank *b = sg_actor_self_get_data();
  /* a permanent receiver, as a shard's (ps.c): every transfer starts when it is sent */
  sg_mailbox_set_receiver(sg_mailbox_get_name(b->inbox));
  for (int c = 0; c < b->n_clients; c++) /* the shards have learnt their clients before the run */
    for (int i = 0; i < b->n; i++)
      if (ps_serves(b->shards[i], c)) {
        b->n_served++;
        break;
      }
  bank_start_lanes(b);
  while (b->n_done < b->n_served)
    bank_serve(b, msg_recv(b->inbox));
  bank_end_lanes(b);
  msg_flush();
  if (b->courier)
    courier_close(b->courier);
  for (int i = 0; i < b->n; i++)
    ps_bank_ended(b->shards[i]);
}

void ps_bank_start(ps_bank *b, sg_host_t host)
{
  char name[32];
  mbox_name(name, sizeof(name), "bank", b->rank);
  if (b->send_quantum > 0 && b->courier == NULL) {
    char cname[48];
    snprintf(cname, sizeof(cname), "%s.courier", name);
    b->courier = courier_start(b->send_quantum, cname, host);
  }
  sg_actor_t a = sg_actor_init(name, host);
  sg_actor_set_data(a, b);
  sg_actor_start(a, ps_bank_actor, 0, NULL);
}

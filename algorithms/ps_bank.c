/* ps_bank.c - the bank actor: one loop serving its shards' fetches and pushes as one
 * message each, and the clients' done. */
#include "algorithms/ps_bank.h"

#include <stdio.h>
#include <simgrid/actor.h>
#include <simgrid/exec.h>
#include <simgrid/mailbox.h>
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
  int n_clients, n_done;
  int *done;                /* [c]: client c's PS_MSG_DONE arrived */
  sg_exec_t *execs;         /* [i]: shard i's update in a push */
  const double *factor;     /* [i]: shard i's host's slowdown in the exact model, or NULL: 1 */
  double send_quantum;
  courier *courier;
};

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

/* Dean'12 4.1, for each of its shards: a copy of the client's values and their version,
 * all in one message whose size is the sum of the replies'. */
static void bank_send_parameters(ps_bank *b, const ps_fetch_msg *fetch)
{
  ps_bundle_msg *m = ps_bundle_msg_create(PS_MSG_BANK_PARAMS, fetch->client, (size_t)b->n);
  double bytes = 0;
  for (int i = 0; i < b->n; i++) {
    double part;
    m->part[i] = &ps_reply(b->shards[i], fetch->client, fetch->serial, &part)->hdr;
    bytes += part;
  }
  int c = fetch->client;
  if (b->courier)
    courier_send(b->courier, b->client_box[c], b->client_hosts[c], &m->hdr, bytes);
  else
    msg_send(b->client_box[c], b->client_hosts[c], &m->hdr, bytes);
}

/* Dean'12 4.1, for each of its shards: the part of the push that is the shard's is applied
 * as it arrives; the shards' updates run side by side, each on a core of its own, as they
 * would on their own hosts, and land together when the last is done. */
static void bank_apply_updates(ps_bank *b, const ps_bundle_msg *push)
{
  xbt_assert(push->n == (size_t)b->n, "bank %d: a push of %zu parts for %d shards", b->rank, push->n, b->n);
  for (int i = 0; i < b->n; i++) {
    ps_push_msg *pm = ps_push_msg_of(push->part[i]);
    ps_record_staleness(b->shards[i], pm);
    b->execs[i] = compute_execute_async_as(b->cfg, ps_update_flops(b->shards[i], pm->client),
                                           b->factor ? b->factor[i] : 1.0);
  }
  for (int i = 0; i < b->n; i++)
    account_exec_wait(b->execs[i]);
  for (int i = 0; i < b->n; i++)
    ps_apply(b->shards[i], ps_push_msg_of(push->part[i]), NULL);
}

static void bank_serve(ps_bank *b, msg *m)
{
  if (m->kind == PS_MSG_FETCH) {
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
 * client is done. */
static void ps_bank_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  ps_bank *b = sg_actor_self_get_data();
  /* a permanent receiver, as a shard's (ps.c): every transfer starts when it is sent */
  sg_mailbox_set_receiver(sg_mailbox_get_name(b->inbox));
  while (b->n_done < b->n_clients)
    bank_serve(b, msg_recv(b->inbox));
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

/* modelpar_net.c - a machine's network thread for a split replica (modelpar_net.h).
 *
 * The thread is a FIFO mutex held while one message's work runs (a real SimGrid execution
 * of msg_overhead, plus msg_byte_overhead per byte, on the machine, beside the compute's); two daemon actors take its turns:
 * the sender, with the messages the computing side handed over, and the receiver, with
 * those arriving on the machine's wire mailbox (a permanent receiver: transfers start as
 * soon as they are sent). A message whose work is done waits in the inbox, by slot, for
 * the computing side. */
#include "algorithms/modelpar_net.h"

#include <stdio.h>
#include <simgrid/actor.h>
#include <simgrid/cond.h>
#include <simgrid/mailbox.h>
#include <simgrid/mutex.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "algorithms/compute.h"
#include "algorithms/msg.h"

typedef struct net_item {
  modelpar_msg *m;
  sg_mailbox_t to;   /* the receiving machine's wire */
  sg_host_t dst;
  double bytes;
  struct net_item *next;
} net_item;

typedef struct net_list {
  net_item *head, *tail;
} net_list;

struct modelpar_net {
  double overhead;      /* s of CPU per message */
  double byte_overhead; /* and per byte of it */
  sg_mutex_t thread;  /* held while one message's work runs */
  sg_mutex_t lock;    /* guards out and in */
  sg_cond_t out_cond, in_cond;
  net_list out;       /* handed over, not yet worked on */
  net_list in;        /* received and worked on, for the computing side */
  net_item *sending;  /* the item the sender works on, NULL between items */
  net_item *receiving; /* the item the receiver works on, NULL between items */
  sg_mailbox_t wire;
};

static void net_push(net_list *l, net_item *it)
{
  it->next = NULL;
  if (l->tail)
    l->tail->next = it;
  else
    l->head = it;
  l->tail = it;
}

/* Unlinks and returns the first item of l for slot box (any slot: box < 0), or NULL. */
static net_item *net_take(net_list *l, int box)
{
  net_item *prev = NULL;
  for (net_item *it = l->head; it; prev = it, it = it->next)
    if (box < 0 || it->m->box == box) {
      if (prev)
        prev->next = it->next;
      else
        l->head = it->next;
      if (l->tail == it)
        l->tail = prev;
      return it;
    }
  return NULL;
}

/* One message's work on the thread, in the order the thread was asked. */
static void net_work(modelpar_net *n, double bytes)
{
  sg_mutex_lock(n->thread);
  compute_busy(n->overhead + n->byte_overhead * bytes);
  sg_mutex_unlock(n->thread);
}

static void net_sender(int argc, char **argv)
{
  (void)argc, (void)argv;
  modelpar_net *n = sg_actor_self_get_data();
  for (;;) {
    sg_mutex_lock(n->lock);
    net_item *it;
    while ((it = net_take(&n->out, -1)) == NULL)
      sg_cond_wait(n->out_cond, n->lock);
    n->sending = it; /* freed by modelpar_net_free if the run ends during its work */
    sg_mutex_unlock(n->lock);
    net_work(n, it->bytes);
    n->sending = NULL;
    msg_send(it->to, it->dst, &it->m->hdr, it->bytes);
    xbt_free(it);
  }
}

static void net_receiver(int argc, char **argv)
{
  (void)argc, (void)argv;
  modelpar_net *n = sg_actor_self_get_data();
  sg_mailbox_set_receiver(sg_mailbox_get_name(n->wire));
  for (;;) {
    modelpar_msg *m = (modelpar_msg *)msg_recv(n->wire);
    net_item *it = xbt_malloc0(sizeof(*it));
    it->m = m;
    n->receiving = it; /* freed by modelpar_net_free if the run ends during its work */
    net_work(n, m->hdr.wire_bytes);
    n->receiving = NULL;
    sg_mutex_lock(n->lock);
    net_push(&n->in, it);
    sg_cond_notify_all(n->in_cond);
    sg_mutex_unlock(n->lock);
  }
}

static void net_start(modelpar_net *n, sg_host_t host, const char *name, const char *role, xbt_main_func_t code)
{
  char actor[64];
  snprintf(actor, sizeof(actor), "%s-%s", name, role);
  sg_actor_t a = sg_actor_init(actor, host);
  sg_actor_set_data(a, n);
  sg_actor_start(a, code, 0, NULL);
  sg_actor_daemonize(a); /* it serves until the partitions end */
}

modelpar_net *modelpar_net_create(sg_host_t host, const char *name, double overhead, double byte_overhead)
{
  modelpar_net *n = xbt_malloc0(sizeof(*n));
  n->overhead = overhead;
  n->byte_overhead = byte_overhead;
  n->thread = sg_mutex_init();
  n->lock = sg_mutex_init();
  n->out_cond = sg_cond_init();
  n->in_cond = sg_cond_init();
  char wire[64];
  snprintf(wire, sizeof(wire), "%s-wire", name);
  n->wire = sg_mailbox_by_name(wire);
  net_start(n, host, name, "send", net_sender);
  net_start(n, host, name, "recv", net_receiver);
  return n;
}

static void net_drain(net_list *l)
{
  net_item *it;
  while ((it = net_take(l, -1)) != NULL) {
    msg_free(it->m);
    xbt_free(it);
  }
}

void modelpar_net_free(modelpar_net *n)
{
  if (n == NULL)
    return;
  net_drain(&n->out);
  net_drain(&n->in);
  net_item *busy[] = {n->sending, n->receiving};
  for (size_t k = 0; k < 2; k++)
    if (busy[k]) {
      msg_free(busy[k]->m);
      xbt_free(busy[k]);
    }
  sg_cond_destroy(n->out_cond);
  sg_cond_destroy(n->in_cond);
  sg_mutex_destroy(n->lock);
  sg_mutex_destroy(n->thread);
  xbt_free(n);
}

void modelpar_net_send(modelpar_net *n, modelpar_net *to, sg_host_t dst, modelpar_msg *m, double bytes)
{
  net_item *it = xbt_malloc0(sizeof(*it));
  *it = (net_item){m, to->wire, dst, bytes, NULL};
  sg_mutex_lock(n->lock);
  net_push(&n->out, it);
  sg_cond_notify_all(n->out_cond);
  sg_mutex_unlock(n->lock);
}

modelpar_msg *modelpar_net_recv(modelpar_net *n, int box)
{
  account_comm_begin();
  sg_mutex_lock(n->lock);
  net_item *it;
  while ((it = net_take(&n->in, box)) == NULL)
    sg_cond_wait(n->in_cond, n->lock);
  sg_mutex_unlock(n->lock);
  account_comm_end();
  modelpar_msg *m = it->m;
  xbt_free(it);
  return m;
}

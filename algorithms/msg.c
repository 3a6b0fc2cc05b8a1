/* msg.c - messages and mailboxes shared by every algorithm. */
#include "algorithms/msg.h"

#include <stdatomic.h>
#include <stdio.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

msg *msg_create(msg_kind kind, int src, long step, size_t n)
{
  msg *m = xbt_malloc0(sizeof(*m));
  m->kind = kind;
  m->src = src;
  m->step = step;
  m->n = n;
  m->data = n ? xbt_malloc(n * sizeof(double)) : NULL;
  return m;
}

void msg_free(void *p)
{
  msg *m = p;
  if (m == NULL)
    return;
  xbt_free(m->data);
  xbt_free(m);
}

void mbox_name(char *buf, size_t len, const char *role, int rank)
{
  snprintf(buf, len, "%s-%d", role, rank);
}

sg_mailbox_t mbox_of(const char *role, int rank)
{
  char name[64];
  mbox_name(name, sizeof(name), role, rank);
  return sg_mailbox_by_name(name);
}

static atomic_llong bytes_sent;

double msg_bytes_sent(void)
{
  return (double)atomic_load(&bytes_sent);
}

void msg_send(sg_mailbox_t to, msg *m, double bytes)
{
  atomic_fetch_add(&bytes_sent, (long long)bytes);
  sg_comm_t c = sg_mailbox_put_init(to, m, (long)bytes);
  sg_comm_detach(c, msg_free);
}

sg_comm_t msg_send_async(sg_mailbox_t to, msg *m, double bytes)
{
  atomic_fetch_add(&bytes_sent, (long long)bytes);
  return sg_mailbox_put_async(to, m, (long)bytes);
}

msg *msg_recv(sg_mailbox_t from)
{
  msg *m = sg_mailbox_get(from);
  xbt_assert(m != NULL, "received a NULL message");
  return m;
}

double msg_bytes(double n, size_t elem_bytes)
{
  return n * (double)elem_bytes + MSG_HEADER_BYTES;
}

/* msg.c - messages and mailboxes shared by every algorithm. */
#include "algorithms/msg.h"

#include "algorithms/run.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <simgrid/host.h>
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

/* One row per source host: the destinations it sent to and the bytes. A plain
 * mutex (not a SimGrid one: no simulated effect) guards the table against actors
 * running on other threads. */
typedef struct traffic_row {
  size_t *dst;
  long long *bytes;
  size_t len, cap;
} traffic_row;

static struct {
  pthread_mutex_t mu;
  const sg_host_t *hosts;
  size_t *index; /* index[i] = i, pointed to by each host's data */
  traffic_row *rows;
  size_t n;
  long long total;
} traffic = {.mu = PTHREAD_MUTEX_INITIALIZER};

void msg_traffic_init(const sg_host_t *hosts, size_t n)
{
  traffic.hosts = hosts;
  traffic.n = n;
  traffic.index = xbt_malloc(n * sizeof(size_t));
  traffic.rows = xbt_malloc0(n * sizeof(traffic_row));
  for (size_t i = 0; i < n; i++) {
    traffic.index[i] = i;
    sg_host_set_data(hosts[i], &traffic.index[i]);
  }
}

static void account(sg_host_t dst, double bytes)
{
  run_trace_send(dst, bytes);
  const size_t *si = sg_host_get_data(sg_host_self()), *di = sg_host_get_data(dst);
  pthread_mutex_lock(&traffic.mu);
  traffic.total += (long long)bytes;
  if (si && di && traffic.rows) {
    traffic_row *r = &traffic.rows[*si];
    size_t k = 0;
    while (k < r->len && r->dst[k] != *di)
      k++;
    if (k == r->len) {
      if (r->len == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 8;
        r->dst = xbt_realloc(r->dst, r->cap * sizeof(size_t));
        r->bytes = xbt_realloc(r->bytes, r->cap * sizeof(long long));
      }
      r->dst[k] = *di;
      r->bytes[k] = 0;
      r->len++;
    }
    r->bytes[k] += (long long)bytes;
  }
  pthread_mutex_unlock(&traffic.mu);
}

static int by_dst(const void *a, const void *b)
{
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

void msg_traffic_foreach(void (*fn)(void *ctx, sg_host_t src, sg_host_t dst, double bytes), void *ctx)
{
  for (size_t i = 0; i < traffic.n; i++) {
    traffic_row *r = &traffic.rows[i];
    /* destinations in index order, whatever the order the sends came in */
    size_t (*pairs)[2] = xbt_malloc((r->len ? r->len : 1) * sizeof(*pairs));
    for (size_t k = 0; k < r->len; k++) {
      pairs[k][0] = r->dst[k];
      pairs[k][1] = k;
    }
    qsort(pairs, r->len, sizeof(*pairs), by_dst);
    for (size_t k = 0; k < r->len; k++)
      fn(ctx, traffic.hosts[i], traffic.hosts[pairs[k][0]], (double)r->bytes[pairs[k][1]]);
    xbt_free(pairs);
  }
}

void msg_traffic_free(void)
{
  for (size_t i = 0; i < traffic.n; i++) {
    xbt_free(traffic.rows[i].dst);
    xbt_free(traffic.rows[i].bytes);
    sg_host_set_data(traffic.hosts[i], NULL);
  }
  xbt_free(traffic.rows);
  xbt_free(traffic.index);
  traffic.rows = NULL;
  traffic.index = NULL;
  traffic.n = 0;
}

double msg_bytes_sent(void)
{
  return (double)traffic.total;
}

static int (*route_filter)(sg_host_t src, sg_host_t dst);

void msg_set_route_filter(int (*ok)(sg_host_t src, sg_host_t dst))
{
  route_filter = ok;
}

int msg_route_ok(sg_host_t dst)
{
  return route_filter == NULL || route_filter(sg_host_self(), dst);
}

void msg_send(sg_mailbox_t to, sg_host_t dst, msg *m, double bytes)
{
  /* [faults]: SimGrid 3.32 aborts on a transfer to a host that is off */
  if (!sg_host_is_on(dst) || !msg_route_ok(dst)) {
    msg_free(m);
    return;
  }
  account(dst, bytes);
  sg_comm_t c = sg_mailbox_put_init(to, m, (long)bytes);
  sg_comm_detach(c, msg_free);
}

sg_comm_t msg_send_async(sg_mailbox_t to, sg_host_t dst, msg *m, double bytes)
{
  account(dst, bytes);
  return sg_mailbox_put_async(to, m, (long)bytes);
}

msg *msg_recv(sg_mailbox_t from)
{
  run_comm_begin();
  /* [faults]: a transfer whose sender died fails on the receiving side too (the blocking
   * get would throw and abort): that message is lost, wait for the next one. */
  while (route_filter != NULL) {
    msg *m = NULL;
    sg_comm_t c = sg_mailbox_get_async(from, (void **)&m);
    if (sg_comm_wait(c) == SG_OK) {
      run_comm_end();
      xbt_assert(m != NULL, "received a NULL message");
      return m;
    }
  }
  msg *m = sg_mailbox_get(from);
  run_comm_end();
  xbt_assert(m != NULL, "received a NULL message");
  return m;
}

double msg_bytes(double n, size_t elem_bytes)
{
  return n * (double)elem_bytes + MSG_HEADER_BYTES;
}

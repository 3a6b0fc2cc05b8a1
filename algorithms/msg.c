/* msg.c - messages and mailboxes shared by every algorithm. */
#include "algorithms/msg.h"

#include "algorithms/account.h"
#include "algorithms/linkload.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

void msg_free(void *p)
{
  msg *m = p;
  if (m != NULL)
    m->free_fn(m);
}

static void msg_bundle_free(msg *m)
{
  msg_bundle *b = (msg_bundle *)m;
  for (size_t i = 0; i < b->n; i++)
    msg_free(b->part[i]);
  xbt_free(b);
}

msg_bundle *msg_bundle_create(int kind, int client, size_t n)
{
  msg_bundle *b = xbt_malloc0(sizeof(*b) + n * sizeof(msg *));
  b->hdr.kind = kind;
  b->hdr.free_fn = msg_bundle_free;
  b->client = client;
  b->n = n;
  return b;
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
  linkload_route **route; /* the pair's route, once a message on it was sent with windows on */
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

static void account(msg *m, sg_host_t dst, double bytes)
{
  m->flow = account_trace_send(dst, bytes);
  m->route = NULL;
  m->sent_at = simgrid_get_clock();
  m->wire_bytes = bytes;
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
        r->route = xbt_realloc(r->route, r->cap * sizeof(linkload_route *));
      }
      r->dst[k] = *di;
      r->bytes[k] = 0;
      r->route[k] = NULL;
      r->len++;
    }
    r->bytes[k] += (long long)bytes;
    if (r->route[k] == NULL && linkload_on())
      r->route[k] = linkload_route_of(sg_host_self(), dst);
    m->route = r->route[k];
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
    xbt_free(traffic.rows[i].route); /* the routes are linkload's */
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

/* Waited sends: each actor's sends not yet reaped, by actor pid. Only the actor
 * touches its own outbox; the mutex guards the table's growth against actors running
 * on other threads (contexts/nthreads). */
typedef struct outbox {
  sg_comm_t *c;
  size_t n, cap;
} outbox;

static struct {
  pthread_mutex_t mu;
  int on;
  outbox **by_pid;
  size_t n;
} outboxes = {.mu = PTHREAD_MUTEX_INITIALIZER};

void msg_set_waited_sends(int on)
{
  outboxes.on = on;
}

/* The calling actor's outbox, created on first use. */
static outbox *own_outbox(void)
{
  size_t pid = (size_t)sg_actor_self_get_pid();
  pthread_mutex_lock(&outboxes.mu);
  if (pid >= outboxes.n) {
    size_t n = outboxes.n ? outboxes.n : 64;
    while (n <= pid)
      n *= 2;
    outboxes.by_pid = xbt_realloc(outboxes.by_pid, n * sizeof(outbox *));
    for (size_t i = outboxes.n; i < n; i++)
      outboxes.by_pid[i] = NULL;
    outboxes.n = n;
  }
  if (outboxes.by_pid[pid] == NULL)
    outboxes.by_pid[pid] = xbt_malloc0(sizeof(outbox));
  outbox *o = outboxes.by_pid[pid];
  pthread_mutex_unlock(&outboxes.mu);
  return o;
}

/* Waits until the n comms of `want` are done; the outbox's sends that finish first are
 * reaped. sg_comm_wait_any answers with the first finished comm in array order, so the
 * awaited ones come first. Never sg_comm_test: in SimGrid 3.32 a comm completed through
 * a test stays in its actor's activity list, which every execution then scans. */
static void wait_reaping(outbox *o, sg_comm_t *want, size_t n)
{
  /* a[0, left): awaited, not done; a[left, len): sends not yet reaped */
  size_t left = n, len = n + o->n;
  sg_comm_t *a = xbt_malloc(len * sizeof(*a));
  memcpy(a, want, n * sizeof(*a));
  memcpy(a + n, o->c, o->n * sizeof(*a));
  while (left > 0) {
    ssize_t got = sg_comm_wait_any(a, len);
    xbt_assert(got >= 0, "sg_comm_wait_any without a timeout returned %zd", got);
    size_t i = (size_t)got;
    if (i < left) {
      a[i] = a[left - 1];
      a[left - 1] = a[len - 1];
      left--;
    } else {
      a[i] = a[len - 1];
    }
    len--;
  }
  memcpy(o->c, a, len * sizeof(*a));
  o->n = len;
  xbt_free(a);
}

void msg_wait_all(sg_comm_t *comms, size_t n)
{
  account_comm_begin();
  outbox *o = outboxes.on ? own_outbox() : NULL;
  if (o == NULL || o->n == 0)
    sg_comm_wait_all(comms, n);
  else
    wait_reaping(o, comms, n);
  account_comm_end();
}

void msg_flush(void)
{
  if (!outboxes.on)
    return;
  outbox *o = own_outbox();
  sg_comm_wait_all(o->c, o->n);
  xbt_free(o->c);
  *o = (outbox){0};
}

/* msg_send; waited: whether it goes through the sender's outbox (waited sends on). */
static void put(sg_mailbox_t to, sg_host_t dst, msg *m, double bytes, int waited)
{
  /* [faults]: SimGrid 3.32 aborts on a transfer to a host that is off */
  if (!sg_host_is_on(dst) || !msg_route_ok(dst)) {
    msg_free(m);
    return;
  }
  account(m, dst, bytes);
  if (waited) { /* the scenario refuses waited sends under [faults]: nothing fails */
    outbox *o = own_outbox();
    if (o->n == o->cap) {
      o->cap = o->cap ? 2 * o->cap : 16;
      o->c = xbt_realloc(o->c, o->cap * sizeof(sg_comm_t));
    }
    o->c[o->n++] = sg_mailbox_put_async(to, m, (long)bytes);
    return;
  }
  sg_comm_t c = sg_mailbox_put_init(to, m, (long)bytes);
  sg_comm_detach(c, msg_free);
}

void msg_send(sg_mailbox_t to, sg_host_t dst, msg *m, double bytes) { put(to, dst, m, bytes, outboxes.on); }

void msg_send_detached(sg_mailbox_t to, sg_host_t dst, msg *m, double bytes) { put(to, dst, m, bytes, 0); }

sg_comm_t msg_send_async(sg_mailbox_t to, sg_host_t dst, msg *m, double bytes)
{
  account(m, dst, bytes);
  return sg_mailbox_put_async(to, m, (long)bytes);
}

msg *msg_recv(sg_mailbox_t from)
{
  account_comm_begin();
  /* [faults]: a transfer whose sender died fails on the receiving side too (the blocking
   * get would throw and abort): that message is lost, wait for the next one. */
  while (route_filter != NULL) {
    msg *m = NULL;
    sg_comm_t c = sg_mailbox_get_async(from, (void **)&m);
    if (sg_comm_wait(c) == SG_OK) {
      account_comm_end();
      xbt_assert(m != NULL, "received a NULL message");
      msg_received(m);
      return m;
    }
  }
  msg *m = NULL;
  outbox *o = outboxes.on ? own_outbox() : NULL;
  if (o && o->n > 0) {
    sg_comm_t c = sg_mailbox_get_async(from, (void **)&m);
    wait_reaping(o, &c, 1);
  } else {
    m = sg_mailbox_get(from);
  }
  account_comm_end();
  xbt_assert(m != NULL, "received a NULL message");
  msg_received(m);
  return m;
}

void msg_received(const msg *m)
{
  if (m == NULL)
    return;
  account_trace_recv(m->flow);
  if (m->route)
    linkload_add(m->route, m->wire_bytes, m->sent_at, simgrid_get_clock());
}

double msg_bytes(double n, size_t elem_bytes)
{
  return n * (double)elem_bytes + MSG_HEADER_BYTES;
}

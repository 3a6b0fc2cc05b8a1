#ifndef ALGORITHMS_MSG_H
#define ALGORITHMS_MSG_H
/* msg.h - the messages actors exchange, and the mailbox helpers.
 * The sender creates a message and putting it in a mailbox hands it over: the
 * receiver frees it with msg_free, the sender never touches it after the put. */

#include <stddef.h>
#include <simgrid/comm.h>
#include <simgrid/mailbox.h>
#include <xbt/asserts.h>

/* Bytes of framing every message carries on the wire (kind, sender, sequence numbers,
 * length): a fixed, documented allowance, not sizeof of any struct. */
#define MSG_HEADER_BYTES 64

/* Every message starts with a msg: the transport below (send, receive, drop, account)
 * reads nothing else. A protocol declares its message kinds and payloads in its own
 * header, as a struct whose first member is a msg, and its constructor sets free_fn.
 * Each protocol numbers its kinds from a multiple of 100 of its own (modelpar_msg.h 100,
 * pipeline_msg.h 200, consensus_msg.h 300, coll_msg.h 400, ps_msg.h 500,
 * sandblaster_msg.h 600), so that a message that reaches another protocol's mailbox
 * fails that protocol's checked down-cast instead of passing for one of its own. */
typedef struct msg {
  int kind;                       /* the protocol's own kind */
  void (*free_fn)(struct msg *m); /* frees the whole message */
  unsigned long flow;             /* --trace: the send's id in the timeline (set by the send) */
  /* set by the send, for the links' windows (linkload.h), read when it is taken: */
  const struct linkload_route *route; /* its route, or NULL (windows off, or a host outside the run) */
  double sent_at, wire_bytes;     /* when it was sent (simulated s), its simulated size */
} msg;

/* The checked down-cast's check: m if it is of `kind`; otherwise a broken protocol, and
 * it aborts with `expected` (who received it and what it wanted, e.g. "consensus agent
 * expected an iterate") and both kinds. */
static inline msg *msg_check(msg *m, int kind, const char *expected)
{
  xbt_assert(m->kind == kind, "%s, got message kind %d (not %d)", expected, m->kind, kind);
  return m;
}

/* Defines a protocol's checked down-cast `static inline TYPE *NAME(msg *m)`: m as a
 * TYPE if it is of KIND, an abort saying EXPECTED (as msg_check) otherwise. A protocol
 * whose one payload type carries several kinds calls msg_check with the kind instead. */
#define MSG_DOWNCAST(TYPE, NAME, KIND, EXPECTED)                                                              \
  static inline TYPE *NAME(msg *m) { return (TYPE *)msg_check(m, (int)(KIND), EXPECTED); }

/* Frees m through its free_fn; msg_free(NULL) is a no-op. Takes void * so that it can
 * serve as a detached communication's clean-up function. */
void msg_free(void *m);

/* n messages travelling as one, part[i] in order (a parameter-server bank's exchanges with
 * its shards' clients: ps_bank.h, sandblaster.c's Bank), sized by the sender as the sum
 * of the parts'. The bundle owns its parts: msg_free frees them with it. */
typedef struct msg_bundle {
  msg hdr;
  int client;   /* the sender's rank, where the protocol needs it; else 0 */
  size_t n;     /* parts */
  msg *part[];
} msg_bundle;

/* A bundle of `kind` with room for n parts, set to NULL. Never NULL. */
msg_bundle *msg_bundle_create(int kind, int client, size_t n);

/* Writes the mailbox name of (role, rank), e.g. "ps-3", into buf. */
void mbox_name(char *buf, size_t len, const char *role, int rank);
/* The mailbox of (role, rank). */
sg_mailbox_t mbox_of(const char *role, int rank);

/* Fire and forget: the message travels as `bytes` simulated bytes to the actor on
 * host `dst` that listens on `to`, and is freed by the receiver. A message to a host
 * that is off, or across a failed link ([faults]), is dropped and freed here. */
void msg_send(sg_mailbox_t to, sg_host_t dst, msg *m, double bytes);
/* As msg_send, but always a detached put, also with waited sends: for a message its
 * receiver may never take (SimGrid frees it with the run), which an outbox would wait
 * for forever. */
void msg_send_detached(sg_mailbox_t to, sg_host_t dst, msg *m, double bytes);
/* [faults]: ok(src, dst) says whether a message from src to dst can be sent now (no
 * failed link on its route); NULL (the default) lets everything through. */
void msg_set_route_filter(int (*ok)(sg_host_t src, sg_host_t dst));
/* Whether a message from the calling actor's host to dst can be sent now. */
int msg_route_ok(sg_host_t dst);

/* How msg_send sends (downpour.sends). Off (the default): a detached put, which SimGrid
 * 3.32 keeps in one global list that every completion scans, so a run with N messages
 * in flight pays O(N) per message. On: an asynchronous put kept in the sending actor's
 * outbox and reaped with sg_comm_wait_any where the actor blocks anyway (msg_recv,
 * msg_wait_all), so that the actor's own activity list stays short; each actor that
 * sends must call msg_flush before it returns. Call before the simulation starts. */
void msg_set_waited_sends(int on);
/* sg_comm_wait_all of the n comms, accounted as communication time (account.h), reaping
 * the caller's finished sends meanwhile (waited sends). */
void msg_wait_all(sg_comm_t *comms, size_t n);
/* Waited sends: blocks until every send of the calling actor is delivered and frees
 * its outbox. A no-op otherwise. */
void msg_flush(void);

/* Asynchronous send to wait for with sg_comm_wait / wait_all. */
sg_comm_t msg_send_async(sg_mailbox_t to, sg_host_t dst, msg *m, double bytes);
/* A message just taken from a mailbox by the calling actor: the end of its send's arrow in
 * the timeline (dtsim run --trace), and of its time in flight over its route's links
 * (linkload.h). msg_recv calls it; a receiver that takes messages with
 * sg_mailbox_get_async calls it once the get is done. NULL is ignored. */
void msg_received(const msg *m);
/* Blocking receive; the caller owns (and frees) the message. Under [faults] (a route
 * filter is set) a transfer that fails because its sender died is skipped. */
msg *msg_recv(sg_mailbox_t from);

/* Traffic accounting: every send adds its bytes to the (source host, destination
 * host) pair. Sums of integers do not depend on the order in which actors on
 * several threads add them, so the totals are deterministic. msg_traffic_init
 * numbers the hosts (it sets their host data) and must precede any send; sends
 * between hosts outside the list are not counted. With linkload_start called before the
 * run, each pair's route is kept and every message taken adds its bytes to its links'
 * windows (linkload.h). */
void msg_traffic_init(const sg_host_t *hosts, size_t n);
/* Calls fn(ctx, src, dst, bytes) for every pair that exchanged bytes, by source then
 * destination index; then msg_traffic_free releases the table. */
void msg_traffic_foreach(void (*fn)(void *ctx, sg_host_t src, sg_host_t dst, double bytes), void *ctx);
void msg_traffic_free(void);
/* Total simulated bytes of every message sent so far. */
double msg_bytes_sent(void);

/* Simulated bytes of a message that carries n elements of elem_bytes each. */
double msg_bytes(double n, size_t elem_bytes);

#endif

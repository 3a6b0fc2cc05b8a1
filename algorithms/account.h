#ifndef ALGORITHMS_ACCOUNT_H
#define ALGORITHMS_ACCOUNT_H
/* account.h - every actor's simulated executions and waits, timed and recorded: the
 * time breakdown per actor (compute, communication, exposed communication) and, on
 * request, the timeline of each execution, wait and send (dtsim run --trace). */

#include <stddef.h>
#include <simgrid/forward.h>

/* Call account_setup once after simgrid_init and before any actor runs, and
 * account_teardown after simgrid_run: they hold the lock executions are created under. */
void account_setup(void);
void account_teardown(void);

/* What watches a run's pace from outside the simulation (sim/'s progress meter): called
 * with the simulated time, from an actor, once in ACCOUNT_TICK_EVERY of the executions and
 * waits every actor starts or ends; it must neither block nor touch the simulation, and may
 * run on any of SimGrid's threads. */
typedef void (*account_tick_fn)(void *ctx, double now);
#define ACCOUNT_TICK_EVERY 64
/* Sets the tick (NULL: none); account_teardown clears it. */
void account_set_tick(account_tick_fn fn, void *ctx);

/* Runs an execution of `amount` flops on the calling actor's host, blocking, and records
 * its time as the actor's compute. */
void account_exec(double amount);
/* Starts an execution of `amount` flops and returns it; its time (amount / host speed,
 * exact when it has a core to itself) is recorded at once. Wait with account_exec_wait. */
sg_exec_t account_exec_async(double amount);

/* ---- time breakdown: compute, communication and exposed communication per actor ----
 * Every actor is accounted under its role, its name without a trailing "-<rank>"
 * (mbox_name's names: "replica-3" is a "replica", "dp-comm-0" a "dp-comm"):
 *  - compute_s: seconds of its executions (compute_execute, compute_busy, compute_execute_async);
 *  - comm_s: seconds it was blocked waiting for communication: msg_recv, account_comm_wait,
 *    msg_wait_all, or any other blocking call bracketed by account_comm_begin/_end
 *    (a server's idle wait for requests counts: it is blocked on the network);
 *  - exposed_comm_s: the part of comm_s during which no execution ran on its host, i.e.
 *    communication that compute did not hide (another actor on the same host computing,
 *    as DDP's communicator beside its replica, or the actor's own asynchronous execution,
 *    hides it).
 * To adopt it in a new algorithm: name actors with mbox_name, compute with compute_execute or
 * compute_execute_async + account_exec_wait, and wait with msg_recv / account_comm_wait /
 * msg_wait_all instead of sg_comm_wait / sg_comm_wait_all. An asynchronous
 * execution is taken to end flops / host speed after its start (exact when it has a
 * core to itself, as every execution here has), later by what collectives' holds on its
 * host take from it (account_hold_begin). Thread-safe under parallel contexts;
 * sums do not depend on thread order. Needs account_setup and host numbering
 * (msg_traffic_init) before actors run. */
void account_comm_begin(void);
void account_comm_end(void);
/* The calling actor's last wait, just ended, spent `seconds` of its time idle: waiting for a
 * peer to produce what it waits for (a pipeline stage before the previous one has sent its
 * activations: the bubble), not for data in flight. Those seconds move from comm_s (and
 * exposed_comm_s, as far as it holds them) to idle_s. At most the time the wait blocked. */
void account_wait_idle(double seconds);
/* sg_comm_wait, with the blocked time accounted (msg_wait_all waits for several). */
void account_comm_wait(sg_comm_t comm);
/* sg_exec_wait for an execution from compute_execute_async (its time is already counted). */
void account_exec_wait(sg_exec_t exec);

/* A collective's hold on the calling actor's host (collectives.c, coll_opts.hold_sms): an
 * execution bounded at `share` of the host's speed, started, which takes that share from
 * the executions beside it (SimGrid's CPU sharing) until account_hold_end cancels it. It
 * is neither compute nor communication in the breakdown; the asynchronous executions it
 * slows are timed with it (their predicted ends move while it holds). NULL for share <= 0,
 * which account_hold_end ignores. Its amount, a day at the host's full speed, is never
 * reached by a hold that ends. */
#define ACCOUNT_HOLD_SECONDS 86400.0
sg_exec_t account_hold_begin(double share);
void account_hold_end(sg_exec_t hold);

/* ---- timeline (dtsim run --trace): the same events, kept one by one ----
 * Off by default; account_trace_enable(1) before the run keeps every execution and wait of
 * every accounted actor and every message sent (msg.c calls account_trace_send), for a
 * Chrome trace. Memory grows with the events: meant for short runs. */
typedef enum account_event_kind {
  ACCOUNT_COMPUTE, /* an execution: start, duration */
  ACCOUNT_WAIT,    /* blocked on communication: start, duration */
  ACCOUNT_SEND,    /* a message handed to the network: start, bytes, destination host, flow */
  ACCOUNT_RECV     /* that message taken by its receiver: start, flow */
} account_event_kind;

#define ACCOUNT_LABEL_LEN 64

typedef struct account_event {
  account_event_kind kind;
  size_t actor;       /* index into account_breakdown's records */
  double start, dur;  /* simulated s (dur 0 for a send or a receipt) */
  double bytes;       /* sends */
  const char *dst;    /* sends: the destination host's name (SimGrid's, valid during the run) */
  unsigned long flow; /* sends and receipts: the message's id (account_trace_send), 0 none */
  char label[ACCOUNT_LABEL_LEN]; /* what the actor was doing (account_label_push), "" none */
} account_event;

void account_trace_enable(int on);
/* Records a send of `bytes` by the calling actor to host dst and returns the message's
 * flow id, unique in the run and the same whatever the threads' order (the sender's pid
 * and its own count of events), for account_trace_recv; 0 unless enabled. */
unsigned long account_trace_send(sg_host_t dst, double bytes);
/* Records that the calling actor has taken the message of that flow id (no-op for 0). */
void account_trace_recv(unsigned long flow);
/* Names what the calling actor does from now on, for the timeline's events ("forward mb 3",
 * "bucket 2", "allreduce ring"); pushed names nest, shown joined by ": ", until popped.
 * At most 4 deep (deeper ones are ignored); names are cut at ACCOUNT_LABEL_LEN - 1
 * characters in all. No-ops, formatting nothing, unless tracing is enabled: the algorithms
 * call them freely and nothing but trace.json depends on them. */
void account_label_push(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void account_label_pop(void);
/* After account_breakdown: the events sorted by start, actor and order within the actor;
 * the array belongs to run.c (freed by account_teardown). */
size_t account_trace(const account_event **out);

/* One actor's breakdown, valid until account_teardown. */
typedef struct account_actor {
  char *name;            /* SimGrid actor name, e.g. "replica-3" */
  char *role;            /* name without its "-<rank>", e.g. "replica" */
  char *host;            /* its host's name */
  double compute_s, comm_s, exposed_comm_s;
  double idle_s;         /* waits declared idle (account_wait_idle), out of comm_s */
  int declares_idle;     /* it has declared some (account_wait_idle) */
} account_actor;

/* A host's time by phase, the intervals its executions and its actors' waits cut the run
 * into: computing (an execution runs), communicating (no execution; a collective's hold runs, or
 * an actor waits for communication) or idle (none of these; a wait an actor declares idle, as a
 * pipeline's bubble, moves from comm_s to idle_s). comm_held_load_s is the integral of the load
 * the holds put on the host (their shares of its speed, at most 1) over comm_held_s: what an
 * energy model of host load needs (sim/energy.c). */
typedef struct account_phases {
  double compute_s, comm_s, comm_held_s, comm_held_load_s, idle_s;
} account_phases;
/* After account_breakdown: the phases of a host the run numbered (msg_traffic_init), up to
 * account_breakdown's end_time from the host's first event (the time before it is idle too, but
 * not counted here); zeros for a host no actor ran on. */
void account_host_phases(sg_host_t host, account_phases *out);

/* After simgrid_run: closes every interval still open at end_time (actors blocked when
 * the run ended) and returns the number of accounted actors, their records in *out in
 * creation (pid) order. The array belongs to run.c (freed by account_teardown). */
size_t account_breakdown(double end_time, const account_actor **out);

#endif

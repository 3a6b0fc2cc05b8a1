/* account.c - every actor's simulated executions and waits, timed and recorded per
 * actor and host (the breakdown), and kept one by one for the timeline on request. */
#include "algorithms/account.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <simgrid/mutex.h>
#include <xbt/config.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

/* SimGrid 3.32's Exec::init() (src/s4u/s4u_Exec.cpp) registers every new execution
 * in the global Host::on_state_change signal from the calling actor's thread, without
 * a lock: with parallel contexts (--cfg=contexts/nthreads:N) two actors creating an
 * execution at once corrupt that map, and the engine crashes later in ExecImpl::post.
 * Creating executions under one SimGrid mutex serialises exactly that step (a mutex
 * takes no simulated time, and its grant order is deterministic). On one thread (the
 * default) there is nothing to serialise, and the lock's two simcalls per execution were
 * 40% of the CPU time of a run made of executions (PTD-P's 76.1B row with its collectives
 * removed: 37.8 s with the lock, 22.4 s without): it is taken only with parallel contexts. */
static sg_mutex_t exec_init_lock;

/* ---- breakdown state ----
 * Per host (placement index from msg_traffic_init's host data): the executions running
 * on it, the predicted ends of its asynchronous ones, and its actors. Time advances per
 * host in order: every event first settles the interval since the host's last event
 * (with the state that held during it), so each sum adds the same intervals whatever
 * order actors of one scheduling round (same simulated time) run in. A plain mutex (no
 * simulated effect) guards it all against actors on other threads. */
/* A running asynchronous execution: its predicted end, the actor that started it (pid) and
 * its timeline event (an index into bd.ev, SIZE_MAX when not tracing). */
typedef struct bd_pending {
  double end;
  size_t owner, ev;
} bd_pending;

typedef struct bd_host {
  double last;            /* time up to which its actors are settled */
  int n_exec;             /* executions running on the host */
  bd_pending *ends;       /* running asynchronous executions */
  size_t n_ends, cap_ends;
  int n_holds;            /* collectives' holds on the host now (account_hold_begin) */
  double share;           /* the share of its speed each of them holds */
  size_t *actors;         /* indices into bd.actors (by pid) */
  size_t n_actors, cap_actors;
  account_phases ph;      /* the host's time by phase (account_host_phases) */
} bd_host;

typedef struct bd_actor {
  account_actor t;
  bd_host *host;
  int blocked;            /* inside a communication wait */
  double wait_start;      /* when the current wait began (trace, account_wait_idle) */
  long seq;               /* trace: events recorded so far */
} bd_actor;

/* An actor's names for what it does (account_label_push), kept apart from its breakdown
 * record so that naming creates no record: the breakdown is the same with --trace. */
#define ACCOUNT_LABEL_DEPTH 4
typedef struct bd_label {
  char text[ACCOUNT_LABEL_LEN];          /* the pushed names, joined by ": " */
  size_t end[ACCOUNT_LABEL_DEPTH];       /* where each pushed name ends in text */
  int depth;                             /* names pushed (beyond ACCOUNT_LABEL_DEPTH: counted only) */
} bd_label;

/* A timeline event as recorded: by actor pid and the actor's own sequence number, which
 * make the sorted order independent of the threads' interleaving. */
typedef struct bd_event_rec {
  account_event_kind kind;
  size_t pid;
  long seq;
  double start, dur, bytes;
  const char *dst;
  unsigned long flow;
  char label[ACCOUNT_LABEL_LEN];
} bd_event_rec;

static struct {
  pthread_mutex_t mu;
  bd_actor **actors;      /* by pid; NULL for actors that never recorded */
  size_t n_actors;
  bd_host **hosts;        /* by placement index */
  size_t n_hosts;
  bd_host **extra;        /* private states of actors on unnumbered hosts */
  size_t n_extra;
  account_actor *out;    /* account_breakdown's result */
  int trace_on;
  bd_event_rec *ev;       /* the timeline, in recording order */
  size_t n_ev, cap_ev;
  account_event *trace; /* run_trace's result */
  bd_label **labels;      /* by pid, when tracing */
  size_t n_labels;
  account_tick_fn tick;   /* account_set_tick's */
  void *tick_ctx;
  unsigned long events;   /* executions and waits started or ended, for the tick */
} bd = {.mu = PTHREAD_MUTEX_INITIALIZER};

void account_set_tick(account_tick_fn fn, void *ctx)
{
  pthread_mutex_lock(&bd.mu);
  bd.tick = fn;
  bd.tick_ctx = ctx;
  bd.events = 0;
  pthread_mutex_unlock(&bd.mu);
}

/* Counts one event (bd.mu held); the tick to call outside the lock when it is due, or NULL. */
static account_tick_fn tick_due(void **ctx)
{
  *ctx = bd.tick_ctx;
  return bd.tick && ++bd.events % ACCOUNT_TICK_EVERY == 0 ? bd.tick : NULL;
}

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
  if (need <= *cap)
    return p;
  size_t c = *cap ? *cap : 8;
  while (c < need)
    c *= 2;
  p = xbt_realloc(p, c * elem);
  memset((char *)p + *cap * elem, 0, (c - *cap) * elem);
  *cap = c;
  return p;
}

/* The host's phase over the interval dt just settled: computing while an execution runs, else
 * communicating while a collective holds it (at the load its holds put on it) or an actor of
 * it waits for a message, else idle. */
static void settle_phase(bd_host *h, double dt, int blocked)
{
  if (h->n_exec > 0)
    h->ph.compute_s += dt;
  else if (h->n_holds > 0) {
    double load = h->n_holds * h->share;
    h->ph.comm_held_s += dt;
    h->ph.comm_held_load_s += dt * (load < 1 ? load : 1);
  } else if (blocked)
    h->ph.comm_s += dt;
  else
    h->ph.idle_s += dt;
}

static void settle(bd_host *h, double t)
{
  double dt = t - h->last;
  if (dt <= 0)
    return;
  int blocked = 0;
  for (size_t i = 0; i < h->n_actors; i++) {
    bd_actor *a = bd.actors[h->actors[i]];
    if (a->blocked) {
      blocked = 1;
      a->t.comm_s += dt;
      if (h->n_exec == 0)
        a->t.exposed_comm_s += dt;
    }
  }
  settle_phase(h, dt, blocked);
  h->last = t;
}

/* The share of its host's speed an execution gets beside the host's holds: SimGrid's
 * max-min sharing gives each hold its bound while that is below an equal split of the
 * host, and the execution the rest (every execution here has its host to itself but for
 * holds). */
static double exec_rate(const bd_host *h)
{
  if (h->n_holds == 0)
    return 1;
  double k = h->n_holds;
  return h->share < 1 / (k + 1) ? 1 - k * h->share : 1 / (k + 1);
}

/* A hold begins (delta +1, of `share`) or ends (-1) on h at `now`, h settled up to now: the
 * running asynchronous executions' predicted ends move with the speed they get from now on,
 * and their actors' compute time and timeline events with them. Call with bd.mu held. */
static void rehold(bd_host *h, double now, int delta, double share)
{
  double r0 = exec_rate(h);
  h->n_holds += delta;
  if (delta > 0)
    h->share = share;
  double r1 = exec_rate(h);
  if (r1 == r0)
    return;
  for (size_t i = 0; i < h->n_ends; i++) {
    bd_pending *x = &h->ends[i];
    double end = now + (x->end - now) * r0 / r1;
    bd.actors[x->owner]->t.compute_s += end - x->end;
    if (x->ev != SIZE_MAX)
      bd.ev[x->ev].dur += end - x->end;
    x->end = end;
  }
}

/* Settles h up to t, ending on the way the asynchronous executions predicted to end. */
static void advance(bd_host *h, double t)
{
  for (;;) {
    size_t k = h->n_ends;
    for (size_t i = 0; i < h->n_ends; i++)
      if (h->ends[i].end <= t && (k == h->n_ends || h->ends[i].end < h->ends[k].end))
        k = i;
    if (k == h->n_ends)
      break;
    settle(h, h->ends[k].end);
    h->n_exec--;
    h->ends[k] = h->ends[--h->n_ends];
  }
  settle(h, t);
}

static bd_host *host_state(sg_host_t host, double now)
{
  const size_t *ix = sg_host_get_data(host);
  bd_host **slot;
  if (ix == NULL) {
    size_t cap = bd.n_extra;
    bd.extra = grow(bd.extra, &cap, bd.n_extra + 1, sizeof(*bd.extra));
    slot = &bd.extra[bd.n_extra++];
  } else {
    size_t cap = bd.n_hosts;
    bd.hosts = grow(bd.hosts, &cap, *ix + 1, sizeof(*bd.hosts));
    bd.n_hosts = cap;
    slot = &bd.hosts[*ix];
  }
  if (*slot == NULL) {
    *slot = xbt_malloc0(sizeof(**slot));
    (*slot)->last = now;
  }
  return *slot;
}

/* The calling actor's record, created on its first event. Call with bd.mu held. */
static bd_actor *self_actor(double now)
{
  size_t pid = (size_t)sg_actor_self_get_pid();
  if (pid >= bd.n_actors) {
    size_t cap = bd.n_actors;
    bd.actors = grow(bd.actors, &cap, pid + 1, sizeof(*bd.actors));
    bd.n_actors = cap;
  }
  bd_actor *a = bd.actors[pid];
  if (a != NULL)
    return a;
  a = bd.actors[pid] = xbt_malloc0(sizeof(*a));
  sg_host_t host = sg_host_self();
  a->t.name = xbt_strdup(sg_actor_self_get_name());
  a->t.role = xbt_strdup(a->t.name);
  size_t n = strlen(a->t.role), k = n;
  while (k > 0 && a->t.role[k - 1] >= '0' && a->t.role[k - 1] <= '9')
    k--;
  if (k > 1 && k < n && a->t.role[k - 1] == '-')
    a->t.role[k - 1] = '\0';
  a->t.host = xbt_strdup(sg_host_get_name(host));
  a->host = host_state(host, now);
  advance(a->host, now);
  size_t cap = a->host->cap_actors;
  a->host->actors = grow(a->host->actors, &cap, a->host->n_actors + 1, sizeof(size_t));
  a->host->cap_actors = cap;
  a->host->actors[a->host->n_actors++] = pid;
  return a;
}

/* Appends a timeline event of actor a (pid) when tracing, named by its label now.
 * Returns the event's place in a's own sequence. Call with bd.mu held. */
static long trace_add(bd_actor *a, size_t pid, account_event_kind kind, double start, double dur, double bytes,
                      const char *dst)
{
  if (!bd.trace_on)
    return 0;
  bd.ev = grow(bd.ev, &bd.cap_ev, bd.n_ev + 1, sizeof(*bd.ev));
  bd_event_rec *e = &bd.ev[bd.n_ev++];
  *e = (bd_event_rec){kind, pid, a->seq++, start, dur, bytes, dst, 0, ""};
  if (pid < bd.n_labels && bd.labels[pid])
    memcpy(e->label, bd.labels[pid]->text, sizeof(e->label));
  return e->seq;
}

/* The calling actor starts (delta = +1) or ends (-1) an execution or a wait. */
static void bd_event(int exec_delta, int wait_delta)
{
  double now = simgrid_get_clock();
  pthread_mutex_lock(&bd.mu);
  bd_actor *a = self_actor(now);
  advance(a->host, now);
  a->host->n_exec += exec_delta;
  a->blocked += wait_delta;
  if (wait_delta > 0)
    a->wait_start = now;
  else if (wait_delta < 0 && now > a->wait_start) /* a wait that did not block is no event */
    trace_add(a, (size_t)sg_actor_self_get_pid(), ACCOUNT_WAIT, a->wait_start, now - a->wait_start, 0, NULL);
  void *ctx;
  account_tick_fn tick = tick_due(&ctx);
  pthread_mutex_unlock(&bd.mu);
  if (tick)
    tick(ctx, now);
}

void account_setup(void)
{
  exec_init_lock = sg_cfg_get_int("contexts/nthreads") != 1 ? sg_mutex_init() : NULL;
}

/* sg_actor_exec_init under exec_init_lock when there is one. */
static sg_exec_t exec_init(double flops)
{
  if (exec_init_lock == NULL)
    return sg_actor_exec_init(flops);
  sg_mutex_lock(exec_init_lock);
  sg_exec_t e = sg_actor_exec_init(flops);
  sg_mutex_unlock(exec_init_lock);
  return e;
}

/* sg_exec_start under exec_init_lock when there is one: SimGrid 3.32's host energy plugin
 * updates the host's joules from the starting actor's thread (Exec::on_start), which two actors
 * of one host (a replica and its DDP communicator) would do at once with parallel contexts. */
static void exec_start(sg_exec_t e)
{
  if (exec_init_lock == NULL) {
    sg_exec_start(e);
    return;
  }
  sg_mutex_lock(exec_init_lock);
  sg_exec_start(e);
  sg_mutex_unlock(exec_init_lock);
}

void account_teardown(void)
{
  if (exec_init_lock)
    sg_mutex_destroy(exec_init_lock);
  exec_init_lock = NULL;
  for (size_t i = 0; i < bd.n_actors; i++)
    if (bd.actors[i]) {
      xbt_free(bd.actors[i]->t.name);
      xbt_free(bd.actors[i]->t.role);
      xbt_free(bd.actors[i]->t.host);
      xbt_free(bd.actors[i]);
    }
  for (size_t i = 0; i < bd.n_hosts + bd.n_extra; i++) {
    bd_host *h = i < bd.n_hosts ? bd.hosts[i] : bd.extra[i - bd.n_hosts];
    if (h) {
      xbt_free(h->ends);
      xbt_free(h->actors);
      xbt_free(h);
    }
  }
  for (size_t i = 0; i < bd.n_labels; i++)
    xbt_free(bd.labels[i]);
  xbt_free(bd.labels);
  bd.labels = NULL;
  bd.n_labels = 0;
  xbt_free(bd.actors);
  xbt_free(bd.hosts);
  xbt_free(bd.extra);
  xbt_free(bd.out);
  xbt_free(bd.ev);
  xbt_free(bd.trace);
  bd.ev = NULL;
  bd.trace = NULL;
  bd.n_ev = bd.cap_ev = 0;
  bd.trace_on = 0;
  bd.actors = NULL;
  bd.hosts = bd.extra = NULL;
  bd.out = NULL;
  bd.n_actors = bd.n_hosts = bd.n_extra = 0;
  bd.tick = NULL;
  bd.tick_ctx = NULL;
  bd.events = 0;
}

void account_exec(double flops)
{
  sg_exec_t e = exec_init(flops);
  double t0 = simgrid_get_clock();
  bd_event(+1, 0);
  exec_start(e);
  sg_exec_wait(e);
  bd_event(-1, 0);
  double t1 = simgrid_get_clock();
  size_t pid = (size_t)sg_actor_self_get_pid();
  pthread_mutex_lock(&bd.mu);
  bd.actors[pid]->t.compute_s += t1 - t0;
  trace_add(bd.actors[pid], pid, ACCOUNT_COMPUTE, t0, t1 - t0, 0, NULL);
  pthread_mutex_unlock(&bd.mu);
}

sg_exec_t account_exec_async(double amount)
{
  sg_exec_t e = exec_init(amount);
  double now = simgrid_get_clock(), dur = amount / sg_host_get_speed(sg_host_self());
  pthread_mutex_lock(&bd.mu);
  bd_actor *a = self_actor(now);
  bd_host *h = a->host;
  advance(h, now);
  h->n_exec++;
  h->ends = grow(h->ends, &h->cap_ends, h->n_ends + 1, sizeof(*h->ends));
  double end = now + dur / exec_rate(h); /* dur / 1 is dur exactly */
  size_t pid = (size_t)sg_actor_self_get_pid();
  h->ends[h->n_ends++] = (bd_pending){end, pid, bd.trace_on ? bd.n_ev : SIZE_MAX};
  a->t.compute_s += end - now;
  trace_add(a, pid, ACCOUNT_COMPUTE, now, end - now, 0, NULL);
  void *ctx;
  account_tick_fn tick = tick_due(&ctx);
  pthread_mutex_unlock(&bd.mu);
  if (tick)
    tick(ctx, now);
  exec_start(e);
  return e;
}

sg_exec_t account_hold_begin(double share)
{
  if (!(share > 0))
    return NULL;
  double now = simgrid_get_clock(), speed = sg_host_get_speed(sg_host_self());
  sg_exec_t e = exec_init(ACCOUNT_HOLD_SECONDS * speed);
  sg_exec_set_name(e, "held");
  sg_exec_set_bound(e, share * speed);
  pthread_mutex_lock(&bd.mu);
  bd_actor *a = self_actor(now);
  advance(a->host, now);
  rehold(a->host, now, +1, share);
  pthread_mutex_unlock(&bd.mu);
  exec_start(e);
  return e;
}

void account_hold_end(sg_exec_t hold)
{
  if (hold == NULL)
    return;
  double now = simgrid_get_clock();
  pthread_mutex_lock(&bd.mu);
  bd_actor *a = self_actor(now);
  advance(a->host, now);
  rehold(a->host, now, -1, 0);
  pthread_mutex_unlock(&bd.mu);
  sg_exec_cancel(hold); /* and drops our reference */
}

void account_exec_wait(sg_exec_t exec)
{
  sg_exec_wait(exec);
}

void account_comm_begin(void)
{
  bd_event(0, +1);
}

void account_comm_end(void)
{
  bd_event(0, -1);
}

void account_wait_idle(double seconds)
{
  double now = simgrid_get_clock();
  pthread_mutex_lock(&bd.mu);
  bd_actor *a = self_actor(now);
  advance(a->host, now);
  a->t.declares_idle = 1;
  double s = seconds > 0 ? (seconds < now - a->wait_start ? seconds : now - a->wait_start) : 0;
  if (s > a->t.comm_s)
    s = a->t.comm_s;
  a->t.comm_s -= s;
  a->t.exposed_comm_s -= s < a->t.exposed_comm_s ? s : a->t.exposed_comm_s;
  a->t.idle_s += s;
  double moved = s < a->host->ph.comm_s ? s : a->host->ph.comm_s; /* its host's unloaded wait, likewise */
  a->host->ph.comm_s -= moved;
  a->host->ph.idle_s += moved;
  pthread_mutex_unlock(&bd.mu);
}

void account_comm_wait(sg_comm_t comm)
{
  account_comm_begin();
  sg_comm_wait(comm);
  account_comm_end();
}

size_t account_breakdown(double end_time, const account_actor **out)
{
  pthread_mutex_lock(&bd.mu);
  for (size_t i = 0; i < bd.n_hosts + bd.n_extra; i++) {
    bd_host *h = i < bd.n_hosts ? bd.hosts[i] : bd.extra[i - bd.n_hosts];
    if (h)
      advance(h, end_time);
  }
  xbt_free(bd.out);
  bd.out = xbt_malloc((bd.n_actors ? bd.n_actors : 1) * sizeof(*bd.out));
  size_t n = 0;
  for (size_t i = 0; i < bd.n_actors; i++)
    if (bd.actors[i])
      bd.out[n++] = bd.actors[i]->t;
  pthread_mutex_unlock(&bd.mu);
  *out = bd.out;
  return n;
}

void account_host_phases(sg_host_t host, account_phases *out)
{
  const size_t *ix = sg_host_get_data(host);
  const bd_host *h = ix && *ix < bd.n_hosts ? bd.hosts[*ix] : NULL;
  *out = h ? h->ph : (account_phases){0};
}

void account_trace_enable(int on)
{
  bd.trace_on = on;
}

/* A flow id from the sender's pid and its event's place in its own sequence: unique, and
 * independent of the order in which threads record (a global counter would not be). */
#define FLOW_SEQ_BITS 40

unsigned long account_trace_send(sg_host_t dst, double bytes)
{
  if (!bd.trace_on)
    return 0;
  double now = simgrid_get_clock();
  size_t pid = (size_t)sg_actor_self_get_pid();
  pthread_mutex_lock(&bd.mu);
  long seq = trace_add(self_actor(now), pid, ACCOUNT_SEND, now, 0, bytes, sg_host_get_name(dst));
  unsigned long flow = ((unsigned long)pid << FLOW_SEQ_BITS) | ((unsigned long)seq + 1);
  bd.ev[bd.n_ev - 1].flow = flow;
  pthread_mutex_unlock(&bd.mu);
  return flow;
}

void account_trace_recv(unsigned long flow)
{
  if (!bd.trace_on || flow == 0)
    return;
  double now = simgrid_get_clock();
  pthread_mutex_lock(&bd.mu);
  trace_add(self_actor(now), (size_t)sg_actor_self_get_pid(), ACCOUNT_RECV, now, 0, 0, NULL);
  bd.ev[bd.n_ev - 1].flow = flow;
  pthread_mutex_unlock(&bd.mu);
}

/* The calling actor's names (pid), created on first use. Call with bd.mu held. */
static bd_label *self_label(size_t pid)
{
  if (pid >= bd.n_labels) {
    size_t cap = bd.n_labels;
    bd.labels = grow(bd.labels, &cap, pid + 1, sizeof(*bd.labels));
    bd.n_labels = cap;
  }
  if (bd.labels[pid] == NULL)
    bd.labels[pid] = xbt_malloc0(sizeof(bd_label));
  return bd.labels[pid];
}

void account_label_push(const char *fmt, ...)
{
  if (!bd.trace_on)
    return;
  pthread_mutex_lock(&bd.mu);
  bd_label *l = self_label((size_t)sg_actor_self_get_pid());
  if (l->depth < ACCOUNT_LABEL_DEPTH) {
    size_t at = l->depth ? l->end[l->depth - 1] : 0;
    if (at > 0 && at + 2 < sizeof(l->text)) {
      memcpy(l->text + at, ": ", 3);
      at += 2;
    }
    if (at + 1 < sizeof(l->text)) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(l->text + at, sizeof(l->text) - at, fmt, ap);
      va_end(ap);
    }
    l->end[l->depth] = strlen(l->text);
  }
  l->depth++;
  pthread_mutex_unlock(&bd.mu);
}

void account_label_pop(void)
{
  if (!bd.trace_on)
    return;
  pthread_mutex_lock(&bd.mu);
  bd_label *l = self_label((size_t)sg_actor_self_get_pid());
  xbt_assert(l->depth > 0, "account_label_pop without a push");
  l->depth--;
  if (l->depth < ACCOUNT_LABEL_DEPTH)
    l->text[l->depth ? l->end[l->depth - 1] : 0] = '\0';
  pthread_mutex_unlock(&bd.mu);
}

static int by_start(const void *pa, const void *pb)
{
  const bd_event_rec *a = pa, *b = pb;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  if (a->pid != b->pid)
    return a->pid < b->pid ? -1 : 1;
  return (a->seq > b->seq) - (a->seq < b->seq);
}

size_t account_trace(const account_event **out)
{
  size_t *index = xbt_malloc0((bd.n_actors ? bd.n_actors : 1) * sizeof(size_t)), k = 0;
  for (size_t i = 0; i < bd.n_actors; i++)
    if (bd.actors[i])
      index[i] = k++; /* account_breakdown's order */
  qsort(bd.ev, bd.n_ev, sizeof(*bd.ev), by_start);
  xbt_free(bd.trace);
  bd.trace = xbt_malloc((bd.n_ev ? bd.n_ev : 1) * sizeof(*bd.trace));
  for (size_t i = 0; i < bd.n_ev; i++)
  {
    bd.trace[i] = (account_event){bd.ev[i].kind, index[bd.ev[i].pid], bd.ev[i].start, bd.ev[i].dur,
                                  bd.ev[i].bytes, bd.ev[i].dst, bd.ev[i].flow, ""};
    memcpy(bd.trace[i].label, bd.ev[i].label, sizeof(bd.trace[i].label));
  }
  xbt_free(index);
  *out = bd.trace;
  return bd.n_ev;
}


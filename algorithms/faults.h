#ifndef ALGORITHMS_FAULTS_H
#define ALGORITHMS_FAULTS_H
/* faults.h - the [faults] plan of a run (host and link failures, link degradation)
 * and the injector actor that applies it at its simulated times, plus the counters
 * the algorithms fill in for summary.json's "faults" block. */

#include <stdatomic.h>
#include <stddef.h>
#include <simgrid/forward.h>

#include "algorithms/metrics.h"
#include "algorithms/run.h"

typedef enum fault_kind {
  FAULT_HOST_OFF,     /* sg_host_turn_off: kills the actors on the host */
  FAULT_HOST_ON,      /* sg_host_turn_on: the host is back (algorithms may restart actors) */
  FAULT_LINK_OFF,     /* messages sent across the link are lost (those on the wire arrive) */
  FAULT_LINK_ON,      /* the link carries messages again */
  FAULT_LINK_DEGRADE  /* the link's bandwidth becomes factor x its nominal one */
} fault_kind;

/* SimGrid 3.32's C API cannot turn a link off (sg_link_turn_off is C++ only): a failed
 * link is modelled at the message level instead. While it is down, msg_send drops
 * every message whose route crosses it, and senders that wait (Downpour's pushes) see
 * it as undelivered at once; transfers already on the wire complete. A synchronous
 * (fail-stop) run whose hosts talk across the link stops with status link_failed. */

typedef struct fault_event {
  fault_kind kind;
  char target[96];  /* the HOST or LINK as written in the scenario */
  double time;      /* simulated s */
  double factor;    /* LINK_DEGRADE only */
  sg_host_t host;   /* resolved before the run (host kinds) */
  sg_link_t link;   /* resolved before the run (link kinds) */
  int applied;      /* the injector applied it (the run had not ended) */
} fault_event;

/* The hook an algorithm registers to learn of each event right after it is applied
 * (called from the injector actor). */
typedef void (*fault_hook)(void *ctx, const fault_event *ev);

typedef struct fault_plan {
  fault_event *ev;            /* sorted by time; ties keep the scenario's order */
  size_t n;
  double wait_timeout;        /* bound of every wait that a fault can prolong, simulated s */
  double checkpoint_interval; /* simulated s between PS shard checkpoints; 0: none */
  double checkpoint_bw;       /* bytes/s a shard writes its checkpoint at; 0: free */
  int fail_stop;              /* synchronous algorithm: the first failure of a run host stops the run */
  sg_host_t safe_host;        /* a platform host no event turns off: injector and evaluator */
  double deadline;            /* watchdog: the run is stopped as stalled at this simulated time */
  fault_hook hook;
  void *hook_ctx;
  const run_config *cfg;      /* set by faults_start */
  metrics *m;
  double *nominal;            /* [i]: bandwidth of event i's link when the run started */
  /* report (summary.json "faults"), written by the algorithms' actors */
  int workers_started;
  atomic_int workers_lost;
  atomic_long lost_updates, shard_restarts, checkpoints, undelivered_pushes, missed_fetches;
  atomic_long reissued_portions;
  int stopped;                /* 1: fail-stop after a host failure, 2: watchdog, 3: link failure */
  double stopped_at;
} fault_plan;

/* Appends the events of one [faults] key to p: kind FAULT_HOST_OFF parses
 * "HOST@TIME[+DURATION],...", FAULT_LINK_OFF "LINK@TIME[+DURATION],..." and
 * FAULT_LINK_DEGRADE "LINK@TIME:FACTOR[+DURATION],..." (a DURATION adds the event that
 * undoes it). Returns 0, or -1 with one line in err and p unchanged. */
int faults_parse(fault_plan *p, fault_kind kind, const char *text, char *err, size_t errlen);
/* Sorts the events by time (stable). Call once all keys are parsed. */
void faults_sort(fault_plan *p);
/* Frees the events and the link-failure state (and removes msg's route filter); p
 * itself belongs to the caller. faults_clear(NULL) is a no-op. */
void faults_clear(fault_plan *p);
/* The link called name, or NULL. */
sg_link_t faults_link_by_name(const char *name);

/* Whether a FAULT_HOST_ON event for host comes at or after time t. */
int faults_host_returns(const fault_plan *p, sg_host_t host, double t);
/* Whether any event turns a host off. */
int faults_has_host_failures(const fault_plan *p);

/* Creates the injector (a daemon actor on p->safe_host) that applies p's events at
 * their times, stops a fail-stop run at the first failure of one of cfg's hosts
 * (status host_failed) and any run still going at p->deadline (status stalled).
 * Call after the algorithm is deployed; p and m outlive the run. */
void faults_start(fault_plan *p, const run_config *cfg, metrics *m);

/* For an algorithm's hook: stops the whole run now with status host_failed (as a
 * fail-stop run's first failure does). */
void faults_stop_run(fault_plan *p);

/* The bounded wait an algorithm uses under faults: cfg->faults->wait_timeout, or -1
 * (no bound) when the run has no fault plan. */
double faults_wait_timeout(const run_config *cfg);

#endif

#ifndef ALGORITHMS_COURIER_H
#define ALGORITHMS_COURIER_H
/* courier.h - transfers that start only at multiples of a time quantum Q of simulated time:
 * the approximation behind downpour.comm_quantum (algorithms/doc/downpour.md, Time quantum).
 * SimGrid re-solves the network's sharing once per instant at which flows start or end, so
 * transfers that start on the same instants share one solve. Every aligned start is late by up
 * to Q; what is sent, and to whom, is unchanged. */

#include <simgrid/forward.h>

#include "algorithms/msg.h"

/* Sleeps the calling actor until the next multiple of q (not at all when the clock is on one
 * already, nor when q <= 0). */
void quantum_align(double q);

/* A courier sends on behalf of an actor that must not wait itself (a parameter-server shard
 * that serves its queue in arrival order): courier_send hands it a message at once, and the
 * courier's own actor starts the transfer at the next multiple of the quantum. */
typedef struct courier courier;

/* A courier with quantum q > 0 whose actor, named `name`, runs on host. Call inside the
 * simulation (by the actor it sends for, or before the engine runs). */
courier *courier_start(double q, const char *name, sg_host_t host);
/* msg_send(to, dst, m, bytes), started at the next multiple of the quantum; always a detached
 * put (msg_send_detached), also with waited sends, which only change what a send costs. */
void courier_send(courier *c, sg_mailbox_t to, sg_host_t dst, msg *m, double bytes);
/* No more sends: the courier starts what it holds at the next multiple and ends. */
void courier_close(courier *c);
/* After the simulation; courier_free(NULL) is a no-op. */
void courier_free(courier *c);

#endif

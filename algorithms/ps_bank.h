#ifndef ALGORITHMS_PS_BANK_H
#define ALGORITHMS_PS_BANK_H
/* ps_bank.h - a bank of parameter-server shards: the network endpoint of n consecutive
 * shards (ps.h), on one host of n times a shard host's link bandwidth and cores, so that
 * SimGrid shares the network among one flow per client where the shards had n. A client
 * sends the bank one fetch and one push for all of the bank's shards it talks to (a split
 * replica's machine: those holding its parameters, ps_serve_link); the bank answers with
 * one message holding each such shard's reply, and applies each part of a push to its
 * shard in arrival order, the updates side by side, one core each. The shards keep their states,
 * versions and staleness counts: only the traffic is merged (algorithms/doc/downpour.md,
 * Bank). */

#include <simgrid/forward.h>

#include "algorithms/eval.h"
#include "algorithms/ps.h"
#include "algorithms/run.h"

typedef struct ps_bank ps_bank;

/* Bank `rank` serving shards[0..n-1] (ranks first .. first+n-1 of the run) to n_clients
 * clients, client c on mailbox "<client_role>-<c>" on client_hosts[c] (both arrays
 * outlive the bank). Not under [faults] nor with compressed pushes. Never NULL. */
ps_bank *ps_bank_create(const run_config *cfg, int rank, ps_shard **shards, int first, int n,
                        const char *client_role, const sg_host_t *client_hosts, int n_clients);
/* The slowdown of each shard's own host in the exact model (platform.speed_spread,
 * stragglers): factor[i] for shard first + i, the array outliving the bank; without a call
 * every shard's updates run at the bank host's nominal speed. */
void ps_bank_slow_shards(ps_bank *b, const double *factor);
/* downpour.comm_quantum = q > 0: its replies start only at multiples of q (courier.h).
 * Call before ps_bank_start. */
void ps_bank_send_on_quantum(ps_bank *b, double q);
/* Creates its actor on host; it listens on mailbox "bank-<rank>" and ends once every
 * client that talks to one of its shards has sent PS_MSG_DONE, each of its shards counted
 * as ended for the evaluator. Call after the shards' ps_serve_link. */
void ps_bank_start(ps_bank *b, sg_host_t host);
/* Its mailbox. */
sg_mailbox_t ps_bank_mailbox(const ps_bank *b);
/* The first shard it holds and how many. */
int ps_bank_first(const ps_bank *b);
int ps_bank_size(const ps_bank *b);
void ps_bank_free(ps_bank *b);

#endif

#ifndef ALGORITHMS_MODELPAR_NET_H
#define ALGORITHMS_MODELPAR_NET_H
/* modelpar_net.h - a machine's network thread for a split replica (`platform.msg_thread =
 * on`): the per-message CPU work (`platform.msg_overhead`, plus `msg_byte_overhead` per
 * byte) of the messages a partition
 * sends and receives, done on one thread of its own, one message at a time in the order
 * they come, beside the cores that compute (Dean et al. 2012 sec. 3: "The framework
 * automatically parallelizes computation in each machine using all available cores, and
 * manages communication, synchronization and data transfer between machines"). The
 * computing side hands a message over at no cost and carries on; a received message's
 * work is done as it arrives, while the machine computes, and the computing side waits
 * only for the messages its next phase needs. */

#include <simgrid/forward.h>

#include "algorithms/modelpar_msg.h"

typedef struct modelpar_net modelpar_net;

/* The network thread of the machine `host`, named `name` (its two daemon actors, which
 * SimGrid ends with the run): each message costs it `overhead` s plus `byte_overhead` s per
 * byte. Free with modelpar_net_free after the run. */
modelpar_net *modelpar_net_create(sg_host_t host, const char *name, double overhead, double byte_overhead);
void modelpar_net_free(modelpar_net *n);

/* Hands m (for slot m->box of the machine whose thread is `to`, on host dst) to n's thread:
 * it does the message's work, then the message travels as `bytes`. Returns at once. */
void modelpar_net_send(modelpar_net *n, modelpar_net *to, sg_host_t dst, modelpar_msg *m, double bytes);

/* The next message for slot `box` whose work n's thread has done, waiting for it. */
modelpar_msg *modelpar_net_recv(modelpar_net *n, int box);

#endif

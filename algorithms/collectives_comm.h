#ifndef ALGORITHMS_COLLECTIVES_COMM_H
#define ALGORITHMS_COLLECTIVES_COMM_H
/* collectives_comm.h - a communicator of the collectives (collectives.h): a group of hosts
 * with its own mailbox namespace, so several groups (tensor, data, pipeline) can coexist,
 * and the options that size its messages and cost its reductions. */

#include <stddef.h>
#include <simgrid/forward.h>

#include "algorithms/collectives_ref.h"
#include "algorithms/run.h"

/* How a communicator's messages are sized and its reductions costed. */
typedef struct coll_opts {
  size_t elem_bytes;     /* wire bytes per element (fp32 4, fp16/bf16 2); numerics stay double */
  double chunk_bytes;    /* a transfer larger than this goes as chunks of at most it; 0: whole */
  const run_config *cfg; /* reductions cost reduce_flops per element through compute_execute;  */
  double reduce_flops;   /* NULL cfg or 0 flops: reductions take no simulated time */
  coll_mode mode;        /* COLL_MESSAGES (0, the default) or COLL_ROUNDS */
  int hold_sms;          /* 1: while a member runs a collective (not coll_send / coll_recv), it
                          * holds compute_comm_share of its host's speed, as NCCL's kernels hold
                          * their SMs, so an execution beside it gets the rest (0: nothing) */
} coll_opts;

/* The mode a run's scenario chooses (run.collectives); COLL_MESSAGES without a scenario. */
coll_mode coll_mode_of(const run_config *cfg);

typedef struct coll_comm coll_comm;

/* A communicator of `size` members, member r on hosts[r] (copied). Its mailboxes are named
 * "NAME#ID:SRC>DST" with ID a creation counter, so two communicators never share one even
 * with the same name. Create it before the actors that use it start (deployment), free it
 * after the engine has run. Returns NULL if size is 0, elem_bytes is 0 or chunk_bytes < 0. */
coll_comm *coll_comm_create(const char *name, const sg_host_t *hosts, size_t size, const coll_opts *o);
/* coll_comm_free(NULL) is a no-op. */
void coll_comm_free(coll_comm *c);
size_t coll_comm_size(const coll_comm *c);
/* COLL_ROUNDS: with on = 1, c's rounds run without their latency chain, their callers spending
 * each collective's latency themselves (zero3.c: NCCL's model); 0 (as created): with it. */
void coll_comm_set_no_chain(coll_comm *c, int on);
/* The HBM bandwidth a collective's kernels take from the compute beside it (opts.hold_sms): while
 * member r is in a collective, its hold takes as well, of the share its SMs leave, hbm_per_Bps x
 * the bytes/s it sent in its previous allreduce, at most all of it (the algorithm knows what the
 * compute beside it is made of: tensor.comm_hbm). 0, the default: none. */
void coll_comm_set_hbm(coll_comm *c, double hbm_per_Bps);
sg_host_t coll_comm_host(const coll_comm *c, size_t rank);

#endif

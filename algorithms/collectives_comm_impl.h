/* collectives_comm_impl.h - the private half of collectives_comm: a communicator's state and
 * the transfers collectives.c and collectives_rounds.c post. Not for callers: they use
 * algorithms/collectives.h. */
#ifndef DTSIM_ALGORITHMS_COLLECTIVES_COMM_IMPL_H
#define DTSIM_ALGORITHMS_COLLECTIVES_COMM_IMPL_H

#include <stddef.h>
#include <simgrid/forward.h>

#include "algorithms/collectives_comm.h"
#include "algorithms/msg.h"

typedef struct peer_box {
  size_t peer;
  sg_mailbox_t out; /* me -> peer */
  sg_mailbox_t in;  /* peer -> me */
  long sent, got;   /* messages so far each way: every message carries its index */
} peer_box;

/* What one member's actor keeps: only that actor writes it (rounds: the others read what
 * it publishes between the round's two barriers). */
typedef struct coll_rank {
  peer_box *boxes;
  size_t n_boxes, cap;
  /* rounds: what the member published for the current round */
  coll_op op;
  size_t n;
  size_t batch;       /* 0: one collective; k: a batch of k (coll_batch) */
  const double *in;   /* its input, or NULL (timing only) */
  double *part;       /* its block of the result (numerics), part_cap doubles */
  size_t part_cap;
} coll_rank;

struct coll_comm {
  char ns[96];
  sg_host_t *hosts;
  size_t p;
  coll_opts o;
  size_t chunk_elems; /* elements per chunk; SIZE_MAX: unchunked */
  coll_rank *ranks;
  double *held;       /* [r] the share of member r's host a collective holds (opts.hold_sms) */
  double hbm_per_Bps, *rate; /* coll_comm_set_hbm; [r] bytes/s member r sent in its last allreduce */
  /* rounds */
  sg_bar_t bar;            /* where the members of a round meet */
  sg_host_t slow_src, slow_dst; /* the ring pair whose route has the largest latency */
  int no_chain;            /* coll_comm_set_no_chain */
};

typedef struct pending {
  sg_comm_t comm;
  msg *m;
  peer_box *from;
} pending;

/* The mailboxes of the ordered pair (me, peer), made on first use. */
peer_box *coll_box_of(coll_comm *c, size_t me, size_t peer);
/* Posts member me's receive of the next message from `from` into pd. */
void coll_post_recv(coll_comm *c, size_t me, size_t from, pending *pd);
/* Adds (reduce) or copies the payload of pd, whose receive is complete, into
 * buf[off, off + len) (timing only: buf NULL). */
void coll_take_recv(coll_comm *c, size_t me, pending *pd, double *buf, size_t off, size_t len, int reduce);
/* Reduction cost: reduce_flops per element through compute_execute (the gamma term). */
void coll_reduce_cost(const coll_comm *c, size_t len);

#endif

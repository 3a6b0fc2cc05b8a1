#ifndef ALGORITHMS_CONSENSUS_MSG_H
#define ALGORITHMS_CONSENSUS_MSG_H
/* consensus_msg.h - what the agents of subgradient consensus send their neighbours
 * (Nedic and Ozdaglar 2009): each round's iterate x_i(k), and, in async mode, a last
 * notice that the agent has stopped, which tells the receiver how many iterates to
 * wait for before it may stop listening. */

#include <stddef.h>
#include <xbt/sysdep.h>

#include "algorithms/msg.h"

typedef enum consensus_msg_kind {
  CONSENSUS_MSG_STATE = 300, /* agent -> neighbour: its iterate of one round */
  CONSENSUS_MSG_DONE         /* async, agent -> neighbour: it has stopped */
} consensus_msg_kind;

/* CONSENSUS_MSG_STATE: x_i(k). */
typedef struct consensus_state_msg {
  msg hdr;
  int src;      /* agent i */
  long k;       /* the round: x is x_src(k) */
  size_t dim;   /* elements in x */
  double x[];
} consensus_state_msg;

/* CONSENSUS_MSG_DONE: agent src sends no more. */
typedef struct consensus_done_msg {
  msg hdr;
  int src;
  long sent;    /* iterates src sent to the receiver, all told */
} consensus_done_msg;

static inline void consensus_msg_free(msg *m) { xbt_free(m); }

/* Agent src's iterate of round k, with room for its dim values (uninitialised). Never
 * NULL; the receiver frees it with msg_free. */
static inline consensus_state_msg *consensus_state_msg_create(int src, long k, size_t dim)
{
  consensus_state_msg *m = xbt_malloc(sizeof(*m) + dim * sizeof(double));
  m->hdr.kind = CONSENSUS_MSG_STATE;
  m->hdr.free_fn = consensus_msg_free;
  m->src = src;
  m->k = k;
  m->dim = dim;
  return m;
}

/* Agent src's notice that it has stopped after sending `sent` iterates to the receiver.
 * Never NULL; the receiver frees it with msg_free. */
static inline consensus_done_msg *consensus_done_msg_create(int src, long sent)
{
  consensus_done_msg *m = xbt_malloc(sizeof(*m));
  m->hdr.kind = CONSENSUS_MSG_DONE;
  m->hdr.free_fn = consensus_msg_free;
  m->src = src;
  m->sent = sent;
  return m;
}

/* m as a state message, or as a done notice; each aborts if m is of any other kind. */
MSG_DOWNCAST(consensus_state_msg, consensus_state_msg_of, CONSENSUS_MSG_STATE, "consensus agent expected an iterate")
MSG_DOWNCAST(consensus_done_msg, consensus_done_msg_of, CONSENSUS_MSG_DONE, "consensus agent expected a done notice")

#endif

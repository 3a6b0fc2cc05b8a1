#ifndef ALGORITHMS_MODELPAR_MSG_H
#define ALGORITHMS_MODELPAR_MSG_H
/* modelpar_msg.h - what the partitions of a split replica exchange (Dean'12 sec. 3):
 * activations forward to the partitions whose units read them, and the gradients of
 * those activations back to their owners. Both kinds carry the same payload. */

#include <stddef.h>
#include <xbt/sysdep.h>

#include "algorithms/msg.h"

typedef enum modelpar_msg_kind {
  MODELPAR_MSG_ACTIVATIONS = 100, /* partition -> partition: activations its units need (or logits) */
  MODELPAR_MSG_GRADIENTS          /* partition -> partition: gradients of the activations it was sent */
} modelpar_msg_kind;

typedef struct modelpar_msg {
  msg hdr;
  int src;        /* the sending partition */
  long step;      /* the replica's step */
  int box;        /* with a network thread (modelpar_net.h): the receiver's slot it is for */
  size_t n;       /* elements in data: the sender's whole matrix with numerics, 0 timing only */
  double data[];  /* row-major; the receiver reads the sender's columns of it */
} modelpar_msg;

static inline void modelpar_msg_free(msg *m) { xbt_free(m); }

/* A message of `kind` from partition src with room for n doubles (uninitialised).
 * Never NULL; the receiver frees it with msg_free. */
static inline modelpar_msg *modelpar_msg_create(modelpar_msg_kind kind, int src, long step, size_t n)
{
  modelpar_msg *m = xbt_malloc(sizeof(*m) + n * sizeof(double));
  m->hdr.kind = (int)kind;
  m->hdr.free_fn = modelpar_msg_free;
  m->src = src;
  m->step = step;
  m->box = 0;
  m->n = n;
  return m;
}

/* m, received where only `kind` arrives, as a modelpar_msg; aborts on any other kind. */
static inline modelpar_msg *modelpar_msg_of(msg *m, modelpar_msg_kind kind)
{
  return (modelpar_msg *)msg_check(m, (int)kind, "model partition expected another message");
}

#endif

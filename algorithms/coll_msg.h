#ifndef ALGORITHMS_COLL_MSG_H
#define ALGORITHMS_COLL_MSG_H
/* coll_msg.h - the one message of the collectives (collectives.c): a chunk of a
 * transfer from one member to another, with its elements, or only their count when
 * the collective runs for timing only. */

#include <stddef.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/msg.h"

typedef enum coll_msg_kind {
  COLL_MSG_CHUNK = 400 /* member -> member: elements of one transfer, or their count */
} coll_msg_kind;

typedef struct coll_msg {
  msg hdr;
  int src;       /* the sending member */
  long index;    /* its place among the messages src sent the receiver on this communicator */
  size_t elems;  /* elements it stands for: its simulated size */
  size_t n;      /* elements in data: elems, or 0 (timing only) */
  double data[];
} coll_msg;

static inline void coll_msg_free(msg *m) { xbt_free(m); }

/* Message `index` from member src, standing for elems elements, with room for n of
 * them (uninitialised): n is elems, or 0 for timing only. Never NULL; the receiver
 * frees it with msg_free. */
static inline coll_msg *coll_msg_create(int src, long index, size_t elems, size_t n)
{
  xbt_assert(n == elems || n == 0, "a collective's chunk of %zu elements carrying %zu", elems, n);
  coll_msg *m = xbt_malloc(sizeof(*m) + n * sizeof(double));
  m->hdr.kind = COLL_MSG_CHUNK;
  m->hdr.free_fn = coll_msg_free;
  m->src = src;
  m->index = index;
  m->elems = elems;
  m->n = n;
  return m;
}

/* m as a collective's chunk; aborts if it is of any other kind. */
MSG_DOWNCAST(coll_msg, coll_msg_of, COLL_MSG_CHUNK, "collective member expected a chunk")

#endif

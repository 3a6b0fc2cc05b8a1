#ifndef ALGORITHMS_PIPELINE_MSG_H
#define ALGORITHMS_PIPELINE_MSG_H
/* pipeline_msg.h - what the model chunks of a pipeline send each other for one
 * microbatch (GPipe sec. 2.2): activations forward to the next chunk, the gradient of
 * those activations back. Both kinds carry the same payload. (The stage's tensor
 * group and the data-parallel replicas talk through collectives: coll_msg.h.) */

#include <stddef.h>
#include <xbt/sysdep.h>

#include "algorithms/msg.h"

typedef enum pipeline_msg_kind {
  PIPELINE_MSG_ACTIVATIONS = 200, /* chunk c -> chunk c+1: the output of c's last layer */
  PIPELINE_MSG_GRADIENTS          /* chunk c -> chunk c-1: the gradient of c's input */
} pipeline_msg_kind;

typedef struct pipeline_msg {
  msg hdr;
  int src;         /* the sending chunk */
  long step;       /* the mini-batch (flush) it belongs to */
  long microbatch; /* its microbatch in that step */
  size_t n;        /* elements in data: b rows of the boundary's width with numerics, 0 timing only */
  double sent_at;  /* simulated s when the sender put it: before, its receiver waits idle (bubble) */
  double data[];   /* row-major, b rows */
} pipeline_msg;

static inline void pipeline_msg_free(msg *m) { xbt_free(m); }

/* A message of `kind` from chunk src for (step, microbatch), with room for n doubles
 * (uninitialised). Never NULL; the receiver frees it with msg_free. */
static inline pipeline_msg *pipeline_msg_create(pipeline_msg_kind kind, int src, long step, long microbatch, size_t n)
{
  pipeline_msg *m = xbt_malloc(sizeof(*m) + n * sizeof(double));
  m->hdr.kind = (int)kind;
  m->hdr.free_fn = pipeline_msg_free;
  m->src = src;
  m->step = step;
  m->microbatch = microbatch;
  m->n = n;
  return m;
}

/* m, received where only `kind` arrives, as a pipeline_msg; aborts on any other kind. */
static inline pipeline_msg *pipeline_msg_of(msg *m, pipeline_msg_kind kind)
{
  return (pipeline_msg *)msg_check(m, (int)kind, "pipeline chunk expected another message");
}

#endif

#ifndef ALGORITHMS_SANDBLASTER_MSG_H
#define ALGORITHMS_SANDBLASTER_MSG_H
/* sandblaster_msg.h - what the actors of Sandblaster L-BFGS send (Dean'12 sec. 4.2 and
 * Appendix): the coordinator's commands to the shards and their answers, the portions
 * it hands the replicas and their reports, the replicas' gradient pushes and slot
 * fetches, and the stop and death notices. Wire sizes are the senders' (sandblaster.c). */

#include <stddef.h>
#include <string.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/msg.h"

typedef enum sandblaster_msg_kind {
  SANDBLASTER_MSG_COMMAND = 600,  /* coordinator -> shard: run a vector command on your slice */
  SANDBLASTER_MSG_REDUCE,         /* coordinator -> shard: once the batch's pushes are in, add them into a slot */
  SANDBLASTER_MSG_FORGET,         /* coordinator -> shard: [faults] drop what a dead replica pushed */
  SANDBLASTER_MSG_ANSWER,         /* shard -> coordinator: a command or the reduce is done */
  SANDBLASTER_MSG_FETCH,          /* replica -> shard: send me your slice of a slot */
  SANDBLASTER_MSG_SLICE,          /* shard -> replica: its slice of the slot fetched */
  SANDBLASTER_MSG_PUSH_TOTAL,     /* replica -> shard: its running total of counted gradients */
  SANDBLASTER_MSG_PUSH_PORTIONS,  /* replica -> shard: newly counted portions' gradients, each apart */
  SANDBLASTER_MSG_PORTION,        /* coordinator -> replica: its next portion or none, and maybe a verdict */
  SANDBLASTER_MSG_DONE,           /* replica -> coordinator: a portion is finished */
  SANDBLASTER_MSG_STOP,           /* coordinator -> replica or shard: stop now */
  SANDBLASTER_MSG_DEATH,          /* fault hook -> coordinator: [faults] a replica's host went off */
  SANDBLASTER_MSG_PART,           /* a split replica's first machine -> its others: what to do next */
  SANDBLASTER_MSG_BUNDLE          /* to or from the bank (sandblaster.ps_bank): one message per shard as one */
} sandblaster_msg_kind;

/* The vector commands a shard runs on its slices (models/lbfgs.h's ops but evaluate). */
typedef enum sandblaster_op { SANDBLASTER_DOT, SANDBLASTER_AXPY, SANDBLASTER_SCALE, SANDBLASTER_COPY } sandblaster_op;

/* COMMAND: dot a . b; axpy b += alpha a; scale a *= alpha; copy b = a. */
typedef struct sandblaster_command_msg {
  msg hdr;
  sandblaster_op op;
  int a, b;     /* slot ids */
  double alpha; /* axpy's and scale's coefficient */
} sandblaster_command_msg;

/* REDUCE: the batch gradient into slot g, once every portion's gradient is in. */
typedef struct sandblaster_reduce_msg {
  msg hdr;
  int slot;
} sandblaster_reduce_msg;

/* FORGET: replica `replica` died during `batch`; a shard gathering another batch has
 * nothing of it. */
typedef struct sandblaster_forget_msg {
  msg hdr;
  long batch;
  int replica;
} sandblaster_forget_msg;

/* ANSWER: shard `shard` is done with the command. */
typedef struct sandblaster_answer_msg {
  msg hdr;
  int shard;
  double partial; /* a dot's partial sum over the slice; 0 for any other command */
} sandblaster_answer_msg;

/* FETCH: replica `replica` wants the shard's slice of `slot`. */
typedef struct sandblaster_fetch_msg {
  msg hdr;
  int replica;
  int machine; /* of the replica (0 when it is one machine): it asks for its own parameters */
  int slot;
} sandblaster_fetch_msg;

/* SLICE: shard `shard`'s slice of the slot fetched, from the shard's first element. */
typedef struct sandblaster_slice_msg {
  msg hdr;
  int shard;
  size_t n; /* elements in data */
  double data[];
} sandblaster_slice_msg;

/* PUSH_TOTAL (sum mode): replica `replica`'s running total of the gradients of its
 * counted portions of `batch`, the shard's slice; it replaces the last one. */
typedef struct sandblaster_push_total_msg {
  msg hdr;
  int replica;
  int machine;   /* of the replica: the total's values are that machine's parameters */
  long batch;
  long counted;  /* portions in the total: more with each push */
  size_t n;      /* elements in total */
  double total[];
} sandblaster_push_total_msg;

/* PUSH_PORTIONS (exact_sum): the unweighted gradients, the shard's slice, of k portions
 * of `batch` newly counted for replica `replica`. */
typedef struct sandblaster_push_portions_msg {
  msg hdr;
  int replica;
  long batch;
  size_t k;      /* portions */
  size_t len;    /* elements of each gradient */
  long *ids;     /* [i]: the portion of row i (in the same allocation) */
  double grads[]; /* k rows of len */
} sandblaster_push_portions_msg;

/* In a PORTION, no portion for now. */
#define SANDBLASTER_NO_PORTION (-1L)

/* PORTION: the replica's next portion of `batch` (or none), and, if judged, the
 * verdict on the portions it held when it reported. */
typedef struct sandblaster_portion_msg {
  msg hdr;
  long batch;   /* 1-based; the replica fetches slot_x when it changes */
  long portion; /* the portion to compute, or SANDBLASTER_NO_PORTION: wait for the next message */
  int slot_x;   /* the slot holding the batch's parameters */
  int judged;   /* it carries a verdict */
  size_t n;     /* judged: the portions the replica reported holding; else 0 */
  char counts[]; /* [i]: 1 if its i-th held portion counts, 0 if it is discarded */
} sandblaster_portion_msg;

/* DONE: replica `replica` finished a portion of `batch`; it reports every portion it
 * holds uncounted, the one just finished last. */
typedef struct sandblaster_done_msg {
  msg hdr;
  int replica;
  long batch;
  size_t n;     /* held portions */
  long *ids;    /* [i]: a held portion (in the same allocation) */
  double loss[]; /* [i]: its mean loss */
} sandblaster_done_msg;

/* PART: a split replica's first machine tells each other machine what the coordinator's
 * answer asks of the replica: push its part of the running total (counted > 0: it counts
 * that many portions; values[0..n) are that part, packed as the machine's layout: the
 * numbers it holds in its own memory, so the message's wire size does not count them),
 * then compute `portion` (or SANDBLASTER_NO_PORTION) as the replica's step `step`,
 * fetching slot_x first when `batch` is new; or stop. */
typedef struct sandblaster_part_msg {
  msg hdr;
  long batch;
  int slot_x;
  long portion;
  long step;
  long counted;
  int stop;
  size_t n;
  double values[];
} sandblaster_part_msg;

/* STOP: no payload. */
typedef struct sandblaster_stop_msg {
  msg hdr;
} sandblaster_stop_msg;

/* DEATH: replica `replica`'s host is off. */
typedef struct sandblaster_death_msg {
  msg hdr;
  int replica;
} sandblaster_death_msg;

/* BUNDLE: what the coordinator or a replica would exchange with each shard, travelling
 * to or from the bank as one message sized by the sum of the parts' (sandblaster.c,
 * Bank); part[k] is shard k's, all of one kind. The bundle owns its parts. */
typedef msg_bundle sandblaster_bundle_msg; /* msg.h's, client 0; n: the shards */

/* Every Sandblaster message is one allocation, but a bundle, which frees its parts. */
static inline void sandblaster_msg_free(msg *m) { xbt_free(m); }

/* A message of `size` bytes of `kind`, zeroed. */
static inline void *sandblaster_msg_alloc(size_t size, sandblaster_msg_kind kind)
{
  msg *m = xbt_malloc0(size);
  m->kind = (int)kind;
  m->free_fn = sandblaster_msg_free;
  return m;
}

/* Constructors: never NULL; arrays sized as asked and uninitialised; the receiver frees
 * the message with msg_free. */
static inline sandblaster_command_msg *sandblaster_command_msg_create(sandblaster_op op, int a, int b, double alpha)
{
  sandblaster_command_msg *m = sandblaster_msg_alloc(sizeof(*m), SANDBLASTER_MSG_COMMAND);
  m->op = op;
  m->a = a;
  m->b = b;
  m->alpha = alpha;
  return m;
}

static inline sandblaster_reduce_msg *sandblaster_reduce_msg_create(int slot)
{
  sandblaster_reduce_msg *m = sandblaster_msg_alloc(sizeof(*m), SANDBLASTER_MSG_REDUCE);
  m->slot = slot;
  return m;
}

static inline sandblaster_forget_msg *sandblaster_forget_msg_create(long batch, int replica)
{
  sandblaster_forget_msg *m = sandblaster_msg_alloc(sizeof(*m), SANDBLASTER_MSG_FORGET);
  m->batch = batch;
  m->replica = replica;
  return m;
}

static inline sandblaster_answer_msg *sandblaster_answer_msg_create(int shard, double partial)
{
  sandblaster_answer_msg *m = sandblaster_msg_alloc(sizeof(*m), SANDBLASTER_MSG_ANSWER);
  m->shard = shard;
  m->partial = partial;
  return m;
}

static inline sandblaster_fetch_msg *sandblaster_fetch_msg_create(int replica, int machine, int slot)
{
  sandblaster_fetch_msg *m = sandblaster_msg_alloc(sizeof(*m), SANDBLASTER_MSG_FETCH);
  m->replica = replica;
  m->machine = machine;
  m->slot = slot;
  return m;
}

/* Room for n elements. */
static inline sandblaster_slice_msg *sandblaster_slice_msg_create(int shard, size_t n)
{
  sandblaster_slice_msg *m = sandblaster_msg_alloc(sizeof(*m) + n * sizeof(double), SANDBLASTER_MSG_SLICE);
  m->shard = shard;
  m->n = n;
  return m;
}

/* Room for n elements. */
static inline sandblaster_push_total_msg *sandblaster_push_total_msg_create(int replica, int machine, long batch,
                                                                            long counted, size_t n)
{
  sandblaster_push_total_msg *m =
      sandblaster_msg_alloc(sizeof(*m) + n * sizeof(double), SANDBLASTER_MSG_PUSH_TOTAL);
  m->replica = replica;
  m->machine = machine;
  m->batch = batch;
  m->counted = counted;
  m->n = n;
  return m;
}

/* Room for k ids and k gradients of len. */
static inline sandblaster_push_portions_msg *sandblaster_push_portions_msg_create(int replica, long batch, size_t k,
                                                                                  size_t len)
{
  sandblaster_push_portions_msg *m =
      sandblaster_msg_alloc(sizeof(*m) + k * len * sizeof(double) + k * sizeof(long), SANDBLASTER_MSG_PUSH_PORTIONS);
  m->replica = replica;
  m->batch = batch;
  m->k = k;
  m->len = len;
  m->ids = (long *)(m->grads + k * len);
  return m;
}

/* counts == NULL: no verdict (judged 0, n 0); else its n flags are copied. */
static inline sandblaster_portion_msg *sandblaster_portion_msg_create(long batch, long portion, int slot_x,
                                                                      const char *counts, size_t n)
{
  size_t k = counts ? n : 0;
  sandblaster_portion_msg *m = sandblaster_msg_alloc(sizeof(*m) + k, SANDBLASTER_MSG_PORTION);
  m->batch = batch;
  m->portion = portion;
  m->slot_x = slot_x;
  m->judged = counts != NULL;
  m->n = k;
  if (k)
    memcpy(m->counts, counts, k);
  return m;
}

/* Room for n ids and losses. */
static inline sandblaster_done_msg *sandblaster_done_msg_create(int replica, long batch, size_t n)
{
  sandblaster_done_msg *m =
      sandblaster_msg_alloc(sizeof(*m) + n * (sizeof(double) + sizeof(long)), SANDBLASTER_MSG_DONE);
  m->replica = replica;
  m->batch = batch;
  m->n = n;
  m->ids = (long *)(m->loss + n);
  return m;
}

/* Room for n values. */
static inline sandblaster_part_msg *sandblaster_part_msg_create(long batch, int slot_x, long portion, long step,
                                                                long counted, int stop, size_t n)
{
  sandblaster_part_msg *m = sandblaster_msg_alloc(sizeof(*m) + n * sizeof(double), SANDBLASTER_MSG_PART);
  m->n = n;
  m->batch = batch;
  m->slot_x = slot_x;
  m->portion = portion;
  m->step = step;
  m->counted = counted;
  m->stop = stop;
  return m;
}

/* Room for n parts, set to NULL; msg_free frees the parts with it. */
static inline sandblaster_bundle_msg *sandblaster_bundle_msg_create(size_t n)
{
  return msg_bundle_create(SANDBLASTER_MSG_BUNDLE, 0, n);
}

static inline sandblaster_stop_msg *sandblaster_stop_msg_create(void)
{
  return sandblaster_msg_alloc(sizeof(sandblaster_stop_msg), SANDBLASTER_MSG_STOP);
}

static inline sandblaster_death_msg *sandblaster_death_msg_create(int replica)
{
  sandblaster_death_msg *m = sandblaster_msg_alloc(sizeof(*m), SANDBLASTER_MSG_DEATH);
  m->replica = replica;
  return m;
}

/* m if it is of `kind`; aborts on any other kind (a broken protocol). */
static inline msg *sandblaster_msg_check(msg *m, sandblaster_msg_kind kind)
{
  xbt_assert(m->kind == (int)kind, "sandblaster: expected message kind %d, got %d", (int)kind, m->kind);
  return m;
}

/* Down-casts: m as that kind of message; abort if it is of any other kind. */
static inline sandblaster_command_msg *sandblaster_command_msg_of(msg *m)
{
  return (sandblaster_command_msg *)sandblaster_msg_check(m, SANDBLASTER_MSG_COMMAND);
}
static inline sandblaster_reduce_msg *sandblaster_reduce_msg_of(msg *m)
{
  return (sandblaster_reduce_msg *)sandblaster_msg_check(m, SANDBLASTER_MSG_REDUCE);
}
static inline sandblaster_forget_msg *sandblaster_forget_msg_of(msg *m)
{
  return (sandblaster_forget_msg *)sandblaster_msg_check(m, SANDBLASTER_MSG_FORGET);
}
static inline sandblaster_answer_msg *sandblaster_answer_msg_of(msg *m)
{
  return (sandblaster_answer_msg *)sandblaster_msg_check(m, SANDBLASTER_MSG_ANSWER);
}
static inline sandblaster_fetch_msg *sandblaster_fetch_msg_of(msg *m)
{
  return (sandblaster_fetch_msg *)sandblaster_msg_check(m, SANDBLASTER_MSG_FETCH);
}
static inline sandblaster_slice_msg *sandblaster_slice_msg_of(msg *m)
{
  return (sandblaster_slice_msg *)sandblaster_msg_check(m, SANDBLASTER_MSG_SLICE);
}
static inline sandblaster_push_total_msg *sandblaster_push_total_msg_of(msg *m)
{
  return (sandblaster_push_total_msg *)sandblaster_msg_check(m, SANDBLASTER_MSG_PUSH_TOTAL);
}
static inline sandblaster_push_portions_msg *sandblaster_push_portions_msg_of(msg *m)
{
  return (sandblaster_push_portions_msg *)sandblaster_msg_check(m, SANDBLASTER_MSG_PUSH_PORTIONS);
}
static inline sandblaster_portion_msg *sandblaster_portion_msg_of(msg *m)
{
  return (sandblaster_portion_msg *)sandblaster_msg_check(m, SANDBLASTER_MSG_PORTION);
}
static inline sandblaster_done_msg *sandblaster_done_msg_of(msg *m)
{
  return (sandblaster_done_msg *)sandblaster_msg_check(m, SANDBLASTER_MSG_DONE);
}
static inline sandblaster_death_msg *sandblaster_death_msg_of(msg *m)
{
  return (sandblaster_death_msg *)sandblaster_msg_check(m, SANDBLASTER_MSG_DEATH);
}
static inline sandblaster_bundle_msg *sandblaster_bundle_msg_of(msg *m)
{
  return (sandblaster_bundle_msg *)sandblaster_msg_check(m, SANDBLASTER_MSG_BUNDLE);
}
static inline sandblaster_part_msg *sandblaster_part_msg_of(msg *m)
{
  return (sandblaster_part_msg *)sandblaster_msg_check(m, SANDBLASTER_MSG_PART);
}

#endif

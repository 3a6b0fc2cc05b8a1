#ifndef ALGORITHMS_PS_MSG_H
#define ALGORITHMS_PS_MSG_H
/* ps_msg.h - the messages of Downpour's parameter-server protocol (Dean et al. 2012,
 * section 4.1): clients fetch parameters from and push gradients to the shards, say
 * when they are done, and replica 0 releases the others at the end of warmstart.
 * Each is a struct whose first member is the transport's msg; the receiver checks
 * hdr.kind (or uses ps_X_of) before it down-casts, and frees it with msg_free. */

#include <stddef.h>

#include "algorithms/msg.h"

typedef enum ps_msg_kind {
  PS_FETCH = 1, /* client -> shard: send me my values of your slice */
  PS_PARAMS,    /* shard -> client: those values, and the shard's version */
  PS_PUSH,      /* client -> shard: a gradient accrued over its values */
  PS_DONE,      /* client -> shard: it has finished; the shard stops after every client's */
  PS_RELEASE    /* replica 0 -> the others: warmstart is over, start training */
} ps_msg_kind;

typedef struct ps_fetch_msg {
  msg hdr;
  int client;  /* the sender's rank at the shards */
  long serial; /* numbers the client's fetches ([faults]: a late reply is told apart); 0 otherwise */
} ps_fetch_msg;

typedef struct ps_params_msg {
  msg hdr;
  int shard;        /* the sender's rank */
  long serial;      /* the fetch's serial, echoed */
  long version;     /* updates the shard had applied */
  size_t n;         /* values below: 0 when numerics are off */
  double values[];  /* the client's values of the slice, range after range */
} ps_params_msg;

typedef struct ps_push_msg {
  msg hdr;
  int client;      /* the sender's rank at the shards */
  long version;    /* the shard's version when the oldest parameters it was computed on were fetched */
  size_t n;        /* values below: 0 when numerics are off */
  double grad[];   /* the accrued gradient of the client's values of the slice, in fetch order */
} ps_push_msg;

typedef struct ps_done_msg {
  msg hdr;
  int client; /* the sender's rank at the shards */
} ps_done_msg;

typedef struct ps_release_msg {
  msg hdr;
} ps_release_msg;

/* Constructors: each sets hdr.kind and hdr.free_fn; values and grad start zeroed.
 * Never NULL; the receiver frees with msg_free. */
ps_fetch_msg *ps_fetch_create(int client, long serial);
ps_params_msg *ps_params_create(int shard, long serial, long version, size_t n);
ps_push_msg *ps_push_create(int client, long version, size_t n);
ps_done_msg *ps_done_create(int client);
ps_release_msg *ps_release_create(void);

/* m down-cast to the kind, or NULL when it is another kind. */
static inline ps_fetch_msg *ps_fetch_of(msg *m) { return m->kind == PS_FETCH ? (ps_fetch_msg *)m : NULL; }
static inline ps_params_msg *ps_params_of(msg *m) { return m->kind == PS_PARAMS ? (ps_params_msg *)m : NULL; }
static inline ps_push_msg *ps_push_of(msg *m) { return m->kind == PS_PUSH ? (ps_push_msg *)m : NULL; }
static inline ps_done_msg *ps_done_of(msg *m) { return m->kind == PS_DONE ? (ps_done_msg *)m : NULL; }
static inline ps_release_msg *ps_release_of(msg *m) { return m->kind == PS_RELEASE ? (ps_release_msg *)m : NULL; }

#endif

#ifndef ALGORITHMS_PS_MSG_H
#define ALGORITHMS_PS_MSG_H
/* ps_msg.h - the messages of Downpour's parameter-server protocol (Dean et al. 2012,
 * section 4.1): clients fetch parameters from and push gradients to the shards and say
 * when they are done, and replica 0 releases the others at the end of warmstart. */

#include <stddef.h>
#include <string.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/msg.h"
#include "models/compress.h"

typedef enum ps_msg_kind {
  PS_MSG_FETCH = 500, /* client -> shard: send me my values of your slice */
  PS_MSG_PARAMS,      /* shard -> client: those values, and the shard's version */
  PS_MSG_PUSH,        /* client -> shard: a gradient accrued over its values */
  PS_MSG_DONE,        /* client -> shard: it has finished; the shard stops after every client's */
  PS_MSG_RELEASE,     /* replica 0 -> the others: warmstart is over, start training */
  PS_MSG_BANK_PARAMS, /* bank -> client: one PS_MSG_PARAMS from each of the bank's shards (ps_bank.h) */
  PS_MSG_BANK_PUSH    /* client -> bank: one PS_MSG_PUSH for each of the bank's shards */
} ps_msg_kind;

/* PS_MSG_FETCH */
typedef struct ps_fetch_msg {
  msg hdr;
  int client;  /* the sender's rank at the shards */
  long serial; /* numbers the client's fetches ([faults]: a late reply is told apart); 0 otherwise */
} ps_fetch_msg;

/* PS_MSG_PARAMS */
typedef struct ps_params_msg {
  msg hdr;
  int shard;        /* the sender's rank */
  long serial;      /* the fetch's serial, echoed */
  long version;     /* updates the shard had applied */
  size_t n;         /* values below: 0 when numerics are off */
  double values[];  /* the client's values of the slice, range after range */
} ps_params_msg;

/* PS_MSG_PUSH */
typedef struct ps_push_msg {
  msg hdr;
  int client;      /* the sender's rank at the shards */
  long version;    /* the shard's version of the oldest parameters the gradients were computed on */
  size_t n;        /* values below: 0 when numerics are off */
  int *served;     /* [faults]: set to 1 by the shard that takes the message (its sender then
                      knows, should it die, that the message is the shard's to free); or NULL */
  long step;       /* downpour.compress: the client's step (top-k's warm-up sets its k) */
  compress_msg z;  /* downpour.compress: the slice's compressed form, its arrays in grad's place
                      (ps_compress.h); z.method COMPRESS_NONE: grad holds the values */
  double grad[];   /* the accrued gradient of the client's values of the slice, in fetch order */
} ps_push_msg;

/* PS_MSG_DONE */
typedef struct ps_done_msg {
  msg hdr;
  int client; /* the sender's rank at the shards */
} ps_done_msg;

/* PS_MSG_RELEASE */
typedef struct ps_release_msg {
  msg hdr;
} ps_release_msg;

/* PS_MSG_BANK_PARAMS and PS_MSG_BANK_PUSH: the messages of a bank's shards travelling as
 * one (ps_bank.h), in the bank's shard order: a msg_bundle (msg.h); client is a push's
 * sender. */
typedef msg_bundle ps_bundle_msg;

static inline void ps_msg_free(msg *m) { xbt_free(m); }

/* Every message of the protocol is one allocation, its values included. */
static inline void *ps_msg_alloc(size_t size, ps_msg_kind kind)
{
  msg *m = xbt_malloc(size);
  m->kind = (int)kind;
  m->free_fn = ps_msg_free;
  return m;
}

/* Constructors: values and grad are uninitialised. Never NULL; the receiver frees the
 * message with msg_free. */
static inline ps_fetch_msg *ps_fetch_msg_create(int client, long serial)
{
  ps_fetch_msg *m = ps_msg_alloc(sizeof(*m), PS_MSG_FETCH);
  m->client = client;
  m->serial = serial;
  return m;
}

static inline ps_params_msg *ps_params_msg_create(int shard, long serial, long version, size_t n)
{
  ps_params_msg *m = ps_msg_alloc(sizeof(*m) + n * sizeof(double), PS_MSG_PARAMS);
  m->shard = shard;
  m->serial = serial;
  m->version = version;
  m->n = n;
  return m;
}

/* A dense push of n values, or, with held > 0 bytes in grad's place, the room for a
 * compressed one (ps_compress_push lays it out; z is left COMPRESS_NONE here). */
static inline ps_push_msg *ps_push_msg_sized(int client, long version, size_t n, size_t held)
{
  ps_push_msg *m = ps_msg_alloc(sizeof(*m) + held, PS_MSG_PUSH);
  m->client = client;
  m->version = version;
  m->n = n;
  m->served = NULL;
  m->step = 0;
  memset(&m->z, 0, sizeof(m->z));
  return m;
}

static inline ps_push_msg *ps_push_msg_create(int client, long version, size_t n)
{
  return ps_push_msg_sized(client, version, n, n * sizeof(double));
}

static inline ps_done_msg *ps_done_msg_create(int client)
{
  ps_done_msg *m = ps_msg_alloc(sizeof(*m), PS_MSG_DONE);
  m->client = client;
  return m;
}

static inline ps_release_msg *ps_release_msg_create(void)
{
  return ps_msg_alloc(sizeof(ps_release_msg), PS_MSG_RELEASE);
}

/* A bundle of room for n parts (set to NULL), of kind PS_MSG_BANK_PARAMS or PS_MSG_BANK_PUSH;
 * msg_free frees the parts with it. */
static inline ps_bundle_msg *ps_bundle_msg_create(ps_msg_kind kind, int client, size_t n)
{
  xbt_assert(kind == PS_MSG_BANK_PARAMS || kind == PS_MSG_BANK_PUSH, "a bundle of kind %d", (int)kind);
  return msg_bundle_create((int)kind, client, n);
}

/* m down-cast to the kind; aborts if it is of any other kind. */
static inline ps_fetch_msg *ps_fetch_msg_of(msg *m)
{
  xbt_assert(m->kind == PS_MSG_FETCH, "expected a parameter fetch, got message kind %d", m->kind);
  return (ps_fetch_msg *)m;
}

static inline ps_params_msg *ps_params_msg_of(msg *m)
{
  xbt_assert(m->kind == PS_MSG_PARAMS, "expected a shard's parameters, got message kind %d", m->kind);
  return (ps_params_msg *)m;
}

static inline ps_push_msg *ps_push_msg_of(msg *m)
{
  xbt_assert(m->kind == PS_MSG_PUSH, "expected a gradient push, got message kind %d", m->kind);
  return (ps_push_msg *)m;
}

static inline ps_done_msg *ps_done_msg_of(msg *m)
{
  xbt_assert(m->kind == PS_MSG_DONE, "expected a client's done, got message kind %d", m->kind);
  return (ps_done_msg *)m;
}

static inline ps_bundle_msg *ps_bundle_msg_of(msg *m)
{
  xbt_assert(m->kind == PS_MSG_BANK_PARAMS || m->kind == PS_MSG_BANK_PUSH, "expected a bank's bundle, got message kind %d",
             m->kind);
  return (ps_bundle_msg *)m;
}

static inline ps_release_msg *ps_release_msg_of(msg *m)
{
  xbt_assert(m->kind == PS_MSG_RELEASE, "expected the warmstart release, got message kind %d", m->kind);
  return (ps_release_msg *)m;
}

#endif

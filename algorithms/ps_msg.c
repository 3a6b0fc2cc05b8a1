/* ps_msg.c - constructors of the parameter-server protocol's messages. */
#include "algorithms/ps_msg.h"

#include <xbt/sysdep.h>

/* Every message of the protocol is one allocation, its values included. */
static void ps_msg_free(msg *m)
{
  xbt_free(m);
}

static void *ps_msg_alloc(size_t size, ps_msg_kind kind)
{
  msg *m = xbt_malloc0(size);
  m->kind = (int)kind;
  m->free_fn = ps_msg_free;
  return m;
}

ps_fetch_msg *ps_fetch_create(int client, long serial)
{
  ps_fetch_msg *m = ps_msg_alloc(sizeof(*m), PS_FETCH);
  m->client = client;
  m->serial = serial;
  return m;
}

ps_params_msg *ps_params_create(int shard, long serial, long version, size_t n)
{
  ps_params_msg *m = ps_msg_alloc(sizeof(*m) + n * sizeof(double), PS_PARAMS);
  m->shard = shard;
  m->serial = serial;
  m->version = version;
  m->n = n;
  return m;
}

ps_push_msg *ps_push_create(int client, long version, size_t n)
{
  ps_push_msg *m = ps_msg_alloc(sizeof(*m) + n * sizeof(double), PS_PUSH);
  m->client = client;
  m->version = version;
  m->n = n;
  return m;
}

ps_done_msg *ps_done_create(int client)
{
  ps_done_msg *m = ps_msg_alloc(sizeof(*m), PS_DONE);
  m->client = client;
  return m;
}

ps_release_msg *ps_release_create(void)
{
  return ps_msg_alloc(sizeof(ps_release_msg), PS_RELEASE);
}

/* ps_compress.c - a Downpour client's compressed pushes: one error-feedback state per slice
 * it pushes, the message holding the slice's compressed form in one allocation, and the
 * shard's decoding. */
#include "algorithms/ps_compress.h"

#include <math.h>
#include <string.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "models/rng.h"

struct ps_compress {
  compress_params p;
  const ps_layout *lay;
  compress_state **st; /* [link]: NULL without numerics or for a link holding no values */
  gsl_rng *rng;        /* QSGD's draws, link after link */
};

ps_compress *ps_compress_create(const compress_params *p, const ps_layout *lay, int numerics, uint64_t seed,
                                int client)
{
  if (p->method == COMPRESS_NONE || p->method == COMPRESS_POWERSGD)
    return NULL;
  ps_compress *c = xbt_malloc0(sizeof(*c));
  c->p = *p;
  c->lay = lay;
  c->st = xbt_malloc0((lay->n_links + 1) * sizeof(compress_state *));
  for (size_t i = 0; numerics && i < lay->n_links; i++) {
    if (lay->link[i].values == 0)
      continue;
    c->st[i] = compress_state_create(p, 1, lay->link[i].values, NULL);
    if (c->st[i] == NULL) {
      ps_compress_free(c);
      return NULL;
    }
  }
  c->rng = rng_create(seed, RNG_ROLE_QSGD, client);
  return c;
}

void ps_compress_free(ps_compress *c)
{
  if (c == NULL)
    return;
  for (size_t i = 0; i < c->lay->n_links; i++)
    compress_state_free(c->st[i]);
  xbt_free(c->st);
  if (c->rng)
    gsl_rng_free(c->rng);
  xbt_free(c);
}

ps_push_msg *ps_compress_push(ps_compress *c, size_t i, int client, long version, const double *acc, long step)
{
  xbt_assert(i < c->lay->n_links, "ps_compress_push: link %zu of %zu", i, c->lay->n_links);
  const ps_link *k = &c->lay->link[i];
  compress_state *s = acc ? c->st[i] : NULL;
  xbt_assert(acc == NULL || k->values == 0 || s != NULL, "ps_compress_push: numerics without a state");
  size_t held = s ? compress_msg_place(s, step, NULL, NULL) : 0;
  ps_push_msg *m = ps_push_msg_sized(client, version, s ? k->values : 0, held);
  m->step = step;
  if (s) {
    compress_msg_place(s, step, &m->z, m->grad);
    compress_encode(s, acc + k->offset, step, c->rng, &m->z);
  } else {
    m->z.method = c->p.method; /* timing only: the size travels, no values */
  }
  return m;
}

double ps_compress_bytes(const compress_params *p, double sim_elems, long step, size_t elem_bytes)
{
  if (sim_elems < 1)
    return 0;
  return ceil(compress_wire_bytes(p, 1, (size_t)sim_elems, step, elem_bytes));
}

double ps_compress_encode_flops(const ps_compress *c, long step)
{
  double sum = 0;
  for (size_t i = 0; i < c->lay->n_links; i++)
    if (c->lay->link[i].sim_elems >= 1)
      sum += compress_encode_flops(&c->p, 1, (size_t)c->lay->link[i].sim_elems, step);
  return sum;
}

double ps_compress_decode_flops(const compress_params *p, double sim_elems, long step)
{
  return sim_elems < 1 ? 0 : compress_decode_flops(p, 1, (size_t)sim_elems, step, 1);
}

void ps_compress_decode(const ps_push_msg *m, double *out)
{
  memset(out, 0, m->n * sizeof(double));
  if (m->n)
    compress_decode_add(&m->z, out);
}

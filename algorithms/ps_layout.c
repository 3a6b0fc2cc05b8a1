/* ps_layout.c - shard slices, client layouts, accrual and update rule of Downpour's
 * parameter server. */
#include "algorithms/ps_layout.h"

#include <string.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "models/data.h"
#include "models/optim.h"

void ps_slice(size_t n, size_t S, size_t s, size_t *begin, size_t *end)
{
  xbt_assert(S > 0 && s < S, "ps_slice: shard %zu of %zu", s, S);
  data_shard_bounds(n, S, s, begin, end);
}

size_t ps_ranges_len(const size_t *rb, const size_t *re, size_t n)
{
  size_t len = 0;
  for (size_t j = 0; j < n; j++)
    len += re[j] - rb[j];
  return len;
}

int ps_ranges_inside(const size_t *rb, const size_t *re, size_t n, size_t begin, size_t end)
{
  for (size_t j = 0; j < n; j++)
    if (rb[j] >= re[j] || rb[j] < begin || re[j] > end || (j > 0 && rb[j] < re[j - 1]))
      return 0;
  return 1;
}

size_t ps_ranges_gather(double *out, const double *v, size_t base, const size_t *rb, const size_t *re, size_t n)
{
  size_t at = 0;
  for (size_t j = 0; j < n; j++) {
    memcpy(out + at, v + (rb[j] - base), (re[j] - rb[j]) * sizeof(double));
    at += re[j] - rb[j];
  }
  return at;
}

size_t ps_ranges_scatter(double *v, size_t base, const double *in, const size_t *rb, const size_t *re, size_t n)
{
  size_t at = 0;
  for (size_t j = 0; j < n; j++) {
    memcpy(v + (rb[j] - base), in + at, (re[j] - rb[j]) * sizeof(double));
    at += re[j] - rb[j];
  }
  return at;
}

static ps_layout *layout_alloc(size_t S)
{
  ps_layout *l = xbt_malloc0(sizeof(*l));
  l->link = xbt_malloc0((S + 1) * sizeof(ps_link));
  return l;
}

/* Appends a link to shard s holding the n ranges (the arrays are handed over). */
static void add_link(ps_layout *l, int s, size_t *rb, size_t *re, size_t n, double sim_elems)
{
  ps_link *k = &l->link[l->n_links++];
  k->shard = s;
  k->n_ranges = n;
  k->rb = rb;
  k->re = re;
  k->offset = l->n_values;
  k->values = ps_ranges_len(rb, re, n);
  k->sim_elems = sim_elems;
  l->n_values += k->values;
}

ps_layout *ps_layout_whole(size_t n_params, size_t sim_params, size_t S)
{
  ps_layout *l = layout_alloc(S);
  for (size_t s = 0; s < S; s++) {
    size_t b, e, sb, se;
    ps_slice(n_params, S, s, &b, &e);
    ps_slice(sim_params, S, s, &sb, &se);
    size_t *rb = xbt_malloc(sizeof(size_t)), *re = xbt_malloc(sizeof(size_t));
    *rb = b;
    *re = e;
    add_link(l, (int)s, rb, re, e > b ? 1 : 0, (double)(se - sb));
  }
  return l;
}

/* Partition p's parameters in [begin, end) into fresh arrays (arch_plan_param_ranges);
 * returns their number. */
static size_t own_ranges(const arch_plan *plan, size_t p, size_t begin, size_t end, size_t **rb, size_t **re)
{
  size_t n = arch_plan_param_ranges(plan, p, begin, end, NULL, NULL, 0);
  *rb = xbt_malloc((n + 1) * sizeof(size_t));
  *re = xbt_malloc((n + 1) * sizeof(size_t));
  arch_plan_param_ranges(plan, p, begin, end, *rb, *re, n);
  return n;
}

ps_layout *ps_layout_partition(const arch_plan *plan, size_t p, size_t n_params, size_t sim_params, size_t S)
{
  xbt_assert(p < arch_plan_parts(plan), "ps_layout_partition: partition %zu of %zu", p, arch_plan_parts(plan));
  ps_layout *l = layout_alloc(S);
  for (size_t s = 0; s < S; s++) {
    size_t b, e, *rb, *re;
    ps_slice(sim_params, S, s, &b, &e);
    size_t n = own_ranges(plan, p, b, e, &rb, &re); /* the simulated parameters: only their number counts */
    size_t sim = ps_ranges_len(rb, re, n);
    xbt_free(rb);
    xbt_free(re);
    ps_slice(n_params, S, s, &b, &e);
    n = own_ranges(plan, p, b, e, &rb, &re);
    if (sim == 0 && n == 0) { /* Dean'12 4.1: a partition talks only to the shards holding its parameters */
      xbt_free(rb);
      xbt_free(re);
      continue;
    }
    add_link(l, (int)s, rb, re, n, (double)sim);
  }
  return l;
}

ps_layout *ps_layout_proxy(const arch_plan *plan, size_t p, size_t n_params, size_t sim_params, size_t S)
{
  size_t P = arch_plan_parts(plan);
  xbt_assert(p < P, "ps_layout_proxy: partition %zu of %zu", p, P);
  ps_layout *l = layout_alloc(S);
  for (size_t s = 0; s < S; s++) {
    size_t b, e, rank = 0, linkers = 0, sim = 0;
    ps_slice(sim_params, S, s, &b, &e);
    for (size_t q = 0; q < P; q++) { /* the partitions holding simulated parameters of shard s */
      size_t *rb, *re, n = own_ranges(plan, q, b, e, &rb, &re), len = ps_ranges_len(rb, re, n);
      xbt_free(rb);
      xbt_free(re);
      if (len == 0)
        continue;
      if (q == p) {
        rank = linkers;
        sim = len;
      }
      linkers++;
    }
    if (sim == 0) /* Dean'12 4.1: a partition talks only to the shards holding its parameters */
      continue;
    size_t nb, ne, kb, ke; /* block `rank` of the shard's numeric slice among its `linkers` partitions */
    ps_slice(n_params, S, s, &nb, &ne);
    data_shard_bounds(ne - nb, linkers, rank, &kb, &ke);
    size_t *rb = xbt_malloc(sizeof(size_t)), *re = xbt_malloc(sizeof(size_t));
    *rb = nb + kb;
    *re = nb + ke;
    add_link(l, (int)s, rb, re, ke > kb ? 1 : 0, (double)sim);
  }
  return l;
}

void ps_layout_free(ps_layout *l)
{
  if (l == NULL)
    return;
  for (size_t i = 0; i < l->n_links; i++) {
    xbt_free(l->link[i].rb);
    xbt_free(l->link[i].re);
  }
  xbt_free(l->link);
  xbt_free(l);
}

int ps_layout_find(const ps_layout *l, int s)
{
  if (s >= 0 && (size_t)s < l->n_links && l->link[s].shard == s) /* a whole replica's */
    return s;
  for (size_t i = 0; i < l->n_links; i++)
    if (l->link[i].shard == s)
      return (int)i;
  return -1;
}

void ps_layout_accrue(const ps_layout *l, double *acc, const double *g, int first)
{
  for (size_t i = 0; i < l->n_links; i++) {
    const ps_link *k = &l->link[i];
    for (size_t j = 0; j < k->n_ranges; j++)
      for (size_t e = k->rb[j]; e < k->re[j]; e++, acc++)
        *acc = first ? g[e] : *acc + g[e];
  }
}

void ps_rule_apply(ps_rule rule, double *w, double *acc, size_t base, const size_t *rb, const size_t *re, size_t n,
                   const double *g)
{
  for (size_t j = 0; j < n; j++) {
    size_t off = rb[j] - base, len = re[j] - rb[j];
    if (rule.adagrad)
      optim_adagrad_apply(w + off, acc + off, g, len, rule.gamma);
    else
      optim_sgd_apply(w + off, g, len, rule.lr);
    g += len;
  }
}

size_t ps_place_client(size_t M, size_t S, size_t c, int spread)
{
  xbt_assert(c < M, "ps_place_client: client %zu of %zu", c, M);
  if (!spread || S == 0)
    return c;
  return c + ((c + 1) * S + M - 1) / M - 1; /* the shards placed before it: ceil((c + 1) S / M) - 1 */
}

size_t ps_place_shard(size_t M, size_t S, size_t s, int spread)
{
  xbt_assert(s < S, "ps_place_shard: shard %zu of %zu", s, S);
  return spread ? (s + 1) * M / S + s : M + s; /* right after the (s+1)-th of S groups of clients */
}

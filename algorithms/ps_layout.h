#ifndef ALGORITHMS_PS_LAYOUT_H
#define ALGORITHMS_PS_LAYOUT_H
/* ps_layout.h - where Downpour's parameters live (Dean et al. 2012, section 4.1): the
 * slice of the parameter vector each of S parameter-server shards holds, what a client
 * (a whole replica, or one machine of a replica split as in section 3) exchanges with
 * which shard, and the arithmetic on those values: gradients accrued over n_push steps
 * and the update rule a shard applies. Pure functions of their arguments: no actors,
 * no simulated time. */

#include <stddef.h>

#include "models/arch.h"

/* A shard's update rule for each pushed gradient. */
typedef struct ps_rule {
  double lr;    /* fixed-rate SGD step */
  int adagrad;  /* 1: per-parameter Adagrad with gamma below */
  double gamma;
} ps_rule;

/* What a client exchanges with one shard. */
typedef struct ps_link {
  int shard;         /* the shard's rank */
  size_t n_ranges;   /* numeric ranges [rb[j], re[j]) of the whole vector, increasing, in the shard's slice */
  size_t *rb, *re;
  size_t offset;     /* where their values start in the client's packed values */
  size_t values;     /* numeric values in the ranges */
  double sim_elems;  /* simulated elements they stand for: what sets the messages' sizes */
} ps_link;

/* A client's links, in shard rank order, and the values they hold together. */
typedef struct ps_layout {
  size_t n_links;
  ps_link *link;
  size_t n_values; /* sum of the links' values: the length of the client's packed values */
} ps_layout;

/* Shard s of S holds elements [*begin, *end) of an n-element vector: contiguous slices
 * in rank order whose lengths differ by at most one, the longer ones first (as
 * data_shard_bounds). S = 0 or s >= S aborts. */
void ps_slice(size_t n, size_t S, size_t s, size_t *begin, size_t *end);

/* Elements in the n ranges [rb[j], re[j]). */
size_t ps_ranges_len(const size_t *rb, const size_t *re, size_t n);
/* 1 if the n ranges are non-empty, increasing, disjoint and inside [begin, end); else 0. */
int ps_ranges_inside(const size_t *rb, const size_t *re, size_t n, size_t begin, size_t end);
/* Packs the ranges' elements of v, where v[k - base] holds element k, into out, range
 * after range; returns how many it wrote. */
size_t ps_ranges_gather(double *out, const double *v, size_t base, const size_t *rb, const size_t *re, size_t n);
/* The inverse of ps_ranges_gather: in's values go to the ranges' elements of v;
 * returns how many it read. */
size_t ps_ranges_scatter(double *v, size_t base, const double *in, const size_t *rb, const size_t *re, size_t n);

/* A whole replica: a link to each of the S shards with its whole slice of the n_params
 * numeric parameters (one range, none when the slice is empty; n_params = 0: timing
 * only) and of the sim_params simulated ones. Never NULL; free with ps_layout_free. */
ps_layout *ps_layout_whole(size_t n_params, size_t sim_params, size_t S);
/* Partition p of a replica split by plan: a link to every shard whose slice holds
 * parameters of p (arch_plan_param_ranges), numeric ones (slices of n_params, in
 * archnet's layout; 0: timing only) or simulated ones (slices of sim_params, the
 * plan's network), carrying just those. p >= arch_plan_parts(plan) aborts. Never NULL;
 * free with ps_layout_free. */
ps_layout *ps_layout_partition(const arch_plan *plan, size_t p, size_t n_params, size_t sim_params, size_t S);
/* Partition p of a replica of a virtual network split by plan while a small numeric model
 * of n_params parameters trains in its place (a proxy): the links of ps_layout_partition's
 * simulated parameters (slices of sim_params, the plan's network), and for numerics each
 * shard's slice of n_params cut, as data_shard_bounds cuts rows, among the partitions that
 * hold simulated parameters of that shard, in partition order, p taking its block: so the
 * replica's machines exchange every numeric value once, each with a shard it talks to
 * anyway. p >= arch_plan_parts(plan) aborts. Never NULL; free with ps_layout_free. */
ps_layout *ps_layout_proxy(const arch_plan *plan, size_t p, size_t n_params, size_t sim_params, size_t S);
void ps_layout_free(ps_layout *l);
/* The index of the link to shard s, or -1 when the client does not talk to s. */
int ps_layout_find(const ps_layout *l, int s);

/* Where M clients and S shards sit among M + S hosts, as indices 0..M+S-1. Not spread:
 * the clients first, in order, then the shards. Spread: the clients in order cut into S
 * groups (group s ends after client floor((s+1) M / S) - 1), each followed by its shard,
 * so that shards share the clients' racks in proportion, whatever the rack size. Either
 * way every index is taken exactly once. c >= M or s >= S aborts. */
size_t ps_place_client(size_t M, size_t S, size_t c, int spread);
size_t ps_place_shard(size_t M, size_t S, size_t s, int spread);

/* Dean'12 4.1: accrues one step's gradient into the client's packed values acc
 * (l->n_values): g is the whole gradient (element k at g[k]); the first step of an
 * accrual (first != 0) sets acc to g's values of the links' ranges, later ones add
 * them, element by element. */
void ps_layout_accrue(const ps_layout *l, double *acc, const double *g, int first);

/* Applies a pushed gradient g (the packed values of the n ranges) to a shard's slice w,
 * where w[k - base] holds element k, and with Adagrad to its sums of squares acc (same
 * positions), range after range with models/optim's arithmetic. */
void ps_rule_apply(ps_rule rule, double *w, double *acc, size_t base, const size_t *rb, const size_t *re, size_t n,
                   const double *g);

#endif

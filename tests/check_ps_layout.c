/* check_ps_layout.c - Downpour's parameter layout without a simulation: the shards'
 * slices, the ranges helpers, whole and partitioned clients' layouts (known answers
 * worked out by hand, edge cases, and the coverage invariants), a proxy's layout, where
 * clients and shards sit among the hosts, the accrual of gradients and the shards'
 * update rule. */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/ps_layout.h"
#include "models/arch.h"

#include "check_util.h"

/* Adagrad's step gamma / sqrt(acc) * g rounds twice (the quotient, the product) and
 * the subtraction once more: a few ulps of numbers near 1 (2^-52 = 2.2e-16 each). */
#define ADAGRAD_TOL 1e-15
/* Every other expected value here is an integer or a dyadic fraction: exact. */

/* The known-answer net: input of 2, dense 3, dense 2. archnet's layout puts layer 1's
 * unit u at [3u, 3u + 3) (2 weights, 1 bias) and layer 2's at [9 + 4u, 13 + 4u)
 * (3 weights, 1 bias): 17 parameters. */
static arch *small_net(void)
{
  arch *a = arch_create();
  ck_assert_int_eq(arch_add_input(a, 2, 1, 1), 0);
  ck_assert_int_eq(arch_add_dense(a, 3), 0);
  ck_assert_int_eq(arch_add_dense(a, 2), 0);
  ck_assert(arch_params(a) == 17);
  return a;
}

/* Asserts that link i of l goes to shard s with the n ranges [rb[j], re[j]) at offset. */
static void assert_link(const ps_layout *l, size_t i, int s, const size_t *rb, const size_t *re, size_t n,
                        size_t offset, double sim)
{
  ck_assert_uint_lt(i, l->n_links);
  const ps_link *k = &l->link[i];
  ck_assert_int_eq(k->shard, s);
  ck_assert_uint_eq(k->n_ranges, n);
  for (size_t j = 0; j < n; j++) {
    ck_assert_uint_eq(k->rb[j], rb[j]);
    ck_assert_uint_eq(k->re[j], re[j]);
  }
  ck_assert_uint_eq(k->offset, offset);
  ck_assert_uint_eq(k->values, ps_ranges_len(rb, re, n));
  ck_assert(k->sim_elems == sim);
}

/* ---- slices -------------------------------------------------------------- */

/* 17 over 3: 17 = 3 * 5 + 2, so the first two shards hold 6 and the last 5. */
START_TEST(test_slice_known)
{
  size_t b, e;
  const size_t want[3][2] = {{0, 6}, {6, 12}, {12, 17}};
  for (size_t s = 0; s < 3; s++) {
    ps_slice(17, 3, s, &b, &e);
    ck_assert_uint_eq(b, want[s][0]);
    ck_assert_uint_eq(e, want[s][1]);
  }
  ps_slice(10, 1, 0, &b, &e); /* one shard holds everything */
  ck_assert_uint_eq(b, 0);
  ck_assert_uint_eq(e, 10);
  ps_slice(2, 4, 3, &b, &e); /* more shards than elements: the last ones are empty */
  ck_assert_uint_eq(b, 2);
  ck_assert_uint_eq(e, 2);
}
END_TEST

/* For every n and S: the slices follow each other from 0 to n (each element once),
 * their lengths differ by at most one and the longer come first. */
START_TEST(test_slice_cover)
{
  for (size_t n = 0; n <= 60; n++)
    for (size_t S = 1; S <= 9; S++) {
      size_t at = 0, first = 0, prev = 0;
      for (size_t s = 0; s < S; s++) {
        size_t b, e;
        ps_slice(n, S, s, &b, &e);
        ck_assert_uint_eq(b, at);
        ck_assert_uint_le(b, e);
        if (s == 0)
          first = e - b;
        ck_assert_uint_le(e - b, first);
        ck_assert_uint_le(first - (e - b), 1);
        if (s > 0)
          ck_assert_uint_le(e - b, prev);
        prev = e - b;
        at = e;
      }
      ck_assert_uint_eq(at, n);
    }
}
END_TEST

START_TEST(test_slice_no_shards)
{
  size_t b, e;
  ps_slice(10, 0, 0, &b, &e);
}
END_TEST

/* ---- ranges -------------------------------------------------------------- */

START_TEST(test_ranges)
{
  const size_t rb[] = {11, 14}, re[] = {13, 17};
  ck_assert_uint_eq(ps_ranges_len(rb, re, 2), 5);
  ck_assert_uint_eq(ps_ranges_len(rb, re, 0), 0);
  ck_assert(ps_ranges_inside(rb, re, 2, 10, 17));
  ck_assert(ps_ranges_inside(rb, re, 2, 11, 17));
  ck_assert(!ps_ranges_inside(rb, re, 2, 12, 17)); /* starts before the slice */
  ck_assert(!ps_ranges_inside(rb, re, 2, 10, 16)); /* ends after it */
  ck_assert(ps_ranges_inside(NULL, NULL, 0, 5, 5));
  const size_t eb[] = {3}, ee[] = {3};
  ck_assert(!ps_ranges_inside(eb, ee, 1, 0, 10)); /* empty range */
  const size_t ob[] = {2, 4}, oe[] = {5, 6};
  ck_assert(!ps_ranges_inside(ob, oe, 2, 0, 10)); /* overlapping */
  const size_t db[] = {6, 2}, de[] = {8, 4};
  ck_assert(!ps_ranges_inside(db, de, 2, 0, 10)); /* decreasing */
  const size_t tb[] = {2, 4}, te[] = {4, 6};
  ck_assert(ps_ranges_inside(tb, te, 2, 0, 10)); /* touching is fine */
}
END_TEST

/* v holds elements 10..17; the ranges [11, 13) and [14, 17) pack as 11 12 14 15 16. */
START_TEST(test_ranges_gather_scatter)
{
  const size_t rb[] = {11, 14}, re[] = {13, 17};
  double v[8], out[5], back[8];
  for (size_t i = 0; i < 8; i++) {
    v[i] = 10.0 + (double)i;
    back[i] = -1;
  }
  ck_assert_uint_eq(ps_ranges_gather(out, v, 10, rb, re, 2), 5);
  const double want[] = {11, 12, 14, 15, 16};
  for (size_t i = 0; i < 5; i++)
    ck_assert(out[i] == want[i]);
  ck_assert_uint_eq(ps_ranges_scatter(back, 10, out, rb, re, 2), 5);
  const double want_back[] = {-1, 11, 12, -1, 14, 15, 16, -1}; /* outside the ranges: untouched */
  for (size_t i = 0; i < 8; i++)
    ck_assert(back[i] == want_back[i]);
}
END_TEST

/* ---- layouts: known answers ------------------------------------------------ */

/* A whole replica of 17 numeric parameters standing for 100 simulated ones over 3
 * shards: each link is the shard's slice (17: 6 6 5; 100: 34 33 33), packed in order. */
START_TEST(test_whole_known)
{
  ps_layout *l = ps_layout_whole(17, 100, 3);
  ck_assert_uint_eq(l->n_links, 3);
  assert_link(l, 0, 0, (size_t[]){0}, (size_t[]){6}, 1, 0, 34);
  assert_link(l, 1, 1, (size_t[]){6}, (size_t[]){12}, 1, 6, 33);
  assert_link(l, 2, 2, (size_t[]){12}, (size_t[]){17}, 1, 12, 33);
  ck_assert_uint_eq(l->n_values, 17);
  ck_assert_int_eq(ps_layout_find(l, 2), 2);
  ck_assert_int_eq(ps_layout_find(l, 3), -1);
  ps_layout_free(l);
}
END_TEST

/* Edges of a whole replica: more shards than parameters (empty slices keep their link,
 * with no range: the replica still fetches from every shard), one shard, timing only. */
START_TEST(test_whole_edges)
{
  ps_layout *l = ps_layout_whole(2, 2, 4);
  ck_assert_uint_eq(l->n_links, 4);
  assert_link(l, 1, 1, (size_t[]){1}, (size_t[]){2}, 1, 1, 1);
  assert_link(l, 2, 2, NULL, NULL, 0, 2, 0);
  assert_link(l, 3, 3, NULL, NULL, 0, 2, 0);
  ck_assert_uint_eq(l->n_values, 2);
  ps_layout_free(l);
  l = ps_layout_whole(17, 17, 1);
  ck_assert_uint_eq(l->n_links, 1);
  assert_link(l, 0, 0, (size_t[]){0}, (size_t[]){17}, 1, 0, 17);
  ps_layout_free(l);
  l = ps_layout_whole(0, 50, 2);
  assert_link(l, 0, 0, NULL, NULL, 0, 0, 25);
  assert_link(l, 1, 1, NULL, NULL, 0, 0, 25);
  ck_assert_uint_eq(l->n_values, 0);
  ps_layout_free(l);
}
END_TEST

/* small_net split in 2: layer 1's 3 units go 2 + 1, layer 2's 2 go 1 + 1 (the longer
 * block first), so partition 0 owns [0, 6) and [9, 13), partition 1 [6, 9) and
 * [13, 17). Over the 3 shards [0, 6) [6, 12) [12, 17): partition 0 talks to all three
 * ([0, 6) | [9, 12) | [12, 13)), partition 1 only to shards 1 and 2 ([6, 9) | [13, 17)). */
START_TEST(test_partition_known)
{
  arch *a = small_net();
  arch_plan *plan = arch_plan_create(a, 2, 1);
  ps_layout *l0 = ps_layout_partition(plan, 0, 17, 17, 3), *l1 = ps_layout_partition(plan, 1, 17, 17, 3);
  ck_assert_uint_eq(l0->n_links, 3);
  assert_link(l0, 0, 0, (size_t[]){0}, (size_t[]){6}, 1, 0, 6);
  assert_link(l0, 1, 1, (size_t[]){9}, (size_t[]){12}, 1, 6, 3);
  assert_link(l0, 2, 2, (size_t[]){12}, (size_t[]){13}, 1, 9, 1);
  ck_assert_uint_eq(l0->n_values, 10);
  ck_assert_uint_eq(l1->n_links, 2);
  assert_link(l1, 0, 1, (size_t[]){6}, (size_t[]){9}, 1, 0, 3);
  assert_link(l1, 1, 2, (size_t[]){13}, (size_t[]){17}, 1, 3, 4);
  ck_assert_uint_eq(l1->n_values, 7);
  ck_assert_int_eq(ps_layout_find(l1, 0), -1);
  ck_assert_int_eq(ps_layout_find(l1, 2), 1);
  ps_layout_free(l0);
  ps_layout_free(l1);
  arch_plan_free(plan);
  arch_free(a);
}
END_TEST

/* One shard: each partition's two ranges go to shard 0. Timing only (n_params 0): the
 * same shards, no numeric range, simulated counts as above. Three partitions over 2
 * shards [0, 9) [9, 17): layer 1's units go one each, layer 2's 1 + 1 + 0, so
 * partition 2 owns only [6, 9) and talks to shard 0 alone. */
START_TEST(test_partition_edges)
{
  arch *a = small_net();
  arch_plan *plan = arch_plan_create(a, 2, 1);
  ps_layout *l = ps_layout_partition(plan, 0, 17, 17, 1);
  ck_assert_uint_eq(l->n_links, 1);
  assert_link(l, 0, 0, (size_t[]){0, 9}, (size_t[]){6, 13}, 2, 0, 10);
  ps_layout_free(l);
  l = ps_layout_partition(plan, 1, 0, 17, 3);
  ck_assert_uint_eq(l->n_links, 2);
  assert_link(l, 0, 1, NULL, NULL, 0, 0, 3);
  assert_link(l, 1, 2, NULL, NULL, 0, 0, 4);
  ck_assert_uint_eq(l->n_values, 0);
  ps_layout_free(l);
  arch_plan_free(plan);
  plan = arch_plan_create(a, 3, 1);
  ps_layout *l0 = ps_layout_partition(plan, 0, 17, 17, 2), *l2 = ps_layout_partition(plan, 2, 17, 17, 2);
  ck_assert_uint_eq(l0->n_links, 2);
  assert_link(l0, 0, 0, (size_t[]){0}, (size_t[]){3}, 1, 0, 3);
  assert_link(l0, 1, 1, (size_t[]){9}, (size_t[]){13}, 1, 3, 4);
  ck_assert_uint_eq(l2->n_links, 1);
  assert_link(l2, 0, 0, (size_t[]){6}, (size_t[]){9}, 1, 0, 3);
  ps_layout_free(l0);
  ps_layout_free(l2);
  arch_plan_free(plan);
  arch_free(a);
}
END_TEST

/* A proxy of 10 numeric parameters (slices [0, 4) [4, 7) [7, 10) over 3 shards) timed as
 * small_net split in 2 (simulated slices [0, 6) [6, 12) [12, 17), as test_partition_known):
 * shard 0's simulated parameters are all partition 0's, so it takes the whole numeric
 * slice; shards 1 and 2 hold both partitions' (3 + 3, 1 + 4), so their numeric slices
 * are cut in two, the longer block to partition 0: [4, 6) | [6, 7) and [7, 9) | [9, 10). */
START_TEST(test_proxy_known)
{
  arch *a = small_net();
  arch_plan *plan = arch_plan_create(a, 2, 1);
  ps_layout *l0 = ps_layout_proxy(plan, 0, 10, 17, 3), *l1 = ps_layout_proxy(plan, 1, 10, 17, 3);
  ck_assert_uint_eq(l0->n_links, 3);
  assert_link(l0, 0, 0, (size_t[]){0}, (size_t[]){4}, 1, 0, 6);
  assert_link(l0, 1, 1, (size_t[]){4}, (size_t[]){6}, 1, 4, 3);
  assert_link(l0, 2, 2, (size_t[]){7}, (size_t[]){9}, 1, 6, 1);
  ck_assert_uint_eq(l0->n_values, 8);
  ck_assert_uint_eq(l1->n_links, 2);
  assert_link(l1, 0, 1, (size_t[]){6}, (size_t[]){7}, 1, 0, 3);
  assert_link(l1, 1, 2, (size_t[]){9}, (size_t[]){10}, 1, 1, 4);
  ck_assert_uint_eq(l1->n_values, 2);
  ps_layout_free(l0);
  ps_layout_free(l1);
  arch_plan_free(plan);
  arch_free(a);
}
END_TEST

/* A proxy's links are the partition's own simulated links, and its numeric ranges cover
 * the numeric vector exactly once over the replica's partitions, each inside its shard's
 * slice: dense and locally connected plans, 1 to 6 partitions, 1 to 7 shards, numeric
 * vectors shorter and longer than the simulated one. */
START_TEST(test_proxy_invariants)
{
  arch *dense = arch_create(), *lc = arch_create();
  ck_assert_int_eq(arch_add_input(dense, 16, 1, 1), 0);
  ck_assert_int_eq(arch_add_dense(dense, 32), 0);
  ck_assert_int_eq(arch_add_dense(dense, 4), 0);
  ck_assert_int_eq(arch_add_input(lc, 8, 8, 1), 0);
  ck_assert_int_eq(arch_add_local(lc, 3, 3, 1, 1, 2), 0);
  ck_assert_int_eq(arch_add_pool(lc, 2, 2, 1, 1), 0);
  ck_assert_int_eq(arch_add_dense(lc, 5), 0);
  const arch *nets[] = {dense, lc};
  for (size_t t = 0; t < 2; t++)
    for (size_t K = 1; K <= 6; K++)
      for (size_t S = 1; S <= 7; S++)
        for (size_t n = 0; n <= 40; n += 13) {
          arch_plan *plan = arch_plan_square(nets[t], K);
          if (plan == NULL) /* a tiling with an empty tile is refused: nothing to check */
            continue;
          size_t sim = (size_t)arch_params(nets[t]);
          int *seen = calloc(n + 1, sizeof(int));
          for (size_t p = 0; p < K; p++) {
            ps_layout *x = ps_layout_proxy(plan, p, n, sim, S), *own = ps_layout_partition(plan, p, 0, sim, S);
            ck_assert_uint_eq(x->n_links, own->n_links);
            for (size_t i = 0; i < x->n_links; i++) {
              const ps_link *k = &x->link[i];
              size_t b, e;
              ps_slice(n, S, (size_t)k->shard, &b, &e);
              ck_assert_int_eq(k->shard, own->link[i].shard);
              ck_assert(k->sim_elems == own->link[i].sim_elems && k->sim_elems > 0);
              ck_assert(k->n_ranges == 0 || ps_ranges_inside(k->rb, k->re, k->n_ranges, b, e));
              for (size_t j = 0; j < k->n_ranges; j++)
                for (size_t v = k->rb[j]; v < k->re[j]; v++)
                  seen[v]++;
            }
            ps_layout_free(x);
            ps_layout_free(own);
          }
          for (size_t v = 0; v < n; v++)
            ck_assert_msg(seen[v] == 1, "value %zu exchanged %d times (net %zu, K %zu, S %zu)", v, seen[v], t, K, S);
          free(seen);
          arch_plan_free(plan);
        }
  arch_free(dense);
  arch_free(lc);
}
END_TEST

/* ---- placement ------------------------------------------------------------- */

/* 4 clients and 2 shards spread: c0 c1 s0 c2 c3 s1; 2 clients and 4 shards: s0 c0 s1 s2
 * c1 s3 (group s ends after client floor((s+1) M / S) - 1); not spread: the clients,
 * then the shards. */
START_TEST(test_place_known)
{
  static const size_t c42[] = {0, 1, 3, 4}, s42[] = {2, 5}, c24[] = {1, 4}, s24[] = {0, 2, 3, 5};
  for (size_t i = 0; i < 4; i++)
    ck_assert_uint_eq(ps_place_client(4, 2, i, 1), c42[i]);
  for (size_t i = 0; i < 2; i++)
    ck_assert_uint_eq(ps_place_shard(4, 2, i, 1), s42[i]);
  for (size_t i = 0; i < 2; i++)
    ck_assert_uint_eq(ps_place_client(2, 4, i, 1), c24[i]);
  for (size_t i = 0; i < 4; i++)
    ck_assert_uint_eq(ps_place_shard(2, 4, i, 1), s24[i]);
  ck_assert_uint_eq(ps_place_client(4, 2, 3, 0), 3);
  ck_assert_uint_eq(ps_place_shard(4, 2, 1, 0), 5);
}
END_TEST

/* Either way every host index is taken once, clients and shards each in their order, and
 * spread puts no two shards further apart than a group of clients, rounded up. */
START_TEST(test_place_invariants)
{
  for (size_t M = 1; M <= 30; M++)
    for (size_t S = 1; S <= 30; S++)
      for (int spread = 0; spread <= 1; spread++) {
        int *taken = calloc(M + S, sizeof(int));
        for (size_t c = 0; c < M; c++) {
          size_t at = ps_place_client(M, S, c, spread);
          ck_assert_uint_lt(at, M + S);
          taken[at]++;
          ck_assert(c == 0 || at > ps_place_client(M, S, c - 1, spread));
        }
        for (size_t k = 0; k < S; k++) {
          size_t at = ps_place_shard(M, S, k, spread);
          ck_assert_uint_lt(at, M + S);
          taken[at]++;
          ck_assert(k == 0 || at > ps_place_shard(M, S, k - 1, spread));
          if (spread && k > 0)
            ck_assert_uint_le(at - ps_place_shard(M, S, k - 1, spread), (M + S - 1) / S + 1);
        }
        for (size_t i = 0; i < M + S; i++)
          ck_assert_msg(taken[i] == 1, "index %zu taken %d times (M %zu, S %zu, spread %d)", i, taken[i], M, S, spread);
        free(taken);
      }
}
END_TEST

START_TEST(test_partition_out_of_range)
{
  arch *a = small_net();
  arch_plan *plan = arch_plan_create(a, 2, 1);
  ps_layout_partition(plan, 2, 17, 17, 3);
}
END_TEST

/* ---- layouts: invariants ---------------------------------------------------- */

/* Over every partition of plan and S shards: each link's ranges lie in its shard's
 * slice (ps_ranges_inside), its simulated count is p's parameters in that slice, the
 * links skip exactly the shards holding none of p's parameters, offsets pack the values
 * in link order, and every parameter is exchanged by one partition with one shard. */
static void check_invariants(const arch_plan *plan, size_t S)
{
  size_t n = (size_t)arch_params(arch_plan_arch(plan)), K = arch_plan_parts(plan);
  int *seen = calloc(n + 1, sizeof(int));
  for (size_t p = 0; p < K; p++) {
    ps_layout *l = ps_layout_partition(plan, p, n, n, S);
    size_t at = 0, i = 0;
    for (size_t s = 0; s < S; s++) {
      size_t b, e;
      ps_slice(n, S, s, &b, &e);
      size_t own = arch_plan_param_ranges(plan, p, b, e, NULL, NULL, 0);
      int k = ps_layout_find(l, (int)s);
      ck_assert_int_eq(k >= 0, own > 0);
      if (k < 0)
        continue;
      ck_assert_uint_eq((size_t)k, i++); /* rank order */
      const ps_link *lk = &l->link[k];
      ck_assert(ps_ranges_inside(lk->rb, lk->re, lk->n_ranges, b, e));
      ck_assert_uint_eq(lk->n_ranges, own);
      ck_assert_uint_eq(lk->offset, at);
      ck_assert(lk->sim_elems == (double)lk->values);
      at += lk->values;
      for (size_t j = 0; j < lk->n_ranges; j++)
        for (size_t x = lk->rb[j]; x < lk->re[j]; x++)
          seen[x]++;
    }
    ck_assert_uint_eq(i, l->n_links);
    ck_assert_uint_eq(at, l->n_values);
    ck_assert((double)l->n_values == arch_plan_params(plan, p)); /* all of p's parameters, none else */
    ps_layout_free(l);
  }
  for (size_t x = 0; x < n; x++)
    ck_assert_msg(seen[x] == 1, "parameter %zu exchanged %d times (K %zu, S %zu)", x, seen[x], K, S);
  free(seen);
}

/* Dense (the golden runs' 16-32-4 net) and locally connected nets (a 2 x 2 tiling:
 * several runs per layer), from 1 to 6 partitions, 1 to 7 shards. */
START_TEST(test_partition_invariants)
{
  arch *dense = arch_create(), *lc = arch_create();
  ck_assert_int_eq(arch_add_input(dense, 16, 1, 1), 0);
  ck_assert_int_eq(arch_add_dense(dense, 32), 0);
  ck_assert_int_eq(arch_add_dense(dense, 4), 0);
  ck_assert_int_eq(arch_add_input(lc, 8, 8, 1), 0);
  ck_assert_int_eq(arch_add_local(lc, 3, 3, 1, 1, 2), 0);
  ck_assert_int_eq(arch_add_dense(lc, 5), 0);
  for (size_t K = 1; K <= 6; K++)
    for (size_t S = 1; S <= 7; S++) {
      arch_plan *pd = arch_plan_square(dense, K), *pl = arch_plan_square(lc, K);
      ck_assert_ptr_nonnull(pd);
      check_invariants(pd, S);
      if (pl) /* a tiling with an empty tile is refused: nothing to check */
        check_invariants(pl, S);
      arch_plan_free(pd);
      arch_plan_free(pl);
    }
  arch_free(dense);
  arch_free(lc);
}
END_TEST

/* A whole replica's links cover the vector once, in order, whatever S. */
START_TEST(test_whole_invariants)
{
  for (size_t n = 0; n <= 40; n++)
    for (size_t S = 1; S <= 8; S++) {
      ps_layout *l = ps_layout_whole(n, 3 * n, S);
      ck_assert_uint_eq(l->n_links, S);
      size_t at = 0;
      double sim = 0;
      for (size_t i = 0; i < S; i++) {
        const ps_link *k = &l->link[i];
        size_t b, e;
        ps_slice(n, S, i, &b, &e);
        ck_assert(ps_ranges_inside(k->rb, k->re, k->n_ranges, b, e));
        ck_assert_uint_eq(k->offset, at);
        ck_assert_uint_eq(k->values, e - b);
        if (k->n_ranges)
          ck_assert_uint_eq(k->rb[0], at);
        at += k->values;
        sim += k->sim_elems;
      }
      ck_assert_uint_eq(at, n);
      ck_assert_uint_eq(l->n_values, n);
      ck_assert(sim == (double)(3 * n));
      ps_layout_free(l);
    }
}
END_TEST

/* ---- accrual --------------------------------------------------------------- */

/* A whole replica over 2 shards: the first step copies, the next ones add (1 2 3 4,
 * then + 10 20 30 40, then + 100 200 300 400). */
START_TEST(test_accrue_whole)
{
  ps_layout *l = ps_layout_whole(4, 4, 2);
  double acc[4] = {-7, -7, -7, -7}, g[4];
  for (int step = 0; step < 3; step++) {
    double scale = step == 0 ? 1 : step == 1 ? 10 : 100;
    for (int i = 0; i < 4; i++)
      g[i] = scale * (i + 1);
    ps_layout_accrue(l, acc, g, step == 0);
  }
  for (int i = 0; i < 4; i++)
    ck_assert(acc[i] == 111.0 * (i + 1));
  ps_layout_accrue(l, acc, g, 1); /* a new accrual forgets the old one */
  for (int i = 0; i < 4; i++)
    ck_assert(acc[i] == 100.0 * (i + 1));
  ps_layout_free(l);
}
END_TEST

/* Partition 1 of the known-answer split packs [6, 9) then [13, 17): with g[k] = k and
 * then g[k] = 100 k, it holds 101 k for k = 6 7 8 13 14 15 16, and the other entries
 * of the gradient never enter. */
START_TEST(test_accrue_partition)
{
  arch *a = small_net();
  arch_plan *plan = arch_plan_create(a, 2, 1);
  ps_layout *l = ps_layout_partition(plan, 1, 17, 17, 3);
  double g[17], acc[7];
  for (int k = 0; k < 17; k++)
    g[k] = k;
  ps_layout_accrue(l, acc, g, 1);
  for (int k = 0; k < 17; k++)
    g[k] = 100.0 * k;
  ps_layout_accrue(l, acc, g, 0);
  const double want[] = {606, 707, 808, 1313, 1414, 1515, 1616};
  for (int i = 0; i < 7; i++)
    ck_assert_msg(acc[i] == want[i], "acc[%d] = %g", i, acc[i]);
  ps_layout_free(l);
  arch_plan_free(plan);
  arch_free(a);
}
END_TEST

/* ---- update rule ------------------------------------------------------------ */

/* Plain SGD on a slice holding elements 10..13, a push for [11, 13) of 2 and 4 with
 * lr 0.5: w 1 1 1 1 becomes 1 0 -1 1. */
START_TEST(test_rule_sgd)
{
  const size_t rb[] = {11}, re[] = {13};
  double w[4] = {1, 1, 1, 1};
  const double g[] = {2, 4};
  ps_rule_apply((ps_rule){.lr = 0.5}, w, NULL, 10, rb, re, 1, g);
  const double want[] = {1, 0, -1, 1};
  for (int i = 0; i < 4; i++)
    ck_assert(w[i] == want[i]);
}
END_TEST

/* Adagrad (Dean'12 4.1) with gamma 0.1 on elements 10..14, a push for [10, 12) and
 * [13, 14) of 3, 0, 2, then the same push with 4, 0, 0: element 10's squares sum to
 * 9, then 25, so it moves by 0.1/3*3 = 0.1 and 0.1/5*4 = 0.08 (1 -> 0.9 -> 0.82);
 * element 11 saw only zeros and stays; element 13 moves once by 0.1/2*2 = 0.1; the
 * elements outside the ranges (12, 14) and their sums are untouched. */
START_TEST(test_rule_adagrad)
{
  const size_t rb[] = {10, 13}, re[] = {12, 14};
  double w[5] = {1, 1, 1, 1, 1}, acc[5] = {0};
  ps_rule rule = {.adagrad = 1, .gamma = 0.1};
  ps_rule_apply(rule, w, acc, 10, rb, re, 2, (const double[]){3, 0, 2});
  ck_assert_double_eq_tol(w[0], 0.9, ADAGRAD_TOL);
  ck_assert_double_eq_tol(w[3], 0.9, ADAGRAD_TOL);
  ps_rule_apply(rule, w, acc, 10, rb, re, 2, (const double[]){4, 0, 0});
  ck_assert_double_eq_tol(w[0], 0.82, ADAGRAD_TOL);
  ck_assert(acc[0] == 25 && acc[1] == 0 && acc[3] == 4);
  ck_assert(w[1] == 1 && w[2] == 1 && w[4] == 1);
  ck_assert(acc[2] == 0 && acc[4] == 0);
  ck_assert_double_eq_tol(w[3], 0.9, ADAGRAD_TOL);
}
END_TEST

Suite *ps_layout_suite(void)
{
  Suite *s = suite_create("ps_layout");
  ADD_TCASE(s, "slices", test_slice_known, test_slice_cover);
  ADD_TCASE(s, "ranges", test_ranges, test_ranges_gather_scatter);
  ADD_TCASE(s, "whole", test_whole_known, test_whole_edges);
  ADD_TCASE(s, "partition", test_partition_known, test_partition_edges);
  ADD_TCASE(s, "proxy", test_proxy_known, test_proxy_invariants);
  ADD_TCASE(s, "placement", test_place_known, test_place_invariants);
  ADD_TCASE(s, "invariants", test_whole_invariants, test_partition_invariants);
  ADD_TCASE(s, "accrual", test_accrue_whole, test_accrue_partition);
  ADD_TCASE(s, "rule", test_rule_sgd, test_rule_adagrad);
  TCase *tc = tcase_create("contracts");
  tcase_add_test_raise_signal(tc, test_slice_no_shards, SIGABRT);
  tcase_add_test_raise_signal(tc, test_partition_out_of_range, SIGABRT);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(ps_layout_suite)

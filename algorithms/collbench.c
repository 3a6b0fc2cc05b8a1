/* collbench.c - one collective, timed and checked, as nccl-tests does on GPUs.
 *
 * Member i runs on hosts[i] and repeats `iterations` times:
 *   load_input   its own vector x_i into the buffer (numeric runs; no simulated time),
 *                so that each iteration computes the same result, as nccl-tests'
 *                out-of-place buffers do
 *   collective   the chosen op on every member at once
 * with no barrier in between (nccl-tests launches iterations back to back too). x_i is
 * uniform in [-1, 1) with full 53-bit mantissas from the stream (run.seed, data role, i):
 * mixed signs and full mantissas make the order of a sum visible in its last bits (32-bit
 * draws alone would add exactly in any order). */
#include "algorithms/collbench.h"

#include <math.h>
#include <string.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/collectives.h"
#include "models/rng.h"

typedef struct member {
  struct collbench *b;
  size_t rank;
  double *x;   /* the member's input (numeric runs) */
  double *buf; /* the collective's buffer (numeric runs), NULL: timing only */
  double end;  /* simulated time its last iteration ended */
} member;

struct collbench {
  const run_config *cfg;
  const collective_params *p;
  metrics *m;
  coll_comm *comm;
  member *members;
};

size_t collbench_hosts_needed(const collective_params *p) { return p->ranks; }

static void load_input(member *mb)
{
  if (mb->buf)
    memcpy(mb->buf, mb->x, mb->b->p->elements * sizeof(double));
}

static void collective(member *mb)
{
  collbench *b = mb->b;
  const collective_params *p = b->p;
  size_t me = mb->rank, n = p->elements;
  switch ((coll_op)p->op) {
  case COLL_ALLREDUCE: coll_allreduce(b->comm, me, mb->buf, n, (coll_algo)p->algo); return;
  case COLL_REDUCE_SCATTER: coll_reduce_scatter(b->comm, me, mb->buf, n); return;
  case COLL_ALLGATHER: coll_allgather(b->comm, me, mb->buf, n); return;
  case COLL_BCAST: coll_bcast(b->comm, me, p->root, mb->buf, n); return;
  case COLL_REDUCE: coll_reduce(b->comm, me, p->root, mb->buf, n); return;
  }
  xbt_die("unknown collective %d", p->op);
}

static void member_actor(int argc, char **argv)
{
  (void)argc, (void)argv;
  member *mb = sg_actor_self_get_data();
  for (long it = 0; it < mb->b->p->iterations; it++) {
    load_input(mb);
    collective(mb);
  }
  mb->end = simgrid_get_clock();
  if (mb->rank == 0)
    metrics_slot_at(mb->b->m, 0)->steps = mb->b->p->iterations;
}

collbench *collbench_deploy(const run_config *cfg, metrics *m)
{
  const collective_params *p = &cfg->collective;
  if (cfg->n_hosts < p->ranks || p->ranks == 0 || p->elements == 0)
    return NULL;
  collbench *b = xbt_malloc0(sizeof(*b));
  b->cfg = cfg;
  b->p = p;
  b->m = m;
  coll_opts o = {cfg->elem_bytes, p->chunk_bytes, cfg, p->reduce_flops};
  b->comm = coll_comm_create("world", cfg->hosts, p->ranks, &o);
  xbt_assert(b->comm != NULL, "a validated collective could not make its communicator");
  b->members = xbt_malloc0(p->ranks * sizeof(member));
  for (size_t i = 0; i < p->ranks; i++) {
    member *mb = &b->members[i];
    mb->b = b;
    mb->rank = i;
    if (cfg->numerics) {
      gsl_rng *r = rng_create(cfg->seed, RNG_ROLE_DATA, (int)i);
      mb->x = xbt_malloc(p->elements * sizeof(double));
      mb->buf = xbt_malloc(p->elements * sizeof(double));
      for (size_t k = 0; k < p->elements; k++) { /* two 32-bit draws fill the 53-bit mantissa */
        double hi = gsl_rng_uniform(r), lo = gsl_rng_uniform(r);
        mb->x[k] = 2 * (hi + lo * 0x1p-32) - 1;
      }
      gsl_rng_free(r);
    }
    char name[32];
    snprintf(name, sizeof(name), "member-%zu", i);
    sg_actor_t a = sg_actor_init(name, cfg->hosts[i]);
    sg_actor_set_data(a, mb);
    sg_actor_start(a, member_actor, 0, NULL);
  }
  return b;
}

void collbench_free(collbench *b)
{
  if (b == NULL)
    return;
  for (size_t i = 0; i < b->p->ranks; i++) {
    xbt_free(b->members[i].x);
    xbt_free(b->members[i].buf);
  }
  xbt_free(b->members);
  coll_comm_free(b->comm);
  xbt_free(b);
}

/* Whether member me holds element i of the result (reduce-scatter: its block; reduce:
 * the root only). */
static int holds(const collective_params *p, size_t me, size_t i)
{
  size_t off, len;
  if (p->op == COLL_REDUCE)
    return me == p->root;
  if (p->op != COLL_REDUCE_SCATTER)
    return 1;
  coll_block(p->elements, p->ranks, me, &off, &len);
  return i >= off && i < off + len;
}

/* Compares every member's buffer with the reference in the collective's order (bit for
 * bit) and with the plain rank-order sum (relative to sum_j |x_j|). */
static void check(const collbench *b, collbench_result *r)
{
  const collective_params *p = b->p;
  size_t n = p->elements, P = p->ranks;
  int sums = p->op != COLL_ALLGATHER && p->op != COLL_BCAST;
  const double **x = xbt_malloc(P * sizeof(double *));
  for (size_t j = 0; j < P; j++)
    x[j] = b->members[j].x;
  double *want = xbt_malloc(n * sizeof(double));
  r->exact = 1;
  r->max_rel_error = 0;
  /* Every member expects the same values where it holds any: the reference of the
   * member that holds each element (reduce-scatter: block owners; reduce: the root). */
  if (p->op == COLL_REDUCE_SCATTER)
    for (size_t me = 0; me < P; me++)
      coll_reference((coll_op)p->op, (coll_algo)p->algo, P, p->root, me, n, x, want);
  else
    coll_reference((coll_op)p->op, (coll_algo)p->algo, P, p->root, p->op == COLL_REDUCE ? p->root : 0, n, x, want);
  for (size_t i = 0; i < n; i++) {
    double s = 0, mag = 0;
    for (size_t j = 0; j < P && sums; j++) {
      s += x[j][i];
      mag += fabs(x[j][i]);
    }
    for (size_t me = 0; me < P; me++) {
      if (!holds(p, me, i))
        continue;
      double got = b->members[me].buf[i];
      if (memcmp(&got, &want[i], sizeof(double)) != 0)
        r->exact = 0;
      double e = sums && mag > 0 ? fabs(got - s) / mag : 0;
      r->max_rel_error = e > r->max_rel_error ? e : r->max_rel_error;
    }
  }
  xbt_free(want);
  xbt_free(x);
}

void collbench_result_get(const collbench *b, collbench_result *r)
{
  memset(r, 0, sizeof(*r));
  for (size_t i = 0; i < b->p->ranks; i++)
    r->time_s = b->members[i].end > r->time_s ? b->members[i].end : r->time_s;
  r->iter_s = r->time_s / (double)b->p->iterations;
  r->numeric = b->cfg->numerics;
  if (r->numeric)
    check(b, r);
}

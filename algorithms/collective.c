/* collective.c - one collective, timed and checked, as nccl-tests does on GPUs.
 *
 * Member i runs on hosts[i] and repeats `iterations` times:
 *   load_input     its own vector x_i into the buffer (numeric runs; no simulated time),
 *                  so that each iteration computes the same result, as nccl-tests'
 *                  out-of-place buffers do
 *   collective_op  the chosen op on every member at once
 * with no barrier in between (nccl-tests launches iterations back to back too). x_i is
 * uniform in [-1, 1) with full 53-bit mantissas from the stream (run.seed, data role, i):
 * mixed signs and full mantissas make the order of a sum visible in its last bits (32-bit
 * draws alone would add exactly in any order). */
#include "algorithms/collective.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <simgrid/host.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/compute.h"
#include "algorithms/collectives.h"
#include "algorithms/msg.h"
#include "models/cost.h"
#include "models/rng.h"

typedef struct member {
  struct collective *b;
  size_t rank;
  double *x;   /* the member's input (numeric runs) */
  double *buf; /* the collective's buffer (numeric runs), NULL: timing only */
  double end;  /* simulated time its last iteration ended */
} member;

struct collective {
  const run_config *cfg;
  const collective_setup *p;
  metrics *m;
  coll_comm *comm;
  member *members;
};


static void load_input(member *mb)
{
  if (mb->buf)
    memcpy(mb->buf, mb->x, mb->b->p->elements * sizeof(double));
}

static void collective_op(member *mb)
{
  collective *b = mb->b;
  const collective_setup *p = b->p;
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
    collective_op(mb);
  }
  mb->end = simgrid_get_clock();
  if (mb->rank == 0)
    metrics_slot_at(mb->b->m, 0)->steps = mb->b->p->iterations;
}

collective *collective_deploy(const run_config *cfg, const collective_setup *p, metrics *m)
{
  if (cfg->n_hosts < p->ranks || p->ranks == 0 || p->elements == 0)
    return NULL;
  collective *b = xbt_malloc0(sizeof(*b));
  b->cfg = cfg;
  b->p = p;
  b->m = m;
  coll_opts o = {cfg->elem_bytes, p->chunk_bytes, cfg, p->reduce_flops, coll_mode_of(cfg), 0}; /* timed alone */
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

void collective_free(collective *b)
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
static int holds(const collective_setup *p, size_t me, size_t i)
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
static void check(const collective *b, collective_result *r)
{
  const collective_setup *p = b->p;
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

void collective_result_get(const collective *b, collective_result *r)
{
  memset(r, 0, sizeof(*r));
  for (size_t i = 0; i < b->p->ranks; i++)
    r->time_s = b->members[i].end > r->time_s ? b->members[i].end : r->time_s;
  r->iter_s = r->time_s / (double)b->p->iterations;
  r->numeric = b->cfg->numerics;
  if (r->numeric)
    check(b, r);
}

/* ---- the descriptor: run.algorithm = collective --------------------------------- */

static const key_spec collective_keys[] = {
  {"collective", "op", KEY_CHOICE, KEY_FIELD(collective_params, op), .def = "allreduce", .unit = "",
   .doc = "The collective: allreduce (sum on every member), reduce-scatter and allgather (ring), "
          "broadcast and reduce (binomial tree from `root`).",
   .choices = "allreduce|reduce-scatter|allgather|broadcast|reduce"},
  {"collective", "algorithm", KEY_CHOICE, KEY_FIELD(collective_params, algorithm), .def = "auto", .unit = "",
   .doc = "Allreduce: `ring` (reduce-scatter + allgather), `halving-doubling` (Rabenseifner) or `tree` "
          "(binomial reduce + broadcast); `auto`: ring for allreduce, reduce-scatter and allgather, tree "
          "for broadcast and reduce (their only algorithms).",
   .values = (const int[]){-1, COLL_RING, COLL_HALVING_DOUBLING, COLL_TREE}, .choices = "auto|ring|halving-doubling|tree"},
  {"collective", "bytes", KEY_LONG, KEY_FIELD(collective_params, bytes), .def = "1048576", .unit = "bytes",
   .doc = "Size of each member's vector on the wire (nccl-tests' size): bytes / `model.dtype`'s size "
          "elements, so a whole number of them.",
   KEY_GE(1)},
  {"collective", "ranks", KEY_SIZE, KEY_FIELD(collective_params, ranks), .def = "8", .unit = "hosts",
   .doc = "Members of the communicator, member i on host i.", KEY_GE(1), KEY_LE(1000000)},
  {"collective", "root", KEY_SIZE, KEY_FIELD(collective_params, root), .def = "0", .unit = "rank",
   .doc = "Broadcast and reduce: the root member, below `ranks`.", KEY_GE(0)},
  {"collective", "chunk", KEY_DOUBLE, KEY_FIELD(collective_params, chunk_bytes), .def = "0", .unit = "bytes",
   .doc = "Transfers longer than this go as chunks of at most this, pipelined (a chunk is added or "
          "forwarded while the next travels); 0: one message per transfer.",
   KEY_GE(0)},
  {"collective", "iterations", KEY_LONG, KEY_FIELD(collective_params, iterations), .def = "1", .unit = "iterations",
   .doc = "Times each member runs the collective, back to back; time per iteration = simulated time / "
          "iterations.",
   KEY_GE(1), KEY_LE(1000000)},
  {"collective", "reduce_flops", KEY_DOUBLE, KEY_FIELD(collective_params, reduce_flops), .def = "0", .unit = "flops/element",
   .doc = "Simulated cost of adding one received element (the gamma term), at the host's speed x "
          "`model.efficiency` x cores; 0: additions take no simulated time (pure alpha-beta).",
   KEY_GE(0)},
};

/* Numeric collectives hold every member's input and buffer: ranks x elements doubles
 * twice, at most 2^26 x 16 bytes = 1 GiB. */
#define COLL_NUMERIC_MAX (1L << 26)

/* collective.algorithm = auto: ring, or tree for broadcast and reduce (their only ones). */
static coll_algo own_algo(const collective_params *p)
{
  return p->op == COLL_BCAST || p->op == COLL_REDUCE ? COLL_TREE : COLL_RING;
}

static int collective_plan_validate(const scenario *sc, const void *params, char *why, size_t len)
{
  const collective_params *p = params;
  cost_dtype dt = COST_FP32;
  cost_dtype_parse(sc->model.dtype, &dt);
  long eb = (long)cost_dtype_wire_bytes(dt), elems = p->bytes / eb;
  coll_algo own = own_algo(p);
  if (p->bytes % eb != 0)
    snprintf(why, len, "collective.bytes: %ld bytes is not a whole number of %s elements (%ld bytes each)", p->bytes,
             sc->model.dtype, eb);
  else if (p->op != COLL_ALLREDUCE && p->algorithm >= 0 && p->algorithm != (int)own)
    snprintf(why, len, "collective.algorithm: %s runs only as %s here (or set auto), not %s",
             coll_op_name((coll_op)p->op), coll_algo_name(own), coll_algo_name((coll_algo)p->algorithm));
  else if (p->root >= p->ranks)
    snprintf(why, len, "collective.root: %zu is not a member of %zu ranks", p->root, p->ranks);
  else if (p->op != COLL_BCAST && p->op != COLL_REDUCE &&
           key_changed(collective_keys, sizeof collective_keys / sizeof collective_keys[0], p, "root"))
    snprintf(why, len, "collective.root: has no effect on %s, which has no root (broadcast and reduce have one)",
             coll_op_name((coll_op)p->op));
  else if (sc->model.numerics && elems > COLL_NUMERIC_MAX / (long)p->ranks)
    snprintf(why, len, "collective.bytes: a numeric run of %zu ranks x %ld elements holds more than 2^26 doubles "
             "twice; set model.numerics = off for a timing-only run", p->ranks, elems);
  else if (sc->run.target_accuracy > 0)
    snprintf(why, len, "run.target_accuracy: a collective has no accuracy to reach");
  else
    return 0;
  return -1;
}

static size_t collective_plan_hosts_needed(const scenario *sc, const void *params, const char **why)
{
  (void)sc;
  *why = "collective.ranks";
  return ((const collective_params *)params)->ranks;
}

typedef struct collective_run {
  const collective_params *p;
  collective_setup setup;
  collective *b;
  collective_result res;
  double alpha_s, beta_s_per_byte, gamma_s_per_byte, formula_s;
  double algbw_gbps, busbw_gbps; /* nccl-tests: bytes / time per iteration / 1e9, x busbw factor */
} collective_run;

static void *collective_run_prepare(const run_config *cfg, char *err, size_t len)
{
  (void)err;
  (void)len;
  collective_run *r = xbt_malloc0(sizeof(*r));
  const collective_params *p = r->p = algorithm_params(cfg->sc, &collective_algorithm);
  r->setup = (collective_setup){.op = p->op,
                               .algo = p->algorithm >= 0 ? p->algorithm : (int)own_algo(p),
                               .ranks = p->ranks,
                               .elements = (size_t)p->bytes / cfg->elem_bytes,
                               .root = p->root,
                               .chunk_bytes = p->chunk_bytes,
                               .iterations = p->iterations,
                               .reduce_flops = p->reduce_flops};
  return r;
}

static void collective_run_deploy(void *state, const run_config *cfg, metrics *m)
{
  collective_run *r = state;
  r->b = collective_deploy(cfg, &r->setup, m);
  xbt_assert(r->b, "collective_deploy refused a configuration the engine checked");
}

/* The measured time against the alpha-beta(-gamma) formula on this platform: alpha is
 * the latency of the route from member 0 to member 1 plus the header bytes at its
 * bandwidth, beta 1 / that bandwidth, gamma the time of reduce_flops on member 0's host
 * (as compute_execute spends it) per byte. Exact on a star of equal links (algorithms/README.md). */
static void measure(collective_run *r, const run_config *cfg)
{
  const collective_setup *p = &r->setup;
  collective_result_get(r->b, &r->res);
  double bytes = (double)r->p->bytes;
  if (p->ranks >= 2) {
    /* A route of no links (a Vivaldi zone's: latency from coordinates) has no bandwidth to
     * read, and SimGrid answers a negative one: then there is no formula (null, "n/a"). */
    double bw = sg_host_get_route_bandwidth(cfg->hosts[0], cfg->hosts[1]);
    r->beta_s_per_byte = bw > 0 && isfinite(bw) ? 1 / bw : NAN;
    r->alpha_s = sg_host_get_route_latency(cfg->hosts[0], cfg->hosts[1]) + MSG_HEADER_BYTES * r->beta_s_per_byte;
  }
  double flops_per_s = sg_host_get_speed(cfg->hosts[0]) * cfg->speed_factor * cfg->efficiency * cfg->cores;
  r->gamma_s_per_byte = p->reduce_flops / flops_per_s / (double)cfg->elem_bytes;
  r->formula_s = coll_formula((coll_op)p->op, (coll_algo)p->algo, p->ranks, bytes, r->alpha_s, r->beta_s_per_byte,
                              r->gamma_s_per_byte);
  r->algbw_gbps = r->res.iter_s > 0 ? bytes / r->res.iter_s / 1e9 : 0;
  r->busbw_gbps = r->algbw_gbps * coll_busbw_factor((coll_op)p->op, p->ranks);
}

/* summary.json's "collective" block: nccl-tests' figures and the formula's. */
static void collective_run_report(void *state, const run_config *cfg, metrics *m, report *rep)
{
  (void)m;
  collective_run *r = state;
  const collective_setup *p = &r->setup;
  measure(r, cfg);
  rep->examples = 0;
  rep->step_time_s = r->res.iter_s;
  rep->step = "iteration";
  rep->worker_role = "member";
  json_t *o = json_object();
  json_object_set_new(o, "op", json_string(coll_op_name((coll_op)p->op)));
  json_object_set_new(o, "algorithm", json_string(coll_algo_name((coll_algo)p->algo)));
  json_object_set_new(o, "ranks", json_integer((json_int_t)p->ranks));
  json_object_set_new(o, "bytes", json_real((double)r->p->bytes));
  json_object_set_new(o, "elements", json_integer((json_int_t)p->elements));
  json_object_set_new(o, "chunk_bytes", json_real(p->chunk_bytes));
  json_object_set_new(o, "iterations", json_integer(p->iterations));
  json_object_set_new(o, "time_s", report_num(r->res.iter_s));
  json_object_set_new(o, "algbw_gbps", report_num(r->algbw_gbps));
  json_object_set_new(o, "busbw_gbps", report_num(r->busbw_gbps));
  json_object_set_new(o, "formula_s", report_num(r->formula_s));
  json_object_set_new(o, "rel_error", report_num(r->formula_s > 0 ? (r->res.iter_s - r->formula_s) / r->formula_s
                                                                 : isfinite(r->formula_s) ? 0 : NAN));
  json_object_set_new(o, "alpha_s", report_num(r->alpha_s));
  json_object_set_new(o, "beta_s_per_byte", report_num(r->beta_s_per_byte));
  json_object_set_new(o, "gamma_s_per_byte", report_num(r->gamma_s_per_byte));
  json_t *ck = json_object();
  json_object_set_new(ck, "numeric", json_boolean(r->res.numeric));
  json_object_set_new(ck, "exact", r->res.numeric ? json_boolean(r->res.exact) : json_null());
  json_object_set_new(ck, "max_rel_error", r->res.numeric ? report_num(r->res.max_rel_error) : json_null());
  json_object_set_new(o, "check", ck);
  report_add_block(rep, "collective", o);
}

static void collective_run_closing(void *state, const run_config *cfg, const report_outcome *o, char *line, size_t len)
{
  (void)cfg;
  const collective_run *r = state;
  char shares[300];
  report_perf_text(&o->perf, 0, shares, sizeof shares);
  char formula[32] = "n/a";
  if (isfinite(r->formula_s))
    snprintf(formula, sizeof formula, "%.6g", r->formula_s);
  snprintf(line, len, "collective %s %s %s: %zu ranks, %.0f bytes, %.6g simulated s per iteration (formula %s), "
           "busbw %.4g GB/s%s%s", coll_op_name((coll_op)r->setup.op), coll_algo_name((coll_algo)r->setup.algo),
           o->status, r->setup.ranks, (double)r->p->bytes, r->res.iter_s, formula, r->busbw_gbps,
           shares[0] ? "; " : "", shares);
}

static void collective_run_free(void *state)
{
  collective_run *r = state;
  collective_free(r->b);
  xbt_free(r);
}

/* Numerics: each member's vector, its receive buffer and the serial reference's share. */
static double collective_plan_footprint(const scenario *sc, const void *params, double *actors, const char **what)
{
  const collective_params *p = params;
  cost_dtype dt = COST_FP32;
  cost_dtype_parse(sc->model.dtype, &dt);
  *actors = (double)p->ranks + 1;
  *what = "3 doubles per element of collective.bytes on each of collective.ranks members";
  return sc->model.numerics ? 3 * (double)p->ranks * (double)p->bytes / (double)cost_dtype_wire_bytes(dt) * 8 : 0;
}

const algorithm collective_algorithm = {
  .name = "collective",
  .summary = "one collective (allreduce ring/halving-doubling/tree, reduce-scatter, allgather, broadcast, reduce) "
             "timed like nccl-tests",
  .section_doc = "one collective timed like nccl-tests (`run.algorithm = collective`): every member runs it "
                 "`iterations` times back to back; `model.numerics` (off: timing only) and `model.dtype` (wire bytes "
                 "per element) apply",
  ALGORITHM_SECTION(collective_keys, collective_params),
  .fail_stop = 1,
  .figures = "ranks bytes elements chunk_bytes iterations time_s algbw_gbps busbw_gbps formula_s rel_error "
              "alpha_s beta_s_per_byte gamma_s_per_byte max_rel_error",
  .plan = {.validate = collective_plan_validate, .hosts_needed = collective_plan_hosts_needed,
           .footprint = collective_plan_footprint},
  .run = {.prepare = collective_run_prepare, .deploy = collective_run_deploy, .report = collective_run_report,
          .closing = collective_run_closing, .free = collective_run_free},
};

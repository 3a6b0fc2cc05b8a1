#ifndef TESTS_COLL_HARNESS_H
#define TESTS_COLL_HARNESS_H
/* coll_harness.h - what check_collectives.c and check_collectives_rounds.c share: one
 * collective simulation in a forked child (SimGrid allows one engine per process) that
 * writes the clock and every member's buffer to a file, the test platform (64 hosts of
 * 1 Gflop/s, each on its own SPLITDUPLEX link of 1.25e9 B/s and 1 us to one switch, CM02,
 * no TCP cross traffic: alpha = 2 us + 64 header bytes / 1.25e9, beta = 1 / 1.25e9 s per
 * byte), the members' inputs and the serial sums each result must equal. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "algorithms/collectives.h"
#include "algorithms/msg.h"
#include "algorithms/run.h"
#include "cli_util.h"

/* Sanitized builds run SimGrid's actors on threads, which ASan follows (as sim/engine.c). */
#ifdef DTSIM_SANITIZE
#define SANITIZE_CONTEXTS "--cfg=contexts/factory:thread",
#else
#define SANITIZE_CONTEXTS
#endif

#define HOSTS 64
#define BW 1.25e9
#define LAT 1e-6
#define ALPHA (2 * LAT + MSG_HEADER_BYTES / BW)
#define BETA (1 / BW)

/* Tolerances, each with where it comes from. */
/* TOL_SUM_REL (of sum |x|): a sum of p <= 13 doubles in two orders (the algorithm's and
 * rank order) differs by at most 2 (p-1) u sum |x| ~ 3e-15 sum |x| (u = 2^-53); 1e-12
 * leaves a margin. */
#define TOL_SUM_REL 1e-12
/* TOL_TIME_REL: the same messages with or without a second group's: SimGrid adds the same
 * event durations in another order, ~100 events x u ~ 1e-14 relative; 1e-12 leaves a
 * margin. */
#define TOL_TIME_REL 1e-12
/* TOL_GAMMA_REL: summed event times round at ~1e-15 relative (as above); the gamma term is up
 * to ~6% of these times, so a missing or doubled term fails by far; 1e-9 sits between. */
#define TOL_GAMMA_REL 1e-9

static const char platform_xml[] =
    "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    "<platform version=\"4.1\">\n  <config>\n    <prop id=\"network/model\" value=\"CM02\"/>\n"
    "    <prop id=\"network/crosstraffic\" value=\"0\"/>\n  </config>\n"
    "  <cluster id=\"c\" prefix=\"host-\" suffix=\"\" radical=\"0-63\" speed=\"1Gf\" core=\"1\" bw=\"1.25GBps\" "
    "lat=\"1us\" sharing_policy=\"SPLITDUPLEX\"/>\n</platform>\n";

/* What a simulation runs: `groups` communicators; member r of group g on host
 * first[g] + r * stride[g]; every member runs op on its group, then, when `world` is
 * set, an allreduce (ring) over all hosts 0..world-1 with the same buffer. */
typedef struct spec {
  int op, algo;
  size_t p, n, root;
  double chunk;      /* bytes */
  int numeric;
  double reduce_flops;
  size_t groups;
  size_t first[2], stride[2];
  size_t world;      /* 0: none */
  int threads;       /* SimGrid contexts/nthreads; 0: default */
  int mismatch;      /* member 1 passes n + 1 (a broken invariant) */
  int rounds;        /* COLL_ROUNDS instead of COLL_MESSAGES */
  size_t repeat;     /* > 0 (timing only): op, an allgather and a reduce-scatter, repeat times */
  int batched;       /* repeat: as one coll_batch instead of one by one */
} spec;

typedef struct result {
  double t;
  double bytes; /* msg_bytes_sent */
  double *buf;  /* [group][member][n] */
} result;

typedef struct member {
  const spec *s;
  coll_comm *comm, *world;
  size_t rank, wrank;
  double *buf;
} member;

/* x_{g,r}[i]: uniform in [-1, 1) with full mantissas (two 32-bit draws, as algorithms/collective.c),
 * from a fixed-seed stream per member, so sums are sensitive to their order. */
static inline void fill_input(size_t g, size_t r, size_t n, double *x)
{
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 1000 + 100 * g + r);
  for (size_t i = 0; i < n; i++) {
    double hi = gsl_rng_uniform(rng), lo = gsl_rng_uniform(rng);
    x[i] = 2 * (hi + lo * 0x1p-32) - 1;
  }
  gsl_rng_free(rng);
}

static inline void run_op(const spec *s, coll_comm *c, size_t me, double *buf, size_t n)
{
  switch ((coll_op)s->op) {
  case COLL_ALLREDUCE: coll_allreduce(c, me, buf, n, (coll_algo)s->algo); return;
  case COLL_REDUCE_SCATTER: coll_reduce_scatter(c, me, buf, n); return;
  case COLL_ALLGATHER: coll_allgather(c, me, buf, n); return;
  case COLL_BCAST: coll_bcast(c, me, s->root, buf, n); return;
  case COLL_REDUCE: coll_reduce(c, me, s->root, buf, n); return;
  }
}

static inline void member_actor(int argc, char **argv)
{
  (void)argc, (void)argv;
  member *m = sg_actor_self_get_data();
  const spec *s = m->s;
  size_t n = s->mismatch && m->rank == 1 ? s->n + 1 : s->n;
  const coll_op ops[] = {(coll_op)s->op, COLL_ALLGATHER, COLL_REDUCE_SCATTER};
  if (s->repeat && s->batched)
    coll_batch(m->comm, m->rank, ops, 3, s->repeat, n, (coll_algo)s->algo);
  else if (s->repeat)
    for (size_t k = 0; k < s->repeat; k++) {
      run_op(s, m->comm, m->rank, NULL, n);
      coll_allgather(m->comm, m->rank, NULL, n);
      coll_reduce_scatter(m->comm, m->rank, NULL, n);
    }
  else
    run_op(s, m->comm, m->rank, m->buf, n);
  if (m->world)
    coll_allreduce(m->world, m->wrank, m->buf, s->n, COLL_RING);
}

/* In the child: runs s and writes the clock and the buffers to path; exits. */
static inline void simulate(const spec *s, const char *path, const char *plat)
{
  if (s->mismatch) { /* the abort is expected: keep its report out of the test log */
    FILE *null = freopen("/dev/null", "w", stderr);
    (void)null;
  }
  char threads[64];
  snprintf(threads, sizeof(threads), "--cfg=contexts/nthreads:%d", s->threads ? s->threads : 1);
  char *argv[] = {"check_collectives", "--log=root.thresh:critical", threads, SANITIZE_CONTEXTS NULL};
  int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
  simgrid_init(&argc, argv);
  simgrid_load_platform(plat);
  account_setup();
  sg_host_t *all = xbt_malloc(HOSTS * sizeof(sg_host_t));
  for (size_t h = 0; h < HOSTS; h++) {
    char name[32];
    snprintf(name, sizeof(name), "host-%zu", h);
    all[h] = sg_host_by_name(name);
  }
  run_config cfg;
  memset(&cfg, 0, sizeof(cfg));
  cfg.cores = 1;
  cfg.efficiency = 1;
  coll_opts o = {4, s->chunk, &cfg, s->reduce_flops, s->rounds ? COLL_ROUNDS : COLL_MESSAGES, 0};
  coll_comm *world = NULL;
  if (s->world) {
    coll_opts wo = o;
    world = coll_comm_create("world", all, s->world, &wo);
  }
  size_t G = s->groups ? s->groups : 1;
  member *mb = xbt_malloc0(G * s->p * sizeof(member));
  coll_comm *comms[2] = {NULL, NULL};
  for (size_t g = 0; g < G; g++) {
    sg_host_t hosts[HOSTS];
    size_t stride = s->stride[g] ? s->stride[g] : 1;
    for (size_t r = 0; r < s->p; r++)
      hosts[r] = all[s->first[g] + r * stride];
    comms[g] = coll_comm_create(g ? "dp" : "tp", hosts, s->p, &o); /* same name twice would do too */
    for (size_t r = 0; r < s->p; r++) {
      member *m = &mb[g * s->p + r];
      *m = (member){s, comms[g], world, r, s->first[g] + r * stride, NULL};
      if (s->numeric) {
        m->buf = xbt_malloc((s->n + 1) * sizeof(double));
        fill_input(g, r, s->n + 1, m->buf);
      }
      char name[32];
      snprintf(name, sizeof(name), "m%zu-%zu", g, r);
      sg_actor_t a = sg_actor_init(name, hosts[r]);
      sg_actor_set_data(a, m);
      sg_actor_start(a, member_actor, 0, NULL);
    }
  }
  simgrid_run();
  FILE *f = fopen(path, "wb");
  double t[2] = {simgrid_get_clock(), msg_bytes_sent()};
  fwrite(t, sizeof(double), 2, f);
  for (size_t k = 0; k < G * s->p; k++)
    if (mb[k].buf)
      fwrite(mb[k].buf, sizeof(double), s->n, f);
  fclose(f);
  _exit(0);
}

static inline char *plat_path(void)
{
  static char path[64] = "";
  if (!path[0]) {
    char *dir = cli_tmpdir();
    cli_write(dir, "star.xml", platform_xml);
    snprintf(path, sizeof(path), "%s/star.xml", dir);
    free(dir);
  }
  return path;
}

/* Runs s in a child; returns its wait status and, on success, fills r (buf may be NULL). */
static inline int run_spec(const spec *s, result *r)
{
  char path[] = "/tmp/dtsim-coll-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  const char *plat = plat_path();
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0)
    simulate(s, path, plat);
  int st;
  waitpid(pid, &st, 0);
  size_t G = s->groups ? s->groups : 1, want = 2 + (s->numeric ? G * s->p * s->n : 0);
  FILE *f = fopen(path, "rb");
  if (f && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
    r->buf = s->numeric ? malloc(G * s->p * s->n * sizeof(double)) : NULL;
    size_t got = fread(&r->t, sizeof(double), 1, f) + fread(&r->bytes, sizeof(double), 1, f);
    if (r->buf)
      got += fread(r->buf, sizeof(double), G * s->p * s->n, f);
    ck_assert_uint_eq(got, want);
  }
  if (f)
    fclose(f);
  unlink(path);
  return st;
}

static inline result run_ok(const spec *s)
{
  result r = {0, 0, NULL};
  int st = run_spec(s, &r);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the simulation failed (status %d)", st);
  return r;
}

/* The inputs of group g, x[r][i]. */
static inline double **inputs(size_t g, size_t p, size_t n)
{
  double **x = malloc(p * sizeof(double *));
  for (size_t r = 0; r < p; r++) {
    x[r] = malloc((n + 1) * sizeof(double));
    fill_input(g, r, n + 1, x[r]);
  }
  return x;
}

static inline void free_inputs(double **x, size_t p)
{
  for (size_t r = 0; r < p; r++)
    free(x[r]);
  free(x);
}

/* Pairwise tree of v[0..m-1], neighbours first: ((v0+v1)+(v2+v3))+... */
static inline double tree_sum(double *v, size_t m)
{
  for (size_t d = 1; d < m; d *= 2)
    for (size_t j = 0; j + d < m; j += 2 * d)
      v[j] += v[j + d];
  return v[0];
}

/* The block of element i among p blocks of n (sizes differ by at most one, larger first). */
static inline size_t block_of(size_t n, size_t p, size_t i)
{
  size_t base = n / p, extra = n % p, big = extra * (base + 1);
  return i < big ? i / (base + 1) : extra + (i - big) / base;
}

/* Element i of the sum, in the order of (op, algo): ring x[b+1] + ... + x[b]; halving-
 * doubling pairs the first 2r ranks then a pairwise tree; binomial tree from root. */
static inline double expected(const spec *s, double **x, size_t i)
{
  size_t p = s->p, b = block_of(s->n, p, i);
  double v[HOSTS];
  if (s->op == COLL_ALLGATHER)
    return x[b][i];
  if (s->op == COLL_BCAST)
    return x[s->root][i];
  if (s->op == COLL_REDUCE_SCATTER || s->algo == COLL_RING) {
    double sum = x[(b + 1) % p][i];
    for (size_t k = 2; k <= p; k++)
      sum += x[(b + k) % p][i];
    return sum;
  }
  if (s->op == COLL_ALLREDUCE && s->algo == COLL_HALVING_DOUBLING) {
    size_t q = 1;
    while (2 * q <= p)
      q *= 2;
    for (size_t j = 0; j < q; j++)
      v[j] = j < p - q ? x[2 * j][i] + x[2 * j + 1][i] : x[j + p - q][i];
    return tree_sum(v, q);
  }
  size_t root = s->op == COLL_REDUCE ? s->root : 0;
  for (size_t j = 0; j < p; j++)
    v[j] = x[(j + root) % p][i];
  return tree_sum(v, p);
}

static inline int holds(const spec *s, size_t me, size_t i)
{
  if (s->op == COLL_REDUCE)
    return me == s->root;
  return s->op != COLL_REDUCE_SCATTER || block_of(s->n, s->p, i) == me;
}

/* Checks every member of group g in r against expected (bit for bit) and the rank-order
 * sum (TOL_SUM_REL of sum |x|). */
static inline void check_numbers(const spec *s, const result *r, size_t g)
{
  double **x = inputs(g, s->p, s->n);
  for (size_t me = 0; me < s->p; me++)
    for (size_t i = 0; i < s->n; i++) {
      if (!holds(s, me, i))
        continue;
      double got = r->buf[(g * s->p + me) * s->n + i], want = expected(s, x, i), plain = 0, mag = 0;
      ck_assert_msg(memcmp(&got, &want, sizeof(double)) == 0, "%s %s p=%zu member %zu element %zu: %.17g, expected %.17g",
                    coll_op_name((coll_op)s->op), coll_algo_name((coll_algo)s->algo), s->p, me, i, got, want);
      if (s->op == COLL_ALLGATHER || s->op == COLL_BCAST)
        continue;
      for (size_t j = 0; j < s->p; j++) {
        plain += x[j][i];
        mag += fabs(x[j][i]);
      }
      ck_assert_msg(fabs(got - plain) <= TOL_SUM_REL * mag, "element %zu: %.17g vs rank-order %.17g", i, got, plain);
    }
  free_inputs(x, s->p);
}

/* ---- the cases ---------------------------------------------------------------------- */

/* (op, algo) pairs and member counts, non-powers of two included: 7 x 6 cases. */
static const int cases[][2] = {{COLL_ALLREDUCE, COLL_RING},       {COLL_ALLREDUCE, COLL_HALVING_DOUBLING},
                               {COLL_ALLREDUCE, COLL_TREE},       {COLL_REDUCE_SCATTER, COLL_RING},
                               {COLL_ALLGATHER, COLL_RING},       {COLL_BCAST, COLL_TREE},
                               {COLL_REDUCE, COLL_TREE}};
static const size_t sizes_p[] = {1, 2, 3, 5, 8, 13};
#define N_CASES (int)(sizeof(cases) / sizeof(cases[0]))
#define N_P (int)(sizeof(sizes_p) / sizeof(sizes_p[0]))

#endif

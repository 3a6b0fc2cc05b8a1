/* check_collectives.c - algorithms/collectives: numeric results equal serial sums in each
 * algorithm's stated order bit for bit (and the rank-order sum within 1e-12), identical
 * run to run (1 and 2 SimGrid threads), chunked equal to unchunked, communicators side by
 * side, simulated times equal to the alpha-beta formulas over a (p, size) grid, the
 * all-to-all of variable blocks delivering each block with each pair's bytes. The CLI
 * entry (`run.algorithm = collective`) and `dtsim reproduce collectives` are in
 * sim_collectives.c.
 *
 * Every simulation runs in a child process forked by the test (SimGrid allows one engine
 * per process), which writes the clock and every member's buffer to a file for the test
 * to compare. The platform, written by the test: 64 hosts of 1 Gflop/s, each on its own
 * SPLITDUPLEX link of 1.25e9 B/s and 1 us to one switch, CM02 and no TCP cross traffic
 * (results/collectives/README.md says why): alpha = 2 us + 64 header bytes / 1.25e9,
 * beta = 1 / 1.25e9 s per byte. */
#include <check.h>
#include <math.h>
#include <signal.h>
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
#include "check_util.h"
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
/* TOL_P2P_S: one transfer's latency + size / bandwidth, rounding ~1e-21 s on 2e-6 s; 1e-15 s
 * is far above that and far below one byte more (8e-10 s at 1.25e9 B/s). */
#define TOL_P2P_S 1e-15
/* TOL_MODEL_REL: the accuracy accepted for CM02 against the alpha-beta formulas (the
 * measured worst is 4.7e-15 over the whole grid, results/collectives/README.md). */
#define TOL_MODEL_REL 0.03
/* TOL_GAMMA_REL: summed event times round at ~1e-15 relative (as above); the gamma term is up
 * to ~6% of these times, so a missing or doubled term fails by far; 1e-9 sits between. */
#define TOL_GAMMA_REL 1e-9
/* TOL_ROUNDS_REL: rounds against messages and the formula on this contention-free star. A
 * round adds the same latencies and bytes as the step messages in another grouping (s - 1
 * chain transfers, one transfer of s steps' bytes), ~2s events x u ~ 1e-13 relative at
 * s = 126 steps; measured: at most 2e-15 over the grid; 1e-12 leaves a margin and is far
 * below one step's latency (1 / 126 of a latency-bound time). */
#define TOL_ROUNDS_REL 1e-12
/* TOL_KNOWN_S: a hand sum of <= 6 terms below 5e-2 s rounds by < 6 u 5e-2 ~ 3e-17 s;
 * 1e-15 s leaves a margin. */
#define TOL_KNOWN_S 1e-15
/* TOL_HOLD_REL: a 1-s execution that shares its host with a bounded one for 0.1 s ends at
 * 1.02 s, a sum of a few event durations rounding at ~1e-15 relative; 1e-12 leaves a margin
 * and is far below what one SM more or less would move it (2e-3). */
#define TOL_HOLD_REL 1e-12

static const char platform_xml[] =
    "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    "<platform version=\"4.1\">\n  <config>\n    <prop id=\"network/model\" value=\"CM02\"/>\n"
    "    <prop id=\"network/crosstraffic\" value=\"0\"/>\n  </config>\n"
    "  <cluster id=\"c\" prefix=\"host-\" suffix=\"\" radical=\"0-63\" speed=\"1Gf\" core=\"1\" bw=\"1.25GBps\" "
    "lat=\"1us\" sharing_policy=\"SPLITDUPLEX\"/>\n</platform>\n";

/* ---- one simulation in a child process ---------------------------------------------- */

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

/* x_{g,r}[i]: uniform in [-1, 1) with full mantissas (two 32-bit draws, as collbench),
 * from a fixed-seed stream per member, so sums are sensitive to their order. */
static void fill_input(size_t g, size_t r, size_t n, double *x)
{
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 1000 + 100 * g + r);
  for (size_t i = 0; i < n; i++) {
    double hi = gsl_rng_uniform(rng), lo = gsl_rng_uniform(rng);
    x[i] = 2 * (hi + lo * 0x1p-32) - 1;
  }
  gsl_rng_free(rng);
}

static void run_op(const spec *s, coll_comm *c, size_t me, double *buf, size_t n)
{
  switch ((coll_op)s->op) {
  case COLL_ALLREDUCE: coll_allreduce(c, me, buf, n, (coll_algo)s->algo); return;
  case COLL_REDUCE_SCATTER: coll_reduce_scatter(c, me, buf, n); return;
  case COLL_ALLGATHER: coll_allgather(c, me, buf, n); return;
  case COLL_BCAST: coll_bcast(c, me, s->root, buf, n); return;
  case COLL_REDUCE: coll_reduce(c, me, s->root, buf, n); return;
  }
}

static void member_actor(int argc, char **argv)
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
static void simulate(const spec *s, const char *path, const char *plat)
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

static char *plat_path(void)
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
static int run_spec(const spec *s, result *r)
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

static result run_ok(const spec *s)
{
  result r = {0, 0, NULL};
  int st = run_spec(s, &r);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the simulation failed (status %d)", st);
  return r;
}

/* ---- serial references written here, independently of coll_reference --------------- */

/* The inputs of group g, x[r][i]. */
static double **inputs(size_t g, size_t p, size_t n)
{
  double **x = malloc(p * sizeof(double *));
  for (size_t r = 0; r < p; r++) {
    x[r] = malloc((n + 1) * sizeof(double));
    fill_input(g, r, n + 1, x[r]);
  }
  return x;
}

static void free_inputs(double **x, size_t p)
{
  for (size_t r = 0; r < p; r++)
    free(x[r]);
  free(x);
}

/* Pairwise tree of v[0..m-1], neighbours first: ((v0+v1)+(v2+v3))+... */
static double tree_sum(double *v, size_t m)
{
  for (size_t d = 1; d < m; d *= 2)
    for (size_t j = 0; j + d < m; j += 2 * d)
      v[j] += v[j + d];
  return v[0];
}

/* The block of element i among p blocks of n (sizes differ by at most one, larger first). */
static size_t block_of(size_t n, size_t p, size_t i)
{
  size_t base = n / p, extra = n % p, big = extra * (base + 1);
  return i < big ? i / (base + 1) : extra + (i - big) / base;
}

/* Element i of the sum, in the order of (op, algo): ring x[b+1] + ... + x[b]; halving-
 * doubling pairs the first 2r ranks then a pairwise tree; binomial tree from root. */
static double expected(const spec *s, double **x, size_t i)
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

static int holds(const spec *s, size_t me, size_t i)
{
  if (s->op == COLL_REDUCE)
    return me == s->root;
  return s->op != COLL_REDUCE_SCATTER || block_of(s->n, s->p, i) == me;
}

/* Checks every member of group g in r against expected (bit for bit) and the rank-order
 * sum (TOL_SUM_REL of sum |x|). */
static void check_numbers(const spec *s, const result *r, size_t g)
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

/* ---- numbers ------------------------------------------------------------------------ */

/* (op, algo) pairs and member counts, non-powers of two included: 7 x 6 cases. */
static const int cases[][2] = {{COLL_ALLREDUCE, COLL_RING},       {COLL_ALLREDUCE, COLL_HALVING_DOUBLING},
                               {COLL_ALLREDUCE, COLL_TREE},       {COLL_REDUCE_SCATTER, COLL_RING},
                               {COLL_ALLGATHER, COLL_RING},       {COLL_BCAST, COLL_TREE},
                               {COLL_REDUCE, COLL_TREE}};
static const size_t sizes_p[] = {1, 2, 3, 5, 8, 13};
#define N_CASES (int)(sizeof(cases) / sizeof(cases[0]))
#define N_P (int)(sizeof(sizes_p) / sizeof(sizes_p[0]))

/* 37 elements (not a multiple of any p above but 1: uneven blocks); root 1 where p > 1. */
START_TEST(test_collectives_serial_sum)
{
  spec s = {cases[_i / N_P][0], cases[_i / N_P][1], sizes_p[_i % N_P], 37, 0, 0, 1, 0, 1, {0}, {1}, 0, 0, 0, 0, 0, 0};
  s.root = s.p > 1 ? 1 : 0;
  result r = run_ok(&s);
  check_numbers(&s, &r, 0);
  free(r.buf);
}
END_TEST

/* Fewer elements than members: empty blocks still travel (as header-only messages). */
START_TEST(test_collectives_tiny)
{
  spec s = {cases[_i][0], cases[_i][1], 8, 3, 2, 0, 1, 0, 1, {0}, {1}, 0, 0, 0, 0, 0, 0};
  result r = run_ok(&s);
  check_numbers(&s, &r, 0);
  free(r.buf);
}
END_TEST

/* The same simulation twice, and with two SimGrid threads: identical clocks and buffers. */
START_TEST(test_collectives_determinism)
{
  spec s = {cases[_i][0], cases[_i][1], 6, 1000, 0, 0, 1, 0, 1, {0}, {1}, 0, 0, 0, 0, 0, 0};
  result a = run_ok(&s), b = run_ok(&s);
  s.threads = 2;
  result c = run_ok(&s);
  ck_assert(a.t == b.t && a.t == c.t);
  ck_assert(memcmp(a.buf, b.buf, s.p * s.n * sizeof(double)) == 0);
  ck_assert(memcmp(a.buf, c.buf, s.p * s.n * sizeof(double)) == 0);
  free(a.buf), free(b.buf), free(c.buf);
}
END_TEST

/* Chunks of 5 elements (20 bytes) over 1000 elements: the same numbers as unchunked, and
 * a different (longer, as each chunk pays alpha) time, so chunking did happen. */
START_TEST(test_collectives_chunked)
{
  spec s = {cases[_i][0], cases[_i][1], 5, 1000, 2, 0, 1, 0, 1, {0}, {1}, 0, 0, 0, 0, 0, 0};
  result whole = run_ok(&s);
  s.chunk = 20;
  result chunked = run_ok(&s);
  check_numbers(&s, &chunked, 0);
  ck_assert(memcmp(whole.buf, chunked.buf, s.p * s.n * sizeof(double)) == 0);
  ck_assert_msg(chunked.t != whole.t, "chunked %.17g, whole %.17g", chunked.t, whole.t);
  free(whole.buf), free(chunked.buf);
}
END_TEST

/* Two communicators side by side: "tp" on even hosts, "dp" on odd ones, each runs the
 * collective on its own data at once; then each member joins an allreduce over all 8
 * hosts with its result. Group results must be their own sums, and on this
 * non-blocking switch two disjoint groups take the time of one alone. */
START_TEST(test_collectives_subgroups)
{
  spec s = {COLL_ALLREDUCE, cases[_i][1], 4, 100, 0, 0, 1, 0, 2, {0, 1}, {2, 2}, 0, 0, 0, 0, 0, 0}; /* cases 0-2 */
  result both = run_ok(&s);
  check_numbers(&s, &both, 0);
  check_numbers(&s, &both, 1);
  spec one = s;
  one.groups = 1;
  result alone = run_ok(&one);
  ck_assert_msg(fabs(both.t - alone.t) <= TOL_TIME_REL * alone.t, "two groups %.17g, one %.17g", both.t, alone.t);
  /* then a world allreduce over the 8 hosts: every member holds the sum of the eight group
   * results, member h's result sitting at world rank h */
  spec w = s;
  w.world = 8;
  result all = run_ok(&w);
  double *first = &all.buf[0];
  for (size_t k = 1; k < 8; k++)
    ck_assert(memcmp(first, &all.buf[k * s.n], s.n * sizeof(double)) == 0);
  for (size_t i = 0; i < s.n; i++) {
    double sum = 0, mag = 0;
    for (size_t g = 0; g < 2; g++)
      for (size_t r = 0; r < s.p; r++) {
        sum += both.buf[(g * s.p + r) * s.n + i];
        mag += fabs(both.buf[(g * s.p + r) * s.n + i]);
      }
    ck_assert(fabs(first[i] - sum) <= TOL_SUM_REL * mag);
  }
  free(both.buf), free(alone.buf), free(all.buf);
}
END_TEST

/* Members that call with different sizes break an invariant: the simulation aborts. */
START_TEST(test_collectives_mismatch_aborts)
{
  spec s = {COLL_ALLREDUCE, COLL_RING, 4, 16, 0, 0, 1, 0, 1, {0}, {1}, 0, 0, 1, 0, 0, 0};
  result r = {0, 0, NULL};
  int st = run_spec(&s, &r);
  ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "status %d", st);
}
END_TEST

/* Point to point: 10 elements from host-3 to host-40 arrive intact after alpha + 40 beta
 * (checked in the child: exit 3 for wrong values, 4 for a wrong time). */
static void sender(int argc, char **argv)
{
  (void)argc, (void)argv;
  double out[10];
  for (int i = 0; i < 10; i++)
    out[i] = i + 0.5;
  coll_send(sg_actor_self_get_data(), 0, 1, out, 10);
}

static void receiver(int argc, char **argv)
{
  (void)argc, (void)argv;
  double in[10];
  coll_recv(sg_actor_self_get_data(), 1, 0, in, 10);
  for (int i = 0; i < 10; i++)
    if (in[i] != i + 0.5)
      _exit(3);
  if (fabs(simgrid_get_clock() - (ALPHA + 40 * BETA)) > TOL_P2P_S)
    _exit(4);
}

START_TEST(test_collectives_sendrecv)
{
  const char *plat = plat_path();
  pid_t pid = fork();
  if (pid == 0) {
    char *argv[] = {"check_collectives", "--log=root.thresh:critical", SANITIZE_CONTEXTS NULL};
    int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
    simgrid_init(&argc, argv);
    simgrid_load_platform(plat);
    sg_host_t h[2] = {sg_host_by_name("host-3"), sg_host_by_name("host-40")};
    coll_opts o = {4, 0, NULL, 0, COLL_MESSAGES, 0};
    coll_comm *c = coll_comm_create("p2p", h, 2, &o);
    sg_actor_t a = sg_actor_init("s", h[0]);
    sg_actor_set_data(a, c);
    sg_actor_start(a, sender, 0, NULL);
    sg_actor_t b = sg_actor_init("r", h[1]);
    sg_actor_set_data(b, c);
    sg_actor_start(b, receiver, 0, NULL);
    simgrid_run();
    _exit(0);
  }
  int st;
  waitpid(pid, &st, 0);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
}
END_TEST

/* All-to-all of variable blocks: 4 members on hosts 0, 9, 21, 40; member s sends member d
 * A2A_COUNT[s][d] elements, value 1000 s + 10 d + i (zeros included: no message). In the
 * child: every member receives its blocks intact (exit 3), each pair's bytes (msg_traffic)
 * are its block's elements x 4 + the header, none for an empty block (exit 4), and a timing-only run
 * sends the same bytes (exit 5). */
#define A2A_P 4
static const size_t A2A_COUNT[A2A_P][A2A_P] = {{2, 5, 0, 1}, {3, 0, 7, 0}, {0, 4, 1, 6}, {9, 0, 2, 3}};
static const char *const A2A_HOSTS[A2A_P] = {"host-0", "host-9", "host-21", "host-40"};

typedef struct a2a_member {
  coll_comm *c;
  size_t me;
  int numeric;
} a2a_member;

static void a2a_actor(int argc, char **argv)
{
  (void)argc, (void)argv;
  a2a_member *a = sg_actor_self_get_data();
  size_t sc[A2A_P], rc[A2A_P], st = 0, rt = 0;
  for (size_t q = 0; q < A2A_P; q++) {
    sc[q] = A2A_COUNT[a->me][q];
    rc[q] = A2A_COUNT[q][a->me];
    st += sc[q];
    rt += rc[q];
  }
  double *send = malloc((st + 1) * sizeof(double)), *recv = malloc((rt + 1) * sizeof(double));
  for (size_t q = 0, o = 0; q < A2A_P; o += sc[q], q++)
    for (size_t i = 0; i < sc[q]; i++)
      send[o + i] = 1000.0 * (double)a->me + 10.0 * (double)q + (double)i;
  coll_alltoallv(a->c, a->me, a->numeric ? send : NULL, sc, a->numeric ? recv : NULL, rc);
  for (size_t q = 0, o = 0; a->numeric && q < A2A_P; o += rc[q], q++)
    for (size_t i = 0; i < rc[q]; i++)
      if (recv[o + i] != 1000.0 * (double)q + 10.0 * (double)a->me + (double)i)
        _exit(3);
  free(send);
  free(recv);
}

static sg_host_t a2a_hosts[A2A_P];
static int a2a_ok;

static void a2a_pair(void *ctx, sg_host_t src, sg_host_t dst, double bytes)
{
  (void)ctx;
  size_t s = A2A_P, d = A2A_P;
  for (size_t q = 0; q < A2A_P; q++) {
    s = a2a_hosts[q] == src ? q : s;
    d = a2a_hosts[q] == dst ? q : d;
  }
  double want = s < A2A_P && d < A2A_P && A2A_COUNT[s][d] ? msg_bytes((double)A2A_COUNT[s][d], 4) : -1;
  a2a_ok = a2a_ok && bytes == want;
}

static void a2a_run(int numeric)
{
  const char *plat = plat_path();
  char *argv[] = {"check_collectives", "--log=root.thresh:critical", SANITIZE_CONTEXTS NULL};
  int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
  simgrid_init(&argc, argv);
  simgrid_load_platform(plat);
  for (size_t q = 0; q < A2A_P; q++)
    a2a_hosts[q] = sg_host_by_name(A2A_HOSTS[q]);
  msg_traffic_init(a2a_hosts, A2A_P);
  coll_opts o = {4, 0, NULL, 0, COLL_MESSAGES, 0};
  coll_comm *c = coll_comm_create("a2a", a2a_hosts, A2A_P, &o);
  a2a_member m[A2A_P];
  for (size_t q = 0; q < A2A_P; q++) {
    m[q] = (a2a_member){c, q, numeric};
    sg_actor_t a = sg_actor_init("m", a2a_hosts[q]);
    sg_actor_set_data(a, &m[q]);
    sg_actor_start(a, a2a_actor, 0, NULL);
  }
  simgrid_run();
  double want = 0;
  for (size_t s = 0; s < A2A_P; s++)
    for (size_t d = 0; d < A2A_P; d++)
      if (s != d && A2A_COUNT[s][d])
        want += msg_bytes((double)A2A_COUNT[s][d], 4);
  a2a_ok = 1;
  msg_traffic_foreach(a2a_pair, NULL);
  if (!a2a_ok || msg_bytes_sent() != want)
    _exit(numeric ? 4 : 5);
  _exit(0);
}

START_TEST(test_collectives_alltoallv)
{
  for (int numeric = 1; numeric >= 0; numeric--) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
      a2a_run(numeric);
    int st;
    waitpid(pid, &st, 0);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "numeric %d: status %d (exit %d)", numeric, st,
                  WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  }
}
END_TEST

/* ---- timing --------------------------------------------------------------------------- */

/* Timing only, unchunked, free additions: the simulated time of every (op, algo) at
 * p = 2, 4, 8, 16, 64 and 1 KiB, 1 MiB, 64 MiB is coll_formula's within TOL_MODEL_REL (measured:
 * within 1e-14; results/collectives has the full grid); the formula's own known answers
 * are in test_collectives_formula. */
START_TEST(test_collectives_formula_grid)
{
  static const size_t ps[] = {2, 4, 8, 16, 64};
  static const double bytes[] = {1024, 1048576, 67108864};
  for (size_t a = 0; a < 5; a++)
    for (size_t b = 0; b < 3; b++) {
      spec s = {cases[_i][0], cases[_i][1], ps[a], (size_t)(bytes[b] / 4), 0, 0, 0, 0, 1, {0}, {1}, 0, 0, 0, 0, 0, 0};
      result r = run_ok(&s);
      double f = coll_formula((coll_op)s.op, (coll_algo)s.algo, s.p, bytes[b], ALPHA, BETA, 0);
      ck_assert_msg(fabs(r.t - f) <= TOL_MODEL_REL * f, "%s %s p=%zu %.0f bytes: simulated %.9g, formula %.9g",
                    coll_op_name((coll_op)s.op), coll_algo_name((coll_algo)s.algo), s.p, bytes[b], r.t, f);
    }
}
END_TEST

/* Numeric and timing-only runs take the same simulated time (the same bytes travel), and
 * with reduce_flops = 1 per element on 1 Gflop/s hosts the gamma term is 1e-9 / 4 s per
 * byte, which the formula adds exactly (unchunked: each addition follows its transfer). */
START_TEST(test_collectives_gamma)
{
  spec s = {cases[_i][0], cases[_i][1], 8, 4096, 0, 0, 1, 1, 1, {0}, {1}, 0, 0, 0, 0, 0, 0};
  result num = run_ok(&s);
  s.numeric = 0;
  result tim = run_ok(&s);
  ck_assert(num.t == tim.t);
  double f = coll_formula((coll_op)s.op, (coll_algo)s.algo, s.p, 4096 * 4, ALPHA, BETA, 1e-9 / 4);
  ck_assert_msg(fabs(tim.t - f) <= TOL_GAMMA_REL * f, "simulated %.17g, formula %.17g", tim.t, f);
  free(num.buf);
}
END_TEST

/* Known answers, by hand: p = 8, n = 8e6 bytes, alpha = 1e-6, beta = 1e-9, gamma = 1e-10.
 * ring: 14e-6 + 2 (7/8) 8e-3 + (7/8) 8e-4 = 14.014e-3; halving-doubling: 6e-6 + 14e-3 +
 * 0.7e-3 = 14.706e-3; tree: 6 (1e-6 + 8e-3) + 3 (8e-4) = 50.406e-3; reduce-scatter and
 * allgather 7 (1e-6 + 1e-3 [+ 1e-4]); broadcast 3 (1e-6 + 8e-3). p = 6 halving-doubling
 * (q = 4): 4e-6 + 2 (3/4) 8e-3 + (3/4) 8e-4 + 2 (1e-6 + 8e-3) + 8e-4. */
START_TEST(test_collectives_formula)
{
  double n = 8e6, a = 1e-6, b = 1e-9, g = 1e-10;
  ck_assert_double_eq_tol(coll_formula(COLL_ALLREDUCE, COLL_RING, 8, n, a, b, g), 14e-6 + 14e-3 + 0.7e-3, TOL_KNOWN_S);
  ck_assert_double_eq_tol(coll_formula(COLL_ALLREDUCE, COLL_HALVING_DOUBLING, 8, n, a, b, g), 6e-6 + 14e-3 + 0.7e-3,
                          TOL_KNOWN_S);
  ck_assert_double_eq_tol(coll_formula(COLL_ALLREDUCE, COLL_TREE, 8, n, a, b, g), 6 * (a + 8e-3) + 3 * 8e-4,
                          TOL_KNOWN_S);
  ck_assert_double_eq_tol(coll_formula(COLL_REDUCE_SCATTER, COLL_RING, 8, n, a, b, g), 7 * (a + 1e-3 + 1e-4),
                          TOL_KNOWN_S);
  ck_assert_double_eq_tol(coll_formula(COLL_ALLGATHER, COLL_RING, 8, n, a, b, g), 7 * (a + 1e-3), TOL_KNOWN_S);
  ck_assert_double_eq_tol(coll_formula(COLL_BCAST, COLL_TREE, 8, n, a, b, g), 3 * (a + 8e-3), TOL_KNOWN_S);
  ck_assert_double_eq_tol(coll_formula(COLL_REDUCE, COLL_TREE, 8, n, a, b, g), 3 * (a + 8e-3 + 8e-4), TOL_KNOWN_S);
  ck_assert_double_eq_tol(coll_formula(COLL_ALLREDUCE, COLL_HALVING_DOUBLING, 6, n, a, b, g),
                          4e-6 + 12e-3 + 6e-4 + 2 * (a + 8e-3) + 8e-4, TOL_KNOWN_S);
  ck_assert_double_eq_tol(coll_formula(COLL_BCAST, COLL_TREE, 5, n, a, b, g), 3 * (a + 8e-3), TOL_KNOWN_S);
  ck_assert(coll_formula(COLL_ALLREDUCE, COLL_RING, 1, n, a, b, g) == 0);
  /* nccl-tests PERFORMANCE.md: allreduce 2(n-1)/n, reduce-scatter and allgather (n-1)/n, bcast 1 */
  ck_assert(coll_busbw_factor(COLL_ALLREDUCE, 8) == 1.75 && coll_busbw_factor(COLL_ALLGATHER, 8) == 0.875 &&
            coll_busbw_factor(COLL_BCAST, 8) == 1);
  coll_op op;
  coll_algo al;
  ck_assert(coll_op_parse("reduce-scatter", &op) == 0 && op == COLL_REDUCE_SCATTER);
  ck_assert(coll_algo_parse("halving-doubling", &al) == 0 && al == COLL_HALVING_DOUBLING);
  ck_assert(coll_op_parse("alltoall", &op) == -1 && coll_algo_parse("rabenseifner", &al) == -1);
  size_t off, len;
  coll_block(10, 4, 1, &off, &len);
  ck_assert(off == 3 && len == 3);
  coll_block(10, 4, 3, &off, &len);
  ck_assert(off == 8 && len == 2);
  coll_opts bad = {0, 0, NULL, 0, COLL_MESSAGES, 0};
  ck_assert_ptr_null(coll_comm_create("x", NULL, 0, &bad));
}
END_TEST


/* ---- rounds (COLL_ROUNDS) ------------------------------------------------------------ */

/* Rounds give every (op, algo) and p the numbers of messages bit for bit where the op
 * defines them (reduce-scatter leaves the rest of buf as scratch, which differs), the same
 * bytes on the wire, and, on this contention-free star, the messages' time but for uneven
 * blocks: 37 elements over p members make blocks of two sizes, each message step then waits
 * for its largest block while a round's transfers carry each member's own blocks, shorter
 * by up to one element per step (here up to 24 steps x 4 bytes x beta = 7.7e-8 s), never
 * longer. Halving-doubling and trees run as messages in rounds mode: equal times. */
START_TEST(test_collectives_rounds_numbers)
{
  spec s = {cases[_i / N_P][0], cases[_i / N_P][1], sizes_p[_i % N_P], 37, 0, 0, 1, 0, 1, {0}, {1}, 0, 0, 0, 0, 0, 0};
  s.root = s.p > 1 ? 1 : 0;
  result msgs = run_ok(&s);
  s.rounds = 1;
  result rnd = run_ok(&s);
  check_numbers(&s, &rnd, 0);
  for (size_t me = 0; me < s.p; me++)
    for (size_t i = 0; i < s.n; i++)
      ck_assert(!holds(&s, me, i) || memcmp(&msgs.buf[me * s.n + i], &rnd.buf[me * s.n + i], sizeof(double)) == 0);
  ck_assert_msg(rnd.bytes == msgs.bytes, "rounds %.17g bytes, messages %.17g", rnd.bytes, msgs.bytes);
  int ring = s.algo == COLL_RING || s.op == COLL_REDUCE_SCATTER || s.op == COLL_ALLGATHER;
  size_t steps = !ring || s.p < 2 ? 0 : s.op == COLL_ALLREDUCE ? 2 * (s.p - 1) : s.p - 1;
  double uneven = (double)steps * 4 * BETA;
  ck_assert_msg(rnd.t <= msgs.t * (1 + TOL_ROUNDS_REL) && msgs.t - rnd.t <= uneven + TOL_ROUNDS_REL * msgs.t,
                "%s %s p=%zu: rounds %.17g s, messages %.17g s", coll_op_name((coll_op)s.op),
                coll_algo_name((coll_algo)s.algo), s.p, rnd.t, msgs.t);
  free(msgs.buf), free(rnd.buf);
}
END_TEST

/* Timing only, ring ops, p = 2 .. 64 and 1 KiB .. 64 MiB (even blocks): a round's time is
 * the formula's within TOL_ROUNDS_REL (each step's latency is in it: dropping one latency of
 * 2(p-1) would miss by more than 1e-4 at 1 KiB), with the messages' bytes. */
START_TEST(test_collectives_rounds_formula)
{
  static const int ring_ops[] = {COLL_ALLREDUCE, COLL_REDUCE_SCATTER, COLL_ALLGATHER};
  static const size_t ps[] = {2, 4, 8, 64};
  static const double bytes[] = {1024, 1048576, 67108864};
  for (size_t a = 0; a < 4; a++)
    for (size_t b = 0; b < 3; b++) {
      spec s = {ring_ops[_i], COLL_RING, ps[a], (size_t)(bytes[b] / 4), 0, 0, 0, 0, 1, {0}, {1}, 0, 0, 0, 1, 0, 0};
      result r = run_ok(&s);
      double f = coll_formula((coll_op)s.op, COLL_RING, s.p, bytes[b], ALPHA, BETA, 0);
      ck_assert_msg(fabs(r.t - f) <= TOL_ROUNDS_REL * f, "%s p=%zu %.0f bytes: rounds %.17g, formula %.17g",
                    coll_op_name((coll_op)s.op), s.p, bytes[b], r.t, f);
      size_t steps = s.op == COLL_ALLREDUCE ? 2 * (s.p - 1) : s.p - 1;
      double wire = (double)s.p * steps * (bytes[b] / (double)s.p + MSG_HEADER_BYTES);
      ck_assert_msg(fabs(r.bytes - wire) <= 0.5, "%.17g bytes, messages send %.17g", r.bytes, wire);
    }
}
END_TEST

/* Rounds with the gamma term (one addition per received element, 1 Gflop/s hosts): the
 * formula's time, and numbers equal to messages'. */
START_TEST(test_collectives_rounds_gamma)
{
  static const int ring_ops[] = {COLL_ALLREDUCE, COLL_REDUCE_SCATTER, COLL_ALLGATHER};
  spec s = {ring_ops[_i], COLL_RING, 8, 4096, 0, 0, 1, 1, 1, {0}, {1}, 0, 0, 0, 1, 0, 0};
  result r = run_ok(&s);
  check_numbers(&s, &r, 0);
  double f = coll_formula((coll_op)s.op, COLL_RING, s.p, 4096 * 4, ALPHA, BETA, 1e-9 / 4);
  ck_assert_msg(fabs(r.t - f) <= TOL_GAMMA_REL * f, "rounds %.17g, formula %.17g", r.t, f);
  free(r.buf);
}
END_TEST

/* Rounds: identical clocks and buffers run to run and on two SimGrid threads; two groups
 * side by side each get their own sums and take one group's time; chunked communicators
 * run as messages (the messages' chunked time exactly); members that disagree abort. */
START_TEST(test_collectives_rounds_misc)
{
  spec s = {COLL_ALLREDUCE, COLL_RING, 6, 1000, 0, 0, 1, 0, 1, {0}, {1}, 0, 0, 0, 1, 0, 0};
  result a = run_ok(&s), b = run_ok(&s);
  s.threads = 2;
  result c = run_ok(&s);
  ck_assert(a.t == b.t && a.t == c.t);
  ck_assert(memcmp(a.buf, b.buf, s.p * s.n * sizeof(double)) == 0 && memcmp(a.buf, c.buf, s.p * s.n * sizeof(double)) == 0);
  free(a.buf), free(b.buf), free(c.buf);

  spec g = {COLL_ALLREDUCE, COLL_RING, 4, 100, 0, 0, 1, 0, 2, {0, 1}, {2, 2}, 0, 0, 0, 1, 0, 0};
  result both = run_ok(&g);
  check_numbers(&g, &both, 0);
  check_numbers(&g, &both, 1);
  g.groups = 1;
  result alone = run_ok(&g);
  ck_assert_msg(fabs(both.t - alone.t) <= TOL_TIME_REL * alone.t, "two groups %.17g, one %.17g", both.t, alone.t);
  free(both.buf), free(alone.buf);

  spec k = {COLL_ALLREDUCE, COLL_RING, 5, 1000, 0, 20, 1, 0, 1, {0}, {1}, 0, 0, 0, 1, 0, 0};
  result kr = run_ok(&k);
  k.rounds = 0;
  result km = run_ok(&k);
  ck_assert(kr.t == km.t && memcmp(kr.buf, km.buf, k.p * k.n * sizeof(double)) == 0);
  free(kr.buf), free(km.buf);

  spec bad = {COLL_ALLREDUCE, COLL_RING, 4, 16, 0, 0, 1, 0, 1, {0}, {1}, 0, 0, 1, 1, 0, 0};
  result r = {0, 0, NULL};
  int st = run_spec(&bad, &r);
  ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "status %d", st);
}
END_TEST

/* A batch (an allreduce, an allgather and a reduce-scatter, 5 times; algorithms/tensor.c's
 * fused layers) against the same collectives one by one, p = 2, 5 and 8, 4,000 elements (even
 * and uneven blocks): as one round, the same bytes and, on this contention-free star, the time
 * of the rounds one after another within TOL_ROUNDS_REL (a chain of all the steps' latencies,
 * one transfer of all their bytes; dropping one latency of the 5 x 4(p - 1) steps would miss by
 * more than 1e-4); at message level, and with a halving-doubling allreduce in rounds mode, the
 * batch runs them one by one: equal clocks. */
START_TEST(test_collectives_rounds_batch)
{
  static const size_t ps[] = {2, 5, 8};
  for (size_t a = 0; a < 3; a++)
    for (int rounds = 0; rounds < 2; rounds++)
      for (int algo = COLL_RING; algo <= COLL_HALVING_DOUBLING; algo++) {
        spec s = {COLL_ALLREDUCE, algo, ps[a], 4000, 0, 0, 0, 0, 1, {0}, {1}, 0, 0, 0, rounds, 5, 0};
        result one = run_ok(&s);
        s.batched = 1;
        result batch = run_ok(&s);
        ck_assert_msg(batch.bytes == one.bytes, "p=%zu: batch %.17g bytes, one by one %.17g", s.p, batch.bytes,
                      one.bytes);
        if (rounds && algo == COLL_RING)
          ck_assert_msg(fabs(batch.t - one.t) <= TOL_ROUNDS_REL * one.t, "p=%zu: batch %.17g s, one by one %.17g s",
                        s.p, batch.t, one.t);
        else
          ck_assert_msg(batch.t == one.t, "p=%zu %s %s: batch %.17g s, one by one %.17g s", s.p,
                        rounds ? "rounds" : "messages", coll_algo_name((coll_algo)algo), batch.t, one.t);
      }
}
END_TEST

/* ---- the SMs a collective holds (coll_opts.hold_sms) ---------------------------------- */

/* Two GPU hosts of 1 Gflop/s whose collectives hold 2 of their 10 SMs (a share of 0.2),
 * on the star's links. */
static const char gpu_xml[] =
    "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    "<platform version=\"4.1\">\n  <config>\n    <prop id=\"network/model\" value=\"CM02\"/>\n"
    "    <prop id=\"network/crosstraffic\" value=\"0\"/>\n  </config>\n"
    "  <cluster id=\"g\" prefix=\"gpu-\" suffix=\"\" radical=\"0-1\" speed=\"1Gf\" core=\"1\" bw=\"1.25GBps\" "
    "lat=\"1us\" sharing_policy=\"SPLITDUPLEX\">\n"
    "    <prop id=\"gpu_sms\" value=\"10\"/>\n    <prop id=\"gpu_comm_sms\" value=\"2\"/>\n"
    "  </cluster>\n</platform>\n";
#define HOLD_SHARE 0.2
#define HOLD_ELEMS 31250000 /* 125 MB: a 2-member ring allreduce of 2 (alpha + 62.5 MB beta) = 0.1 s */

typedef struct hold_case {
  coll_comm *c;
  int batched;
  double exec_end; /* member 0: when its 1-s execution beside the allreduce ended */
} hold_case;

static void hold_member(int argc, char **argv)
{
  (void)argc;
  hold_case *hc = sg_actor_self_get_data();
  size_t me = (size_t)atoi(argv[0]);
  sg_exec_t e = NULL;
  if (me == 0) {
    e = sg_actor_exec_init(1e9);
    sg_exec_start(e);
  }
  const coll_op op = COLL_ALLREDUCE;
  if (hc->batched)
    coll_batch(hc->c, me, &op, 1, 1, HOLD_ELEMS, COLL_RING);
  else
    coll_allreduce(hc->c, me, NULL, HOLD_ELEMS, COLL_RING);
  if (e) {
    sg_exec_wait(e);
    hc->exec_end = simgrid_get_clock();
  }
}

/* In a child: member 0 runs 1 s of compute beside a 0.1-s allreduce (hold on or off, messages
 * or rounds, alone or as a batch); exits 0 when the execution ended, and the engine with it,
 * at 1 + share x 0.1 s (the compute loses the held share while the allreduce runs and nothing
 * after: the hold ends with the collective), else 3. */
static void hold_child(const char *plat, int hold, int rounds, int batched)
{
  char *argv[] = {"check_collectives", "--log=root.thresh:critical", SANITIZE_CONTEXTS NULL};
  int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
  simgrid_init(&argc, argv);
  simgrid_load_platform(plat);
  sg_host_t h[2] = {sg_host_by_name("gpu-0"), sg_host_by_name("gpu-1")};
  coll_opts o = {4, 0, NULL, 0, rounds ? COLL_ROUNDS : COLL_MESSAGES, hold};
  hold_case hc = {coll_comm_create("hold", h, 2, &o), batched, 0};
  for (int r = 0; r < 2; r++) {
    char *args[] = {r ? "1" : "0"};
    sg_actor_t a = sg_actor_init(r ? "m1" : "m0", h[r]);
    sg_actor_set_data(a, &hc);
    sg_actor_start(a, hold_member, 1, args);
  }
  simgrid_run();
  double t = 2 * (ALPHA + HOLD_ELEMS / 2 * 4.0 * BETA), want = 1 + (hold ? HOLD_SHARE * t : 0);
  int ok = fabs(hc.exec_end - want) <= TOL_HOLD_REL * want && simgrid_get_clock() == hc.exec_end;
  if (!ok)
    fprintf(stdout, "hold %d rounds %d batch %d: compute ended at %.17g s (want %.17g), engine at %.17g s\n", hold,
            rounds, batched, hc.exec_end, want, simgrid_get_clock());
  fflush(stdout);
  _exit(ok ? 0 : 3);
}

START_TEST(test_collectives_hold_sms)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "gpu.xml", gpu_xml);
  char plat[600];
  snprintf(plat, sizeof(plat), "%s/gpu.xml", dir);
  for (int k = 0; k < 8; k++) {
    pid_t pid = fork();
    if (pid == 0)
      hold_child(plat, k & 1, (k >> 1) & 1, (k >> 2) & 1);
    int st;
    waitpid(pid, &st, 0);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "hold %d rounds %d batch %d: status %d", k & 1, (k >> 1) & 1,
                  (k >> 2) & 1, st);
  }
  free(dir); /* removed at exit */
}
END_TEST

static Suite *collectives_suite(void)
{
  Suite *s = suite_create("collectives");
  TCase *tc = tcase_create("numbers");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_collectives_serial_sum, 0, N_CASES * N_P);
  tcase_add_loop_test(tc, test_collectives_tiny, 0, N_CASES);
  tcase_add_test(tc, test_collectives_mismatch_aborts);
  tcase_add_test(tc, test_collectives_sendrecv);
  tcase_add_test(tc, test_collectives_alltoallv);
  suite_add_tcase(s, tc);
  tc = tcase_create("determinism");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_collectives_determinism, 0, N_CASES);
  suite_add_tcase(s, tc);
  tc = tcase_create("chunked");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_collectives_chunked, 0, N_CASES);
  suite_add_tcase(s, tc);
  tc = tcase_create("subgroups");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_collectives_subgroups, 0, 3);
  suite_add_tcase(s, tc);
  tc = tcase_create("timing");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, test_collectives_formula_grid, 0, N_CASES);
  tcase_add_loop_test(tc, test_collectives_gamma, 0, N_CASES);
  tcase_add_test(tc, test_collectives_formula);
  suite_add_tcase(s, tc);
  tc = tcase_create("rounds");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, test_collectives_rounds_numbers, 0, N_CASES * N_P);
  tcase_add_loop_test(tc, test_collectives_rounds_formula, 0, 3);
  tcase_add_loop_test(tc, test_collectives_rounds_gamma, 0, 3);
  tcase_add_test(tc, test_collectives_rounds_misc);
  tcase_add_test(tc, test_collectives_rounds_batch);
  suite_add_tcase(s, tc);
  tc = tcase_create("hold");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_collectives_hold_sms);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(collectives_suite)

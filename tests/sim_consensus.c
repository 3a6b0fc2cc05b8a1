/* sim_consensus.c - distributed subgradient consensus end to end through the CLI,
 * each simulation in its own process: every topology generator runs with Metropolis
 * weights, diminishing steps converge, a constant step stalls at an O(alpha) floor, a
 * complete graph beats a ring, the running averages' and the worst agent's gaps obey
 * convexity, bad graphs and weights are refused, results are
 * deterministic, async agents mix stale values, long async runs hold no more memory
 * than short ones, and the bytes of a round are exact.
 *
 * The stated problem unless a test says otherwise (consensus.* defaults, run.seed 1):
 * 8 agents on a ring, each with 1/2 ||A_i x - b_i||^2 + lambda/(2m) ||x||^2 on 20 rows
 * of dimension 10 (objective_synthetic: A ~ N(0, 1), b = A x_true + N(0, 0.1^2)),
 * lambda = 1, Metropolis weights, x_i(0) = 0, synchronous rounds. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "check_util.h"
#include "cli_util.h"

/* Tolerances and bounds, each with where it comes from (gaps start at 988 with x = 0). */
/* PROGRESS: the gap a short run must end below, as a fraction of its start: measured at
 * most 2.6e-4 after 40 rounds (the time-varying torus; the star 1.1e-4), 2.5e-6 after 50
 * with the matrix weights. */
#define PROGRESS 0.01
/* GAP_TARGET, MAX_ITER_TO_TARGET: the diminishing steps stay below 1e-3 from iteration 44
 * (harmonic) and 42 (sqrt), measured; 200 leaves a margin. GAP_TARGET also times the
 * complete graph (32) against the ring (157). */
#define GAP_TARGET 1e-3
#define MAX_ITER_TO_TARGET 200
/* TOL_GAP_BELOW: f* is the exact reference optimum, so f(xbar) - f* is negative only by
 * the rounding of two sums over 160 rows (~1e-13); measured final gaps 1.1e-5, 1.4e-4. */
#define TOL_GAP_BELOW 1e-9
/* FLAT_REL: a floor's two halves (rounds 300-450 and 450-600) agree within 10%, measured;
 * 30% allows. */
#define FLAT_REL 0.3
/* FLOOR_MIN, FLOOR_RATIO: constant steps 0.02 and 0.005 floor at 2.8 and 0.58 (measured):
 * well above 0, and O(alpha) (Nedic and Ozdaglar 2009) makes the quarter step's floor about
 * a quarter (0.21), below half. */
#define FLOOR_MIN 1e-2
#define FLOOR_RATIO 0.5
/* STALE_MEAN_MIN: measured mean staleness 0.9975 (1 for all but the first round's values). */
#define STALE_MEAN_MIN 0.5
/* ASYNC_GAP_END, GAP_START_MIN: the async run's gap, measured 988 -> 0.0044 in 400
 * iterations. */
#define ASYNC_GAP_END 1e-2
#define GAP_START_MIN 100
/* CONVEXITY_SLACK: the averaged and worst-agent gaps are differences of sums of about 200
 * terms of size up to 1e3 (f* of the L1 problem is about 150): rounding is a few ulps of
 * 1e3, far below any real violation of the convexity checks. */
#define CONVEXITY_SLACK 1e-9
/* AVERAGED_DROP: the running averages' gap falls from 365 (round 1) to 3.0 by round 200,
 * measured: below 5% of its start. */
#define AVERAGED_DROP 0.05
/* MEM_GROWTH_KB: peak RSS at 100 and 800 iterations measured 36.5 and 36.2 MB with inbox
 * actors, 47 and 123 MB when polling: 8 MB of growth separates the two. */
#define MEM_GROWTH_KB (8 * 1024)

static const char base_ini[] =
    "[run]\nalgorithm = consensus\nmax_steps = 300\n"
    "[consensus]\nagents = 8\ntopology = ring\nweights = metropolis\nobjective = least-squares\n"
    "dim = 10\nrows = 20\nlambda = 1\nstep_rule = harmonic\nalpha0 = 0.1\nmode = sync\n";

/* 16 one-core hosts of 1 Mflop/s: a subgradient of 20 x 10 takes 0.8 ms, about a
 * message's trip (LV08: 13.01 x 2 x 50 us), so async agents mix values a round old. */
#define SLOW_HOSTS "platform.file=" TEST_DATA_DIR "/consensus-16.xml"

/* args = `run base.ini --quiet --out OUT`, `--set` and each of sets (NULL terminated),
 * then the extra arguments (NULL terminated, may be NULL), then NULL. */
static void run_args(const char **args, const char *out, const char *const *sets, const char *const *extra)
{
  int n = 0;
  args[n++] = "run";
  args[n++] = "base.ini";
  args[n++] = "--quiet";
  args[n++] = "--out";
  args[n++] = out;
  for (int i = 0; sets && sets[i]; i++) {
    args[n++] = "--set";
    args[n++] = sets[i];
  }
  for (int i = 0; extra && extra[i]; i++)
    args[n++] = extra[i];
  args[n] = NULL;
}

/* Runs dtsim in dir with run_args; returns the exit status. */
static int run_status(const char *dir, const char *out, const char *const *sets, const char *const *extra)
{
  const char *args[64];
  run_args(args, out, sets, extra);
  return cli_run(dir, args);
}

/* The same, asserting success; returns summary.json. */
static json_t *run_ok(const char *dir, const char *out, const char *const *sets, const char *const *extra)
{
  const char *args[64];
  run_args(args, out, sets, extra);
  return cli_summary(dir, args, out);
}

static char *fresh_dir(void)
{
  char *dir = cli_tmpdir();
  cli_write(dir, "base.ini", base_ini);
  return dir;
}

static double sub(const json_t *j, const char *obj, const char *key)
{
  return json_number_value(json_object_get(json_object_get(j, obj), key));
}

/* consensus.csv, column by column. */
typedef struct trace {
  size_t n;
  long it[8192];
  double t[8192], err[8192], gap[8192];
  double erg[8192], agmax[8192], agerg[8192]; /* ergodic_gap, agent_gap_max, agent_ergodic_gap_max */
} trace;

/* The documented columns first, then the running averages' gap and the worst agent's. */
static const char trace_header[] =
    "iteration,sim_time_s,consensus_error,optimality_gap,ergodic_gap,agent_gap_max,agent_ergodic_gap_max\n";

static trace *read_trace(const char *dir, const char *out)
{
  char path[256];
  snprintf(path, sizeof(path), "%s/consensus.csv", out);
  char *csv = cli_read(dir, path);
  ck_assert_msg(csv != NULL, "no %s", path);
  ck_assert_msg(strncmp(csv, trace_header, strlen(trace_header)) == 0, "header: %.110s", csv);
  trace *tr = calloc(1, sizeof(*tr));
  for (const char *p = strchr(csv, '\n') + 1; *p && tr->n < 8192; p = strchr(p, '\n') + 1) {
    size_t i = tr->n++;
    ck_assert_int_eq(sscanf(p, "%ld,%lf,%lf,%lf,%lf,%lf,%lf", &tr->it[i], &tr->t[i], &tr->err[i], &tr->gap[i],
                            &tr->erg[i], &tr->agmax[i], &tr->agerg[i]),
                     7);
  }
  free(csv);
  return tr;
}

/* Runs a successful simulation with sets and returns its consensus.csv. */
static trace *run_trace(const char *dir, const char *out, const char *const *sets)
{
  json_decref(run_ok(dir, out, sets, NULL));
  return read_trace(dir, out);
}

/* The first iteration from which the optimality gap stays below tol, or -1 if the last
 * one is not below it. */
static long iterations_to(const trace *tr, double tol)
{
  long from = -1;
  for (size_t i = 0; i < tr->n; i++)
    if (tr->gap[i] >= tol)
      from = -1;
    else if (from < 0)
      from = tr->it[i];
  return from;
}

/* Mean optimality gap over iterations [from, to). */
static double mean_gap(const trace *tr, long from, long to)
{
  double s = 0;
  long n = 0;
  for (size_t i = 0; i < tr->n; i++)
    if (tr->it[i] >= from && tr->it[i] < to) {
      s += tr->gap[i];
      n++;
    }
  ck_assert_int_gt(n, 0);
  return s / (double)n;
}

/* ---- every topology generator, Metropolis weights -------------------------------- */

/* 12 agents (grid and torus 3 x 4, so the torus is 4-regular; small.edges has 5
 * vertices); the last case is a time-varying torus, whose every round's weights the
 * schedule asserts doubly stochastic (an abort would fail the run). */
static const char *const topologies[][3] = {
  {"consensus.topology=ring", "consensus.agents=12", NULL},
  {"consensus.topology=grid", "consensus.agents=12", NULL},
  {"consensus.topology=torus", "consensus.agents=12", NULL},
  {"consensus.topology=complete", "consensus.agents=12", NULL},
  {"consensus.topology=star", "consensus.agents=12", NULL},
  {"consensus.topology=erdos-renyi", "consensus.agents=12", NULL},
  {"consensus.topology=geometric", "consensus.agents=12", NULL},
  {"consensus.topology=edgelist:" TEST_DATA_DIR "/small.edges", "consensus.agents=5", NULL},
  {"consensus.topology=torus", "consensus.agents=12", "consensus.q=0.3"},
};
#define N_TOPOLOGIES (int)(sizeof(topologies) / sizeof(topologies[0]))

/* The engine refuses (exit 2) weights that are not doubly stochastic within 1e-12 on
 * the graph, so a run that goes through proves the check passed; the run must also
 * make progress on every graph. */
START_TEST(test_consensus_topologies)
{
  char *dir = fresh_dir();
  const char *sets[6] = {"run.max_steps=40", topologies[_i][0], topologies[_i][1], topologies[_i][2], NULL};
  json_t *j = run_ok(dir, "out", sets, NULL);
  trace *tr = read_trace(dir, "out");
  ck_assert_uint_eq(tr->n, 41);
  ck_assert_msg(tr->gap[40] < PROGRESS * tr->gap[0], "%s: gap %.6g -> %.6g", topologies[_i][0], tr->gap[0],
                tr->gap[40]);
  ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "ok");
  free(tr);
  json_decref(j);
  free(dir);
}
END_TEST

/* ---- steps ---------------------------------------------------------------------- */

/* Diminishing steps on the stated problem: harmonic 0.1/(k+1) and 0.05/sqrt(k+1), 300
 * rounds. Measured: the gap (988 at x = 0) stays below 1e-3 from iteration 44 and
 * 42, and ends at 1.1e-5 and 1.4e-4. */
START_TEST(test_consensus_diminishing_converges)
{
  static const char *const rule[][2] = {{"consensus.step_rule=harmonic", "consensus.alpha0=0.1"},
                                        {"consensus.step_rule=sqrt", "consensus.alpha0=0.05"}};
  char *dir = fresh_dir();
  const char *sets[] = {rule[_i][0], rule[_i][1], NULL};
  trace *tr = run_trace(dir, "out", sets);
  long it = iterations_to(tr, GAP_TARGET);
  ck_assert_msg(it > 0 && it < MAX_ITER_TO_TARGET, "%s: below %g from iteration %ld", rule[_i][0], GAP_TARGET, it);
  ck_assert_msg(tr->gap[tr->n - 1] >= -TOL_GAP_BELOW, "f(xbar) below f*: %.6g", tr->gap[tr->n - 1]);
  free(tr);
  free(dir);
}
END_TEST

/* Nedic and Ozdaglar 2009: with a constant step the error floor is O(alpha). On
 * L1 regression (8 agents, 20 rows each, dim 10, Laplace(0.5) noise) 600 rounds with
 * alpha = 0.02 and then 0.005. Measured: the mean gap over rounds 300-600 is 2.8 and
 * 0.58, flat (the two halves of that window agree within 10%). The test wants a flat
 * floor well above 0 and the quarter step's floor below half of the other. */
START_TEST(test_consensus_constant_step_floor)
{
  char *dir = fresh_dir();
  const char *big[] = {"consensus.objective=l1", "consensus.step_rule=constant", "consensus.alpha0=0.02",
                       "run.max_steps=600", NULL};
  const char *small[] = {"consensus.objective=l1", "consensus.step_rule=constant", "consensus.alpha0=0.005",
                         "run.max_steps=600", NULL};
  trace *a = run_trace(dir, "big", big), *b = run_trace(dir, "small", small);
  double fa = mean_gap(a, 300, 600), fb = mean_gap(b, 300, 600);
  for (int k = 0; k < 2; k++) {
    const trace *tr = k ? b : a;
    double h1 = mean_gap(tr, 300, 450), h2 = mean_gap(tr, 450, 600);
    ck_assert_msg(fabs(h1 - h2) < FLAT_REL * (h1 + h2) / 2, "no plateau: %.6g then %.6g", h1, h2);
  }
  ck_assert_msg(fb > FLOOR_MIN, "alpha 0.005 reached %.6g: no floor", fb);
  ck_assert_msg(fb < FLOOR_RATIO * fa, "floor %.6g at alpha 0.02, %.6g at 0.005", fa, fb);
  free(a);
  free(b);
  free(dir);
}
END_TEST

/* 16 agents, harmonic 0.1/(k+1), 300 rounds: the complete graph mixes in one round
 * (Metropolis gives 1/16 everywhere). Measured: the gap stays below 1e-3 from
 * iteration 32 on the complete graph and 157 on the ring. */
START_TEST(test_consensus_complete_beats_ring)
{
  char *dir = fresh_dir();
  const char *ring[] = {"consensus.agents=16", "consensus.topology=ring", NULL};
  const char *complete[] = {"consensus.agents=16", "consensus.topology=complete", NULL};
  trace *r = run_trace(dir, "ring", ring), *c = run_trace(dir, "complete", complete);
  long ir = iterations_to(r, GAP_TARGET), ic = iterations_to(c, GAP_TARGET);
  ck_assert_msg(ic > 0 && ir > 0, "complete %ld, ring %ld", ic, ir);
  ck_assert_msg(ic < ir, "complete needs %ld iterations, ring %ld", ic, ir);
  free(r);
  free(c);
  free(dir);
}
END_TEST

/* The running averages and the worst agent (Nedic-Ozdaglar's rate estimates bound the
 * averages xhat_i(k) = (1/k) sum_{h<k} x_i(h), of the mean and of every agent): on L1
 * regression, 200 synchronous rounds, measured every round. Row 0 has nothing to
 * average (all four gaps are the gap at x = 0); row 1 averages x(0) alone, so its
 * averaged gaps are row 0's. F is convex, so F(xbar) <= max_i F(x_i) and
 * F(yhat) <= max_i F(xhat_i), and in sync mode yhat(k) is the mean of xbar(0..k-1),
 * so F(yhat(k)) <= (1/k) sum_{h<k} F(xbar(h)) (Jensen): each is checked on every row. */
START_TEST(test_consensus_averaged_and_worst_gaps)
{
  char *dir = fresh_dir();
  const char *sets[] = {"consensus.objective=l1", "consensus.step_rule=constant", "consensus.alpha0=0.02",
                        "run.max_steps=200", NULL};
  trace *tr = run_trace(dir, "out", sets);
  ck_assert_uint_eq(tr->n, 201);
  ck_assert(tr->erg[0] == tr->gap[0] && tr->agmax[0] == tr->gap[0] && tr->agerg[0] == tr->gap[0]);
  ck_assert_msg(tr->erg[1] == tr->gap[0] && tr->agerg[1] == tr->gap[0], "row 1 averages %.17g, %.17g; x(0) %.17g",
                tr->erg[1], tr->agerg[1], tr->gap[0]);
  double sum = 0;
  for (size_t k = 1; k < tr->n; k++) {
    sum += tr->gap[k - 1];
    ck_assert_msg(tr->agmax[k] >= tr->gap[k] - CONVEXITY_SLACK, "row %zu: worst agent %.17g below the mean's %.17g", k,
                  tr->agmax[k], tr->gap[k]);
    ck_assert_msg(tr->agerg[k] >= tr->erg[k] - CONVEXITY_SLACK, "row %zu: worst average %.17g below %.17g", k,
                  tr->agerg[k], tr->erg[k]);
    ck_assert_msg(tr->erg[k] <= sum / (double)k + CONVEXITY_SLACK, "row %zu: F(yhat) - f* = %.17g above the mean "
                  "gap %.17g", k, tr->erg[k], sum / (double)k);
  }
  /* the agents disagree, and the averages come down too, more slowly than the iterates
   * (measured: gap 3.2 and averaged gap 3.0 at round 200, 2.6 and 83 at round 20) */
  ck_assert(tr->agmax[200] > tr->gap[200] && tr->erg[200] < AVERAGED_DROP * tr->erg[1] && tr->erg[20] > tr->gap[20]);
  free(tr);
  free(dir);
}
END_TEST

/* One agent: the mean is the agent, so the worst agent's gaps are the mean's, exactly. */
START_TEST(test_consensus_one_agent_gaps)
{
  char *dir = fresh_dir();
  const char *sets[] = {"consensus.agents=1", "consensus.objective=l1", "run.max_steps=50", NULL};
  trace *tr = run_trace(dir, "out", sets);
  ck_assert_uint_eq(tr->n, 51);
  for (size_t k = 0; k < tr->n; k++) {
    ck_assert_msg(tr->agmax[k] == tr->gap[k] && tr->agerg[k] == tr->erg[k], "row %zu: %.17g %.17g, %.17g %.17g", k,
                  tr->agmax[k], tr->gap[k], tr->agerg[k], tr->erg[k]);
    ck_assert(tr->err[k] == 0);
  }
  free(tr);
  free(dir);
}
END_TEST

/* A constant step of 1 on least squares: ||A_i||^2 is about 58, so x grows without
 * bound, the gap becomes infinite and the run ends as diverged (exit 1) with the
 * results written. */
START_TEST(test_consensus_divergence)
{
  char *dir = fresh_dir();
  const char *sets[] = {"consensus.step_rule=constant", "consensus.alpha0=1", NULL};
  ck_assert_int_eq(run_status(dir, "out", sets, NULL), 1);
  char *summary = cli_read(dir, "out/summary.json");
  ck_assert_msg(summary && strstr(summary, "\"status\": \"diverged\""), "%s", summary);
  free(summary);
  trace *tr = read_trace(dir, "out");
  ck_assert_msg(!isfinite(tr->gap[tr->n - 1]) && tr->n < 300, "%zu points, last gap %g", tr->n, tr->gap[tr->n - 1]);
  free(tr);
  free(dir);
}
END_TEST

/* ---- bad input --------------------------------------------------------------------- */

START_TEST(test_consensus_rejects)
{
  char *dir = fresh_dir();
  const char *disconnected[] = {"run", "base.ini", "--out", "out", "--set",
                                "consensus.topology=edgelist:" TEST_DATA_DIR "/consensus-disconnected.edges", NULL};
  cli_assert_bad_input(dir, disconnected, "disconnected");
  const char *rows_only[] = {"run", "base.ini", "--out", "out", "--set", "consensus.agents=4", "--set",
                             "consensus.weights=matrix:" TEST_DATA_DIR "/consensus-rows-only.weights", NULL};
  cli_assert_bad_input(dir, rows_only, "column 1 of W sums to 1.25");
  /* uniform weights on a star: not doubly stochastic (the centre's column sums to 3.625) */
  const char *uniform[] = {"run", "base.ini", "--out", "out", "--set", "consensus.topology=star", "--set",
                           "consensus.weights=uniform", NULL};
  cli_assert_bad_input(dir, uniform, "column 0 of W");
  /* G(8, 0.1) drawn from seed 1 is disconnected */
  const char *sparse[] = {"run", "base.ini", "--out", "out", "--set", "consensus.topology=erdos-renyi", "--set",
                          "consensus.p=0.1", NULL};
  cli_assert_bad_input(dir, sparse, "consensus.p");
  const char *tv_matrix[] = {"run", "base.ini", "--out", "out", "--set", "consensus.q=0.5", "--set",
                             "consensus.weights=matrix:" TEST_DATA_DIR "/ring4.weights", NULL};
  cli_assert_bad_input(dir, tv_matrix, "time-varying");
  const char *grid[] = {"run", "base.ini", "--out", "out", "--set", "consensus.topology=grid", "--set",
                        "consensus.grid_rows=3", NULL};
  cli_assert_bad_input(dir, grid, "consensus.grid_rows");
  const char *steps[] = {"run", "base.ini", "--out", "out", "--set", "run.max_steps=0", NULL};
  cli_assert_bad_input(dir, steps, "run.max_steps");
  const char *edges[] = {"run", "base.ini", "--out", "out", "--set", "consensus.topology=edgelist:/nonexistent/g.edges",
                         NULL};
  cli_assert_bad_input(dir, edges, "/nonexistent/g.edges");
  free(dir);
}
END_TEST

/* A user's matrix that is doubly stochastic on the graph goes through. */
START_TEST(test_consensus_matrix_weights)
{
  char *dir = fresh_dir();
  const char *sets[] = {"consensus.agents=4", "consensus.weights=matrix:" TEST_DATA_DIR "/ring4.weights",
                        "run.max_steps=50", NULL};
  trace *tr = run_trace(dir, "out", sets);
  ck_assert_msg(tr->gap[50] < PROGRESS * tr->gap[0], "gap %.6g -> %.6g", tr->gap[0], tr->gap[50]);
  free(tr);
  free(dir);
}
END_TEST

/* ---- determinism --------------------------------------------------------------------- */

/* A time-varying torus of 16 agents on the slow hosts, sync then async: the same seed
 * gives byte-identical files, with one thread or two; another seed differs. */
START_TEST(test_consensus_determinism)
{
  static const char *files[] = {"consensus.csv", "summary.json", "progress.csv", "staleness.csv", "links.csv"};
  static const char *runs[] = {"a", "b", "c", "d"}; /* b: again, c: two threads, d: seed 2 */
  char *dir = fresh_dir();
  const char *sets[] = {_i ? "consensus.mode=async" : "consensus.mode=sync", SLOW_HOSTS, "consensus.agents=16",
                        "consensus.topology=torus", "consensus.q=0.5", "run.max_steps=100", "run.eval_every=0.01",
                        NULL};
  const char *two[] = {"--cfg=contexts/nthreads:2", NULL};
  const char *seed[] = {"--seed", "2", NULL};
  json_decref(run_ok(dir, "a", sets, NULL));
  json_decref(run_ok(dir, "b", sets, NULL));
  json_decref(run_ok(dir, "c", sets, two));
  json_decref(run_ok(dir, "d", sets, seed));
  for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
    char *text[4];
    for (int r = 0; r < 4; r++) {
      char path[64];
      snprintf(path, sizeof(path), "%s/%s", runs[r], files[f]);
      text[r] = cli_read(dir, path);
      ck_assert_msg(text[r] != NULL, "missing %s", path);
    }
    ck_assert_msg(strcmp(text[0], text[1]) == 0, "%s differs between two runs", files[f]);
    ck_assert_msg(strcmp(text[0], text[2]) == 0, "%s differs with two threads", files[f]);
    if (f < 2)
      ck_assert_msg(strcmp(text[0], text[3]) != 0, "%s is the same with another seed", files[f]);
    for (int r = 0; r < 4; r++)
      free(text[r]);
  }
  /* --expect takes consensus.csv too */
  const char *same[] = {"--expect", "a/consensus.csv", NULL};
  ck_assert_int_eq(run_status(dir, "e", sets, same), 0);
  const char *other[] = {"--seed", "2", "--expect", "a/consensus.csv", NULL};
  ck_assert_int_eq(run_status(dir, "e", sets, other), 1);
  free(dir);
}
END_TEST

/* ---- asynchronous mode --------------------------------------------------------------- */

/* On the slow hosts a subgradient (0.8 ms) is shorter than a value's trip (1.3 ms), so
 * an async agent at iteration k mixes neighbours' values of round k - 1 (measured:
 * staleness 1 for all but the first round's 16 values, mean 0.9975) and still
 * converges (measured: gap 988 -> 0.0044 in 400 iterations); the same run in sync
 * mode mixes only fresh values. */
START_TEST(test_consensus_async)
{
  char *dir = fresh_dir();
  const char *async[] = {"consensus.mode=async", SLOW_HOSTS, "run.max_steps=400", "run.eval_every=0.005", NULL};
  const char *sync[] = {"consensus.mode=sync", SLOW_HOSTS, "run.max_steps=400", NULL};
  json_t *a = run_ok(dir, "async", async, NULL), *s = run_ok(dir, "sync", sync, NULL);
  ck_assert_msg(sub(a, "staleness", "mean") > STALE_MEAN_MIN && sub(a, "staleness", "max") >= 1,
                "async staleness mean %g max %g", sub(a, "staleness", "mean"), sub(a, "staleness", "max"));
  ck_assert_msg(sub(s, "staleness", "mean") == 0 && sub(s, "staleness", "max") == 0, "sync staleness");
  trace *tr = read_trace(dir, "async");
  ck_assert_msg(tr->n > 10, "only %zu samples", tr->n);
  ck_assert_msg(tr->gap[tr->n - 1] < ASYNC_GAP_END && tr->gap[0] > GAP_START_MIN, "async gap %.6g -> %.6g", tr->gap[0],
                tr->gap[tr->n - 1]);
  ck_assert_int_eq((long)cli_num(a, "steps"), 8 * 400);
  free(tr);
  json_decref(a);
  json_decref(s);
  free(dir);
}
END_TEST

#ifndef DTSIM_SANITIZE /* ASan keeps freed memory in quarantine: peak RSS grows with any allocation count */
/* The largest peak resident set, in KB, of the dtsim runs this process has waited for. */
static long children_peak_kb(void)
{
  struct rusage ru;
  ck_assert_int_eq(getrusage(RUSAGE_CHILDREN, &ru), 0);
  return ru.ru_maxrss;
}

/* Regression (no wall time measured): async agents used to poll their receive with
 * sg_comm_test, and SimGrid 3.32 keeps every comm completed that way in the polling
 * actor's activity list until the actor ends (CommImpl::finish drops it only for a
 * waiting simcall), which every sg_actor_execute then scanned (ExecImpl::post): wall
 * time O(n^2) and memory O(n) in the run length. The memory is the witness a test can
 * read: 16 async agents on the complete graph of the slow hosts, peak RSS of dtsim
 * measured at 100 and 800 iterations: 47 and 123 MB when polling (22 s wall for the
 * long run), 36.5 and 36.2 MB with inbox actors. The long run must not need 8 MB more
 * than the short one. */
START_TEST(test_consensus_async_memory_flat)
{
  char *dir = fresh_dir();
  const char *shortrun[] = {"consensus.mode=async", SLOW_HOSTS, "consensus.agents=16", "consensus.topology=complete",
                            "run.max_steps=100", "run.eval_every=0.005", NULL};
  const char *longrun[] = {"consensus.mode=async", SLOW_HOSTS, "consensus.agents=16", "consensus.topology=complete",
                           "run.max_steps=800", "run.eval_every=0.005", NULL};
  json_t *s = run_ok(dir, "short", shortrun, NULL);
  long peak_short = children_peak_kb();
  json_t *l = run_ok(dir, "long", longrun, NULL);
  long peak_long = children_peak_kb(); /* the largest so far, so >= peak_short */
  ck_assert_int_eq((long)cli_num(s, "steps"), 16 * 100);
  ck_assert_int_eq((long)cli_num(l, "steps"), 16 * 800);
  ck_assert_msg(peak_long - peak_short < MEM_GROWTH_KB, "peak RSS %ld KB for 100 iterations, %ld KB for 800",
                peak_short, peak_long);
  json_decref(s);
  json_decref(l);
  free(dir);
}
END_TEST
#endif

/* ---- messages ----------------------------------------------------------------------- */

/* One synchronous round on a ring of 6 agents with dim 7: each agent sends x_i(0) to
 * its 2 neighbours, 12 messages of 7 elements plus the 64-byte header, and nothing
 * else: 12 * (7 * 4 + 64) = 1104 bytes in fp32, 12 * (7 * 2 + 64) = 936 in fp16. */
START_TEST(test_consensus_round_bytes)
{
  static const char *dtype[] = {"model.dtype=fp32", "model.dtype=fp16"};
  static const double expect[] = {1104, 936};
  char *dir = fresh_dir();
  const char *sets[] = {"consensus.agents=6", "consensus.dim=7", "run.max_steps=1", dtype[_i], NULL};
  json_t *j = run_ok(dir, "out", sets, NULL);
  ck_assert_msg(sub(j, "comm", "bytes_total") == expect[_i], "%s: %.17g bytes", dtype[_i], sub(j, "comm", "bytes_total"));
  ck_assert_int_eq((long)cli_num(j, "steps"), 6);
  ck_assert_int_eq((long)cli_num(j, "examples"), 6 * 20);
  ck_assert(cli_num(j, "sim_time_s") > 0);
  json_decref(j);
  free(dir);
}
END_TEST

START_TEST(test_consensus_listed)
{
  char *dir = cli_tmpdir();
  const char *list[] = {"list", NULL};
  ck_assert_int_eq(cli_run(dir, list), 0);
  char *out = cli_read(dir, "stdout");
  ck_assert_ptr_nonnull(strstr(out, "algorithm  consensus"));
  free(out);
  const char *keys[] = {"list", "keys", NULL};
  ck_assert_int_eq(cli_run(dir, keys), 0);
  out = cli_read(dir, "stdout");
  ck_assert_ptr_nonnull(strstr(out, "**[consensus]**"));
  ck_assert_ptr_nonnull(strstr(out, "`consensus.topology` | `ring`"));
  free(out);
  free(dir);
}
END_TEST

static Suite *consensus_suite(void)
{
  Suite *s = suite_create("consensus");
  TCase *tc = tcase_create("topologies");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_consensus_topologies, 0, N_TOPOLOGIES);
  tcase_add_test(tc, test_consensus_matrix_weights);
  suite_add_tcase(s, tc);
  tc = tcase_create("convergence");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_consensus_diminishing_converges, 0, 2);
  tcase_add_test(tc, test_consensus_constant_step_floor);
  tcase_add_test(tc, test_consensus_complete_beats_ring);
  tcase_add_test(tc, test_consensus_divergence);
  tcase_add_test(tc, test_consensus_averaged_and_worst_gaps);
  tcase_add_test(tc, test_consensus_one_agent_gaps);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_consensus_rejects);
  tcase_add_test(tc, test_consensus_listed);
  suite_add_tcase(s, tc);
  tc = tcase_create("determinism");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_consensus_determinism, 0, 2);
  suite_add_tcase(s, tc);
  tc = tcase_create("async");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_consensus_async);
#ifndef DTSIM_SANITIZE
  tcase_add_test(tc, test_consensus_async_memory_flat);
#endif
  suite_add_tcase(s, tc);
  tc = tcase_create("messages");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_consensus_round_bytes, 0, 2);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(consensus_suite)

/* check_graph.c - Check suite for models/graph: the graph type, the topology
 * generators, connectivity, weight rules and the doubly-stochastic checker, the
 * edge-list and matrix loaders, and time-varying graphs with interval B. */

#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/graph.h"
#include "models/rng.h"

#include "check_util.h"

#define ERRLEN 512

/* Tolerances, each with where it comes from. */
/* DS_TOL: the tolerance sim/engine.c and algorithms/consensus.c check weight matrices with;
 * a row or column of n weights sums to 1 within n u (u = 2^-53), 7e-15 at n = 64; 1e-12
 * leaves a margin. */
#define DS_TOL 1e-12
/* TOL_WEIGHT: a weight is 1 / (1 + degree) or 1 minus <= 3 others, rounding <= 3 u ~ 3e-16
 * from the fraction written here; 1e-15 leaves a margin. */
#define TOL_WEIGHT 1e-15
/* TOL_FRACTION: the active fraction of 24 edges x 300 rounds has sd
 * sqrt(0.3 x 0.7 / 7200) = 0.0054; 0.03 is over 5 sd. */
#define TOL_FRACTION 0.03

/* ---- helpers ---- */

/* Writes text to a fresh temporary file; its name goes into path (>= 32 chars). */
static void write_temp(const char *text, char *path)
{
  strcpy(path, "/tmp/check_graph_XXXXXX");
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
}

/* Asserts that err starts with "PATH:LINE: " (LINE 0: "PATH: ") and contains what. */
static void expect_msg(const char *err, const char *path, int line, const char *what)
{
  char prefix[96];
  if (line > 0)
    snprintf(prefix, sizeof prefix, "%s:%d: ", path, line);
  else
    snprintf(prefix, sizeof prefix, "%s: ", path);
  ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0, "'%s' does not start with '%s'", err, prefix);
  ck_assert_msg(strstr(err, what) != NULL, "'%s' does not contain '%s'", err, what);
  ck_assert_msg(strchr(err, '\n') == NULL, "'%s' is not one line", err);
}

static void expect_edgelist_error(const char *text, size_t n, int line, const char *what)
{
  char path[64], err[ERRLEN] = "";
  write_temp(text, path);
  graph *g = graph_load_edgelist(path, n, err, sizeof err);
  unlink(path);
  ck_assert_ptr_null(g);
  expect_msg(err, path, line, what);
}

static void expect_matrix_error(const char *text, size_t n, int line, const char *what)
{
  char path[64], err[ERRLEN] = "";
  write_temp(text, path);
  gsl_matrix *W = graph_load_matrix(path, n, err, sizeof err);
  unlink(path);
  ck_assert_ptr_null(W);
  expect_msg(err, path, line, what);
}

/* Asserts that the neighbour lists are strictly ascending and symmetric, and that
 * they hold 2 * n_edges entries in all. */
static void assert_well_formed(const graph *g)
{
  size_t total = 0;
  for (size_t i = 0; i < graph_n(g); i++) {
    const size_t *nb = graph_neighbors(g, i);
    for (size_t k = 0; k < graph_degree(g, i); k++) {
      ck_assert_uint_ne(nb[k], i);
      if (k > 0) ck_assert_uint_lt(nb[k - 1], nb[k]);
      ck_assert(graph_has_edge(g, nb[k], i));
    }
    total += graph_degree(g, i);
  }
  ck_assert_uint_eq(total, 2 * graph_n_edges(g));
}

static void assert_ds(const gsl_matrix *W, const graph *g, const char *what)
{
  char msg[ERRLEN] = "";
  ck_assert_msg(graph_check_doubly_stochastic(W, g, DS_TOL, msg, sizeof msg) == 0, "%s: %s", what, msg);
}

/* ---- the graph type ---- */

START_TEST(test_graph_create)
{
  ck_assert_ptr_null(graph_create(0));
  graph_free(NULL);
  graph *g = graph_create(5);
  ck_assert_uint_eq(graph_n(g), 5);
  ck_assert_uint_eq(graph_n_edges(g), 0);
  ck_assert_int_eq(graph_add_edge(g, 3, 1), 0);
  ck_assert_int_eq(graph_add_edge(g, 3, 4), 0);
  ck_assert_int_eq(graph_add_edge(g, 3, 0), 0);
  ck_assert_int_eq(graph_add_edge(g, 1, 3), 1); /* merged */
  ck_assert_int_eq(graph_add_edge(g, 2, 2), -1);
  ck_assert_int_eq(graph_add_edge(g, 2, 5), -1);
  ck_assert_uint_eq(graph_n_edges(g), 3);
  ck_assert_uint_eq(graph_degree(g, 3), 3);
  ck_assert_uint_eq(graph_max_degree(g), 3);
  const size_t *nb = graph_neighbors(g, 3);
  ck_assert_uint_eq(nb[0], 0); /* sorted, not insertion order */
  ck_assert_uint_eq(nb[1], 1);
  ck_assert_uint_eq(nb[2], 4);
  ck_assert(graph_has_edge(g, 4, 3));
  ck_assert(!graph_has_edge(g, 4, 1));
  ck_assert(!graph_has_edge(g, 4, 99));
  assert_well_formed(g);
  graph_free(g);
}
END_TEST

START_TEST(test_graph_bad_vertex_aborts)
{
  graph *g = graph_create(3);
  graph_degree(g, 3);
}
END_TEST

/* ---- generators: shapes counted by hand ---- */

static void assert_shape(graph *g, size_t n, size_t edges, size_t dmin, size_t dmax)
{
  ck_assert_ptr_nonnull(g);
  assert_well_formed(g);
  ck_assert_uint_eq(graph_n(g), n);
  ck_assert_uint_eq(graph_n_edges(g), edges);
  size_t lo = (size_t)-1;
  for (size_t i = 0; i < n; i++)
    lo = graph_degree(g, i) < lo ? graph_degree(g, i) : lo;
  ck_assert_uint_eq(lo, dmin);
  ck_assert_uint_eq(graph_max_degree(g), dmax);
  graph_free(g);
}

START_TEST(test_graph_generators_shape)
{
  assert_shape(graph_ring(1), 1, 0, 0, 0);
  assert_shape(graph_ring(2), 2, 1, 1, 1);
  assert_shape(graph_ring(7), 7, 7, 2, 2);
  /* 3 x 4 grid: 3 rows of 3 horizontal edges + 4 columns of 2 vertical ones. */
  assert_shape(graph_grid2d(3, 4), 12, 17, 2, 4);
  assert_shape(graph_grid2d(1, 5), 5, 4, 1, 2);
  assert_shape(graph_grid2d(1, 1), 1, 0, 0, 0);
  assert_shape(graph_torus2d(3, 4), 12, 24, 4, 4);
  /* 2 x 3 torus: the vertical wrap edge is the lattice edge (3 merged), 6 horizontal. */
  assert_shape(graph_torus2d(2, 3), 6, 9, 3, 3);
  assert_shape(graph_torus2d(1, 5), 5, 5, 2, 2); /* vertical wrap = self-loop, dropped */
  assert_shape(graph_complete(6), 6, 15, 5, 5);
  assert_shape(graph_star(7), 7, 6, 1, 6);
  assert_shape(graph_star(1), 1, 0, 0, 0);
  ck_assert_ptr_null(graph_ring(0));
  ck_assert_ptr_null(graph_grid2d(0, 3));
  ck_assert_ptr_null(graph_torus2d(3, 0));
  ck_assert_ptr_null(graph_complete(0));
  ck_assert_ptr_null(graph_star(0));
}
END_TEST

/* Vertex (r, c) is r * cols + c: in the 3 x 4 grid, 5 = (1, 1) touches 1, 4, 6, 9. */
START_TEST(test_graph_grid_numbering)
{
  graph *g = graph_grid2d(3, 4);
  static const size_t want[] = {1, 4, 6, 9};
  ck_assert_uint_eq(graph_degree(g, 5), 4);
  for (size_t k = 0; k < 4; k++)
    ck_assert_uint_eq(graph_neighbors(g, 5)[k], want[k]);
  graph_free(g);
  g = graph_torus2d(3, 4); /* (0, 0) also wraps to (0, 3) = 3 and (2, 0) = 8 */
  static const size_t want_t[] = {1, 3, 4, 8};
  for (size_t k = 0; k < 4; k++)
    ck_assert_uint_eq(graph_neighbors(g, 0)[k], want_t[k]);
  graph_free(g);
}
END_TEST

/* The documented draw order: one uniform per pair i < j, edge iff < p. */
START_TEST(test_graph_erdos_renyi_draws)
{
  gsl_rng *r = rng_create(11, RNG_ROLE_GRAPH, 0), *ref = rng_create(11, RNG_ROLE_GRAPH, 0);
  graph *g = graph_erdos_renyi(30, 0.3, r);
  assert_well_formed(g);
  for (size_t i = 0; i < 30; i++)
    for (size_t j = i + 1; j < 30; j++)
      ck_assert_int_eq(graph_has_edge(g, i, j), gsl_rng_uniform(ref) < 0.3);
  ck_assert_uint_eq(gsl_rng_get(r), gsl_rng_get(ref));
  graph_free(g);
  gsl_rng_free(r);
  gsl_rng_free(ref);
}
END_TEST

/* n = 200, p = 0.1: 19900 pairs, mean 1990 edges, sd sqrt(19900 * 0.09) = 42.3,
 * so +-250 is about 6 sd. p = 0 and p = 1 are exact. */
START_TEST(test_graph_erdos_renyi_limits)
{
  gsl_rng *r = rng_create(12, RNG_ROLE_GRAPH, 0);
  graph *g = graph_erdos_renyi(200, 0.1, r);
  ck_assert_uint_ge(graph_n_edges(g), 1990 - 250);
  ck_assert_uint_le(graph_n_edges(g), 1990 + 250);
  graph_free(g);
  assert_shape(graph_erdos_renyi(9, 0.0, r), 9, 0, 0, 0);
  assert_shape(graph_erdos_renyi(9, 1.0, r), 9, 36, 8, 8);
  ck_assert_ptr_null(graph_erdos_renyi(9, -0.1, r));
  ck_assert_ptr_null(graph_erdos_renyi(9, 1.5, r));
  ck_assert_ptr_null(graph_erdos_renyi(9, NAN, r));
  ck_assert_ptr_null(graph_erdos_renyi(0, 0.5, r));
  gsl_rng_free(r);
}
END_TEST

/* Points are drawn x0, y0, x1, y1, ...; edge iff squared distance <= radius^2. */
START_TEST(test_graph_geometric)
{
  enum { N = 40 };
  gsl_rng *r = rng_create(13, RNG_ROLE_GRAPH, 0), *ref = rng_create(13, RNG_ROLE_GRAPH, 0);
  double xy[2 * N];
  graph *g = graph_geometric(N, 0.25, r, xy);
  assert_well_formed(g);
  for (size_t k = 0; k < 2 * N; k++)
    ck_assert_double_eq(xy[k], gsl_rng_uniform(ref));
  for (size_t i = 0; i < N; i++)
    for (size_t j = i + 1; j < N; j++) {
      double dx = xy[2 * i] - xy[2 * j], dy = xy[2 * i + 1] - xy[2 * j + 1];
      ck_assert_int_eq(graph_has_edge(g, i, j), dx * dx + dy * dy <= 0.0625);
    }
  graph_free(g);
  assert_shape(graph_geometric(N, 1.5, r, NULL), N, N * (N - 1) / 2, N - 1, N - 1); /* > sqrt(2) */
  ck_assert_ptr_null(graph_geometric(N, -1.0, r, NULL));
  ck_assert_ptr_null(graph_geometric(0, 0.5, r, NULL));
  gsl_rng_free(r);
  gsl_rng_free(ref);
}
END_TEST

START_TEST(test_graph_random_determinism)
{
  gsl_rng *a = rng_create(5, RNG_ROLE_GRAPH, 0), *b = rng_create(5, RNG_ROLE_GRAPH, 0);
  gsl_rng *c = rng_create(6, RNG_ROLE_GRAPH, 0);
  graph *ga = graph_erdos_renyi(40, 0.2, a), *gb = graph_erdos_renyi(40, 0.2, b);
  graph *gc = graph_erdos_renyi(40, 0.2, c);
  int same_ab = 1, same_ac = 1;
  for (size_t i = 0; i < 40; i++)
    for (size_t j = 0; j < 40; j++) {
      same_ab &= graph_has_edge(ga, i, j) == graph_has_edge(gb, i, j);
      same_ac &= graph_has_edge(ga, i, j) == graph_has_edge(gc, i, j);
    }
  ck_assert(same_ab);
  ck_assert(!same_ac);
  graph_free(ga);
  graph_free(gb);
  graph_free(gc);
  gsl_rng_free(a);
  gsl_rng_free(b);
  gsl_rng_free(c);
}
END_TEST

/* ---- connectivity ---- */

START_TEST(test_graph_connectivity)
{
  graph *g = graph_create(1);
  ck_assert(graph_is_connected(g));
  graph_free(g);
  g = graph_create(4); /* 0-1 and 2-3: two components */
  graph_add_edge(g, 0, 1);
  graph_add_edge(g, 3, 2);
  ck_assert(!graph_is_connected(g));
  graph_add_edge(g, 1, 2);
  ck_assert(graph_is_connected(g));
  graph_free(g);
  g = graph_create(3); /* vertex 0 isolated, the search starts there */
  graph_add_edge(g, 1, 2);
  ck_assert(!graph_is_connected(g));
  graph_free(g);
  graph *ok[] = {graph_ring(9), graph_grid2d(3, 5), graph_torus2d(4, 4), graph_complete(5), graph_star(6)};
  for (size_t k = 0; k < 5; k++) {
    ck_assert(graph_is_connected(ok[k]));
    graph_free(ok[k]);
  }
  gsl_rng *r = rng_create(1, RNG_ROLE_GRAPH, 0);
  g = graph_geometric(10, 0.0, r, NULL); /* radius 0: no two points coincide */
  ck_assert(!graph_is_connected(g));
  graph_free(g);
  gsl_rng_free(r);
}
END_TEST

/* ---- weights ---- */

/* Every generator's output, odd and even sizes, ER and geometric ones that may be
 * disconnected (the weights must be doubly stochastic anyway). */
static graph *zoo(size_t k, gsl_rng *r)
{
  switch (k) {
  case 0: return graph_ring(1);
  case 1: return graph_ring(2);
  case 2: return graph_ring(5);
  case 3: return graph_ring(8);
  case 4: return graph_ring(101);
  case 5: return graph_grid2d(1, 7);
  case 6: return graph_grid2d(3, 5);
  case 7: return graph_grid2d(4, 4);
  case 8: return graph_torus2d(2, 3);
  case 9: return graph_torus2d(3, 3);
  case 10: return graph_torus2d(5, 7);
  case 11: return graph_complete(2);
  case 12: return graph_complete(7);
  case 13: return graph_complete(64);
  case 14: return graph_star(2);
  case 15: return graph_star(9);
  case 16: return graph_star(50);
  case 17: return graph_erdos_renyi(25, 0.2, r);
  case 18: return graph_erdos_renyi(31, 0.5, r);
  case 19: return graph_erdos_renyi(50, 0.05, r);
  case 20: return graph_geometric(40, 0.3, r, NULL);
  case 21: return graph_geometric(33, 0.5, r, NULL);
  case 22: return graph_geometric(97, 0.15, r, NULL);
  default: return NULL;
  }
}

START_TEST(test_graph_weights_doubly_stochastic)
{
  static const graph_wrule rules[] = {GRAPH_W_METROPOLIS, GRAPH_W_LAZY_METROPOLIS, GRAPH_W_MAX_DEGREE};
  gsl_rng *r = rng_create(21, RNG_ROLE_GRAPH, 0);
  graph *g;
  for (size_t k = 0; (g = zoo(k, r)) != NULL; k++) {
    gsl_matrix *W = gsl_matrix_alloc(graph_n(g), graph_n(g));
    for (size_t a = 0; a < 3; a++) {
      char what[64];
      snprintf(what, sizeof what, "graph %zu, %s", k, graph_wrule_name(rules[a]));
      ck_assert_int_eq(graph_weights(g, rules[a], W), 0);
      assert_ds(W, g, what);
      for (size_t i = 0; i < graph_n(g); i++) /* these three rules are symmetric */
        for (size_t j = 0; j < i; j++)
          ck_assert_double_eq(gsl_matrix_get(W, i, j), gsl_matrix_get(W, j, i));
    }
    gsl_matrix_free(W);
    graph_free(g);
  }
  gsl_rng_free(r);
}
END_TEST

/* Star on 4 vertices (centre 0) plus edge 1-2: degrees 3, 2, 2, 1, d_max = 3.
 * By hand from the rules' formulas (README, consensus.weights):
 *  Metropolis: W01 = W02 = W03 = 1/4, W12 = 1/3, diagonal 1/4, 5/12, 5/12, 3/4;
 *  lazy: off-diagonals halved, diagonal (1 + W_ii)/2 = 5/8, 17/24, 17/24, 7/8;
 *  max-degree: every edge 1/4, diagonal 1 - d_i/4 = 1/4, 1/2, 1/2, 3/4;
 *  uniform: row i is 1/(1 + d_i) on N(i) and i. */
START_TEST(test_graph_weights_known)
{
  graph *g = graph_star(4);
  graph_add_edge(g, 1, 2);
  gsl_matrix *W = gsl_matrix_alloc(4, 4);
  static const double metro[16] = {1. / 4, 1. / 4, 1. / 4, 1. / 4, 1. / 4, 5. / 12, 1. / 3, 0,
                                   1. / 4, 1. / 3, 5. / 12, 0,      1. / 4, 0,       0,      3. / 4};
  static const double lazy[16] = {5. / 8, 1. / 8, 1. / 8, 1. / 8, 1. / 8, 17. / 24, 1. / 6, 0,
                                  1. / 8, 1. / 6, 17. / 24, 0,    1. / 8, 0,        0,      7. / 8};
  static const double maxdeg[16] = {1. / 4, 1. / 4, 1. / 4, 1. / 4, 1. / 4, 1. / 2, 1. / 4, 0,
                                    1. / 4, 1. / 4, 1. / 2, 0,      1. / 4, 0,      0,      3. / 4};
  static const double unif[16] = {1. / 4, 1. / 4, 1. / 4, 1. / 4, 1. / 3, 1. / 3, 1. / 3, 0,
                                  1. / 3, 1. / 3, 1. / 3, 0,      1. / 2, 0,      0,      1. / 2};
  static const graph_wrule rules[] = {GRAPH_W_METROPOLIS, GRAPH_W_LAZY_METROPOLIS, GRAPH_W_MAX_DEGREE,
                                      GRAPH_W_UNIFORM};
  const double *want[] = {metro, lazy, maxdeg, unif};
  for (size_t a = 0; a < 4; a++) {
    ck_assert_int_eq(graph_weights(g, rules[a], W), 0);
    for (size_t k = 0; k < 16; k++)
      ck_assert_double_eq_tol(W->data[k], want[a][k], TOL_WEIGHT);
  }
  gsl_matrix *bad = gsl_matrix_alloc(4, 3);
  ck_assert_int_eq(graph_weights(g, GRAPH_W_METROPOLIS, bad), -1);
  gsl_matrix_free(bad);
  gsl_matrix_free(W);
  graph_free(g);
}
END_TEST

/* Uniform weights are doubly stochastic on regular graphs only. Star on 5: column 0
 * sums to 1/5 + 4 * 1/2 = 2.2 (by hand). */
START_TEST(test_graph_weights_uniform)
{
  graph *reg[] = {graph_ring(7), graph_torus2d(3, 4), graph_complete(6)};
  for (size_t k = 0; k < 3; k++) {
    gsl_matrix *W = gsl_matrix_alloc(graph_n(reg[k]), graph_n(reg[k]));
    graph_weights(reg[k], GRAPH_W_UNIFORM, W);
    assert_ds(W, reg[k], "uniform on a regular graph");
    gsl_matrix_free(W);
    graph_free(reg[k]);
  }
  graph *s = graph_star(5);
  gsl_matrix *W = gsl_matrix_alloc(5, 5);
  graph_weights(s, GRAPH_W_UNIFORM, W);
  char msg[ERRLEN] = "";
  ck_assert_int_eq(graph_check_doubly_stochastic(W, s, DS_TOL, msg, sizeof msg), -1);
  ck_assert_msg(strncmp(msg, "column 0 of W sums to 2.2", 25) == 0, "%s", msg);
  gsl_matrix_free(W);
  graph_free(s);
}
END_TEST

START_TEST(test_graph_wrule_names)
{
  graph_wrule rule;
  static const char *names[] = {"metropolis", "lazy-metropolis", "max-degree", "uniform"};
  for (int k = 0; k < 4; k++) {
    ck_assert_int_eq(graph_wrule_parse(names[k], &rule), 0);
    ck_assert_int_eq(rule, k);
    ck_assert_str_eq(graph_wrule_name(rule), names[k]);
  }
  ck_assert_int_eq(graph_wrule_parse("Metropolis", &rule), -1);
  ck_assert_int_eq(graph_wrule_parse("", &rule), -1);
}
END_TEST

/* ---- the checker ---- */

static gsl_matrix *matrix_of(size_t n1, size_t n2, const double *v)
{
  gsl_matrix *W = gsl_matrix_alloc(n1, n2);
  memcpy(W->data, v, n1 * n2 * sizeof *v);
  return W;
}

static void expect_check(const gsl_matrix *W, const graph *g, const char *want)
{
  char msg[ERRLEN] = "";
  ck_assert_int_eq(graph_check_doubly_stochastic(W, g, DS_TOL, msg, sizeof msg), -1);
  ck_assert_msg(strstr(msg, want) != NULL, "'%s' does not contain '%s'", msg, want);
  ck_assert_msg(strchr(msg, '\n') == NULL, "'%s' is not one line", msg);
}

START_TEST(test_graph_check_rejects)
{
  graph *path = graph_grid2d(1, 3); /* 0-1-2 */
  static const double ok[9] = {0.5, 0.5, 0, 0.5, 0, 0.5, 0, 0.5, 0.5};
  gsl_matrix *W = matrix_of(3, 3, ok);
  assert_ds(W, path, "path");
  gsl_matrix_set(W, 0, 0, 0.5 + 1e-13); /* inside the tolerance */
  assert_ds(W, path, "perturbed by 1e-13");
  gsl_matrix_set(W, 0, 0, 0.5 + 1e-11);
  expect_check(W, path, "row 0 of W sums to 1.00000000001");
  gsl_matrix_free(W);

  static const double cols[9] = {0.5, 0.5, 0, 0, 0.5, 0.5, 0, 0.5, 0.5}; /* rows fine */
  W = matrix_of(3, 3, cols);
  expect_check(W, path, "column 0 of W sums to 0.5, not 1");
  gsl_matrix_free(W);

  static const double neg[9] = {1.5, -0.5, 0, -0.5, 1, 0.5, 0, 0.5, 0.5};
  W = matrix_of(3, 3, neg);
  expect_check(W, path, "W[0][1] = -0.5 is negative");
  gsl_matrix_free(W);

  static const double off[9] = {0.5, 0, 0.5, 0, 1, 0, 0.5, 0, 0.5}; /* 0-2 is not an edge */
  W = matrix_of(3, 3, off);
  expect_check(W, path, "W[0][2] = 0.5 but 0 and 2 are not neighbours");
  assert_ds(W, NULL, "no graph given: support not checked");
  gsl_matrix_free(W);

  static const double nan[9] = {0.5, 0.5, 0, 0.5, NAN, 0.5, 0, 0.5, 0.5};
  W = matrix_of(3, 3, nan);
  expect_check(W, NULL, "W[1][1] is not a finite number");
  gsl_matrix_free(W);

  W = matrix_of(2, 3, ok);
  expect_check(W, NULL, "W is 2 x 3, not square");
  gsl_matrix_free(W);
  static const double two[4] = {0.5, 0.5, 0.5, 0.5};
  W = matrix_of(2, 2, two);
  expect_check(W, path, "W is 2 x 2 but the graph has 3 vertices");
  gsl_matrix_free(W);
  graph_free(path);
}
END_TEST

/* ---- loaders ---- */

/* tests/data/small.edges: a 4-cycle 0-1-2-3 plus pendant 4 on 2, with comments, a
 * blank line, a tab and the edge 0-1 repeated as "1 0". */
START_TEST(test_graph_edgelist_load)
{
  char err[ERRLEN] = "";
  graph *g = graph_load_edgelist(TEST_DATA_DIR "/small.edges", 5, err, sizeof err);
  ck_assert_msg(g != NULL, "%s", err);
  assert_well_formed(g);
  ck_assert_uint_eq(graph_n_edges(g), 5);
  static const size_t ei[] = {0, 1, 2, 3, 2}, ej[] = {1, 2, 3, 0, 4};
  for (size_t k = 0; k < 5; k++)
    ck_assert(graph_has_edge(g, ei[k], ej[k]));
  ck_assert(graph_is_connected(g));
  graph_free(g);
  /* More vertices than the file mentions: a valid, disconnected graph. */
  g = graph_load_edgelist(TEST_DATA_DIR "/small.edges", 7, err, sizeof err);
  ck_assert_msg(g != NULL, "%s", err);
  ck_assert(!graph_is_connected(g));
  graph_free(g);
}
END_TEST

START_TEST(test_graph_edgelist_errors)
{
  expect_edgelist_error("0 1\n1 1\n", 3, 2, "self-loop on vertex 1");
  expect_edgelist_error("0 1\n# c\n\n1 3\n", 3, 4, "'3' is out of range (vertices are 0..2)");
  expect_edgelist_error("0 -1\n", 3, 1, "'-1' is not a vertex index");
  expect_edgelist_error("0 x\n", 3, 1, "'x' is not a vertex index");
  expect_edgelist_error("0 1.0\n", 3, 1, "'1.0' is not a vertex index");
  expect_edgelist_error("0\n", 3, 1, "expected two vertex indices 'i j'");
  expect_edgelist_error("0 1 2\n", 3, 1, "expected two vertex indices 'i j'");
  expect_edgelist_error("0 99999999999999999999999\n", 3, 1, "is out of range");
  expect_edgelist_error("0 1\n", 0, 0, "a graph needs at least one vertex");
  char err[ERRLEN];
  ck_assert_ptr_null(graph_load_edgelist(TEST_DATA_DIR "/no-such.edges", 3, err, sizeof err));
  ck_assert_str_eq(err, TEST_DATA_DIR "/no-such.edges: cannot open: No such file or directory");
}
END_TEST

/* tests/data/ring4.weights: Metropolis weights of the 4-cycle with 16 decimals, rows
 * arranged to sum to 1 in double precision (checked with Python). */
START_TEST(test_graph_matrix_load)
{
  char err[ERRLEN] = "";
  gsl_matrix *W = graph_load_matrix(TEST_DATA_DIR "/ring4.weights", 4, err, sizeof err);
  ck_assert_msg(W != NULL, "%s", err);
  ck_assert_double_eq(gsl_matrix_get(W, 0, 3), 0.3333333333333334);
  ck_assert_double_eq(gsl_matrix_get(W, 2, 0), 0.0);
  graph *ring = graph_ring(4);
  assert_ds(W, ring, "ring4.weights");
  graph_free(ring);
  graph *path = graph_grid2d(1, 4); /* no 0-3 edge */
  expect_check(W, path, "W[0][3] = 0.33333333333333343 but 0 and 3 are not neighbours");
  graph_free(path);
  gsl_matrix_free(W);
}
END_TEST

START_TEST(test_graph_matrix_errors)
{
  expect_matrix_error("1 0\n0 1 0\n", 2, 2, "expected 2 numbers, found 3");
  expect_matrix_error("# c\n1 0\n\n0\n", 2, 4, "expected 2 numbers, found 1");
  expect_matrix_error("1 0\n0 x\n", 2, 2, "'x' is not a finite number");
  expect_matrix_error("1 nan\n0 1\n", 2, 1, "'nan' is not a finite number");
  expect_matrix_error("1 0\n0 1e999\n", 2, 2, "'1e999' is not a finite number");
  expect_matrix_error("1 0\n", 2, 0, "expected 2 rows, found 1");
  expect_matrix_error("", 2, 0, "expected 2 rows, found 0");
  expect_matrix_error("1 0\n0 1\n0 1\n", 2, 3, "more than 2 rows");
  expect_matrix_error("1\n", 0, 0, "a graph needs at least one vertex");
  char err[ERRLEN];
  ck_assert_ptr_null(graph_load_matrix(TEST_DATA_DIR "/no-such.weights", 2, err, sizeof err));
  ck_assert_str_eq(err, TEST_DATA_DIR "/no-such.weights: cannot open: No such file or directory");
}
END_TEST

/* ---- time-varying graphs ---- */

/* Over many rounds, for several q and B: each round's graph is a subgraph of the
 * union, every union edge is active at least once in every window of B rounds, and
 * Metropolis weights on the active subgraph are doubly stochastic and supported on
 * the union's edges. */
START_TEST(test_graph_tv_interval)
{
  enum { ROUNDS = 400 };
  static const double qs[] = {0.0, 0.05, 0.3};
  static const size_t Bs[] = {1, 2, 5, 13};
  gsl_rng *gr = rng_create(31, RNG_ROLE_GRAPH, 0);
  graph *u = graph_erdos_renyi(16, 0.4, gr);
  size_t n = graph_n(u);
  gsl_matrix *W = gsl_matrix_alloc(n, n);
  long *last = malloc(n * n * sizeof *last);
  for (size_t a = 0; a < 3; a++)
    for (size_t b = 0; b < 4; b++) {
      gsl_rng *r = rng_create(31, RNG_ROLE_LINK, 0);
      graph_tv *tv = graph_tv_create(u, qs[a], Bs[b]);
      ck_assert_int_eq(graph_tv_round(tv), -1);
      for (size_t k = 0; k < n * n; k++)
        last[k] = -1; /* "active at round -1": the first window is rounds 0..B-1 */
      for (long k = 0; k < ROUNDS; k++) {
        const graph *act = graph_tv_next(tv, r);
        ck_assert_int_eq(graph_tv_round(tv), k);
        assert_well_formed(act);
        for (size_t i = 0; i < n; i++)
          for (size_t j = i + 1; j < n; j++) {
            if (graph_has_edge(act, i, j)) {
              ck_assert(graph_has_edge(u, i, j));
              last[i * n + j] = k;
            }
            if (graph_has_edge(u, i, j))
              ck_assert_msg(k - last[i * n + j] < (long)Bs[b], "edge %zu-%zu idle for %ld rounds (B = %zu)", i,
                            j, k - last[i * n + j], Bs[b]);
          }
        graph_weights(act, GRAPH_W_METROPOLIS, W);
        assert_ds(W, u, "round weights");
      }
      graph_tv_free(tv);
      gsl_rng_free(r);
    }
  free(last);
  gsl_matrix_free(W);
  graph_free(u);
  gsl_rng_free(gr);
}
END_TEST

/* q = 0 leaves only the forced activations: every edge at rounds B-1, 2B-1, ...;
 * q = 1 and B = 1 activate everything in every round. */
START_TEST(test_graph_tv_extremes)
{
  graph *u = graph_torus2d(3, 3);
  gsl_rng *r = rng_create(1, RNG_ROLE_LINK, 0);
  graph_tv *tv = graph_tv_create(u, 0.0, 4);
  for (long k = 0; k < 20; k++)
    ck_assert_uint_eq(graph_n_edges(graph_tv_next(tv, r)), k % 4 == 3 ? graph_n_edges(u) : 0);
  graph_tv_free(tv);
  tv = graph_tv_create(u, 1.0, 1000);
  for (long k = 0; k < 5; k++)
    ck_assert_uint_eq(graph_n_edges(graph_tv_next(tv, r)), graph_n_edges(u));
  graph_tv_free(tv);
  tv = graph_tv_create(u, 0.0, 1);
  ck_assert_uint_eq(graph_n_edges(graph_tv_next(tv, r)), graph_n_edges(u));
  graph_tv_free(tv);
  ck_assert_ptr_null(graph_tv_create(u, 0.5, 0));
  ck_assert_ptr_null(graph_tv_create(u, -0.5, 3));
  ck_assert_ptr_null(graph_tv_create(u, 1.01, 3));
  graph_tv_free(NULL);
  gsl_rng_free(r);
  graph_free(u);
}
END_TEST

/* Each round consumes exactly one uniform per union edge (ascending (i, j)), so the
 * activation draws can be replayed: an edge is on iff its draw is < q or it is forced.
 * With B = 1000 nothing is forced in 300 rounds, so the active fraction estimates q:
 * 24 edges x 300 rounds, sd sqrt(0.3 * 0.7 / 7200) = 0.0054, +-TOL_FRACTION is over 5 sd. */
START_TEST(test_graph_tv_draws)
{
  graph *u = graph_torus2d(3, 4);
  gsl_rng *r = rng_create(2, RNG_ROLE_LINK, 0), *ref = rng_create(2, RNG_ROLE_LINK, 0);
  graph_tv *tv = graph_tv_create(u, 0.3, 1000);
  size_t on = 0;
  for (int k = 0; k < 300; k++) {
    const graph *act = graph_tv_next(tv, r);
    for (size_t i = 0; i < graph_n(u); i++)
      for (size_t k2 = 0; k2 < graph_degree(u, i); k2++) {
        size_t j = graph_neighbors(u, i)[k2];
        if (j < i) continue;
        ck_assert_int_eq(graph_has_edge(act, i, j), gsl_rng_uniform(ref) < 0.3);
      }
    on += graph_n_edges(act);
  }
  ck_assert_double_eq_tol((double)on / (300.0 * 24.0), 0.3, TOL_FRACTION);
  ck_assert_uint_eq(gsl_rng_get(r), gsl_rng_get(ref));
  graph_tv_free(tv);
  gsl_rng_free(r);
  gsl_rng_free(ref);
  graph_free(u);
}
END_TEST

Suite *graph_suite(void)
{
  Suite *s = suite_create("graph");
  ADD_TCASE(s, "create", test_graph_create);
  ADD_TCASE(s, "generators", test_graph_generators_shape, test_graph_grid_numbering, test_graph_erdos_renyi_draws,
            test_graph_erdos_renyi_limits, test_graph_geometric, test_graph_random_determinism);
  ADD_TCASE(s, "connectivity", test_graph_connectivity);
  ADD_TCASE(s, "weights", test_graph_weights_doubly_stochastic, test_graph_weights_known,
            test_graph_weights_uniform, test_graph_wrule_names);
  ADD_TCASE(s, "checker", test_graph_check_rejects);
  ADD_TCASE(s, "edgelist", test_graph_edgelist_load, test_graph_edgelist_errors);
  ADD_TCASE(s, "matrix", test_graph_matrix_load, test_graph_matrix_errors);
  ADD_TCASE(s, "time_varying", test_graph_tv_interval, test_graph_tv_extremes, test_graph_tv_draws);
  TCase *tc = tcase_create("invariants");
  tcase_add_test_raise_signal(tc, test_graph_bad_vertex_aborts, SIGABRT);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(graph_suite)

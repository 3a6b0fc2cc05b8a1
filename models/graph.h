#ifndef MODELS_GRAPH_H
#define MODELS_GRAPH_H
/* graph.h - undirected communication graphs for consensus: generators, an edge-list
 * loader, connectivity, the consensus weight matrices of Xiao, Boyd and Lall, a
 * doubly-stochastic checker, and time-varying graphs with a bounded intercommunication
 * interval B (Nedic and Ozdaglar 2009). */

#include <stddef.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>

/* Vertices are 0..n-1; no self-loops, no multi-edges. Neighbour lists are kept
 * sorted ascending, so every traversal is in a fixed order. */
typedef struct graph graph;

/* How a graph's weight matrix is built (d_i = degree of i, N(i) = its neighbours):
 *  GRAPH_W_METROPOLIS       W_ij = 1/(1 + max(d_i, d_j)) on edges
 *  GRAPH_W_LAZY_METROPOLIS  (I + Metropolis)/2
 *  GRAPH_W_MAX_DEGREE       W_ij = 1/(1 + d_max) on edges
 *  GRAPH_W_UNIFORM          W_ij = 1/(1 + d_i) for j in N(i) and j = i; doubly
 *                           stochastic only on regular graphs
 * and W_ii = 1 - sum_{j != i} W_ij in every rule. */
typedef enum graph_wrule {
  GRAPH_W_METROPOLIS,
  GRAPH_W_LAZY_METROPOLIS,
  GRAPH_W_MAX_DEGREE,
  GRAPH_W_UNIFORM
} graph_wrule;

/* A time-varying subgraph sequence of a union graph (see graph_tv_create). */
typedef struct graph_tv graph_tv;

/* An empty graph on n vertices; NULL if n == 0. Caller frees with graph_free. */
graph *graph_create(size_t n);
void graph_free(graph *g);

/* Adds the edge {i, j}. Returns 0 if added, 1 if it was already there (merged),
 * -1 for a self-loop or an index >= n (graph unchanged). */
int graph_add_edge(graph *g, size_t i, size_t j);

size_t graph_n(const graph *g);
size_t graph_n_edges(const graph *g);
size_t graph_degree(const graph *g, size_t i);
size_t graph_max_degree(const graph *g);
/* The degree(i) neighbours of i, ascending (NULL if none yet); owned by g, valid
 * until g changes. */
const size_t *graph_neighbors(const graph *g, size_t i);
/* 1 if {i, j} is an edge, else 0 (also for out-of-range indices). */
int graph_has_edge(const graph *g, size_t i, size_t j);
/* 1 if every vertex reaches every other (a single vertex is connected), else 0. */
int graph_is_connected(const graph *g);

/* ---- generators: each returns a new graph (caller frees) or NULL for invalid sizes ---- */

/* Cycle 0-1-...-(n-1)-0; n == 1 has no edge and n == 2 one edge. NULL if n == 0. */
graph *graph_ring(size_t n);
/* rows x cols lattice without wrap-around; vertex (r, c) is r * cols + c. */
graph *graph_grid2d(size_t rows, size_t cols);
/* The lattice with wrap-around. A side of 2 makes the wrap edge coincide with the
 * lattice edge (merged) and a side of 1 would make it a self-loop (dropped), so the
 * torus is 4-regular only when both sides are >= 3. */
graph *graph_torus2d(size_t rows, size_t cols);
graph *graph_complete(size_t n);
/* Vertex 0 joined to every other vertex. */
graph *graph_star(size_t n);
/* G(n, p): for each pair i < j in lexicographic order one gsl_rng_uniform(r) draw,
 * edge iff it is < p. The result may be disconnected: the caller checks with
 * graph_is_connected. NULL if n == 0 or p is not in [0, 1]. */
graph *graph_erdos_renyi(size_t n, double p, gsl_rng *r);
/* n points uniform in the unit square, drawn x0, y0, x1, y1, ... with
 * gsl_rng_uniform(r); edge iff dx^2 + dy^2 <= radius^2. If xy is not NULL it
 * receives the 2n coordinates. May be disconnected (caller checks). NULL if n == 0
 * or radius < 0. */
graph *graph_geometric(size_t n, double radius, gsl_rng *r, double *xy);

/* Loads an edge list for n vertices: one "i j" per line (0-based), '#' starts a
 * comment, blank lines are skipped; a repeated edge (either orientation) is merged.
 * On error (unreadable file, malformed line, self-loop, index >= n, n == 0) returns
 * NULL and writes one line "PATH:LINE: problem" (or "PATH: problem") into err. */
graph *graph_load_edgelist(const char *path, size_t n, char *err, size_t errlen);

/* ---- weight matrices ---- */

/* Writes g's weight matrix under rule into W (n x n). Returns 0, or -1 if W is not
 * n x n (W unchanged). */
int graph_weights(const graph *g, graph_wrule rule, gsl_matrix *W);

/* Loads a dense n x n matrix: n non-blank lines of n whitespace-separated finite
 * numbers, '#' comments. It is not checked for stochasticity (use the checker).
 * Same error contract as graph_load_edgelist; caller frees with gsl_matrix_free. */
gsl_matrix *graph_load_matrix(const char *path, size_t n, char *err, size_t errlen);

/* Returns 0 if W is square, finite, nonnegative, and each row and each column sums to
 * 1 within tol; if g is not NULL, W must also be g's size and nonzero only on the
 * diagonal and on g's edges. Otherwise returns -1 and writes one line naming the
 * first offending row, column or entry (sums printed with %.17g) into msg. */
int graph_check_doubly_stochastic(const gsl_matrix *W, const graph *g, double tol, char *msg, size_t msglen);

/* Parses "metropolis|lazy-metropolis|max-degree|uniform"; returns 0 or -1. */
int graph_wrule_parse(const char *s, graph_wrule *rule);
const char *graph_wrule_name(graph_wrule rule);

/* ---- time-varying graphs ---- */

/* Rounds k = 0, 1, 2, ... of subgraphs of the union graph g (copied): in each round
 * every edge of g is active independently with probability q, and an edge that was
 * inactive in each of the last B - 1 rounds is forced active, so every edge is active
 * at least once in any B consecutive rounds. NULL if q is not in [0, 1] or B == 0.
 * Caller frees with graph_tv_free. */
graph_tv *graph_tv_create(const graph *g, double q, size_t B);
void graph_tv_free(graph_tv *tv);

/* Advances to the next round and returns its active subgraph (owned by tv, valid
 * until the next call). Draws exactly one gsl_rng_uniform(r) per union edge, in
 * ascending (i, j) order with i < j, forced or not, so the stream is consumed the
 * same way whatever happened before. */
const graph *graph_tv_next(graph_tv *tv, gsl_rng *r);
/* The round number of the last graph_tv_next result (0 for the first); -1 before it. */
long graph_tv_round(const graph_tv *tv);

#endif

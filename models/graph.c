/* graph.c - undirected communication graphs for consensus.
 *
 * A graph is an array of sorted neighbour lists. Sorting is what makes every
 * consumer deterministic: weights, messages and sums over neighbours all go in
 * ascending vertex order, whatever order the edges were added in.
 *
 * Weight rules follow Xiao, Boyd and Lall (2005/2006) for Metropolis and the
 * max-degree rule; the diagonal is always 1 minus the row's off-diagonal sum as
 * stored, so each row sums to 1 up to a few ulps. Metropolis, lazy Metropolis and
 * max-degree are symmetric, so their columns do too; uniform is not symmetric. */

#include "models/graph.h"
#include "models/mem.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct vertex {
  size_t *nb; /* ascending */
  size_t deg, cap;
} vertex;

struct graph {
  size_t n, n_edges;
  vertex *v;
};

struct graph_tv {
  graph *active;
  size_t n_e;
  size_t *ei, *ej; /* union edges, ascending (i, j), i < j */
  size_t *idle;    /* consecutive inactive rounds just before the next one */
  double q;
  size_t B;
  long round;
};

static const char *wrule_names[] = {"metropolis", "lazy-metropolis", "max-degree", "uniform"};

/* ---- the graph type ---- */

graph *graph_create(size_t n)
{
  if (n == 0) return NULL;
  graph *g = mem_alloc(sizeof *g);
  g->n = n;
  g->n_edges = 0;
  g->v = mem_calloc(n, sizeof *g->v);
  return g;
}

void graph_free(graph *g)
{
  if (g == NULL) return;
  for (size_t i = 0; i < g->n; i++)
    free(g->v[i].nb);
  free(g->v);
  free(g);
}

/* Index of the first neighbour of v that is >= j. */
static size_t lower_bound(const vertex *v, size_t j)
{
  size_t lo = 0, hi = v->deg;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v->nb[mid] < j)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static void insert_at(vertex *v, size_t pos, size_t j)
{
  if (v->deg == v->cap) {
    v->cap = v->cap ? 2 * v->cap : 4;
    v->nb = mem_realloc(v->nb, v->cap * sizeof *v->nb);
  }
  memmove(v->nb + pos + 1, v->nb + pos, (v->deg - pos) * sizeof *v->nb);
  v->nb[pos] = j;
  v->deg++;
}

int graph_add_edge(graph *g, size_t i, size_t j)
{
  if (i == j || i >= g->n || j >= g->n) return -1;
  size_t pi = lower_bound(&g->v[i], j);
  if (pi < g->v[i].deg && g->v[i].nb[pi] == j) return 1;
  insert_at(&g->v[i], pi, j);
  insert_at(&g->v[j], lower_bound(&g->v[j], i), i);
  g->n_edges++;
  return 0;
}

/* Removes every edge, keeping the allocations. */
static void graph_clear(graph *g)
{
  for (size_t i = 0; i < g->n; i++)
    g->v[i].deg = 0;
  g->n_edges = 0;
}

size_t graph_n(const graph *g) { return g->n; }
size_t graph_n_edges(const graph *g) { return g->n_edges; }

size_t graph_degree(const graph *g, size_t i)
{
  if (i >= g->n) mem_die("graph", "graph_degree: vertex out of range");
  return g->v[i].deg;
}

size_t graph_max_degree(const graph *g)
{
  size_t d = 0;
  for (size_t i = 0; i < g->n; i++)
    if (g->v[i].deg > d) d = g->v[i].deg;
  return d;
}

const size_t *graph_neighbors(const graph *g, size_t i)
{
  if (i >= g->n) mem_die("graph", "graph_neighbors: vertex out of range");
  return g->v[i].nb;
}

int graph_has_edge(const graph *g, size_t i, size_t j)
{
  if (i >= g->n || j >= g->n) return 0;
  size_t p = lower_bound(&g->v[i], j);
  return p < g->v[i].deg && g->v[i].nb[p] == j;
}

/* Breadth-first search from vertex 0. */
int graph_is_connected(const graph *g)
{
  size_t *queue = mem_alloc(g->n * sizeof *queue);
  unsigned char *seen = mem_calloc(g->n, 1);
  size_t head = 0, tail = 0;
  queue[tail++] = 0;
  seen[0] = 1;
  while (head < tail) {
    const vertex *v = &g->v[queue[head++]];
    for (size_t k = 0; k < v->deg; k++)
      if (!seen[v->nb[k]]) {
        seen[v->nb[k]] = 1;
        queue[tail++] = v->nb[k];
      }
  }
  free(queue);
  free(seen);
  return tail == g->n;
}

/* ---- generators ---- */

graph *graph_ring(size_t n)
{
  graph *g = graph_create(n);
  for (size_t i = 0; g != NULL && i < n; i++)
    graph_add_edge(g, i, (i + 1) % n); /* n = 1: self-loop refused; n = 2: merged */
  return g;
}

/* The lattice; with wrap, the last row and column link back to the first. */
static graph *lattice(size_t rows, size_t cols, int wrap)
{
  if (rows == 0 || cols == 0 || rows > ((size_t)-1) / cols) return NULL;
  graph *g = graph_create(rows * cols);
  for (size_t r = 0; r < rows; r++)
    for (size_t c = 0; c < cols; c++) {
      size_t id = r * cols + c;
      if (c + 1 < cols || wrap) graph_add_edge(g, id, r * cols + (c + 1) % cols);
      if (r + 1 < rows || wrap) graph_add_edge(g, id, ((r + 1) % rows) * cols + c);
    }
  return g;
}

graph *graph_grid2d(size_t rows, size_t cols) { return lattice(rows, cols, 0); }
graph *graph_torus2d(size_t rows, size_t cols) { return lattice(rows, cols, 1); }

graph *graph_complete(size_t n)
{
  graph *g = graph_create(n);
  for (size_t i = 0; g != NULL && i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      graph_add_edge(g, i, j);
  return g;
}

graph *graph_star(size_t n)
{
  graph *g = graph_create(n);
  for (size_t i = 1; g != NULL && i < n; i++)
    graph_add_edge(g, 0, i);
  return g;
}

graph *graph_erdos_renyi(size_t n, double p, gsl_rng *r)
{
  if (!(p >= 0.0 && p <= 1.0)) return NULL;
  graph *g = graph_create(n);
  for (size_t i = 0; g != NULL && i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (gsl_rng_uniform(r) < p) graph_add_edge(g, i, j);
  return g;
}

graph *graph_geometric(size_t n, double radius, gsl_rng *r, double *xy)
{
  if (n == 0 || !(radius >= 0.0)) return NULL;
  double *pt = mem_alloc(2 * n * sizeof *pt);
  for (size_t k = 0; k < 2 * n; k++)
    pt[k] = gsl_rng_uniform(r);
  graph *g = graph_create(n);
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++) {
      double dx = pt[2 * i] - pt[2 * j], dy = pt[2 * i + 1] - pt[2 * j + 1];
      if (dx * dx + dy * dy <= radius * radius) graph_add_edge(g, i, j);
    }
  if (xy != NULL) memcpy(xy, pt, 2 * n * sizeof *pt);
  free(pt);
  return g;
}

/* ---- text files ---- */

/* Opens path and checks n, or returns NULL with err set. */
static FILE *open_for(const char *path, size_t n, char *err, size_t errlen)
{
  if (n == 0) {
    mem_seterr(err, errlen, "%s: a graph needs at least one vertex", path);
    return NULL;
  }
  FILE *f = fopen(path, "r");
  if (f == NULL) mem_seterr(err, errlen, "%s: cannot open: %s", path, strerror(errno));
  return f;
}

/* Reads the next line that has something besides blanks and a '#' comment; cuts the
 * comment and the line end. Returns the line, or NULL at the end of the file. */
static char *next_line(FILE *f, char **line, size_t *cap, size_t *lineno)
{
  while (getline(line, cap, f) != -1) {
    ++*lineno;
    (*line)[strcspn(*line, "#\r\n")] = '\0';
    if ((*line)[strspn(*line, " \t")] != '\0') return *line;
  }
  return NULL;
}

/* A vertex index: digits only (no sign, no blanks), below n. Returns NULL or why not. */
static const char *parse_vertex(const char *tok, size_t n, size_t *out)
{
  if (tok[0] == '\0' || strspn(tok, "0123456789") != strlen(tok)) return "is not a vertex index";
  errno = 0;
  unsigned long long v = strtoull(tok, NULL, 10);
  if (errno == ERANGE || v >= n) return "is out of range";
  *out = (size_t)v;
  return NULL;
}

/* Adds the edge on one "i j" line; returns 0, or -1 with err set. */
static int edge_line(graph *g, char *line, const char *path, size_t lineno, char *err, size_t errlen)
{
  const char *blanks = " \t";
  char *save = NULL, *tok[3];
  tok[0] = strtok_r(line, blanks, &save);
  tok[1] = strtok_r(NULL, blanks, &save);
  tok[2] = strtok_r(NULL, blanks, &save);
  if (tok[1] == NULL || tok[2] != NULL) {
    mem_seterr(err, errlen, "%s:%zu: expected two vertex indices 'i j'", path, lineno);
    return -1;
  }
  size_t v[2];
  for (int k = 0; k < 2; k++) {
    const char *why = parse_vertex(tok[k], g->n, &v[k]);
    if (why != NULL) {
      mem_seterr(err, errlen, "%s:%zu: '%s' %s (vertices are 0..%zu)", path, lineno, tok[k], why, g->n - 1);
      return -1;
    }
  }
  if (v[0] == v[1]) {
    mem_seterr(err, errlen, "%s:%zu: self-loop on vertex %zu", path, lineno, v[0]);
    return -1;
  }
  graph_add_edge(g, v[0], v[1]);
  return 0;
}

graph *graph_load_edgelist(const char *path, size_t n, char *err, size_t errlen)
{
  FILE *f = open_for(path, n, err, errlen);
  if (f == NULL) return NULL;
  graph *g = graph_create(n);
  char *line = NULL;
  size_t cap = 0, lineno = 0;
  int bad = 0;
  while (!bad && next_line(f, &line, &cap, &lineno) != NULL)
    bad = edge_line(g, line, path, lineno, err, errlen) != 0;
  if (!bad && ferror(f)) {
    mem_seterr(err, errlen, "%s: read error: %s", path, strerror(errno));
    bad = 1;
  }
  fclose(f);
  free(line);
  if (bad) {
    graph_free(g);
    return NULL;
  }
  return g;
}

/* Parses row `row` of the matrix from one line; returns 0, or -1 with err set. */
static int matrix_line(gsl_matrix *W, size_t row, char *line, const char *path, size_t lineno, char *err,
                       size_t errlen)
{
  size_t n = W->size2, k = 0;
  char *save = NULL;
  for (char *tok = strtok_r(line, " \t", &save); tok != NULL; tok = strtok_r(NULL, " \t", &save), k++) {
    char *end;
    double x = strtod(tok, &end);
    if (end == tok || *end != '\0' || !isfinite(x)) {
      mem_seterr(err, errlen, "%s:%zu: '%s' is not a finite number", path, lineno, tok);
      return -1;
    }
    if (k < n) gsl_matrix_set(W, row, k, x);
  }
  if (k != n) {
    mem_seterr(err, errlen, "%s:%zu: expected %zu numbers, found %zu", path, lineno, n, k);
    return -1;
  }
  return 0;
}

gsl_matrix *graph_load_matrix(const char *path, size_t n, char *err, size_t errlen)
{
  FILE *f = open_for(path, n, err, errlen);
  if (f == NULL) return NULL;
  gsl_matrix *W = mem_matrix(n, n);
  char *line = NULL;
  size_t cap = 0, lineno = 0, rows = 0;
  int bad = 0;
  while (!bad && next_line(f, &line, &cap, &lineno) != NULL) {
    if (rows == n) {
      mem_seterr(err, errlen, "%s:%zu: more than %zu rows", path, lineno, n);
      bad = 1;
    } else {
      bad = matrix_line(W, rows++, line, path, lineno, err, errlen) != 0;
    }
  }
  if (!bad && ferror(f)) {
    mem_seterr(err, errlen, "%s: read error: %s", path, strerror(errno));
    bad = 1;
  }
  if (!bad && rows < n) {
    mem_seterr(err, errlen, "%s: expected %zu rows, found %zu", path, n, rows);
    bad = 1;
  }
  fclose(f);
  free(line);
  if (bad) {
    gsl_matrix_free(W);
    return NULL;
  }
  return W;
}

/* ---- weights ---- */

/* Off-diagonal weight of edge {i, j} under rule. */
static double edge_weight(const graph *g, graph_wrule rule, size_t dmax, size_t i, size_t j)
{
  size_t di = g->v[i].deg, dj = g->v[j].deg, dij = di > dj ? di : dj;
  switch (rule) {
  case GRAPH_W_METROPOLIS: return 1.0 / (1.0 + (double)dij);
  case GRAPH_W_LAZY_METROPOLIS: return 0.5 / (1.0 + (double)dij);
  case GRAPH_W_MAX_DEGREE: return 1.0 / (1.0 + (double)dmax);
  case GRAPH_W_UNIFORM: return 1.0 / (1.0 + (double)di);
  }
  mem_die("graph", "graph_weights: unknown rule");
}

int graph_weights(const graph *g, graph_wrule rule, gsl_matrix *W)
{
  if (W->size1 != g->n || W->size2 != g->n) return -1;
  size_t dmax = graph_max_degree(g);
  gsl_matrix_set_zero(W);
  for (size_t i = 0; i < g->n; i++) {
    double off = 0.0;
    for (size_t k = 0; k < g->v[i].deg; k++) {
      double w = edge_weight(g, rule, dmax, i, g->v[i].nb[k]);
      gsl_matrix_set(W, i, g->v[i].nb[k], w);
      off += w;
    }
    gsl_matrix_set(W, i, i, 1.0 - off);
  }
  return 0;
}

/* Checks one entry; returns 0, or -1 with msg set. */
static int check_entry(const gsl_matrix *W, const graph *g, size_t i, size_t j, char *msg, size_t msglen)
{
  double w = gsl_matrix_get(W, i, j);
  if (!isfinite(w)) {
    mem_seterr(msg, msglen, "W[%zu][%zu] is not a finite number", i, j);
    return -1;
  }
  if (w < 0.0) {
    mem_seterr(msg, msglen, "W[%zu][%zu] = %.17g is negative", i, j, w);
    return -1;
  }
  if (g != NULL && i != j && w != 0.0 && !graph_has_edge(g, i, j)) {
    mem_seterr(msg, msglen, "W[%zu][%zu] = %.17g but %zu and %zu are not neighbours", i, j, w, i, j);
    return -1;
  }
  return 0;
}

/* Checks the sums of rows (by_col == 0) or columns; returns 0, or -1 with msg set. */
static int check_sums(const gsl_matrix *W, int by_col, double tol, char *msg, size_t msglen)
{
  size_t n = W->size1;
  for (size_t i = 0; i < n; i++) {
    double s = 0.0;
    for (size_t j = 0; j < n; j++)
      s += by_col ? gsl_matrix_get(W, j, i) : gsl_matrix_get(W, i, j);
    if (!(fabs(s - 1.0) <= tol)) {
      mem_seterr(msg, msglen, "%s %zu of W sums to %.17g, not 1 within %g", by_col ? "column" : "row", i, s, tol);
      return -1;
    }
  }
  return 0;
}

int graph_check_doubly_stochastic(const gsl_matrix *W, const graph *g, double tol, char *msg, size_t msglen)
{
  size_t n = W->size1;
  if (W->size2 != n) {
    mem_seterr(msg, msglen, "W is %zu x %zu, not square", n, W->size2);
    return -1;
  }
  if (g != NULL && g->n != n) {
    mem_seterr(msg, msglen, "W is %zu x %zu but the graph has %zu vertices", n, n, g->n);
    return -1;
  }
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++)
      if (check_entry(W, g, i, j, msg, msglen) != 0) return -1;
  if (check_sums(W, 0, tol, msg, msglen) != 0) return -1;
  return check_sums(W, 1, tol, msg, msglen);
}

int graph_wrule_parse(const char *s, graph_wrule *rule)
{
  for (int i = GRAPH_W_METROPOLIS; i <= GRAPH_W_UNIFORM; i++)
    if (strcmp(s, wrule_names[i]) == 0) {
      *rule = (graph_wrule)i;
      return 0;
    }
  return -1;
}

const char *graph_wrule_name(graph_wrule rule)
{
  if ((unsigned)rule > GRAPH_W_UNIFORM) mem_die("graph", "graph_wrule_name: unknown rule");
  return wrule_names[rule];
}

/* ---- time-varying graphs ---- */

graph_tv *graph_tv_create(const graph *g, double q, size_t B)
{
  if (!(q >= 0.0 && q <= 1.0) || B == 0) return NULL;
  graph_tv *tv = mem_alloc(sizeof *tv);
  tv->active = graph_create(g->n);
  tv->n_e = g->n_edges;
  tv->ei = mem_alloc(tv->n_e * sizeof *tv->ei);
  tv->ej = mem_alloc(tv->n_e * sizeof *tv->ej);
  tv->idle = mem_calloc(tv->n_e, sizeof *tv->idle);
  size_t e = 0;
  for (size_t i = 0; i < g->n; i++)
    for (size_t k = lower_bound(&g->v[i], i + 1); k < g->v[i].deg; k++) {
      tv->ei[e] = i;
      tv->ej[e++] = g->v[i].nb[k];
    }
  tv->q = q;
  tv->B = B;
  tv->round = -1;
  return tv;
}

void graph_tv_free(graph_tv *tv)
{
  if (tv == NULL) return;
  graph_free(tv->active);
  free(tv->ei);
  free(tv->ej);
  free(tv->idle);
  free(tv);
}

/* Edges go in ascending (i, j), so each insertion appends to both neighbour lists. */
const graph *graph_tv_next(graph_tv *tv, gsl_rng *r)
{
  graph_clear(tv->active);
  for (size_t e = 0; e < tv->n_e; e++) {
    int drawn = gsl_rng_uniform(r) < tv->q;
    /* Nedic-Ozdaglar's bounded intercommunication interval: idle for B - 1 rounds forces it. */
    if (drawn || tv->idle[e] + 1 >= tv->B) {
      graph_add_edge(tv->active, tv->ei[e], tv->ej[e]);
      tv->idle[e] = 0;
    } else {
      tv->idle[e]++;
    }
  }
  tv->round++;
  return tv->active;
}

long graph_tv_round(const graph_tv *tv) { return tv->round; }

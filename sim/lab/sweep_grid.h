#ifndef SIM_LAB_SWEEP_GRID_H
#define SIM_LAB_SWEEP_GRID_H
/* sweep_grid.h - a sweep's grid: the --vary lists, the points of their cartesian product in
 * order, each point's folder name and scenario (the base scenario, --set and --seed, then
 * the point's values). Private to sim/lab's sweep. */
#include <stddef.h>

#include "sim/scenario.h"

/* One --vary: the key as written ("section.key", trimmed) and its values. */
typedef struct sweep_vary {
  const char *arg; /* the option's text, for messages */
  char *key;
  char **values;
  size_t n;
} sweep_vary;

/* What makes the points: the scenario file (NULL: the built-in default scenario, as `dtsim
 * run` without one), the --set assignments, --seed (or NULL) and the --vary lists. */
typedef struct sweep_grid {
  const char *scenario;
  const char *const *sets;
  size_t nsets;
  const char *seed;
  const sweep_vary *vs;
  size_t nv;
} sweep_grid;

/* Splits "S.K=V1,V2" (or "S.K=V1;V2" when a value holds commas) into v; arg must outlive
 * v. Returns 0, or -1 with a message in err (v then holds what was parsed: clear it). */
int sweep_vary_parse(const char *arg, sweep_vary *v, char *err, size_t len);
void sweep_vary_clear(sweep_vary *v);

/* The number of points, or 0 if it exceeds max. */
size_t sweep_grid_size(const sweep_grid *g, size_t max);
/* The value indices of point i (0-based) in product order: the last --vary fastest. */
void sweep_grid_pick(const sweep_grid *g, size_t i, size_t *pick);
/* "007-lr=0.1-batch=32": the 1-based index, zero-padded to the width of the count (at
 * least 3), then each varied key (without its section unless two varied keys share a
 * name) and its value, with characters other than [A-Za-z0-9._+-] as '_'. */
void sweep_grid_name(const sweep_grid *g, size_t index, size_t count, const size_t *pick, char *out, size_t len);

/* The base scenario into s: the defaults, the file (or the built-in scenario), every --set
 * and --seed. Returns 0, or -1 with one line in err. */
int sweep_grid_base(const sweep_grid *g, scenario *s, char *err, size_t len);
/* Applies key=value to s; on error writes the problem (without scenario_set's "--set
 * ASSIGNMENT: " prefix: the caller names the --vary). Returns 0 or -1. */
int sweep_grid_set(scenario *s, const char *key, const char *value, char *err, size_t len);
/* Point (pick) of the grid into s, from the checked base scenario base. */
void sweep_grid_point(const sweep_grid *g, const scenario *base, const size_t *pick, scenario *s);

#endif

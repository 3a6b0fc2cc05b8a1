#ifndef SIM_BOUNDS_H
#define SIM_BOUNDS_H
/* bounds.h - `dtsim run --assert`: one-sided bounds on summary.json's figures, absolute or
 * relative to the same figure of an --expect summary.json, checked after the run (CI). */

#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

typedef struct bounds bounds;

/* An empty list; free with bounds_free (NULL is a no-op). */
bounds *bounds_create(void);
void bounds_free(bounds *b);

/* Parses one expression, NAME OP RHS: NAME a figure's dotted name in summary.json
 * (performance.step_time_s), OP one of <= >= < > ==, RHS a number, `expected`, or a number
 * times `expected` (1.02*expected). Returns 0, or -1 with one line in err (b unchanged). */
int bounds_add(bounds *b, const char *expr, char *err, size_t len);

/* Number of expressions, and whether any uses `expected`. */
size_t bounds_count(const bounds *b);
int bounds_use_expected(const bounds *b);

/* Before the run: every name one a run of `algorithm` can write a number under (its own
 * block's members are known only after a run: any name there passes), and with `expected`
 * (a saved summary.json of the same scenario, or NULL) present there, a number for a
 * relative bound. Returns 0, or -1 with one line in err naming the expression. */
int bounds_check(const bounds *b, const char *algorithm, const json_t *expected, char *err, size_t len);

/* After the run: reads dir/summary.json and prints one line to err_out for each bound it
 * breaks (the figure, the bound, the value). Returns how many were broken (a missing
 * figure or summary.json breaks its bounds). */
size_t bounds_verdict(const bounds *b, const char *dir, const json_t *expected, FILE *err_out);

#endif

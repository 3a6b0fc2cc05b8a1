#ifndef SIM_LAB_SWEEP_METRIC_H
#define SIM_LAB_SWEEP_METRIC_H
/* sweep_metric.h - sweep.csv's figures as --plot-metric names them: the fixed columns (from
 * summary.json's top level, comm and performance blocks) with what each is and its unit,
 * which of them and of the blocks' members a point's algorithm reports (its descriptor's
 * reports and figures), and the default metric. Private to sim/lab's sweep. */
#include <stddef.h>

#include "sim/scenario.h"

/* A fixed column: its name in sweep.csv, the summary.json block it comes from (NULL: the top
 * level) and member, and what it is with its unit (sweep.png's axis). */
typedef struct sweep_column {
  const char *name, *parent, *member, *label;
} sweep_column;

/* The fixed columns in sweep.csv's order. */
extern const sweep_column sweep_columns[];
extern const size_t sweep_n_columns;

/* The index of the fixed numeric column `name` (any but status) into *m: 0, or -1. */
int sweep_metric_find(const char *name, size_t *m);

/* Whether name can be a --plot-metric of some sweep: a fixed numeric column, or a name a
 * summary.json block's member may have. Returns 0, or -1 with a message. */
int sweep_metric_check(const char *name, char *err, size_t len);

/* Whether a run of scenario sc reports a number under --plot-metric name (a fixed column, a
 * flattened block column, or a block member's last name): by its algorithm's descriptor
 * (reports, figures), model.numerics, run.target_accuracy and [faults]. */
int sweep_metric_reported(const char *name, const scenario *sc);

/* What a run of sc reports, for a refusal's message: the fixed columns and its algorithm's
 * own figures, into buf. */
void sweep_metric_list(const scenario *sc, char *buf, size_t len);

/* The metric a sweep plots when --plot-metric is not given: what the algorithm is run for,
 * the time to reach run.target_accuracy when some point sets one and some point reached it
 * (target 1), else the step time (every algorithm reports it: performance.step says of
 * what). */
const char *sweep_metric_default(int target);

#endif

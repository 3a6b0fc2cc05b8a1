#ifndef SIM_SWEEP_MERGE_H
#define SIM_SWEEP_MERGE_H
/* sweep_merge.h - what sweep.c uses of sweep_merge.c: sweep.csv's columns (the metrics
 * --plot-metric names), the folder maker and the merge itself. Private to sim/lab's sweep. */
#include <stddef.h>

#define PATHLEN 4096

/* The index of sweep.csv's fixed numeric column `name` (any metric but status) into *m;
 * 0, or -1 when there is none. */
int sweep_metric_find(const char *name, size_t *m);

/* Whether name can be a --plot-metric before any point has run: a fixed numeric column,
 * or a name a summary.json block's member may have (known only once the points have run).
 * Returns 0, or -1 with a message. */
int sweep_metric_check(const char *name, char *err, size_t len);

/* Whether the n values span a factor of 100 or more, all positive and finite: then
 * sweep.png draws their axis logarithmic. */
int sweep_spans_decades(const double *v, size_t n);

/* Writes out/sweep.csv and out/sweep.png (drawing the column metric names: a fixed one,
 * a flattened one, or its end after a dot when unique) from the point folders in dirs
 * (sweep folders or point folders); out NULL: the sweep folder of the first point.
 * Returns 0, or 2 with a message in err (sweep.csv may have been written then: a metric
 * this sweep has no column for). */
int sweep_merge(const char *const *dirs, size_t nd, const char *out, const char *metric, int quiet, char *err,
                size_t len);

#endif

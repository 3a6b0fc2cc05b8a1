#ifndef SIM_SWEEP_MERGE_H
#define SIM_SWEEP_MERGE_H
/* sweep_merge.h - what sweep.c uses of sweep_merge.c: the merge of point folders into
 * sweep.csv and sweep.png. Private to sim/lab's sweep. */
#include <stddef.h>

#define PATHLEN 4096

/* Writes out/sweep.csv and out/sweep.png (drawing metric: a fixed column, a flattened one,
 * or its end after a dot when unique; NULL: sweep_metric_default for these points) from
 * the point folders in dirs (sweep folders or point folders); out NULL: the sweep folder
 * of the first point. Returns 0, or 2 with a message in err (sweep.csv may have been
 * written then, without the metric's columns: a metric this sweep has no column for). */
int sweep_merge(const char *const *dirs, size_t nd, const char *out, const char *metric, int quiet, char *err,
                size_t len);

#endif

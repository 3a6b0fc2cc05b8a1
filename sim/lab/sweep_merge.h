#ifndef SIM_SWEEP_MERGE_H
#define SIM_SWEEP_MERGE_H
/* sweep_merge.h - what sweep.c uses of sweep_merge.c: sweep.csv's columns (the metrics
 * --plot-metric names), the folder maker and the merge itself. Private to sim/lab's sweep. */
#include <stddef.h>

#define PATHLEN 4096

/* The index of sweep.csv's numeric column `name` (any metric but status) into *m; 0, or
 * -1 when there is none. */
int sweep_metric_find(const char *name, size_t *m);

/* Creates dir and its missing ancestors. Returns 0, or -1 with a message. */
int sweep_mkdir_p(const char *dir, char *err, size_t len);

/* Writes out/sweep.csv and out/sweep.png from the point folders in dirs (sweep folders
 * or point folders); out NULL: the sweep folder of the first point. Returns 0, or 2 with
 * a message in err. */
int sweep_merge(const char *const *dirs, size_t nd, const char *out, size_t metric, int quiet, char *err,
                size_t len);

#endif

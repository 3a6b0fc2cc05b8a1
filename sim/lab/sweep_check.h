#ifndef SIM_LAB_SWEEP_CHECK_H
#define SIM_LAB_SWEEP_CHECK_H
/* sweep_check.h - everything `dtsim sweep` can find wrong before a point runs, so that a
 * refused sweep writes nothing. Private to sim/lab's sweep. */
#include <stddef.h>

#include "sim/lab/sweep_grid.h"

/* Checks the sweep of grid g (count points; sg the SimGrid options, nsg of them) as `dtsim
 * run` would check each point, before anything runs: the base scenario, every --set, every
 * --vary key and value, every point's whole scenario (blamed on one --vary value when that
 * value alone fails, else on the point), every platform file a point names (readable, and
 * loaded by SimGrid in a child process), and the --plot-metric `metric` against what the
 * points' algorithms report (one point reporting it is enough). Into *target whether some
 * point sets run.target_accuracy (the default metric's choice). Returns 0, or -1 with one
 * line in err. */
int sweep_check(const sweep_grid *g, size_t count, const char *const *sg, size_t nsg, const char *metric,
                int *target, char *err, size_t len);

#endif

#ifndef SIM_ENGINE_RESULTS_H
#define SIM_ENGINE_RESULTS_H
/* engine_results.h - a run's results after simgrid_run (engine_build.h has the pipeline). */

#include <stddef.h>

#include "algorithms/metrics.h"
#include "algorithms/run.h"
#include "sim/engine_build.h"

/* After simgrid_run: gathers the results of the run cfg describes and m recorded, writes
 * the result folder whole or not at all, and the closing line into closing (empty with
 * --quiet or when nothing was written). Returns the exit status: 0, 1 (the run failed its
 * goal), or 2 after one line on stderr (the folder could not be written). */
int engine_results_write(const engine_build *b, const run_config *cfg, metrics *m, char *closing, size_t closing_len);

/* The network model SimGrid runs b's platform under into buf (LV08, CM02, ns-3, ...). */
void engine_results_network_model(const engine_build *b, char *buf, size_t len);
/* Whether the run used SimGrid's ns-3 model (which crashes at exit after a run). */
int engine_results_ns3(const engine_build *b);

#endif

#ifndef SIM_ENGINE_STAGE_H
#define SIM_ENGINE_STAGE_H
/* engine_stage.h - the pipeline's simulation step (engine_build.h has the pipeline). */

#include <stddef.h>

#include "sim/engine_build.h"

/* Starts SimGrid on b's platform, places the run's hosts, deploys the algorithm's actors,
 * runs the engine (once per process) and writes the results; the closing line goes into
 * closing (empty with --quiet or when nothing was written). Returns the exit status: 0, 1
 * (the run failed its goal), or 2 after one line on stderr (a placed host the scenario or
 * the algorithm refuses, or the result folder could not be written). */
int engine_stage_run(engine_build *b, char *closing, size_t closing_len);

#endif

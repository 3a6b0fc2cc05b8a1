#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H
/* engine.h - from a validated scenario to result files: builds the model, the data
 * and the platform, checks everything a user can get wrong before SimGrid starts,
 * deploys the algorithm's actors, runs the engine (one per process) and writes the
 * outputs. */

#include "sim/engine_opts.h"
#include "sim/scenario.h"

/* Runs the validated scenario. Returns the exit status:
 * 0 success; 1 the run failed its goal (diverged, target missed, --expect
 * mismatch, an --assert bound broken); 2 bad input (one line on stderr, no result folder written). The closing
 * line comes after the --expect verdict, and only when it matched. */
int engine_run(const scenario *sc, const engine_opts *o);

#endif

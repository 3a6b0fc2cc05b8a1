#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H
/* engine.h - from a validated scenario to result files: builds the model, the data
 * and the platform, checks everything a user can get wrong before SimGrid starts,
 * deploys the algorithm's actors, runs the engine (one per process) and writes the
 * outputs. */

#include "sim/bounds.h"
#include "sim/output.h"
#include "sim/scenario.h"

typedef struct engine_opts {
  const char *out_dir;   /* where the result files go */
  int quiet;             /* no progress line, no closing line */
  int progress;          /* the progress line also when stderr is not a terminal */
  const char *expect;    /* --expect FILE, or NULL */
  const output_expected *expected; /* that file, loaded and checked before the run */
  double rtol;           /* --rtol: numbers compared within this relative tolerance */
  const bounds *bounds;  /* --assert's, checked before the run, or NULL; with them, expected
                          * is their baseline and is not compared whole */
  int trace;             /* write trace.json (Chrome trace-event timeline) */
  int sg_argc;           /* SimGrid options (--cfg=..., --log=...), argv[0] first */
  char **sg_argv;
} engine_opts;

/* Runs the validated scenario. Returns the exit status:
 * 0 success; 1 the run failed its goal (diverged, target missed, --expect
 * mismatch, an --assert bound broken); 2 bad input (one line on stderr, no result folder written). The closing
 * line comes after the --expect verdict, and only when it matched. */
int engine_run(const scenario *sc, const engine_opts *o);

#endif

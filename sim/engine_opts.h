#ifndef SIM_ENGINE_OPTS_H
#define SIM_ENGINE_OPTS_H
/* engine_opts.h - how `dtsim run` asks for one simulation (engine.h runs it): where the
 * results go, what is shown, what they are held against, SimGrid's own options. */

#include "sim/bounds.h"
#include "sim/output.h"

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

#endif

#ifndef SIM_ENGINE_BUILD_H
#define SIM_ENGINE_BUILD_H
/* engine_build.h - one run as it goes down engine_run's pipeline (engine.c): the scenario
 * and options it runs, then what each step builds from them before SimGrid starts (the
 * algorithm and its state, the model, the data, the warmstart, the platform file). Every
 * step is a function of its own module (engine_build.c, engine_numerics.c,
 * engine_platform.c, then engine_stage.c and engine_results.c once SimGrid runs) that reads
 * and fills the build and, when it fails, leaves one line in err; no step calls back into
 * engine.c. engine_build_free frees what the steps built, whichever got how far. */

#include <stddef.h>
#include <gsl/gsl_vector.h>

#include "algorithms/algorithm.h"
#include "algorithms/run.h"
#include "models/data.h"
#include "models/net.h"
#include "sim/engine_opts.h"
#include "sim/scenario.h"

#define ENGINE_ERRLEN 1024

typedef struct engine_build {
  const scenario *sc;
  const engine_opts *o;
  int sg_argc;            /* SimGrid's options (ours, then the user's: theirs win), argv[0] first */
  char **sg_argv;
  const algorithm *alg;
  void *state;            /* the algorithm's, from its prepare */
  net *model;
  dataset *train, *test;
  dataset *noise;         /* run.noise_scale_examples' rows, or NULL */
  data_teacher *teacher;  /* data.stream: the teacher training draws come from, or NULL */
  gsl_vector *init;       /* the warmstart's parameters, or NULL */
  char tmpdir[64];        /* holds a generated preset, removed at the end */
  char platform[4096];
  size_t needed;          /* hosts the algorithm needs */
  const char *needed_why; /* how it counts them */
  run_config cfg;         /* everything but the hosts, before the platform is loaded */
  algorithm_bank bank;    /* a parameter-server bank, when the algorithm asks and the platform takes one */
  int energy, energy_links; /* the platform carries power figures (energy_platform_has) */
  char err[ENGINE_ERRLEN]; /* the failed step's one line */
} engine_build;

/* The pipeline's first step: binds the scenario, the options and SimGrid's arguments
 * (which must outlive b), finds the algorithm and the hosts it needs, and holds the run
 * against the memory it may use (footprint.c). Returns 0, or -1 with one line in b->err. */
int engine_build_plan(engine_build *b, const scenario *sc, const engine_opts *o, int sg_argc, char **sg_argv);
/* SimGrid's own options, checked before anything starts it: 0, or -1 with one line in b->err. */
int engine_build_options(engine_build *b);
/* The run's configuration as far as it is known before the platform is loaded, and the
 * algorithm's state from it (its prepare hook): 0, or -1 with one line in b->err. */
int engine_build_state(engine_build *b);
/* Frees what the steps built (the algorithm's state, the model, the data, the warmstart,
 * a generated platform file and its folder); b itself is the caller's. */
void engine_build_free(engine_build *b);

#endif

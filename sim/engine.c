/* engine.c - one simulation, from a validated scenario to its result folder.
 *
 * engine_run is a pipeline of steps over one build (engine_build.h), each in a module of
 * its own that fills the build and never calls back here. Build, all before SimGrid starts
 * (it aborts on what it refuses), each step checked where a user can get it wrong: the
 * algorithm's descriptor says how many hosts it needs and the memory estimate refuses a
 * run that cannot fit (engine_build.c); the model, the data and the warmstart
 * (engine_numerics.c); the run's configuration and the algorithm's state
 * (engine_build.c); the platform file and its hosts (engine_platform.c). Simulate: load
 * the platform, place the hosts, deploy the actors, run the one engine this process may
 * have (engine_stage.c), gather and write the results (engine_results.c). Conclude, here:
 * the --expect or --assert verdict and the closing line. Every failure is one line on
 * stderr and exit status 2; what was built is freed on one path whatever the step that
 * failed. */
#include "sim/engine.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <xbt/sysdep.h>

#include "sim/engine_build.h"
#include "sim/engine_numerics.h"
#include "sim/engine_platform.h"
#include "sim/engine_results.h"
#include "sim/engine_stage.h"
#include "sim/interrupt.h"

/* SimGrid's argv: the user's options after ours, so theirs win. */
static char **engine_simgrid_args(const engine_opts *o, int *argc)
{
  char **argv = xbt_malloc0(((size_t)o->sg_argc + 4) * sizeof(char *));
  int n = 0;
  argv[n++] = o->sg_argc > 0 ? o->sg_argv[0] : "dtsim";
  argv[n++] = "--log=no_loc";
  argv[n++] = "--log=xbt_cfg.thres:warning";
#ifdef DTSIM_SANITIZE
  argv[n++] = "--cfg=contexts/factory:thread";
#endif
  for (int i = 1; i < o->sg_argc; i++)
    argv[n++] = o->sg_argv[i];
  argv[n] = NULL;
  *argc = n;
  return argv;
}

/* After a run that wrote its results (rc 0 or 1): the --expect verdict, and the closing
 * line when there is no verdict or it matched. Returns the exit status. */
static int engine_conclude(const engine_opts *o, int rc, const char *closing)
{
  char err[ENGINE_ERRLEN];
  if (o->bounds) { /* --assert: the bounds replace --expect's whole-file comparison */
    size_t n = bounds_count(o->bounds);
    if (bounds_verdict(o->bounds, o->out_dir, o->expected ? o->expected->json : NULL, stderr) > 0)
      return 1;
    if (!o->quiet)
      printf("%sdtsim: --assert: %s%zu bound%s\n", closing, n == 1 ? "" : "all ", n, n == 1 ? " holds" : "s hold");
    return rc;
  }
  if (!o->expected) {
    fputs(closing, stdout);
    return rc;
  }
  if (output_expect_compare(o->out_dir, o->expected, o->rtol, err, ENGINE_ERRLEN) != 0) {
    fprintf(stderr, "dtsim: --expect %s: MISMATCH: %s (this run's results: %s/)\n", o->expect, err, o->out_dir);
    return 1;
  }
  if (!o->quiet) {
    fputs(closing, stdout);
    if (o->rtol > 0)
      printf("dtsim: --expect %s: matches (numbers within rtol %g)\n", o->expect, o->rtol);
    else
      printf("dtsim: --expect %s: matches exactly\n", o->expect);
  }
  return rc;
}

/* The steps before SimGrid starts, in the order their checks come: the first that fails
 * is the one a user hears about. Returns 0, or 2 after its one line on stderr. */
static int engine_prepare(engine_build *b, const scenario *sc, const engine_opts *o, int argc, char **argv)
{
  if (engine_build_plan(b, sc, o, argc, argv) != 0 || engine_numerics_model(b) != 0 || engine_build_options(b) != 0 ||
      engine_numerics_data(b) != 0 || engine_numerics_warmstart(b) != 0 || engine_build_state(b) != 0 ||
      engine_platform_write(b) != 0 || engine_platform_check(b) != 0) {
    fprintf(stderr, "dtsim: %s\n", b->err);
    return 2;
  }
  engine_platform_note(b);
  return 0;
}

int engine_run(const scenario *sc, const engine_opts *o)
{
  char closing[1200] = "";
  engine_build b;
  memset(&b, 0, sizeof(b));
  interrupt_run_catch();
  int argc;
  char **argv = engine_simgrid_args(o, &argc);
  int rc = engine_prepare(&b, sc, o, argc, argv);
  if (rc == 0)
    rc = engine_stage_run(&b, closing, sizeof closing);
  if (rc != 2)
    rc = engine_conclude(o, rc, closing);
  int ns3 = engine_results_ns3(&b);
  engine_build_free(&b);
  xbt_free(argv);
  if (ns3) {
    fflush(NULL);
    _exit(rc);
  }
  return rc;
}

/* footprint.c - the memory estimate, before anything is allocated.
 *
 * A run that cannot fit should say so in one line, not die of an allocation failure or
 * of SimGrid's mmap of an actor stack halfway through. The estimate is the algorithm's
 * own (its footprint hook, algorithms/algorithm.h) plus the synthetic data set, held
 * against three limits: the memory this process may use (the machine's, or a resource
 * limit's), the kernel's bound on memory maps (two per actor stack with a guard page),
 * and the address space the actors' stacks take under ulimit -v. Each refusal says what
 * to change. */
#include "sim/footprint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "algorithms/report.h"
#include "sim/platform.h"
#include "sim/scenario.h"

/* Bytes of memory this process may use: the machine's, or less under a resource limit. */
static double footprint_memory_limit(void)
{
  double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (double)rl.rlim_cur < phys)
    phys = (double)rl.rlim_cur;
  if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (double)rl.rlim_cur < phys)
    phys = (double)rl.rlim_cur;
  return phys;
}

/* The kernel's bound on a process's memory maps (vm.max_map_count), or 0 if unknown. */
static long footprint_max_map_count(void)
{
  FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
  long n = 0;
  if (f) {
    if (fscanf(f, "%ld", &n) != 1)
      n = 0;
    fclose(f);
  }
  return n;
}

/* The algorithm's footprint (algorithm.h) and the data set, in bytes; *actors and *what
 * as the hook gives them. */
static double footprint_bytes(const scenario *sc, const algorithm *a, size_t needed, double *actors,
                              const char **what)
{
  double bytes;
  *actors = 0;
  *what = NULL;
  if (a->plan.footprint)
    bytes = a->plan.footprint(sc, algorithm_params(sc, a), actors, what);
  else {
    double params = sc->model.numerics && a->trains_layers ? algorithm_layers_params(sc) : 0;
    bytes = (double)needed * 4 * params * 8;
    *actors = 2 * (double)needed;
    *what = "4 copies of model.layers' parameters on each host the run uses";
  }
  if (sc->model.numerics && a->uses_data && strncmp(sc->data.source, "synthetic-", 10) == 0) {
    size_t sizes[SCENARIO_MAX_LAYERS];
    scenario_layers(sc->model.layers, sizes, SCENARIO_MAX_LAYERS);
    bytes += ((double)sc->data.train + (double)sc->data.test) * ((double)sizes[0] + 1) * 8;
  }
  return bytes;
}

/* The refusal of a run of `bytes` over `limit`, suggesting a timing-only run when one
 * would fit. */
static void footprint_too_big(const scenario *sc, const algorithm *a, size_t hosts, double bytes, double limit,
                              const char *what, char *err, size_t errlen)
{
  char need[32], have[32], params[96] = "";
  report_bytes_text(bytes, need, sizeof need);
  report_bytes_text(limit, have, sizeof have);
  if (a->trains_layers && sc->model.numerics)
    snprintf(params, sizeof params, "; model.layers has %.3g parameters", algorithm_layers_params(sc));
  /* would a timing-only run fit? (an algorithm that refuses one says so in validate) */
  scenario timing = *sc;
  timing.model.numerics = 0;
  double t_actors;
  const char *t_what;
  int timing_fits = sc->model.numerics && footprint_bytes(&timing, a, hosts, &t_actors, &t_what) <= limit &&
                    a->plan.validate(&timing, algorithm_params(&timing, a), err, errlen) == 0;
  snprintf(err, errlen, "the run needs about %s of memory (%s, %zu hosts%s), more than the %s this process may use; "
           "make it smaller%s", need, what ? what : "its numeric state", hosts, params, have,
           timing_fits ? ", or set model.numerics = off for a timing-only run" : "");
}

int footprint_check(const scenario *sc, const algorithm *a, size_t hosts, int sg_argc, char **sg_argv, char *err,
                    size_t errlen)
{
  double actors;
  const char *what;
  double bytes = footprint_bytes(sc, a, hosts, &actors, &what);
  double limit = footprint_memory_limit();
  if (bytes > limit) {
    footprint_too_big(sc, a, hosts, bytes, limit, what, err, errlen);
    return -1;
  }
  /* SimGrid maps each actor's stack with a guard page: two memory maps per actor, beside
   * the process's own (a 3,001-actor collective held 6,180 maps: 178 of its own; 1,000
   * leaves room for libraries and the heap's). */
  const char *guard = platform_cfg_value(sg_argc, sg_argv, "contexts/guard-size");
  long maps = footprint_max_map_count();
  if (maps > 0 && !(guard && strcmp(guard, "0") == 0) && 2 * actors + 1000 > (double)maps) {
    snprintf(err, errlen, "the run creates about %.0f actors, and SimGrid's stacks with guard pages take two memory "
             "maps each, more than vm.max_map_count = %ld allows; add --cfg=contexts/guard-size:0 (no guard pages) or "
             "raise vm.max_map_count", actors, maps);
    return -1;
  }
  const char *stack = platform_cfg_value(sg_argc, sg_argv, "contexts/stack-size"); /* KiB; SimGrid's default is 8 MiB */
  double stack_bytes = (stack ? atof(stack) : 8192) * 1024;
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
      bytes + actors * stack_bytes > (double)rl.rlim_cur) {
    snprintf(err, errlen, "the run's %.0f actors need %.3g GB of address space for their stacks (%.0f KiB each), more "
             "than the limit of %.3g GB (ulimit -v); lower --cfg=contexts/stack-size", actors,
             actors * stack_bytes / 1e9, stack_bytes / 1024, (double)rl.rlim_cur / 1e9);
    return -1;
  }
  return 0;
}

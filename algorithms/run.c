/* run.c - simulated computation shared by every algorithm. */
#include "algorithms/run.h"

#include <simgrid/actor.h>

void run_execute(const run_config *cfg, double flops)
{
  /* Spread evenly over C cores, the work takes flops / (C * speed). Every actor of a
   * deployment here has its host to itself, so one execution of flops / C on one core
   * takes exactly that time, with one SimGrid activity instead of C (SIMGRID-NOTES:
   * one execution uses one core). Co-locating actors on a host would need one
   * execution per core instead, so that they share the cores. */
  sg_actor_execute(flops / cfg->efficiency / cfg->cores);
}

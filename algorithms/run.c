/* run.c - simulated computation shared by every algorithm. */
#include "algorithms/run.h"

#include <simgrid/actor.h>
#include <simgrid/exec.h>
#include <xbt/sysdep.h>

void run_execute(const run_config *cfg, double flops)
{
  double work = flops / cfg->efficiency;
  if (cfg->cores <= 1) {
    sg_actor_execute(work);
    return;
  }
  /* One sg_actor_execute uses one core (SIMGRID-NOTES): start one execution per core. */
  sg_exec_t execs[64];
  sg_exec_t *ex = cfg->cores <= 64 ? execs : xbt_malloc(cfg->cores * sizeof(*ex));
  for (int c = 0; c < cfg->cores; c++)
    ex[c] = sg_actor_exec_async(work / cfg->cores);
  for (int c = 0; c < cfg->cores; c++)
    sg_exec_wait(ex[c]);
  if (ex != execs)
    xbt_free(ex);
}

/* run.c - simulated computation shared by every algorithm. */
#include "algorithms/run.h"

#include "models/minibatch.h"

#include <simgrid/actor.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <simgrid/mutex.h>

/* SimGrid 3.32's Exec::init() (src/s4u/s4u_Exec.cpp) registers every new execution
 * in the global Host::on_state_change signal from the calling actor's thread, without
 * a lock: with parallel contexts (--cfg=contexts/nthreads:N) two actors creating an
 * execution at once corrupt that map, and the engine crashes later in ExecImpl::post.
 * Creating executions under one SimGrid mutex serialises exactly that step (a mutex
 * takes no simulated time, and its grant order is deterministic). */
static sg_mutex_t exec_init_lock;

void run_engine_setup(void)
{
  exec_init_lock = sg_mutex_init();
}

void run_engine_teardown(void)
{
  sg_mutex_destroy(exec_init_lock);
  exec_init_lock = NULL;
}

static void execute_locked(double flops)
{
  sg_mutex_lock(exec_init_lock);
  sg_exec_t e = sg_actor_exec_init(flops);
  sg_mutex_unlock(exec_init_lock);
  sg_exec_start(e);
  sg_exec_wait(e);
}

void run_busy(double seconds)
{
  if (seconds > 0)
    execute_locked(seconds * sg_host_get_speed(sg_host_self()));
}

/* [faults] stragglers: the calling host's factor; msg_traffic_init numbers the run's
 * hosts through their host data. Exactly 1 without stragglers. */
static double straggler_factor(const run_config *cfg)
{
  const size_t *i = cfg->host_slowdown ? sg_host_get_data(sg_host_self()) : NULL;
  return i ? cfg->host_slowdown[*i] : 1.0;
}

void run_execute(const run_config *cfg, double flops)
{
  /* Spread evenly over C cores, the work takes flops / (C * speed). Every actor of a
   * deployment here has its host to itself, so one execution of flops / C on one core
   * takes exactly that time, with one SimGrid activity instead of C (SIMGRID-NOTES:
   * one execution uses one core). Co-locating actors on a host would need one
   * execution per core instead, so that they share the cores. */
  execute_locked(flops / cfg->efficiency / cfg->cores * straggler_factor(cfg));
}

sg_exec_t run_execute_async(const run_config *cfg, double flops)
{
  sg_mutex_lock(exec_init_lock);
  sg_exec_t e = sg_actor_exec_init(flops / cfg->efficiency / cfg->cores * straggler_factor(cfg));
  sg_mutex_unlock(exec_init_lock);
  sg_exec_start(e);
  return e;
}

gsl_vector *run_initial_params(const run_config *cfg)
{
  if (cfg->init == NULL)
    return minibatch_initial_params(cfg->model, cfg->seed);
  gsl_vector *w = gsl_vector_alloc(cfg->init->size);
  gsl_vector_memcpy(w, cfg->init);
  return w;
}

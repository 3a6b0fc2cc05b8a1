/* compute.c - what an actor's work costs: flops and bytes turned into the simulated
 * executions account.c runs and records. */
#include "algorithms/compute.h"

#include <math.h>
#include <stdlib.h>
#include <simgrid/host.h>
#include <xbt/asserts.h>

#include "algorithms/account.h"

void compute_busy(double seconds)
{
  if (seconds > 0)
    account_exec(seconds * sg_host_get_speed(sg_host_self()));
}

/* [faults] stragglers: the calling host's factor; msg_traffic_init numbers the run's
 * hosts through their host data. Exactly 1 without stragglers. */
static double straggler_factor(const run_config *cfg)
{
  const size_t *i = cfg->host_slowdown ? sg_host_get_data(sg_host_self()) : NULL;
  return i ? cfg->host_slowdown[*i] : 1.0;
}

/* Flops one execution of the calling actor really runs: spread evenly over C cores at
 * the given efficiency, on hosts speed_factor times faster (what-if), times the host's
 * straggler slowdown ([faults]). */
static double exec_flops(const run_config *cfg, double flops)
{
  double f = cfg->speed_factor > 0 ? cfg->speed_factor : 1;
  return flops / cfg->efficiency / cfg->cores / f * straggler_factor(cfg);
}

void compute_execute(const run_config *cfg, double flops)
{
  /* Spread evenly over C cores, the work takes flops / (C * speed). Every actor of a
   * deployment here has its host to itself, so one execution of flops / C on one core
   * takes exactly that time, with one SimGrid activity instead of C (in SimGrid 3.32
   * one execution uses one core). Co-locating actors on a host would need one
   * execution per core instead, so that they share the cores. */
  account_exec(exec_flops(cfg, flops));
}

double compute_host_mem_bw(sg_host_t host)
{
  const char *v = sg_host_get_property_value(host, "mem_bw");
  if (!v)
    return 0;
  char *end;
  double bw = strtod(v, &end);
  return end != v && *end == '\0' && bw > 0 && isfinite(bw) ? bw : 0;
}

void compute_execute_mem(const run_config *cfg, double flops, double bytes)
{
  double amount = exec_flops(cfg, flops);
  if (bytes > 0) {
    sg_host_t h = sg_host_self();
    double bw = compute_host_mem_bw(h);
    xbt_assert(bw > 0, "host %s has no mem_bw property", sg_host_get_name(h));
    amount += bytes / bw * sg_host_get_speed(h) * straggler_factor(cfg);
  }
  account_exec(amount);
}

sg_exec_t compute_execute_async(const run_config *cfg, double flops)
{
  return account_exec_async(exec_flops(cfg, flops));
}

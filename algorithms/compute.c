/* compute.c - what an actor's work costs: flops and bytes turned into the simulated
 * executions account.c runs and records. */
#include "algorithms/compute.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
  return i && *i < cfg->n_hosts ? cfg->host_slowdown[*i] : 1.0; /* a bank host (cfg->banks): 1 */
}

/* Flops one execution really runs: spread evenly over C cores at the given efficiency, on
 * hosts speed_factor times faster (what-if), times a host's slowdown `factor`. */
static double exec_flops_as(const run_config *cfg, double flops, double factor)
{
  double f = cfg->speed_factor > 0 ? cfg->speed_factor : 1;
  return flops / cfg->efficiency / cfg->cores / f * factor;
}

/* The calling actor's: times its host's straggler slowdown ([faults]). */
static double exec_flops(const run_config *cfg, double flops)
{
  return exec_flops_as(cfg, flops, straggler_factor(cfg));
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

sg_exec_t compute_execute_async_as(const run_config *cfg, double flops, double factor)
{
  return account_exec_async(exec_flops_as(cfg, flops, factor));
}

sg_exec_t compute_execute_async(const run_config *cfg, double flops)
{
  return account_exec_async(exec_flops(cfg, flops));
}

/* A host property as a number >= 0, or `def` when the host has none; -1 when it is there
 * but is not a finite number >= 0. */
static double host_number(sg_host_t host, const char *name, double def)
{
  const char *v = sg_host_get_property_value(host, name);
  if (!v)
    return def;
  char *end;
  double x = strtod(v, &end);
  return end != v && *end == '\0' && x >= 0 && isfinite(x) ? x : -1;
}

/* The run's datatype (model.dtype), for a host's gpu_peaks. */
static const char *run_dtype(const run_config *cfg)
{
  return cfg->sc ? cfg->sc->model.dtype : "fp32";
}

/* The host's gpu_peaks entry for the run's datatype: 1 with *peak and *eff (0: none of its
 * own), 0 when the host lists no peaks, -1 when its list lacks the datatype or is malformed. */
static int dtype_peak(const run_config *cfg, sg_host_t host, double *peak, double *eff)
{
  const char *list = sg_host_get_property_value(host, "gpu_peaks");
  if (list == NULL)
    return 0;
  return gemm_peaks_find(list, run_dtype(cfg), peak, eff) == 1 ? 1 : -1;
}

double compute_dtype_factor(const run_config *cfg, sg_host_t host)
{
  double peak, eff;
  return dtype_peak(cfg, host, &peak, &eff) == 1 ? peak / sg_host_get_pstate_speed(host, 0) : 1;
}

int compute_gpu(const run_config *cfg, sg_host_t host, gemm_device *d)
{
  if (!cfg->kernel_shapes || sg_host_get_property_value(host, "gpu_sms") == NULL)
    return 0;
  memset(d, 0, sizeof(*d));
  double f = cfg->speed_factor > 0 ? cfg->speed_factor : 1;
  d->peak = sg_host_get_speed(host) * f * cfg->cores;
  d->sms = (size_t)host_number(host, "gpu_sms", 0);
  d->mem_bw = compute_host_mem_bw(host);
  d->l2_bw = host_number(host, "gpu_l2_bw", 0);
  d->launch_s = host_number(host, "gpu_launch", 0);
  d->efficiency = host_number(host, "gpu_gemm_eff", 1);
  double peak, eff;
  if (dtype_peak(cfg, host, &peak, &eff) == 1 && eff > 0)
    d->efficiency = eff;
  d->software = cfg->efficiency;
  const char *tiles = sg_host_get_property_value(host, "gpu_tiles");
  if (tiles == NULL || gemm_tiles_parse(tiles, d) != 0)
    gemm_device_default_tiles(d);
  xbt_assert(gemm_device_check(d) == 0, "host %s: a GPU description sim/ should have refused", sg_host_get_name(host));
  return 1;
}

/* The run's datatype against host h's peaks (gpu_peaks): 0, or -1 with one line in err. Every
 * host must have the same ratio of that peak to its speed as the first (compute_dtype_factor). */
static int check_dtype(const run_config *cfg, sg_host_t h, char *err, size_t len)
{
  const char *dt = run_dtype(cfg), *list = sg_host_get_property_value(h, "gpu_peaks");
  double peak, eff;
  int found = list ? gemm_peaks_find(list, dt, &peak, &eff) : 0;
  if (found < 0)
    snprintf(err, len, "host %s: gpu_peaks must be a list such as bf16:989.5e12,fp8:1979e12:0.71 (datatype:flop/s"
             "[:GEMM efficiency])", sg_host_get_name(h));
  else if (found == 0 && list)
    snprintf(err, len, "model.dtype = %s: host %s's GPU has no %s (its peaks: %s)", dt, sg_host_get_name(h), dt, list);
  else if (list == NULL && (strcmp(dt, "fp8") == 0 || strcmp(dt, "tf32") == 0))
    snprintf(err, len, "model.dtype = %s: host %s lists no %s peak (no gpu_peaks property; the dgx-h100, dgx-b200 and "
             "gb200-nvl72 presets' GPUs have one)", dt, sg_host_get_name(h), dt);
  else if (compute_dtype_factor(cfg, h) != compute_dtype_factor(cfg, cfg->hosts[0]))
    snprintf(err, len, "model.dtype = %s: hosts %s and %s differ in their %s peak against their speed (gpu_peaks)", dt,
             sg_host_get_name(cfg->hosts[0]), sg_host_get_name(h), dt);
  else
    return 0;
  return -1;
}

int compute_check_gpus(const run_config *cfg, char *err, size_t len)
{
  static const char *const numbers[] = {"gpu_l2_bw", "gpu_launch"};
  for (size_t i = 0; i < cfg->n_hosts; i++) {
    sg_host_t h = cfg->hosts[i];
    const char *name = sg_host_get_name(h), *tiles = sg_host_get_property_value(h, "gpu_tiles");
    double sms = host_number(h, "gpu_sms", 0);
    gemm_device d;
    if (check_dtype(cfg, h, err, len) != 0)
      return -1;
    if (sg_host_get_property_value(h, "gpu_sms") == NULL)
      continue;
    if (!(sms >= 1) || sms != floor(sms) || sms > 1e6) {
      snprintf(err, len, "host %s: gpu_sms must be a whole number of SMs >= 1", name);
      return -1;
    }
    if (compute_host_mem_bw(h) <= 0) {
      snprintf(err, len, "host %s: a GPU description (gpu_sms) needs a mem_bw property (bytes/s > 0)", name);
      return -1;
    }
    for (size_t k = 0; k < sizeof numbers / sizeof *numbers; k++)
      if (host_number(h, numbers[k], 0) < 0) {
        snprintf(err, len, "host %s: %s must be a number >= 0", name, numbers[k]);
        return -1;
      }
    double held = host_number(h, "gpu_comm_sms", 0);
    if (!(held >= 0) || held != floor(held) || held >= sms) {
      snprintf(err, len, "host %s: gpu_comm_sms must be a whole number of SMs below gpu_sms", name);
      return -1;
    }
    if (held > 0 && sg_host_core_count(h) != 1) {
      snprintf(err, len, "host %s: gpu_comm_sms needs a one-core GPU host (the core is the GPU), not %d cores", name,
               sg_host_core_count(h));
      return -1;
    }
    double eff = host_number(h, "gpu_gemm_eff", 1);
    if (!(eff > 0 && eff <= 1)) {
      snprintf(err, len, "host %s: gpu_gemm_eff must be a share of peak in (0, 1]", name);
      return -1;
    }
    if (tiles && gemm_tiles_parse(tiles, &d) != 0) {
      snprintf(err, len, "host %s: gpu_tiles must be a list such as 256x128,128x128 (sides 8 to 1024)", name);
      return -1;
    }
  }
  return 0;
}

double compute_comm_share(sg_host_t host)
{
  if (sg_host_get_property_value(host, "gpu_sms") == NULL)
    return 0;
  double sms = host_number(host, "gpu_sms", 0), held = host_number(host, "gpu_comm_sms", 0);
  return sms >= 1 && held > 0 && held < sms ? held / sms : 0;
}

/* The execution amount of w: on a GPU its seconds at the host's speed, else its flops and
 * bytes as compute_execute_mem. */
static double work_amount(const run_config *cfg, const gemm_device *gpu, const compute_work *w)
{
  sg_host_t h = sg_host_self();
  double flops = 0;
  if (gpu == NULL) {
    for (size_t i = 0; i < w->n_gemms; i++)
      flops += 2 * w->gemms[i].m * w->gemms[i].n * w->gemms[i].k * w->gemms[i].batch;
    double amount = exec_flops(cfg, flops);
    if (w->mem_bytes > 0) {
      double bw = compute_host_mem_bw(h);
      xbt_assert(bw > 0, "host %s has no mem_bw property", sg_host_get_name(h));
      amount += w->mem_bytes / bw * sg_host_get_speed(h) * straggler_factor(cfg);
    }
    return amount;
  }
  return compute_work_seconds(cfg, gpu, w) * sg_host_get_speed(h) * straggler_factor(cfg);
}

double compute_work_seconds(const run_config *cfg, const gemm_device *gpu, const compute_work *w)
{
  double s = 0;
  for (size_t i = 0; i < w->n_gemms; i++) {
    const gemm_shape *g = &w->gemms[i];
    s += gemm_time(gpu, g->m, g->n, g->k, g->batch, cfg->gemm_bytes ? cfg->gemm_bytes : cfg->elem_bytes, NULL);
  }
  if (w->mem_bytes > 0 || w->kernels > 0)
    s += gemm_mem_time(gpu, w->mem_bytes, w->kernels);
  return s;
}

double compute_gpu_amount(const run_config *cfg, double seconds)
{
  return seconds * sg_host_get_speed(sg_host_self()) * straggler_factor(cfg);
}

double compute_work_amount(const run_config *cfg, const gemm_device *gpu, const compute_work *w)
{
  return work_amount(cfg, gpu, w);
}

void compute_gpu_execute(const run_config *cfg, double seconds)
{
  account_exec(compute_gpu_amount(cfg, seconds));
}

sg_exec_t compute_gpu_execute_async(const run_config *cfg, double seconds)
{
  return account_exec_async(compute_gpu_amount(cfg, seconds));
}

void compute_work_execute(const run_config *cfg, const gemm_device *gpu, const compute_work *w)
{
  account_exec(work_amount(cfg, gpu, w));
}

sg_exec_t compute_work_execute_async(const run_config *cfg, const gemm_device *gpu, const compute_work *w)
{
  return account_exec_async(work_amount(cfg, gpu, w));
}

static double works_amount(const run_config *cfg, const gemm_device *gpu, const compute_work *w, size_t n, double reps)
{
  double a = 0;
  for (size_t i = 0; i < n; i++)
    a += work_amount(cfg, gpu, &w[i]);
  return reps * a;
}

void compute_works_execute(const run_config *cfg, const gemm_device *gpu, const compute_work *w, size_t n, double reps)
{
  account_exec(works_amount(cfg, gpu, w, n, reps));
}

sg_exec_t compute_works_execute_async(const run_config *cfg, const gemm_device *gpu, const compute_work *w, size_t n,
                                      double reps)
{
  return account_exec_async(works_amount(cfg, gpu, w, n, reps));
}

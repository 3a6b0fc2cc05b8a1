#ifndef ALGORITHMS_COMPUTE_H
#define ALGORITHMS_COMPUTE_H
/* compute.h - what an actor's work costs in simulated time: flops from the model's
 * shapes at the host's speed, spread over its cores at the model's efficiency, slowed by
 * [faults] stragglers; memory-bound kernels at the host's memory bandwidth; on a GPU host,
 * GEMMs and kernels timed by their shapes (the kernel model, models/gemm.h); per-message
 * protocol work on one core. Every execution is recorded by account.h. */

#include <simgrid/forward.h>

#include "algorithms/run.h"
#include "models/gemm.h"

/* Simulates `flops` of computation spread evenly over cfg->cores cores of the calling
 * actor's host, at cfg->efficiency of peak: it takes flops / (efficiency * cores * speed)
 * when the actor has its host to itself, as every actor here has. */
void compute_execute(const run_config *cfg, double flops);

/* As compute_execute, plus `bytes` of memory-bound work (elementwise kernels) at the host's
 * memory bandwidth, compute_host_mem_bw: bytes / mem_bw seconds more, in the same execution.
 * Model efficiency and platform.speed_factor do not apply to that part (a faster ALU
 * does not move bytes faster); a straggler's slowdown does. The host must have mem_bw
 * when bytes > 0 (sim/ checks it before the run). */
void compute_execute_mem(const run_config *cfg, double flops, double bytes);

/* The host's memory bandwidth in bytes/s: its `mem_bw` property (the dgx2h and selene
 * presets set it; <prop id="mem_bw" value="900e9"/> in a host or cluster of a platform
 * file), or 0 when it has none or it is not a positive finite number. */
double compute_host_mem_bw(sg_host_t host);

/* The kernel model of a GPU host (models/gemm.h; platforms/README.md, GPU description):
 * 1 with *d filled when cfg's model.kernel_model is `shapes` and the host has a gpu_sms
 * property: peak = its speed x platform.speed_factor x cfg->cores, efficiency = its
 * gpu_gemm_eff (the library's main loop; 1 if absent; the gpu_peaks entry's own for model.dtype
 * when it gives one), software = model.efficiency (the
 * share of the device's speed the training software's kernels get), mem_bw, gpu_l2_bw (0
 * if absent), gpu_launch (0 if absent), gpu_tiles (cuBLAS's if absent); 0 otherwise (no
 * GPU, or `flat`: flops at efficiency x peak). sim/ checks the properties before the run,
 * so a host that has gpu_sms has valid ones. */
int compute_gpu(const run_config *cfg, sg_host_t host, gemm_device *d);
/* How many times faster than its speed (pstate 0) the host computes in the run's model.dtype:
 * its gpu_peaks entry for that datatype (platforms/README.md, GPU description) over its speed;
 * 1 for a host without gpu_peaks (its speed is the peak at any datatype). sim/ multiplies
 * platform.speed_factor by it. */
double compute_dtype_factor(const run_config *cfg, sg_host_t host);
/* Before the run: the run's model.dtype is in every host's gpu_peaks (fp8 needs one), in the
 * same ratio to each host's speed; every host of cfg that has a gpu_sms property has a usable description
 * (gpu_sms a whole number >= 1, mem_bw > 0, gpu_l2_bw and gpu_launch numbers >= 0,
 * gpu_gemm_eff in (0, 1], gpu_tiles a tile list, gpu_comm_sms a whole number below gpu_sms
 * and, when above 0, one core): 0, or -1 with one line in err naming the host and property. */
int compute_check_gpus(const run_config *cfg, char *err, size_t len);

/* The share of a GPU host's speed a collective's kernels hold while it runs: its
 * gpu_comm_sms over its gpu_sms (NCCL's channels, one SM each, which no compute kernel
 * shares); 0 for a host without both. Independent of model.kernel_model: the SMs are
 * taken whatever times the kernels. */
double compute_comm_share(sg_host_t host);

/* The work of one compute phase: GEMMs, then memory-bound kernels moving mem_bytes in all,
 * and `kernels` kernel launches (its memory-bound kernels and the collective it ends at). */
typedef struct compute_work {
  const gemm_shape *gemms;
  size_t n_gemms;
  double mem_bytes;
  double kernels;
} compute_work;

/* Simulates w as one execution of the calling actor. On a GPU (gpu from compute_gpu) it
 * takes the sum of gemm_time of every GEMM (elements of cfg->elem_bytes) and gemm_mem_time
 * of the kernels, times the host's straggler slowdown; without (gpu NULL), the GEMMs' 2 m n
 * k batch flops and mem_bytes as compute_execute_mem, kernel launches free. */
void compute_work_execute(const run_config *cfg, const gemm_device *gpu, const compute_work *w);
/* As compute_work_execute, started and returned at once (wait with account_exec_wait). */
sg_exec_t compute_work_execute_async(const run_config *cfg, const gemm_device *gpu, const compute_work *w);
/* Each of w[0..n) reps times as one execution of the calling actor (their amounts as
 * compute_work_execute spends them, summed, times reps): a run of identical phases with
 * nothing between them to wait for; the _async form returns it started. */
void compute_works_execute(const run_config *cfg, const gemm_device *gpu, const compute_work *w, size_t n, double reps);
sg_exec_t compute_works_execute_async(const run_config *cfg, const gemm_device *gpu, const compute_work *w, size_t n,
                                      double reps);
/* The device seconds of w on a GPU (before a straggler's slowdown), as compute_work_execute
 * spends them: for a caller that runs the same work many times (compute_gpu_execute). */
double compute_work_seconds(const run_config *cfg, const gemm_device *gpu, const compute_work *w);
/* The execution amount (flops at the calling host's speed, its straggler slowdown included) of w as
 * compute_work_execute runs it, and of `seconds` of a GPU's work as compute_gpu_execute runs
 * them: for a caller that runs the work itself in pieces (algorithms/tensor_host.h). */
double compute_work_amount(const run_config *cfg, const gemm_device *gpu, const compute_work *w);
double compute_gpu_amount(const run_config *cfg, double seconds);
/* Simulates `seconds` of a GPU's work (compute_work_seconds) as one execution of the calling
 * actor, times its host's straggler slowdown; the _async form returns it started. */
void compute_gpu_execute(const run_config *cfg, double seconds);
sg_exec_t compute_gpu_execute_async(const run_config *cfg, double seconds);

/* As compute_execute, but returns at once with the execution started; the caller waits for
 * it with sg_exec_wait (which frees it), so the actor can communicate meanwhile. */
sg_exec_t compute_execute_async(const run_config *cfg, double flops);
/* As compute_execute_async, with `factor` in place of the calling host's slowdown: the work
 * of another host's (a bank's shard's, ps_bank.h) done here. */
sg_exec_t compute_execute_async_as(const run_config *cfg, double flops, double factor);

/* Keeps one core of the calling actor's host busy for `seconds` (per-message
 * protocol work, which does not spread over cores). No-op for seconds <= 0. */
void compute_busy(double seconds);

#endif

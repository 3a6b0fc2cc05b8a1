#ifndef ALGORITHMS_COMPUTE_H
#define ALGORITHMS_COMPUTE_H
/* compute.h - what an actor's work costs in simulated time: flops from the model's
 * shapes at the host's speed, spread over its cores at the model's efficiency, slowed by
 * [faults] stragglers; memory-bound kernels at the host's memory bandwidth; per-message
 * protocol work on one core. Every execution is recorded by account.h. */

#include <simgrid/forward.h>

#include "algorithms/run.h"

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

/* As compute_execute, but returns at once with the execution started; the caller waits for
 * it with sg_exec_wait (which frees it), so the actor can communicate meanwhile. */
sg_exec_t compute_execute_async(const run_config *cfg, double flops);

/* Keeps one core of the calling actor's host busy for `seconds` (per-message
 * protocol work, which does not spread over cores). No-op for seconds <= 0. */
void compute_busy(double seconds);

#endif

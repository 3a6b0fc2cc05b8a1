#ifndef MODELS_GEMM_H
#define MODELS_GEMM_H
/* gemm.h - how long a GEMM and a memory-bound kernel take on a GPU, from their shapes and
 * the device (NVIDIA's "Matrix Multiplication Background" user's guide, chapters 2 and 3):
 * tile and wave quantisation, the L2 operand traffic of a tile, split-K for small outputs,
 * the roofline of the whole GEMM's DRAM traffic, and a fixed time per kernel. */

#include <stddef.h>

/* One GEMM: `batch` products C (m x n) = A (m x k) B (k x n) launched as one kernel. */
typedef struct gemm_shape {
  double m, n, k, batch;
} gemm_shape;

/* A thread-block tile: tm x tn elements of the output. */
typedef struct gemm_tile {
  unsigned m, n;
} gemm_tile;

#define GEMM_MAX_TILES 16

/* A GPU as the model sees it. peak and the bandwidths are of the whole device. */
typedef struct gemm_device {
  double peak;       /* flop/s of the tensor cores at the GEMM's precision */
  size_t sms;        /* streaming multiprocessors: one thread block of a tile each at a time */
  double mem_bw;     /* DRAM bytes/s */
  double l2_bw;      /* L2 bytes/s, all SMs together; 0: no L2 limit */
  double launch_s;   /* fixed seconds of every kernel (launch and the smallest kernel's latency) */
  double efficiency; /* share of an SM's peak a block sustains in its main loop, (0, 1]: the
                        library's (cuBLAS's), as a GEMM benchmark measures it */
  double software;   /* share of the device's speed the software's kernels get, (0, 1]: every
                        kernel's time but its launch is divided by it; 0 counts as 1 */
  size_t max_split;  /* the largest split-K factor tried (1: none); 0 counts as 16 */
  size_t n_tiles;    /* the tile shapes the library chooses from (cuBLAS's, by default) */
  gemm_tile tiles[GEMM_MAX_TILES];
} gemm_device;

/* How gemm_time runs one GEMM, and what bounds it. */
typedef struct gemm_plan {
  gemm_tile tile;   /* the tile shape chosen */
  size_t split;     /* split-K factor: the K loop cut into this many blocks per tile */
  double blocks;    /* thread blocks: tiles x batch x split */
  double waves;     /* ceil(blocks / sms) */
  double compute_s; /* waves x one block's time: its main loop's, or its L2 traffic's if slower */
  double memory_s;  /* the operands read once and the output written once, at mem_bw */
  double reduce_s;  /* split-K: the fp32 partial sums written and read back, at mem_bw */
  double time_s;    /* launch_s + (max(compute_s, memory_s) + reduce_s) / software */
  int memory_bound; /* memory_s > compute_s */
} gemm_plan;

/* The thread-block tiles K is stepped through in slices of (elements). */
#define GEMM_TILE_K 32

/* Fills d->tiles with cuBLAS's tile shapes for tensor-core GEMMs as the guide lists them
 * (sec. 2.3): 256x128, 128x256, 128x128, 128x64, 64x128, 64x64. */
void gemm_device_default_tiles(gemm_device *d);
/* Parses "256x128,128x128,..." (1 to GEMM_MAX_TILES tiles, each side 8 to 1024) into
 * d->tiles; 0, or -1 (d unchanged) when s is not such a list. */
int gemm_tiles_parse(const char *s, gemm_device *d);
/* 0 if d can time a GEMM (peak, sms, mem_bw and efficiency positive, efficiency <= 1,
 * l2_bw and launch_s >= 0, at least one tile), else -1. */
int gemm_device_check(const gemm_device *d);

/* Seconds of a batch of `batch` GEMMs C (m x n) = A (m x k) B (k x n) launched as one kernel,
 * elements of elem_bytes in A, B and C, on d (gemm_device_check must pass): the fastest of
 * d's tiles and the split-K factors 1, 2, 4, 8, 16 (up to d->max_split), each timed as
 *   blocks = ceil(m / tm) ceil(n / tn) batch split, waves = ceil(blocks / sms)
 *   block  = max(2 tm tn k' / (efficiency peak / sms), (tm + tn) k' elem_bytes min(sms, blocks) / l2_bw)
 * with k' = ceil(ceil(k / split) / GEMM_TILE_K) GEMM_TILE_K (tile quantisation of the
 * output and of K; wave quantisation), against the roofline (m k + k n + m n) elem_bytes
 * batch / mem_bw, plus split-K's 2 split m n batch 4 bytes / mem_bw, all divided by
 * d->software, plus launch_s. plan (may be NULL) gets the chosen plan. Returns 0 when any
 * dimension is 0. */
double gemm_time(const gemm_device *d, double m, double n, double k, double batch, size_t elem_bytes,
                 gemm_plan *plan);

/* A GPU's dense tensor-core peak by datatype, from a list "NAME:PEAK[:EFF],..." (a GPU host's
 * gpu_peaks property, e.g. "bf16:989.5e12,fp8:1979e12:0.7089"): 1 with *peak (flop/s) and *eff
 * (the GEMM main loop's share of that peak for this datatype, 0 when the entry gives none) for
 * the entry named dtype; 0 when the list has no such entry; -1 when the list is malformed (an
 * entry without a name or a positive finite peak, an EFF outside (0, 1], a name twice). */
int gemm_peaks_find(const char *list, const char *dtype, double *peak, double *eff);

/* Seconds of `kernels` memory-bound kernels moving `bytes` in all: bytes / (mem_bw x
 * software) + kernels x launch_s. */
double gemm_mem_time(const gemm_device *d, double bytes, double kernels);

#endif

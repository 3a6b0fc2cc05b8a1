/* reproduce_gemm.c - `dtsim reproduce gemm`: the kernel model (models/gemm.h) against
 * published GEMM measurements. No simulation: the model alone, on the presets' GPU
 * descriptions.
 *
 * - Baidu DeepBench's V100 training GEMMs (github.com/baidu-research/DeepBench,
 *   results/train/DeepBench_NV_V100.xlsx, sheet "Results - FP16 ip, Mixed math": fp16
 *   inputs, fp32 accumulation; CUDA 10.1, cuDNN 7.6, a DGX-1 V100) on dgx2h's V100
 *   description; the main-loop efficiency is fitted on one row, the largest, and every
 *   other row is a prediction.
 * - The two examples of NVIDIA's "Matrix Multiplication Background" user's guide, sec. 3
 *   (tile quantisation: M = 27648, K = 4096, 256 x 128 tiles, N from 136 to 256 runs the same
 *   tiles; wave quantisation: M = 2304, K = 4096, 256 x 128 tiles on the A100's 108 SMs,
 *   whose best points are the N where the tiles fill whole waves, N = 1536 k) on selene's
 *   A100 description with the guide's one tile: what is checked is where the steps fall. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "models/gemm.h"
#include "sim/fileio.h"
#include "sim/platform.h"
#include "sim/lab/reproduce.h"
#include "sim/lab/reproduce_frame.h"
#include "sim/lab/template.h"

/* DeepBench's rows: kernel, M, N, K, A and B transposed, measured milliseconds (as the
 * sheet gives them, 3 significant digits at best; its Tflop/s column is 2 M N K / time). */
typedef struct db_row {
  const char *kernel;
  double m, n, k;
  char ta, tb;
  double ms;
} db_row;

static const db_row db_rows[] = {
    {"DeepSpeech", 1760, 16, 1760, 'N', 'N', 0.02},
    {"DeepSpeech", 1760, 32, 1760, 'N', 'N', 0.021},
    {"DeepSpeech", 1760, 64, 1760, 'N', 'N', 0.023},
    {"DeepSpeech", 1760, 128, 1760, 'N', 'N', 0.031},
    {"DeepSpeech", 1760, 7000, 1760, 'N', 'N', 0.485},
    {"DeepSpeech", 2048, 16, 2048, 'N', 'N', 0.023},
    {"DeepSpeech", 2048, 32, 2048, 'N', 'N', 0.024},
    {"DeepSpeech", 2048, 64, 2048, 'N', 'N', 0.026},
    {"DeepSpeech", 2048, 128, 2048, 'N', 'N', 0.031},
    {"DeepSpeech", 2048, 7000, 2048, 'N', 'N', 0.599},
    {"DeepSpeech", 2560, 16, 2560, 'N', 'N', 0.028},
    {"DeepSpeech", 2560, 32, 2560, 'N', 'N', 0.029},
    {"DeepSpeech", 2560, 64, 2560, 'N', 'N', 0.032},
    {"DeepSpeech", 2560, 128, 2560, 'N', 'N', 0.036},
    {"DeepSpeech", 2560, 7000, 2560, 'N', 'N', 0.884},
    {"DeepSpeech", 4096, 16, 4096, 'N', 'N', 0.051},
    {"DeepSpeech", 4096, 32, 4096, 'N', 'N', 0.052},
    {"DeepSpeech", 4096, 64, 4096, 'N', 'N', 0.054},
    {"DeepSpeech", 4096, 128, 4096, 'N', 'N', 0.067},
    {"DeepSpeech", 4096, 7000, 4096, 'N', 'N', 2.092},
    {"DeepSpeech", 1760, 16, 1760, 'T', 'N', 0.019},
    {"DeepSpeech", 1760, 32, 1760, 'T', 'N', 0.019},
    {"DeepSpeech", 1760, 64, 1760, 'T', 'N', 0.022},
    {"DeepSpeech", 1760, 128, 1760, 'T', 'N', 0.029},
    {"DeepSpeech", 1760, 7000, 1760, 'T', 'N', 0.461},
    {"DeepSpeech", 2048, 16, 2048, 'T', 'N', 0.023},
    {"DeepSpeech", 2048, 32, 2048, 'T', 'N', 0.024},
    {"DeepSpeech", 2048, 64, 2048, 'T', 'N', 0.025},
    {"DeepSpeech", 2048, 128, 2048, 'T', 'N', 0.031},
    {"DeepSpeech", 2048, 7000, 2048, 'T', 'N', 0.593},
    {"DeepSpeech", 2560, 16, 2560, 'T', 'N', 0.042},
    {"DeepSpeech", 2560, 32, 2560, 'T', 'N', 0.043},
    {"DeepSpeech", 2560, 64, 2560, 'T', 'N', 0.045},
    {"DeepSpeech", 2560, 128, 2560, 'T', 'N', 0.049},
    {"DeepSpeech", 2560, 7000, 2560, 'T', 'N', 0.951},
    {"DeepSpeech", 4096, 16, 4096, 'T', 'N', 0.058},
    {"DeepSpeech", 4096, 32, 4096, 'T', 'N', 0.059},
    {"DeepSpeech", 4096, 64, 4096, 'T', 'N', 0.062},
    {"DeepSpeech", 4096, 128, 4096, 'T', 'N', 0.071},
    {"DeepSpeech", 4096, 7000, 4096, 'T', 'N', 2.147},
    {"DeepSpeech", 1760, 7133, 1760, 'N', 'T', 0.452},
    {"DeepSpeech", 2048, 7133, 2048, 'N', 'T', 0.575},
    {"DeepSpeech", 2560, 7133, 2560, 'N', 'T', 0.889},
    {"DeepSpeech", 4096, 7133, 4096, 'N', 'T', 2.199},
    {"DeepSpeech", 5124, 9124, 1760, 'N', 'N', 1.744},
    {"DeepSpeech", 35, 8457, 1760, 'N', 'N', 0.083},
    {"DeepSpeech", 5124, 9124, 2048, 'N', 'N', 1.993},
    {"DeepSpeech", 35, 8457, 2048, 'N', 'N', 0.064},
    {"DeepSpeech", 5124, 9124, 2560, 'N', 'N', 2.478},
    {"DeepSpeech", 35, 8457, 2560, 'N', 'N', 0.125},
    {"DeepSpeech", 5124, 9124, 4096, 'N', 'N', 3.702},
    {"DeepSpeech", 35, 8457, 4096, 'N', 'N', 0.121},
    {"DeepSpeech", 5124, 9124, 1760, 'T', 'N', 1.733},
    {"DeepSpeech", 35, 8457, 1760, 'T', 'N', 0.085},
    {"DeepSpeech", 5124, 9124, 2048, 'T', 'N', 1.955},
    {"DeepSpeech", 35, 8457, 2048, 'T', 'N', 0.059},
    {"DeepSpeech", 5124, 9124, 2560, 'T', 'N', 2.598},
    {"DeepSpeech", 35, 8457, 2560, 'T', 'N', 0.128},
    {"DeepSpeech", 5124, 9124, 4096, 'T', 'N', 3.678},
    {"DeepSpeech", 35, 8457, 4096, 'T', 'N', 0.109},
    {"DeepSpeech", 7680, 16, 2560, 'N', 'N', 0.056},
    {"DeepSpeech", 7680, 32, 2560, 'N', 'N', 0.057},
    {"DeepSpeech", 7680, 64, 2560, 'N', 'N', 0.061},
    {"DeepSpeech", 7680, 128, 2560, 'N', 'N', 0.074},
    {"DeepSpeech", 7680, 16, 2560, 'T', 'N', 0.104},
    {"DeepSpeech", 7680, 32, 2560, 'T', 'N', 0.107},
    {"DeepSpeech", 7680, 64, 2560, 'T', 'N', 0.116},
    {"DeepSpeech", 7680, 128, 2560, 'T', 'N', 0.13},
    {"DeepSpeech", 3072, 16, 1024, 'N', 'N', 0.015},
    {"DeepSpeech", 3072, 32, 1024, 'N', 'N', 0.016},
    {"DeepSpeech", 3072, 64, 1024, 'N', 'N', 0.018},
    {"DeepSpeech", 3072, 128, 1024, 'N', 'N', 0.024},
    {"DeepSpeech", 3072, 16, 1024, 'T', 'N', 0.016},
    {"DeepSpeech", 3072, 32, 1024, 'T', 'N', 0.017},
    {"DeepSpeech", 3072, 64, 1024, 'T', 'N', 0.019},
    {"DeepSpeech", 3072, 128, 1024, 'T', 'N', 0.024},
    {"DeepSpeech", 3072, 7435, 1024, 'N', 'T', 0.456},
    {"DeepSpeech", 7680, 5481, 2560, 'N', 'T', 1.984},
    {"Language Modelling", 512, 8, 500000, 'N', 'N', 0.658},
    {"Language Modelling", 1024, 8, 500000, 'N', 'N', 1.215},
    {"Language Modelling", 512, 16, 500000, 'N', 'N', 0.673},
    {"Language Modelling", 1024, 16, 500000, 'N', 'N', 1.229},
    {"Language Modelling", 512, 8, 500000, 'T', 'N', 1.483},
    {"Language Modelling", 1024, 8, 500000, 'T', 'N', 2.95},
    {"Language Modelling", 512, 16, 500000, 'T', 'N', 1.47},
    {"Language Modelling", 1024, 16, 500000, 'T', 'N', 3.035},
    {"Speaker ID", 1024, 700, 512, 'N', 'N', 0.018},
    {"Speaker ID", 1024, 700, 512, 'T', 'N', 0.019},
    {"DeepSpeech", 7680, 24000, 2560, 'N', 'N', 9.009},
    {"DeepSpeech", 6144, 24000, 2048, 'N', 'N', 5.687},
    {"DeepSpeech", 4608, 24000, 1536, 'N', 'N', 3.447},
    {"DeepSpeech", 8448, 24000, 2816, 'N', 'N', 10.696},
    {"DeepSpeech", 3072, 24000, 1024, 'N', 'N', 1.61},
    {"DeepSpeech", 7680, 48000, 2560, 'N', 'N', 17.904},
    {"DeepSpeech", 6144, 48000, 2048, 'N', 'N', 11.261},
    {"DeepSpeech", 4608, 48000, 1536, 'N', 'N', 6.811},
    {"DeepSpeech", 8448, 48000, 2816, 'N', 'N', 21.217},
    {"DeepSpeech", 3072, 48000, 1024, 'N', 'N', 3.168},
    {"DeepSpeech", 7680, 24000, 2560, 'T', 'N', 9.861},
    {"DeepSpeech", 6144, 24000, 2048, 'T', 'N', 5.764},
    {"DeepSpeech", 4608, 24000, 1536, 'T', 'N', 3.642},
    {"DeepSpeech", 8448, 24000, 2816, 'T', 'N', 11.162},
    {"DeepSpeech", 3072, 24000, 1024, 'T', 'N', 1.684},
    {"DeepSpeech", 7680, 48000, 2560, 'T', 'N', 19.639},
    {"DeepSpeech", 6144, 48000, 2048, 'T', 'N', 11.427},
    {"DeepSpeech", 4608, 48000, 1536, 'T', 'N', 7.199},
    {"DeepSpeech", 8448, 48000, 2816, 'T', 'N', 22.221},
    {"DeepSpeech", 3072, 48000, 1024, 'T', 'N', 3.325},
    {"DeepSpeech", 6144, 16, 2048, 'N', 'N', 0.043},
    {"DeepSpeech", 4608, 16, 1536, 'N', 'N', 0.026},
    {"DeepSpeech", 8448, 16, 2816, 'N', 'N', 0.065},
    {"DeepSpeech", 6144, 32, 2048, 'N', 'N', 0.041},
    {"DeepSpeech", 4608, 32, 1536, 'N', 'N', 0.027},
    {"DeepSpeech", 8448, 32, 2816, 'N', 'N', 0.065},
    {"DeepSpeech", 6144, 16, 2048, 'T', 'N', 0.043},
    {"DeepSpeech", 4608, 16, 1536, 'T', 'N', 0.037},
    {"DeepSpeech", 8448, 16, 2816, 'T', 'N', 0.096},
    {"DeepSpeech", 6144, 32, 2048, 'T', 'N', 0.044},
    {"DeepSpeech", 4608, 32, 1536, 'T', 'N', 0.039},
    {"DeepSpeech", 8448, 32, 2816, 'T', 'N', 0.1},
    {"DeepSpeech", 512, 24000, 2816, 'N', 'N', 0.679},
    {"DeepSpeech", 512, 24000, 2048, 'N', 'N', 0.5},
    {"DeepSpeech", 512, 24000, 2560, 'N', 'N', 0.645},
    {"DeepSpeech", 512, 24000, 1530, 'N', 'N', 0.402},
    {"DeepSpeech", 1024, 24000, 2816, 'N', 'N', 1.349},
    {"DeepSpeech", 1024, 24000, 2048, 'N', 'N', 0.986},
    {"DeepSpeech", 1024, 24000, 2560, 'N', 'N', 1.25},
    {"DeepSpeech", 1024, 24000, 1530, 'N', 'N', 0.782},
    {"DeepSpeech", 512, 16, 512, 'N', 'N', 0.008},
    {"DeepSpeech", 1024, 16, 512, 'N', 'N', 0.008},
    {"DeepSpeech", 512, 24000, 2816, 'T', 'N', 0.702},
    {"DeepSpeech", 512, 24000, 2048, 'T', 'N', 0.506},
    {"DeepSpeech", 512, 24000, 2560, 'T', 'N', 0.678},
    {"DeepSpeech", 512, 24000, 1530, 'T', 'N', 0.42},
    {"DeepSpeech", 1024, 24000, 2816, 'T', 'N', 1.392},
    {"DeepSpeech", 1024, 24000, 2048, 'T', 'N', 0.97},
    {"DeepSpeech", 1024, 24000, 2560, 'T', 'N', 1.323},
    {"DeepSpeech", 1024, 24000, 1530, 'T', 'N', 0.82},
    {"DeepSpeech", 512, 16, 512, 'N', 'T', 0.008},
    {"DeepSpeech", 1024, 16, 512, 'N', 'T', 0.008},
    {"DeepSpeech", 512, 48000, 2816, 'N', 'N', 1.362},
    {"DeepSpeech", 512, 48000, 2048, 'N', 'N', 0.988},
    {"DeepSpeech", 512, 48000, 2560, 'N', 'N', 1.279},
    {"DeepSpeech", 512, 48000, 1530, 'N', 'N', 0.794},
    {"DeepSpeech", 1024, 48000, 2816, 'N', 'N', 2.571},
    {"DeepSpeech", 1024, 48000, 2048, 'N', 'N', 1.881},
    {"DeepSpeech", 1024, 48000, 2560, 'N', 'N', 2.384},
    {"DeepSpeech", 1024, 48000, 1530, 'N', 'N', 1.496},
    {"DeepSpeech", 512, 32, 512, 'N', 'N', 0.008},
    {"DeepSpeech", 1024, 32, 512, 'N', 'N', 0.009},
    {"DeepSpeech", 512, 48000, 2816, 'T', 'N', 1.402},
    {"DeepSpeech", 512, 48000, 2048, 'T', 'N', 0.983},
    {"DeepSpeech", 512, 48000, 2560, 'T', 'N', 1.375},
    {"DeepSpeech", 512, 48000, 1530, 'T', 'N', 0.837},
    {"DeepSpeech", 1024, 48000, 2816, 'T', 'N', 2.66},
    {"DeepSpeech", 1024, 48000, 2048, 'T', 'N', 1.888},
    {"DeepSpeech", 1024, 48000, 2560, 'T', 'N', 2.545},
    {"DeepSpeech", 1024, 48000, 1530, 'T', 'N', 1.573},
    {"DeepSpeech", 512, 32, 512, 'N', 'T', 0.009},
    {"DeepSpeech", 1024, 32, 512, 'N', 'T', 0.009},
};
#define DB_ROWS (sizeof db_rows / sizeof db_rows[0])

/* The row the main-loop efficiency is fitted on: the largest GEMM (8448 x 48000 x 2816). */
#define DB_CALIBRATION_ROW 96

static double db_tflops(const db_row *r) { return 2 * r->m * r->n * r->k / (r->ms * 1e-3) / 1e12; }

/* A preset's GPU description (its cuBLAS tiles), the library's main loop at eff, and the
 * library alone (software 1: a GEMM benchmark has no training framework around it). */
static gemm_device device_of(const char *preset, double eff)
{
  platform_spec spec;
  xbt_assert(platform_preset(preset, 1, &spec) == 0 && spec.gpu_sms > 0, "%s: no GPU description", preset);
  gemm_device d = {.peak = spec.speed, .sms = spec.gpu_sms, .mem_bw = spec.mem_bw, .l2_bw = spec.gpu_l2_bw,
                   .launch_s = spec.gpu_launch, .efficiency = eff, .software = 1};
  gemm_device_default_tiles(&d);
  return d;
}

static double preset_eff(const char *preset)
{
  platform_spec spec;
  xbt_assert(platform_preset(preset, 1, &spec) == 0, "%s: no preset", preset);
  return spec.gpu_gemm_eff;
}

static double model_tflops(const gemm_device *d, const db_row *r, gemm_plan *p)
{
  return 2 * r->m * r->n * r->k / gemm_time(d, r->m, r->n, r->k, 1, 2, p) / 1e12;
}

double reproduce_gemm_v100_efficiency(void)
{
  const db_row *r = &db_rows[DB_CALIBRATION_ROW];
  double lo = 0.05, hi = 1;
  for (int i = 0; i < 60; i++) {
    double mid = (lo + hi) / 2;
    gemm_device d = device_of("dgx2h", mid);
    if (model_tflops(&d, r, NULL) < db_tflops(r))
      lo = mid;
    else
      hi = mid;
  }
  return (lo + hi) / 2;
}

/* The guide's examples on the A100, one 256 x 128 tile as the guide fixes it. */
typedef struct guide_point {
  const char *example;
  double m, n, k;
  gemm_plan plan;
  double tflops;
} guide_point;

#define GUIDE_MAX 64

static size_t guide_points(double eff, guide_point *g)
{
  gemm_device d = device_of("selene", eff);
  d.n_tiles = 1;
  d.tiles[0] = (gemm_tile){256, 128};
  d.max_split = 1; /* the guide's one kernel: no split-K */
  size_t n = 0;
  for (double nn = 120; nn <= 264; nn += 8)
    g[n++] = (guide_point){.example = "tile", .m = 27648, .n = nn, .k = 4096};
  static const double wave_n[] = {1408, 1528, 1536, 1544, 1664, 3064, 3072, 3080, 4600, 4608, 4616, 6136, 6144, 6152};
  for (size_t i = 0; i < sizeof wave_n / sizeof *wave_n; i++)
    g[n++] = (guide_point){.example = "wave", .m = 2304, .n = wave_n[i], .k = 4096};
  xbt_assert(n <= GUIDE_MAX, "too many guide points");
  for (size_t i = 0; i < n; i++)
    g[i].tflops = 2 * g[i].m * g[i].n * g[i].k / gemm_time(&d, g[i].m, g[i].n, g[i].k, 1, 2, &g[i].plan) / 1e12;
  return n;
}

static const guide_point *guide_at(const guide_point *g, size_t n, const char *example, double nn)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp(g[i].example, example) == 0 && g[i].n == nn)
      return &g[i];
  return NULL;
}

static char *gemm_csv(const gemm_device *d)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fputs("kernel,m,n,k,a_t,b_t,measured_ms,measured_tflops,model_tflops,error,tile,split,waves,bound,role\n", f);
  for (size_t i = 0; i < DB_ROWS; i++) {
    const db_row *r = &db_rows[i];
    gemm_plan p;
    double got = model_tflops(d, r, &p), want = db_tflops(r);
    fprintf(f, "%s,%.0f,%.0f,%.0f,%c,%c,%.17g,%.17g,%.17g,%.17g,%ux%u,%zu,%.0f,%s,%s\n", r->kernel, r->m, r->n, r->k,
            r->ta, r->tb, r->ms, want, got, got / want - 1, p.tile.m, p.tile.n, p.split, p.waves,
            p.memory_bound ? "memory" : "compute", i == DB_CALIBRATION_ROW ? "calibration" : "prediction");
  }
  fclose(f);
  return text;
}

static char *guide_csv(const guide_point *g, size_t n)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fputs("example,m,n,k,tile,blocks,waves,time_us,tflops\n", f);
  for (size_t i = 0; i < n; i++)
    fprintf(f, "%s,%.0f,%.0f,%.0f,%ux%u,%.0f,%.0f,%.17g,%.17g\n", g[i].example, g[i].m, g[i].n, g[i].k,
            g[i].plan.tile.m, g[i].plan.tile.n, g[i].plan.blocks, g[i].plan.waves, g[i].plan.time_s * 1e6,
            g[i].tflops);
  fclose(f);
  return text;
}

/* Error statistics of the predicted rows that `keep` selects. */
typedef struct stats {
  int n;
  double median, mean, worst;
} stats;

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static stats stats_of(const gemm_device *d, int (*keep)(const db_row *))
{
  double e[DB_ROWS];
  stats s = {0, 0, 0, 0};
  for (size_t i = 0; i < DB_ROWS; i++) {
    if (i == DB_CALIBRATION_ROW || !keep(&db_rows[i]))
      continue;
    e[s.n] = fabs(model_tflops(d, &db_rows[i], NULL) / db_tflops(&db_rows[i]) - 1);
    s.mean += e[s.n];
    s.worst = fmax(s.worst, e[s.n]);
    s.n++;
  }
  if (s.n == 0)
    return s;
  qsort(e, (size_t)s.n, sizeof *e, cmp_double);
  s.mean /= s.n;
  s.median = s.n % 2 ? e[s.n / 2] : (e[s.n / 2 - 1] + e[s.n / 2]) / 2;
  return s;
}

static int all_rows(const db_row *r) { return r != NULL; }
static int nn_rows(const db_row *r) { return r->ta == 'N' && r->tb == 'N'; }
static int transposed(const db_row *r) { return r->ta == 'T' || r->tb == 'T'; }
static int big_nn(const db_row *r) { return nn_rows(r) && r->n >= 512 && r->m >= 512 && r->k >= 512; }
static int skinny_nn(const db_row *r) { return nn_rows(r) && (r->n <= 128 || r->m <= 128) && r->k < 100000; }
static int long_k(const db_row *r) { return nn_rows(r) && r->k >= 100000; }

static void stats_line(FILE *f, const char *what, stats s)
{
  fprintf(f, "| %s | %d | %.1f%% | %.1f%% | %.1f%% |\n", what, s.n, 100 * s.median, 100 * s.mean, 100 * s.worst);
}

/* DeepBench's rows against the model, as the README's table. */
static void db_table(FILE *f, const gemm_device *d)
{
  fputs("| kernel | M | N | K | layout | measured Tflop/s | model Tflop/s | error | tile | split | waves | bound |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        f);
  for (size_t i = 0; i < DB_ROWS; i++) {
    const db_row *r = &db_rows[i];
    gemm_plan p;
    double got = model_tflops(d, r, &p), want = db_tflops(r);
    fprintf(f, "| %s | %.0f | %.0f | %.0f | %c%c | %.1f | %.1f | %+.1f%%%s | %ux%u | %zu | %.0f | %s |\n", r->kernel,
            r->m, r->n, r->k, r->ta, r->tb, want, got, 100 * (got / want - 1),
            i == DB_CALIBRATION_ROW ? " (calibration)" : "", p.tile.m, p.tile.n, p.split, p.waves,
            p.memory_bound ? "memory" : "compute");
  }
}

/* The guide's two claims, computed from its points, into v. */
static void guide_claims(json_t *v, const guide_point *g, size_t ng)
{
  const guide_point *t128 = guide_at(g, ng, "tile", 128), *t136 = guide_at(g, ng, "tile", 136),
                    *t256 = guide_at(g, ng, "tile", 256), *t264 = guide_at(g, ng, "tile", 264);
  int flat = 1;
  for (size_t i = 0; i < ng; i++)
    if (strcmp(g[i].example, "tile") == 0 && g[i].n >= 136 && g[i].n <= 256)
      flat &= g[i].plan.time_s == t136->plan.time_s;
  int peaks = 1;
  for (double k = 1; k <= 4; k++) {
    const guide_point *at = guide_at(g, ng, "wave", 1536 * k), *past = guide_at(g, ng, "wave", 1536 * k + 8),
                      *before = guide_at(g, ng, "wave", 1536 * k - 8);
    peaks &= at && past && before && at->tflops > past->tflops && at->tflops > before->tflops &&
             at->plan.waves == k && past->plan.waves == k + 1;
  }
  template_set(v, "t128", "%.1f", t128->tflops);
  template_set(v, "t136", "%.1f", t136->tflops);
  template_set(v, "t256", "%.1f", t256->tflops);
  template_set(v, "t264", "%.1f", t264->tflops);
  template_set(v, "t136_us", "%.1f", t136->plan.time_s * 1e6);
  json_object_set_new(v, "flat", json_boolean(flat));
  json_object_set_new(v, "peaks", json_boolean(peaks));
}

/* templates/gemm.md's values: the fit, the tables and the guide's claims. */
static void gemm_values(json_t *v, const gemm_device *d, const guide_point *g, size_t ng)
{
  char *text = NULL;
  size_t tl = 0;
  const db_row *cal = &db_rows[DB_CALIBRATION_ROW];
  template_set(v, "db_rows", "%zu", (size_t)DB_ROWS);
  template_set(v, "cal_m", "%.0f", cal->m);
  template_set(v, "cal_n", "%.0f", cal->n);
  template_set(v, "cal_k", "%.0f", cal->k);
  template_set(v, "cal_tflops", "%.1f", db_tflops(cal));
  template_set(v, "eff", "%.4f", d->efficiency);
  template_set(v, "preset_eff", "%.4f", preset_eff("dgx2h"));
  json_object_set_new(v, "fit", json_boolean(fabs(preset_eff("dgx2h") - d->efficiency) < 5e-5));
  FILE *f = open_memstream(&text, &tl);
  xbt_assert(f, "open_memstream failed");
  fputs("| rows (predictions) | n | median error | mean error | worst |\n|---|---|---|---|---|\n", f);
  stats_line(f, "all", stats_of(d, all_rows));
  stats_line(f, "A and B as stored (NN)", stats_of(d, nn_rows));
  stats_line(f, "NN, M, N and K >= 512 (compute-bound)", stats_of(d, big_nn));
  stats_line(f, "NN, M or N <= 128, K < 100,000 (skinny)", stats_of(d, skinny_nn));
  stats_line(f, "NN, K = 500,000 (a language model's output layer)", stats_of(d, long_k));
  stats_line(f, "A or B transposed", stats_of(d, transposed));
  template_set_stream(v, "stats_table", f, &text);
  f = open_memstream(&text, &tl);
  xbt_assert(f, "open_memstream failed");
  db_table(f, d);
  template_set_stream(v, "db_table", f, &text);
  guide_claims(v, g, ng);
  f = open_memstream(&text, &tl);
  xbt_assert(f, "open_memstream failed");
  fputs("| example | M | N | K | blocks | waves | time (us) | Tflop/s |\n|---|---|---|---|---|---|---|---|\n", f);
  for (size_t i = 0; i < ng; i++)
    fprintf(f, "| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.1f | %.1f |\n", g[i].example, g[i].m, g[i].n, g[i].k,
            g[i].plan.blocks, g[i].plan.waves, g[i].plan.time_s * 1e6, g[i].tflops);
  template_set_stream(v, "guide_table", f, &text);
}

/* The device every table is computed on: dgx2h's V100 at the fitted efficiency. */
static gemm_device gemm_v100(void)
{
  return device_of("dgx2h", reproduce_gemm_v100_efficiency());
}

/* gemm.gp's datablocks: measured and modelled Tflop/s of the NN rows and the transposed ones. */
static void gemm_plot(json_t *v, const char *plot, const reproduce_data *rd)
{
  (void)plot, (void)rd;
  gemm_device d = gemm_v100();
  char *text;
  size_t tl;
  FILE *f = reproduce_frame_stream(&text, &tl);
  fputs("$nn << EOD\n", f);
  for (size_t i = 0; i < DB_ROWS; i++)
    if (nn_rows(&db_rows[i]))
      fprintf(f, "%.6f %.6f\n", db_tflops(&db_rows[i]), model_tflops(&d, &db_rows[i], NULL));
  fputs("EOD\n$tr << EOD\n", f);
  for (size_t i = 0; i < DB_ROWS; i++)
    if (transposed(&db_rows[i]))
      fprintf(f, "%.6f %.6f\n", db_tflops(&db_rows[i]), model_tflops(&d, &db_rows[i], NULL));
  fputs("EOD\n", f);
  template_set_stream(v, "blocks", f, &text);
}

static char *gemm_table(const reproduce_data *rd)
{
  (void)rd;
  gemm_device d = gemm_v100();
  return gemm_csv(&d);
}

static char *guide_table(const reproduce_data *rd)
{
  (void)rd;
  guide_point g[GUIDE_MAX];
  size_t ng = guide_points(preset_eff("selene"), g);
  return guide_csv(g, ng);
}

static int gemm_readme(json_t *v, const reproduce_data *rd, char *err, size_t len)
{
  (void)rd, (void)err, (void)len;
  gemm_device d = gemm_v100();
  guide_point g[GUIDE_MAX];
  size_t ng = guide_points(preset_eff("selene"), g);
  gemm_values(v, &d, g, ng);
  return 0;
}

/* No simulation: the tables come from the kernel model alone, the same with --quick (key 0:
 * --check compares them whole). */
const reproduction reproduce_gemm = {
    .name = "gemm",
    .tables = {{"gemm.csv", 0, gemm_table}, {"guide.csv", 0, guide_table}},
    .readme = gemm_readme,
    .plots = {"gemm"},
    .plot = gemm_plot,
};

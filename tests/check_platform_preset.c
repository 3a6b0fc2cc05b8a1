/* check_platform_preset.c - Check suite for sim/platform_preset's GPUs of today (dgx-h100,
 * dgx-b200, gb200-nvl72): the kernel model (models/gemm.h) on each preset's GPU description
 * against the public benchmarks platforms/README.md cites, a GEMM by datatype and the HBM; the
 * datatype peaks and power figures the presets write. */

#include <check.h>
#include <math.h>
#include <stddef.h>

#include "models/gemm.h"
#include "sim/platform.h"

#include "check_util.h"

/* TOL_BENCH: issue 50's target, each preset's single-GPU GEMM and HBM figures within 10% of
 * the public benchmark it cites. */
#define TOL_BENCH 0.10
/* TOL_EXACT: figures the presets write as given (a datasheet's, a product of two). */
#define TOL_EXACT 1e-12
/* TOL_5_DIGITS: a figure worked out by hand to 5 digits. */
#define TOL_5_DIGITS 1e-5

/* The preset's GPU as the kernel model sees it at a datatype (as algorithms/compute.c builds
 * it from the host properties the preset writes): its gpu_peaks entry's peak and, when the
 * entry gives one, efficiency; the library's kernels alone (software 1). */
static gemm_device preset_gpu(const char *preset, const char *dtype)
{
  platform_spec spec;
  ck_assert_int_eq(platform_preset(preset, 0, &spec), 0);
  double peak, eff;
  ck_assert_int_eq(gemm_peaks_find(spec.gpu_peaks, dtype, &peak, &eff), 1);
  gemm_device d = {.peak = peak, .sms = spec.gpu_sms, .mem_bw = spec.mem_bw, .l2_bw = spec.gpu_l2_bw,
                   .launch_s = spec.gpu_launch, .efficiency = eff > 0 ? eff : spec.gpu_gemm_eff};
  gemm_device_default_tiles(&d);
  ck_assert_int_eq(gemm_device_check(&d), 0);
  return d;
}

/* One measured GEMM: m x n x k in a datatype, its Tflop/s. */
typedef struct bench_gemm {
  const char *preset, *dtype;
  double m, n, k, tflops;
} bench_gemm;

/* Stas Bekman's "Maximum Achievable Matmul FLOPS" table (github.com/stas00/ml-engineering,
 * compute/accelerator/README.md): torch.matmul's best shape, mean of 100 iterations. The BF16
 * rows and H100's FP8 row calibrate gpu_gemm_eff and H100's fp8 efficiency (sim/platform_preset.c);
 * the Blackwell FP8 rows are predictions. Then Azure's cuBLASLt FP8 GEMMs on ND H100 v5
 * (github.com/Azure/AI-benchmarking-guide, Azure_Results/ND_H100_v5_results.md), predictions. */
static const bench_gemm benches[] = {
    {"dgx-h100", "bf16", 2048, 2048, 13312, 794.5},     {"dgx-h100", "fp8", 1024, 9216, 14336, 1402.6},
    {"dgx-b200", "bf16", 1792, 16128, 3072, 1745.0},    {"dgx-b200", "fp8", 15360, 4096, 3072, 3432.5},
    {"gb200-nvl72", "bf16", 4096, 9728, 2048, 1822.0},  {"gb200-nvl72", "fp8", 19456, 5120, 1536, 3615.6},
    {"dgx-h100", "fp8", 16384, 16384, 16384, 1377.3},   {"dgx-h100", "fp8", 32768, 32768, 32768, 1382.2},
};

START_TEST(test_platform_preset_gemm_bench)
{
  for (size_t i = 0; i < sizeof benches / sizeof *benches; i++) {
    const bench_gemm *b = &benches[i];
    gemm_device d = preset_gpu(b->preset, b->dtype);
    size_t bytes = b->dtype[2] == '8' ? 1 : 2;
    double model = 2 * b->m * b->n * b->k / gemm_time(&d, b->m, b->n, b->k, 1, bytes, NULL) / 1e12;
    ck_assert_msg(fabs(model / b->tflops - 1) <= TOL_BENCH, "%s %s %g x %g x %g: model %.1f Tflop/s, measured %.1f",
                  b->preset, b->dtype, b->m, b->n, b->k, model, b->tflops);
  }
}
END_TEST

/* Azure's BabelStream triad on ND H100 v5 (same file): 2.97 TB/s, a[i] = b[i] + s c[i] over
 * BabelStream's default arrays of 2^25 doubles, three arrays moved: the model's memory-bound
 * kernel moving those bytes, its launch included. */
START_TEST(test_platform_preset_hbm_bench)
{
  gemm_device d = preset_gpu("dgx-h100", "bf16");
  double bytes = 3.0 * 33554432 * 8, model = bytes / gemm_mem_time(&d, bytes, 1);
  ck_assert_msg(fabs(model / 2.97e12 - 1) <= TOL_BENCH, "H100 triad: model %.4g B/s, measured 2.97e12", model);
}
END_TEST

/* The figures the presets write: the datasheets' dense peaks (half of NVIDIA's with-sparsity
 * figures), the speed at bf16's, fp8 where the GPU has it and no fp4; power states from the GPU's
 * limit down by PLATFORM_POWER_STEP_W to its lowest, the first at full speed and each slower. */
START_TEST(test_platform_preset_figures)
{
  static const struct { const char *name; double bf16, fp8, max_w, min_w; size_t states; } want[] = {
      {"dgx-h100", 989.5e12, 1979e12, 700, 200, 6},
      {"dgx-b200", 2.25e15, 4.5e15, 1000, 300, 8},
      {"gb200-nvl72", 2.5e15, 5e15, 1200, 400, 9},
  };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    platform_spec spec;
    double peak, eff, limit[PLATFORM_MAX_PSTATES], share[PLATFORM_MAX_PSTATES];
    ck_assert_int_eq(platform_preset(want[i].name, 0, &spec), 0);
    ck_assert_double_eq_tol(spec.speed, want[i].bf16, TOL_EXACT * want[i].bf16);
    ck_assert_int_eq(gemm_peaks_find(spec.gpu_peaks, "bf16", &peak, &eff), 1);
    ck_assert_double_eq(peak, spec.speed);
    ck_assert_int_eq(gemm_peaks_find(spec.gpu_peaks, "fp8", &peak, &eff), 1);
    ck_assert_double_eq_tol(peak, want[i].fp8, TOL_EXACT * want[i].fp8);
    ck_assert_int_eq(gemm_peaks_find(spec.gpu_peaks, "fp4", &peak, &eff), 0);
    ck_assert_uint_eq(platform_power_states(&spec, limit, share), want[i].states);
    ck_assert_double_eq(limit[0], want[i].max_w);
    ck_assert_double_eq(limit[want[i].states - 1], want[i].min_w);
    ck_assert_double_eq(share[0], 1);
    for (size_t k = 1; k < want[i].states; k++)
      ck_assert_double_lt(share[k], share[k - 1]);
  }
  platform_spec sel;
  double limit[PLATFORM_MAX_PSTATES], share[PLATFORM_MAX_PSTATES];
  ck_assert_int_eq(platform_preset("selene", 0, &sel), 0);
  ck_assert_uint_eq(platform_power_states(&sel, limit, share), 0); /* no power figures: no energy */
  ck_assert_ptr_null(sel.gpu_peaks);
}
END_TEST

/* The power-state law by hand: H100, idle 70 W, limit 700 W; at 500 W the clock's cube is
 * (500 - 70) / (700 - 70) = 0.68254, the speed share its cube root 0.88046. */
START_TEST(test_platform_preset_power_law)
{
  platform_spec spec;
  double limit[PLATFORM_MAX_PSTATES], share[PLATFORM_MAX_PSTATES];
  ck_assert_int_eq(platform_preset("dgx-h100", 0, &spec), 0);
  ck_assert_uint_eq(platform_power_states(&spec, limit, share), 6);
  ck_assert_double_eq(limit[2], 500);
  ck_assert_double_eq_tol(share[2], cbrt(430.0 / 630.0), TOL_EXACT);
  ck_assert_double_eq_tol(share[2], 0.88046, TOL_5_DIGITS);
}
END_TEST

/* gemm_peaks_find's list: entries found by name, an entry's own efficiency, malformed lists. */
START_TEST(test_platform_preset_peaks_list)
{
  double peak = 0, eff = 0;
  ck_assert_int_eq(gemm_peaks_find("bf16:1e15,fp8:2e15:0.5", "fp8", &peak, &eff), 1);
  ck_assert_double_eq(peak, 2e15);
  ck_assert_double_eq(eff, 0.5);
  ck_assert_int_eq(gemm_peaks_find("bf16:1e15,fp8:2e15:0.5", "bf16", &peak, &eff), 1);
  ck_assert_double_eq(eff, 0);
  ck_assert_int_eq(gemm_peaks_find("bf16:1e15", "fp8", &peak, &eff), 0);
  static const char *const bad[] = {"", "bf16", "bf16:", "bf16:0", "bf16:-1", "bf16:1e15:1.5", "bf16:1e15,",
                                    ":1e15", "bf16:1e15,bf16:2e15", "bf16:1e15x"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    ck_assert_msg(gemm_peaks_find(bad[i], "bf16", &peak, &eff) == -1, "accepted '%s'", bad[i]);
}
END_TEST

static Suite *platform_preset_suite(void)
{
  Suite *s = suite_create("platform_preset");
  ADD_TCASE(s, "benchmarks", test_platform_preset_gemm_bench, test_platform_preset_hbm_bench);
  ADD_TCASE(s, "figures", test_platform_preset_figures, test_platform_preset_power_law,
            test_platform_preset_peaks_list);
  return s;
}

CHECK_MAIN(platform_preset_suite)

/* sim_tensor.c - algorithms/tensor (run.algorithm = tensor) through the CLI (one
 * simulation per process): numerics through the collectives equal the serial
 * layer stack (plain and sequence-parallel), the exact bytes on the wire, the simulated
 * time against its closed form, the asynchronous input-gradient allreduce, Megatron's
 * 1.2B single-GPU baseline, data parallelism across tensor groups (bytes and step time),
 * the memory-bound kernels' time (tensor.kernels), data parallelism's bucketed allreduce
 * overlapped with backward (tensor.dp_overlap: buckets, bytes, time against the closed
 * form) and the HBM the buckets take beside it (tensor.comm_hbm), determinism, and bad input. The
 * bucket split itself (tensor_dp_buckets) is tested
 * in process in check_tensor.c. */

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/gemm.h"
#include "models/transformer.h"
#include "sim/platform.h"

#include "check_util.h"
#include "cli_util.h"

/* collectives.h's MSG_HEADER_BYTES: every message carries 64 bytes of header. */
#define HEADER 64.0

/* Tolerances, each with where it comes from (measured: this build, every case). */
/* TOL_NUMERIC_REL: the ranks' layers against the serial stack, max-norm relative: another
 * association of the same sums, as check_transformer.c's PART_RTOL (measured <= 1.2e-15). */
#define TOL_NUMERIC_REL 1e-12
/* TOL_EXACT_REL: flops, Tflop/s, fractions and step times that both sides compute from the
 * same integer products with a division or two: a few u (measured: equal, 0). */
#define TOL_EXACT_REL 1e-12
/* TOL_FLOPS_REL: model flops summed over d groups against the closed form: integer sums,
 * exact below 2^53 (measured: equal). */
#define TOL_FLOPS_REL 1e-9
/* TOL_TFLOPS: Tflop/s of the calibrated baseline against Megatron-LM's 39: a few u of 39
 * (measured: equal). */
#define TOL_TFLOPS 1e-9
/* TOL_TIME_REL: simulated step times against their closed forms: SimGrid sums the same
 * terms as event durations in another order, ~events x u (measured <= 8e-15). */
#define TOL_TIME_REL 1e-9

/* A tensor run on dgx2h. The closed forms below are the flat model's (flops at efficiency x
 * peak, links at their nominal 150e9 B/s, collectives holding no SMs): run_tensor asks for
 * it, run_tensor_shapes for the kernel model, the links at NCCL's share and NCCL's 16 of 80
 * SMs held while a collective runs (the defaults); a later --set wins. */
static json_t *run_tensor_with(const char *dir, const char *out, const char *const *sets, int shapes)
{
  const char *args[56] = {"run", "--quiet", "--out", out, "--set", "run.algorithm=tensor", "--set",
                          "platform.preset=dgx2h", "--set", "platform.hosts=16"};
  size_t n = 10;
  if (!shapes) {
    args[n++] = "--set";
    args[n++] = "model.kernel_model=flat";
    args[n++] = "--set";
    args[n++] = "platform.link_efficiency=off";
    args[n++] = "--set";
    args[n++] = "platform.comm_sms=off";
  }
  for (size_t i = 0; sets[i]; i++) {
    args[n++] = "--set";
    args[n++] = sets[i];
  }
  args[n] = NULL;
  return cli_summary(dir, args, out);
}

static json_t *run_tensor(const char *dir, const char *out, const char *const *sets)
{
  return run_tensor_with(dir, out, sets, 0);
}

static double tnum(json_t *j, const char *key)
{
  return json_number_value(json_object_get(json_object_get(j, "tensor"), key));
}

static double check_error(json_t *j)
{
  json_t *ck = json_object_get(json_object_get(j, "tensor"), "check");
  ck_assert(json_is_true(json_object_get(ck, "numeric")));
  return json_number_value(json_object_get(ck, "max_rel_error"));
}

/* t = 1, 2, 4 ranks (loop index), 3 layers of h = 32, 4 heads, 2 microbatches of 2 x 8:
 * the last microbatch's output and input gradient and every layer's gradient summed over
 * the microbatches equal the serial stack within TOL_NUMERIC_REL (as check_transformer, max-norm). */
static void numerics_case(int i, const char *seqpar)
{
  static const char *ranks[] = {"tensor.ranks=1", "tensor.ranks=2", "tensor.ranks=4"};
  char *dir = cli_tmpdir();
  const char *sets[] = {ranks[i], seqpar, "tensor.hidden=32", "tensor.heads=4", "tensor.layers=3", "tensor.seq=8",
                        "tensor.microbatch=2", "tensor.microbatches=2", "tensor.steps=2", NULL};
  json_t *j = run_tensor(dir, "out", sets);
  double e = check_error(j);
  ck_assert_msg(e <= TOL_NUMERIC_REL, "%s, %s: max relative error %g", ranks[i], seqpar, e);
  ck_assert_int_eq(json_integer_value(json_object_get(j, "steps")), 2);
  json_decref(j);
  free(dir);
}

START_TEST(test_tensor_numerics)
{
  numerics_case(_i, "tensor.sequence_parallel=off");
}
END_TEST

START_TEST(test_tensor_numerics_seqpar)
{
  numerics_case(_i, "tensor.sequence_parallel=on");
}
END_TEST

/* PTD-P sec. 3.2: 8bsh(t-1)/t elements per layer per device per microbatch. Our ring
 * allreduce of n elements on t ranks: each rank sends t-1 reduce-scatter and t-1
 * allgather messages, one block each (coll_block: the blocks add up to n), 64 header
 * bytes per message; summed over ranks, 2(t-1)(n eb + 64t) bytes. Four of them per layer
 * and microbatch (n = bsh), and with sequence parallelism 4 allgathers and 4
 * reduce-scatters of (t-1)(n eb + 64t) each: the same total. */
static double expected_bytes(double t, double b, double s, double h, double eb, double layers, double mb)
{
  return layers * mb * 4 * 2 * (t - 1) * (b * s * h * eb + HEADER * t);
}

START_TEST(test_tensor_bytes)
{
  static const char *sp[] = {"tensor.sequence_parallel=off", "tensor.sequence_parallel=on"};
  char *dir = cli_tmpdir();
  const char *sets[] = {sp[_i],          "tensor.ranks=4",       "tensor.hidden=96",   "tensor.heads=8",
                        "tensor.layers=5", "tensor.seq=12",        "tensor.microbatch=3", "tensor.microbatches=2",
                        "model.dtype=fp16", "model.numerics=off", NULL};
  json_t *j = run_tensor(dir, "out", sets);
  double got = json_number_value(json_object_get(json_object_get(j, "comm"), "bytes_total"));
  double want = expected_bytes(4, 3, 12, 96, 2, 5, 2);
  /* per device: 8bsh(t-1)/t x 2 bytes + 8(t-1) headers of 64, per layer and microbatch */
  ck_assert_double_eq(want / 4 / 5 / 2, 8.0 * 3 * 12 * 96 * 3 / 4 * 2 + 8 * 3 * HEADER);
  ck_assert_msg(got == want, "%s: bytes_total %.17g, want %.17g", sp[_i], got, want);
  json_decref(j);
  free(dir);
}
END_TEST

START_TEST(test_tensor_bytes_one_rank)
{
  char *dir = cli_tmpdir();
  const char *sets[] = {"tensor.ranks=1", "model.numerics=off", NULL};
  json_t *j = run_tensor(dir, "out", sets);
  ck_assert_double_eq(json_number_value(json_object_get(json_object_get(j, "comm"), "bytes_total")), 0);
  json_decref(j);
  free(dir);
}
END_TEST

/* Data parallelism across tensor groups: t = 4, d = 8 on two dgx2h nodes (replicas 0-3 in
 * node 0, 4-7 in node 1). Each of the d tensor groups sends the bytes above; each of the t
 * data-parallel groups runs one ring allreduce on d ranks of a rank's share of every
 * layer, n = L((12h^2 + 7h)/t + 6h) elements: 2(d-1)(n eb + 64d) bytes. The step is longer
 * than d = 1's (same hosts) by more than 0 and at most the longest data-parallel
 * allreduce: it runs after backward, and the tensor groups' own traffic stays in a node. */
START_TEST(test_tensor_data_parallel)
{
  char *dir = cli_tmpdir();
  const char *sets[] = {"platform.hosts=32",   "tensor.ranks=4",        "tensor.hidden=96",      "tensor.heads=8",
                        "tensor.layers=5",     "tensor.seq=12",         "tensor.microbatch=3",   "tensor.microbatches=2",
                        "model.dtype=fp16",    "model.numerics=off",    "tensor.data_parallel=8", NULL};
  json_t *j = run_tensor(dir, "dp", sets);
  double t = 4, d = 8, h = 96, L = 5, eb = 2, n = L * ((12 * h * h + 7 * h) / t + 6 * h);
  ck_assert_double_eq(n, 141960);
  ck_assert_double_eq(tnum(j, "dp_allreduce_elements"), n);
  double got = json_number_value(json_object_get(json_object_get(j, "comm"), "bytes_total"));
  double want = d * expected_bytes(t, 3, 12, h, eb, L, 2) + t * 2 * (d - 1) * (n * eb + HEADER * d);
  ck_assert_msg(got == want, "bytes_total %.17g, want %.17g", got, want);
  double f = 24 * 3 * 12 * h * h + 4 * 3 * 12 * 12 * h;
  ck_assert_double_eq_tol(tnum(j, "model_flops"), d * 3 * L * 2 * f, TOL_FLOPS_REL * d * 3 * L * 2 * f);
  ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "tensor"), "gpus")), 32);
  double step_dp = tnum(j, "step_time_s"), ar = tnum(j, "dp_allreduce_s");
  json_decref(j);
  sets[10] = "tensor.data_parallel=1";
  j = run_tensor(dir, "one", sets);
  double step_one = tnum(j, "step_time_s");
  ck_assert_double_eq(tnum(j, "dp_allreduce_s"), 0);
  json_decref(j);
  ck_assert_msg(ar > 0 && step_dp > step_one && step_dp - step_one <= ar * (1 + TOL_EXACT_REL),
                "d = 8: step %.17g s, d = 1: %.17g s, data-parallel allreduce %.17g s", step_dp, step_one, ar);
  free(dir);
}
END_TEST

/* Megatron-LM's baseline: the 1.2B model (h 1536, 16 heads, 40 layers, s 1024, b 8) on
 * one V100 of dgx2h (125e12 flop/s) at efficiency 0.312 sustains 0.312 x 125 = 39 Tflop/s
 * (Megatron-LM sec. 5.1: 39 Tflop/s, 30% of peak), and one step takes
 * 3 x 40 x (24bsh^2 + 4bs^2h) / 39e12 s. */
START_TEST(test_tensor_megatron_baseline)
{
  char *dir = cli_tmpdir();
  const char *sets[] = {"tensor.ranks=1",     "tensor.hidden=1536",   "tensor.heads=16",   "tensor.layers=40",
                        "tensor.seq=1024",    "tensor.microbatch=8",  "model.numerics=off", "model.dtype=fp16",
                        "model.efficiency=0.312", NULL};
  json_t *j = run_tensor(dir, "out", sets);
  double b = 8, s = 1024, h = 1536, f = 24 * b * s * h * h + 4 * b * s * s * h;
  ck_assert_double_eq(tnum(j, "layer_flops_forward"), f);
  ck_assert_double_eq_tol(tnum(j, "step_time_s"), 3 * 40 * f / 39e12, TOL_EXACT_REL * 3 * 40 * f / 39e12);
  ck_assert_double_eq_tol(tnum(j, "tflops_per_gpu"), 39, TOL_TFLOPS);
  ck_assert_double_eq_tol(tnum(j, "fraction_of_peak"), 0.312, TOL_EXACT_REL);
  json_decref(j);
  free(dir);
}
END_TEST

/* Without the asynchronous allreduce nothing overlaps: step time = compute + 4 L ring
 * allreduces, each 2(t-1) steps of alpha + (block bytes + 64) / bw inside one DGX-2H node
 * (alpha = 2 x 0.5 us, bw = 150e9 B/s). With it, the step is shorter (the input-gradient
 * allreduces hide behind the weight-gradient GEMMs), but never below the compute alone. */
START_TEST(test_tensor_time_and_overlap)
{
  char *dir = cli_tmpdir();
  const char *common[] = {"tensor.ranks=2", "tensor.hidden=1024", "tensor.heads=8",  "tensor.layers=4",
                          "tensor.seq=512", "tensor.microbatch=4", "model.numerics=off", "model.dtype=fp16",
                          "model.efficiency=0.5"};
  const char *sets[12];
  for (size_t i = 0; i < 9; i++)
    sets[i] = common[i];
  sets[9] = "tensor.async_grad_allreduce=off";
  sets[10] = NULL;
  json_t *j = run_tensor(dir, "sync", sets);
  double t = 2, b = 4, s = 512, h = 1024, L = 4, f = 24 * b * s * h * h + 4 * b * s * s * h;
  double compute = 3 * L * f / t / (0.5 * 125e12);
  double allreduce = 2 * (t - 1) * (1e-6 + (b * s * h * 2 / t + HEADER) / 150e9);
  double want = compute + 4 * L * allreduce, got = tnum(j, "step_time_s");
  ck_assert_msg(fabs(got - want) <= TOL_TIME_REL * want, "sync step %.17g s, closed form %.17g s", got, want);
  json_decref(j);
  sets[9] = "tensor.async_grad_allreduce=on";
  j = run_tensor(dir, "async", sets);
  double overlapped = tnum(j, "step_time_s");
  ck_assert_msg(overlapped < got && overlapped >= compute, "async %.17g s, sync %.17g s, compute %.17g s",
                overlapped, got, compute);
  /* the two backward allreduces of each layer are shorter than their weight-gradient GEMMs
   * here, so exactly the forward ones remain exposed */
  ck_assert_msg(fabs(overlapped - (compute + 2 * L * allreduce)) <= TOL_TIME_REL * overlapped,
                "async %.17g s, want %.17g s", overlapped, compute + 2 * L * allreduce);
  json_decref(j);
  free(dir);
}
END_TEST

/* tensor.kernels: the step is the GEMMs' closed form (as above, no messages at t = 1) plus
 * every phase's memory-bound elements x 2 bytes at the V100's 900e9 B/s, counted here from
 * transformer.h's totals per layer: unfused R 38, S 51, A 16 (x b s h, b s h / t, b a s^2 / t),
 * fused R 30, S 31, A 10; t = 2 with sequence parallelism splits R too and the two ranks
 * add the same time; recompute adds the forward's R 19, S 20, A 8.5 (unfused). */
/* The kernel model (model.kernel_model = shapes, the default) on dgx2h's V100 description
 * (sim/platform_gen.c: 80 SMs, cuBLAS's main loop at 0.8631 of peak, 900e9 B/s, L2 2155e9 B/s,
 * 7 us per kernel), model.efficiency = 0.5 as the software's share of it: with t = 1 and no
 * message, one step is the layers' phases, each the sum of its GEMMs' gemm_time and its
 * memory-bound kernels' gemm_mem_time, plus the two weight-gradient GEMMs, worked out here
 * from models/gemm.h and transformer.h. With t = 2 (async_grad_allreduce off) the 4 L ring
 * allreduces add their closed form at the preset's links as written, 150e9 x 0.8 B/s, and
 * every phase one more launch (its collective's). */
START_TEST(test_tensor_kernel_model)
{
  char *dir = cli_tmpdir();
  platform_spec spec;
  ck_assert_int_eq(platform_preset("dgx2h", 16, &spec), 0);
  gemm_device d = {.peak = spec.speed, .sms = spec.gpu_sms, .mem_bw = spec.mem_bw, .l2_bw = spec.gpu_l2_bw,
                   .launch_s = spec.gpu_launch, .efficiency = spec.gpu_gemm_eff, .software = 0.5};
  gemm_device_default_tiles(&d);
  transformer_dims dims = {4, 512, 1024, 8};
  double L = 4, bw = spec.bw * spec.bw_eff;
  for (size_t t = 1; t <= 2; t++) {
    double step = 0;
    for (int ph = 0; ph < 4; ph++) {
      gemm_shape g[TRANSFORMER_MAX_GEMMS], w;
      size_t n = transformer_phase_gemms(&dims, t, (transformer_phase)ph, g);
      for (size_t i = 0; i < n; i++)
        step += gemm_time(&d, g[i].m, g[i].n, g[i].k, g[i].batch, 2, NULL);
      double bytes = transformer_phase_mem_elems(&dims, TRANSFORMER_KERNELS_UNFUSED, t, 0, (transformer_phase)ph) * 2;
      step += gemm_mem_time(&d, bytes, (double)transformer_phase_kernels(TRANSFORMER_KERNELS_UNFUSED, (transformer_phase)ph) +
                                           (t > 1 ? 1 : 0));
      if (transformer_wgrad_gemm(&dims, t, (transformer_phase)ph, &w))
        step += gemm_time(&d, w.m, w.n, w.k, w.batch, 2, NULL);
    }
    step *= L;
    double tt = (double)t, ar = 2 * (tt - 1) * (1e-6 + (4.0 * 512 * 1024 * 2 / tt + HEADER) / bw);
    step += 4 * L * (t > 1 ? ar : 0);
    char ranks[32];
    snprintf(ranks, sizeof ranks, "tensor.ranks=%zu", t);
    const char *sets[] = {ranks,  "tensor.hidden=1024", "tensor.heads=8", "tensor.layers=4", "tensor.seq=512",
                          "tensor.microbatch=4", "tensor.kernels=unfused", "tensor.async_grad_allreduce=off",
                          "model.numerics=off", "model.dtype=fp16", "model.efficiency=0.5", NULL};
    json_t *j = run_tensor_with(dir, "out", sets, 1);
    double got = tnum(j, "step_time_s");
    ck_assert_msg(fabs(got - step) <= TOL_TIME_REL * step, "t = %zu: step %.17g s, kernel model %.17g s", t, got,
                  step);
    json_decref(j);
    /* the flat model at the same efficiency runs these shapes faster: no quantisation, no
     * memory limit, no launches */
    j = run_tensor(dir, "flat", sets);
    ck_assert_double_lt(tnum(j, "step_time_s"), got);
    json_decref(j);
  }
  free(dir);
}
END_TEST

START_TEST(test_tensor_kernels)
{
  char *dir = cli_tmpdir();
  double b = 4, s = 512, h = 1024, a = 8, L = 4, f = 24 * b * s * h * h + 4 * b * s * s * h;
  double bsh = b * s * h, as2 = b * a * s * s;
  static const struct {
    const char *kernels, *ranks, *seqpar, *recompute;
    double R, S, A, passes; /* passes: GEMM passes, 3 or 4 with recomputation */
  } cases[] = {{"tensor.kernels=unfused", "tensor.ranks=1", "tensor.sequence_parallel=off", "tensor.recompute=off", 38,
                51, 16, 3},
               {"tensor.kernels=fused", "tensor.ranks=1", "tensor.sequence_parallel=off", "tensor.recompute=off", 30, 31,
                10, 3},
               {"tensor.kernels=unfused", "tensor.ranks=1", "tensor.sequence_parallel=off", "tensor.recompute=on",
                38 + 19, 51 + 20, 16 + 8.5, 4},
               {"tensor.kernels=none", "tensor.ranks=1", "tensor.sequence_parallel=off", "tensor.recompute=off", 0, 0, 0,
                3}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *sets[] = {cases[i].kernels, cases[i].ranks, cases[i].seqpar, cases[i].recompute,
                          "tensor.hidden=1024", "tensor.heads=8", "tensor.layers=4", "tensor.seq=512",
                          "tensor.microbatch=4", "model.numerics=off", "model.dtype=fp16", "model.efficiency=0.5", NULL};
    json_t *j = run_tensor(dir, "out", sets);
    double gemm = cases[i].passes * L * f / (0.5 * 125e12);
    double mem = L * 2 * (cases[i].R * bsh + cases[i].S * bsh + cases[i].A * as2) / 900e9;
    double got = tnum(j, "step_time_s");
    ck_assert_msg(fabs(got - (gemm + mem)) <= TOL_TIME_REL * got, "%s %s: step %.17g s, closed form %.17g s",
                  cases[i].kernels, cases[i].recompute, got, gemm + mem);
    json_decref(j);
  }
  /* sequence parallelism at t = 2: without messages' time this would be half of t = 1's
   * memory time; check that the memory part scales as (R + S) / 2 by comparing with the
   * plain t = 2 run, whose replicated part is not split: the difference is R b s h / 2. */
  const char *sp[] = {"tensor.kernels=unfused", "tensor.ranks=2", "tensor.sequence_parallel=on", "tensor.hidden=1024",
                      "tensor.heads=8", "tensor.layers=4", "tensor.seq=512", "tensor.microbatch=4",
                      "model.numerics=off", "model.dtype=fp16", "model.efficiency=0.5", NULL};
  json_t *j = run_tensor(dir, "sp", sp);
  double with_sp = tnum(j, "step_time_s");
  json_decref(j);
  const char *sp_none[] = {"tensor.kernels=none", "tensor.ranks=2", "tensor.sequence_parallel=on", "tensor.hidden=1024",
                           "tensor.heads=8", "tensor.layers=4", "tensor.seq=512", "tensor.microbatch=4",
                           "model.numerics=off", "model.dtype=fp16", "model.efficiency=0.5", NULL};
  j = run_tensor(dir, "spn", sp_none);
  double mem_sp = L * 2 * (38 * bsh / 2 + 51 * bsh / 2 + 16 * as2 / 2) / 900e9;
  ck_assert_msg(fabs(with_sp - tnum(j, "step_time_s") - mem_sp) <= TOL_TIME_REL * with_sp,
                "seqpar: %.17g s more, want %.17g s", with_sp - tnum(j, "step_time_s"), mem_sp);
  json_decref(j);
  free(dir);
}
END_TEST

/* ---- tensor.dp_overlap: bucketed data-parallel allreduce overlapped with backward ---- */

static double bytes_total(json_t *j)
{
  return json_number_value(json_object_get(json_object_get(j, "comm"), "bytes_total"));
}

static long buckets_of(json_t *j)
{
  return (long)json_integer_value(json_object_get(json_object_get(j, "tensor"), "dp_buckets"));
}

/* Buckets expected from the layer sizes alone: a bucket closes on the layer that brings it
 * to `cap` bytes, so it holds k = ceil(cap / layer bytes) layers ((k - 1) layers stay below
 * cap); the L layers fill ceil(L / k) buckets, the last possibly partial. The embedding
 * comes last: it joins a partial last bucket, and makes its own when k divides L. */
static long expected_buckets(double layers, double layer_bytes, double cap, int vocab)
{
  double k = ceil(cap / layer_bytes);
  return (long)ceil(layers / k) + (vocab && fmod(layers, k) == 0 ? 1 : 0);
}

/* t = 4, d = 8 as test_tensor_data_parallel, with V = 128; layer bytes 2 x 28392 = 56784,
 * embedding 2 x (128 x 96 / 4 + 12 x 96 + 2 x 96) = 8832. Overlap on: the same elements
 * reach the wire (dp_allreduce_elements unchanged), in dp_buckets ring allreduces instead
 * of one, each with its own 2(d-1) messages of 64 header bytes per rank: bytes_total
 * exceeds off's by exactly t (buckets - 1) 2(d-1) 64d. Caps of 1 byte (one bucket per
 * layer and one for the embedding), 60000 (two layers), 150000 (three) and 1e18 (one). */
START_TEST(test_tensor_dp_overlap_bytes)
{
  static const char *caps[] = {"tensor.bucket_bytes=1", "tensor.bucket_bytes=60000", "tensor.bucket_bytes=150000",
                               "tensor.bucket_bytes=1e18"};
  static const double cap[] = {1, 60000, 150000, 1e18};
  char *dir = cli_tmpdir();
  const char *sets[] = {"platform.hosts=32",   "tensor.ranks=4",        "tensor.hidden=96",      "tensor.heads=8",
                        "tensor.layers=5",     "tensor.seq=12",         "tensor.microbatch=3",   "tensor.microbatches=2",
                        "model.dtype=fp16",    "model.numerics=off",    "tensor.data_parallel=8", "tensor.vocab=128",
                        "tensor.dp_overlap=off", caps[_i], NULL};
  json_t *j = run_tensor(dir, "off", sets);
  double off = bytes_total(j), n = tnum(j, "dp_allreduce_elements");
  ck_assert_int_eq(buckets_of(j), 1);
  json_decref(j);
  sets[12] = "tensor.dp_overlap=on";
  j = run_tensor(dir, "on", sets);
  double t = 4, d = 8, h = 96;
  ck_assert_double_eq(n, 5 * ((12 * h * h + 7 * h) / t + 6 * h) + 128 * h / t + 12 * h + 2 * h);
  ck_assert_double_eq(tnum(j, "dp_allreduce_elements"), n);
  long nb = buckets_of(j);
  ck_assert_int_eq(nb, expected_buckets(5, 56784, cap[_i], 1));
  double got = bytes_total(j), want = off + t * (double)(nb - 1) * 2 * (d - 1) * HEADER * d;
  ck_assert_msg(got == want, "cap %g: bytes_total %.17g, want %.17g (%ld buckets)", cap[_i], got, want, nb);
  ck_assert(tnum(j, "dp_allreduce_s") > 0);
  json_decref(j);
  free(dir);
}
END_TEST

/* t = 1, d = 4 on one dgx2h node (hosts 0-3: NVSwitch, alpha = 2 x 0.5 us, 150e9 B/s per
 * GPU, as test_tensor_time_and_overlap), h = 1024, L = 4, s = 512, b = 4, fp16, efficiency
 * 0.5: a layer's backward (2 x 5.58e10 flops at 62.5e12 flop/s, 1.8 ms) outlasts the ring
 * allreduce of its n = 12h^2 + 13h entries (2(d-1)(alpha + (2n/d + 64)/bw), 0.26 ms), so
 * compute dominates. Off: the step is compute + the ring of 4n, both closed forms. With
 * one layer per bucket (bucket_bytes = 1), every bucket but the last is reduced during the
 * next layer's backward and only the last one's ring, after backward, is exposed: the
 * step exceeds compute by at most (and, since that ring must run after backward, at least)
 * that ring's time. With the collectives holding NCCL's 16 SMs, each overlapped ring also
 * delays backward by 16/80 of its time. One huge bucket is off's schedule: the same step time. */
START_TEST(test_tensor_dp_overlap_time)
{
  char *dir = cli_tmpdir();
  const char *sets[] = {"platform.hosts=4",    "tensor.ranks=1",      "tensor.hidden=1024",     "tensor.heads=8",
                        "tensor.layers=4",     "tensor.seq=512",      "tensor.microbatch=4",    "model.numerics=off",
                        "model.dtype=fp16",    "model.efficiency=0.5", "tensor.data_parallel=4", "tensor.dp_overlap=off",
                        "tensor.bucket_bytes=1", NULL, NULL};
  double d = 4, b = 4, s = 512, h = 1024, L = 4, f = 24 * b * s * h * h + 4 * b * s * s * h;
  double compute = 3 * L * f / (0.5 * 125e12), n = 12 * h * h + 13 * h;
  double ring_all = 2 * (d - 1) * (1e-6 + (L * n * 2 / d + HEADER) / 150e9);
  double ring_one = 2 * (d - 1) * (1e-6 + (n * 2 / d + HEADER) / 150e9);
  json_t *j = run_tensor(dir, "off", sets);
  double off = tnum(j, "step_time_s");
  ck_assert_msg(fabs(off - (compute + ring_all)) <= TOL_TIME_REL * off, "off: step %.17g s, closed form %.17g s", off,
                compute + ring_all);
  json_decref(j);
  sets[11] = "tensor.dp_overlap=on";
  j = run_tensor(dir, "on", sets);
  double on = tnum(j, "step_time_s"), exposed = on - compute;
  ck_assert_int_eq(buckets_of(j), 4);
  ck_assert_msg(on < off, "on: step %.17g s, off: %.17g s", on, off);
  ck_assert_msg(exposed <= ring_one * (1 + TOL_TIME_REL) && exposed >= ring_one * (1 - TOL_TIME_REL),
                "on: %.17g s exposed beyond compute, last bucket's ring %.17g s (all: %.17g s)", exposed, ring_one,
                ring_all);
  /* first bucket's start (end of layer 3's backward) to the last one's end */
  double span = tnum(j, "dp_allreduce_s");
  ck_assert_msg(fabs(span - (3 * compute / L * 2 / 3 + ring_one)) <= TOL_TIME_REL * span, "dp_allreduce_s %.17g s",
                span);
  json_decref(j);
  /* NCCL's 16 of 80 SMs held while a bucket is reduced: each of the 3 rings beside a layer's
   * backward slows it to 64/80 for the ring's time, delaying it by 16/80 of that; the last,
   * exposed one has nothing beside it */
  sets[13] = "platform.comm_sms=on";
  j = run_tensor(dir, "held", sets);
  double want = compute + ring_one * (1 + 3 * 16.0 / 80);
  ck_assert_msg(fabs(tnum(j, "step_time_s") - want) <= TOL_TIME_REL * want, "held: step %.17g s, closed form %.17g s",
                tnum(j, "step_time_s"), want);
  json_decref(j);
  sets[13] = NULL;
  sets[12] = "tensor.bucket_bytes=1e18";
  j = run_tensor(dir, "one", sets);
  ck_assert_int_eq(buckets_of(j), 1);
  ck_assert_msg(fabs(tnum(j, "step_time_s") - off) <= TOL_TIME_REL * off, "one bucket: step %.17g s, off %.17g s",
                tnum(j, "step_time_s"), off);
  ck_assert_double_eq_tol(tnum(j, "dp_allreduce_s"), ring_all, TOL_TIME_REL * ring_all);
  json_decref(j);
  free(dir);
}
END_TEST

/* tensor.comm_hbm on the kernel model: the buckets' allreduces also take HBM from the backward
 * beside them, so the step grows, by less than if each overlapped allreduce had taken, on top of
 * its 16 of 80 SMs, 4 bytes of HBM per byte sent at its link's full rate from a backward that
 * were memory-bound throughout (4 x 120e9 / 900e9 of what the SMs leave, for its whole time). */
START_TEST(test_tensor_comm_hbm)
{
  char *dir = cli_tmpdir();
  const char *sets[] = {"platform.hosts=4",       "tensor.ranks=1",       "tensor.hidden=1024", "tensor.heads=8",
                        "tensor.layers=4",        "tensor.seq=512",       "tensor.microbatch=4", "model.numerics=off",
                        "model.dtype=fp16",       "model.efficiency=0.5", "tensor.kernels=unfused",
                        "tensor.data_parallel=4", "tensor.dp_overlap=on", "tensor.bucket_bytes=1", NULL, NULL};
  json_t *j = run_tensor_with(dir, "sms", sets, 1);
  double sms = tnum(j, "step_time_s"), span = tnum(j, "dp_allreduce_s");
  json_decref(j);
  sets[14] = "tensor.comm_hbm=on";
  j = run_tensor_with(dir, "hbm", sets, 1);
  double hbm = tnum(j, "step_time_s");
  json_decref(j);
  ck_assert_msg(hbm > sms, "comm_hbm: step %.17g s, SMs alone %.17g s", hbm, sms);
  ck_assert_msg(hbm - sms < span * (1 - 16.0 / 80) * 4 * 120e9 / 900e9, "comm_hbm: %.17g s more than %.17g s",
                hbm - sms, sms);
  free(dir);
}
END_TEST

/* Megatron-LM's 8.3B layer shape cut to 4 layers on two dgx2h nodes (t = 8, d = 4: each
 * data-parallel ring crosses InfiniBand while the tensor groups use NVSwitch), with the
 * vocabulary, recomputation and synchronous input-gradient allreduces: overlap on at the
 * default 25 MiB cap (one layer per bucket, the embedding last) is strictly faster than
 * off, never slower than d = 1 on the same hosts, and its data-parallel span ends no
 * earlier than off's single allreduce would need. */
START_TEST(test_tensor_dp_overlap_megatron_layer)
{
  char *dir = cli_tmpdir();
  const char *sets[] = {"platform.hosts=32",     "tensor.ranks=8",       "tensor.hidden=3072",
                        "tensor.heads=32",       "tensor.layers=4",      "tensor.seq=1024",
                        "tensor.microbatch=8",   "model.numerics=off",   "model.dtype=fp16",
                        "model.efficiency=0.312", "tensor.vocab=51200",  "tensor.recompute=on",
                        "tensor.async_grad_allreduce=off", "tensor.data_parallel=4", "tensor.dp_overlap=off",
                        NULL};
  json_t *j = run_tensor(dir, "off", sets);
  double off = tnum(j, "step_time_s"), ar = tnum(j, "dp_allreduce_s");
  json_decref(j);
  sets[14] = "tensor.dp_overlap=on";
  j = run_tensor(dir, "on", sets);
  double on = tnum(j, "step_time_s");
  ck_assert_int_eq(buckets_of(j), 5);
  json_decref(j);
  sets[13] = "tensor.data_parallel=1";
  j = run_tensor(dir, "one", sets);
  double one = tnum(j, "step_time_s");
  ck_assert_int_eq(buckets_of(j), 0);
  json_decref(j);
  ck_assert_msg(one < on && on < off && off - one <= ar * (1 + TOL_EXACT_REL),
                "d = 1: %.17g s, overlap on: %.17g s, off: %.17g s (allreduce %.17g s)", one, on, off, ar);
  free(dir);
}
END_TEST

/* With d = 1 there is nothing to reduce: dp_overlap = on is accepted and changes nothing. */
START_TEST(test_tensor_dp_overlap_one_replica)
{
  char *dir = cli_tmpdir();
  const char *sets[] = {"tensor.ranks=4", "tensor.hidden=96", "tensor.heads=8", "tensor.layers=3",
                        "tensor.seq=12", "model.numerics=off", "tensor.dp_overlap=off", NULL};
  json_t *a = run_tensor(dir, "off", sets);
  sets[6] = "tensor.dp_overlap=on";
  json_t *b = run_tensor(dir, "on", sets);
  ck_assert_double_eq(tnum(a, "step_time_s"), tnum(b, "step_time_s"));
  ck_assert_double_eq(bytes_total(a), bytes_total(b));
  ck_assert_int_eq(buckets_of(b), 0);
  ck_assert_double_eq(tnum(b, "dp_allreduce_s"), 0);
  json_decref(a);
  json_decref(b);
  free(dir);
}
END_TEST

START_TEST(test_tensor_determinism)
{
  char *dir = cli_tmpdir();
  const char *sets[] = {"tensor.ranks=4", "tensor.sequence_parallel=on", "tensor.seq=8", NULL};
  json_decref(run_tensor_with(dir, "a", sets, 1));
  json_decref(run_tensor_with(dir, "b", sets, 1));
  const char *threads[] = {"run",   "--quiet", "--out", "c", "--set", "run.algorithm=tensor", "--set",
                           "platform.preset=dgx2h", "--set", "platform.hosts=16", "--set", "tensor.ranks=4",
                           "--set", "tensor.sequence_parallel=on", "--set", "tensor.seq=8",
                           "--cfg=contexts/nthreads:2", NULL};
  ck_assert_int_eq(cli_run(dir, threads), 0);
  char *a = cli_read(dir, "a/summary.json"), *b = cli_read(dir, "b/summary.json"), *c = cli_read(dir, "c/summary.json");
  ck_assert_ptr_nonnull(a);
  ck_assert_str_eq(a, b);
  ck_assert_str_eq(a, c);
  free(a);
  free(b);
  free(c);
  free(dir);
}
END_TEST

/* dp_overlap's communicator actors: the same summary twice and with two SimGrid threads. */
START_TEST(test_tensor_dp_overlap_determinism)
{
  char *dir = cli_tmpdir();
  const char *base[] = {"run", "--quiet", "--out", "a", "--set", "run.algorithm=tensor", "--set",
                        "platform.preset=dgx2h", "--set", "platform.hosts=32", "--set", "tensor.ranks=4",
                        "--set", "tensor.data_parallel=8", "--set", "tensor.dp_overlap=on", "--set",
                        "tensor.bucket_bytes=20000", "--set", "tensor.vocab=64", "--set", "model.numerics=off",
                        "--set", "tensor.microbatches=2", "--set", "tensor.steps=2", NULL, NULL};
  ck_assert_int_eq(cli_run(dir, base), 0);
  base[3] = "b";
  ck_assert_int_eq(cli_run(dir, base), 0);
  base[3] = "c";
  base[26] = "--cfg=contexts/nthreads:2";
  ck_assert_int_eq(cli_run(dir, base), 0);
  char *a = cli_read(dir, "a/summary.json"), *b = cli_read(dir, "b/summary.json"), *c = cli_read(dir, "c/summary.json");
  ck_assert_ptr_nonnull(a);
  ck_assert_str_eq(a, b);
  ck_assert_str_eq(a, c);
  char *ba = cli_read(dir, "a/breakdown.csv"), *bc = cli_read(dir, "c/breakdown.csv");
  ck_assert_ptr_nonnull(ba);
  ck_assert_str_eq(ba, bc);
  free(a);
  free(b);
  free(c);
  free(ba);
  free(bc);
  free(dir);
}
END_TEST

/* Recomputation runs each layer's forward again before its backward: 6 of the layer's
 * allreduces per microbatch instead of 4 (bytes x 1.5 exactly), 4 instead of 3 forwards of
 * flops (model flops and, on one rank, where compute is all there is, step time x 4/3),
 * and the numerics still equal the serial stack. */
START_TEST(test_tensor_recompute)
{
  char *dir = cli_tmpdir();
  const char *sets[] = {"tensor.ranks=4", "tensor.hidden=96", "tensor.heads=8", "tensor.layers=3",
                        "tensor.seq=12",  "tensor.microbatch=3", "tensor.microbatches=2", "model.dtype=fp16",
                        "model.numerics=off", "tensor.recompute=off", NULL};
  json_t *j = run_tensor(dir, "plain", sets);
  double bytes = json_number_value(json_object_get(json_object_get(j, "comm"), "bytes_total"));
  double flops = tnum(j, "model_flops");
  json_decref(j);
  sets[9] = "tensor.recompute=on";
  j = run_tensor(dir, "re", sets);
  ck_assert_double_eq(json_number_value(json_object_get(json_object_get(j, "comm"), "bytes_total")), 1.5 * bytes);
  ck_assert_double_eq_tol(tnum(j, "model_flops"), flops * 4 / 3, TOL_EXACT_REL * flops);
  json_decref(j);
  sets[0] = "tensor.ranks=1";
  j = run_tensor(dir, "one-re", sets);
  double t_re = tnum(j, "step_time_s");
  json_decref(j);
  sets[9] = "tensor.recompute=off";
  j = run_tensor(dir, "one", sets);
  ck_assert_double_eq_tol(t_re, tnum(j, "step_time_s") * 4 / 3, TOL_EXACT_REL * t_re);
  json_decref(j);
  sets[0] = "tensor.ranks=2";
  sets[8] = "model.numerics=on";
  sets[9] = "tensor.recompute=on";
  j = run_tensor(dir, "num", sets);
  ck_assert_msg(check_error(j) < TOL_NUMERIC_REL, "recompute: max relative error %.3g", check_error(j));
  json_decref(j);
  free(dir);
}
END_TEST

/* The embedding and logits layers (V = 128): per microbatch, two more ring allreduces of
 * b s h elements (the embedding's g, the logits' f') and three of b s (the fused
 * cross-entropy), 2(t-1)(n eb + 64t) bytes each as above; 3 x 2bshV more model flops,
 * which on one rank is all the extra time. */
START_TEST(test_tensor_vocab)
{
  char *dir = cli_tmpdir();
  const char *sets[] = {"tensor.ranks=4", "tensor.hidden=96", "tensor.heads=8", "tensor.layers=3",
                        "tensor.seq=12",  "tensor.microbatch=3", "tensor.microbatches=2", "model.dtype=fp16",
                        "model.numerics=off", "tensor.vocab=128", NULL};
  json_t *j = run_tensor(dir, "v", sets);
  double t = 4, b = 3, s = 12, h = 96, V = 128, eb = 2, mb = 2, L = 3;
  double want = expected_bytes(t, b, s, h, eb, L, mb) +
                mb * (2 * 2 * (t - 1) * (b * s * h * eb + HEADER * t) + 3 * 2 * (t - 1) * (b * s * eb + HEADER * t));
  double got = json_number_value(json_object_get(json_object_get(j, "comm"), "bytes_total"));
  ck_assert_msg(got == want, "bytes_total %.17g, want %.17g", got, want);
  double f = 24 * b * s * h * h + 4 * b * s * s * h, logits = 2 * b * s * h * V;
  ck_assert_double_eq_tol(tnum(j, "model_flops"), mb * (3 * L * f + 3 * logits), TOL_EXACT_REL * mb * 3 * L * f);
  json_decref(j);
  sets[0] = "tensor.ranks=1";
  j = run_tensor(dir, "v1", sets);
  double t_v = tnum(j, "step_time_s");
  json_decref(j);
  sets[9] = "tensor.vocab=0";
  j = run_tensor(dir, "n1", sets);
  /* dgx2h: 125e12 flop/s per GPU, model.efficiency = 1 (its default) */
  ck_assert_double_eq_tol(t_v - tnum(j, "step_time_s"), mb * 3 * logits / 125e12, TOL_TIME_REL * t_v);
  json_decref(j);
  free(dir);
}
END_TEST

START_TEST(test_tensor_bad_input)
{
  char *dir = cli_tmpdir();
  const char *heads[] = {"run", "--set", "run.algorithm=tensor", "--set", "tensor.ranks=3", "--out", "out", NULL};
  cli_assert_bad_input(dir, heads, "tensor.ranks");
  const char *sp[] = {"run", "--set", "run.algorithm=tensor", "--set", "tensor.sequence_parallel=on", "--set",
                      "tensor.seq=15", "--out", "out", NULL};
  cli_assert_bad_input(dir, sp, "tensor.seq");
  const char *dpnum[] = {"run", "--set", "run.algorithm=tensor", "--set", "tensor.data_parallel=2", "--out", "out",
                         NULL};
  cli_assert_bad_input(dir, dpnum, "tensor.data_parallel");
  const char *vnum[] = {"run", "--set", "run.algorithm=tensor", "--set", "tensor.vocab=64", "--out", "out", NULL};
  cli_assert_bad_input(dir, vnum, "tensor.vocab");
  const char *vsplit[] = {"run", "--set", "run.algorithm=tensor", "--set", "tensor.vocab=63", "--set",
                          "model.numerics=off", "--out", "out", NULL};
  cli_assert_bad_input(dir, vsplit, "tensor.vocab");
  const char *nobw[] = {"run", "--set", "run.algorithm=tensor", "--set", "tensor.kernels=fused", "--set",
                        "model.numerics=off", "--out", "out", NULL}; /* distbelief-2012: no mem_bw */
  cli_assert_bad_input(dir, nobw, "mem_bw");
  const char *kname[] = {"run", "--set", "run.algorithm=tensor", "--set", "tensor.kernels=fast", "--out", "out", NULL};
  cli_assert_bad_input(dir, kname, "tensor.kernels");
  const char *cap[] = {"run", "--set", "run.algorithm=tensor", "--set", "tensor.bucket_bytes=0", "--out", "out", NULL};
  cli_assert_bad_input(dir, cap, "tensor.bucket_bytes");
  const char *ov[] = {"run", "--set", "run.algorithm=tensor", "--set", "tensor.dp_overlap=maybe", "--out", "out", NULL};
  cli_assert_bad_input(dir, ov, "tensor.dp_overlap");
  /* a platform file whose collectives would hold every SM of a GPU */
  cli_write(dir, "allheld.xml",
            "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
            "<platform version=\"4.1\">\n  <cluster id=\"g\" prefix=\"gpu-\" suffix=\"\" radical=\"0-3\" "
            "speed=\"100Tf\" core=\"1\" bw=\"100GBps\" lat=\"1us\">\n"
            "    <prop id=\"mem_bw\" value=\"1e12\"/>\n    <prop id=\"gpu_sms\" value=\"16\"/>\n"
            "    <prop id=\"gpu_comm_sms\" value=\"16\"/>\n  </cluster>\n</platform>\n");
  const char *held[] = {"run", "--set", "run.algorithm=tensor", "--set", "platform.file=allheld.xml", "--set",
                        "model.numerics=off", "--out", "out", NULL};
  cli_assert_bad_input(dir, held, "gpu_comm_sms");
  free(dir);
}
END_TEST

static Suite *tensor_suite(void)
{
  Suite *s = suite_create("tensor");
  TCase *tc = tcase_create("numerics");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_tensor_numerics, 0, 3);
  tcase_add_loop_test(tc, test_tensor_numerics_seqpar, 0, 3);
  suite_add_tcase(s, tc);
  tc = tcase_create("bytes");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_tensor_bytes, 0, 2);
  tcase_add_test(tc, test_tensor_bytes_one_rank);
  tcase_add_test(tc, test_tensor_data_parallel);
  suite_add_tcase(s, tc);
  ADD_TCASE(s, "time", test_tensor_megatron_baseline, test_tensor_time_and_overlap);
  ADD_TCASE(s, "recompute and vocabulary", test_tensor_recompute, test_tensor_vocab);
  ADD_TCASE(s, "memory-bound kernels", test_tensor_kernels, test_tensor_kernel_model);
  ADD_TCASE(s, "dp buckets", test_tensor_dp_overlap_one_replica);
  tc = tcase_create("dp overlap");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_tensor_dp_overlap_bytes, 0, 4);
  tcase_add_test(tc, test_tensor_dp_overlap_time);
  tcase_add_test(tc, test_tensor_dp_overlap_megatron_layer);
  tcase_add_test(tc, test_tensor_comm_hbm);
  suite_add_tcase(s, tc);
  ADD_TCASE(s, "determinism", test_tensor_determinism, test_tensor_dp_overlap_determinism);
  ADD_TCASE(s, "input", test_tensor_bad_input);
  return s;
}

CHECK_MAIN(tensor_suite)

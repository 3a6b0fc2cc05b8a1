/* check_gemm.c - Check suite for models/gemm: the tile list, the device check, a GEMM's
 * time worked out by hand for each thing the model does (main loop, tile and wave
 * quantisation, L2 and DRAM limits, split-K, the kernel floor), and the transformer
 * layer's GEMMs (models/transformer.h) adding up to the layer's flops. */

#include <check.h>
#include <math.h>
#include <stddef.h>

#include "models/gemm.h"
#include "models/transformer.h"

#include "check_util.h"

/* Times computed by hand below go through a handful of multiplications and divisions:
 * a few ulps of relative error. */
#define GEMM_TOL 1e-12

/* A made-up device with round numbers that make the hand computations short: 4 SMs of
 * 1e12 flop/s each at full efficiency, 1e12 B/s of DRAM, no L2 limit, 1 us per kernel,
 * one 128 x 128 tile. */
static gemm_device toy(void)
{
  gemm_device d = {.peak = 4e12, .sms = 4, .mem_bw = 1e12, .l2_bw = 0, .launch_s = 1e-6, .efficiency = 1};
  d.n_tiles = 1;
  d.tiles[0] = (gemm_tile){128, 128};
  return d;
}

static double rel(double got, double want) { return fabs(got - want) / fabs(want); }

START_TEST(test_gemm_tiles_parse)
{
  gemm_device d = toy();
  ck_assert_int_eq(gemm_tiles_parse("256x128,64x64", &d), 0);
  ck_assert_uint_eq(d.n_tiles, 2);
  ck_assert_uint_eq(d.tiles[0].m, 256);
  ck_assert_uint_eq(d.tiles[0].n, 128);
  ck_assert_uint_eq(d.tiles[1].m, 64);
  static const char *const bad[] = {"", "256", "256x", "x128", "256x128,", "256x128;64x64", "4x64", "2048x64",
                                    "-64x64", "64x64x8", "a"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ck_assert_msg(gemm_tiles_parse(bad[i], &d) == -1, "accepted '%s'", bad[i]);
    ck_assert_uint_eq(d.n_tiles, 2); /* unchanged */
  }
  gemm_device_default_tiles(&d);
  ck_assert_uint_eq(d.n_tiles, 6);
  ck_assert_uint_eq(d.tiles[0].m, 256);
  ck_assert_uint_eq(d.tiles[5].n, 64);
}
END_TEST

START_TEST(test_gemm_device_check)
{
  gemm_device d = toy();
  ck_assert_int_eq(gemm_device_check(&d), 0);
  d.efficiency = 1.5;
  ck_assert_int_eq(gemm_device_check(&d), -1);
  d = toy();
  d.sms = 0;
  ck_assert_int_eq(gemm_device_check(&d), -1);
  d = toy();
  d.mem_bw = 0;
  ck_assert_int_eq(gemm_device_check(&d), -1);
  d = toy();
  d.n_tiles = 0;
  ck_assert_int_eq(gemm_device_check(&d), -1);
  d = toy();
  d.launch_s = -1;
  ck_assert_int_eq(gemm_device_check(&d), -1);
  ck_assert_int_eq(gemm_device_check(NULL), -1);
}
END_TEST

/* 512 x 512 x 1024: 16 tiles on 4 SMs, 4 full waves; a block does 2 x 128^2 x 1024 =
 * 33,554,432 flops at 1e12 flop/s = 33.554432 us; the DRAM traffic (512 x 1024 x 2 +
 * 512^2) x 2 B = 2.62 MB takes 2.62 us, less; plus the 1 us floor: 135.217728 us. No
 * split helps (a split doubles blocks and halves each). */
START_TEST(test_gemm_main_loop)
{
  gemm_device d = toy();
  gemm_plan p;
  double t = gemm_time(&d, 512, 512, 1024, 1, 2, &p);
  ck_assert_double_le(rel(t, 4 * 33.554432e-6 + 1e-6), GEMM_TOL);
  ck_assert_double_eq(p.blocks, 16);
  ck_assert_double_eq(p.waves, 4);
  ck_assert_uint_eq(p.split, 1);
  ck_assert_int_eq(p.memory_bound, 0);
  ck_assert_double_le(rel(p.memory_s, (512.0 * 1024 * 2 + 512.0 * 512) * 2 / 1e12), GEMM_TOL);
  /* efficiency 0.5 doubles the main loop */
  d.efficiency = 0.5;
  ck_assert_double_le(rel(gemm_time(&d, 512, 512, 1024, 1, 2, NULL), 8 * 33.554432e-6 + 1e-6), GEMM_TOL);
  /* so does a software share of 0.5, on everything but the launch, memory-bound kernels too */
  d.efficiency = 1;
  d.software = 0.5;
  ck_assert_double_le(rel(gemm_time(&d, 512, 512, 1024, 1, 2, NULL), 8 * 33.554432e-6 + 1e-6), GEMM_TOL);
  ck_assert_double_le(rel(gemm_mem_time(&d, 2e6, 3), 4e-6 + 3e-6), GEMM_TOL);
  d.software = 1.5;
  ck_assert_int_eq(gemm_device_check(&d), -1);
}
END_TEST

/* The guide's tile quantisation (sec. 3.1): one more column than a tile holds costs a
 * whole column of tiles. 512 x 513: 20 tiles, 5 waves; 512 x 640 too: the same time. */
START_TEST(test_gemm_tile_quantisation)
{
  gemm_device d = toy();
  double a = gemm_time(&d, 512, 512, 1024, 1, 2, NULL), b = gemm_time(&d, 512, 513, 1024, 1, 2, NULL);
  double c = gemm_time(&d, 512, 640, 1024, 1, 2, NULL);
  ck_assert_double_le(rel(b, 5 * 33.554432e-6 + 1e-6), GEMM_TOL);
  ck_assert_double_eq(b, c);
  ck_assert_double_gt(b, a);
  /* K is quantised to slices of GEMM_TILE_K: 1000 runs as 1024 */
  ck_assert_double_eq(gemm_time(&d, 512, 512, 1000, 1, 2, NULL), a);
}
END_TEST

/* Wave quantisation (sec. 3.2): 4 tiles fill one wave, a fifth needs a second. A batch
 * counts as more tiles. K = 32 is one slice, which no split can cut: a block takes
 * 2 x 128^2 x 32 flops = 1.048576 us. */
START_TEST(test_gemm_wave_quantisation)
{
  gemm_device d = toy();
  gemm_plan p;
  double one = gemm_time(&d, 256, 256, 32, 1, 2, &p);
  ck_assert_double_eq(p.waves, 1);
  ck_assert_double_le(rel(one, 1.048576e-6 + 1e-6), GEMM_TOL);
  double five = gemm_time(&d, 128, 128, 32, 5, 2, &p);
  ck_assert_double_eq(p.blocks, 5);
  ck_assert_double_eq(p.waves, 2);
  ck_assert_double_le(rel(five, 2 * 1.048576e-6 + 1e-6), GEMM_TOL);
}
END_TEST

/* A skinny GEMM is DRAM-bound (the roofline): on 64 SMs and 1e11 B/s, 4096 x 16 x 4096
 * reads a 32 MiB matrix in 338 us while its 32 blocks compute in 134 us (67 us split in
 * two): it takes the floor plus 33,816,576 B / 1e11, unsplit. */
START_TEST(test_gemm_roofline)
{
  gemm_device d = toy();
  d.sms = 64;
  d.peak = 64e12;
  d.mem_bw = 1e11;
  gemm_plan p;
  double t = gemm_time(&d, 4096, 16, 4096, 1, 2, &p);
  double bytes = (4096.0 * 4096 + 4096.0 * 16 + 4096.0 * 16) * 2;
  ck_assert_int_eq(p.memory_bound, 1);
  ck_assert_uint_eq(p.split, 1);
  ck_assert_double_le(rel(t, 1e-6 + bytes / 1e11), GEMM_TOL);
  /* doubling the DRAM bandwidth nearly halves it */
  d.mem_bw = 2e11;
  ck_assert_double_lt(gemm_time(&d, 4096, 16, 4096, 1, 2, NULL), 0.6 * t);
}
END_TEST

/* One 128 x 128 output tile with K = 65536 would leave 3 SMs idle: split 4 ways it runs
 * on all of them, each block a quarter of the K loop, and adds its fp32 partial sums:
 * 2 x 128^2 x 16384 flops = 0.537 ms per block, 2 x 4 x 128^2 x 4 B of reduction. */
START_TEST(test_gemm_split_k)
{
  gemm_device d = toy();
  gemm_plan p;
  double t = gemm_time(&d, 128, 128, 65536, 1, 2, &p);
  ck_assert_uint_eq(p.split, 4);
  ck_assert_double_eq(p.waves, 1);
  double block = 2.0 * 128 * 128 * 16384 / 1e12, reduce = 2.0 * 4 * 128 * 128 * 4 / 1e12;
  ck_assert_double_le(rel(t, 1e-6 + block + reduce), GEMM_TOL);
  ck_assert_double_le(rel(p.reduce_s, reduce), GEMM_TOL);
  /* max_split = 1: the one block runs the whole K loop, 2.147 ms */
  d.max_split = 1;
  t = gemm_time(&d, 128, 128, 65536, 1, 2, &p);
  ck_assert_uint_eq(p.split, 1);
  ck_assert_double_le(rel(t, 1e-6 + 2.0 * 128 * 128 * 65536 / 1e12), GEMM_TOL);
}
END_TEST

/* The L2 limit: with 4 blocks running, each reads (128 + 128) x 1024 x 2 B from an L2 of
 * 5e10 B/s shared four ways, 41.94 us, longer than its 33.55 us main loop: that sets the
 * time. */
START_TEST(test_gemm_l2_limit)
{
  gemm_device d = toy();
  d.l2_bw = 5e10;
  double t = gemm_time(&d, 256, 256, 1024, 1, 2, NULL);
  ck_assert_double_le(rel(t, 1e-6 + 256.0 * 1024 * 2 * 4 / 5e10), GEMM_TOL);
  /* a bigger tile reuses more: on 1024 x 1024, 256 x 256 tiles read half the bytes per
   * flop, 16 blocks of 134 us main loop (their L2 reads take 84 us) against 64 blocks
   * held to 41.94 us each by the L2 */
  double small = gemm_time(&d, 1024, 1024, 1024, 1, 2, NULL);
  ck_assert_double_le(rel(small, 1e-6 + 16 * 256.0 * 1024 * 2 * 4 / 5e10), GEMM_TOL);
  d.tiles[1] = (gemm_tile){256, 256};
  d.n_tiles = 2;
  double big = gemm_time(&d, 1024, 1024, 1024, 1, 2, NULL);
  ck_assert_double_le(rel(big, 1e-6 + 4 * 2.0 * 256 * 256 * 1024 / 1e12), GEMM_TOL);
}
END_TEST

START_TEST(test_gemm_zero_and_mem)
{
  gemm_device d = toy();
  gemm_plan p;
  ck_assert_double_eq(gemm_time(&d, 0, 128, 128, 1, 2, &p), 0);
  ck_assert_double_eq(p.time_s, 0);
  ck_assert_double_eq(gemm_time(&d, 128, 128, 128, 0, 2, NULL), 0);
  /* 3 kernels moving 2 MB: 2 us + 3 us */
  ck_assert_double_le(rel(gemm_mem_time(&d, 2e6, 3), 5e-6), GEMM_TOL);
  ck_assert_double_eq(gemm_mem_time(&d, 0, 0), 0);
}
END_TEST

/* The default tiles on a V100-like device (80 SMs, 125e12 flop/s, 900e9 B/s, L2 2155e9):
 * the model's efficiency falls as tensor parallelism narrows a GEMM (Megatron's 8.3B row
 * projection, 8192 x 3072 x K with K = h / t), never rises. */
START_TEST(test_gemm_falls_with_t)
{
  gemm_device d = {.peak = 125e12, .sms = 80, .mem_bw = 900e9, .l2_bw = 2155e9, .launch_s = 7e-6, .efficiency = 0.9};
  gemm_device_default_tiles(&d);
  double prev = 2;
  for (double t = 1; t <= 16; t *= 2) {
    double k = 3072 / t, f = 2 * 8192 * 3072 * k;
    double eff = f / gemm_time(&d, 8192, 3072, k, 1, 2, NULL) / d.peak;
    ck_assert_double_le(eff, prev);
    ck_assert_double_le(eff, 0.9);
    prev = eff;
  }
  ck_assert_double_lt(prev, 0.85);
}
END_TEST

static double gemm_flops(const gemm_shape *g, size_t n)
{
  double f = 0;
  for (size_t i = 0; i < n; i++)
    f += 2 * g[i].m * g[i].n * g[i].k * g[i].batch;
  return f;
}

/* tensor.c's phase flops (its header): forward attention (8bsh^2 + 4bs^2h)/t, MLP
 * 16bsh^2/t; backward MLP 24bsh^2/t + 8 for W1's weight gradient, attention (10bsh^2 +
 * 8bs^2h)/t + 6 for Q K V's: the GEMM lists add up to them, and to 3 x the layer's
 * forward flops / t. */
START_TEST(test_transformer_gemms)
{
  transformer_dims d = {2, 16, 64, 8};
  size_t t = 4;
  double bsh2 = 2.0 * 16 * 64 * 64, bs2h = 2.0 * 16 * 16 * 64, tt = (double)t;
  double want[] = {(8 * bsh2 + 4 * bs2h) / tt, 16 * bsh2 / tt, 24 * bsh2 / tt, (10 * bsh2 + 8 * bs2h) / tt};
  double wgrad[] = {0, 0, 8 * bsh2 / tt, 6 * bsh2 / tt};
  double total = 0;
  for (int ph = 0; ph < 4; ph++) {
    gemm_shape g[TRANSFORMER_MAX_GEMMS], w;
    size_t n = transformer_phase_gemms(&d, t, (transformer_phase)ph, g);
    ck_assert_uint_le(n, TRANSFORMER_MAX_GEMMS);
    ck_assert_double_le(rel(gemm_flops(g, n), want[ph]), GEMM_TOL);
    size_t nw = transformer_wgrad_gemm(&d, t, (transformer_phase)ph, &w);
    ck_assert_uint_eq(nw, ph >= 2);
    if (nw)
      ck_assert_double_le(rel(gemm_flops(&w, 1), wgrad[ph]), GEMM_TOL);
    total += gemm_flops(g, n) + (nw ? gemm_flops(&w, 1) : 0);
  }
  ck_assert_double_le(rel(total, 3 * transformer_layer_flops(&d) / tt), GEMM_TOL);
  /* the attention's batch is the rank's b heads / t; the row-parallel Wo has K = h / t */
  gemm_shape g[TRANSFORMER_MAX_GEMMS];
  transformer_phase_gemms(&d, t, TRANSFORMER_FWD_ATTN, g);
  ck_assert_double_eq(g[1].batch, 2.0 * 8 / 4);
  ck_assert_double_eq(g[1].k, 64.0 / 8);
  ck_assert_double_eq(g[3].k, 64.0 / 4);
  /* logits: 2 n h V / t each way */
  for (int w = 0; w < 3; w++) {
    gemm_shape l = transformer_logits_gemm(&d, t, 512, w);
    ck_assert_double_le(rel(gemm_flops(&l, 1), 2.0 * 32 * 64 * 512 / tt), GEMM_TOL);
  }
  ck_assert_uint_eq(transformer_phase_kernels(TRANSFORMER_KERNELS_NONE, TRANSFORMER_FWD_ATTN), 0);
  ck_assert_uint_gt(transformer_phase_kernels(TRANSFORMER_KERNELS_UNFUSED, TRANSFORMER_FWD_ATTN),
                    transformer_phase_kernels(TRANSFORMER_KERNELS_FUSED, TRANSFORMER_FWD_ATTN));
}
END_TEST

static Suite *gemm_suite(void)
{
  Suite *s = suite_create("gemm");
  ADD_TCASE(s, "device", test_gemm_tiles_parse, test_gemm_device_check);
  ADD_TCASE(s, "time", test_gemm_main_loop, test_gemm_tile_quantisation, test_gemm_wave_quantisation,
            test_gemm_roofline, test_gemm_split_k, test_gemm_l2_limit, test_gemm_zero_and_mem, test_gemm_falls_with_t);
  ADD_TCASE(s, "transformer", test_transformer_gemms);
  return s;
}

CHECK_MAIN(gemm_suite)

/* sim_tensor_host.c - model.framework in the tensor algorithm (algorithms/tensor_host.h)
 * through the CLI: a step whose GPU work takes no time is its thread's launches and waits to
 * the last term (the era's constants times the plan's counts, models/framework.h), the GPU
 * waits for the thread where kernels are short, the runs are deterministic, and bad input
 * (an unknown era, an algorithm without a thread, hosts without their host CPU or its
 * pcie_bw) ends before the run. */

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/framework.h"
#include "models/transformer.h"

#include "check_util.h"
#include "cli_util.h"

/* TOL_HOST_REL: a step of host work alone against its sum: SimGrid adds the same durations
 * as events (about 200 of them, a few u each), and the GPU's work at 1e30 flop/s and B/s
 * adds about 1e-24 s (measured: 2e-16). */
#define TOL_HOST_REL 1e-9

/* One GPU host whose work takes no time (1e30 flop/s and bytes/s) and its host CPU, whose
 * link to the GPU carries PCIE bytes/s. */
#define PCIE 1e10
static const char fast_gpu[] =
    "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    "<platform version=\"4.1\">\n  <zone id=\"z\" routing=\"Full\">\n"
    "    <host id=\"g-0\" speed=\"1e30f\" core=\"1\"><prop id=\"mem_bw\" value=\"1e30\"/></host>\n"
    "    <host id=\"g-0-cpu\" speed=\"1e9f\" core=\"1\"><prop id=\"pcie_bw\" value=\"1e10\"/></host>\n"
    "  </zone>\n</platform>\n";

/* One layer on one rank, no vocabulary, no recomputation, GEMMs only (tensor.kernels = none),
 * flops at the host's speed (model.kernel_model = flat). */
static const char *const one_layer[] = {"run.algorithm=tensor", "model.numerics=off",
                                        "model.kernel_model=flat", "model.dtype=fp16", "model.framework=megatron-2019",
                                        "tensor.ranks=1", "tensor.hidden=64", "tensor.heads=4", "tensor.layers=1",
                                        "tensor.seq=16", "tensor.microbatch=1", "tensor.kernels=none", NULL};

static json_t *run_sets(const char *dir, const char *out, const char *const *sets, const char *const *more)
{
  const char *args[64] = {"run", "--quiet", "--out", out};
  size_t n = 4;
  for (size_t i = 0; sets[i]; i++) {
    args[n++] = "--set";
    args[n++] = sets[i];
  }
  for (size_t i = 0; more && more[i]; i++) {
    args[n++] = "--set";
    args[n++] = more[i];
  }
  args[n] = NULL;
  return cli_summary(dir, args, out);
}

static double tnum(json_t *j, const char *key)
{
  return json_number_value(json_object_get(json_object_get(j, "tensor"), key));
}

/* With nothing to do on the GPU, a step is the thread's time: every kernel launch at op_s
 * (the layer's GEMMs in its four phases, two weight gradients, the optimizer's loops over the
 * layer's 12 tensors with the reductions that end two of them), every read-back and timer at
 * sync_s, and the attention's RNG state copies at sync_s + rng_bytes / rate each: the era's
 * pageable rate (below PCIE here), or with tensor.rng_pinned the link's PCIE. */
START_TEST(test_host_bound_step)
{
  const framework *f = framework_find("megatron-2019");
  const transformer_dims d = {1, 16, 64, 4};
  gemm_shape g[TRANSFORMER_MAX_GEMMS];
  double launches = 2, waits = 0, copies = f->fork_in + f->fork_out, tensors = TRANSFORMER_LAYER_TENSORS;
  for (int ph = 0; ph < 4; ph++)
    launches += (double)transformer_phase_gemms(&d, 1, (transformer_phase)ph, g);
  for (size_t i = 0; i < f->n_loops; i++) {
    launches += f->loops[i].kernels * tensors + f->loops[i].then_reduce;
    waits += (f->loops[i].sync ? tensors : 0) + f->loops[i].then_reduce;
  }
  waits += f->timer_syncs ? 4 : 0;
  ck_assert_double_eq(launches, 128); /* 18 for the layer, 110 for the optimizer */
  ck_assert(f->pageable_bw > 0 && f->pageable_bw < PCIE);
  static const char *const pageable[] = {"platform.file=fast.xml", NULL};
  static const char *const pinned[] = {"platform.file=fast.xml", "tensor.rng_pinned=on", NULL};
  const char *const *sets[] = {pageable, pinned};
  const double rate[] = {f->pageable_bw, PCIE};
  char *dir = cli_tmpdir();
  cli_write(dir, "fast.xml", fast_gpu);
  for (int k = 0; k < 2; k++) {
    double want = launches * f->op_s + waits * f->sync_s + copies * (f->sync_s + f->rng_bytes / rate[k]);
    json_t *j = run_sets(dir, k ? "pinned" : "pageable", one_layer, sets[k]);
    ck_assert_double_le(fabs(tnum(j, "step_time_s") - want) / want, TOL_HOST_REL);
    json_decref(j);
  }
  free(dir);
}
END_TEST

/* The same layer on a V100 of dgx2h, whose kernels of this size are far shorter than a
 * launch: the GPU computes for a small part of the step and waits for its thread the rest;
 * without the framework the step is the GPU's work alone, many times shorter. */
START_TEST(test_host_short_kernels)
{
  static const char *const v100[] = {"platform.preset=dgx2h", "platform.hosts=1", "model.kernel_model=shapes", NULL};
  static const char *const none[] = {"platform.preset=dgx2h", "platform.hosts=1", "model.kernel_model=shapes",
                                     "model.framework=none", NULL};
  char *dir = cli_tmpdir();
  json_t *with = run_sets(dir, "with", one_layer, v100), *without = run_sets(dir, "without", one_layer, none);
  double step = tnum(with, "step_time_s"), alone = tnum(without, "step_time_s");
  char *bd = cli_read(dir, "with/breakdown.csv");
  double gpu = 0, host = 0;
  char *line = strstr(bd, "\ntensor-0,tensor,gpu-0,"), *hl = strstr(bd, "\ntensor-host-0,tensor-host,gpu-0-cpu,");
  ck_assert_ptr_nonnull(line);
  ck_assert_ptr_nonnull(hl);
  ck_assert_int_eq(sscanf(line + strlen("\ntensor-0,tensor,gpu-0,"), "%lf", &gpu), 1);
  ck_assert_int_eq(sscanf(hl + strlen("\ntensor-host-0,tensor-host,gpu-0-cpu,"), "%lf", &host), 1);
  ck_assert_double_lt(gpu, step / 2);         /* the GPU idles most of the step */
  ck_assert_double_le(host, step);            /* the step ends after its thread's last work */
  ck_assert_double_gt(step, 5 * alone);       /* 128 launches of 40 us against microseconds of kernels */
  free(bd);
  json_decref(with);
  json_decref(without);
  free(dir);
}
END_TEST

START_TEST(test_host_determinism)
{
  static const char *const two[] = {"platform.preset=dgx2h", "platform.hosts=2", "tensor.ranks=2",
                                    "tensor.layers=2", "tensor.vocab=512", "tensor.recompute=on",
                                    "model.kernel_model=shapes", NULL};
  char *dir = cli_tmpdir();
  json_t *a = run_sets(dir, "a", one_layer, two), *b = run_sets(dir, "b", one_layer, two);
  json_decref(a);
  json_decref(b);
  static const char *const files[] = {"summary.json", "breakdown.csv", "links.csv", "progress.csv"};
  cli_assert_same_files(dir, "a", "b", files, sizeof files / sizeof files[0]);
  free(dir);
}
END_TEST

START_TEST(test_host_bad_input)
{
  char *dir = cli_tmpdir();
  const char *era[] = {"run", "--set", "run.algorithm=tensor", "--set", "model.framework=pytorch-2030", "--out",
                       "out", NULL};
  cli_assert_bad_input(dir, era, "unknown framework");
  const char *alg[] = {"run", "--set", "run.algorithm=dataparallel", "--set", "model.framework=megatron-2019",
                       "--out", "out", NULL};
  cli_assert_bad_input(dir, alg, "model.framework");
  /* a GPU host without its host CPU, then a host CPU without pcie_bw */
  cli_write(dir, "nocpu.xml",
            "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
            "<platform version=\"4.1\">\n  <zone id=\"z\" routing=\"Full\">\n"
            "    <host id=\"g-0\" speed=\"1e12f\" core=\"1\"><prop id=\"mem_bw\" value=\"1e12\"/></host>\n"
            "  </zone>\n</platform>\n");
  const char *nocpu[] = {"run", "--set", "run.algorithm=tensor", "--set", "platform.file=nocpu.xml", "--set",
                         "model.numerics=off", "--set", "tensor.ranks=1", "--set", "model.framework=megatron-2019",
                         "--out", "out", NULL};
  cli_assert_bad_input(dir, nocpu, "g-0-cpu");
  cli_write(dir, "nopcie.xml",
            "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
            "<platform version=\"4.1\">\n  <zone id=\"z\" routing=\"Full\">\n"
            "    <host id=\"g-0\" speed=\"1e12f\" core=\"1\"><prop id=\"mem_bw\" value=\"1e12\"/></host>\n"
            "    <host id=\"g-0-cpu\" speed=\"1e9f\" core=\"1\"/>\n"
            "  </zone>\n</platform>\n");
  const char *nopcie[] = {"run", "--set", "run.algorithm=tensor", "--set", "platform.file=nopcie.xml", "--set",
                          "model.numerics=off", "--set", "tensor.ranks=1", "--set", "model.framework=megatron-2019",
                          "--out", "out", NULL};
  cli_assert_bad_input(dir, nopcie, "pcie_bw");
  free(dir);
}
END_TEST

static Suite *tensor_host_suite(void)
{
  Suite *s = suite_create("tensor_host");
  ADD_TCASE(s, "time", test_host_bound_step, test_host_short_kernels);
  ADD_TCASE(s, "determinism", test_host_determinism);
  ADD_TCASE(s, "input", test_host_bad_input);
  return s;
}

CHECK_MAIN(tensor_host_suite)

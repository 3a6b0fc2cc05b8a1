/* engine_build.c - the steps of engine_run's pipeline that read the scenario first: the
 * algorithm (its descriptor, algorithms/algorithm.h) and the hosts it needs, the memory
 * estimate (footprint.c) that refuses a run that cannot fit, SimGrid's options, and the
 * run's configuration with the algorithm's state; and the build's one free, whatever step
 * the pipeline stopped at. */
#include "sim/engine_build.h"

#include <string.h>
#include <unistd.h>
#include <xbt/asserts.h>

#include "algorithms/registry.h"
#include "models/arch.h"
#include "models/cost.h"
#include "models/framework.h"
#include "sim/footprint.h"
#include "sim/interrupt.h"
#include "sim/platform.h"

int engine_build_plan(engine_build *b, const scenario *sc, const engine_opts *o, int sg_argc, char **sg_argv)
{
  b->sc = sc;
  b->o = o;
  b->sg_argc = sg_argc;
  b->sg_argv = sg_argv;
  b->alg = algorithm_find(sc->run.algorithm);
  xbt_assert(b->alg != NULL, "run.algorithm '%s' passed validation", sc->run.algorithm);
  b->needed = b->alg->plan.hosts_needed(sc, algorithm_params(sc, b->alg), &b->needed_why);
  return footprint_check(sc, b->alg, b->needed, o->sg_argc, o->sg_argv, b->err, sizeof b->err);
}

int engine_build_options(engine_build *b)
{
  return platform_check_options(b->sg_argc, b->sg_argv, b->err, sizeof b->err);
}

/* The run's configuration as far as it is known before the platform is loaded. */
static void engine_build_config(const scenario *sc, const engine_build *b, run_config *cfg)
{
  memset(cfg, 0, sizeof(*cfg));
  cfg->sc = sc;
  cfg->seed = sc->run.seed;
  cfg->max_sim_time = sc->run.max_sim_time;
  cfg->max_steps = sc->run.max_steps;
  cfg->target_accuracy = sc->run.target_accuracy;
  cfg->eval_every = sc->run.eval_every;
  cfg->model = b->model;
  cfg->numerics = sc->model.numerics;
  cfg->train = b->train;
  cfg->test = b->test;
  cfg->noise_set = b->noise;
  cfg->curvature_rows = sc->run.curvature_examples;
  cfg->init = b->init;
  size_t sizes[SCENARIO_MAX_LAYERS];
  size_t n = (size_t)scenario_layers(sc->model.layers, sizes, SCENARIO_MAX_LAYERS);
  const arch *v = sc->model.virtual_net[0] ? arch_virtual_find(sc->model.virtual_net) : NULL;
  cfg->sim_params = v ? arch_params(v) : (double)net_n_params(b->model);
  cfg->train_flops = v ? arch_train_flops(v) : cost_mlp_train_flops(n, sizes);
  cfg->efficiency = sc->model.efficiency;
  cfg->kernel_shapes = sc->model.kernel_model == 0;
  cfg->framework = framework_find(sc->model.framework);
  cfg->comm_sms = sc->platform.comm_sms;
  cfg->speed_factor = sc->platform.speed_factor;
  cost_dtype dt = COST_FP32;
  cost_dtype_parse(sc->model.dtype, &dt);
  cfg->elem_bytes = cost_dtype_wire_bytes(dt);
  cfg->gemm_bytes = cost_dtype_bytes(dt);
  cfg->jitter = sc->platform.jitter;
  cfg->msg_overhead = sc->platform.msg_overhead;
  cfg->msg_byte_overhead = sc->platform.msg_byte_overhead;
  cfg->msg_cores = (size_t)sc->platform.msg_cores;
  cfg->msg_thread = sc->platform.msg_thread;
  scenario_stragglers(sc->faults.stragglers, &cfg->straggler_fraction, &cfg->straggler_slowdown);
}

int engine_build_state(engine_build *b)
{
  engine_build_config(b->sc, b, &b->cfg);
  b->state = b->alg->run.prepare(&b->cfg, b->err, sizeof b->err);
  return b->state ? 0 : -1;
}

void engine_build_free(engine_build *b)
{
  if (b->state)
    b->alg->run.free(b->state);
  net_free(b->model);
  data_free(b->train);
  if (b->init)
    gsl_vector_free(b->init);
  data_free(b->test);
  data_free(b->noise);
  data_teacher_free(b->teacher);
  if (b->tmpdir[0]) {
    unlink(b->platform);
    rmdir(b->tmpdir);
    interrupt_run_remove(NULL, NULL);
  }
}

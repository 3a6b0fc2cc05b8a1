/* engine_stage.c - the pipeline's steps once SimGrid starts (engine_build.h): SimGrid
 * started on the run's platform with its links scaled (placement.c) and the accounting on,
 * the run's hosts placed with their cores, fault plan (faultcfg.c) and speeds, checked
 * against the scenario and the algorithm, the actors deployed with the progress line
 * hooked to the evaluations, the one engine this process may have run, the results
 * written (engine_results.c), and what was set up torn down. */
#include "sim/engine_stage.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "algorithms/compute.h"
#include "algorithms/linkload.h"
#include "algorithms/msg.h"
#include "sim/energy.h"
#include "sim/engine_results.h"
#include "sim/faultcfg.h"
#include "sim/interrupt.h"
#include "sim/placement.h"
#include "sim/platform.h"
#include "sim/progress.h"

/* What the loaded platform adds to the build, from placement to the written results. */
typedef struct engine_stage {
  run_config cfg;   /* b->cfg with the hosts, cores, faults and speeds */
  sg_host_t *all;   /* the platform's hosts in order (platform_hosts_in_order) */
  size_t n_all;
  fault_plan plan;
  int faulty;       /* faultcfg_build's: 1 when plan holds events to clear */
  double *slowdown; /* the hosts' (placement_speeds), or NULL */
  progress prog;
  metrics *m;       /* from deployment on, or NULL */
} engine_stage;

/* The placed hosts against the scenario and the algorithm: cores, GPUs, the algorithm's
 * own check. Returns 0, or 1 with the problem in err. */
static int engine_stage_check_placed(const scenario *sc, const engine_build *b, run_config *cfg, int host_cores, char *err)
{
  if (cfg->cores > host_cores) {
    snprintf(err, ENGINE_ERRLEN, "platform.cores: %ld cores asked, but host %s has %d", sc->platform.cores,
             sg_host_get_name(cfg->hosts[0]), host_cores);
    return 1;
  }
  if (compute_check_gpus(cfg, err, ENGINE_ERRLEN) != 0)
    return 1;
  if (b->alg->run.check_hosts && b->alg->run.check_hosts(b->state, cfg, err, ENGINE_ERRLEN) != 0)
    return 1;
  return 0;
}

/* SimGrid started on the run's platform, its links scaled, the accounting on. */
static void engine_stage_load(const engine_build *b)
{
  int argc = b->sg_argc;
  simgrid_init(&argc, b->sg_argv);
  interrupt_run_catch(); /* over SimGrid's SIGINT handler (its actor listing and exit 1) */
  if (b->energy > 0) /* before the platform loads, as the plugins attach to hosts and links then */
    energy_plugins_init(b->energy_links);
  simgrid_load_platform(b->platform);
  placement_scale_links(b->sc);
  account_setup();
  account_trace_enable(b->o->trace);
}

/* The run's hosts on the loaded platform, their cores, the fault plan and the hosts'
 * speeds, into the stage's cfg, checked against the scenario and the algorithm. Returns
 * 0, or -1 with one line in err. */
static int engine_stage_place(const engine_build *b, engine_stage *s, char *err)
{
  const scenario *sc = b->sc;
  s->n_all = platform_hosts_in_order(b->platform, &s->all);
  if (sc->model.framework[0]) /* model.framework's host CPUs run the framework's threads alone */
    s->n_all = platform_drop_host_cpus(s->all, s->n_all);
  s->cfg = b->cfg;
  size_t n_banks = b->bank.hosts;
  if (n_banks) { /* the banks are the platform's last hosts; the run places the others */
    xbt_assert(s->n_all > n_banks && strncmp(sg_host_get_name(s->all[s->n_all - 1]), "bank-", 5) == 0,
               "the bank platform ends with its banks");
    s->n_all -= n_banks;
  }
  s->cfg.n_hosts = b->needed;
  s->cfg.hosts = placement_hosts(sc, s->all, s->n_all, b->needed);
  if (n_banks) { /* after the placed hosts, so that their traffic is counted on the links too */
    s->cfg.hosts = xbt_realloc(s->cfg.hosts, (b->needed + n_banks) * sizeof(*s->cfg.hosts));
    memcpy(s->cfg.hosts + b->needed, s->all + s->n_all, n_banks * sizeof(*s->cfg.hosts));
    s->cfg.banks = s->cfg.hosts + b->needed;
    s->cfg.n_banks = n_banks;
  }
  msg_traffic_init(s->cfg.hosts, s->cfg.n_hosts + n_banks);
  linkload_start(2 * (size_t)sc->run.link_windows); /* between run.link_windows and twice as many */
  int host_cores = sg_host_core_count(s->cfg.hosts[0]);
  s->cfg.cores = sc->platform.cores > 0 ? (int)sc->platform.cores : host_cores;
  s->faulty = faultcfg_build(sc, s->cfg.hosts, s->cfg.n_hosts, s->all, s->n_all, &s->plan, err, ENGINE_ERRLEN);
  if (s->faulty < 0 || engine_stage_check_placed(sc, b, &s->cfg, host_cores, err) != 0)
    return -1;
  s->cfg.speed_factor = (s->cfg.speed_factor > 0 ? s->cfg.speed_factor : 1) * compute_dtype_factor(&s->cfg, s->cfg.hosts[0]);
  if (b->energy > 0 ? energy_prepare(s->cfg.hosts, s->cfg.n_hosts, sc->platform.power_cap, err, ENGINE_ERRLEN) != 0
                    : sc->platform.power_cap > 0) {
    if (b->energy <= 0)
      snprintf(err, ENGINE_ERRLEN, "platform.power_cap: the platform carries no power states (wattage_per_state and "
               "gpu_power_limits; the dgx-h100, dgx-b200 and gb200-nvl72 presets have them)");
    return -1;
  }
  s->cfg.faults = s->faulty > 0 ? &s->plan : NULL;
  s->slowdown = placement_speeds(sc, faultcfg_slowdown(sc, s->cfg.n_hosts), s->cfg.n_hosts);
  s->cfg.host_slowdown = s->slowdown;
  return 0;
}

/* The algorithm's actors and the fault events on the stage, the progress meter hooked to
 * the evaluations and to the accounting's tick. */
static void engine_stage_deploy(const engine_build *b, engine_stage *s)
{
  const scenario *sc = b->sc;
  const engine_opts *o = b->o;
  const algorithm *alg = b->alg;
  /* a run ended by run.max_steps has no end in simulated time to estimate against */
  s->prog = (progress){.tty = isatty(2), .bound = sc->run.max_sim_time, .warn = !o->quiet && sc->run.max_steps == 0,
                       .may_end_sooner = sc->run.max_steps > 0 || sc->run.target_accuracy > 0,
                       .loss_name = alg->loss_name};
  s->prog.draw = !o->quiet && (s->prog.tty || o->progress);
  progress_begin(&s->prog);
  if (s->prog.draw) {
    s->cfg.on_eval = progress_show;
    s->cfg.on_eval_ctx = &s->prog;
  }
  if (!o->quiet)
    account_set_tick(progress_tick, &s->prog);
  s->m = metrics_create(alg->run.metrics_slots ? alg->run.metrics_slots(b->state, &s->cfg) : 1);
  alg->run.deploy(b->state, &s->cfg, s->m);
  if (s->cfg.faults)
    faults_start(s->cfg.faults, &s->cfg, s->m);
}

/* What engine_place and engine_deploy set up, as far as they got. */
static void engine_stage_unload(engine_build *b, engine_stage *s)
{
  msg_traffic_free();
  linkload_stop();
  account_teardown();
  if (s->m) {
    b->alg->run.free(b->state);
    b->state = NULL;
    metrics_free(s->m);
  }
  if (s->faulty > 0)
    faults_clear(&s->plan);
  xbt_free(s->slowdown);
  xbt_free(s->cfg.hosts);
  xbt_free(s->all);
}

/* Runs the simulation and writes the results; the closing line goes into closing (empty
 * with --quiet or when nothing was written). Returns the exit status. */
int engine_stage_run(engine_build *b, char *closing, size_t closing_len)
{
  engine_stage s = {0};
  engine_stage_load(b);
  int rc = engine_stage_place(b, &s, b->err) == 0 ? 0 : 2;
  if (rc == 2)
    fprintf(stderr, "dtsim: %s\n", b->err);
  if (rc == 0) {
    engine_stage_deploy(b, &s);
    simgrid_run();
    account_set_tick(NULL, NULL);
    progress_end(&s.prog);
    rc = engine_results_write(b, &s.cfg, s.m, closing, closing_len);
  }
  engine_stage_unload(b, &s);
  return rc;
}

/* engine.c - one simulation, from a validated scenario to its result folder.
 *
 * engine_run is a short sequence of steps. Build: the algorithm's descriptor
 * (algorithms/algorithm.h) says how many hosts it needs, the memory estimate
 * (footprint.c) refuses a run that cannot fit, then come the model, the data, the
 * warmstart, the algorithm's state and the platform file, each checked where a user can
 * get it wrong, all before SimGrid starts (it aborts on what it refuses). Simulate: load
 * the platform, place the hosts (placement.c), deploy the actors, run the one engine this
 * process may have, gather and write the results. Conclude: the --expect verdict and the
 * closing line. Every failure is one line on stderr and exit status 2; what was built is
 * freed on one path whatever the step that failed. */
#include "sim/engine.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/compute.h"
#include "algorithms/account.h"
#include "algorithms/registry.h"
#include "algorithms/msg.h"
#include "models/arch.h"
#include "models/cost.h"
#include "models/minibatch.h"
#include "models/rng.h"
#include "sim/faultcfg.h"
#include "sim/footprint.h"
#include "sim/interrupt.h"
#include "sim/output.h"
#include "sim/placement.h"
#include "sim/platform.h"
#include "sim/progress.h"
#include "sim/wallclock.h"

#define ERRLEN 1024

typedef struct build {
  const algorithm *alg;
  void *state;            /* the algorithm's, from its prepare */
  net *model;
  dataset *train, *test;
  data_teacher *teacher;  /* data.stream: the teacher training draws come from, or NULL */
  gsl_vector *init;       /* the warmstart's parameters, or NULL */
  char tmpdir[64];        /* holds a generated preset, removed at the end */
  char platform[4096];
  size_t needed;          /* hosts the algorithm needs */
  const char *needed_why; /* how it counts them */
  run_config cfg;         /* everything but the hosts, before the platform is loaded */
  algorithm_bank bank;    /* a parameter-server bank, when the algorithm asks and the platform takes one */
} build;

static int engine_fail(const char *text)
{
  fprintf(stderr, "dtsim: %s\n", text);
  return 2;
}

/* The network model.type and model.layers describe: 0, or -1 with one line in err. */
static int build_model(const scenario *sc, build *b, char *err)
{
  size_t sizes[SCENARIO_MAX_LAYERS];
  size_t n = (size_t)scenario_layers(sc->model.layers, sizes, SCENARIO_MAX_LAYERS);
  net_act act = NET_ACT_TANH;
  net_act_parse(sc->model.activation, &act);
  net_loss loss = NET_LOSS_SOFTMAX;
  if (strcmp(sc->model.type, "linear") == 0)
    loss = NET_LOSS_MSE;
  else if (strcmp(sc->model.type, "logistic") == 0)
    loss = NET_LOSS_LOGISTIC;
  b->model = net_create(n, sizes, act, loss);
  if (b->model == NULL)
    snprintf(err, ERRLEN, "model: cannot build this network (check model.type and model.layers)");
  return b->model ? 0 : -1;
}

/* Classes a synthetic data set gets for this model: regression for linear models. */
static size_t engine_model_classes(const net *m)
{
  switch (net_get_loss(m)) {
  case NET_LOSS_MSE:
    return 0;
  case NET_LOSS_LOGISTIC:
    return 2;
  case NET_LOSS_SOFTMAX:
    break;
  }
  return net_n_outputs(m);
}

static int engine_check_labels(const dataset *d, const net *m, const char *path, char *err)
{
  net_loss loss = net_get_loss(m);
  if (data_dim(d) != net_n_inputs(m)) {
    snprintf(err, ERRLEN, "%s: the data has %zu features but model.layers starts with %zu inputs", path,
             data_dim(d), net_n_inputs(m));
    return -1;
  }
  if (loss == NET_LOSS_MSE)
    return 0;
  size_t room = loss == NET_LOSS_LOGISTIC ? 2 : net_n_outputs(m);
  if (d->n_classes == 0 || d->n_classes > room) {
    snprintf(err, ERRLEN, "%s: the labels %s, but the model has room for %zu classes", path,
             d->n_classes ? "have more classes" : "are not class indices", room);
    return -1;
  }
  return 0;
}

/* The training and held-out sets, when the run computes with data: generated from the
 * seed, or read from data.source and split. 0, or -1 with one line in err. */
static int build_data(const scenario *sc, build *b, char *err)
{
  if (!sc->model.numerics || !b->alg->uses_data)
    return 0;
  size_t dim = net_n_inputs(b->model), classes = engine_model_classes(b->model);
  if (strncmp(sc->data.source, "synthetic-", 10) == 0) {
    size_t ntr = (size_t)sc->data.train, nte = (size_t)sc->data.test;
    int teacher = strcmp(sc->data.source, "synthetic-teacher") == 0;
    gsl_rng *r = rng_create(sc->run.seed, RNG_ROLE_DATA, 0);
    data_teacher *t = teacher ? data_teacher_create(dim, (size_t)sc->data.teacher_hidden, classes,
                                                    sc->data.label_noise, r)
                              : NULL;
    if (t && data_teacher_set_decay(t, sc->data.input_decay) != 0)
      xbt_die("data.input_decay: checked by the scenario");
    if (t && sc->data.stream) { /* the held-out set first: the same whatever data.train */
      b->test = data_teacher_sample(t, nte, r);
      b->train = data_teacher_sample(t, ntr, r);
      gsl_rng_free(r);
      data_set_stream(b->train, t);
      b->teacher = t;
      return 0;
    }
    dataset *all = teacher ? (t ? data_teacher_sample(t, ntr + nte, r) : NULL)
                           : data_synthetic_gaussian(ntr + nte, dim, classes, sc->data.separation, r);
    gsl_rng_free(r);
    if (all == NULL) {
      data_teacher_free(t);
      snprintf(err, ERRLEN, "data.source: cannot generate %s data for this model", sc->data.source);
      return -1;
    }
    b->train = data_slice(all, 0, ntr);
    b->test = data_slice(all, ntr, ntr + nte);
    data_free(all);
    data_teacher_free(t);
    return 0;
  }
  const char *path = strchr(sc->data.source, ':') + 1;
  dataset *all = strncmp(sc->data.source, "libsvm:", 7) == 0 ? data_load_libsvm(path, err, ERRLEN)
                                                         : data_load_csv(path, err, ERRLEN);
  if (all == NULL)
    return -1;
  int rc = engine_check_labels(all, b->model, path, err);
  if (rc == 0) {
    gsl_rng *r = rng_create(sc->run.seed, RNG_ROLE_SPLIT, 0);
    rc = data_split(all, sc->data.test_fraction, r, &b->train, &b->test);
    gsl_rng_free(r);
    if (rc != 0)
      snprintf(err, ERRLEN, "%s: %zu examples are too few to split with test_fraction %g", path, data_n(all),
               sc->data.test_fraction);
  }
  data_free(all);
  return rc;
}

/* The run's configuration as far as it is known before the platform is loaded. */
static void engine_config(const scenario *sc, const build *b, run_config *cfg)
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
  cfg->init = b->init;
  size_t sizes[SCENARIO_MAX_LAYERS];
  size_t n = (size_t)scenario_layers(sc->model.layers, sizes, SCENARIO_MAX_LAYERS);
  const arch *v = sc->model.virtual_net[0] ? arch_virtual_find(sc->model.virtual_net) : NULL;
  cfg->sim_params = v ? arch_params(v) : (double)net_n_params(b->model);
  cfg->train_flops = v ? arch_train_flops(v) : cost_mlp_train_flops(n, sizes);
  cfg->efficiency = sc->model.efficiency;
  cfg->kernel_shapes = sc->model.kernel_model == 0;
  cfg->comm_sms = sc->platform.comm_sms;
  cfg->speed_factor = sc->platform.speed_factor;
  cost_dtype dt = COST_FP32;
  cost_dtype_parse(sc->model.dtype, &dt);
  cfg->elem_bytes = cost_dtype_bytes(dt);
  cfg->jitter = sc->platform.jitter;
  cfg->msg_overhead = sc->platform.msg_overhead;
  cfg->msg_cores = (size_t)sc->platform.msg_cores;
  scenario_stragglers(sc->faults.stragglers, &cfg->straggler_fraction, &cfg->straggler_slowdown);
}

/* The algorithm's bank (algorithm_plan's bank) against the platform: only a generated fat
 * tree with pooled uplinks takes one (platform_write_pooled); else a bank that was asked
 * for is an error and an automatic one falls back to the exact model. spec NULL: the
 * user's platform file; else the bank goes into it. */
static int build_bank(build *b, platform_spec *spec, char *err)
{
  if (b->bank.hosts == 0)
    return 0;
  if (spec && spec->pooled && platform_pooled_fits(spec)) {
    spec->banks = b->bank.hosts;
    spec->bank_scale = b->bank.scale;
    spec->control_net = b->bank.control_net;
    return 0;
  }
  if (b->bank.asked) {
    int fits = spec && platform_pooled_fits(spec);
    snprintf(err, ERRLEN, "%s: the bank runs on a generated fat tree with pooled uplinks; %s%s%s", b->bank.why,
             fits ? "set platform.uplink_routing = pooled" : spec ? "this preset is not one: set " : "a platform.file's "
             "routes cannot be pooled: set ", fits ? "" : b->alg->name, fits ? "" : ".ps_bank = exact");
    return -1;
  }
  b->bank.hosts = 0;
  b->bank.control_net = 0;
  return 0;
}

/* Writes the preset into a private temporary folder, or uses the user's file. */
static int build_platform(const scenario *sc, build *b, char *err)
{
  if (b->alg->plan.bank)
    b->alg->plan.bank(sc, algorithm_params(sc, b->alg), &b->bank);
  if (sc->platform.file[0]) {
    snprintf(b->platform, sizeof(b->platform), "%s", sc->platform.file);
    return build_bank(b, NULL, err);
  }
  platform_spec spec;
  size_t hosts = sc->platform.hosts > 0 ? (size_t)sc->platform.hosts : b->needed;
  if (platform_preset(sc->platform.preset, hosts, &spec) != 0) {
    snprintf(err, ERRLEN, "platform.preset: unknown preset '%s' (see dtsim list)", sc->platform.preset);
    return -1;
  }
  if (sc->platform.gen_topology[0]) { /* as `dtsim platform PRESET --topology T` */
    xbt_assert(platform_topology_parse(sc->platform.gen_topology, &spec.topology) == 0, "validated topology");
    spec.gpus_per_node = 0;
    if (spec.topology != PLATFORM_FAT_TREE)
      spec.hosts_per_rack = spec.uplinks = 0;
  }
  if (sc->platform.host_cores > 0)
    spec.cores = (int)sc->platform.host_cores;
  if (sc->platform.sharing[0])
    spec.sharing = platform_sharing_parse(sc->platform.sharing);
  if (!sc->platform.link_efficiency)
    spec.bw_eff = spec.node_bw_eff = 0; /* the nominal link bandwidths */
  spec.pooled = strcmp(sc->platform.uplink_routing, "pooled") == 0;
  if (build_bank(b, &spec, err) != 0)
    return -1;
  snprintf(b->tmpdir, sizeof(b->tmpdir), "/tmp/dtsim-XXXXXX");
  interrupt_run_hold(1, NULL); /* a signal now finds the folder and file to remove */
  if (mkdtemp(b->tmpdir) == NULL) {
    interrupt_run_hold(0, NULL);
    snprintf(err, ERRLEN, "cannot create a temporary folder: %s", strerror(errno));
    b->tmpdir[0] = '\0';
    return -1;
  }
  snprintf(b->platform, sizeof(b->platform), "%s/%s.xml", b->tmpdir, sc->platform.preset);
  interrupt_run_remove(b->platform, b->tmpdir);
  interrupt_run_hold(0, NULL);
  FILE *f = fopen(b->platform, "w");
  if (f == NULL) {
    snprintf(err, ERRLEN, "%s: cannot write: %s", b->platform, strerror(errno));
    return -1;
  }
  int rc = platform_write(&spec, f, err, ERRLEN);
  if (fclose(f) != 0 && rc == 0) {
    snprintf(err, ERRLEN, "%s: cannot write: %s", b->platform, strerror(errno));
    rc = -1;
  }
  return rc;
}

static void build_free(build *b)
{
  if (b->state)
    b->alg->run.free(b->state);
  net_free(b->model);
  data_free(b->train);
  if (b->init)
    gsl_vector_free(b->init);
  data_free(b->test);
  data_teacher_free(b->teacher);
  if (b->tmpdir[0]) {
    unlink(b->platform);
    rmdir(b->tmpdir);
    interrupt_run_remove(NULL, NULL);
  }
}

/* ---- the run --------------------------------------------------------------- */

/* What the loaded platform adds to the build, from placement to the written results. */
typedef struct stage {
  run_config cfg;   /* b->cfg with the hosts, cores, faults and speeds */
  sg_host_t *all;   /* the platform's hosts in order (platform_hosts_in_order) */
  size_t n_all;
  fault_plan plan;
  int faulty;       /* faultcfg_build's: 1 when plan holds events to clear */
  double *slowdown; /* the hosts' (placement_speeds), or NULL */
  progress prog;
  metrics *m;       /* from deployment on, or NULL */
} stage;

/* SimGrid's argv: the user's options after ours, so theirs win. */
static char **engine_simgrid_args(const engine_opts *o, int *argc)
{
  char **argv = xbt_malloc0(((size_t)o->sg_argc + 4) * sizeof(char *));
  int n = 0;
  argv[n++] = o->sg_argc > 0 ? o->sg_argv[0] : "dtsim";
  argv[n++] = "--log=no_loc";
  argv[n++] = "--log=xbt_cfg.thres:warning";
#ifdef DTSIM_SANITIZE
  argv[n++] = "--cfg=contexts/factory:thread";
#endif
  for (int i = 1; i < o->sg_argc; i++)
    argv[n++] = o->sg_argv[i];
  argv[n] = NULL;
  *argc = n;
  return argv;
}

/* The closing line's text when the algorithm has none of its own: what ran, its loss and
 * accuracy when it measures them, then the common figures (report_perf_text). */
static void engine_common_closing(const scenario *sc, const report_outcome *o, char *line, size_t len)
{
  int n = snprintf(line, len, "%s %s: %.6g simulated s, %ld step%s", sc->run.algorithm, o->status, o->sim_time, o->steps,
                   o->steps == 1 ? "" : "s");
  if (o->evaluated && o->has_loss)
    n += snprintf(line + n, len - (size_t)n, ", loss %.6g", o->loss);
  if (o->evaluated && o->has_accuracy)
    n += snprintf(line + n, len - (size_t)n, ", accuracy %.6g", o->accuracy);
  char perf[400];
  report_perf_text(&o->perf, 1, perf, sizeof perf);
  if (perf[0])
    snprintf(line + n, len - (size_t)n, "; %s", perf);
}

/* The network model SimGrid runs the platform under into buf, as SimGrid picks it: the last
 * --cfg=network/model, else the platform file's <config> (a preset's generated file has
 * one), else SimGrid 3.32's default, LV08. 3.32's C API reads no string option back
 * (sg_cfg_get_* has int, double and boolean only), so the same order is followed here. */
static void engine_network_model(const build *b, const engine_opts *o, char *buf, size_t len)
{
  const char *cfg = platform_cfg_value(o->sg_argc, o->sg_argv, "network/model");
  buf[0] = '\0';
  if (cfg)
    snprintf(buf, len, "%s", cfg);
  else if (b->platform[0])
    platform_file_model(b->platform, buf, len);
  if (buf[0] == '\0')
    snprintf(buf, len, "LV08");
}

/* Below this many percentage points the rest of a worker's time is the rounding of its
 * summed shares (about 1e-15 of 100 measured; 1e-9 leaves six orders of margin). */
#define ENGINE_IDLE_ROUNDING_PCT 1e-9

/* The "performance" block from the algorithm's report and the breakdown. */
static void engine_perf(const run_result *res, const report *rep, const run_config *cfg, report_perf *p)
{
  double t = res->sim_time;
  p->step_time_s = isfinite(rep->step_time_s) ? rep->step_time_s
                  : rep->step_workers > 0 && res->steps > 0 ? t * (double)rep->step_workers / (double)res->steps
                                                            : NAN;
  p->step = rep->step;
  p->examples_per_s = rep->examples > 0 && t > 0 ? (double)rep->examples / t : NAN;
  double devices = (double)(rep->devices ? rep->devices : res->hosts_used);
  double ft = isfinite(rep->flops_time_s) ? rep->flops_time_s : t;
  p->tflops_per_device = isfinite(rep->model_flops) && ft > 0 ? rep->model_flops / ft / devices / 1e12 : NAN;
  p->peak_tflops_per_device = sg_host_get_speed(cfg->hosts[0]) * cfg->cores * cfg->speed_factor / 1e12;
  p->mfu = p->tflops_per_device / p->peak_tflops_per_device;
  p->worker_role = rep->worker_role ? rep->worker_role : res->n_actors ? res->actors[0].role : NULL;
  p->compute_pct = p->comm_pct = p->exposed_comm_pct = p->idle_pct = NAN;
  size_t n = 0;
  double c = 0, w = 0, x = 0;
  for (size_t i = 0; p->worker_role && i < res->n_actors; i++)
    if (strcmp(res->actors[i].role, p->worker_role) == 0) {
      n++;
      c += res->actors[i].compute_s;
      w += res->actors[i].comm_s;
      x += res->actors[i].exposed_comm_s;
    }
  if (n > 0 && t > 0) {
    p->compute_pct = 100 * c / ((double)n * t);
    p->comm_pct = 100 * w / ((double)n * t);
    p->exposed_comm_pct = 100 * x / ((double)n * t);
    /* the rest, so that the three add up to 100%: waits declared idle (a pipeline's bubble),
     * the time after an actor has ended before the run did, and any wait that is neither an
     * execution nor a communication; 0 when compute and comm overlap (an asynchronous
     * execution behind a wait) and together exceed the run, or differ from it by the
     * sums' rounding only (1e-15 of a busy data-parallel replica's time, not "idle 1.8e-15%") */
    double rest = 100 - p->compute_pct - p->comm_pct;
    p->idle_pct = rest > ENGINE_IDLE_ROUNDING_PCT ? rest : 0;
  } else
    p->worker_role = NULL;
}

/* The placed hosts against the scenario and the algorithm: cores, GPUs, the algorithm's
 * own check. Returns 0, or 1 with the problem in err. */
static int engine_check_placed(const scenario *sc, const build *b, run_config *cfg, int host_cores, char *err)
{
  if (cfg->cores > host_cores) {
    snprintf(err, ERRLEN, "platform.cores: %ld cores asked, but host %s has %d", sc->platform.cores,
             sg_host_get_name(cfg->hosts[0]), host_cores);
    return 1;
  }
  if (compute_check_gpus(cfg, err, ERRLEN) != 0)
    return 1;
  if (b->alg->run.check_hosts && b->alg->run.check_hosts(b->state, cfg, err, ERRLEN) != 0)
    return 1;
  return 0;
}

/* After simgrid_run: what the outputs are written from, into *res. Returns its report and
 * into *links its links, which engine_gather_free frees. */
static report *engine_gather(const scenario *sc, const build *b, const engine_opts *o, run_config *cfg, metrics *m,
                             run_result *res, link_stat **links)
{
  const algorithm *alg = b->alg;
  *res = (run_result){0};
  res->sc = sc;
  res->m = m;
  res->sim_time = simgrid_get_clock();
  if (cfg->faults && cfg->faults->stopped) /* messages on the wire outlive a stopped run */
    res->sim_time = cfg->faults->stopped_at;
  res->steps = metrics_total_steps(m);
  report *rep = report_create();
  if (alg->run.report)
    alg->run.report(b->state, cfg, m, rep);
  res->rep = rep;
  for (size_t i = 0; i < rep->n_files; i++) { /* sim/output replaces a previous run's files by these names */
    const char *f = alg->files ? strstr(alg->files, rep->files[i].name) : NULL;
    size_t n = strlen(rep->files[i].name);
    xbt_assert(f && (f == alg->files || f[-1] == ' ') && (f[n] == '\0' || f[n] == ' '),
               "%s writes %s, which its descriptor's files do not list", alg->name, rep->files[i].name);
  }
  res->faults = cfg->faults;
  res->bytes_total = msg_bytes_sent();
  res->hosts_used = b->needed;
  res->status = metrics_status_name(metrics_get_status(m));
  *links = placement_links(res->sim_time, cfg->hosts, cfg->n_hosts + cfg->n_banks, &res->n_links);
  res->n_actors = account_breakdown(res->sim_time, &res->actors);
  engine_network_model(b, o, res->network_model, sizeof res->network_model);
  engine_perf(res, rep, cfg, &res->perf);
  size_t ne = metrics_n_evals(m);
  for (size_t i = 0; i < ne; i++) { /* measured: a number in some evaluation (a diverged loss is one too) */
    res->has_loss |= !isnan(metrics_eval_at(m, i)->loss);
    res->has_accuracy |= !isnan(metrics_eval_at(m, i)->accuracy);
  }
  res->has_loss |= metrics_get_status(m) == METRICS_DIVERGED;
  if (o->trace)
    res->n_trace_ev = account_trace(&res->trace_ev);
  res->links = *links;
  return rep;
}

/* The closing line of a written run into closing (the algorithm's, or the common one). */
static void engine_closing_line(const scenario *sc, const build *b, const engine_opts *o, run_config *cfg,
                         const run_result *res, char *closing, size_t closing_len)
{
  metrics *m = res->m;
  size_t ne = metrics_n_evals(m);
  const metrics_eval *last = ne ? metrics_eval_at(m, ne - 1) : NULL;
  /* a missed target says which: summary.json's status stays the bare name */
  char status[128];
  if (metrics_get_status(m) == METRICS_TARGET_MISSED && last && !isnan(last->accuracy))
    snprintf(status, sizeof status, "%s (accuracy %.4g < target %.4g)", res->status, last->accuracy,
             sc->run.target_accuracy);
  else if (metrics_get_status(m) == METRICS_TARGET_MISSED)
    snprintf(status, sizeof status, "%s (target %.4g, no accuracy measured)", res->status, sc->run.target_accuracy);
  else
    snprintf(status, sizeof status, "%s", res->status);
  report_outcome out = {status, res->sim_time, res->steps, last != NULL, last ? last->loss : NAN,
                        last ? last->accuracy : NAN, res->has_loss, res->has_accuracy, res->perf};
  char line[1024];
  if (b->alg->run.closing)
    b->alg->run.closing(b->state, cfg, &out, line, sizeof line);
  else
    engine_common_closing(sc, &out, line, sizeof line);
  snprintf(closing, closing_len, "dtsim: %s -> %s/\n", line, o->out_dir);
}

/* What engine_gather allocated. */
static void engine_gather_free(link_stat *links, size_t n_links, report *rep)
{
  placement_links_free(links, n_links);
  report_free(rep);
}

/* SimGrid started on the run's platform, its links scaled, the accounting on. */
static void engine_load(const scenario *sc, const build *b, const engine_opts *o, int argc, char **argv)
{
  simgrid_init(&argc, argv);
  interrupt_run_catch(); /* over SimGrid's SIGINT handler (its actor listing and exit 1) */
  simgrid_load_platform(b->platform);
  placement_scale_links(sc);
  account_setup();
  account_trace_enable(o->trace);
}

/* The run's hosts on the loaded platform, their cores, the fault plan and the hosts'
 * speeds, into the stage's cfg, checked against the scenario and the algorithm. Returns
 * 0, or -1 with one line in err. */
static int engine_place(const scenario *sc, const build *b, stage *s, char *err)
{
  s->n_all = platform_hosts_in_order(b->platform, &s->all);
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
  int host_cores = sg_host_core_count(s->cfg.hosts[0]);
  s->cfg.cores = sc->platform.cores > 0 ? (int)sc->platform.cores : host_cores;
  s->faulty = faultcfg_build(sc, s->cfg.hosts, s->cfg.n_hosts, s->all, s->n_all, &s->plan, err, ERRLEN);
  if (s->faulty < 0 || engine_check_placed(sc, b, &s->cfg, host_cores, err) != 0)
    return -1;
  s->cfg.faults = s->faulty > 0 ? &s->plan : NULL;
  s->slowdown = placement_speeds(sc, faultcfg_slowdown(sc, s->cfg.n_hosts), s->cfg.n_hosts);
  s->cfg.host_slowdown = s->slowdown;
  return 0;
}

/* The algorithm's actors and the fault events on the stage, the progress line hooked to
 * the evaluations. */
static void engine_deploy(const scenario *sc, const build *b, const engine_opts *o, stage *s)
{
  const algorithm *alg = b->alg;
  s->prog = (progress){.tty = isatty(2), .bound = sc->run.max_sim_time,
                       .may_end_sooner = sc->run.max_steps > 0 || sc->run.target_accuracy > 0,
                       .loss_name = alg->loss_name, .start = wallclock_seconds()};
  if (!o->quiet && (s->prog.tty || o->progress)) {
    s->cfg.on_eval = progress_show;
    s->cfg.on_eval_ctx = &s->prog;
  }
  s->m = metrics_create(alg->run.metrics_slots ? alg->run.metrics_slots(b->state, &s->cfg) : 1);
  alg->run.deploy(b->state, &s->cfg, s->m);
  if (s->cfg.faults)
    faults_start(s->cfg.faults, &s->cfg, s->m);
}

/* After simgrid_run: the result folder written whole or not at all, and the closing line
 * into closing (empty with --quiet or when nothing was written). Returns the exit status. */
static int engine_write(const scenario *sc, const build *b, const engine_opts *o, stage *s, char *closing,
                        size_t closing_len)
{
  char err[ERRLEN];
  run_result res;
  link_stat *links;
  report *rep = engine_gather(sc, b, o, &s->cfg, s->m, &res, &links);
  interrupt_run_hold(1, NULL); /* the result folder is written whole or not at all */
  int rc = output_write_all(o->out_dir, &res, err, ERRLEN) == 0 ? 0 : engine_fail(err);
  interrupt_run_hold(0, rc == 0 ? o->out_dir : NULL);
  if (rc == 0 && !o->quiet)
    engine_closing_line(sc, b, o, &s->cfg, &res, closing, closing_len);
  if (rc == 0 && metrics_get_status(s->m) != METRICS_OK)
    rc = 1;
  engine_gather_free(links, res.n_links, rep);
  return rc;
}

/* What engine_place and engine_deploy set up, as far as they got. */
static void engine_unload(build *b, stage *s)
{
  msg_traffic_free();
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
static int engine_simulate(const scenario *sc, build *b, const engine_opts *o, int argc, char **argv, char *closing,
                    size_t closing_len)
{
  char err[ERRLEN];
  stage s = {0};
  engine_load(sc, b, o, argc, argv);
  int rc = engine_place(sc, b, &s, err) == 0 ? 0 : engine_fail(err);
  if (rc == 0) {
    engine_deploy(sc, b, o, &s);
    simgrid_run();
    if (s.prog.shown)
      fputc('\n', stderr);
    rc = engine_write(sc, b, o, &s, closing, closing_len);
  }
  engine_unload(b, &s);
  return rc;
}

/* SimGrid 3.32 tears its ns-3 network model down at exit, after main, and ns-3 crashes
 * there (a segmentation fault in ns3::Simulator::Destroy) once a run has used it: its
 * results are complete by then. So a run under ns-3 ends in engine_run, its output flushed. */
static int engine_uses_ns3(const build *b, const engine_opts *o)
{
  char model[64];
  engine_network_model(b, o, model, sizeof model);
  return strcmp(model, "ns-3") == 0;
}

/* The warmstart's parameters (model.warmstart_steps), trained before the run: 0, or -1
 * with one line in err. */
static int build_warmstart(const scenario *sc, build *b, char *err)
{
  if (sc->model.warm_steps <= 0)
    return 0;
  b->init = minibatch_warmstart(b->model, b->train, (size_t)sc->model.warm_batch, sc->model.warm_lr,
                                sc->model.warm_steps, sc->run.seed);
  if (b->init != NULL)
    return 0;
  snprintf(err, ERRLEN, "model.warmstart_steps: the warmstart cannot train this model on this data");
  return -1;
}

/* The algorithm's state from the run's configuration (its prepare hook): 0, or -1 with
 * one line in err. */
static int build_state(const scenario *sc, build *b, char *err)
{
  engine_config(sc, b, &b->cfg);
  b->state = b->alg->run.prepare(&b->cfg, err, ERRLEN);
  return b->state ? 0 : -1;
}

/* The platform's hosts against the run's: enough of them, and every one the run will
 * use reachable at a positive speed (platform_check_use). 0, or -1 with one line in err. */
static int engine_check_hosts(const scenario *sc, const build *b, int argc, char **argv, char *err)
{
  platform_use use = {b->needed, strcmp(sc->platform.placement, "spread") == 0};
  long hosts = platform_check_use(b->platform, argc, argv, &use, err, ERRLEN);
  if (hosts < 0)
    return -1;
  if ((size_t)hosts >= b->needed)
    return 0;
  snprintf(err, ERRLEN, "%s: the platform has %ld host%s, the run needs %zu (%s)",
           sc->platform.file[0] ? sc->platform.file : sc->platform.preset, hosts, hosts == 1 ? "" : "s", b->needed,
           b->needed_why);
  return -1;
}

/* Everything a user can get wrong, checked before SimGrid starts, and what the run is
 * made of, in b: the algorithm and the hosts it needs, the model, the data, the
 * warmstart, the algorithm's state and the platform file. Returns 0, or -1 with one line
 * in err. */
static int build_all(const scenario *sc, const engine_opts *o, int argc, char **argv, build *b, char *err)
{
  b->alg = algorithm_find(sc->run.algorithm);
  xbt_assert(b->alg != NULL, "run.algorithm '%s' passed validation", sc->run.algorithm);
  b->needed = b->alg->plan.hosts_needed(sc, algorithm_params(sc, b->alg), &b->needed_why);
  if (footprint_check(sc, b->alg, b->needed, o->sg_argc, o->sg_argv, err, ERRLEN) != 0 ||
      build_model(sc, b, err) != 0 || platform_check_options(argc, argv, err, ERRLEN) != 0 ||
      build_data(sc, b, err) != 0 || build_warmstart(sc, b, err) != 0 || build_state(sc, b, err) != 0 ||
      build_platform(sc, b, err) != 0 || engine_check_hosts(sc, b, argc, argv, err) != 0)
    return -1;
  if (b->bank.hosts && !o->quiet)
    fprintf(stderr, "dtsim: %s: the shards run as %zu bank host%s of %g shards' links and cores at the core of "
            "the fat tree%s (algorithms/doc/%s.md, Bank)\n", b->bank.why, b->bank.hosts, b->bank.hosts == 1 ? "" : "s",
            b->bank.scale, b->bank.control_net ? ", the hosts' messages to one another on a control network" : "",
            b->alg->name);
  return 0;
}

/* After a run that wrote its results (rc 0 or 1): the --expect verdict, and the closing
 * line when there is no verdict or it matched. Returns the exit status. */
static int engine_conclude(const engine_opts *o, int rc, const char *closing)
{
  char err[ERRLEN];
  if (o->bounds) { /* --assert: the bounds replace --expect's whole-file comparison */
    size_t n = bounds_count(o->bounds);
    if (bounds_verdict(o->bounds, o->out_dir, o->expected ? o->expected->json : NULL, stderr) > 0)
      return 1;
    if (!o->quiet)
      printf("%sdtsim: --assert: %s%zu bound%s\n", closing, n == 1 ? "" : "all ", n, n == 1 ? " holds" : "s hold");
    return rc;
  }
  if (!o->expected) {
    fputs(closing, stdout);
    return rc;
  }
  if (output_expect_compare(o->out_dir, o->expected, o->rtol, err, ERRLEN) != 0) {
    fprintf(stderr, "dtsim: --expect %s: MISMATCH: %s (this run's results: %s/)\n", o->expect, err, o->out_dir);
    return 1;
  }
  if (!o->quiet) {
    fputs(closing, stdout);
    if (o->rtol > 0)
      printf("dtsim: --expect %s: matches (numbers within rtol %g)\n", o->expect, o->rtol);
    else
      printf("dtsim: --expect %s: matches exactly\n", o->expect);
  }
  return rc;
}

int engine_run(const scenario *sc, const engine_opts *o)
{
  char err[ERRLEN], closing[1200] = "";
  build b;
  memset(&b, 0, sizeof(b));
  interrupt_run_catch();
  int argc;
  char **argv = engine_simgrid_args(o, &argc);
  int rc = build_all(sc, o, argc, argv, &b, err) == 0 ? 0 : engine_fail(err);
  if (rc == 0)
    rc = engine_simulate(sc, &b, o, argc, argv, closing, sizeof closing);
  if (rc != 2)
    rc = engine_conclude(o, rc, closing);
  xbt_free(argv);
  int ns3 = engine_uses_ns3(&b, o);
  build_free(&b);
  if (ns3) {
    fflush(NULL);
    _exit(rc);
  }
  return rc;
}

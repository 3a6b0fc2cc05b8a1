/* engine.c - building and running one simulation: the model, the data and the
 * platform, every check a user can fail before SimGrid starts, then the algorithm's
 * descriptor (algorithms/algorithm.h) prepares, deploys and reports. */
#include "sim/engine.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/asserts.h>
#include <xbt/dynar.h>
#include <xbt/sysdep.h>

#include "algorithms/compute.h"
#include "algorithms/account.h"
#include "algorithms/algorithm.h"
#include "algorithms/msg.h"
#include "models/arch.h"
#include "models/cost.h"
#include "models/minibatch.h"
#include "models/rng.h"
#include "sim/faultcfg.h"
#include "sim/output.h"
#include "sim/platform.h"

#define ERRLEN 1024

typedef struct build {
  const algorithm *alg;
  void *state;            /* the algorithm's, from its prepare */
  net *model;
  dataset *train, *test;
  gsl_vector *init;       /* the warmstart's parameters, or NULL */
  char tmpdir[64];        /* holds a generated preset, removed at the end */
  char platform[4096];
  size_t needed;          /* hosts the algorithm needs */
  const char *needed_why; /* how it counts them */
  run_config cfg;         /* everything but the hosts, before the platform is loaded */
} build;

static int fail(const char *text)
{
  fprintf(stderr, "dtsim: %s\n", text);
  return 2;
}

static net *build_model(const scenario *sc)
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
  return net_create(n, sizes, act, loss);
}

/* Classes a synthetic data set gets for this model: regression for linear models. */
static size_t model_classes(const net *m)
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

static int check_labels(const dataset *d, const net *m, const char *path, char *err)
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

static int build_data(const scenario *sc, build *b, char *err)
{
  size_t dim = net_n_inputs(b->model), classes = model_classes(b->model);
  if (strncmp(sc->data.source, "synthetic-", 10) == 0) {
    size_t ntr = (size_t)sc->data.train, nte = (size_t)sc->data.test;
    gsl_rng *r = rng_create(sc->run.seed, RNG_ROLE_DATA, 0);
    dataset *all = strcmp(sc->data.source, "synthetic-teacher") == 0
                       ? data_synthetic_teacher(ntr + nte, dim, (size_t)sc->data.teacher_hidden, classes, r)
                       : data_synthetic_gaussian(ntr + nte, dim, classes, sc->data.separation, r);
    gsl_rng_free(r);
    if (all == NULL) {
      snprintf(err, ERRLEN, "data.source: cannot generate %s data for this model", sc->data.source);
      return -1;
    }
    b->train = data_slice(all, 0, ntr);
    b->test = data_slice(all, ntr, ntr + nte);
    data_free(all);
    return 0;
  }
  const char *path = strchr(sc->data.source, ':') + 1;
  dataset *all = strncmp(sc->data.source, "libsvm:", 7) == 0 ? data_load_libsvm(path, err, ERRLEN)
                                                         : data_load_csv(path, err, ERRLEN);
  if (all == NULL)
    return -1;
  int rc = check_labels(all, b->model, path, err);
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
static void fill_config(const scenario *sc, const build *b, run_config *cfg)
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
  cfg->speed_factor = sc->platform.speed_factor;
  cost_dtype dt = COST_FP32;
  cost_dtype_parse(sc->model.dtype, &dt);
  cfg->elem_bytes = cost_dtype_bytes(dt);
  cfg->jitter = sc->platform.jitter;
  cfg->msg_overhead = sc->platform.msg_overhead;
  scenario_stragglers(sc->faults.stragglers, &cfg->straggler_fraction, &cfg->straggler_slowdown);
}

/* Writes the preset into a private temporary folder, or uses the user's file. */
static int build_platform(const scenario *sc, build *b, char *err)
{
  if (sc->platform.file[0]) {
    snprintf(b->platform, sizeof(b->platform), "%s", sc->platform.file);
    return 0;
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
  snprintf(b->tmpdir, sizeof(b->tmpdir), "/tmp/dtsim-XXXXXX");
  if (mkdtemp(b->tmpdir) == NULL) {
    snprintf(err, ERRLEN, "cannot create a temporary folder: %s", strerror(errno));
    b->tmpdir[0] = '\0';
    return -1;
  }
  snprintf(b->platform, sizeof(b->platform), "%s/%s.xml", b->tmpdir, sc->platform.preset);
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
    b->alg->free(b->state);
  net_free(b->model);
  data_free(b->train);
  if (b->init)
    gsl_vector_free(b->init);
  data_free(b->test);
  if (b->tmpdir[0]) {
    unlink(b->platform);
    rmdir(b->tmpdir);
  }
}

/* ---- progress -------------------------------------------------------------- */

typedef struct progress {
  int shown;
} progress;

static void show_progress(void *ctx, double t, long steps, double loss, double acc)
{
  progress *p = ctx;
  fprintf(stderr, "\rdtsim: sim %.3f s  steps %ld  loss %.4f  accuracy %.4f   ", t, steps, loss, acc);
  fflush(stderr);
  p->shown = 1;
}

/* ---- hosts and links ------------------------------------------------------- */

static sg_host_t *place_hosts(const scenario *sc, sg_host_t *all, size_t n_all, size_t needed)
{
  sg_host_t *h = xbt_malloc(needed * sizeof(*h));
  int spread = strcmp(sc->platform.placement, "spread") == 0;
  for (size_t i = 0; i < needed; i++)
    h[i] = all[spread ? i * n_all / needed : i];
  return h;
}


/* Per-link bytes: the bytes of every (source, destination) host pair, added to
 * every link on the route between them: exactly the bytes of the messages that crossed
 * each link (tests/sim_whatif.c checks hand-computed values).
 * SimGrid 3.32's link-load plugin (src/plugins/link_load.cpp) is not used, for what it
 * measures, not for crashes. Checked on 3.32: tracked before simgrid_run, every link
 * loses its tracking (Engine::run seals the platform, Link::seal fires on_creation
 * again and the plugin attaches a fresh, untracked LinkLoad) and split-duplex halves
 * have no LinkLoad yet (sg_link_load_track dereferences NULL: a crash); tracked from an
 * actor at time 0 it works on split-duplex and fat-tree links alike. But it integrates
 * each link's LMM usage between comm start/end events with the rate seen at the end of
 * the interval, so a transfer's latency phase is counted at its rate: one 1e6-byte
 * message over a 2 us, 1.25e9 B/s route reads 1.0025e6 bytes, and over distbelief-2012's
 * LV08 route (13.01 x 200 us) 1.356e6, the link's full 125e6 B/s times the whole
 * transfer time; under LV08 usage also includes the reverse cross traffic. Links are keyed by name, then told apart
 * by identity when names collide. */
typedef struct link_acc {
  link_stat *st;
  sg_link_t *ids;
  size_t n, cap;
  double sim_time;
  xbt_dynar_t route;
} link_acc;

static void add_link_bytes(link_acc *acc, sg_link_t l, double bytes)
{
  const char *name = sg_link_get_name(l);
  size_t lo = 0, hi = acc->n;
  while (lo < hi) { /* first entry whose name is >= name */
    size_t mid = (lo + hi) / 2;
    if (strcmp(acc->st[mid].name, name) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (size_t i = lo; i < acc->n && strcmp(acc->st[i].name, name) == 0; i++)
    if (acc->ids[i] == l) {
      acc->st[i].bytes += bytes;
      return;
    }
  if (acc->n == acc->cap) {
    acc->cap = acc->cap ? 2 * acc->cap : 256;
    acc->st = xbt_realloc(acc->st, acc->cap * sizeof(*acc->st));
    acc->ids = xbt_realloc(acc->ids, acc->cap * sizeof(*acc->ids));
  }
  while (lo < acc->n && strcmp(acc->st[lo].name, name) == 0)
    lo++;
  memmove(acc->st + lo + 1, acc->st + lo, (acc->n - lo) * sizeof(*acc->st));
  memmove(acc->ids + lo + 1, acc->ids + lo, (acc->n - lo) * sizeof(*acc->ids));
  acc->st[lo] = (link_stat){xbt_strdup(name), bytes, 0};
  acc->ids[lo] = l;
  acc->n++;
}

static void add_pair(void *ctx, sg_host_t src, sg_host_t dst, double bytes)
{
  link_acc *acc = ctx;
  xbt_dynar_reset(acc->route);
  sg_host_get_route(src, dst, acc->route);
  unsigned k;
  sg_link_t l;
  xbt_dynar_foreach (acc->route, k, l)
    add_link_bytes(acc, l, bytes);
}

static link_stat *collect_links(double sim_time, size_t *n)
{
  link_acc acc = {0};
  acc.route = xbt_dynar_new(sizeof(sg_link_t), NULL);
  msg_traffic_foreach(add_pair, &acc);
  for (size_t i = 0; i < acc.n; i++) {
    double cap = sg_link_get_bandwidth(acc.ids[i]) * sim_time;
    acc.st[i].utilization = cap > 0 ? acc.st[i].bytes / cap : 0;
  }
  xbt_dynar_free(&acc.route);
  xbt_free(acc.ids);
  *n = acc.n;
  return acc.st;
}

/* What-if factors on any platform, after loading and before the run: every link
 * SimGrid lists (the _UP and _DOWN halves of split-duplex links are listed, checked on
 * 3.32) gets its bandwidth and latency scaled. Host speed cannot be set through 3.32's
 * C API (sg_host_set_pstate only picks among a file's pstates), so speed_factor divides
 * the flops of every execution instead (compute_execute): the same simulated times. */
static void scale_links(const scenario *sc)
{
  if (sc->platform.bw_factor == 1 && sc->platform.lat_factor == 1)
    return;
  size_t n = sg_link_count();
  sg_link_t *links = sg_link_list();
  for (size_t i = 0; i < n; i++) {
    if (sc->platform.bw_factor != 1)
      sg_link_set_bandwidth(links[i], sg_link_get_bandwidth(links[i]) * sc->platform.bw_factor);
    if (sc->platform.lat_factor != 1)
      sg_link_set_latency(links[i], sg_link_get_latency(links[i]) * sc->platform.lat_factor);
  }
  xbt_free(links);
}

/* ---- the run --------------------------------------------------------------- */

/* SimGrid's argv: the user's options after ours, so theirs win. */
static char **simgrid_args(const engine_opts *o, int *argc)
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

/* The closing line's text when the algorithm has none of its own. */
static void common_closing(const scenario *sc, const report_outcome *o, char *line, size_t len)
{
  snprintf(line, len, "%s %s: %.6g simulated s, %ld steps, loss %.6g, accuracy %.6g", sc->run.algorithm, o->status,
           o->sim_time, o->steps, o->evaluated ? o->loss : NAN, o->evaluated ? o->accuracy : NAN);
}

static int simulate(const scenario *sc, build *b, const engine_opts *o, int argc, char **argv)
{
  char err[ERRLEN];
  const algorithm *alg = b->alg;
  simgrid_init(&argc, argv);
  simgrid_load_platform(b->platform);
  scale_links(sc);
  account_setup();
  account_trace_enable(o->trace);
  sg_host_t *all;
  size_t n_all = platform_hosts_in_order(b->platform, &all);
  run_config cfg = b->cfg;
  cfg.n_hosts = b->needed;
  cfg.hosts = place_hosts(sc, all, n_all, b->needed);
  msg_traffic_init(cfg.hosts, cfg.n_hosts);
  int host_cores = sg_host_core_count(cfg.hosts[0]);
  cfg.cores = sc->platform.cores > 0 ? (int)sc->platform.cores : host_cores;
  fault_plan plan;
  int faulty = faultcfg_build(sc, cfg.hosts, cfg.n_hosts, all, n_all, &plan, err, ERRLEN);
  int bad = faulty < 0;
  if (!bad && cfg.cores > host_cores) {
    snprintf(err, ERRLEN, "platform.cores: %ld cores asked, but host %s has %d", sc->platform.cores,
             sg_host_get_name(cfg.hosts[0]), host_cores);
    bad = 1;
  }
  if (!bad && alg->check_hosts && alg->check_hosts(b->state, &cfg, err, ERRLEN) != 0)
    bad = 1;
  if (bad) {
    if (faulty > 0)
      faults_clear(&plan);
    msg_traffic_free();
    account_teardown();
    xbt_free(all);
    xbt_free(cfg.hosts);
    return fail(err);
  }
  cfg.faults = faulty > 0 ? &plan : NULL;
  double *slowdown = faultcfg_slowdown(sc, cfg.n_hosts);
  cfg.host_slowdown = slowdown;
  progress prog = {0};
  if (!o->quiet && isatty(2)) {
    cfg.on_eval = show_progress;
    cfg.on_eval_ctx = &prog;
  }
  metrics *m = metrics_create(alg->metrics_slots ? alg->metrics_slots(b->state, &cfg) : 1);
  alg->deploy(b->state, &cfg, m);
  if (cfg.faults)
    faults_start(cfg.faults, &cfg, m);
  simgrid_run();
  if (prog.shown)
    fputc('\n', stderr);

  run_result res = {0};
  res.sc = sc;
  res.m = m;
  res.sim_time = simgrid_get_clock();
  if (cfg.faults && cfg.faults->stopped) /* messages on the wire outlive a stopped run */
    res.sim_time = cfg.faults->stopped_at;
  res.steps = metrics_total_steps(m);
  report *rep = report_create();
  if (alg->report)
    alg->report(b->state, &cfg, m, rep);
  res.rep = rep;
  res.faults = cfg.faults;
  res.bytes_total = msg_bytes_sent();
  res.hosts_used = b->needed;
  res.status = metrics_status_name(metrics_get_status(m));
  link_stat *links = collect_links(res.sim_time, &res.n_links);
  res.n_actors = account_breakdown(res.sim_time, &res.actors);
  if (o->trace)
    res.n_trace_ev = account_trace(&res.trace_ev);
  res.links = links;
  int rc = output_write_all(o->out_dir, &res, err, ERRLEN) == 0 ? 0 : fail(err);
  if (rc == 0 && !o->quiet) {
    size_t ne = metrics_n_evals(m);
    const metrics_eval *last = ne ? metrics_eval_at(m, ne - 1) : NULL;
    report_outcome out = {res.status, res.sim_time, res.steps, last != NULL, last ? last->loss : NAN,
                          last ? last->accuracy : NAN};
    char line[1024];
    if (alg->closing)
      alg->closing(b->state, &cfg, &out, line, sizeof line);
    else
      common_closing(sc, &out, line, sizeof line);
    printf("dtsim: %s -> %s/\n", line, o->out_dir);
  }
  if (rc == 0 && metrics_get_status(m) != METRICS_OK)
    rc = 1;
  for (size_t i = 0; i < res.n_links; i++)
    xbt_free(links[i].name);
  xbt_free(links);
  report_free(rep);
  msg_traffic_free();
  account_teardown();
  alg->free(b->state);
  b->state = NULL;
  metrics_free(m);
  if (cfg.faults)
    faults_clear(cfg.faults);
  xbt_free(slowdown);
  xbt_free(cfg.hosts);
  xbt_free(all);
  return rc;
}

int engine_run(const scenario *sc, const engine_opts *o)
{
  char err[ERRLEN];
  build b;
  memset(&b, 0, sizeof(b));
  b.alg = algorithm_find(sc->run.algorithm);
  xbt_assert(b.alg != NULL, "run.algorithm '%s' passed validation", sc->run.algorithm);
  b.needed = b.alg->hosts_needed(sc, algorithm_params(sc, b.alg), &b.needed_why);
  b.model = build_model(sc);
  if (b.model == NULL)
    return fail("model: cannot build this network (check model.type and model.layers)");
  int argc;
  char **argv = simgrid_args(o, &argc);
  int rc = 0;
  if (sc->model.numerics && b.alg->uses_data && build_data(sc, &b, err) != 0)
    rc = fail(err);
  if (rc == 0 && sc->model.warm_steps > 0) {
    b.init = minibatch_warmstart(b.model, b.train, (size_t)sc->model.warm_batch, sc->model.warm_lr,
                                 sc->model.warm_steps, sc->run.seed);
    if (b.init == NULL)
      rc = fail("model.warmstart_steps: the warmstart cannot train this model on this data");
  }
  if (rc == 0) {
    fill_config(sc, &b, &b.cfg);
    b.state = b.alg->prepare(&b.cfg, err, ERRLEN);
    if (b.state == NULL)
      rc = fail(err);
  }
  if (rc == 0 && build_platform(sc, &b, err) != 0)
    rc = fail(err);
  if (rc == 0) {
    long hosts = platform_check(b.platform, argc, argv, err, ERRLEN);
    if (hosts < 0)
      rc = fail(err);
    else if ((size_t)hosts < b.needed) {
      snprintf(err, ERRLEN, "%s: the platform has %ld hosts, the run needs %zu (%s)",
               sc->platform.file[0] ? sc->platform.file : sc->platform.preset, hosts, b.needed, b.needed_why);
      rc = fail(err);
    }
  }
  if (rc == 0)
    rc = simulate(sc, &b, o, argc, argv);
  if (rc != 2 && o->expect) {
    int e = output_expect(o->out_dir, o->expect, err, ERRLEN);
    if (e == 1)
      fprintf(stderr, "dtsim: --expect %s: %s\n", o->expect, err);
    else if (e == 2)
      fprintf(stderr, "dtsim: %s\n", err);
    if (e != 0)
      rc = e;
  }
  xbt_free(argv);
  build_free(&b);
  return rc;
}

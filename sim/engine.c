/* engine.c - building and running one simulation: the model, the data and the
 * platform, every check a user can fail before SimGrid starts, then the algorithm's
 * descriptor (algorithms/algorithm.h) prepares, deploys and reports. */
#include "sim/engine.h"

#include <errno.h>
#include <math.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gsl/gsl_randist.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/asserts.h>
#include <xbt/dynar.h>
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
#include "sim/interrupt.h"
#include "sim/output.h"
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
  if (!sc->platform.link_efficiency)
    spec.bw_eff = spec.node_bw_eff = 0; /* the nominal link bandwidths */
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

/* ---- memory, before anything is allocated ------------------------------------ */

/* Bytes of memory this process may use: the machine's, or less under a resource limit. */
static double memory_limit(void)
{
  double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (double)rl.rlim_cur < phys)
    phys = (double)rl.rlim_cur;
  if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (double)rl.rlim_cur < phys)
    phys = (double)rl.rlim_cur;
  return phys;
}

/* The kernel's bound on a process's memory maps (vm.max_map_count), or 0 if unknown. */
static long max_map_count(void)
{
  FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
  long n = 0;
  if (f) {
    if (fscanf(f, "%ld", &n) != 1)
      n = 0;
    fclose(f);
  }
  return n;
}

/* SimGrid's value of a --cfg option in the run's arguments, or NULL. */
static const char *sg_option(const engine_opts *o, const char *name)
{
  size_t n = strlen(name);
  const char *v = NULL;
  for (int i = 1; i < o->sg_argc; i++)
    if (strncmp(o->sg_argv[i], "--cfg=", 6) == 0 && strncmp(o->sg_argv[i] + 6, name, n) == 0 &&
        o->sg_argv[i][6 + n] == ':')
      v = o->sg_argv[i] + 7 + n;
  return v;
}

/* The algorithm's footprint (algorithm.h) and the data set, in bytes; *actors and *what
 * as the hook gives them. */
static double footprint(const scenario *sc, const algorithm *a, size_t needed, double *actors, const char **what)
{
  double bytes;
  *actors = 0;
  *what = NULL;
  if (a->plan.footprint)
    bytes = a->plan.footprint(sc, algorithm_params(sc, a), actors, what);
  else {
    double params = sc->model.numerics && a->trains_layers ? algorithm_layers_params(sc) : 0;
    bytes = (double)needed * 4 * params * 8;
    *actors = 2 * (double)needed;
    *what = "4 copies of model.layers' parameters on each host the run uses";
  }
  if (sc->model.numerics && a->uses_data && strncmp(sc->data.source, "synthetic-", 10) == 0) {
    size_t sizes[SCENARIO_MAX_LAYERS];
    scenario_layers(sc->model.layers, sizes, SCENARIO_MAX_LAYERS);
    bytes += ((double)sc->data.train + (double)sc->data.test) * ((double)sizes[0] + 1) * 8;
  }
  return bytes;
}

/* Estimates what the run will hold and what its actors' stacks need, and refuses a run
 * that cannot fit: 0, or -1 with one line in err. */
static int check_footprint(const scenario *sc, const build *b, const engine_opts *o, char *err)
{
  const algorithm *a = b->alg;
  double actors;
  const char *what;
  double bytes = footprint(sc, a, b->needed, &actors, &what);
  double limit = memory_limit();
  if (bytes > limit) {
    char need[32], have[32], params[96] = "";
    report_bytes_text(bytes, need, sizeof need);
    report_bytes_text(limit, have, sizeof have);
    if (a->trains_layers && sc->model.numerics)
      snprintf(params, sizeof params, "; model.layers has %.3g parameters", algorithm_layers_params(sc));
    /* would a timing-only run fit? (an algorithm that refuses one says so in validate) */
    scenario timing = *sc;
    timing.model.numerics = 0;
    double t_actors;
    const char *t_what;
    int timing_fits = sc->model.numerics && footprint(&timing, a, b->needed, &t_actors, &t_what) <= limit &&
                      a->plan.validate(&timing, algorithm_params(&timing, a), err, ERRLEN) == 0;
    snprintf(err, ERRLEN, "the run needs about %s of memory (%s, %zu hosts%s), more than the %s this process may use; "
             "make it smaller%s", need, what ? what : "its numeric state", b->needed, params, have,
             timing_fits ? ", or set model.numerics = off for a timing-only run" : "");
    return -1;
  }
  /* SimGrid maps each actor's stack with a guard page: two memory maps per actor, beside
   * the process's own (a 3,001-actor collective held 6,180 maps: 178 of its own; 1,000
   * leaves room for libraries and the heap's). */
  const char *guard = sg_option(o, "contexts/guard-size");
  long maps = max_map_count();
  if (maps > 0 && !(guard && strcmp(guard, "0") == 0) && 2 * actors + 1000 > (double)maps) {
    snprintf(err, ERRLEN, "the run creates about %.0f actors, and SimGrid's stacks with guard pages take two memory maps "
             "each, more than vm.max_map_count = %ld allows; add --cfg=contexts/guard-size:0 (no guard pages) or raise "
             "vm.max_map_count", actors, maps);
    return -1;
  }
  const char *stack = sg_option(o, "contexts/stack-size"); /* KiB; SimGrid's default is 8 MiB */
  double stack_bytes = (stack ? atof(stack) : 8192) * 1024;
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
      bytes + actors * stack_bytes > (double)rl.rlim_cur) {
    snprintf(err, ERRLEN, "the run's %.0f actors need %.3g GB of address space for their stacks (%.0f KiB each), more "
             "than the limit of %.3g GB (ulimit -v); lower --cfg=contexts/stack-size", actors,
             actors * stack_bytes / 1e9, stack_bytes / 1024, (double)rl.rlim_cur / 1e9);
    return -1;
  }
  return 0;
}

/* ---- progress -------------------------------------------------------------- */

/* The progress line, at every evaluation: simulated time against run.max_sim_time, steps,
 * loss and accuracy when measured, and the wall time left at this pace. On a terminal it
 * is redrawn in place; elsewhere (--progress) a line every PROGRESS_EVERY wall seconds. */
#define PROGRESS_EVERY 10.0

typedef struct progress {
  int shown;      /* a line is on screen without its newline (terminal) */
  int tty;
  double bound;   /* run.max_sim_time */
  int may_end_sooner; /* run.max_steps or a target may end the run before it */
  const char *loss_name; /* the algorithm's name for its loss; NULL: "loss" */
  double start, last; /* wall seconds at the start and at the last line */
} progress;

static void show_progress(void *ctx, double t, long steps, double loss, double acc)
{
  progress *p = ctx;
  double now = wallclock_seconds();
  if (!p->tty && p->last > 0 && now - p->last < PROGRESS_EVERY)
    return;
  p->last = now;
  char line[256];
  progress_point pt = {.t = t, .bound = p->bound, .may_end_sooner = p->may_end_sooner, .steps = steps,
                       .loss = loss, .acc = acc, .loss_name = p->loss_name, .spent = now - p->start};
  progress_line(line, sizeof line, &pt);
  fprintf(stderr, p->tty ? "\r%s   " : "%s\n", line);
  fflush(stderr);
  p->shown = p->tty;
}

/* ---- hosts and links ------------------------------------------------------- */

/* platform.speed_spread: every host's slowdown (stragglers' or 1) times a factor drawn once
 * per host, in host order, lognormal of mean 1 and coefficient of variation speed_spread.
 * Returns slowdown, allocated when it was NULL and a spread is asked, or NULL. */
static double *spread_speeds(const scenario *sc, double *slowdown, size_t n_hosts)
{
  double cv = sc->platform.speed_spread;
  if (!(cv > 0))
    return slowdown;
  if (slowdown == NULL) {
    slowdown = xbt_malloc(n_hosts * sizeof(double));
    for (size_t i = 0; i < n_hosts; i++)
      slowdown[i] = 1.0;
  }
  double sigma = sqrt(log1p(cv * cv));
  gsl_rng *r = rng_create(sc->run.seed, RNG_ROLE_HOST_SPEED, 0);
  for (size_t i = 0; i < n_hosts; i++)
    slowdown[i] *= gsl_ran_lognormal(r, -0.5 * sigma * sigma, sigma);
  gsl_rng_free(r);
  return slowdown;
}

static sg_host_t *place_hosts(const scenario *sc, sg_host_t *all, size_t n_all, size_t needed)
{
  sg_host_t *h = xbt_malloc(needed * sizeof(*h));
  platform_place(all, n_all, needed, strcmp(sc->platform.placement, "spread") == 0, h);
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
/* Where a link sits, from the routes of the traffic that crossed it: its distance from
 * the nearest host on those routes, whether a route is this link alone, and which of the
 * run's hosts sent and received across it (bitmaps over placement indices). */
typedef struct link_track {
  size_t min_d;
  int direct;
  unsigned char *src, *dst;
} link_track;

typedef struct link_acc {
  link_stat *st;
  sg_link_t *ids;
  link_track *tr;
  size_t n, cap;
  double sim_time;
  xbt_dynar_t route;
  const char **names; /* the run's host names sorted, for the index of a name */
  size_t *index;      /* names[i]'s placement index */
  size_t n_hosts;
  unsigned char *senders;
} link_acc;

static void bit_set(unsigned char **map, size_t n, size_t i)
{
  if (*map == NULL)
    *map = xbt_malloc0((n + 7) / 8);
  (*map)[i / 8] |= (unsigned char)(1u << (i % 8));
}

static size_t bits_count(const unsigned char *map, size_t n, size_t *lo, size_t *hi)
{
  size_t c = 0;
  for (size_t i = 0; map && i < n; i++) {
    if (i % 8 == 0 && map[i / 8] == 0) { /* most of a large run's hosts never cross a given link */
      i += 7;
      continue;
    }
    if (map[i / 8] & (1u << (i % 8))) {
      if (c == 0)
        *lo = i;
      *hi = i;
      c++;
    }
  }
  return c;
}

static link_track *add_link(link_acc *acc, sg_link_t l, double bytes)
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
      return &acc->tr[i];
    }
  if (acc->n == acc->cap) {
    acc->cap = acc->cap ? 2 * acc->cap : 256;
    acc->st = xbt_realloc(acc->st, acc->cap * sizeof(*acc->st));
    acc->ids = xbt_realloc(acc->ids, acc->cap * sizeof(*acc->ids));
    acc->tr = xbt_realloc(acc->tr, acc->cap * sizeof(*acc->tr));
  }
  while (lo < acc->n && strcmp(acc->st[lo].name, name) == 0)
    lo++;
  memmove(acc->st + lo + 1, acc->st + lo, (acc->n - lo) * sizeof(*acc->st));
  memmove(acc->ids + lo + 1, acc->ids + lo, (acc->n - lo) * sizeof(*acc->ids));
  memmove(acc->tr + lo + 1, acc->tr + lo, (acc->n - lo) * sizeof(*acc->tr));
  acc->st[lo] = (link_stat){xbt_strdup(name), bytes, 0, "", NULL, NULL};
  acc->ids[lo] = l;
  acc->tr[lo] = (link_track){(size_t)-1, 0, NULL, NULL};
  acc->n++;
  return &acc->tr[lo];
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static size_t host_index(const link_acc *acc, sg_host_t h)
{
  const char *name = sg_host_get_name(h);
  const char **p = bsearch(&name, acc->names, acc->n_hosts, sizeof *acc->names, cmp_name);
  xbt_assert(p, "host %s carries traffic but is not one of the run's", name);
  return acc->index[p - acc->names];
}

static void add_pair(void *ctx, sg_host_t src, sg_host_t dst, double bytes)
{
  link_acc *acc = ctx;
  xbt_dynar_reset(acc->route);
  sg_host_get_route(src, dst, acc->route);
  size_t s = host_index(acc, src), d = host_index(acc, dst), len = xbt_dynar_length(acc->route);
  bit_set(&acc->senders, acc->n_hosts, s);
  unsigned k;
  sg_link_t l;
  xbt_dynar_foreach (acc->route, k, l) {
    link_track *t = add_link(acc, l, bytes);
    size_t dist = k < len - 1 - k ? k : len - 1 - k;
    t->min_d = dist < t->min_d ? dist : t->min_d;
    t->direct |= len == 1;
    bit_set(&t->src, acc->n_hosts, s);
    bit_set(&t->dst, acc->n_hosts, d);
  }
}

/* "host-3", or "host-0..host-39 (40 hosts)": the lowest and highest placement index. */
static char *hosts_text(const link_acc *acc, const unsigned char *map, sg_host_t *hosts)
{
  size_t lo = 0, hi = 0, c = bits_count(map, acc->n_hosts, &lo, &hi);
  char buf[600];
  if (c == 1)
    snprintf(buf, sizeof buf, "%s", sg_host_get_name(hosts[lo]));
  else
    snprintf(buf, sizeof buf, "%s..%s (%zu hosts)", sg_host_get_name(hosts[lo]), sg_host_get_name(hosts[hi]), c);
  return xbt_strdup(buf);
}

/* Every link that carried traffic, by name, with its tier and endpoints: `direct` when a
 * route is this link alone (a torus or ring neighbour link); `host` when it is at one end
 * of a route (a host's NIC, a GPU's link into its node switch); `uplink` one link from a
 * host when it carries the traffic of only some of the senders (a rack's or node's link to
 * the next switch, either way); `core` otherwise (a star's backbone, spine links). */
static link_stat *collect_links(double sim_time, sg_host_t *hosts, size_t n_hosts, size_t *n)
{
  link_acc acc = {0};
  acc.route = xbt_dynar_new(sizeof(sg_link_t), NULL);
  acc.n_hosts = n_hosts;
  acc.names = xbt_malloc((n_hosts ? n_hosts : 1) * sizeof *acc.names);
  acc.index = xbt_malloc((n_hosts ? n_hosts : 1) * sizeof *acc.index);
  for (size_t i = 0; i < n_hosts; i++)
    acc.names[i] = sg_host_get_name(hosts[i]);
  qsort(acc.names, n_hosts, sizeof *acc.names, cmp_name);
  for (size_t i = 0; i < n_hosts; i++) { /* names[j]'s placement index */
    const char *name = sg_host_get_name(hosts[i]);
    const char **p = bsearch(&name, acc.names, n_hosts, sizeof *acc.names, cmp_name);
    acc.index[p - acc.names] = i;
  }
  msg_traffic_foreach(add_pair, &acc);
  size_t lo, hi, senders = bits_count(acc.senders, n_hosts, &lo, &hi);
  for (size_t i = 0; i < acc.n; i++) {
    double cap = sg_link_get_bandwidth(acc.ids[i]) * sim_time;
    acc.st[i].utilization = cap > 0 ? acc.st[i].bytes / cap : 0;
    const link_track *t = &acc.tr[i];
    const char *tier = t->direct ? "direct"
                       : t->min_d == 0 ? "host"
                       : t->min_d == 1 && bits_count(t->src, n_hosts, &lo, &hi) < senders ? "uplink"
                                                                                            : "core";
    snprintf(acc.st[i].tier, sizeof acc.st[i].tier, "%s", tier);
    acc.st[i].from = hosts_text(&acc, t->src, hosts);
    acc.st[i].to = hosts_text(&acc, t->dst, hosts);
    xbt_free(t->src);
    xbt_free(t->dst);
  }
  xbt_free(acc.senders);
  xbt_free(acc.names);
  xbt_free(acc.index);
  xbt_free(acc.tr);
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

/* The closing line's text when the algorithm has none of its own: what ran, its loss and
 * accuracy when it measures them, then the common figures (report_perf_text). */
static void common_closing(const scenario *sc, const report_outcome *o, char *line, size_t len)
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

/* The "performance" block from the algorithm's report and the breakdown. */
static void fill_perf(const run_result *res, const report *rep, const run_config *cfg, report_perf *p)
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
  int idle = 0;
  for (size_t i = 0; p->worker_role && i < res->n_actors; i++)
    if (strcmp(res->actors[i].role, p->worker_role) == 0) {
      n++;
      c += res->actors[i].compute_s;
      w += res->actors[i].comm_s;
      x += res->actors[i].exposed_comm_s;
      idle |= res->actors[i].declares_idle;
    }
  if (n > 0 && t > 0) {
    p->compute_pct = 100 * c / ((double)n * t);
    p->comm_pct = 100 * w / ((double)n * t);
    p->exposed_comm_pct = 100 * x / ((double)n * t);
    if (idle) /* the bubble, the barriers, the end: whatever is neither compute nor data in flight */
      p->idle_pct = fmax(0, 100 - p->compute_pct - p->comm_pct);
  } else
    p->worker_role = NULL;
}

/* The placed hosts against the scenario and the algorithm: cores, GPUs, the algorithm's
 * own check. Returns 0, or 1 with the problem in err. */
static int check_placed(const scenario *sc, const build *b, run_config *cfg, int host_cores, char *err)
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
 * into *links its links, which free_result frees. */
static report *gather_result(const scenario *sc, const build *b, const engine_opts *o, run_config *cfg, metrics *m,
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
  *links = collect_links(res->sim_time, cfg->hosts, cfg->n_hosts, &res->n_links);
  res->n_actors = account_breakdown(res->sim_time, &res->actors);
  fill_perf(res, rep, cfg, &res->perf);
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
static void closing_line(const scenario *sc, const build *b, const engine_opts *o, run_config *cfg,
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
    common_closing(sc, &out, line, sizeof line);
  snprintf(closing, closing_len, "dtsim: %s -> %s/\n", line, o->out_dir);
}

/* What gather_result allocated. */
static void free_result(link_stat *links, size_t n_links, report *rep)
{
  for (size_t i = 0; i < n_links; i++) {
    xbt_free(links[i].name);
    xbt_free(links[i].from);
    xbt_free(links[i].to);
  }
  xbt_free(links);
  report_free(rep);
}

/* Runs the simulation and writes the results; the closing line goes into line (empty
 * with --quiet or when nothing was written). */
static int simulate(const scenario *sc, build *b, const engine_opts *o, int argc, char **argv, char *closing,
                    size_t closing_len)
{
  char err[ERRLEN];
  const algorithm *alg = b->alg;
  simgrid_init(&argc, argv);
  interrupt_run_catch(); /* over SimGrid's SIGINT handler (its actor listing and exit 1) */
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
  if (!bad)
    bad = check_placed(sc, b, &cfg, host_cores, err);
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
  double *slowdown = spread_speeds(sc, faultcfg_slowdown(sc, cfg.n_hosts), cfg.n_hosts);
  cfg.host_slowdown = slowdown;
  progress prog = {.tty = isatty(2), .bound = sc->run.max_sim_time,
                   .may_end_sooner = sc->run.max_steps > 0 || sc->run.target_accuracy > 0,
                   .loss_name = alg->loss_name, .start = wallclock_seconds()};
  if (!o->quiet && (prog.tty || o->progress)) {
    cfg.on_eval = show_progress;
    cfg.on_eval_ctx = &prog;
  }
  metrics *m = metrics_create(alg->run.metrics_slots ? alg->run.metrics_slots(b->state, &cfg) : 1);
  alg->run.deploy(b->state, &cfg, m);
  if (cfg.faults)
    faults_start(cfg.faults, &cfg, m);
  simgrid_run();
  if (prog.shown)
    fputc('\n', stderr);

  run_result res;
  link_stat *links;
  report *rep = gather_result(sc, b, o, &cfg, m, &res, &links);
  interrupt_run_hold(1, NULL); /* the result folder is written whole or not at all */
  int rc = output_write_all(o->out_dir, &res, err, ERRLEN) == 0 ? 0 : fail(err);
  interrupt_run_hold(0, rc == 0 ? o->out_dir : NULL);
  if (rc == 0 && !o->quiet)
    closing_line(sc, b, o, &cfg, &res, closing, closing_len);
  if (rc == 0 && metrics_get_status(m) != METRICS_OK)
    rc = 1;
  free_result(links, res.n_links, rep);
  msg_traffic_free();
  account_teardown();
  alg->run.free(b->state);
  b->state = NULL;
  metrics_free(m);
  if (cfg.faults)
    faults_clear(cfg.faults);
  xbt_free(slowdown);
  xbt_free(cfg.hosts);
  xbt_free(all);
  return rc;
}

/* SimGrid 3.32 tears its ns-3 network model down at exit, after main, and ns-3 crashes
 * there (a segmentation fault in ns3::Simulator::Destroy) once a run has used it: its
 * results are complete by then. So a run under ns-3 ends in engine_run, its output flushed. */
static int uses_ns3(const build *b, const engine_opts *o)
{
  char model[64] = "";
  const char *cfg = sg_option(o, "network/model");
  if (cfg)
    snprintf(model, sizeof model, "%s", cfg);
  else if (b->platform[0])
    platform_file_model(b->platform, model, sizeof model);
  return strcmp(model, "ns-3") == 0;
}

int engine_run(const scenario *sc, const engine_opts *o)
{
  char err[ERRLEN];
  build b;
  memset(&b, 0, sizeof(b));
  interrupt_run_catch();
  b.alg = algorithm_find(sc->run.algorithm);
  xbt_assert(b.alg != NULL, "run.algorithm '%s' passed validation", sc->run.algorithm);
  b.needed = b.alg->plan.hosts_needed(sc, algorithm_params(sc, b.alg), &b.needed_why);
  if (check_footprint(sc, &b, o, err) != 0)
    return fail(err);
  b.model = build_model(sc);
  if (b.model == NULL)
    return fail("model: cannot build this network (check model.type and model.layers)");
  int argc;
  char **argv = simgrid_args(o, &argc);
  int rc = 0;
  if (platform_check_options(argc, argv, err, ERRLEN) != 0)
    rc = fail(err);
  if (rc == 0 && sc->model.numerics && b.alg->uses_data && build_data(sc, &b, err) != 0)
    rc = fail(err);
  if (rc == 0 && sc->model.warm_steps > 0) {
    b.init = minibatch_warmstart(b.model, b.train, (size_t)sc->model.warm_batch, sc->model.warm_lr,
                                 sc->model.warm_steps, sc->run.seed);
    if (b.init == NULL)
      rc = fail("model.warmstart_steps: the warmstart cannot train this model on this data");
  }
  if (rc == 0) {
    fill_config(sc, &b, &b.cfg);
    b.state = b.alg->run.prepare(&b.cfg, err, ERRLEN);
    if (b.state == NULL)
      rc = fail(err);
  }
  if (rc == 0 && build_platform(sc, &b, err) != 0)
    rc = fail(err);
  if (rc == 0) {
    platform_use use = {b.needed, strcmp(sc->platform.placement, "spread") == 0};
    long hosts = platform_check_use(b.platform, argc, argv, &use, err, ERRLEN);
    if (hosts < 0)
      rc = fail(err);
    else if ((size_t)hosts < b.needed) {
      snprintf(err, ERRLEN, "%s: the platform has %ld host%s, the run needs %zu (%s)",
               sc->platform.file[0] ? sc->platform.file : sc->platform.preset, hosts, hosts == 1 ? "" : "s", b.needed,
               b.needed_why);
      rc = fail(err);
    }
  }
  char closing[1200] = "";
  if (rc == 0)
    rc = simulate(sc, &b, o, argc, argv, closing, sizeof closing);
  if (rc != 2 && o->bounds) {
    size_t n = bounds_count(o->bounds);
    if (bounds_verdict(o->bounds, o->out_dir, o->expected ? o->expected->json : NULL, stderr) > 0)
      rc = 1;
    else if (!o->quiet)
      printf("%sdtsim: --assert: %s%zu bound%s\n", closing, n == 1 ? "" : "all ", n, n == 1 ? " holds" : "s hold");
  } else if (rc != 2 && o->expected) {
    if (output_expect_compare(o->out_dir, o->expected, o->rtol, err, ERRLEN) != 0) {
      fprintf(stderr, "dtsim: --expect %s: MISMATCH: %s (this run's results: %s/)\n", o->expect, err, o->out_dir);
      rc = 1;
    } else if (!o->quiet) {
      fputs(closing, stdout);
      if (o->rtol > 0)
        printf("dtsim: --expect %s: matches (numbers within rtol %g)\n", o->expect, o->rtol);
      else
        printf("dtsim: --expect %s: matches exactly\n", o->expect);
    }
  } else if (rc != 2)
    fputs(closing, stdout);
  xbt_free(argv);
  int ns3 = uses_ns3(&b, o);
  build_free(&b);
  if (ns3) {
    fflush(NULL);
    _exit(rc);
  }
  return rc;
}

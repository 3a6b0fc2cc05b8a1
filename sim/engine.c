/* engine.c - building and running one simulation. */
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

#include "algorithms/collbench.h"
#include "algorithms/collectives.h"
#include "algorithms/consensus.h"
#include "algorithms/dataparallel.h"
#include "algorithms/downpour.h"
#include "algorithms/modelpar.h"
#include "algorithms/msg.h"
#include "algorithms/sandblaster.h"
#include "algorithms/sgd.h"
#include "algorithms/tensor.h"
#include "algorithms/pipeline.h"
#include "models/minibatch.h"
#include "models/arch.h"
#include "models/archnet.h"
#include "models/cost.h"
#include "models/graph.h"
#include "models/objective.h"
#include "models/rng.h"
#include "models/transformer.h"
#include "sim/faultcfg.h"
#include "sim/output.h"
#include "sim/platform.h"

#define ERRLEN 1024

typedef struct build {
  net *model;
  arch *own_arch;         /* the numeric layers as an arch, when no virtual network is set */
  const arch *arch;       /* shapes of a timing-only sgd run (modelpar) */
  arch_plan *plan;        /* its partition over sgd.partitions machines */
  archnet *numeric;       /* its numerics, when a numeric run is partitioned */
  dataset *train, *test;
  gsl_vector *init;       /* the warmstart's parameters, or NULL */
  graph *cgraph;          /* consensus: the union communication graph */
  gsl_matrix *cweights;   /* consensus: the fixed weights (NULL when time-varying) */
  objective **fs;         /* consensus: the agents' objectives */
  double fstar;           /* consensus: min of their sum */
  char tmpdir[64];        /* holds a generated preset, removed at the end */
  char platform[4096];
  size_t needed;          /* hosts the algorithm needs */
  size_t pp_split[SCENARIO_MAX_LAYERS]; /* pipeline.split's counts ... */
  int pp_nsplit;          /* ... and their number; 0: balanced */
} build;

static int fail(const char *text)
{
  fprintf(stderr, "dtsim: %s\n", text);
  return 2;
}

static net *build_model(const scenario *sc)
{
  size_t sizes[SCENARIO_MAX_LAYERS];
  size_t n = (size_t)scenario_layers(sc->layers, sizes, SCENARIO_MAX_LAYERS);
  net_act act = NET_ACT_TANH;
  net_act_parse(sc->activation, &act);
  net_loss loss = NET_LOSS_SOFTMAX;
  if (strcmp(sc->type, "linear") == 0)
    loss = NET_LOSS_MSE;
  else if (strcmp(sc->type, "logistic") == 0)
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
  if (strncmp(sc->source, "synthetic-", 10) == 0) {
    size_t ntr = (size_t)sc->train, nte = (size_t)sc->test;
    gsl_rng *r = rng_create(sc->seed, RNG_ROLE_DATA, 0);
    dataset *all = strcmp(sc->source, "synthetic-teacher") == 0
                       ? data_synthetic_teacher(ntr + nte, dim, (size_t)sc->teacher_hidden, classes, r)
                       : data_synthetic_gaussian(ntr + nte, dim, classes, sc->separation, r);
    gsl_rng_free(r);
    if (all == NULL) {
      snprintf(err, ERRLEN, "data.source: cannot generate %s data for this model", sc->source);
      return -1;
    }
    b->train = data_slice(all, 0, ntr);
    b->test = data_slice(all, ntr, ntr + nte);
    data_free(all);
    return 0;
  }
  const char *path = strchr(sc->source, ':') + 1;
  dataset *all = strncmp(sc->source, "libsvm:", 7) == 0 ? data_load_libsvm(path, err, ERRLEN)
                                                         : data_load_csv(path, err, ERRLEN);
  if (all == NULL)
    return -1;
  int rc = check_labels(all, b->model, path, err);
  if (rc == 0) {
    gsl_rng *r = rng_create(sc->seed, RNG_ROLE_SPLIT, 0);
    rc = data_split(all, sc->test_fraction, r, &b->train, &b->test);
    gsl_rng_free(r);
    if (rc != 0)
      snprintf(err, ERRLEN, "%s: %zu examples are too few to split with test_fraction %g", path, data_n(all),
               sc->test_fraction);
  }
  data_free(all);
  return rc;
}

/* A replica split over machines, and every timing-only sgd run even on one machine
 * (so that every machine count of a speed-up curve runs the same code), go through
 * the partitioned replica (modelpar). */
static int uses_modelpar(const scenario *sc)
{
  return strcmp(sc->algorithm, "sgd") == 0 && (!sc->numerics || sc->sgd_partitions > 1);
}

/* Machines per replica, and whether replicas are split (then a plan is built). */
static size_t replica_parts(const scenario *sc)
{
  return (size_t)(strcmp(sc->algorithm, "sgd") == 0 ? sc->sgd_partitions : sc->partitions);
}

static int needs_plan(const scenario *sc)
{
  return uses_modelpar(sc) || (strcmp(sc->algorithm, "downpour") == 0 && sc->partitions > 1);
}

/* Whether the output layer couples its units, so that the logits must be gathered:
 * a softmax does (the numeric mlp and softmax models, and speech-42m's 8192 states,
 * Dean'12 sec. 5); the image nets' 21k one-vs-all logistic outputs do not. */
static int output_coupled(const scenario *sc)
{
  if (sc->virtual_net[0])
    return strcmp(sc->virtual_net, "speech-42m") == 0;
  return strcmp(sc->type, "mlp") == 0 || strcmp(sc->type, "softmax") == 0;
}

static int build_plan(const scenario *sc, build *b, char *err)
{
  b->arch = sc->virtual_net[0] ? arch_virtual_find(sc->virtual_net) : NULL;
  if (b->arch == NULL) {
    b->own_arch = arch_create();
    arch_add_input(b->own_arch, net_layer_size(b->model, 0), 1, 1);
    for (size_t l = 1; l <= net_n_layers(b->model); l++)
      arch_add_dense(b->own_arch, net_layer_size(b->model, l));
    b->arch = b->own_arch;
  }
  size_t P = replica_parts(sc);
  b->plan = arch_plan_square(b->arch, P);
  if (b->plan == NULL) {
    snprintf(err, ERRLEN, "%s: %s cannot be split over %zu machines (a tile would be empty)",
             strcmp(sc->algorithm, "sgd") == 0 ? "sgd.partitions" : "downpour.partitions",
             sc->virtual_net[0] ? sc->virtual_net : "the model", P);
    return -1;
  }
  xbt_assert(arch_plan_parts(b->plan) == P, "a plan over %zu machines has other parts", P);
  if (sc->numerics && !sc->virtual_net[0]) { /* a virtual net is timed; model.layers trains (a proxy) */
    net_loss loss = net_get_loss(b->model);
    net_act act = NET_ACT_TANH;
    net_act_parse(sc->activation, &act);
    b->numeric = archnet_create(b->arch, act, loss);
    if (b->numeric == NULL) {
      snprintf(err, ERRLEN, "model: cannot build the partitioned numerics of this network");
      return -1;
    }
  }
  return 0;
}

static sandblaster_params sandblaster_of(const scenario *sc)
{
  return (sandblaster_params){(int)sc->sb_replicas, (int)sc->sb_ps_shards, (int)sc->sb_history, sc->sb_portion,
                              sc->sb_push_every, sc->sb_backups, sc->sb_backup_at, sc->sb_gtol, sc->sb_exact_sum};
}

static int is_consensus(const scenario *sc)
{
  return strcmp(sc->algorithm, "consensus") == 0;
}

static int is_collective(const scenario *sc)
{
  return strcmp(sc->algorithm, "collective") == 0;
}

static int is_dataparallel(const scenario *sc)
{
  return strcmp(sc->algorithm, "dataparallel") == 0;
}

/* dataparallel: the layers whose parameters and flops set its buckets and backward
 * pass, the virtual network's or model.layers' as an arch. */
static void build_shapes(const scenario *sc, build *b)
{
  b->arch = sc->virtual_net[0] ? arch_virtual_find(sc->virtual_net) : NULL;
  if (b->arch != NULL)
    return;
  b->own_arch = arch_create();
  arch_add_input(b->own_arch, net_layer_size(b->model, 0), 1, 1);
  for (size_t l = 1; l <= net_n_layers(b->model); l++)
    arch_add_dense(b->own_arch, net_layer_size(b->model, l));
  b->arch = b->own_arch;
}

static int is_pipeline(const scenario *sc)
{
  return strcmp(sc->algorithm, "pipeline") == 0;
}

static int is_tensor(const scenario *sc)
{
  return strcmp(sc->algorithm, "tensor") == 0;
}

/* run.algorithm = pipeline with pipeline.model = transformer (3D parallelism). */
static int is_pipeline3d(const scenario *sc)
{
  return is_pipeline(sc) && strcmp(sc->pp_model, "transformer") == 0;
}

static tensor_params tensor_of(const scenario *sc)
{
  coll_algo algo = COLL_RING;
  coll_algo_parse(sc->tp_collective, &algo);
  transformer_kernels kernels = TRANSFORMER_KERNELS_NONE;
  transformer_kernels_parse(sc->tp_kernels, &kernels);
  return (tensor_params){(size_t)sc->tp_ranks, (size_t)sc->tp_hidden, (size_t)sc->tp_heads, (size_t)sc->tp_layers,
                         (size_t)sc->tp_seq, (size_t)sc->tp_microbatch, sc->tp_microbatches, sc->tp_steps,
                         sc->tp_seqpar, sc->tp_async, (int)algo, (size_t)sc->tp_dp, sc->tp_recompute,
                         (size_t)sc->tp_vocab, (int)kernels, sc->tp_dp_overlap, sc->tp_bucket_bytes};
}

/* collective.algorithm = auto: ring, or tree for broadcast and reduce. */
static collective_params collective_of(const scenario *sc, size_t elem_bytes)
{
  coll_op op = COLL_ALLREDUCE;
  coll_op_parse(sc->coll_op, &op);
  coll_algo algo = op == COLL_BCAST || op == COLL_REDUCE ? COLL_TREE : COLL_RING;
  if (strcmp(sc->coll_algorithm, "auto") != 0)
    coll_algo_parse(sc->coll_algorithm, &algo);
  return (collective_params){(int)op, (int)algo, (size_t)sc->coll_ranks, (size_t)sc->coll_bytes / elem_bytes,
                             (size_t)sc->coll_root, sc->coll_chunk, sc->coll_iterations, sc->coll_reduce_flops};
}

/* ---- consensus: graph, weights and problem, all checked before the engine starts ---- */

/* Rows of a grid or torus over m agents: consensus.grid_rows, or the largest divisor of
 * m up to sqrt(m) (the most square shape; a prime m gives a path or a ring). */
static size_t lattice_rows(const scenario *sc)
{
  size_t m = (size_t)sc->agents, r = 1;
  if (sc->grid_rows > 0)
    return (size_t)sc->grid_rows;
  for (size_t k = 1; k * k <= m; k++)
    if (m % k == 0)
      r = k;
  return r;
}

static graph *consensus_graph(const scenario *sc, char *err)
{
  size_t m = (size_t)sc->agents;
  const char *t = sc->topology;
  if (strncmp(t, "edgelist:", 9) == 0)
    return graph_load_edgelist(t + 9, m, err, ERRLEN);
  if (strcmp(t, "ring") == 0)
    return graph_ring(m);
  if (strcmp(t, "complete") == 0)
    return graph_complete(m);
  if (strcmp(t, "star") == 0)
    return graph_star(m);
  if (strcmp(t, "grid") == 0 || strcmp(t, "torus") == 0) {
    size_t r = lattice_rows(sc);
    return t[0] == 'g' ? graph_grid2d(r, m / r) : graph_torus2d(r, m / r);
  }
  gsl_rng *r = rng_create(sc->seed, RNG_ROLE_GRAPH, 0);
  graph *g = strcmp(t, "erdos-renyi") == 0 ? graph_erdos_renyi(m, sc->er_p, r) : graph_geometric(m, sc->radius, r, NULL);
  gsl_rng_free(r);
  return g;
}

/* The fixed weight matrix, checked doubly stochastic within 1e-12 on the graph; none
 * for a time-varying graph, whose rounds' weights come from a rule that is doubly
 * stochastic by construction (scenario_validate refuses uniform and matrices there). */
static int build_weights(const scenario *sc, build *b, char *err)
{
  size_t m = (size_t)sc->agents;
  char why[512];
  graph_wrule rule;
  if (strncmp(sc->weights, "matrix:", 7) == 0) {
    b->cweights = graph_load_matrix(sc->weights + 7, m, err, ERRLEN);
    if (b->cweights == NULL)
      return -1;
  } else if (sc->q < 1) {
    return 0;
  } else {
    xbt_assert(graph_wrule_parse(sc->weights, &rule) == 0, "weights '%s' passed validation", sc->weights);
    b->cweights = gsl_matrix_alloc(m, m);
    graph_weights(b->cgraph, rule, b->cweights);
  }
  if (graph_check_doubly_stochastic(b->cweights, b->cgraph, 1e-12, why, sizeof(why)) != 0) {
    snprintf(err, ERRLEN, "consensus.weights: %s on this %s graph: %s", sc->weights, sc->topology, why);
    return -1;
  }
  return 0;
}

/* The agents' synthetic objectives (objective_synthetic's stream of run.seed) and the
 * centralized reference f*. */
static void build_problem(const scenario *sc, build *b)
{
  size_t m = (size_t)sc->agents;
  objective_kind kind = OBJECTIVE_LEAST_SQUARES;
  objective_kind_parse(sc->objective, &kind);
  b->fs = xbt_malloc0(m * sizeof(objective *));
  gsl_rng *r = rng_create(sc->seed, RNG_ROLE_DATA, 0);
  xbt_assert(objective_synthetic(kind, m, (size_t)sc->dim, (size_t)sc->rows, sc->lambda, r, b->fs) == 0,
             "consensus problem sizes passed validation");
  gsl_rng_free(r);
  gsl_vector *xstar = gsl_vector_alloc((size_t)sc->dim);
  objective_reference(m, b->fs, xstar, &b->fstar);
  gsl_vector_free(xstar);
}

static int build_consensus(const scenario *sc, build *b, char *err)
{
  b->cgraph = consensus_graph(sc, err);
  if (b->cgraph == NULL)
    return -1;
  if (!graph_is_connected(b->cgraph)) {
    const char *hint = strcmp(sc->topology, "erdos-renyi") == 0 ? " (drawn from run.seed: raise consensus.p or try another seed)"
                       : strcmp(sc->topology, "geometric") == 0 ? " (drawn from run.seed: raise consensus.radius or try another seed)"
                                                                : "";
    snprintf(err, ERRLEN, "consensus.topology: the %s graph on %ld agents is disconnected, and every agent must "
             "reach every other%s", sc->topology, sc->agents, hint);
    return -1;
  }
  if (build_weights(sc, b, err) != 0)
    return -1;
  build_problem(sc, b);
  return 0;
}

static size_t hosts_needed(const scenario *sc)
{
  if (is_consensus(sc))
    return (size_t)sc->agents;
  if (is_collective(sc))
    return (size_t)sc->coll_ranks;
  if (is_dataparallel(sc))
    return (size_t)sc->dp_replicas;
  if (is_tensor(sc))
    return (size_t)sc->tp_ranks * (size_t)sc->tp_dp;
  if (is_pipeline(sc))
    return (size_t)sc->pp_stages * (is_pipeline3d(sc) ? (size_t)sc->tp_ranks * (size_t)sc->tp_dp : 1);
  if (strcmp(sc->algorithm, "sandblaster") == 0) {
    sandblaster_params p = sandblaster_of(sc);
    return sandblaster_hosts_needed(&p);
  }
  if (strcmp(sc->algorithm, "sgd") == 0)
    return uses_modelpar(sc) ? (size_t)sc->sgd_partitions : sgd_hosts_needed();
  downpour_params p = {.replicas = (int)sc->replicas, .ps_shards = (int)sc->ps_shards,
                       .partitions = (int)sc->partitions};
  return downpour_hosts_needed(&p);
}

/* Writes the preset into a private temporary folder, or uses the user's file. */
static int build_platform(const scenario *sc, build *b, char *err)
{
  if (sc->file[0]) {
    snprintf(b->platform, sizeof(b->platform), "%s", sc->file);
    return 0;
  }
  platform_spec spec;
  size_t hosts = sc->hosts > 0 ? (size_t)sc->hosts : b->needed;
  if (platform_preset(sc->preset, hosts, &spec) != 0) {
    snprintf(err, ERRLEN, "platform.preset: unknown preset '%s' (see dtsim list)", sc->preset);
    return -1;
  }
  if (sc->gen_topology[0]) { /* as `dtsim platform PRESET --topology T` */
    xbt_assert(platform_topology_parse(sc->gen_topology, &spec.topology) == 0, "validated topology");
    spec.gpus_per_node = 0;
    if (spec.topology != PLATFORM_FAT_TREE)
      spec.hosts_per_rack = spec.uplinks = 0;
  }
  if (sc->host_cores > 0)
    spec.cores = (int)sc->host_cores;
  if (sc->sharing[0])
    spec.sharing = platform_sharing_parse(sc->sharing);
  snprintf(b->tmpdir, sizeof(b->tmpdir), "/tmp/dtsim-XXXXXX");
  if (mkdtemp(b->tmpdir) == NULL) {
    snprintf(err, ERRLEN, "cannot create a temporary folder: %s", strerror(errno));
    b->tmpdir[0] = '\0';
    return -1;
  }
  snprintf(b->platform, sizeof(b->platform), "%s/%s.xml", b->tmpdir, sc->preset);
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
  for (size_t i = 0; b->fs && i < graph_n(b->cgraph); i++)
    objective_free(b->fs[i]);
  xbt_free(b->fs);
  if (b->cweights)
    gsl_matrix_free(b->cweights);
  graph_free(b->cgraph);
  archnet_free(b->numeric);
  arch_plan_free(b->plan);
  arch_free(b->own_arch);
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
  int spread = strcmp(sc->placement, "spread") == 0;
  for (size_t i = 0; i < needed; i++)
    h[i] = all[spread ? i * n_all / needed : i];
  return h;
}


/* Per-link bytes: the bytes of every (source, destination) host pair, added to
 * every link on the route between them: exactly the bytes of the messages that crossed
 * each link (tests/check_whatif.c checks hand-computed values).
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
 * the flops of every execution instead (run_execute): the same simulated times. */
static void scale_links(const scenario *sc)
{
  if (sc->bw_factor == 1 && sc->lat_factor == 1)
    return;
  size_t n = sg_link_count();
  sg_link_t *links = sg_link_list();
  for (size_t i = 0; i < n; i++) {
    if (sc->bw_factor != 1)
      sg_link_set_bandwidth(links[i], sg_link_get_bandwidth(links[i]) * sc->bw_factor);
    if (sc->lat_factor != 1)
      sg_link_set_latency(links[i], sg_link_get_latency(links[i]) * sc->lat_factor);
  }
  xbt_free(links);
}

/* ---- the run --------------------------------------------------------------- */

static void fill_config(const scenario *sc, const build *b, run_config *cfg)
{
  memset(cfg, 0, sizeof(*cfg));
  cfg->seed = sc->seed;
  cfg->max_sim_time = sc->max_sim_time;
  cfg->max_steps = sc->max_steps;
  cfg->target_accuracy = sc->target_accuracy;
  cfg->eval_every = sc->eval_every;
  cfg->model = b->model;
  cfg->numerics = sc->numerics;
  cfg->train = b->train;
  cfg->test = b->test;
  cfg->init = b->init;
  size_t sizes[SCENARIO_MAX_LAYERS];
  size_t n = (size_t)scenario_layers(sc->layers, sizes, SCENARIO_MAX_LAYERS);
  const arch *v = sc->virtual_net[0] ? arch_virtual_find(sc->virtual_net) : NULL;
  cfg->sim_params = v ? arch_params(v) : (double)net_n_params(b->model);
  cfg->train_flops = v ? arch_train_flops(v) : cost_mlp_train_flops(n, sizes);
  cfg->efficiency = sc->efficiency;
  cfg->speed_factor = sc->speed_factor;
  cost_dtype dt = COST_FP32;
  cost_dtype_parse(sc->dtype, &dt);
  cfg->elem_bytes = cost_dtype_bytes(dt);
  cfg->jitter = sc->jitter;
  cfg->msg_overhead = sc->msg_overhead;
  cfg->sgd = (sgd_params){sc->sgd_batch, sc->sgd_lr};
  cfg->downpour = (downpour_params){(int)sc->replicas, (int)sc->ps_shards, sc->n_fetch, sc->n_push, sc->batch,
                                    sc->lr, sc->adagrad, sc->adagrad_gamma, sc->warmstart_steps, sc->overlap,
                                    (int)sc->partitions, strcmp(sc->sends, "waited") == 0};
  if (is_consensus(sc)) {
    graph_wrule rule = GRAPH_W_METROPOLIS;
    consensus_step step = CONSENSUS_STEP_HARMONIC;
    graph_wrule_parse(sc->weights, &rule);
    consensus_step_parse(sc->step_rule, &step);
    cfg->consensus = (consensus_params){(size_t)sc->agents, b->cgraph, b->cweights, rule, sc->q,
                                        (size_t)sc->interval, b->fs, b->fstar, step, sc->alpha0,
                                        strcmp(sc->mode, "async") == 0};
  }
  cfg->sandblaster = sandblaster_of(sc);
  if (is_collective(sc))
    cfg->collective = collective_of(sc, cfg->elem_bytes);
  if (is_dataparallel(sc)) {
    coll_algo algo = COLL_RING;
    coll_algo_parse(sc->dp_collective, &algo);
    cfg->dataparallel = (dataparallel_params){(int)sc->dp_replicas, sc->dp_batch, sc->dp_lr, (int)algo,
                                              sc->dp_bucket_mb * 1024 * 1024, sc->dp_overlap};
  }
  if (is_tensor(sc) || is_pipeline3d(sc))
    cfg->tensor = tensor_of(sc);
  if (is_pipeline(sc)) {
    pipeline_schedule sch = PIPELINE_1F1B;
    pipeline_schedule_parse(sc->pp_schedule, &sch);
    cfg->pipeline = (pipeline_params){(size_t)sc->pp_stages, sc->pp_microbatches, sc->pp_microbatch, (int)sch,
                                      (size_t)sc->pp_chunks, sc->pp_recompute, sc->pp_lr,
                                      b->pp_nsplit > 0 ? b->pp_split : NULL, is_pipeline3d(sc),
                                      sc->pp_scatter_gather};
    if (is_pipeline3d(sc))
      cfg->pipeline.microbatch = sc->tp_microbatch;
  }
  scenario_stragglers(sc->stragglers, &cfg->straggler_fraction, &cfg->straggler_slowdown);
}

/* The measured time against the alpha-beta(-gamma) formula on this platform: alpha is
 * the latency of the route from member 0 to member 1 plus the header bytes at its
 * bandwidth, beta 1 / that bandwidth, gamma the time of reduce_flops on member 0's host
 * (as run_execute spends it) per byte. Exact on a star of equal links (README). */
static void collective_report_fill(collective_report *c, const scenario *sc, const run_config *cfg, const collbench *cb)
{
  const collective_params *p = &cfg->collective;
  memset(c, 0, sizeof(*c));
  c->op = coll_op_name((coll_op)p->op);
  c->algorithm = coll_algo_name((coll_algo)p->algo);
  c->ranks = p->ranks;
  c->elements = p->elements;
  c->bytes = (double)sc->coll_bytes;
  c->chunk_bytes = p->chunk_bytes;
  c->iterations = p->iterations;
  collbench_result_get(cb, &c->r);
  if (p->ranks >= 2) {
    double bw = sg_host_get_route_bandwidth(cfg->hosts[0], cfg->hosts[1]);
    c->beta_s_per_byte = 1 / bw;
    c->alpha_s = sg_host_get_route_latency(cfg->hosts[0], cfg->hosts[1]) + MSG_HEADER_BYTES / bw;
  }
  double flops_per_s = sg_host_get_speed(cfg->hosts[0]) * cfg->speed_factor * cfg->efficiency * cfg->cores;
  c->gamma_s_per_byte = p->reduce_flops / flops_per_s / (double)cfg->elem_bytes;
  c->formula_s = coll_formula((coll_op)p->op, (coll_algo)p->algo, p->ranks, c->bytes, c->alpha_s,
                              c->beta_s_per_byte, c->gamma_s_per_byte);
  c->algbw_gbps = c->r.iter_s > 0 ? c->bytes / c->r.iter_s / 1e9 : 0;
  c->busbw_gbps = c->algbw_gbps * coll_busbw_factor((coll_op)p->op, p->ranks);
}

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

static int simulate(const scenario *sc, build *b, const engine_opts *o, int argc, char **argv)
{
  char err[ERRLEN];
  simgrid_init(&argc, argv);
  simgrid_load_platform(b->platform);
  scale_links(sc);
  run_engine_setup();
  run_trace_enable(o->trace);
  sg_host_t *all;
  size_t n_all = platform_hosts_in_order(b->platform, &all);
  run_config cfg;
  fill_config(sc, b, &cfg);
  cfg.n_hosts = b->needed;
  cfg.hosts = place_hosts(sc, all, n_all, b->needed);
  msg_traffic_init(cfg.hosts, cfg.n_hosts);
  int host_cores = sg_host_core_count(cfg.hosts[0]);
  cfg.cores = sc->cores > 0 ? (int)sc->cores : host_cores;
  fault_plan plan;
  int faulty = faultcfg_build(sc, cfg.hosts, cfg.n_hosts, all, n_all, &plan, err, ERRLEN);
  if (cfg.cores > host_cores)
    snprintf(err, ERRLEN, "platform.cores: %ld cores asked, but host %s has %d", sc->cores,
             sg_host_get_name(cfg.hosts[0]), host_cores);
  int no_mem_bw = 0;
  if ((is_tensor(sc) || is_pipeline3d(sc)) && strcmp(sc->tp_kernels, "none") != 0)
    for (size_t i = 0; i < cfg.n_hosts && !no_mem_bw; i++)
      if (run_host_mem_bw(cfg.hosts[i]) <= 0) {
        no_mem_bw = 1;
        snprintf(err, ERRLEN, "tensor.kernels = %s: host %s has no mem_bw property (bytes/s, e.g. <prop id=\"mem_bw\" "
                 "value=\"900e9\"/>); the dgx2h and selene presets have it", sc->tp_kernels, sg_host_get_name(cfg.hosts[i]));
      }
  if (cfg.cores > host_cores || faulty < 0 || no_mem_bw) {
    if (faulty > 0)
      faults_clear(&plan);
    msg_traffic_free();
    run_engine_teardown();
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
  int is_sgd = strcmp(sc->algorithm, "sgd") == 0, is_mp = uses_modelpar(sc), is_cons = is_consensus(sc);
  int is_sb = strcmp(sc->algorithm, "sandblaster") == 0, is_coll = is_collective(sc), is_dp = is_dataparallel(sc);
  int is_tp = is_tensor(sc), is_pp = is_pipeline(sc);
  metrics *m = metrics_create(is_coll || is_tp ? 1
                              : is_pp   ? pipeline_metrics_slots()
                              : is_dp   ? dataparallel_metrics_slots()
                              : is_mp   ? modelpar_metrics_slots(b->plan)
                              : is_sgd  ? sgd_metrics_slots()
                              : is_cons ? consensus_metrics_slots(&cfg.consensus)
                              : is_sb   ? sandblaster_metrics_slots()
                                        : downpour_metrics_slots(&cfg.downpour));
  modelpar *mp = is_mp ? modelpar_deploy(&cfg, b->plan, b->numeric, output_coupled(sc), m) : NULL;
  sgd *s = is_sgd && !is_mp ? sgd_deploy(&cfg, m) : NULL;
  consensus *cs = is_cons ? consensus_deploy(&cfg, m) : NULL;
  xbt_assert(!is_cons || cs != NULL, "a validated consensus scenario could not be deployed");
  sandblaster *sb = is_sb ? sandblaster_deploy(&cfg, m) : NULL;
  xbt_assert(!is_sb || sb, "sandblaster_deploy refused a configuration the engine checked");
  collbench *cb = is_coll ? collbench_deploy(&cfg, m) : NULL;
  xbt_assert(!is_coll || cb, "collbench_deploy refused a configuration the engine checked");
  dataparallel *dp = is_dp ? dataparallel_deploy(&cfg, b->arch, m) : NULL;
  xbt_assert(!is_dp || dp, "dataparallel_deploy refused a configuration the engine checked");
  tensor *tp = is_tp ? tensor_deploy(&cfg, m) : NULL;
  xbt_assert(!is_tp || tp, "tensor_deploy refused a configuration the scenario checked");
  pipeline *pp = is_pp ? pipeline_deploy(&cfg, b->arch, m) : NULL;
  xbt_assert(!is_pp || pp, "pipeline_deploy refused a configuration the scenario checked");
  downpour *d = is_sgd || is_cons || is_sb || is_coll || is_dp || is_tp || is_pp
                    ? NULL
                    : downpour_deploy(&cfg, b->plan, b->numeric, output_coupled(sc), m);
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
  res.examples = is_sb    ? sandblaster_examples(sb)
                 : is_sgd ? res.steps * sc->sgd_batch
                 : is_dp  ? res.steps * sc->dp_batch * sc->dp_replicas
                 : is_pp  ? res.steps * sc->pp_microbatches * cfg.pipeline.microbatch *
                                (is_pipeline3d(sc) ? sc->tp_dp : 1)
                          : res.steps * (is_cons ? sc->rows : sc->batch);
  if (cs)
    res.n_trace = consensus_trace(cs, &res.trace);
  res.sandblaster = sb;
  res.faults = cfg.faults;
  res.dataparallel = dp;
  res.pipeline = pp;
  collective_report crep;
  if (cb) {
    collective_report_fill(&crep, sc, &cfg, cb);
    res.collective = &crep;
    res.examples = 0;
  }
  tensor_report trep;
  if (tp) {
    memset(&trep, 0, sizeof(trep));
    trep.p = &cfg.tensor;
    tensor_result_get(tp, &trep.r);
    trep.peak_flops = sg_host_get_speed(cfg.hosts[0]) * cfg.speed_factor * cfg.cores;
    res.tensor = &trep;
    res.examples = cfg.tensor.steps * cfg.tensor.microbatches * (long)cfg.tensor.microbatch * (long)cfg.tensor.dp;
  }
  res.bytes_total = msg_bytes_sent();
  res.hosts_used = b->needed;
  res.status = metrics_status_name(metrics_get_status(m));
  link_stat *links = collect_links(res.sim_time, &res.n_links);
  res.n_actors = run_breakdown(res.sim_time, &res.actors);
  if (o->trace)
    res.n_trace_ev = run_trace(&res.trace_ev);
  res.links = links;
  int rc = output_write_all(o->out_dir, &res, err, ERRLEN) == 0 ? 0 : fail(err);
  if (rc == 0 && !o->quiet && cb) {
    printf("dtsim: collective %s %s %s: %zu ranks, %.0f bytes, %.6g simulated s per iteration (formula %.6g), "
           "busbw %.4g GB/s -> %s/\n", crep.op, crep.algorithm, res.status, crep.ranks, crep.bytes, crep.r.iter_s,
           crep.formula_s, crep.busbw_gbps, o->out_dir);
  } else if (rc == 0 && !o->quiet && tp) {
    printf("dtsim: tensor %s: %zu x %zu GPUs, %.6g simulated s per step, %.4g Tflop/s per GPU (%.3g of peak)%s -> %s/\n",
           res.status, cfg.tensor.ranks, cfg.tensor.dp, trep.r.step_s, trep.r.tflops_per_gpu,
           trep.r.tflops_per_gpu * 1e12 / trep.peak_flops, trep.r.numeric ? ", numerics checked" : "", o->out_dir);
  } else if (rc == 0 && !o->quiet && is_pipeline3d(sc)) {
    pipeline_result pr;
    pipeline_result_get(pp, &pr);
    double peak = sg_host_get_speed(cfg.hosts[0]) * cfg.speed_factor * cfg.cores;
    printf("dtsim: pipeline %s: %ld x %ld x %ld GPUs (p x t x d), %.6g simulated s per step, %.4g Tflop/s per GPU "
           "(%.3g of peak), bubble %.4g -> %s/\n", res.status, sc->pp_stages, sc->tp_ranks, sc->tp_dp,
           pr.steps > 0 ? pr.makespan_s / (double)pr.steps : 0, pr.tflops_per_gpu, pr.tflops_per_gpu * 1e12 / peak,
           pr.bubble_fraction, o->out_dir);
  } else if (rc == 0 && !o->quiet) {
    size_t ne = metrics_n_evals(m);
    const metrics_eval *last = ne ? metrics_eval_at(m, ne - 1) : NULL;
    printf("dtsim: %s %s: %.6g simulated s, %ld steps, loss %.6g, accuracy %.6g -> %s/\n", sc->algorithm,
           res.status, res.sim_time, res.steps, last ? last->loss : NAN, last ? last->accuracy : NAN, o->out_dir);
  }
  if (rc == 0 && metrics_get_status(m) != METRICS_OK)
    rc = 1;
  for (size_t i = 0; i < res.n_links; i++)
    xbt_free(links[i].name);
  xbt_free(links);
  msg_traffic_free();
  run_engine_teardown();
  sgd_free(s);
  sandblaster_free(sb);
  modelpar_free(mp);
  downpour_free(d);
  consensus_free(cs);
  collbench_free(cb);
  dataparallel_free(dp);
  tensor_free(tp);
  pipeline_free(pp);
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
  b.needed = hosts_needed(sc);
  b.model = build_model(sc);
  if (b.model == NULL)
    return fail("model: cannot build this network (check model.type and model.layers)");
  int argc;
  char **argv = simgrid_args(o, &argc);
  int rc = 0;
  if (sc->numerics && !is_consensus(sc) && !is_collective(sc) && !is_tensor(sc) && build_data(sc, &b, err) != 0)
    rc = fail(err);
  if (rc == 0 && sc->warm_steps > 0) {
    b.init = minibatch_warmstart(b.model, b.train, (size_t)sc->warm_batch, sc->warm_lr, sc->warm_steps, sc->seed);
    if (b.init == NULL)
      rc = fail("model.warmstart_steps: the warmstart cannot train this model on this data");
  }
  if (rc == 0 && is_consensus(sc) && build_consensus(sc, &b, err) != 0)
    rc = fail(err);
  if (rc == 0 && needs_plan(sc) && build_plan(sc, &b, err) != 0)
    rc = fail(err);
  if (rc == 0 && (is_dataparallel(sc) || is_pipeline(sc)))
    build_shapes(sc, &b);
  if (rc == 0 && is_pipeline(sc) && strcmp(sc->pp_split, "balanced") != 0)
    b.pp_nsplit = scenario_layers(sc->pp_split, b.pp_split, SCENARIO_MAX_LAYERS); /* checked by scenario_validate */
  if (rc == 0 && sc->numerics && is_dataparallel(sc) && data_n(b.train) < (size_t)sc->dp_replicas) {
    snprintf(err, ERRLEN, "dataparallel.replicas: %ld replicas need at least as many training examples, the data "
             "has %zu", sc->dp_replicas, data_n(b.train));
    rc = fail(err);
  }
  if (rc == 0 && sc->numerics && strcmp(sc->algorithm, "downpour") == 0 &&
      data_n(b.train) < (size_t)sc->replicas) {
    snprintf(err, ERRLEN, "downpour.replicas: %ld replicas need at least as many training examples, the data has %zu",
             sc->replicas, data_n(b.train));
    rc = fail(err);
  }
  if (rc == 0 && strcmp(sc->algorithm, "downpour") == 0 && (size_t)sc->ps_shards > net_n_params(b.model)) {
    snprintf(err, ERRLEN, "downpour.ps_shards: %ld shards, but the model has only %zu parameters to slice",
             sc->ps_shards, net_n_params(b.model));
    rc = fail(err);
  }
  if (rc == 0 && strcmp(sc->algorithm, "sandblaster") == 0 && (size_t)sc->sb_ps_shards > net_n_params(b.model)) {
    snprintf(err, ERRLEN, "sandblaster.ps_shards: %ld shards, but the model has only %zu parameters to slice",
             sc->sb_ps_shards, net_n_params(b.model));
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
               sc->file[0] ? sc->file : sc->preset, hosts, b.needed,
               strcmp(sc->algorithm, "downpour") == 0      ? "downpour.replicas x downpour.partitions + downpour.ps_shards"
               : strcmp(sc->algorithm, "sandblaster") == 0 ? "sandblaster.replicas + sandblaster.ps_shards + 1 coordinator"
               : uses_modelpar(sc)                         ? "sgd.partitions"
               : is_consensus(sc)                          ? "consensus.agents"
               : is_collective(sc)                         ? "collective.ranks"
               : is_dataparallel(sc)                       ? "dataparallel.replicas"
               : is_tensor(sc)                             ? "tensor.ranks x tensor.data_parallel"
               : is_pipeline3d(sc)                         ? "pipeline.stages x tensor.ranks x tensor.data_parallel"
               : is_pipeline(sc)                           ? "pipeline.stages"
                                                           : "1 worker");
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

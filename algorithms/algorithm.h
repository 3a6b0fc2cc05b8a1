#ifndef ALGORITHMS_ALGORITHM_H
#define ALGORITHMS_ALGORITHM_H
/* algorithm.h - what an algorithm is to the rest of dtsim: one descriptor (its name, its
 * scenario section's keys, its checks, the hosts it needs, how it is deployed and what it
 * reports). The list of descriptors is registry.h's, apart, so that an algorithm includes
 * this interface and never the registry that includes it. */

#include <stddef.h>

#include "algorithms/keys.h"
#include "algorithms/metrics.h"
#include "algorithms/report.h"
#include "algorithms/run.h"
#include "algorithms/settings.h"

typedef struct algorithm algorithm;

/* A parameter-server bank (algorithms/doc/downpour.md, Bank): the run's S shards served
 * from `hosts` bank hosts, each with `scale` = S / hosts times a shard host's link
 * bandwidth and cores, which the engine adds to a generated platform (cfg->banks). */
typedef struct algorithm_bank {
  size_t hosts;    /* 0: the exact model, every shard on its own host */
  double scale;
  int asked;       /* 1: the scenario asked for the bank; 0: its automatic choice */
  int control_net; /* 1: traffic between hosts on links of its own (platform.h's control_net) */
  char why[160];   /* the choice in words: "downpour.ps_bank = auto: 200 replicas >= 100" */
} algorithm_bank;

/* X.ps_bank's values, in its choices' order (auto|exact|bank). */
enum { ALGORITHM_BANK_AUTO, ALGORITHM_BANK_EXACT, ALGORITHM_BANK_ON };
/* X.ps_bank = auto runs the bank from this many replicas: its measured error against exact
 * is within 0.01% from 20 replicas up and the exact model costs seconds below 100
 * (algorithms/doc/downpour.md and sandblaster.md, Bank). */
#define ALGORITHM_BANK_AUTO_FROM 100

/* How an algorithm is planned: from the scenario alone, before anything is built. Every
 * hook but validate and hosts_needed may be NULL. */
typedef struct algorithm_plan {
  /* Checks its keys together and against the common sections; 0, or -1 with one line in
   * msg that starts with the key at fault ("sgd.partitions: ..."). */
  int (*validate)(const scenario *sc, const void *params, char *msg, size_t len);
  /* Hosts the run needs; *why says how they are counted ("downpour.replicas x ..."). */
  size_t (*hosts_needed)(const scenario *sc, const void *params, const char **why);
  /* [faults] workers (hosts a straggler may be drawn from: hosts[0..workers-1]) and the
   * host index of a role address ("replica3", "shard1", "coordinator"), or -1 when it
   * names none; NULL: every host is a worker, no role addresses. */
  size_t (*fault_workers)(const scenario *sc, size_t n_hosts);
  long (*fault_role)(const scenario *sc, const char *name, size_t n_hosts);
  /* Memory the run will hold in this process, estimated from the scenario before anything
   * is allocated, so that a run the machine cannot hold is refused up front: the bytes of
   * its numeric state beyond the data set (parameters and their copies, gradients,
   * optimizer state, activations, messages in flight), with *actors the actors it creates
   * (SimGrid gives each a stack) and *what how the bytes are counted ("consensus.agents x
   * consensus.rows x consensus.dim"). NULL: hosts_needed x 4 copies of model.layers'
   * parameters when the algorithm trains them with numerics on, 2 actors per host. */
  double (*footprint)(const scenario *sc, const void *params, double *actors, const char **what);
  /* Whether its shards run as a bank, from its keys alone (the engine then checks that the
   * platform can hold one); NULL: never. */
  void (*bank)(const scenario *sc, const void *params, algorithm_bank *b);
} algorithm_plan;

/* How it runs, in the order sim/engine calls it: prepare (before SimGrid starts), then with
 * the platform loaded and hosts placed check_hosts, metrics_slots and deploy; the engine
 * runs; report and closing; free. prepare, deploy and free are required. */
typedef struct algorithm_run {
  /* Builds the state the run needs from cfg (hosts not set yet); NULL with one line in
   * err when the model or data cannot be run so. The state outlives the run. This cfg is
   * not the one check_hosts, metrics_slots and deploy get: it has no hosts, faults or speed
   * spread, and cores is 0 when platform.cores leaves the count to the host; keep no pointer
   * to it, and read those fields from deploy's. */
  void *(*prepare)(const run_config *cfg, char *err, size_t len);
  /* With the hosts placed (cfg->hosts): 0, or -1 with one line in err. */
  int (*check_hosts)(void *state, const run_config *cfg, char *err, size_t len);
  /* Private metrics slots its actors record into; NULL: one. */
  size_t (*metrics_slots)(void *state, const run_config *cfg);
  /* Creates its actors; cfg and m outlive the run. */
  void (*deploy)(void *state, const run_config *cfg, metrics *m);
  /* After the run: r->examples, its summary.json blocks and its files. */
  void (*report)(void *state, const run_config *cfg, metrics *m, report *r);
  /* The closing line's text after "dtsim: " and before " -> DIR/"; NULL: the common one
   * (name, status, simulated time, steps, last loss and accuracy). */
  void (*closing)(void *state, const run_config *cfg, const report_outcome *o, char *line, size_t len);
  void (*free)(void *state);
} algorithm_run;

/* An algorithm: what it is (its name, its scenario section, its result files, what the
 * engine must know of it), how it is planned and how it runs. */
struct algorithm {
  const char *name;        /* run.algorithm, and its scenario section */
  const char *summary;     /* one line, for `dtsim list` */
  const char *section_doc; /* one line on the section, for the key reference */
  const key_spec *keys;    /* the section's keys: offsets into its parameter struct */
  size_t n_keys;
  size_t params_size;      /* sizeof its parameter struct, at most SETTINGS_PARAMS_BYTES */

  const char *reads;       /* the other algorithms' sections it reads, blank-separated
                              ("tensor"), through algorithm_section; NULL: only its own */
  const char *files;       /* its own result files, blank-separated ("pipeline.csv"), the only
                              ones its report may add; NULL: none */
  int trains_layers;       /* it trains model.layers (a warmstart may apply) */
  int uses_data;           /* with numerics on, it needs the data set */
  int fail_stop;           /* [faults]: the first failure of one of its hosts stops the run */
  int framework_host;      /* it runs model.framework's host model (algorithms/tensor_host.h) */
  int own_stragglers;      /* it draws [faults] stragglers itself (not the engine's host slowdowns) */
  const char *loss_name;   /* what the loss it records is, for the progress line ("gap");
                              NULL: "loss", the held-out loss */
  /* The figures it reports beyond those every run has (sim_time_s, steps, examples,
   * bytes_total, hosts_used, the step time and the time shares), so that a sweep knows
   * before a point runs whether a --plot-metric names something its points report:
   * `reports`, blank-separated, of summary.json's figures that only some algorithms fill:
   * final_loss and final_accuracy (with model.numerics = on), examples_per_s,
   * tflops_per_device, mfu, and staleness (its updates can be stale; the others write
   * 0s); `figures`, the numbers its own summary.json block (named after it) may hold, by
   * their last name, blank-separated, NULL when it writes none. tests/check_algorithm.c
   * holds them against every golden summary.json. */
  const char *reports;
  const char *figures;

  algorithm_plan plan;
  algorithm_run run;
};

/* A descriptor's key table and parameter struct: ALGORITHM_SECTION(X_keys, X_params). */
#define ALGORITHM_SECTION(table, params_type)                                  \
  .keys = (table), .n_keys = sizeof(table) / sizeof((table)[0]), .params_size = sizeof(params_type)

/* Its parameter struct in sc (as its keys fill it): the section scenario_defaults bound to
 * it (registry_bind_sections). */
const void *algorithm_params(const scenario *sc, const algorithm *a);
void *algorithm_params_mut(scenario *sc, const algorithm *a);
/* The parameter struct of the section called name (a registered algorithm's), or NULL: for
 * a section whose struct a shared module declares and two algorithms read (the [tensor]
 * section is the tensor-parallel stage's, tensor_stage.h, read by tensor and pipeline).
 * reader must list name in its `reads` (a scenario's check refuses a changed key of any
 * section the algorithm run neither owns nor reads). */
const void *algorithm_section(const scenario *sc, const algorithm *reader, const char *name);
/* Whether a reads the section called name: its own, or one its `reads` lists. */
int algorithm_reads(const algorithm *a, const char *name);
/* The bank rule of the parameter-server algorithms, into b: one bank of all `shards` when
 * `section`.ps_bank (`mode`) asks for it, or when it is auto, the algorithm's bank serves the
 * configuration (`whole`: no faults, and Downpour's dense pushes, Sandblaster's whole replicas)
 * and `replicas` reach ALGORITHM_BANK_AUTO_FROM; else none (b->hosts 0). */
void algorithm_bank_choose(algorithm_bank *b, const char *section, int mode, int whole, int replicas, int shards);

/* Whether the blank-separated list (a descriptor's reports or figures; NULL: empty) holds
 * word. */
int algorithm_lists(const char *list, const char *word);

/* Parameters (weights and biases) of model.layers' numeric network; 0 if malformed. */
double algorithm_layers_params(const scenario *sc);

#endif

#ifndef SIM_SCENARIO_H
#define SIM_SCENARIO_H
/* scenario.h - the scenario file (INI, parsed with inih) as a validated config.
 * One table lists every key with its section, type, default, unit and one line of
 * documentation; parsing, --set overrides, validation, the "scenario" block of
 * summary.json and the README's key reference all come from that table. */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SCENARIO_STR 512
/* Most sizes model.layers may list (inputs, hidden layers, outputs). */
#define SCENARIO_MAX_LAYERS 64

typedef struct scenario {
  /* [run] */
  char algorithm[32];        /* downpour | sgd | consensus | sandblaster | collective | dataparallel | tensor | pipeline */
  uint64_t seed;
  double max_sim_time;       /* simulated seconds, > 0 */
  long max_steps;            /* minibatches per worker / replica; 0: no limit */
  double target_accuracy;    /* stop when held-out accuracy >= this; 0: none */
  double eval_every;         /* simulated seconds between evaluations, > 0 */
  /* [platform] */
  char preset[64];           /* preset name, or "" when file is set */
  char file[SCENARIO_STR];   /* SimGrid platform XML, or "" */
  long hosts;                /* hosts to generate for a preset; 0: as many as the run needs */
  char placement[16];        /* packed | spread */
  long cores;                /* cores used per host; 0: all the host has */
  double jitter;             /* coefficient of variation of a machine's processing time per phase */
  double msg_overhead;       /* s of one core per message sent or received */
  double bw_factor;          /* what-if: every link's bandwidth times this (after loading), > 0 */
  double lat_factor;         /* what-if: every link's latency times this, > 0 */
  double speed_factor;       /* what-if: every host's flop/s times this (run_execute), > 0 */
  char gen_topology[16];     /* preset's topology replaced by star|fat-tree|...; "": its own */
  long host_cores;           /* cores per host written into a preset; 0: its own */
  char sharing[16];          /* shared|splitduplex|fatpipe for a preset's links; "": its own */
  /* [model] */
  char type[32];             /* linear | logistic | softmax | mlp */
  char layers[SCENARIO_STR]; /* comma-separated sizes, inputs first, outputs last */
  char activation[16];       /* hidden activation: sigmoid | tanh | relu */
  char virtual_net[64];      /* virtual network for costs, "" or "none": the numeric one */
  int numerics;              /* 1: real numerics; 0: timing only */
  double efficiency;         /* fraction of peak flop/s achieved, (0, 1] */
  char dtype[8];             /* fp32 | fp16 | bf16: element size of messages */
  long warm_steps;           /* shared SGD warmstart: steps before the run (no simulated time) */
  long warm_batch;           /* its minibatch size */
  double warm_lr;            /* its learning rate */
  /* [data] */
  char source[SCENARIO_STR]; /* synthetic-teacher | synthetic-gaussian | libsvm:PATH | csv:PATH */
  long train;                /* synthetic training examples */
  long test;                 /* synthetic held-out examples */
  double test_fraction;      /* held-out share of a loaded file, (0, 1) */
  long teacher_hidden;       /* hidden units of the synthetic teacher network */
  double separation;         /* synthetic-gaussian: spread of the class means */
  /* [sgd] */
  long sgd_batch;
  long sgd_partitions;       /* machines one model replica is split over */
  double sgd_lr;
  /* [downpour] */
  long replicas;
  long ps_shards;
  long n_fetch;
  long n_push;
  long batch;
  double lr;
  int adagrad;
  double adagrad_gamma;
  long warmstart_steps;
  int overlap;
  long partitions;           /* machines each Downpour replica is split over */
  char sends[16];            /* detached | waited: how fire-and-forget messages are sent */
  /* [consensus] */
  long agents;               /* m agents, one per host */
  char topology[SCENARIO_STR]; /* ring | grid | torus | complete | star | erdos-renyi | geometric | edgelist:PATH */
  long grid_rows;            /* grid and torus: rows; 0: the most square shape */
  double er_p;               /* erdos-renyi: edge probability */
  double radius;             /* geometric: connection radius in the unit square */
  double q;                  /* time-varying: probability an edge is active in a round; 1: fixed graph */
  long interval;             /* time-varying: every edge active at least once every this many rounds */
  char weights[SCENARIO_STR]; /* metropolis | lazy-metropolis | max-degree | uniform | matrix:PATH */
  char objective[16];        /* least-squares | l1 | hinge */
  long dim;                  /* problem dimension */
  long rows;                 /* data rows per agent */
  double lambda;             /* global ridge term lambda/2 ||x||^2, lambda/m per agent */
  char step_rule[16];        /* constant | harmonic | sqrt */
  double alpha0;             /* step size scale */
  char mode[8];              /* sync | async */
  /* [sandblaster] */
  long sb_replicas;
  long sb_ps_shards;
  long sb_history;           /* L-BFGS pairs kept */
  long sb_portion;           /* examples per portion; 0: about ten portions per replica */
  long sb_push_every;        /* counted portions between two pushes */
  int sb_backups;
  double sb_backup_at;       /* share of a batch's portions counted before backup copies start */
  double sb_gtol;
  int sb_exact_sum;
  /* [collective] */
  char coll_op[16];          /* allreduce | reduce-scatter | allgather | broadcast | reduce */
  char coll_algorithm[24];   /* auto | ring | halving-doubling | tree */
  long coll_bytes;           /* bytes of each member's vector */
  long coll_ranks;           /* members, one per host */
  long coll_root;            /* broadcast and reduce */
  double coll_chunk;         /* bytes per chunk; 0: unchunked */
  long coll_iterations;
  double coll_reduce_flops;  /* flops per element added; 0: free reductions */
  /* [dataparallel] */
  long dp_replicas;          /* replicas, one per host */
  long dp_batch;             /* examples per replica per step */
  double dp_lr;
  char dp_collective[24];    /* ring | halving-doubling | tree */
  double dp_bucket_mb;       /* MiB of wire bytes per gradient bucket; 0: one bucket */
  int dp_overlap;            /* bucket allreduces overlap the backward pass */
  /* [tensor] */
  long tp_ranks;             /* t: tensor-parallel ranks, one per host */
  long tp_hidden;            /* h */
  long tp_heads;             /* a */
  long tp_layers;            /* L */
  long tp_seq;               /* s */
  long tp_microbatch;        /* b */
  long tp_microbatches;      /* per step */
  long tp_steps;
  int tp_seqpar;
  int tp_async;
  char tp_collective[24];    /* ring | halving-doubling | tree (the allreduce) */
  long tp_dp;                /* d: data-parallel replicas of the tensor group */
  int tp_recompute;          /* activation recomputation: forward again before each layer's backward */
  long tp_vocab;             /* V: vocabulary of the embedding and logits layers; 0: not modelled */
  char tp_kernels[16];       /* none | unfused | fused: memory-bound kernels (models/transformer.h) */
  int tp_dp_overlap;         /* bucketed data-parallel allreduces overlap the last backward */
  double tp_bucket_bytes;    /* wire bytes per data-parallel gradient bucket (tp_dp_overlap) */
  /* [pipeline] */
  long pp_stages;            /* p: devices, stage s on host s */
  long pp_microbatches;      /* m: per step */
  long pp_microbatch;        /* b: examples per microbatch */
  char pp_schedule[16];      /* gpipe | 1f1b | interleaved */
  long pp_chunks;            /* v: model chunks per device */
  int pp_recompute;
  double pp_lr;
  char pp_split[256];        /* balanced, or layers per model chunk "2,1,1" */
  char pp_model[16];         /* dense | transformer (3D: GPT stages of [tensor]'s shapes) */
  int pp_scatter_gather;     /* transformer: PTD-P sec. 4.1 scatter/gather of boundary messages */
  /* [faults] */
  char stragglers[64];       /* FRACTION:SLOWDOWN, or "" */
  char host_failures[512];   /* HOST@TIME[+DURATION],... (faults.h) */
  char link_failures[512];   /* LINK@TIME[+DURATION],... */
  char link_degrade[512];    /* LINK@TIME:FACTOR[+DURATION],... */
  double wait_timeout;       /* s; 0: run.eval_every */
  double checkpoint_interval; /* s; 0: no checkpoints */
  double checkpoint_bw;      /* bytes/s; 0: checkpoints are free */
} scenario;

/* Fills s with every key's default value. */
void scenario_defaults(scenario *s);

/* Reads an INI file over the current values of s. On error returns -1 and writes one
 * line "PATH:LINE: problem" (or "PATH: problem") into err; s may be partly updated. */
int scenario_load_file(scenario *s, const char *path, char *err, size_t errlen);

/* Same, from an open stream read to its end (the caller closes it); `name` stands for
 * the path in messages. */
int scenario_load_stream(scenario *s, FILE *fp, const char *name, char *err, size_t errlen);

/* Same, from a string; `name` stands for the path in messages. */
int scenario_load_string(scenario *s, const char *text, const char *name, char *err, size_t errlen);

/* Applies one "SECTION.KEY=VALUE" override. Returns 0, or -1 with a message in err. */
int scenario_set(scenario *s, const char *assignment, char *err, size_t errlen);

/* Checks values and their combinations (positive sizes, known names, layer shapes that
 * fit the model type, ...). Returns 0, or -1 with one line in err naming the key.
 * `origin` (the scenario path) prefixes the message. */
int scenario_validate(const scenario *s, const char *origin, char *err, size_t errlen);

/* Number of keys in the table, and the i-th key's fields (for listing and output).
 * value: the key's current value in s, formatted so that it parses back identically. */
size_t scenario_key_count(void);
void scenario_key_at(const scenario *s, size_t i, const char **section, const char **key,
                     char *value, size_t valuelen, const char **def, const char **unit,
                     const char **doc);

/* Parses a model.layers list ("64,128,10": sizes from 1 to 10^9, blanks around commas
 * allowed) into sizes[0..cap-1]. Returns the number of sizes, or -1 if the text is
 * malformed or lists more than cap sizes. sizes may be NULL: then it only counts. */
int scenario_layers(const char *text, size_t *sizes, size_t cap);

/* Parses a faults.stragglers value "FRACTION:SLOWDOWN" (FRACTION in [0, 1], SLOWDOWN
 * finite and >= 1; "" means 0:1). Returns 0, or -1 if malformed or out of range. */
int scenario_stragglers(const char *text, double *fraction, double *slowdown);

/* Prints the key reference as a Markdown table (the README's, and `dtsim list keys`). */
void scenario_print_reference(FILE *out);

/* The built-in default scenario (INI text) that `dtsim` alone runs. */
extern const char scenario_default_ini[];

#endif

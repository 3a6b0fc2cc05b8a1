#ifndef ALGORITHMS_SETTINGS_H
#define ALGORITHMS_SETTINGS_H
/* settings.h - the validated scenario as the algorithms read it: the common sections
 * ([run], [platform], [model], [data], [faults]) and each algorithm's own section, kept
 * in the slot scenario_defaults binds to its descriptor (registry.h). sim/keytable.c
 * and sim/scenario*.c fill it from scenario files and --set; everything else only reads
 * it. */

#include <stddef.h>
#include <stdint.h>

#define SETTINGS_STR 512
/* Most sizes model.layers may list (inputs, hidden layers, outputs). */
#define SETTINGS_MAX_LAYERS 64
/* Most algorithms the registry may hold, and the largest parameter struct of one. */
#define SETTINGS_MAX_ALGORITHMS 16
#define SETTINGS_PARAMS_BYTES 2048

typedef struct run_keys {
  char algorithm[32];        /* a registry name (algorithm_find) */
  uint64_t seed;
  double max_sim_time;       /* simulated seconds, > 0 */
  long max_steps;            /* minibatches per worker / replica; 0: no limit */
  double target_accuracy;    /* stop when held-out accuracy >= this; 0: none */
  double eval_every;         /* simulated seconds between evaluations, > 0 */
  long noise_scale_examples; /* rows the gradient noise scale is measured on at each evaluation; 0: none */
  long curvature_examples;   /* held-out rows the top Hessian eigenvalue is measured on at the last evaluation; 0: none */
  int collectives;           /* how ring collectives are simulated: coll_mode (collectives.h) */
  long link_windows;         /* the run cut into at least this many windows for the links' peaks */
} run_keys;

typedef struct platform_keys {
  char preset[64];           /* preset name, or "" when file is set */
  char file[SETTINGS_STR];   /* SimGrid platform XML, or "" */
  long hosts;                /* hosts to generate for a preset; 0: as many as the run needs */
  char placement[16];        /* packed | spread */
  long cores;                /* cores used per host; 0: all the host has */
  double jitter;             /* coefficient of variation of a machine's processing time per phase */
  double speed_spread;       /* coefficient of variation of a host's fixed slowdown factor */
  double msg_overhead;       /* s of one core per message sent or received */
  double msg_byte_overhead;  /* s of one core per byte sent or received, on top */
  long msg_cores;            /* cores that do the per-message work side by side, >= 1 */
  int msg_thread;            /* 1: that work on a network thread beside the compute; 0: on the compute's */
  double bw_factor;          /* what-if: every link's bandwidth times this (after loading), > 0 */
  double lat_factor;         /* what-if: every link's latency times this, > 0 */
  double speed_factor;       /* what-if: every host's flop/s times this, > 0 */
  char gen_topology[16];     /* preset's topology replaced by star|fat-tree|...; "": its own */
  long host_cores;           /* cores per host written into a preset; 0: its own */
  char sharing[16];          /* shared|splitduplex|fatpipe for a preset's links; "": its own */
  int link_efficiency;       /* 1: a preset's links at what collectives reach; 0: nominal */
  char uplink_routing[16];   /* a generated fat tree's rack uplinks: dmodk | pooled */
  int comm_sms;              /* 1: a collective holds its GPU host's gpu_comm_sms SMs; 0: none */
  double pue;                /* facility energy over IT energy, >= 1 (platforms with power figures) */
  double carbon_intensity;   /* g CO2e per kWh of facility energy; 0: no emissions reported */
  double power_cap;          /* W: the GPUs' power limit (a lower power state); 0: none */
  char power[64];            /* a preset's power figures "MAX,MIN,NODE[,FABRIC[,IDLE]]" in W; "": its own */
} platform_keys;

typedef struct model_keys {
  char type[32];             /* linear | logistic | softmax | mlp */
  char layers[SETTINGS_STR]; /* comma-separated sizes, inputs first, outputs last */
  char activation[16];       /* hidden activation: sigmoid | tanh | relu */
  char virtual_net[64];      /* virtual network for costs, "": the numeric one */
  int numerics;              /* 1: real numerics; 0: timing only */
  double efficiency;         /* fraction of peak flop/s achieved, (0, 1] */
  int kernel_model;          /* 0 shapes: GPU hosts time GEMMs and kernels by shape; 1 flat */
  char dtype[8];             /* fp32 | tf32 | fp16 | bf16 | fp8: sizes, and a GPU's peak (gpu_peaks) */
  char framework[32];        /* an era of models/framework.h; "": none */
  long warm_steps;           /* shared SGD warmstart: steps before the run (no simulated time) */
  long warm_batch;           /* its minibatch size */
  double warm_lr;            /* its learning rate */
} model_keys;

typedef struct data_keys {
  char source[SETTINGS_STR]; /* synthetic-teacher | synthetic-gaussian | libsvm:PATH | csv:PATH */
  long train;                /* synthetic training examples */
  long test;                 /* synthetic held-out examples */
  double test_fraction;      /* held-out share of a loaded file, (0, 1) */
  long teacher_hidden;       /* hidden units of the synthetic teacher network; 0: linear */
  double label_noise;        /* synthetic-teacher: share of labels replaced by a uniform class */
  double input_decay;        /* synthetic-teacher: input i's variance (i + 1)^-input_decay */
  int stream;                /* synthetic-teacher: training draws are fresh examples, never reused */
  double separation;         /* synthetic-gaussian: spread of the class means */
} data_keys;

typedef struct fault_keys {
  char stragglers[64];       /* FRACTION:SLOWDOWN, or "" */
  char host_failures[512];   /* HOST@TIME[+DURATION],... (faults.h) */
  char link_failures[512];   /* LINK@TIME[+DURATION],... */
  char link_degrade[512];    /* LINK@TIME:FACTOR[+DURATION],... */
  double wait_timeout;       /* s; 0: run.eval_every */
  double checkpoint_interval; /* s; 0: no checkpoints */
  double checkpoint_bw;      /* bytes/s; 0: checkpoints are free */
} fault_keys;

/* One algorithm's section: its own parameter struct (algorithm.h), opaque here, and the
 * descriptor it belongs to (set by scenario_defaults; algorithm_params finds it by that). */
typedef struct settings_params {
  _Alignas(16) unsigned char bytes[SETTINGS_PARAMS_BYTES];
  const void *owner;
} settings_params;

typedef struct scenario {
  run_keys run;
  platform_keys platform;
  model_keys model;
  data_keys data;
  fault_keys faults;
  settings_params sections[SETTINGS_MAX_ALGORITHMS]; /* [i]: the registry's i-th algorithm's keys */
} scenario;

/* Whether [faults] turns hosts or links off or degrades links. */
static inline int settings_faulty(const scenario *sc)
{
  return sc->faults.host_failures[0] || sc->faults.link_failures[0] || sc->faults.link_degrade[0];
}

#endif

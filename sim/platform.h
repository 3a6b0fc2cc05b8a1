#ifndef SIM_PLATFORM_H
#define SIM_PLATFORM_H
/* platform.h - SimGrid platforms: the generator (star, fat-tree, torus, dragonfly,
 * ring), the named presets built with it, the network-model choice written into each
 * generated file, a safe pre-check of any platform file, and hosts in file order. */

#include <stddef.h>
#include <stdio.h>
#include <simgrid/forward.h>

typedef enum platform_topology {
  PLATFORM_STAR,      /* one switch: private host links, non-blocking backbone */
  PLATFORM_FAT_TREE,  /* two-level fat tree: racks of hosts, oversubscribed uplinks */
  PLATFORM_TORUS,     /* 3-D torus (SimGrid TORUS cluster) */
  PLATFORM_DRAGONFLY, /* SimGrid DRAGONFLY cluster */
  PLATFORM_RING       /* 1-D torus */
} platform_topology;

typedef struct platform_spec {
  platform_topology topology;
  size_t hosts;              /* at least this many hosts (shapes round up) */
  double speed;              /* flop/s per core */
  int cores;                 /* cores per host */
  double bw;                 /* bytes/s of every link */
  double lat;                /* seconds of every link */
  size_t hosts_per_rack;     /* fat tree: hosts under one leaf switch */
  size_t uplinks;            /* fat tree: uplinks per leaf switch (oversubscription) */
  const char *network_model; /* SimGrid network/model written into the file: LV08 | CM02 */
  /* network/crosstraffic written into the file: PLATFORM_XT_BY_MODEL (0, the default) turns
   * TCP's acknowledgement traffic off under CM02 and leaves it on under LV08. */
  enum { PLATFORM_XT_BY_MODEL, PLATFORM_XT_ON, PLATFORM_XT_OFF } cross_traffic;
  const char *name;          /* zone id and host name prefix */
  const char *sharing;       /* SimGrid sharing_policy of host (and node) links: SHARED,
                              * SPLITDUPLEX or FATPIPE; NULL: SPLITDUPLEX */
  /* GPU nodes (dgx2h, selene): when gpus_per_node > 0, topology, hosts_per_rack and
   * uplinks are ignored and the file holds ceil(hosts / gpus_per_node) nodes, each a
   * cluster of gpus_per_node one-core hosts on `bw`/`lat` links to a non-blocking
   * intra-node switch (NVSwitch), the nodes joined by one node_bw/node_lat split-duplex
   * link each (the node's InfiniBand adapters together) to a non-blocking fabric. Host
   * i is GPU i % gpus_per_node of node i / gpus_per_node. */
  size_t gpus_per_node;
  double node_bw;            /* bytes/s per direction of a node's inter-node link */
  double node_lat;           /* seconds */
  double mem_bw;             /* bytes/s of a host's memory, written as each host's mem_bw
                              * property (tensor.kernels); 0: none */
  /* A GPU description for the kernel model (compute_gpu, platforms/README.md), written as
   * host properties when gpu_sms > 0: gpu_sms, gpu_gemm_eff, gpu_l2_bw, gpu_launch and
   * gpu_comm_sms (each if > 0), gpu_tiles (if not NULL). */
  size_t gpu_sms;
  size_t gpu_comm_sms;       /* SMs a collective's kernels hold while it runs (< gpu_sms) */
  double gpu_gemm_eff;       /* the library's GEMM main loop, share of an SM's peak (if > 0) */
  double gpu_l2_bw;          /* bytes/s */
  double gpu_launch;         /* s per kernel */
  const char *gpu_tiles;     /* "256x128,...", or NULL: cuBLAS's (models/gemm.h) */
  const char *gpu_peaks;     /* dense peak by datatype, "bf16:989.5e12,fp8:1979e12:0.7584"
                              * (models/gemm.h gemm_peaks_find), or NULL: the speed at any */
  /* Power, for SimGrid's energy plugins (platforms/README.md, Energy), when gpu_max_w > 0:
   * every host gets power states (pstates) whose GPU power limit steps down from gpu_max_w by
   * PLATFORM_POWER_STEP_W to gpu_min_w, each at the speed platform_power_states gives, with
   * wattage_per_state "idle:busy" of the GPU plus its share of the rest of the node (busy: the
   * GPU at its limit), and gpu_power_limits listing the limits; a GPU-node platform gets one
   * more link per node, which no route crosses, of constant wattage_range node_link_w (the
   * fabric's switch ports the node takes). */
  double gpu_idle_w, gpu_max_w, gpu_min_w;
  double rest_idle_w, rest_busy_w; /* the node's CPUs, NICs, switches, fans: its share per GPU */
  double node_link_w;
  /* The share of the host links' (bw_eff) and node links' (node_bw_eff) bandwidth that
   * collectives reach (NCCL's bus bandwidth): the file gets bw x bw_eff and node_bw x
   * node_bw_eff. 0 counts as 1 (the nominal bandwidth). */
  double bw_eff;
  double node_bw_eff;
  /* A fat tree's U uplinks per rack as one link of U x bw (platform_write_pooled); 0:
   * SimGrid's FAT_TREE cluster, routed by destination. */
  int pooled;
  /* GPU nodes: a host CPU per GPU (model.framework's thread that feeds it, algorithms/tensor_host.h):
   * host NAME-i's is NAME-i-cpu, one core of PLATFORM_CPU_SPEED in a zone of their own with no
   * link (it only computes), carrying pcie_bw (bytes/s between it and its GPU, if > 0) */
  int host_cpus;
  double pcie_bw;
  size_t banks;              /* pooled: a parameter-server bank's hosts at the core; 0: none */
  double bank_scale;         /* each bank's cores and link bandwidth, in hosts' */
  /* with banks: every route between two hosts on a control network of its own, a copy of
   * the host links and rack uplinks, and only routes to a bank on the others
   * (platform_write_pooled) */
  int control_net;
} platform_spec;

/* A host CPU's speed: its work is given in seconds (models/framework.h), executed as seconds x
 * this; the number carries no other meaning. */
#define PLATFORM_CPU_SPEED 1e9

/* Parses "star|fat-tree|torus|dragonfly|ring"; returns 0 or -1. */
int platform_topology_parse(const char *s, platform_topology *t);
const char *platform_topology_name(platform_topology t);
/* Parses "shared|splitduplex|fatpipe"; returns SimGrid's attribute value ("SHARED",
 * "SPLITDUPLEX", "FATPIPE", static) or NULL if s is none of them. */
const char *platform_sharing_parse(const char *s);
/* What-if scaling of a spec: every bandwidth (host and node links) times bw_f, every
 * latency times lat_f, the speed times speed_f. No effect for factors of 1. */
void platform_scale(platform_spec *spec, double bw_f, double lat_f, double speed_f);

/* A GPU power limit's step between power states, and at most this many states. */
#define PLATFORM_POWER_STEP_W 100.0
#define PLATFORM_MAX_PSTATES 32
/* The power states of a spec with power figures (gpu_max_w > 0): their count (0 without), and
 * for each its GPU power limit in W and its speed as a share of the spec's speed. A GPU at a
 * power limit L runs at the clock whose dynamic power fits, taken to scale with the cube of
 * the clock (the supply voltage following the clock): share = ((L - idle) / (max - idle))^(1/3)
 * (platforms/README.md, Power caps). */
size_t platform_power_states(const platform_spec *spec, double *limit_w, double *share);

/* The power figures of a GPU platform (platforms/README.md, Energy): the GPU's power limit and
 * the lowest it takes, the node's maximum power per GPU (its GPU included), the fabric's switch
 * ports per node, in W. The GPU idles at a tenth of its limit, the rest of the node at half of
 * its share (ASSUMPTIONS). */
void platform_power_fill(platform_spec *spec, double gpu_max_w, double gpu_min_w, double node_w_per_gpu,
                         double fabric_w);

/* Parses "MAX,MIN,NODE[,FABRIC[,IDLE]]" (W: the GPU's power limit and its lowest, the node's
 * maximum per GPU, the fabric's switch ports per node, the GPU's idle power, by default a tenth
 * of MAX) into spec's power figures, as platform_power_fill with that idle power. 0, or -1
 * (spec untouched) unless MIN <= MAX <= NODE and IDLE < MIN (every power state computes). */
int platform_power_parse(const char *text, platform_spec *spec);

/* Fills *spec with the named preset sized for at least `hosts` hosts (0: the preset's
 * own size). Returns 0, or -1 if the name is unknown. */
int platform_preset(const char *name, size_t hosts, platform_spec *spec);
/* i-th preset name and one-line description, or NULL past the end (for listing). */
const char *platform_preset_at(size_t i, const char **description);

/* Writes the spec as SimGrid 3.32 platform XML. Returns 0, or -1 with err set if the
 * spec is impossible (zero hosts, non-positive speed/bandwidth, negative latency...). */
int platform_write(const platform_spec *spec, FILE *out, char *err, size_t errlen);

/* A fat-tree spec (no GPU nodes) with pooled uplinks (platform.uplink_routing = pooled): the same
 * racks of hosts, host links, latencies and network model, each rack's uplinks one link of
 * their summed bandwidth, so that a route no longer depends on the destination's index; and
 * for a parameter-server bank (algorithms/doc/downpour.md, Bank) spec->banks hosts
 * "bank-0".. hanging off the core, each with spec->bank_scale times a host's cores and link bandwidth and a link
 * latency of two links, so that a route to it crosses as much latency as one between racks,
 * and TCP's window bound (network/TCP-gamma) scaled by it, as it binds per flow. With
 * spec->control_net, each rack is a zone of its own whose hosts have a second link each,
 * and a second uplink, that carry every route between two hosts (algorithms/doc/
 * sandblaster.md, Bank). The rack size and uplinks must be set (platform_write sets them).
 * 0, or -1 with err. */
int platform_write_pooled(const platform_spec *spec, FILE *out, char *err, size_t errlen);
/* Whether platform_write_pooled takes spec. */
int platform_pooled_fits(const platform_spec *spec);

/* Checks a platform file safely before the engine sees it: the file is readable, then a
 * child process with the same SimGrid options (argc/argv as for simgrid_init) loads it,
 * so a malformed file becomes an error line instead of an abort. On success returns the
 * host count; on error -1 with one line "PATH: problem" in err. */
long platform_check(const char *path, int argc, char **argv, char *err, size_t errlen);

/* The hosts a run will use: the first `needed` in file order, or with spread every
 * (n_all / needed)-th (platform_place). */
typedef struct platform_use {
  size_t needed;
  int spread;
  int host_cpus; /* 1: host CPUs (platform_drop_host_cpus) are no hosts of the run */
} platform_use;

/* Drops from hosts[0..n) every host CPU, a host named X-cpu where the platform has a host X
 * (platform_spec.host_cpus), keeping the others in order; returns how many are left. */
size_t platform_drop_host_cpus(sg_host_t *hosts, size_t n);

/* platform_check, and then in the same child what SimGrid would abort on once the run
 * starts, for the hosts of use: a host of speed 0, two hosts with no route between them,
 * a route over a link of bandwidth 0 (every ordered pair up to 256 hosts; beyond, each
 * host with 16 hosts spread over the placement and with its neighbours). The error names
 * the host or hosts. */
long platform_check_use(const char *path, int argc, char **argv, const platform_use *use, char *err, size_t errlen);

/* The network model a platform file's <config> names (its network/model prop) into buf,
 * or "" if it names none or cannot be read. */
void platform_file_model(const char *path, char *buf, size_t len);

/* Whether SimGrid accepts these options (argv[0] first), checked by a child that only
 * initialises SimGrid: 0, or -1 with one line naming the option it refuses. */
int platform_check_options(int argc, char **argv, char *err, size_t errlen);

/* The value of SimGrid option NAME among argv[1..argc-1] (the last --cfg=NAME:VALUE wins),
 * pointing into argv, or NULL when none sets it. */
const char *platform_cfg_value(int argc, char **argv, const char *name);

/* The `needed` hosts of all[0..n_all-1] a run uses into used[]: the first ones, or with
 * spread every (n_all / needed)-th. */
void platform_place(sg_host_t *all, size_t n_all, size_t needed, int spread, sg_host_t *used);

/* After simgrid_load_platform(path) in this process: the hosts in the order the file
 * declares them (host elements and cluster radicals in document order); hosts the scan
 * cannot see (e.g. from included files) follow in name order. Returns the count and a
 * malloc'ed array in *hosts that the caller frees. */
size_t platform_hosts_in_order(const char *path, sg_host_t **hosts);

/* `dtsim platform ...` (argv[0] = "platform"): writes a preset or a generated cluster
 * to -o FILE or stdout. Returns the exit status (0, or 2 on bad input). */
int platform_main(int argc, char **argv);

#endif

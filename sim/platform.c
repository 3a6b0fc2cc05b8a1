/* platform.c - SimGrid platforms for dtsim.
 *
 * The generator writes one SimGrid <cluster> per platform, because SimGrid builds cluster
 * tags in C++ without an XML element per host or link: 10,000 hosts load in a second or
 * less. star is a flat cluster (private split-duplex host links and a FATPIPE backbone,
 * i.e. a non-blocking switch); fat-tree is topology="FAT_TREE" with two levels (racks of
 * hosts under leaf switches, U uplinks per leaf, oversubscription H:U); torus and ring are
 * topology="TORUS" with three and one dimensions; dragonfly is topology="DRAGONFLY". Each
 * file carries its network model in a <config> block, so the file alone decides the
 * answer unless --cfg=network/model:X overrides it on the command line.
 *
 * SimGrid aborts the process on a malformed platform, so platform_check loads the file in
 * a child process first and turns a crash into one line of error text. */

#include "sim/platform.h"

#include "sim/fileio.h"
#include "models/gemm.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/dynar.h>
#include <xbt/sysdep.h>

/* SimGrid keeps host ids in int; far beyond what one process simulates anyway. */
#define PLATFORM_MAX_HOSTS ((size_t)10000000)

/* Defaults of a generated cluster (`dtsim platform --topology T`), round numbers chosen
 * to be easy to reason about, not to model a machine: 1 Gflop/s cores, 10 Gb/s links,
 * 1 us per link, and the plain alpha-beta network model. */
#define GEN_SPEED 1e9
#define GEN_BW 1.25e9
#define GEN_LAT 1e-6
#define GEN_MODEL "CM02"

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;
  if (!err || !errlen)
    return;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

/* ---------------------------------------------------------------- topologies */

static const char *const topology_names[] = {"star", "fat-tree", "torus", "dragonfly", "ring"};

int platform_topology_parse(const char *s, platform_topology *t)
{
  for (size_t i = 0; s && i < sizeof topology_names / sizeof *topology_names; i++)
    if (strcmp(s, topology_names[i]) == 0) {
      *t = (platform_topology)i;
      return 0;
    }
  return -1;
}

const char *platform_topology_name(platform_topology t)
{
  size_t i = (size_t)t;
  return i < sizeof topology_names / sizeof *topology_names ? topology_names[i] : "unknown";
}

const char *platform_sharing_parse(const char *s)
{
  static const char *const names[][2] = {{"shared", "SHARED"}, {"splitduplex", "SPLITDUPLEX"}, {"fatpipe", "FATPIPE"}};
  for (size_t i = 0; s && i < sizeof names / sizeof *names; i++)
    if (strcmp(s, names[i][0]) == 0)
      return names[i][1];
  return NULL;
}

void platform_scale(platform_spec *spec, double bw_f, double lat_f, double speed_f)
{
  spec->bw *= bw_f;
  spec->node_bw *= bw_f;
  spec->lat *= lat_f;
  spec->node_lat *= lat_f;
  spec->speed *= speed_f;
}

/* ---------------------------------------------------------------- presets */

typedef struct preset {
  const char *name;
  const char *description;
  void (*fill)(size_t hosts, platform_spec *spec);
} preset;

/* Dean et al., "Large Scale Distributed Deep Networks", NIPS 2012 (DistBelief), on the
 * fabric Google ran in 2011-2012. Every number's source is in platforms/README.md, Presets.
 * - 16 cores per machine: the paper reports "average CPU utilization of 16 cores" per
 *   machine and says machines have at most 20 cores.
 * - 20.8 Gflop/s per core: ASSUMPTION, a 2012 Xeon E5 (Sandy Bridge) at 2.6 GHz doing
 *   8 double-precision flops per cycle with AVX; the paper names no CPU.
 * - The network is Saturn's (Singh et al., "Jupiter Rising", SIGCOMM 2015, sec. 3.4 and
 *   Table 2), Google's cluster fabric from 2009 until Jupiter (2012): 10 GbE servers
 *   under Pluto top-of-rack switches, 20 servers and 4 x 10G uplinks per ToR in the
 *   default configuration (an average of 2 Gb/s per server, bursts of 10 Gb/s), and a
 *   non-blocking fabric above them. SimGrid's FAT_TREE gives every link one bandwidth:
 *   20 hosts and 4 uplinks of 10 Gb/s per leaf are exactly that 5:1.
 * - 50 us per link: ASSUMPTION (a NIC, a kernel TCP stack and a switch hop).
 * - LV08: SimGrid's model calibrated for TCP over Ethernet, which the cluster ran.
 * - 1,280 hosts (64 racks) by default; asked for more or fewer, whole racks are added. */
static void fill_distbelief_2012(size_t hosts, platform_spec *spec)
{
  spec->topology = PLATFORM_FAT_TREE;
  spec->hosts = hosts ? hosts : 1280;
  spec->speed = 2.6e9 * 8;
  spec->cores = 16;
  spec->bw = 10e9 / 8;
  spec->lat = 50e-6;
  spec->hosts_per_rack = 20;
  spec->uplinks = 4;
  spec->network_model = "LV08";
  spec->name = "host";
}

/* Google's cluster network of 2004, before its fabrics (Jupiter Rising, sec. 2): "40
 * servers connected at 1Gb/s to a ToR switch with approximately 10:1 oversubscription";
 * machines as distbelief-2012's. What distbelief-2012 was until it took Saturn's network:
 * 1 GbE, racks of 40 with 4 uplinks of 1 Gb/s (SimGrid's FAT_TREE: one bandwidth for all
 * links, so the 10:1 is the uplink count), 50 us per link, LV08; 1,280 hosts by default. */
static void fill_google_2004(size_t hosts, platform_spec *spec)
{
  fill_distbelief_2012(hosts, spec);
  spec->bw = 125e6;
  spec->hosts_per_rack = 40;
  spec->uplinks = 4;
}

/* DistBelief's GPU baseline (Dean'12 sec. 5: "the same model on a single GPU", with
 * CUDA; the paper names no GPU).
 * - 1,331 Gflop/s: ASSUMPTION, a 2012 Tesla M2090 (Fermi: 512 CUDA cores x 1.3 GHz x 2
 *   single-precision flops per fused multiply-add); one core, as a GPU is one device.
 * - One host by default; more hosts form a 1 GbE star (125e6 bytes/s, 50 us, LV08, as
 *   distbelief-2012), which a one-GPU baseline never uses. */
static void fill_gpu_2012(size_t hosts, platform_spec *spec)
{
  spec->topology = PLATFORM_STAR;
  spec->hosts = hosts ? hosts : 1;
  spec->speed = 512 * 1.3e9 * 2;
  spec->cores = 1;
  spec->bw = 125e6;
  spec->lat = 50e-6;
  spec->network_model = "LV08";
  spec->name = "gpu";
}

/* GPU nodes for tensor parallelism (the writer's gpus_per_node form): every number and
 * its source is in platforms/README.md, Presets. Link bandwidths are per direction
 * (SPLITDUPLEX): NVIDIA's "300 GB/s" (V100, 6 NVLink2 links x 50 GB/s) and "600 GB/s"
 * (A100, 12 NVLink3 links x 50 GB/s) count both directions, so a GPU sends at 150e9
 * and 300e9 B/s; InfiniBand rates are per direction: 8 x 100 Gb/s = 100e9 B/s per DGX-2H
 * (Megatron-LM's "100 GB/s between servers"), 8 x 200 Gb/s = 200e9 B/s per Selene node.
 * CM02 with no cross traffic, under which the collectives' alpha-beta formulas hold. */
static void fill_gpu_nodes(size_t hosts, size_t per_node, size_t default_nodes, platform_spec *spec)
{
  spec->topology = PLATFORM_STAR;
  spec->hosts = hosts ? hosts : per_node * default_nodes;
  spec->cores = 1;
  spec->gpus_per_node = per_node;
  spec->network_model = "CM02";
  spec->name = "gpu";
}

/* The share of an SM's peak cuBLAS's GEMM main loop sustains on a full tile: the kernel
 * model's one fitted number per GPU, fitted on the largest of Baidu DeepBench's V100 GEMMs
 * (8448 x 48000 x 2816, 107.6 Tflop/s; `dtsim reproduce gemm` fits it again and checks the
 * other 159 rows with it), to 4 digits. The A100 takes the V100's (ASSUMPTION: DeepBench has
 * no A100 results). */
#define CUBLAS_GEMM_EFF 0.8631

/* The SMs NCCL's collective kernels hold on a GPU while a collective runs: one CUDA block
 * per channel, each on an SM of its own that no compute kernel shares, and on a DGX with 8
 * NICs, 16 of them (the NCCL maintainers, NVIDIA/nccl issue 689). Both GPU presets are
 * DGX nodes with 8 NICs (ASSUMPTION: the count NCCL 2.4 chose on a DGX-2H in 2019 is not
 * published; 16 is what the maintainers give for today's NCCL on such a node). */
#define NCCL_DGX_SMS 16

/* Megatron-LM (Shoeybi et al. 2019): up to 32 DGX-2H of 16 V100 each; 125 Tflop/s fp16
 * tensor-core peak per V100 (NVIDIA's V100 SXM3 figure, of which Megatron's 39 Tflop/s
 * is 30%); 900 GB/s of HBM2 per V100 (NVIDIA's V100 datasheet); 0.5 us per NVSwitch link
 * and 1 us per IB link are ASSUMPTIONS. The V100's 80 SMs (NVIDIA's Volta whitepaper), its
 * L2 at 2,155 GB/s (measured: Jia et al. 2018, arXiv 1804.06826, Table 3.1), 7 us per
 * kernel (the floor of Baidu DeepBench's V100 GEMM times: 8 us for 512 x 16 x 512, whose
 * data takes 0.6 us). NCCL reaches 0.8 of NVLink's line rate (25 GB/s per link and
 * direction carry ~20 GB/s of 128-byte payloads: the NCCL maintainers, NVIDIA/nccl-tests
 * issue 149) and 12 of a 100 Gb/s NIC's 12.5 GB/s (nccl-tests issue 119). */
static void fill_dgx2h(size_t hosts, platform_spec *spec)
{
  fill_gpu_nodes(hosts, 16, 32, spec);
  spec->speed = 125e12;
  spec->mem_bw = 900e9;
  spec->bw = 150e9;
  spec->lat = 0.5e-6;
  spec->node_bw = 8 * 100e9 / 8;
  spec->node_lat = 1e-6;
  spec->gpu_sms = 80;
  spec->gpu_comm_sms = NCCL_DGX_SMS;
  spec->gpu_gemm_eff = CUBLAS_GEMM_EFF;
  spec->gpu_l2_bw = 2155e9;
  spec->gpu_launch = 7e-6;
  spec->bw_eff = 20.0 / 25;
  spec->node_bw_eff = 12 / 12.5;
}

/* PTD-P (Narayanan et al. 2021): Selene, 8 A100 80GB per node, 312 Tflop/s fp16 peak,
 * 2,039 GB/s of HBM2e (NVIDIA's A100 80GB SXM datasheet), NVSwitch, 8 x 200 Gb/s HDR IB per
 * node in a (non-blocking) 3-level fat tree; 8 nodes (64 GPUs) by default; latencies as
 * dgx2h (ASSUMPTIONS). The A100's 108 SMs (NVIDIA's A100 whitepaper); its L2 the V100's
 * measured 2,155 GB/s times the whitepaper's ratio of L2 read bandwidth (5,120 against 2,048
 * bytes per clock, at 1,410 against 1,530 MHz: 4.965e12); 7 us per kernel as the V100 (ASSUMPTION:
 * DeepBench has no A100 results). NCCL reaches ~230 of NVSwitch's 300 GB/s on A100 (the
 * NCCL maintainers, nccl-tests issue 149) and 24 of a 200 Gb/s NIC's 25 GB/s (issue 119). */
#define A100_L2_BW 4.965e12 /* 2155e9 x (5120 x 1410) / (2048 x 1530), to 4 digits */
static void fill_selene(size_t hosts, platform_spec *spec)
{
  fill_gpu_nodes(hosts, 8, 8, spec);
  spec->speed = 312e12;
  spec->mem_bw = 2039e9;
  spec->bw = 300e9;
  spec->lat = 0.5e-6;
  spec->node_bw = 8 * 200e9 / 8;
  spec->node_lat = 1e-6;
  spec->gpu_sms = 108;
  spec->gpu_comm_sms = NCCL_DGX_SMS;
  spec->gpu_gemm_eff = CUBLAS_GEMM_EFF;
  spec->gpu_l2_bw = A100_L2_BW;
  spec->gpu_launch = 7e-6;
  spec->bw_eff = 230.0 / 300;
  spec->node_bw_eff = 24 / 25.0;
}

static const preset presets[] = {
    {"distbelief-2012",
     "Dean'12 CPU cluster: 16-core 20.8 Gflop/s/core machines on Google's Saturn fabric (Jupiter "
     "Rising): 10 GbE, racks of 20 with 4 x 10G uplinks (5:1), non-blocking above, 50 us links, "
     "LV08 (TCP/Ethernet); 1,280 hosts by default",
     fill_distbelief_2012},
    {"gpu-2012",
     "Dean'12 GPU baseline: one 1,331 Gflop/s GPU host (a 2012 Tesla M2090, fp32 peak); more "
     "hosts form a 1 GbE star",
     fill_gpu_2012},
    {"dgx2h",
     "Megatron-LM 2019: DGX-2H nodes of 16 V100 (125 Tflop/s fp16 peak, one host each), "
     "NVSwitch 150e9 B/s per GPU per direction, 8 x 100 Gb/s IB per node; 32 nodes by default",
     fill_dgx2h},
    {"selene",
     "PTD-P 2021: Selene nodes of 8 A100 (312 Tflop/s fp16 peak), NVSwitch 300e9 B/s per GPU per "
     "direction, 8 x 200 Gb/s HDR IB per node, non-blocking fat tree; 8 nodes by default",
     fill_selene},
    {"google-2004",
     "Google's cluster network of 2004 (Jupiter Rising): distbelief-2012's machines on 1 GbE, racks "
     "of 40 with 10:1 uplinks, 50 us links, LV08; 1,280 hosts by default",
     fill_google_2004},
};

int platform_preset(const char *name, size_t hosts, platform_spec *spec)
{
  for (size_t i = 0; name && i < sizeof presets / sizeof *presets; i++)
    if (strcmp(name, presets[i].name) == 0) {
      memset(spec, 0, sizeof *spec);
      presets[i].fill(hosts, spec);
      return 0;
    }
  return -1;
}

const char *platform_preset_at(size_t i, const char **description)
{
  if (i >= sizeof presets / sizeof *presets)
    return NULL;
  if (description)
    *description = presets[i].description;
  return presets[i].name;
}

/* ---------------------------------------------------------------- shapes */

typedef struct shape {
  size_t hosts;          /* hosts the file declares (>= requested) */
  const char *tag;       /* SimGrid topology attribute, NULL for a flat cluster */
  char params[128];      /* topo_parameters */
  char summary[160];     /* for the comment at the top of the file */
} shape;

static size_t ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }

/* Smallest k with k^d >= n (d = 2, 3 or 4; n <= PLATFORM_MAX_HOSTS, so no overflow). */
static size_t ceil_root(size_t n, int d)
{
  size_t k = 1;
  for (;;) {
    size_t p = 1;
    for (int i = 0; i < d; i++)
      p *= k;
    if (p >= n)
      return k;
    k++;
  }
}

/* Three torus dimensions a <= b <= c with a*b*c >= n: the smallest product, then the
 * smallest largest dimension (closest to a cube, fewest hops). */
static void torus_dims(size_t n, size_t d[3])
{
  size_t cap = 2 * ceil_root(n, 3), best = 0, best_max = 0;
  for (size_t a = 1; a <= cap; a++)
    for (size_t b = a; b <= cap; b++) {
      size_t c = ceil_div(n, a * b);
      if (c < b || c > cap)
        continue;
      size_t p = a * b * c;
      if (best == 0 || p < best || (p == best && c < best_max)) {
        best = p;
        best_max = c;
        d[0] = a, d[1] = b, d[2] = c;
      }
    }
}

/* Dragonfly groups g, chassis per group c, routers (blades) per chassis r, hosts per
 * router h, with g*c*r*h >= n: smallest product, then smallest largest factor, then more
 * groups. SimGrid 3.32 links group i to group j through router j of group i and routes
 * through green_links_[target group], so it needs g <= r. */
static void dragonfly_dims(size_t n, size_t d[4])
{
  size_t cap = 2 * ceil_root(n, 4), best = 0, best_max = 0;
  for (size_t g = 1; g <= cap; g++)
    for (size_t c = 1; c <= cap; c++)
      for (size_t r = g; r <= cap; r++) {
        size_t h = ceil_div(n, g * c * r);
        if (h > cap)
          continue;
        size_t p = g * c * r * h, m = g;
        m = c > m ? c : m;
        m = r > m ? r : m;
        m = h > m ? h : m;
        if (best == 0 || p < best || (p == best && m < best_max) ||
            (p == best && m == best_max && g > d[0])) {
          best = p;
          best_max = m;
          d[0] = g, d[1] = c, d[2] = r, d[3] = h;
        }
      }
}

static int shape_of(const platform_spec *spec, shape *sh, char *err, size_t errlen)
{
  size_t n = spec->hosts;
  memset(sh, 0, sizeof *sh);
  switch (spec->topology) {
    case PLATFORM_STAR:
      sh->hosts = n;
      snprintf(sh->summary, sizeof sh->summary, "star: %zu hosts on one non-blocking switch", n);
      return 0;
    case PLATFORM_RING:
      sh->hosts = n;
      sh->tag = "TORUS";
      snprintf(sh->params, sizeof sh->params, "%zu", n);
      snprintf(sh->summary, sizeof sh->summary, "ring: %zu hosts (1-D torus)", n);
      return 0;
    case PLATFORM_TORUS: {
      /* SimGrid 3.32 names a torus link after its two ends, so every dimension of size 1
       * adds a link from a host to itself and two of them collide ("Link ... declared
       * several times"): dimensions of size 1 are dropped (3 hosts: a ring of 3). */
      size_t d[3] = {1, 1, 1}, len = 0;
      torus_dims(n, d);
      sh->hosts = d[0] * d[1] * d[2];
      sh->tag = "TORUS";
      for (int i = 0; i < 3; i++)
        if (d[i] > 1)
          len += (size_t)snprintf(sh->params + len, sizeof sh->params - len, "%s%zu",
                                  len ? "," : "", d[i]);
      if (len == 0)
        snprintf(sh->params, sizeof sh->params, "1");
      snprintf(sh->summary, sizeof sh->summary, "torus: %zu x %zu x %zu = %zu hosts", d[0], d[1],
               d[2], sh->hosts);
      return 0;
    }
    case PLATFORM_DRAGONFLY: {
      size_t d[4] = {0, 0, 0, 0};
      dragonfly_dims(n, d);
      sh->hosts = d[0] * d[1] * d[2] * d[3];
      sh->tag = "DRAGONFLY";
      snprintf(sh->params, sizeof sh->params, "%zu,1;%zu,1;%zu,1;%zu", d[0], d[1], d[2], d[3]);
      snprintf(sh->summary, sizeof sh->summary,
               "dragonfly: %zu groups x %zu chassis x %zu routers x %zu hosts = %zu hosts", d[0],
               d[1], d[2], d[3], sh->hosts);
      return 0;
    }
    case PLATFORM_FAT_TREE: {
      /* Default rack: a leaf-spine of one switch radix k, k/2 hosts and k/2 uplinks per
       * leaf and k leaves, holds k^2/2 hosts; so H = ceil(sqrt(n/2)) and U = H (1:1). */
      size_t h = spec->hosts_per_rack ? spec->hosts_per_rack : ceil_root(ceil_div(n, 2), 2);
      if (h > PLATFORM_MAX_HOSTS || spec->uplinks > PLATFORM_MAX_HOSTS) {
        set_err(err, errlen, "fat tree: rack size or uplink count too large");
        return -1;
      }
      size_t u = spec->uplinks ? spec->uplinks : h;
      size_t r = ceil_div(n, h);
      sh->hosts = r * h;
      sh->tag = "FAT_TREE";
      /* SimGrid: levels; children per node by level; parents per node by level; links
       * between a node and each parent. Level 1: H hosts per leaf, each host has 1 leaf;
       * level 2: R leaves per spine, each leaf has U spines (so U spines in all). */
      snprintf(sh->params, sizeof sh->params, "2;%zu,%zu;1,%zu;1,1", h, r, u);
      snprintf(sh->summary, sizeof sh->summary,
               "fat-tree: %zu racks x %zu hosts = %zu hosts, %zu uplinks per rack (%zu:%zu)", r,
               h, sh->hosts, u, h, u);
      return 0;
    }
  }
  set_err(err, errlen, "unknown topology %d", (int)spec->topology);
  return -1;
}

/* ---------------------------------------------------------------- writer */

/* Shortest decimal that reads back as the same double, so the file shows 5e-05, not
 * 5.0000000000000002e-05, and still round-trips exactly. */
static void fmt_num(char *buf, size_t n, double v)
{
  if (v >= 1 && v < 1e15 && v == (double)(long long)v) {
    snprintf(buf, n, "%lld", (long long)v);
    return;
  }
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, n, "%.*g", p, v);
    if (strtod(buf, NULL) == v)
      return;
  }
}

static int valid_model(const char *m) { return strcmp(m, "LV08") == 0 || strcmp(m, "CM02") == 0; }

static int valid_name(const char *s)
{
  if (!*s)
    return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '-' || *s == '_' || *s == '.'))
      return 0;
  return 1;
}

/* Closes a <cluster> element whose attributes are written: with mem_bw or a GPU
 * description, properties every host of the cluster gets (SimGrid copies a cluster's
 * properties to its hosts). */
static void end_cluster(const platform_spec *spec, FILE *out, const char *indent)
{
  const char *names[] = {"mem_bw", "gpu_sms", "gpu_gemm_eff", "gpu_l2_bw", "gpu_launch", "gpu_comm_sms"};
  double values[] = {spec->mem_bw, (double)spec->gpu_sms, spec->gpu_sms ? spec->gpu_gemm_eff : 0,
                     spec->gpu_sms ? spec->gpu_l2_bw : 0, spec->gpu_sms ? spec->gpu_launch : 0,
                     spec->gpu_sms ? (double)spec->gpu_comm_sms : 0};
  int any = spec->gpu_sms > 0 && spec->gpu_tiles != NULL;
  for (size_t i = 0; i < sizeof values / sizeof *values; i++)
    any |= values[i] > 0;
  if (!any) {
    fputs("/>\n", out);
    return;
  }
  fputs(">\n", out);
  for (size_t i = 0; i < sizeof values / sizeof *values; i++)
    if (values[i] > 0) {
      char num[64];
      fmt_num(num, sizeof num, values[i]);
      fprintf(out, "%s  <prop id=\"%s\" value=\"%s\"/>\n", indent, names[i], num);
    }
  if (spec->gpu_sms > 0 && spec->gpu_tiles != NULL)
    fprintf(out, "%s  <prop id=\"gpu_tiles\" value=\"%s\"/>\n", indent, spec->gpu_tiles);
  fprintf(out, "%s</cluster>\n", indent);
}

/* One cluster per node (hosts on private split-duplex links and no backbone: the node's
 * switch is non-blocking, NVSwitch), one
 * link per node to the fabric, and a zoneRoute for every pair of nodes through both nodes'
 * links: a non-blocking fabric where only the nodes' adapters limit a flow. Full routing
 * holds nodes^2/2 routes, fine for the hundreds of nodes these machines have (3,072 GPUs:
 * 16 MB, loaded in about 1.5 s). No FATPIPE backbone: SimGrid shares bandwidth in
 * inverse proportion to a flow's route latency, and a FATPIPE backbone shared by an
 * intra-node flow (1 us) and an inter-node one (3 us) held the latter to half of its
 * adapter's rate (measured), which no switch does. */
static int write_gpu_nodes(const platform_spec *spec, FILE *out, char *err, size_t errlen)
{
  const char *name = spec->name ? spec->name : "gpu";
  const char *sharing = spec->sharing ? spec->sharing : "SPLITDUPLEX";
  size_t g = spec->gpus_per_node, nodes = ceil_div(spec->hosts, g);
  char speed[64], bw[64], lat[64], nbw[64], nlat[64];
  if (!(spec->node_bw > 0) || !isfinite(spec->node_bw) || !(spec->node_lat >= 0) || !isfinite(spec->node_lat)) {
    set_err(err, errlen, "node links need a positive bandwidth and a non-negative latency");
    return -1;
  }
  if (nodes * g > PLATFORM_MAX_HOSTS) {
    set_err(err, errlen, "too many hosts after rounding up to whole nodes");
    return -1;
  }
  fmt_num(speed, sizeof speed, spec->speed);
  fmt_num(bw, sizeof bw, spec->bw);
  fmt_num(lat, sizeof lat, spec->lat);
  fmt_num(nbw, sizeof nbw, spec->node_bw);
  fmt_num(nlat, sizeof nlat, spec->node_lat);
  fprintf(out, "<?xml version='1.0'?>\n");
  fprintf(out, "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n");
  fprintf(out, "<platform version=\"4.1\">\n");
  fprintf(out, "  <!-- Written by dtsim platform. %zu nodes x %zu GPUs = %zu hosts", nodes, g, nodes * g);
  if (nodes * g != spec->hosts)
    fprintf(out, " (%zu asked, rounded up to whole nodes)", spec->hosts);
  fprintf(out, "; host %s-i is GPU i %% %zu of node i / %zu", name, g, g);
  if (spec->bw_eff > 0 || spec->node_bw_eff > 0) {
    char a[64], b[64];
    fmt_num(a, sizeof a, spec->bw_eff > 0 ? spec->bw_eff : 1);
    fmt_num(b, sizeof b, spec->node_bw_eff > 0 ? spec->node_bw_eff : 1);
    fprintf(out, "; link bandwidths are what collectives reach: GPU links x %s, node links x %s of nominal", a, b);
  }
  fputs(". -->\n", out);
  fprintf(out, "  <config>\n    <prop id=\"network/model\" value=\"%s\"/>\n"
               "    <prop id=\"network/crosstraffic\" value=\"0\"/>\n  </config>\n",
          spec->network_model ? spec->network_model : GEN_MODEL);
  fprintf(out, "  <zone id=\"%s\" routing=\"Full\">\n", name);
  for (size_t n = 0; n < nodes; n++) {
    fprintf(out,
            "    <cluster id=\"%s-node-%zu\" prefix=\"%s-\" suffix=\"\" radical=\"%zu-%zu\" speed=\"%sf\" core=\"%d\"\n"
            "             bw=\"%sBps\" lat=\"%ss\" sharing_policy=\"%s\" router_id=\"%s-node-%zu-router\"",
            name, n, name, n * g, n * g + g - 1, speed, spec->cores, bw, lat, sharing, name, n);
    end_cluster(spec, out, "    ");
  }
  for (size_t n = 0; n < nodes; n++)
    fprintf(out, "    <link id=\"%s-ib-%zu\" bandwidth=\"%sBps\" latency=\"%ss\" sharing_policy=\"%s\"/>\n",
            name, n, nbw, nlat, sharing);
  for (size_t a = 0; a < nodes; a++)
    for (size_t b = a + 1; b < nodes; b++)
      fprintf(out,
              "    <zoneRoute src=\"%s-node-%zu\" dst=\"%s-node-%zu\" gw_src=\"%s-node-%zu-router\" "
              "gw_dst=\"%s-node-%zu-router\">\n"
              "      <link_ctn id=\"%s-ib-%zu\" direction=\"UP\"/><link_ctn id=\"%s-ib-%zu\" direction=\"DOWN\"/>\n"
              "    </zoneRoute>\n",
              name, a, name, b, name, a, name, b, name, a, name, b);
  fprintf(out, "  </zone>\n</platform>\n");
  if (ferror(out)) {
    set_err(err, errlen, "write error: %s", strerror(errno));
    return -1;
  }
  return 0;
}

/* bw x eff, to a whole byte/s when that is at least 1 kB/s (230/300 of 300e9 is 230e9, not
 * 230e9 and 3e-5). */
static double link_times(double bw, double eff)
{
  double v = bw * eff;
  return v >= 1e3 ? nearbyint(v) : v;
}

/* The spec as written: link bandwidths times their efficiencies. */
static void effective_links(const platform_spec *in, platform_spec *out)
{
  *out = *in;
  if (in->bw_eff > 0)
    out->bw = link_times(in->bw, in->bw_eff);
  if (in->node_bw_eff > 0)
    out->node_bw = link_times(in->node_bw, in->node_bw_eff);
}

int platform_write(const platform_spec *nominal, FILE *out, char *err, size_t errlen)
{
  platform_spec eff;
  const platform_spec *spec = &eff;
  gemm_device tiles;
  if (!(nominal->bw_eff >= 0 && nominal->bw_eff <= 1) || !(nominal->node_bw_eff >= 0 && nominal->node_bw_eff <= 1)) {
    set_err(err, errlen, "link efficiencies must be in (0, 1]");
    return -1;
  }
  if (nominal->gpu_sms > 0 && (!(nominal->gpu_l2_bw >= 0) || !isfinite(nominal->gpu_l2_bw) ||
                               !(nominal->gpu_gemm_eff >= 0 && nominal->gpu_gemm_eff <= 1) ||
                               !(nominal->gpu_launch >= 0) || !isfinite(nominal->gpu_launch) ||
                               (nominal->gpu_tiles && gemm_tiles_parse(nominal->gpu_tiles, &tiles) != 0))) {
    set_err(err, errlen, "bad GPU description (GEMM efficiency in (0, 1], L2 bandwidth and launch time >= 0, tiles "
            "such as 256x128,128x128)");
    return -1;
  }
  if (nominal->gpu_sms > 0 && nominal->gpu_comm_sms >= nominal->gpu_sms) {
    set_err(err, errlen, "a GPU's collectives must leave it SMs to compute on (--gpu-comm-sms below --gpu-sms)");
    return -1;
  }
  if (nominal->gpu_sms > 0 && !(nominal->mem_bw > 0)) {
    set_err(err, errlen, "a GPU description needs the memory bandwidth (--mem-bw)");
    return -1;
  }
  effective_links(nominal, &eff);
  const char *model = spec->network_model ? spec->network_model : GEN_MODEL;
  const char *name = spec->name ? spec->name : "host";
  char num[64];
  shape sh;

  if (spec->hosts == 0) {
    set_err(err, errlen, "zero hosts");
    return -1;
  }
  if (spec->hosts > PLATFORM_MAX_HOSTS) {
    set_err(err, errlen, "too many hosts (at most %zu)", PLATFORM_MAX_HOSTS);
    return -1;
  }
  if (!(spec->speed > 0) || !isfinite(spec->speed)) {
    set_err(err, errlen, "speed must be a positive number of flop/s");
    return -1;
  }
  if (spec->cores < 1) {
    set_err(err, errlen, "cores must be at least 1");
    return -1;
  }
  if (!(spec->bw > 0) || !isfinite(spec->bw)) {
    set_err(err, errlen, "bandwidth must be a positive number of bytes/s");
    return -1;
  }
  if (!(spec->lat >= 0) || !isfinite(spec->lat)) {
    set_err(err, errlen, "latency must be a non-negative number of seconds");
    return -1;
  }
  if (!valid_model(model)) {
    set_err(err, errlen, "unknown network model '%s' (LV08 or CM02)", model);
    return -1;
  }
  if (!valid_name(name)) {
    set_err(err, errlen, "bad cluster name '%s' (letters, digits, '-', '_', '.')", name);
    return -1;
  }
  if (spec->sharing && strcmp(spec->sharing, "SHARED") != 0 && strcmp(spec->sharing, "SPLITDUPLEX") != 0 &&
      strcmp(spec->sharing, "FATPIPE") != 0) {
    set_err(err, errlen, "unknown sharing policy '%s' (SHARED, SPLITDUPLEX or FATPIPE)", spec->sharing);
    return -1;
  }
  if (spec->gpus_per_node > 0)
    return write_gpu_nodes(spec, out, err, errlen);
  if (shape_of(spec, &sh, err, errlen) != 0)
    return -1;
  if (sh.hosts > PLATFORM_MAX_HOSTS) {
    set_err(err, errlen, "too many hosts after rounding up to the %s shape",
            platform_topology_name(spec->topology));
    return -1;
  }

  fprintf(out, "<?xml version='1.0'?>\n");
  fprintf(out, "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n");
  fprintf(out, "<platform version=\"4.1\">\n");
  fprintf(out, "  <!-- Written by dtsim platform. %s", sh.summary);
  if (sh.hosts != spec->hosts)
    fprintf(out, " (%zu asked, rounded up to a whole shape)", spec->hosts);
  fprintf(out, ". -->\n");
  fprintf(out, "  <config>\n    <prop id=\"network/model\" value=\"%s\"/>\n  </config>\n", model);
  fprintf(out, "  <cluster id=\"%s\" prefix=\"%s-\" suffix=\"\" radical=\"0", name, name);
  if (sh.hosts > 1)
    fprintf(out, "-%zu", sh.hosts - 1);
  fmt_num(num, sizeof num, spec->speed);
  fprintf(out, "\" speed=\"%sf\" core=\"%d\"\n", num, spec->cores);
  fmt_num(num, sizeof num, spec->bw);
  fprintf(out, "           bw=\"%sBps\"", num);
  fmt_num(num, sizeof num, spec->lat);
  fprintf(out, " lat=\"%ss\" sharing_policy=\"%s\"", num, spec->sharing ? spec->sharing : "SPLITDUPLEX");
  if (sh.tag) {
    fprintf(out, "\n           topology=\"%s\" topo_parameters=\"%s\"", sh.tag, sh.params);
    end_cluster(spec, out, "  ");
  } else {
    /* The backbone is the switch: FATPIPE bounds each flow by bb_bw without sharing it, so
     * with bb_bw = bw and no latency only the host links shape a transfer. */
    fmt_num(num, sizeof num, spec->bw);
    fprintf(out, "\n           bb_bw=\"%sBps\" bb_lat=\"0s\" bb_sharing_policy=\"FATPIPE\"", num);
    end_cluster(spec, out, "  ");
  }
  fprintf(out, "</platform>\n");
  if (ferror(out)) {
    set_err(err, errlen, "write error: %s", strerror(errno));
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------- pre-check */

#define CHECK_ERR_MAX 65536
#define CHECK_MSG_MAX 512

static void child_crash(int sig)
{
  (void)sig;
  _exit(70);
}

static void catch_crashes(const struct sigaction *sa)
{
  static const int sigs[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
    sigaction(sigs[i], sa, NULL);
}

/* The hosts a run uses, as the engine places them: the first `needed` in file order
 * (packed), or spread evenly over all of them. */
void platform_place(sg_host_t *all, size_t n_all, size_t needed, int spread, sg_host_t *used)
{
  for (size_t i = 0; i < needed; i++)
    used[i] = all[spread ? i * n_all / needed : i];
}

/* Up to this many hosts, routes are checked between every ordered pair; above, between
 * each host and CHECK_HUBS hosts spread evenly over the placement, both ways, and between
 * neighbours in placement order (about 34 lookups per host). A lookup costs 0.5 to 2 us
 * (every pair of a 1,000-host fat tree: 0.5 to 2.3 s on a loaded 2-core machine; the
 * scale runs use 10,000 hosts). */
#define CHECK_ALL_PAIRS_MAX 256
#define CHECK_HUBS 16

/* One route of the run: empty (SimGrid aborts at the first message: "no connecting
 * path") or crossing a link of no bandwidth (SimGrid's solver aborts: "The Impossible
 * Did Happen") is a problem, written into msg. */
static int route_bad(sg_host_t a, sg_host_t b, xbt_dynar_t route, char *msg, size_t len)
{
  xbt_dynar_reset(route);
  sg_host_get_route(a, b, route);
  if (xbt_dynar_is_empty(route)) {
    snprintf(msg, len, "no route from host %s to host %s, two hosts the run uses", sg_host_get_name(a),
             sg_host_get_name(b));
    return 1;
  }
  unsigned k;
  sg_link_t l;
  xbt_dynar_foreach (route, k, l)
    if (!(sg_link_get_bandwidth(l) > 0)) {
      snprintf(msg, len, "link %s on the route from host %s to host %s has bandwidth %g", sg_link_get_name(l),
               sg_host_get_name(a), sg_host_get_name(b), sg_link_get_bandwidth(l));
      return 1;
    }
  return 0;
}

/* What SimGrid would abort on once the run starts, for the hosts it uses: a host of no
 * speed, an unroutable pair of hosts, a route over a link of no bandwidth. Returns 0, or
 * 1 with the problem in msg. */
static int check_use(const char *path, const platform_use *use, char *msg, size_t len)
{
  sg_host_t *all;
  size_t n_all = platform_hosts_in_order(path, &all);
  if (use->needed == 0 || n_all < use->needed) { /* the caller reports too few hosts */
    xbt_free(all);
    return 0;
  }
  size_t n = use->needed;
  sg_host_t *h = xbt_malloc(n * sizeof *h);
  platform_place(all, n_all, n, use->spread, h);
  int bad = 0;
  for (size_t i = 0; i < n && !bad; i++)
    if (!(sg_host_get_speed(h[i]) > 0) || sg_host_core_count(h[i]) < 1) {
      snprintf(msg, len, "host %s has a speed of %g flop/s on %d cores; the run computes on it (host %zu of the %zu "
               "it uses)", sg_host_get_name(h[i]), sg_host_get_speed(h[i]), sg_host_core_count(h[i]), i + 1, n);
      bad = 1;
    }
  xbt_dynar_t route = xbt_dynar_new(sizeof(sg_link_t), NULL);
  if (n <= CHECK_ALL_PAIRS_MAX) {
    for (size_t i = 0; i < n && !bad; i++)
      for (size_t j = 0; j < n && !bad; j++)
        bad = i != j && route_bad(h[i], h[j], route, msg, len);
  } else {
    for (size_t i = 0; i < n && !bad; i++) {
      for (size_t k = 0; k < CHECK_HUBS && !bad; k++) {
        size_t hub = k * n / CHECK_HUBS;
        bad = hub != i && (route_bad(h[hub], h[i], route, msg, len) || route_bad(h[i], h[hub], route, msg, len));
      }
      if (!bad && i > 0)
        bad = route_bad(h[i - 1], h[i], route, msg, len) || route_bad(h[i], h[i - 1], route, msg, len);
    }
  }
  xbt_dynar_free(&route);
  xbt_free(h);
  xbt_free(all);
  return bad;
}

/* In the child: load the platform with the caller's SimGrid options; report the host
 * count through res_fd, then (with use) 'k' or 'e' and a problem of the hosts it uses.
 * A crash (SimGrid aborts on a bad file) becomes _exit(70), which leaves no core dump
 * even where core_pattern pipes to a crash collector. */
static void check_child(const char *path, int argc, char **argv, const platform_use *use, int res_fd, int err_fd)
{
  static char prog[] = "dtsim", quiet[] = "--log=root.thresh:error", no_loc[] = "--log=no_loc";
  struct rlimit no_core = {0, 0};
  struct sigaction sa;
  char **args = xbt_malloc(((size_t)(argc > 0 ? argc : 1) + 3) * sizeof *args);
  int n = 0;

  setrlimit(RLIMIT_CORE, &no_core);
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = child_crash;
  sigemptyset(&sa.sa_mask);
  catch_crashes(&sa);
  dup2(err_fd, STDERR_FILENO);
  dup2(err_fd, STDOUT_FILENO);

  args[n++] = argc > 0 && argv && argv[0] ? argv[0] : prog;
  for (int i = 1; i < argc; i++)
    args[n++] = argv[i];
  args[n++] = quiet;
  args[n++] = no_loc;
  args[n] = NULL;
  simgrid_init(&n, args);
  catch_crashes(&sa); /* simgrid_init installs its own SIGSEGV/SIGBUS handlers */
  char stage = 'i'; /* options accepted; a failure after this is the file's */
  if (write(res_fd, &stage, 1) != 1)
    _exit(71);
  if (path == NULL) /* options only */
    _exit(0);
  simgrid_load_platform(path);
  long count = (long)sg_host_count();
  if (write(res_fd, &count, sizeof count) != (ssize_t)sizeof count)
    _exit(71);
  if (use) {
    char msg[CHECK_MSG_MAX] = "";
    char verdict = check_use(path, use, msg, sizeof msg) ? 'e' : 'k';
    if (write(res_fd, &verdict, 1) != 1 || write(res_fd, msg, sizeof msg) != (ssize_t)sizeof msg)
      _exit(71);
  }
  _exit(0);
}

/* Drops "[0.000000] [category/PRIORITY] " prefixes of SimGrid's log lines. */
static const char *strip_log_prefix(const char *s)
{
  while (*s == '[') {
    const char *e = strstr(s, "] ");
    if (!e)
      break;
    s = e + 2;
  }
  return s;
}

/* The most useful line of the child's stderr: SimGrid's "Parse error at FILE:LINE: ...",
 * else an uncaught exception's message, else the first critical or error line, else the
 * last line. Lines are cut in place (buf is modified). */
static const char *pick_error_line(char *buf)
{
  const char *parse = NULL, *uncaught = NULL, *critical = NULL, *last = NULL;
  for (char *line = buf; line && *line;) {
    char *nl = strchr(line, '\n');
    if (nl)
      *nl = '\0';
    const char *msg = strip_log_prefix(line);
    if (!parse && strstr(msg, "Parse error at"))
      parse = strstr(msg, "Parse error at");
    if (!uncaught && strncmp(msg, "Uncaught exception ", 19) == 0) {
      const char *colon = strstr(msg + 19, ": ");
      uncaught = colon ? colon + 2 : msg;
    }
    if (!critical && (strstr(line, "/CRITICAL]") || strstr(line, "/ERROR]")) &&
        strcmp(msg, "Exiting now.") != 0 && strncmp(msg, "Current backtrace", 17) != 0)
      critical = msg;
    if (*msg && strncmp(msg, "  ->", 4) != 0)
      last = msg;
    line = nl ? nl + 1 : NULL;
  }
  return parse ? parse : uncaught ? uncaught : critical ? critical : last;
}

/* What the child reported: its stage ('i': the options were accepted), the host count,
 * the verdict on the hosts the run uses ('k', 'e' with msg, or 0 when not asked), the
 * wait status and its stderr (malloc'ed). */
typedef struct child_report {
  char stage, verdict;
  long count;
  int status;
  char msg[CHECK_MSG_MAX];
  char *text;
} child_report;

static int read_full(int fd, void *buf, size_t n)
{
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, (char *)buf + got, n - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return -1;
    got += (size_t)r;
  }
  return 0;
}

/* Forks the checking child (path NULL: the options only) and collects its report.
 * Returns 0, or -1 with err set when no child could be started. */
static int run_child(const char *path, int argc, char **argv, const platform_use *use, child_report *cr, char *err,
                     size_t errlen)
{
  const char *what = path ? path : "SimGrid options";
  memset(cr, 0, sizeof *cr);
  cr->count = -1;
  int res[2], errp[2];
  if (pipe(res) != 0) {
    set_err(err, errlen, "%s: cannot check: pipe: %s", what, strerror(errno));
    return -1;
  }
  if (pipe(errp) != 0) {
    set_err(err, errlen, "%s: cannot check: pipe: %s", what, strerror(errno));
    close(res[0]), close(res[1]);
    return -1;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    set_err(err, errlen, "%s: cannot check: fork: %s", what, strerror(errno));
    close(res[0]), close(res[1]), close(errp[0]), close(errp[1]);
    return -1;
  }
  if (pid == 0) {
    close(res[0]);
    close(errp[0]);
    check_child(path, argc, argv, use, res[1], errp[1]);
  }
  close(res[1]);
  close(errp[1]);

  /* Drain stderr to EOF before waiting, so a chatty child never blocks on a full pipe. */
  cr->text = xbt_malloc(CHECK_ERR_MAX + 1);
  size_t len = 0;
  for (;;) {
    char chunk[4096];
    ssize_t r = read(errp[0], chunk, sizeof chunk);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    size_t keep = (size_t)r < CHECK_ERR_MAX - len ? (size_t)r : CHECK_ERR_MAX - len;
    memcpy(cr->text + len, chunk, keep);
    len += keep;
  }
  cr->text[len] = '\0';
  close(errp[0]);

  if (read_full(res[0], &cr->stage, 1) == 0 && cr->stage == 'i' && path) {
    if (read_full(res[0], &cr->count, sizeof cr->count) != 0)
      cr->count = -1;
    else if (use && (read_full(res[0], &cr->verdict, 1) != 0 || read_full(res[0], cr->msg, sizeof cr->msg) != 0))
      cr->verdict = 0;
    cr->msg[sizeof cr->msg - 1] = '\0';
  }
  close(res[0]);
  while (waitpid(pid, &cr->status, 0) < 0 && errno == EINTR)
    ;
  return 0;
}

/* The child's most telling line when it failed. */
static const char *child_failure(child_report *cr, char *why, size_t len)
{
  const char *line = pick_error_line(cr->text);
  if (line && *line)
    return line;
  if (WIFSIGNALED(cr->status))
    snprintf(why, len, "the SimGrid loader died of signal %d", WTERMSIG(cr->status));
  else
    snprintf(why, len, "the SimGrid loader failed (status %d)",
             WIFEXITED(cr->status) ? WEXITSTATUS(cr->status) : -1);
  return why;
}

static int child_ok(const child_report *cr)
{
  return WIFEXITED(cr->status) && WEXITSTATUS(cr->status) == 0;
}

/* The option a SimGrid complaint is about: each --cfg= or --log= is tried alone; the
 * first one that fails alone, or NULL. */
static const char *guilty_option(int argc, char **argv)
{
  for (int i = 1; i < argc; i++) {
    char *one[] = {argc > 0 ? argv[0] : "dtsim", argv[i], NULL};
    child_report cr;
    char e[64];
    if (run_child(NULL, 2, one, NULL, &cr, e, sizeof e) != 0)
      return NULL;
    int bad = !child_ok(&cr) || cr.stage != 'i';
    xbt_free(cr.text);
    if (bad)
      return argv[i];
  }
  return NULL;
}

int platform_check_options(int argc, char **argv, char *err, size_t errlen)
{
  child_report cr;
  if (argc <= 1)
    return 0;
  if (run_child(NULL, argc, argv, NULL, &cr, err, errlen) != 0)
    return -1;
  if (child_ok(&cr) && cr.stage == 'i') {
    xbt_free(cr.text);
    return 0;
  }
  char why[96];
  const char *line = child_failure(&cr, why, sizeof why);
  const char *opt = guilty_option(argc, argv);
  if (opt)
    set_err(err, errlen, "%s: SimGrid refuses this option: %s", opt, line);
  else
    set_err(err, errlen, "SimGrid refuses these options: %s", line);
  xbt_free(cr.text);
  return -1;
}

long platform_check_use(const char *path, int argc, char **argv, const platform_use *use, char *err, size_t errlen)
{
  FILE *f = fopen(path, "r");
  if (!f) {
    set_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  clearerr(f);
  (void)fgetc(f);
  if (ferror(f)) {
    int e = errno;
    fclose(f);
    set_err(err, errlen, "%s: cannot read: %s", path, strerror(e));
    return -1;
  }
  fclose(f);

  child_report cr;
  if (run_child(path, argc, argv, use, &cr, err, errlen) != 0)
    return -1;
  long rc = -1;
  if (child_ok(&cr) && cr.count >= 0 && (!use || cr.verdict)) {
    if (cr.count == 0)
      set_err(err, errlen, "%s: platform declares no hosts", path);
    else if (cr.verdict == 'e')
      set_err(err, errlen, "%s: %s", path, cr.msg);
    else
      rc = cr.count;
  } else {
    char why[96];
    const char *line = child_failure(&cr, why, sizeof why);
    if (cr.stage == 'i')
      set_err(err, errlen, "%s: malformed platform: %s", path, line);
    else
      set_err(err, errlen, "%s: cannot load with these SimGrid options: %s", path, line);
  }
  xbt_free(cr.text);
  return rc;
}

long platform_check(const char *path, int argc, char **argv, char *err, size_t errlen)
{
  return platform_check_use(path, argc, argv, NULL, err, errlen);
}

/* ---------------------------------------------------------------- hosts in file order */

/* Value of attribute `name` in the tag text [p, end), or NULL; its length in *vlen. */
static const char *tag_attr(const char *p, const char *end, const char *name, size_t *vlen)
{
  size_t nlen = strlen(name);
  while (p < end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
      p++;
    const char *an = p;
    while (p < end && *p != '=' && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r' &&
           *p != '>' && *p != '/')
      p++;
    size_t alen = (size_t)(p - an);
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
      p++;
    if (p >= end || *p != '=') {
      if (alen == 0)
        p++;
      continue;
    }
    p++;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
      p++;
    if (p >= end || (*p != '"' && *p != '\''))
      continue;
    char q = *p++;
    const char *v = p;
    while (p < end && *p != q)
      p++;
    if (alen == nlen && strncmp(an, name, nlen) == 0) {
      *vlen = (size_t)(p - v);
      return v;
    }
    p++;
  }
  return NULL;
}

typedef struct host_index {
  sg_host_t *sorted; /* every host, by name */
  size_t n;
  unsigned char *taken;
  sg_host_t *order; /* result */
  size_t count;
} host_index;

static int cmp_host_name(const void *a, const void *b)
{
  return strcmp(sg_host_get_name(*(const sg_host_t *)a), sg_host_get_name(*(const sg_host_t *)b));
}

/* Appends the host called `name` if it exists and is not listed yet; returns 1 if found. */
static int take_host(host_index *ix, const char *name)
{
  if (!sg_host_by_name(name))
    return 0;
  size_t lo = 0, hi = ix->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(sg_host_get_name(ix->sorted[mid]), name);
    if (c == 0) {
      if (!ix->taken[mid]) {
        ix->taken[mid] = 1;
        ix->order[ix->count++] = ix->sorted[mid];
      }
      return 1;
    }
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return 0;
}

static void copy_value(char *dst, size_t dstlen, const char *v, size_t vlen)
{
  size_t k = vlen < dstlen - 1 ? vlen : dstlen - 1;
  memcpy(dst, v, k);
  dst[k] = '\0';
}

/* <cluster>/<cabinet> radicals: "0-99" or "0-3,7,9-10", names prefix + i + suffix. */
static void take_radical(host_index *ix, const char *prefix, const char *suffix, const char *rad)
{
  char name[600]; /* prefix and suffix are at most 255 chars each */
  const char *p = rad;
  while (*p) {
    char *e;
    long a = strtol(p, &e, 10), b;
    if (e == p)
      return;
    p = e;
    if (*p == '-') {
      b = strtol(p + 1, &e, 10);
      if (e == p + 1)
        return;
      p = e;
    } else {
      b = a;
    }
    /* A radical wider than the hosts SimGrid made (hierarchical clusters use only the
     * first radicals) stops after as many misses in a row as there are hosts. */
    size_t misses = 0;
    for (long i = a; i <= b && misses <= ix->n; i++) {
      snprintf(name, sizeof name, "%s%ld%s", prefix, i, suffix);
      misses = take_host(ix, name) ? 0 : misses + 1;
    }
    if (*p != ',')
      return;
    p++;
  }
}

static void scan_document(host_index *ix, const char *doc, size_t len)
{
  const char *end = doc + len, *p = doc;
  char a[256], b[256], c[4096];
  while ((p = memchr(p, '<', (size_t)(end - p))) != NULL) {
    if (end - p >= 4 && strncmp(p, "<!--", 4) == 0) {
      const char *e = strstr(p + 4, "-->");
      if (!e)
        return;
      p = e + 3;
      continue;
    }
    const char *tn = ++p, *te = tn;
    while (te < end && ((*te >= 'a' && *te <= 'z') || (*te >= 'A' && *te <= 'Z') || *te == '_'))
      te++;
    /* end of tag: the first '>' outside quotes */
    const char *q = te;
    char quote = 0;
    while (q < end && (quote || *q != '>')) {
      if (quote && *q == quote)
        quote = 0;
      else if (!quote && (*q == '"' || *q == '\''))
        quote = *q;
      q++;
    }
    size_t tl = (size_t)(te - tn), vl;
    const char *v;
    if ((tl == 4 && strncmp(tn, "host", 4) == 0) || (tl == 4 && strncmp(tn, "peer", 4) == 0)) {
      if ((v = tag_attr(te, q, "id", &vl)) != NULL) {
        copy_value(a, sizeof a, v, vl);
        take_host(ix, a);
      }
    } else if ((tl == 7 && strncmp(tn, "cluster", 7) == 0) ||
               (tl == 7 && strncmp(tn, "cabinet", 7) == 0)) {
      const char *pre = tag_attr(te, q, "prefix", &vl);
      copy_value(a, sizeof a, pre ? pre : "", pre ? vl : 0);
      const char *suf = tag_attr(te, q, "suffix", &vl);
      copy_value(b, sizeof b, suf ? suf : "", suf ? vl : 0);
      const char *rad = tag_attr(te, q, "radical", &vl);
      if (rad) {
        copy_value(c, sizeof c, rad, vl);
        take_radical(ix, a, b, c);
      }
    }
    p = q;
  }
}

size_t platform_hosts_in_order(const char *path, sg_host_t **hosts)
{
  host_index ix;
  ix.n = sg_host_count();
  ix.count = 0;
  *hosts = NULL;
  if (ix.n == 0)
    return 0;
  ix.sorted = sg_host_list();
  qsort(ix.sorted, ix.n, sizeof *ix.sorted, cmp_host_name);
  ix.taken = xbt_malloc0(ix.n);
  ix.order = xbt_malloc(ix.n * sizeof *ix.order);

  size_t len = 0;
  char *doc = path ? fileio_read(path, &len) : NULL;
  if (doc)
    scan_document(&ix, doc, len);
  xbt_free(doc);
  for (size_t i = 0; i < ix.n; i++) /* the rest, in name order */
    if (!ix.taken[i])
      ix.order[ix.count++] = ix.sorted[i];

  xbt_free(ix.taken);
  xbt_free(ix.sorted);
  *hosts = ix.order;
  return ix.count;
}

/* ---------------------------------------------------------------- dtsim platform */

typedef enum quantity { Q_COUNT, Q_SPEED, Q_BW, Q_LAT } quantity;

/* Parses a number with an optional SI prefix and unit: speed 20.8G or 20.8Gf (flop/s),
 * bandwidth 125M or 125MBps (bytes/s) or 1Gbps (bits/s), latency 50us, 0.05ms or 5e-5
 * (seconds), counts as plain integers (1000 or 1e3). A prefix becomes a decimal exponent
 * before strtod, so 50us reads as 5e-05 exactly as "5e-5" would (50 * 1e-6 would not).
 * Returns 0 or -1. */
static int parse_quantity(const char *s, quantity q, double *out)
{
  static const struct { const char *unit; int exp; quantity q; int bits; } units[] = {
      {"", 0, Q_SPEED, 0},  {"f", 0, Q_SPEED, 0},   {"flops", 0, Q_SPEED, 0},
      {"", 0, Q_BW, 0},     {"B", 0, Q_BW, 0},      {"Bps", 0, Q_BW, 0},
      {"bps", 0, Q_BW, 1},  {"", 0, Q_LAT, 0},      {"s", 0, Q_LAT, 0},
      {"ms", -3, Q_LAT, 0}, {"us", -6, Q_LAT, 0},   {"ns", -9, Q_LAT, 0},
      {"ps", -12, Q_LAT, 0}, {"", 0, Q_COUNT, 0}};
  static const char prefixes[] = "kMGTPE";
  char *e, buf[128];
  errno = 0;
  double v = strtod(s, &e);
  if (e == s || errno == ERANGE || !isfinite(v))
    return -1;
  size_t numlen = (size_t)(e - s);
  int exp = 0;
  const char *pp = (q == Q_SPEED || q == Q_BW) && *e ? strchr(prefixes, *e) : NULL;
  if (pp) {
    exp = 3 * (int)(pp - prefixes + 1);
    e++;
  }
  for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
    if (units[i].q != q || strcmp(e, units[i].unit) != 0)
      continue;
    exp += units[i].exp;
    if (exp != 0) {
      /* "1.5e3k": fold the prefix into the written exponent */
      const char *x = memchr(s, 'e', numlen) ? memchr(s, 'e', numlen) : memchr(s, 'E', numlen);
      size_t mlen = x ? (size_t)(x - s) : numlen;
      long xe = x ? strtol(x + 1, NULL, 10) : 0;
      if (mlen > 64 || xe < -400 || xe > 400)
        return -1;
      snprintf(buf, sizeof buf, "%.*se%ld", (int)mlen, s, xe + exp);
      v = strtod(buf, NULL);
    }
    if (units[i].bits)
      v /= 8;
    if (!isfinite(v))
      return -1;
    if (q == Q_COUNT && (v < 0 || v > (double)PLATFORM_MAX_HOSTS || v != (double)(long long)v))
      return -1;
    *out = v;
    return 0;
  }
  return -1;
}

static void platform_usage(FILE *out)
{
  fprintf(out,
          "usage: dtsim platform PRESET [--hosts N] [OPTION]... [-o FILE]\n"
          "       dtsim platform --hosts N --topology T [OPTION]... [-o FILE]\n"
          "\n"
          "Writes a SimGrid 3.32 platform (XML) for a preset or a generated cluster to FILE,\n"
          "or to standard output. Hosts are named NAME-0, NAME-1, ... (NAME: host).\n"
          "\n"
          "Presets:\n");
  const char *desc;
  for (size_t i = 0; platform_preset_at(i, &desc); i++)
    fprintf(out, "  %-16s %s\n", platform_preset_at(i, NULL), desc);
  fprintf(out,
          "\n"
          "Options (with a preset they override its values):\n"
          "  --hosts N            at least N hosts; shapes round up: fat tree to whole racks,\n"
          "                       torus and dragonfly to a whole grid; star and ring are exact\n"
          "  --topology T         star | fat-tree | torus | dragonfly | ring\n"
          "  --speed S            flop/s of one core (default 1G); e.g. 20.8G, 2.08e10\n"
          "  --cores C            cores per host (default 1)\n"
          "  --mem-bw B           bytes/s of each host's memory, written as its mem_bw property\n"
          "                       (tensor.kernels needs it); e.g. 900G; 0: none (the default,\n"
          "                       except dgx2h 900G and selene 2039G)\n"
          "  --gpu-sms N          a GPU description for the kernel model (model.kernel_model):\n"
          "                       SMs per host, written as its gpu_sms property (needs --mem-bw);\n"
          "                       0: none (the default, except dgx2h 80 and selene 108)\n"
          "  --gpu-gemm-eff F     share of an SM's peak the GEMM library's main loop sustains\n"
          "                       (gpu_gemm_eff; dgx2h and selene 0.8631, fitted on DeepBench)\n"
          "  --gpu-l2-bw B        bytes/s of the GPU's L2 cache (gpu_l2_bw)\n"
          "  --gpu-launch S       seconds every kernel takes at least (gpu_launch); e.g. 7us\n"
          "  --gpu-comm-sms N     SMs a collective's kernels hold while it runs, which compute\n"
          "                       running beside it loses (gpu_comm_sms; below --gpu-sms; 0: none;\n"
          "                       dgx2h and selene 16, NCCL on a DGX with 8 NICs)\n"
          "  --gpu-tiles LIST     GEMM tile shapes, e.g. 256x128,128x128,64x64 (gpu_tiles;\n"
          "                       default cuBLAS's six)\n"
          "  --bw B               bytes/s of every link (default 1.25G, i.e. 10 Gb/s);\n"
          "                       e.g. 125M, 125MBps, or bits with bps: 1Gbps = 125M\n"
          "  --lat L              seconds of every link (default 1us); e.g. 50us, 0.5ms, 5e-5\n"
          "  --rack-size H        fat tree: hosts per rack (default ceil(sqrt(N/2)))\n"
          "  --uplinks U          fat tree: uplinks per rack switch, oversubscription H:U\n"
          "                       (default H, non-blocking)\n"
          "  --network-model M    CM02 (alpha-beta: latency + size/bandwidth; the default for\n"
          "                       generated clusters) or LV08 (TCP over Ethernet: latency x13.01,\n"
          "                       bandwidth x0.97); --cfg=network/model:M at run time overrides it\n"
          "  --sharing P          sharing policy of host (and node) links: splitduplex (default:\n"
          "                       one capacity per direction), shared (one for both), fatpipe\n"
          "  --bw-eff F           share of the host links' bandwidth collectives reach (NCCL's\n"
          "                       bus bandwidth), in (0, 1]: the file gets bw x F (default 1;\n"
          "                       dgx2h 0.8, selene 0.767)\n"
          "  --node-bw-eff F      the same for GPU nodes' links (default 1; dgx2h and selene 0.96)\n"
          "  --bw-factor F        what-if: every bandwidth (host and node links) times F\n"
          "  --lat-factor F       what-if: every latency times F\n"
          "  --speed-factor F     what-if: the speed times F\n"
          "  --name NAME          cluster id and host-name prefix (default host)\n"
          "  -o FILE              write FILE atomically (FILE.tmp, then rename), print nothing\n"
          "  -h, --help           show this help\n"
          "\n"
          "GPU-node presets (dgx2h, selene): --bw and --lat set the GPU links inside a node, the\n"
          "node links keep the preset's values; --topology makes a flat generated cluster instead.\n"
          "\n"
          "SI prefixes k M G T P E multiply by powers of 1000.\n");
}

static int usage_error(const char *what, const char *arg)
{
  if (arg)
    fprintf(stderr, "dtsim platform: %s '%s' (see dtsim platform --help)\n", what, arg);
  else
    fprintf(stderr, "dtsim platform: %s (see dtsim platform --help)\n", what);
  return 2;
}

static int write_atomically(const platform_spec *spec, const char *path)
{
  char err[256];
  size_t n = strlen(path);
  char *tmp = xbt_malloc(n + 5);
  memcpy(tmp, path, n);
  memcpy(tmp + n, ".tmp", 5);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    fprintf(stderr, "dtsim platform: %s: cannot open: %s\n", tmp, strerror(errno));
    xbt_free(tmp);
    return 2;
  }
  int bad = platform_write(spec, f, err, sizeof err) != 0;
  int e = errno;
  if (!bad && (fflush(f) != 0 || fsync(fileno(f)) != 0)) {
    bad = 2, e = errno;
  }
  if (fclose(f) != 0 && !bad) {
    bad = 2, e = errno;
  }
  if (!bad && rename(tmp, path) != 0) {
    bad = 3, e = errno;
  }
  if (bad) {
    if (bad == 1)
      fprintf(stderr, "dtsim platform: %s\n", err);
    else
      fprintf(stderr, "dtsim platform: %s: cannot write: %s\n", bad == 3 ? path : tmp, strerror(e));
    remove(tmp);
  }
  xbt_free(tmp);
  return bad ? 2 : 0;
}

int platform_main(int argc, char **argv)
{
  platform_spec spec;
  const char *preset_name = NULL, *out = NULL;
  int have_topology = 0, have_hosts = 0, have_rack = 0;
  double v, factor[3] = {1, 1, 1}; /* bandwidth, latency, speed */

  memset(&spec, 0, sizeof spec);
  spec.speed = GEN_SPEED;
  spec.cores = 1;
  spec.bw = GEN_BW;
  spec.lat = GEN_LAT;
  spec.network_model = GEN_MODEL;
  spec.name = "host";

  /* First pass: a preset sets the starting values that options then override. */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      platform_usage(stdout);
      return 0;
    }
    if (a[0] != '-') {
      if (preset_name)
        return usage_error("more than one preset", a);
      preset_name = a;
    } else if (strchr(a, '=') == NULL && strcmp(a, "--") != 0) {
      i++; /* skip the option's value */
    }
  }
  if (preset_name && platform_preset(preset_name, 0, &spec) != 0)
    return usage_error("unknown preset", preset_name);

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = NULL;
    char opt[32];
    if (a[0] != '-')
      continue;
    const char *eq = strchr(a, '=');
    if (eq && strncmp(a, "--", 2) == 0) {
      size_t k = (size_t)(eq - a) < sizeof opt - 1 ? (size_t)(eq - a) : sizeof opt - 1;
      memcpy(opt, a, k);
      opt[k] = '\0';
      val = eq + 1;
    } else {
      snprintf(opt, sizeof opt, "%s", a);
      if (i + 1 >= argc)
        return usage_error("missing value after", a);
      val = argv[++i];
    }
    if (strcmp(opt, "-o") == 0 || strcmp(opt, "--output") == 0) {
      if (!*val)
        return usage_error("empty output file name", NULL);
      out = val;
    } else if (strcmp(opt, "--topology") == 0) {
      if (platform_topology_parse(val, &spec.topology) != 0)
        return usage_error("unknown topology (star, fat-tree, torus, dragonfly, ring)", val);
      have_topology = 1;
      spec.gpus_per_node = 0; /* a generated cluster, even from a GPU-node preset's values */
    } else if (strcmp(opt, "--hosts") == 0) {
      if (parse_quantity(val, Q_COUNT, &v) != 0 || v < 1)
        return usage_error("--hosts needs a positive whole number, not", val);
      spec.hosts = (size_t)v;
      have_hosts = 1;
    } else if (strcmp(opt, "--speed") == 0) {
      if (parse_quantity(val, Q_SPEED, &v) != 0 || !(v > 0))
        return usage_error("--speed needs a positive flop/s value, not", val);
      spec.speed = v;
    } else if (strcmp(opt, "--mem-bw") == 0) {
      if (parse_quantity(val, Q_BW, &v) != 0 || !(v >= 0))
        return usage_error("--mem-bw needs a non-negative bytes/s value, not", val);
      spec.mem_bw = v;
    } else if (strcmp(opt, "--gpu-sms") == 0) {
      if (parse_quantity(val, Q_COUNT, &v) != 0 || v > 1e6)
        return usage_error("--gpu-sms needs a whole number of SMs, not", val);
      spec.gpu_sms = (size_t)v;
    } else if (strcmp(opt, "--gpu-comm-sms") == 0) {
      if (parse_quantity(val, Q_COUNT, &v) != 0 || v > 1e6)
        return usage_error("--gpu-comm-sms needs a whole number of SMs, not", val);
      spec.gpu_comm_sms = (size_t)v;
    } else if (strcmp(opt, "--gpu-gemm-eff") == 0) {
      char *e;
      errno = 0;
      v = strtod(val, &e);
      if (e == val || *e || errno == ERANGE || !(v > 0 && v <= 1))
        return usage_error("--gpu-gemm-eff needs a share of peak in (0, 1], not", val);
      spec.gpu_gemm_eff = v;
    } else if (strcmp(opt, "--gpu-l2-bw") == 0) {
      if (parse_quantity(val, Q_BW, &v) != 0 || !(v >= 0))
        return usage_error("--gpu-l2-bw needs a non-negative bytes/s value, not", val);
      spec.gpu_l2_bw = v;
    } else if (strcmp(opt, "--gpu-launch") == 0) {
      if (parse_quantity(val, Q_LAT, &v) != 0 || !(v >= 0))
        return usage_error("--gpu-launch needs a non-negative number of seconds, not", val);
      spec.gpu_launch = v;
    } else if (strcmp(opt, "--gpu-tiles") == 0) {
      gemm_device t;
      if (gemm_tiles_parse(val, &t) != 0)
        return usage_error("--gpu-tiles needs a list such as 256x128,128x128 (sides 8 to 1024), not", val);
      spec.gpu_tiles = val;
    } else if (strcmp(opt, "--bw-eff") == 0 || strcmp(opt, "--node-bw-eff") == 0) {
      char *e;
      errno = 0;
      v = strtod(val, &e);
      if (e == val || *e || errno == ERANGE || !(v > 0 && v <= 1))
        return usage_error("a link efficiency must be a number in (0, 1], not", val);
      if (opt[2] == 'b')
        spec.bw_eff = v;
      else
        spec.node_bw_eff = v;
    } else if (strcmp(opt, "--cores") == 0) {
      if (parse_quantity(val, Q_COUNT, &v) != 0 || v < 1 || v > INT_MAX)
        return usage_error("--cores needs a positive whole number, not", val);
      spec.cores = (int)v;
    } else if (strcmp(opt, "--bw") == 0) {
      if (parse_quantity(val, Q_BW, &v) != 0 || !(v > 0))
        return usage_error("--bw needs a positive bytes/s value, not", val);
      spec.bw = v;
    } else if (strcmp(opt, "--lat") == 0) {
      if (parse_quantity(val, Q_LAT, &v) != 0 || !(v >= 0))
        return usage_error("--lat needs a non-negative number of seconds, not", val);
      spec.lat = v;
    } else if (strcmp(opt, "--rack-size") == 0) {
      if (parse_quantity(val, Q_COUNT, &v) != 0 || v < 1)
        return usage_error("--rack-size needs a positive whole number, not", val);
      spec.hosts_per_rack = (size_t)v;
      have_rack = 1;
    } else if (strcmp(opt, "--uplinks") == 0) {
      if (parse_quantity(val, Q_COUNT, &v) != 0 || v < 1)
        return usage_error("--uplinks needs a positive whole number, not", val);
      spec.uplinks = (size_t)v;
      have_rack = 1;
    } else if (strcmp(opt, "--network-model") == 0) {
      if (!valid_model(val))
        return usage_error("--network-model is LV08 or CM02, not", val);
      spec.network_model = strcmp(val, "LV08") == 0 ? "LV08" : "CM02";
    } else if (strcmp(opt, "--sharing") == 0) {
      if (platform_sharing_parse(val) == NULL)
        return usage_error("--sharing is shared, splitduplex or fatpipe, not", val);
      spec.sharing = platform_sharing_parse(val);
    } else if (strcmp(opt, "--bw-factor") == 0 || strcmp(opt, "--lat-factor") == 0 ||
               strcmp(opt, "--speed-factor") == 0) {
      char *e;
      errno = 0;
      v = strtod(val, &e);
      if (e == val || *e || errno == ERANGE || !isfinite(v) || !(v > 0))
        return usage_error("a factor must be a positive number, not", val);
      factor[opt[2] == 'b' ? 0 : opt[2] == 'l' ? 1 : 2] = v;
    } else if (strcmp(opt, "--name") == 0) {
      if (!valid_name(val))
        return usage_error("--name takes letters, digits, '-', '_' and '.', not", val);
      spec.name = val;
    } else {
      return usage_error("unknown option", a);
    }
  }
  if (!preset_name && !have_topology)
    return usage_error("give a PRESET or --topology T", NULL);
  if (!preset_name && !have_hosts)
    return usage_error("--topology needs --hosts N", NULL);
  if (spec.topology != PLATFORM_FAT_TREE) {
    if (have_rack)
      return usage_error("--rack-size and --uplinks apply to a fat tree only", NULL);
    spec.hosts_per_rack = spec.uplinks = 0; /* a preset's racks, topology overridden */
  }
  platform_scale(&spec, factor[0], factor[1], factor[2]);

  char err[256];
  if (out)
    return write_atomically(&spec, out);
  if (platform_write(&spec, stdout, err, sizeof err) != 0)
    return usage_error(err, NULL);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "dtsim platform: cannot write standard output: %s\n", strerror(errno));
    return 2;
  }
  return 0;
}

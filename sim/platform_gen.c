/* platform_gen.c - the platform generator and its presets.
 *
 * The generator writes one SimGrid <cluster> per platform, because SimGrid builds cluster
 * tags in C++ without an XML element per host or link: 10,000 hosts load in a second or
 * less. star is a flat cluster (private split-duplex host links and a FATPIPE backbone,
 * i.e. a non-blocking switch); fat-tree is topology="FAT_TREE" with two levels (racks of
 * hosts under leaf switches, U uplinks per leaf, oversubscription H:U); torus and ring are
 * topology="TORUS" with three and one dimensions; dragonfly is topology="DRAGONFLY". Each
 * file carries its network model in a <config> block, so the file alone decides the
 * answer unless --cfg=network/model:X overrides it on the command line. */

#include "sim/platform.h"
#include "sim/platform_int.h"

#include "models/gemm.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        platform_set_err(err, errlen, "fat tree: rack size or uplink count too large");
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
               "fat-tree: %zu rack%s x %zu host%s = %zu hosts, %zu uplink%s per rack (%zu:%zu)", r,
               r == 1 ? "" : "s", h, h == 1 ? "" : "s", sh->hosts, u, u == 1 ? "" : "s", h, u);
      return 0;
    }
  }
  platform_set_err(err, errlen, "unknown topology %d", (int)spec->topology);
  return -1;
}

/* ---------------------------------------------------------------- writer */

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
      platform_fmt_num(num, sizeof num, values[i]);
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
/* TCP acknowledgement traffic (SimGrid's network/crosstraffic, on unless the file turns it
 * off) belongs to the TCP model: a CM02 file turns it off unless asked, an LV08 file keeps it.
 * Under it SimGrid shares a link in proportion to 1 / route latency even between a flow and
 * another's acknowledgements, which slows a multi-hop flow that meets a shorter one (see
 * platforms/README.md, Network model). */
static int cross_traffic_off(const platform_spec *spec, const char *model)
{
  if (spec->cross_traffic != PLATFORM_XT_BY_MODEL)
    return spec->cross_traffic == PLATFORM_XT_OFF;
  return strcmp(model, "CM02") == 0;
}

static int write_gpu_nodes(const platform_spec *spec, FILE *out, char *err, size_t errlen)
{
  const char *name = spec->name ? spec->name : "gpu";
  const char *sharing = spec->sharing ? spec->sharing : "SPLITDUPLEX";
  size_t g = spec->gpus_per_node, nodes = ceil_div(spec->hosts, g);
  char speed[64], bw[64], lat[64], nbw[64], nlat[64];
  if (!(spec->node_bw > 0) || !isfinite(spec->node_bw) || !(spec->node_lat >= 0) || !isfinite(spec->node_lat)) {
    platform_set_err(err, errlen, "node links need a positive bandwidth and a non-negative latency");
    return -1;
  }
  if (nodes * g > PLATFORM_MAX_HOSTS) {
    platform_set_err(err, errlen, "too many hosts after rounding up to whole nodes");
    return -1;
  }
  platform_fmt_num(speed, sizeof speed, spec->speed);
  platform_fmt_num(bw, sizeof bw, spec->bw);
  platform_fmt_num(lat, sizeof lat, spec->lat);
  platform_fmt_num(nbw, sizeof nbw, spec->node_bw);
  platform_fmt_num(nlat, sizeof nlat, spec->node_lat);
  fprintf(out, "<?xml version='1.0'?>\n");
  fprintf(out, "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n");
  fprintf(out, "<platform version=\"4.1\">\n");
  fprintf(out, "  <!-- Written by dtsim platform. %zu nodes x %zu GPUs = %zu hosts", nodes, g, nodes * g);
  if (nodes * g != spec->hosts)
    fprintf(out, " (%zu asked, rounded up to whole nodes)", spec->hosts);
  fprintf(out, "; host %s-i is GPU i %% %zu of node i / %zu", name, g, g);
  if (spec->bw_eff > 0 || spec->node_bw_eff > 0) {
    char a[64], b[64];
    platform_fmt_num(a, sizeof a, spec->bw_eff > 0 ? spec->bw_eff : 1);
    platform_fmt_num(b, sizeof b, spec->node_bw_eff > 0 ? spec->node_bw_eff : 1);
    fprintf(out, "; link bandwidths are what collectives reach: GPU links x %s, node links x %s of nominal", a, b);
  }
  fputs(". -->\n", out);
  const char *model = spec->network_model ? spec->network_model : GEN_MODEL;
  fprintf(out, "  <config>\n    <prop id=\"network/model\" value=\"%s\"/>\n", model);
  if (cross_traffic_off(spec, model))
    fprintf(out, "    <prop id=\"network/crosstraffic\" value=\"0\"/>\n");
  fprintf(out, "  </config>\n");
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
    platform_set_err(err, errlen, "write error: %s", strerror(errno));
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

/* What the writer refuses of a GPU description and of link efficiencies (nominal spec). */
static int check_gpu_description(const platform_spec *nominal, char *err, size_t errlen)
{
  gemm_device tiles;
  if (!(nominal->bw_eff >= 0 && nominal->bw_eff <= 1) || !(nominal->node_bw_eff >= 0 && nominal->node_bw_eff <= 1)) {
    platform_set_err(err, errlen, "link efficiencies must be in (0, 1]");
    return -1;
  }
  if (nominal->gpu_sms > 0 && (!(nominal->gpu_l2_bw >= 0) || !isfinite(nominal->gpu_l2_bw) ||
                               !(nominal->gpu_gemm_eff >= 0 && nominal->gpu_gemm_eff <= 1) ||
                               !(nominal->gpu_launch >= 0) || !isfinite(nominal->gpu_launch) ||
                               (nominal->gpu_tiles && gemm_tiles_parse(nominal->gpu_tiles, &tiles) != 0))) {
    platform_set_err(err, errlen,
                     "bad GPU description (GEMM efficiency in (0, 1], L2 bandwidth and launch time >= 0, tiles "
                     "such as 256x128,128x128)");
    return -1;
  }
  if (nominal->gpu_sms > 0 && nominal->gpu_comm_sms >= nominal->gpu_sms) {
    platform_set_err(err, errlen, "a GPU's collectives must leave it SMs to compute on (--gpu-comm-sms below --gpu-sms)");
    return -1;
  }
  if (nominal->gpu_sms > 0 && !(nominal->mem_bw > 0)) {
    platform_set_err(err, errlen, "a GPU description needs the memory bandwidth (--mem-bw)");
    return -1;
  }
  return 0;
}

/* What the writer refuses of the hosts, links, network model, name and sharing policy. */
static int check_spec(const platform_spec *spec, const char *model, const char *name, char *err, size_t errlen)
{
  if (spec->hosts == 0) {
    platform_set_err(err, errlen, "zero hosts");
    return -1;
  }
  if (spec->hosts > PLATFORM_MAX_HOSTS) {
    platform_set_err(err, errlen, "too many hosts (at most %zu)", PLATFORM_MAX_HOSTS);
    return -1;
  }
  if (!(spec->speed > 0) || !isfinite(spec->speed)) {
    platform_set_err(err, errlen, "speed must be a positive number of flop/s");
    return -1;
  }
  if (spec->cores < 1) {
    platform_set_err(err, errlen, "cores must be at least 1");
    return -1;
  }
  if (!(spec->bw > 0) || !isfinite(spec->bw)) {
    platform_set_err(err, errlen, "bandwidth must be a positive number of bytes/s");
    return -1;
  }
  if (!(spec->lat >= 0) || !isfinite(spec->lat)) {
    platform_set_err(err, errlen, "latency must be a non-negative number of seconds");
    return -1;
  }
  if (!platform_valid_model(model)) {
    platform_set_err(err, errlen, "unknown network model '%s' (LV08 or CM02)", model);
    return -1;
  }
  if (!platform_valid_name(name)) {
    platform_set_err(err, errlen, "bad cluster name '%s' (letters, digits, '-', '_', '.')", name);
    return -1;
  }
  if (spec->sharing && strcmp(spec->sharing, "SHARED") != 0 && strcmp(spec->sharing, "SPLITDUPLEX") != 0 &&
      strcmp(spec->sharing, "FATPIPE") != 0) {
    platform_set_err(err, errlen, "unknown sharing policy '%s' (SHARED, SPLITDUPLEX or FATPIPE)", spec->sharing);
    return -1;
  }
  return 0;
}

/* One <cluster> of the shape sh (a SimGrid topology, or flat with a FATPIPE backbone). */
static int write_cluster(const platform_spec *spec, const shape *sh, const char *model, const char *name, FILE *out,
                         char *err, size_t errlen)
{
  char num[64];
  fprintf(out, "<?xml version='1.0'?>\n");
  fprintf(out, "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n");
  fprintf(out, "<platform version=\"4.1\">\n");
  fprintf(out, "  <!-- Written by dtsim platform. %s", sh->summary);
  if (sh->hosts != spec->hosts)
    fprintf(out, " (%zu asked, rounded up to a whole shape)", spec->hosts);
  fprintf(out, ". -->\n");
  fprintf(out, "  <config>\n    <prop id=\"network/model\" value=\"%s\"/>\n", model);
  if (cross_traffic_off(spec, model))
    fprintf(out, "    <prop id=\"network/crosstraffic\" value=\"0\"/>\n");
  fprintf(out, "  </config>\n");
  fprintf(out, "  <cluster id=\"%s\" prefix=\"%s-\" suffix=\"\" radical=\"0", name, name);
  if (sh->hosts > 1)
    fprintf(out, "-%zu", sh->hosts - 1);
  platform_fmt_num(num, sizeof num, spec->speed);
  fprintf(out, "\" speed=\"%sf\" core=\"%d\"\n", num, spec->cores);
  platform_fmt_num(num, sizeof num, spec->bw);
  fprintf(out, "           bw=\"%sBps\"", num);
  platform_fmt_num(num, sizeof num, spec->lat);
  fprintf(out, " lat=\"%ss\" sharing_policy=\"%s\"", num, spec->sharing ? spec->sharing : "SPLITDUPLEX");
  if (sh->tag) {
    fprintf(out, "\n           topology=\"%s\" topo_parameters=\"%s\"", sh->tag, sh->params);
    end_cluster(spec, out, "  ");
  } else {
    /* The backbone is the switch: FATPIPE bounds each flow by bb_bw without sharing it, so
     * with bb_bw = bw and no latency only the host links shape a transfer. */
    platform_fmt_num(num, sizeof num, spec->bw);
    fprintf(out, "\n           bb_bw=\"%sBps\" bb_lat=\"0s\" bb_sharing_policy=\"FATPIPE\"", num);
    end_cluster(spec, out, "  ");
  }
  fprintf(out, "</platform>\n");
  if (ferror(out)) {
    platform_set_err(err, errlen, "write error: %s", strerror(errno));
    return -1;
  }
  return 0;
}

/* platform.uplink_routing = pooled: the shape's racks, each one uplink (platform_bank.c). */
static int write_pooled(platform_spec *spec, const shape *sh, FILE *out, char *err, size_t errlen)
{
  if (!platform_pooled_fits(spec)) {
    platform_set_err(err, errlen, "pooled uplinks are a fat tree's (this platform is a %s)",
                     spec->gpus_per_node ? "GPU-node preset" : platform_topology_name(spec->topology));
    return -1;
  }
  size_t h = spec->hosts_per_rack ? spec->hosts_per_rack : ceil_root(ceil_div(spec->hosts, 2), 2);
  spec->uplinks = spec->uplinks ? spec->uplinks : h; /* as shape_of's fat tree */
  spec->hosts_per_rack = h;
  spec->hosts = sh->hosts;
  return platform_write_pooled(spec, out, err, errlen);
}

int platform_write(const platform_spec *nominal, FILE *out, char *err, size_t errlen)
{
  platform_spec eff;
  const platform_spec *spec = &eff;
  if (check_gpu_description(nominal, err, errlen) != 0)
    return -1;
  effective_links(nominal, &eff);
  const char *model = spec->network_model ? spec->network_model : GEN_MODEL;
  const char *name = spec->name ? spec->name : "host";
  shape sh;

  if (check_spec(spec, model, name, err, errlen) != 0)
    return -1;
  if (spec->gpus_per_node > 0)
    return write_gpu_nodes(spec, out, err, errlen);
  if (shape_of(spec, &sh, err, errlen) != 0)
    return -1;
  if (sh.hosts > PLATFORM_MAX_HOSTS) {
    platform_set_err(err, errlen, "too many hosts after rounding up to the %s shape",
                     platform_topology_name(spec->topology));
    return -1;
  }
  if (spec->pooled || spec->banks)
    return write_pooled(&eff, &sh, out, err, errlen);
  return write_cluster(spec, &sh, model, name, out, err, errlen);
}


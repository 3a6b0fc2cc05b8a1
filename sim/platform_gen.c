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

size_t platform_power_states(const platform_spec *spec, double *limit_w, double *share)
{
  size_t n = 0;
  if (!(spec->gpu_max_w > 0))
    return 0;
  for (double l = spec->gpu_max_w; l >= spec->gpu_min_w && n < PLATFORM_MAX_PSTATES; l -= PLATFORM_POWER_STEP_W) {
    limit_w[n] = l;
    share[n++] = cbrt((l - spec->gpu_idle_w) / (spec->gpu_max_w - spec->gpu_idle_w));
  }
  return n;
}

/* The cluster's speed attribute into buf: the speed, or with power states the speed of each,
 * "989.5e12f,960.2e12f,...". */
static void speed_attr(const platform_spec *spec, char *buf, size_t len)
{
  double limit[PLATFORM_MAX_PSTATES], share[PLATFORM_MAX_PSTATES];
  size_t n = platform_power_states(spec, limit, share), at = 0;
  char num[64];
  for (size_t i = 0; i < (n ? n : 1); i++) {
    platform_fmt_num(num, sizeof num, n ? spec->speed * share[i] : spec->speed);
    at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%s%sf", i ? "," : "", num);
  }
}

/* The power properties of every host (wattage_per_state, wattage_off, gpu_power_limits) when
 * the spec has power figures. */
static void power_props(const platform_spec *spec, FILE *out, const char *indent)
{
  double limit[PLATFORM_MAX_PSTATES], share[PLATFORM_MAX_PSTATES];
  size_t n = platform_power_states(spec, limit, share);
  char a[64], b[64];
  if (n == 0)
    return;
  fprintf(out, "%s  <prop id=\"wattage_per_state\" value=\"", indent);
  for (size_t i = 0; i < n; i++) {
    platform_fmt_num(a, sizeof a, spec->gpu_idle_w + spec->rest_idle_w);
    platform_fmt_num(b, sizeof b, limit[i] + spec->rest_busy_w);
    fprintf(out, "%s%s:%s", i ? "," : "", a, b);
  }
  fprintf(out, "\"/>\n%s  <prop id=\"wattage_off\" value=\"0\"/>\n%s  <prop id=\"gpu_power_limits\" value=\"", indent,
          indent);
  for (size_t i = 0; i < n; i++) {
    platform_fmt_num(a, sizeof a, limit[i]);
    fprintf(out, "%s%s", i ? "," : "", a);
  }
  fputs("\"/>\n", out);
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
  int any = (spec->gpu_sms > 0 && (spec->gpu_tiles != NULL || spec->gpu_peaks != NULL)) || spec->gpu_max_w > 0;
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
  if (spec->gpu_sms > 0 && spec->gpu_peaks != NULL)
    fprintf(out, "%s  <prop id=\"gpu_peaks\" value=\"%s\"/>\n", indent, spec->gpu_peaks);
  power_props(spec, out, indent);
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

/* spec->host_cpus: a zone of one host CPU per GPU host, with no link (it only computes). */
static void write_host_cpus(const platform_spec *spec, FILE *out, size_t hosts)
{
  const char *name = spec->name ? spec->name : "gpu";
  char speed[64], pcie[64];
  platform_fmt_num(speed, sizeof speed, PLATFORM_CPU_SPEED);
  platform_fmt_num(pcie, sizeof pcie, spec->pcie_bw);
  fprintf(out, "    <zone id=\"%s-cpus\" routing=\"None\">\n", name);
  for (size_t i = 0; i < hosts; i++) {
    fprintf(out, "      <host id=\"%s-%zu-cpu\" speed=\"%sf\" core=\"1\"", name, i, speed);
    if (spec->pcie_bw > 0)
      fprintf(out, ">\n        <prop id=\"pcie_bw\" value=\"%s\"/>\n      </host>\n", pcie);
    else
      fputs("/>\n", out);
  }
  fputs("    </zone>\n", out);
}

static int write_gpu_nodes(const platform_spec *spec, FILE *out, char *err, size_t errlen)
{
  const char *name = spec->name ? spec->name : "gpu";
  const char *sharing = spec->sharing ? spec->sharing : "SPLITDUPLEX";
  size_t g = spec->gpus_per_node, nodes = ceil_div(spec->hosts, g);
  char speed[PLATFORM_MAX_PSTATES * 32], bw[64], lat[64], nbw[64], nlat[64], lw[64];
  if (!(spec->node_bw > 0) || !isfinite(spec->node_bw) || !(spec->node_lat >= 0) || !isfinite(spec->node_lat)) {
    platform_set_err(err, errlen, "node links need a positive bandwidth and a non-negative latency");
    return -1;
  }
  if (nodes * g > PLATFORM_MAX_HOSTS) {
    platform_set_err(err, errlen, "too many hosts after rounding up to whole nodes");
    return -1;
  }
  speed_attr(spec, speed, sizeof speed);
  platform_fmt_num(lw, sizeof lw, spec->node_link_w);
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
            "    <cluster id=\"%s-node-%zu\" prefix=\"%s-\" suffix=\"\" radical=\"%zu-%zu\" speed=\"%s\" core=\"%d\"\n"
            "             bw=\"%sBps\" lat=\"%ss\" sharing_policy=\"%s\" router_id=\"%s-node-%zu-router\"",
            name, n, name, n * g, n * g + g - 1, speed, spec->cores, bw, lat, sharing, name, n);
    end_cluster(spec, out, "    ");
  }
  if (spec->host_cpus)
    write_host_cpus(spec, out, nodes * g);
  for (size_t n = 0; n < nodes; n++)
    fprintf(out, "    <link id=\"%s-ib-%zu\" bandwidth=\"%sBps\" latency=\"%ss\" sharing_policy=\"%s\"/>\n", name, n, nbw,
            nlat, sharing);
  /* The fabric's switch ports of each node, at constant power, for the link energy plugin: a
   * link no route crosses, as SimGrid 3.32 gives a split-duplex link's two halves none of its
   * properties (measured: a wattage_range on a SPLITDUPLEX link integrates to 0 J). */
  for (size_t n = 0; spec->node_link_w > 0 && n < nodes; n++)
    fprintf(out, "    <link id=\"%s-fabric-%zu\" bandwidth=\"%sBps\" latency=\"0s\">\n      <prop id=\"wattage_range\" "
            "value=\"%s:%s\"/>\n    </link>\n", name, n, nbw, lw, lw);
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
  char speed[PLATFORM_MAX_PSTATES * 32];
  speed_attr(spec, speed, sizeof speed);
  fprintf(out, "\" speed=\"%s\" core=\"%d\"\n", speed, spec->cores);
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


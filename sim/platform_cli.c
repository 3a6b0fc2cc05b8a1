/* platform_cli.c - `dtsim platform`: writes a preset or a generated cluster (platform_gen.c)
 * to -o FILE, atomically, or to standard output. */

#include "sim/platform.h"
#include "sim/platform_int.h"

#include "models/gemm.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xbt/sysdep.h>

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
          "                       default cuBLAS's six)\n");
  fprintf(out,
          "  --bw B               bytes/s of every link (default 1.25G, i.e. 10 Gb/s);\n"
          "                       e.g. 125M, 125MBps, or bits with bps: 1Gbps = 125M\n"
          "  --lat L              seconds of every link (default 1us); e.g. 50us, 0.5ms, 5e-5\n"
          "  --rack-size H        fat tree: hosts per rack (default ceil(sqrt(N/2)))\n"
          "  --uplinks U          fat tree: uplinks per rack switch, oversubscription H:U\n"
          "                       (default H, non-blocking)\n"
          "  --uplink-routing R   fat tree: dmodk (SimGrid's FAT_TREE cluster, a flow to host j\n"
          "                       up uplink j mod U; the default) or pooled (each rack's uplinks\n"
          "                       one link of their summed bandwidth, as a parameter-server bank\n"
          "                       needs: platform.uplink_routing)\n"
          "  --network-model M    CM02 (alpha-beta: latency + size/bandwidth; the default for\n"
          "                       generated clusters) or LV08 (TCP over Ethernet: latency x13.01,\n"
          "                       bandwidth x0.97); --cfg=network/model:M at run time overrides it\n"
          "  --cross-traffic X    on: TCP acknowledgements load the reverse route (SimGrid's\n"
          "                       network/crosstraffic); off: they don't. Default: off under\n"
          "                       CM02, on under LV08\n"
          "  --sharing P          sharing policy of host (and node) links: splitduplex (default:\n"
          "                       one capacity per direction), shared (one for both), fatpipe\n"
          "  --bw-eff F           share of the host links' bandwidth collectives reach (NCCL's\n"
          "                       bus bandwidth), in (0, 1]: the file gets bw x F (default 1;\n"
          "                       dgx2h 0.8, selene 0.767)\n"
          "  --node-bw-eff F      the same for GPU nodes' links (default 1; dgx2h and selene 0.96)\n"
          "  --power MAX,MIN,NODE[,FABRIC[,IDLE]]  power figures in W, for SimGrid's energy plugins:\n"
          "                       the GPU's power limit and its lowest, the node's maximum per GPU,\n"
          "                       the fabric's switch ports per node (GPU-node platforms), the GPU's\n"
          "                       idle power (default MAX/10, below MIN); power states every 100 W\n"
          "                       (platforms/README.md, Energy; dgx-h100: 700,200,1275,280)\n"
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

/* What the options build: the spec, the output file, which options were given, and the
 * what-if factors (bandwidth, latency, speed). */
typedef struct cli_opts {
  platform_spec spec;
  const char *out;
  int have_topology, have_hosts, have_rack;
  double factor[3];
} cli_opts;

/* First pass: help, and the preset (the starting values that options then override).
 * Returns -1 to go on, else the exit status. */
static int find_preset(int argc, char **argv, const char **preset_name)
{
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      platform_usage(stdout);
      return 0;
    }
    if (a[0] != '-') {
      if (*preset_name)
        return usage_error("more than one preset", a);
      *preset_name = a;
    } else if (strchr(a, '=') == NULL && strcmp(a, "--") != 0) {
      i++; /* skip the option's value */
    }
  }
  return -1;
}

/* --power MAX,MIN,NODE[,FABRIC[,IDLE]] (platform_power_parse): 0, or the exit status of a bad value. */
static int power_option(cli_opts *o, const char *val)
{
  if (platform_power_parse(val, &o->spec) != 0)
    return usage_error("--power needs MAX,MIN,NODE[,FABRIC[,IDLE]] in W (MIN <= MAX <= NODE, IDLE below MIN; "
                       "IDLE a tenth of MAX by default), not", val);
  return 0;
}

/* The hosts' options: speed, memory and GPU. Returns 0, the exit status of a bad value,
 * or -1 if opt is none of them. */
static int host_option(cli_opts *o, const char *opt, const char *val)
{
  double v;
  if (strcmp(opt, "--speed") == 0) {
    if (parse_quantity(val, Q_SPEED, &v) != 0 || !(v > 0))
      return usage_error("--speed needs a positive flop/s value, not", val);
    o->spec.speed = v;
  } else if (strcmp(opt, "--mem-bw") == 0) {
    if (parse_quantity(val, Q_BW, &v) != 0 || !(v >= 0))
      return usage_error("--mem-bw needs a non-negative bytes/s value, not", val);
    o->spec.mem_bw = v;
  } else if (strcmp(opt, "--gpu-sms") == 0) {
    if (parse_quantity(val, Q_COUNT, &v) != 0 || v > 1e6)
      return usage_error("--gpu-sms needs a whole number of SMs, not", val);
    o->spec.gpu_sms = (size_t)v;
  } else if (strcmp(opt, "--gpu-comm-sms") == 0) {
    if (parse_quantity(val, Q_COUNT, &v) != 0 || v > 1e6)
      return usage_error("--gpu-comm-sms needs a whole number of SMs, not", val);
    o->spec.gpu_comm_sms = (size_t)v;
  } else if (strcmp(opt, "--gpu-gemm-eff") == 0) {
    char *e;
    errno = 0;
    v = strtod(val, &e);
    if (e == val || *e || errno == ERANGE || !(v > 0 && v <= 1))
      return usage_error("--gpu-gemm-eff needs a share of peak in (0, 1], not", val);
    o->spec.gpu_gemm_eff = v;
  } else if (strcmp(opt, "--gpu-l2-bw") == 0) {
    if (parse_quantity(val, Q_BW, &v) != 0 || !(v >= 0))
      return usage_error("--gpu-l2-bw needs a non-negative bytes/s value, not", val);
    o->spec.gpu_l2_bw = v;
  } else if (strcmp(opt, "--gpu-launch") == 0) {
    if (parse_quantity(val, Q_LAT, &v) != 0 || !(v >= 0))
      return usage_error("--gpu-launch needs a non-negative number of seconds, not", val);
    o->spec.gpu_launch = v;
  } else if (strcmp(opt, "--gpu-tiles") == 0) {
    gemm_device t;
    if (gemm_tiles_parse(val, &t) != 0)
      return usage_error("--gpu-tiles needs a list such as 256x128,128x128 (sides 8 to 1024), not", val);
    o->spec.gpu_tiles = val;
  } else if (strcmp(opt, "--bw-eff") == 0 || strcmp(opt, "--node-bw-eff") == 0) {
    char *e;
    errno = 0;
    v = strtod(val, &e);
    if (e == val || *e || errno == ERANGE || !(v > 0 && v <= 1))
      return usage_error("a link efficiency must be a number in (0, 1], not", val);
    if (opt[2] == 'b')
      o->spec.bw_eff = v;
    else
      o->spec.node_bw_eff = v;
  } else {
    return -1;
  }
  return 0;
}

/* The links', shape's and file's options. Returns 0, the exit status of a bad value, or
 * -1 if opt is none of them. */
static int link_option(cli_opts *o, const char *opt, const char *val)
{
  double v;
  if (strcmp(opt, "--cores") == 0) {
    if (parse_quantity(val, Q_COUNT, &v) != 0 || v < 1 || v > INT_MAX)
      return usage_error("--cores needs a positive whole number, not", val);
    o->spec.cores = (int)v;
  } else if (strcmp(opt, "--bw") == 0) {
    if (parse_quantity(val, Q_BW, &v) != 0 || !(v > 0))
      return usage_error("--bw needs a positive bytes/s value, not", val);
    o->spec.bw = v;
  } else if (strcmp(opt, "--lat") == 0) {
    if (parse_quantity(val, Q_LAT, &v) != 0 || !(v >= 0))
      return usage_error("--lat needs a non-negative number of seconds, not", val);
    o->spec.lat = v;
  } else if (strcmp(opt, "--rack-size") == 0) {
    if (parse_quantity(val, Q_COUNT, &v) != 0 || v < 1)
      return usage_error("--rack-size needs a positive whole number, not", val);
    o->spec.hosts_per_rack = (size_t)v;
    o->have_rack = 1;
  } else if (strcmp(opt, "--uplinks") == 0) {
    if (parse_quantity(val, Q_COUNT, &v) != 0 || v < 1)
      return usage_error("--uplinks needs a positive whole number, not", val);
    o->spec.uplinks = (size_t)v;
    o->have_rack = 1;
  } else if (strcmp(opt, "--uplink-routing") == 0) {
    if (strcmp(val, "dmodk") != 0 && strcmp(val, "pooled") != 0)
      return usage_error("--uplink-routing is dmodk or pooled, not", val);
    o->spec.pooled = strcmp(val, "pooled") == 0;
  } else if (strcmp(opt, "--network-model") == 0) {
    if (!platform_valid_model(val))
      return usage_error("--network-model is LV08 or CM02, not", val);
    o->spec.network_model = strcmp(val, "LV08") == 0 ? "LV08" : "CM02";
  } else if (strcmp(opt, "--cross-traffic") == 0) {
    if (strcmp(val, "on") != 0 && strcmp(val, "off") != 0)
      return usage_error("--cross-traffic is on or off, not", val);
    o->spec.cross_traffic = strcmp(val, "on") == 0 ? PLATFORM_XT_ON : PLATFORM_XT_OFF;
  } else if (strcmp(opt, "--sharing") == 0) {
    if (platform_sharing_parse(val) == NULL)
      return usage_error("--sharing is shared, splitduplex or fatpipe, not", val);
    o->spec.sharing = platform_sharing_parse(val);
  } else if (strcmp(opt, "--bw-factor") == 0 || strcmp(opt, "--lat-factor") == 0 ||
             strcmp(opt, "--speed-factor") == 0) {
    char *e;
    errno = 0;
    v = strtod(val, &e);
    if (e == val || *e || errno == ERANGE || !isfinite(v) || !(v > 0))
      return usage_error("a factor must be a positive number, not", val);
    o->factor[opt[2] == 'b' ? 0 : opt[2] == 'l' ? 1 : 2] = v;
  } else if (strcmp(opt, "--name") == 0) {
    if (!platform_valid_name(val))
      return usage_error("--name takes letters, digits, '-', '_' and '.', not", val);
    o->spec.name = val;
  } else {
    return -1;
  }
  return 0;
}

/* Second pass: every option over the preset's values. Returns -1 to go on, else the exit
 * status. */
static int apply_options(cli_opts *o, int argc, char **argv)
{
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = NULL;
    char opt[32];
    double v;
    int rc;
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
      o->out = val;
    } else if (strcmp(opt, "--topology") == 0) {
      if (platform_topology_parse(val, &o->spec.topology) != 0)
        return usage_error("unknown topology (star, fat-tree, torus, dragonfly, ring)", val);
      o->have_topology = 1;
      o->spec.gpus_per_node = 0; /* a generated cluster, even from a GPU-node preset's values */
    } else if (strcmp(opt, "--hosts") == 0) {
      if (parse_quantity(val, Q_COUNT, &v) != 0 || v < 1)
        return usage_error("--hosts needs a positive whole number, not", val);
      o->spec.hosts = (size_t)v;
      o->have_hosts = 1;
    } else if (strcmp(opt, "--power") == 0) {
      if ((rc = power_option(o, val)) != 0)
        return rc;
    } else if ((rc = host_option(o, opt, val)) >= 0 || (rc = link_option(o, opt, val)) >= 0) {
      if (rc != 0)
        return rc;
    } else {
      return usage_error("unknown option", a);
    }
  }
  return -1;
}

int platform_main(int argc, char **argv)
{
  cli_opts o = {.factor = {1, 1, 1}};
  platform_spec *spec = &o.spec;
  const char *preset_name = NULL;
  int rc;

  memset(spec, 0, sizeof *spec);
  spec->speed = GEN_SPEED;
  spec->cores = 1;
  spec->bw = GEN_BW;
  spec->lat = GEN_LAT;
  spec->network_model = GEN_MODEL;
  spec->name = "host";

  if ((rc = find_preset(argc, argv, &preset_name)) >= 0)
    return rc;
  if (preset_name && platform_preset(preset_name, 0, spec) != 0)
    return usage_error("unknown preset", preset_name);
  if ((rc = apply_options(&o, argc, argv)) >= 0)
    return rc;
  if (!preset_name && !o.have_topology)
    return usage_error("give a PRESET or --topology T", NULL);
  if (!preset_name && !o.have_hosts)
    return usage_error("--topology needs --hosts N", NULL);
  if (spec->topology != PLATFORM_FAT_TREE) {
    if (o.have_rack)
      return usage_error("--rack-size and --uplinks apply to a fat tree only", NULL);
    spec->hosts_per_rack = spec->uplinks = 0; /* a preset's racks, topology overridden */
  }
  platform_scale(spec, o.factor[0], o.factor[1], o.factor[2]);

  char err[256];
  if (o.out)
    return write_atomically(spec, o.out);
  if (platform_write(spec, stdout, err, sizeof err) != 0)
    return usage_error(err, NULL);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "dtsim platform: cannot write standard output: %s\n", strerror(errno));
    return 2;
  }
  return 0;
}

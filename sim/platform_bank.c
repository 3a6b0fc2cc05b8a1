/* platform_bank.c - a generated fat tree with pooled uplinks (platform.uplink_routing = pooled):
 * racks of hosts whose uplinks are one link each, and a parameter-server bank's hosts at
 * the core, optionally with a control network that carries the traffic between hosts apart
 * from the bank's (platform.h). Why not SimGrid's FAT_TREE cluster: it has no router to
 * which a host outside it could attach, and it routes a flow by the index of its
 * destination, which one bank in place of many shards cannot follow (algorithms/doc/
 * downpour.md, Bank, measures what this changes). */
#include "sim/platform.h"
#include "sim/platform_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* SimGrid 3.32's default network/TCP-gamma, bytes: TCP's largest window. */
#define BANK_TCP_GAMMA 4194304.0
/* The core's link to the banks: never a bottleneck, and SHARED, not FATPIPE, on which
 * SimGrid's solver rescans every flow (the same answer, many times the time). */
#define BANK_CORE_BW 1e15

int platform_pooled_fits(const platform_spec *spec)
{
  return spec->topology == PLATFORM_FAT_TREE && spec->gpus_per_node == 0 && spec->mem_bw == 0 &&
         spec->gpu_sms == 0;
}

static void write_head(const platform_spec *s, size_t banks, double scale, const char *model, FILE *out)
{
  char num[64];
  fprintf(out, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n");
  fprintf(out, "<platform version=\"4.1\">\n  <!-- Written by dtsim: a fat tree, racks of %zu "
          "hosts, %zu uplinks per rack pooled as one link%s. -->\n", s->hosts_per_rack, s->uplinks,
          scale > 0 && banks ? ", a parameter-server bank at the core" : "");
  fprintf(out, "  <config>\n    <prop id=\"network/model\" value=\"%s\"/>\n", model);
  if (s->cross_traffic == PLATFORM_XT_OFF || (s->cross_traffic == PLATFORM_XT_BY_MODEL && strcmp(model, "CM02") == 0))
    fprintf(out, "    <prop id=\"network/crosstraffic\" value=\"0\"/>\n");
  if (banks && scale > 1) {
    platform_fmt_num(num, sizeof num, BANK_TCP_GAMMA * scale);
    fprintf(out, "    <prop id=\"network/TCP-gamma\" value=\"%s\"/>\n", num);
  }
  fprintf(out, "  </config>\n");
  fprintf(out, "  <zone id=\"world\" routing=\"Full\">\n");
}

/* One star cluster: hosts [first, first + n) on their own links, a router to leave by. */
static void write_star(FILE *out, const char *id, const char *prefix, size_t first, size_t n, double speed, int cores,
                       double bw, double lat, const char *sharing)
{
  char sp[64], b[64], l[64];
  platform_fmt_num(sp, sizeof sp, speed);
  platform_fmt_num(b, sizeof b, bw);
  platform_fmt_num(l, sizeof l, lat);
  fprintf(out, "    <cluster id=\"%s\" prefix=\"%s\" suffix=\"\" radical=\"%zu-%zu\" speed=\"%sf\" core=\"%d\"\n"
          "             bw=\"%sBps\" lat=\"%ss\" sharing_policy=\"%s\" router_id=\"%s-sw\"/>\n",
          id, prefix, first, first + n - 1, sp, cores, b, l, sharing, id);
}

/* Control network (spec->control_net). A rack is then a zone of its own (Full routing) in
 * which host i has two links of the host links' bandwidth, latency and sharing: its data
 * link, named as SimGrid's cluster names it (RACK_link_I), to the rack's switch RACK-sw,
 * and its control link (RACK_ctl_I) to the control switch RACK-ctl. Routes between two
 * hosts of the rack take their control links; routes between racks leave by the control
 * switches over the racks' control uplinks (NAME-ctlupA, as the uplinks); only routes to
 * a bank take data links and uplinks. With a bank in place of the shards, Sandblaster's
 * traffic between hosts is its coordinator's messages to and from the replicas: they
 * keep their routes' latencies and bandwidths, and no longer share a link with the
 * bank's flows, which couple every flow of the run in one max-min problem
 * (algorithms/doc/sandblaster.md, Bank). */

/* A link of a route, with its direction when it is split-duplex. */
static void write_ctn(FILE *out, const char *id, size_t i, const char *what, const char *dir, int split)
{
  fprintf(out, "<link_ctn id=\"%s_%s_%zu\"", id, what, i);
  if (split)
    fprintf(out, " direction=\"%s\"", dir);
  fprintf(out, "/>");
}

/* Rack `id`: hosts [first, first + n) with their data and control links and switches. */
static void write_rack_zone(FILE *out, const char *id, const char *prefix, size_t first, size_t n, const char *sp,
                            int cores, const char *bw, const char *lat, const char *sharing)
{
  int split = strcmp(sharing, "SPLITDUPLEX") == 0;
  fprintf(out, "    <zone id=\"%s\" routing=\"Full\">\n", id);
  for (size_t i = first; i < first + n; i++)
    fprintf(out, "      <host id=\"%s%zu\" speed=\"%sf\" core=\"%d\"/>\n", prefix, i, sp, cores);
  for (size_t i = first; i < first + n; i++)
    fprintf(out, "      <link id=\"%s_link_%zu\" bandwidth=\"%sBps\" latency=\"%ss\" sharing_policy=\"%s\"/>\n"
            "      <link id=\"%s_ctl_%zu\" bandwidth=\"%sBps\" latency=\"%ss\" sharing_policy=\"%s\"/>\n",
            id, i, bw, lat, sharing, id, i, bw, lat, sharing);
  fprintf(out, "      <router id=\"%s-sw\"/>\n      <router id=\"%s-ctl\"/>\n", id, id);
  for (size_t i = first; i < first + n; i++) {
    fprintf(out, "      <route src=\"%s%zu\" dst=\"%s-sw\">", prefix, i, id);
    write_ctn(out, id, i, "link", "UP", split);
    fprintf(out, "</route>\n      <route src=\"%s%zu\" dst=\"%s-ctl\">", prefix, i, id);
    write_ctn(out, id, i, "ctl", "UP", split);
    fprintf(out, "</route>\n");
    for (size_t j = i; j < first + n; j++) { /* i to itself: up and back, as in a cluster */
      fprintf(out, "      <route src=\"%s%zu\" dst=\"%s%zu\">", prefix, i, prefix, j);
      write_ctn(out, id, i, "ctl", "UP", split);
      write_ctn(out, id, j, "ctl", "DOWN", split);
      fprintf(out, "</route>\n");
    }
  }
  fprintf(out, "    </zone>\n");
}

static void write_routes(FILE *out, const char *name, size_t racks, size_t banks, int control)
{
  const char *sw = control ? "ctl" : "sw", *up = control ? "ctlup" : "up";
  for (size_t a = 0; a < racks; a++) {
    for (size_t b = a + 1; b < racks; b++)
      fprintf(out, "    <zoneRoute src=\"%s-rack%zu\" dst=\"%s-rack%zu\" gw_src=\"%s-rack%zu-%s\" gw_dst=\"%s-rack%zu-%s\">"
              "<link_ctn id=\"%s-%s%zu\" direction=\"UP\"/><link_ctn id=\"%s-%s%zu\" direction=\"DOWN\"/></zoneRoute>\n",
              name, a, name, b, name, a, sw, name, b, sw, name, up, a, name, up, b);
    if (banks)
      fprintf(out, "    <zoneRoute src=\"%s-rack%zu\" dst=\"bank\" gw_src=\"%s-rack%zu-sw\" gw_dst=\"bank-sw\">"
            "<link_ctn id=\"%s-up%zu\" direction=\"UP\"/><link_ctn id=\"core\"/></zoneRoute>\n",
            name, a, name, a, name, a);
  }
}

int platform_write_pooled(const platform_spec *s, FILE *out, char *err, size_t errlen)
{
  size_t banks = s->banks;
  double scale = banks ? s->bank_scale : 1;
  if (!platform_pooled_fits(s) || s->hosts_per_rack == 0 || s->uplinks == 0 || !(scale >= 1)) {
    platform_set_err(err, errlen, "pooled uplinks: a generated fat tree of CPU hosts with nominal links only");
    return -1;
  }
  const char *model = s->network_model ? s->network_model : GEN_MODEL;
  const char *name = s->name ? s->name : "host";
  const char *sharing = s->sharing ? s->sharing : "SPLITDUPLEX";
  size_t h = s->hosts_per_rack, racks = s->hosts / h + (s->hosts % h != 0);
  char id[96], prefix[96], sp[64], b[64], l[64];
  int control = banks && s->control_net;
  write_head(s, banks, scale, model, out);
  platform_fmt_num(sp, sizeof sp, s->speed);
  platform_fmt_num(b, sizeof b, s->bw);
  platform_fmt_num(l, sizeof l, s->lat);
  for (size_t a = 0; a < racks; a++) {
    snprintf(id, sizeof id, "%s-rack%zu", name, a);
    snprintf(prefix, sizeof prefix, "%s-", name);
    if (control)
      write_rack_zone(out, id, prefix, a * h, h, sp, s->cores, b, l, sharing);
    else
      write_star(out, id, prefix, a * h, h, s->speed, s->cores, s->bw, s->lat, sharing);
  }
  if (banks)
    write_star(out, "bank", "bank-", 0, banks, s->speed, (int)(s->cores * scale), s->bw * scale, 2 * s->lat,
               "SPLITDUPLEX");
  platform_fmt_num(b, sizeof b, s->bw * (double)s->uplinks);
  platform_fmt_num(l, sizeof l, s->lat);
  for (size_t a = 0; a < racks; a++)
    fprintf(out, "    <link id=\"%s-up%zu\" bandwidth=\"%sBps\" latency=\"%ss\" sharing_policy=\"SPLITDUPLEX\"/>\n", name,
            a, b, l);
  for (size_t a = 0; control && a < racks; a++)
    fprintf(out, "    <link id=\"%s-ctlup%zu\" bandwidth=\"%sBps\" latency=\"%ss\" sharing_policy=\"SPLITDUPLEX\"/>\n",
            name, a, b, l);
  platform_fmt_num(b, sizeof b, BANK_CORE_BW);
  if (banks)
    fprintf(out, "    <link id=\"core\" bandwidth=\"%sBps\" latency=\"0s\" sharing_policy=\"SHARED\"/>\n", b);
  write_routes(out, name, racks, banks, control);
  fprintf(out, "  </zone>\n</platform>\n");
  if (ferror(out)) {
    platform_set_err(err, errlen, "write error: %s", strerror(errno));
    return -1;
  }
  return 0;
}

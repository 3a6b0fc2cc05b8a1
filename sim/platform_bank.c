/* platform_bank.c - a generated fat tree with pooled uplinks (platform.uplink_routing = pooled):
 * racks of hosts whose uplinks are one link each, and a parameter-server bank's hosts at
 * the core (platform.h). Why not SimGrid's FAT_TREE cluster: it has no router to which a
 * host outside it could attach, and it routes a flow by the index of its destination,
 * which one bank in place of many shards cannot follow (algorithms/doc/downpour.md, Bank,
 * measures what this changes). */
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

static void write_routes(FILE *out, const char *name, size_t racks, size_t banks)
{
  for (size_t a = 0; a < racks; a++) {
    for (size_t b = a + 1; b < racks; b++)
      fprintf(out, "    <zoneRoute src=\"%s-rack%zu\" dst=\"%s-rack%zu\" gw_src=\"%s-rack%zu-sw\" gw_dst=\"%s-rack%zu-sw\">"
              "<link_ctn id=\"%s-up%zu\" direction=\"UP\"/><link_ctn id=\"%s-up%zu\" direction=\"DOWN\"/></zoneRoute>\n",
              name, a, name, b, name, a, name, b, name, a, name, b);
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
  char id[96], prefix[96], b[64], l[64];
  write_head(s, banks, scale, model, out);
  for (size_t a = 0; a < racks; a++) {
    snprintf(id, sizeof id, "%s-rack%zu", name, a);
    snprintf(prefix, sizeof prefix, "%s-", name);
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
  platform_fmt_num(b, sizeof b, BANK_CORE_BW);
  if (banks)
    fprintf(out, "    <link id=\"core\" bandwidth=\"%sBps\" latency=\"0s\" sharing_policy=\"SHARED\"/>\n", b);
  write_routes(out, name, racks, banks);
  fprintf(out, "  </zone>\n</platform>\n");
  if (ferror(out)) {
    platform_set_err(err, errlen, "write error: %s", strerror(errno));
    return -1;
  }
  return 0;
}

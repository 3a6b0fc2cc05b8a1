/* placement.c - the run's hosts on the loaded platform, and the traffic of its links.
 *
 * Before the run: which hosts of the platform the run uses (platform.placement), how much
 * slower each computes (platform.speed_spread on top of the stragglers), and the what-if
 * scaling of every link. After it: the bytes each link carried, attributed from the
 * (source, destination) byte counts algorithms/msg.c keeps, along SimGrid's routes; each
 * link gets a tier (direct, host, uplink, core), the range of hosts on either side, its
 * utilization in each window of simulated time (algorithms/linkload.c) and where it is on a
 * platform dtsim wrote (platform_where.c), for links.csv. Nothing here changes what the
 * simulation computes but the link and host speeds set before it starts. */
#include "sim/placement.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/asserts.h>
#include <xbt/dynar.h>
#include <xbt/sysdep.h>

#include "algorithms/linkload.h"
#include "algorithms/msg.h"
#include "models/rng.h"
#include "sim/platform.h"

/* platform.speed_spread: every host's slowdown (stragglers' or 1) times a factor drawn once
 * per host, in host order, lognormal of mean 1 and coefficient of variation speed_spread.
 * Returns slowdown, allocated when it was NULL and a spread is asked, or NULL. */
double *placement_speeds(const scenario *sc, double *slowdown, size_t n_hosts)
{
  double cv = sc->platform.speed_spread;
  if (!(cv > 0))
    return slowdown;
  if (slowdown == NULL) {
    slowdown = xbt_malloc(n_hosts * sizeof(double));
    for (size_t i = 0; i < n_hosts; i++)
      slowdown[i] = 1.0;
  }
  double sigma = sqrt(log1p(cv * cv));
  gsl_rng *r = rng_create(sc->run.seed, RNG_ROLE_HOST_SPEED, 0);
  for (size_t i = 0; i < n_hosts; i++)
    slowdown[i] *= gsl_ran_lognormal(r, -0.5 * sigma * sigma, sigma);
  gsl_rng_free(r);
  return slowdown;
}

sg_host_t *placement_hosts(const scenario *sc, sg_host_t *all, size_t n_all, size_t needed)
{
  sg_host_t *h = xbt_malloc(needed * sizeof(*h));
  platform_place(all, n_all, needed, strcmp(sc->platform.placement, "spread") == 0, h);
  return h;
}

/* Per-link bytes: the bytes of every (source, destination) host pair, added to
 * every link on the route between them: exactly the bytes of the messages that crossed
 * each link (tests/sim_whatif.c checks hand-computed values).
 * SimGrid 3.32's link-load plugin (src/plugins/link_load.cpp) is not used, for what it
 * measures, not for crashes. Checked on 3.32: tracked before simgrid_run, every link
 * loses its tracking (Engine::run seals the platform, Link::seal fires on_creation
 * again and the plugin attaches a fresh, untracked LinkLoad) and split-duplex halves
 * have no LinkLoad yet (sg_link_load_track dereferences NULL: a crash); tracked from an
 * actor at time 0 it works on split-duplex and fat-tree links alike. But it integrates
 * each link's LMM usage between comm start/end events with the rate seen at the end of
 * the interval, so a transfer's latency phase is counted at its rate: one 1e6-byte
 * message over a 2 us, 1.25e9 B/s route reads 1.0025e6 bytes, and over distbelief-2012's
 * LV08 route (13.01 x 200 us) 1.356e6, the link's full 125e6 B/s times the whole
 * transfer time; under LV08 usage also includes the reverse cross traffic. Links are keyed by name, then told apart
 * by identity when names collide. */
/* Where a link sits, from the routes of the traffic that crossed it: its distance from
 * the nearest host on those routes, whether a route is this link alone, and which of the
 * run's hosts sent and received across it (bitmaps over placement indices). */
typedef struct link_track {
  size_t min_d;
  int direct;
  int self, other; /* a route from a host to itself crossed it; a route between two hosts did */
  unsigned char *src, *dst;
} link_track;

typedef struct link_acc {
  link_stat *st;
  sg_link_t *ids;
  link_track *tr;
  size_t n, cap;
  double sim_time;
  xbt_dynar_t route;
  const char **names; /* the run's host names sorted, for the index of a name */
  size_t *index;      /* names[i]'s placement index */
  size_t n_hosts;
  unsigned char *senders;
} link_acc;

static void placement_bit_set(unsigned char **map, size_t n, size_t i)
{
  if (*map == NULL)
    *map = xbt_malloc0((n + 7) / 8);
  (*map)[i / 8] |= (unsigned char)(1u << (i % 8));
}

static size_t placement_bits_count(const unsigned char *map, size_t n, size_t *lo, size_t *hi)
{
  size_t c = 0;
  for (size_t i = 0; map && i < n; i++) {
    if (i % 8 == 0 && map[i / 8] == 0) { /* most of a large run's hosts never cross a given link */
      i += 7;
      continue;
    }
    if (map[i / 8] & (1u << (i % 8))) {
      if (c == 0)
        *lo = i;
      *hi = i;
      c++;
    }
  }
  return c;
}

static link_track *placement_add_link(link_acc *acc, sg_link_t l, double bytes)
{
  const char *name = sg_link_get_name(l);
  size_t lo = 0, hi = acc->n;
  while (lo < hi) { /* first entry whose name is >= name */
    size_t mid = (lo + hi) / 2;
    if (strcmp(acc->st[mid].name, name) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (size_t i = lo; i < acc->n && strcmp(acc->st[i].name, name) == 0; i++)
    if (acc->ids[i] == l) {
      acc->st[i].bytes += bytes;
      return &acc->tr[i];
    }
  if (acc->n == acc->cap) {
    acc->cap = acc->cap ? 2 * acc->cap : 256;
    acc->st = xbt_realloc(acc->st, acc->cap * sizeof(*acc->st));
    acc->ids = xbt_realloc(acc->ids, acc->cap * sizeof(*acc->ids));
    acc->tr = xbt_realloc(acc->tr, acc->cap * sizeof(*acc->tr));
  }
  while (lo < acc->n && strcmp(acc->st[lo].name, name) == 0)
    lo++;
  memmove(acc->st + lo + 1, acc->st + lo, (acc->n - lo) * sizeof(*acc->st));
  memmove(acc->ids + lo + 1, acc->ids + lo, (acc->n - lo) * sizeof(*acc->ids));
  memmove(acc->tr + lo + 1, acc->tr + lo, (acc->n - lo) * sizeof(*acc->tr));
  acc->st[lo] = (link_stat){.name = xbt_strdup(name), .bytes = bytes};
  acc->ids[lo] = l;
  acc->tr[lo] = (link_track){(size_t)-1, 0, 0, 0, NULL, NULL};
  acc->n++;
  return &acc->tr[lo];
}

static int placement_cmp_name(const void *a, const void *b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static size_t placement_host_index(const link_acc *acc, sg_host_t h)
{
  const char *name = sg_host_get_name(h);
  const char **p = bsearch(&name, acc->names, acc->n_hosts, sizeof *acc->names, placement_cmp_name);
  xbt_assert(p, "host %s carries traffic but is not one of the run's", name);
  return acc->index[p - acc->names];
}

static void placement_add_pair(void *ctx, sg_host_t src, sg_host_t dst, double bytes)
{
  link_acc *acc = ctx;
  xbt_dynar_reset(acc->route);
  sg_host_get_route(src, dst, acc->route);
  size_t s = placement_host_index(acc, src), d = placement_host_index(acc, dst), len = xbt_dynar_length(acc->route);
  placement_bit_set(&acc->senders, acc->n_hosts, s);
  unsigned k;
  sg_link_t l;
  xbt_dynar_foreach (acc->route, k, l) {
    link_track *t = placement_add_link(acc, l, bytes);
    size_t dist = k < len - 1 - k ? k : len - 1 - k;
    t->min_d = dist < t->min_d ? dist : t->min_d;
    t->direct |= len == 1;
    t->self |= s == d;
    t->other |= s != d;
    placement_bit_set(&t->src, acc->n_hosts, s);
    placement_bit_set(&t->dst, acc->n_hosts, d);
  }
}

/* Link l's utilization in each of the n windows of width w (linkload.h; the last ends at
 * sim_time), into series, and the busiest (the first of equals) into st. */
static void placement_windows(link_stat *st, sg_link_t l, double sim_time, size_t n, double w)
{
  const long long *bytes = linkload_bytes(l);
  double bw = sg_link_get_bandwidth(l);
  st->series = xbt_malloc((n ? n : 1) * sizeof(double));
  for (size_t k = 0; k < n; k++) {
    double open = fmin(w, sim_time - (double)k * w); /* the last window ends with the run */
    st->series[k] = bytes && bw > 0 && open > 0 ? (double)bytes[k] / (bw * open) : 0;
    if (k == 0 || st->series[k] > st->peak_utilization) {
      st->peak_utilization = st->series[k];
      st->peak_at = (double)k * w;
    }
  }
}

/* "host-3", or "host-0..host-39 (40 hosts)": the lowest and highest placement index. */
static char *placement_hosts_text(const link_acc *acc, const unsigned char *map, sg_host_t *hosts)
{
  size_t lo = 0, hi = 0, c = placement_bits_count(map, acc->n_hosts, &lo, &hi);
  char buf[600];
  if (c == 1)
    snprintf(buf, sizeof buf, "%s", sg_host_get_name(hosts[lo]));
  else
    snprintf(buf, sizeof buf, "%s..%s (%zu hosts)", sg_host_get_name(hosts[lo]), sg_host_get_name(hosts[hi]), c);
  return xbt_strdup(buf);
}

/* Every link that carried traffic, by name, with its tier, endpoints and sharing: `direct` when a
 * route is this link alone (a torus or ring neighbour link); `host` when it is at one end
 * of a route (a host's NIC, a GPU's link into its node switch); `uplink` one link from a
 * host when it carries the traffic of only some of the senders (a rack's or node's link to
 * the next switch, either way); `core` otherwise (a star's backbone, spine links). */
link_stat *placement_links(double sim_time, size_t n_windows, const platform_layout *layout, sg_host_t *hosts,
                           size_t n_hosts, size_t *n)
{
  link_acc acc = {0};
  acc.route = xbt_dynar_new(sizeof(sg_link_t), NULL);
  acc.n_hosts = n_hosts;
  acc.names = xbt_malloc((n_hosts ? n_hosts : 1) * sizeof *acc.names);
  acc.index = xbt_malloc((n_hosts ? n_hosts : 1) * sizeof *acc.index);
  for (size_t i = 0; i < n_hosts; i++)
    acc.names[i] = sg_host_get_name(hosts[i]);
  qsort(acc.names, n_hosts, sizeof *acc.names, placement_cmp_name);
  for (size_t i = 0; i < n_hosts; i++) { /* names[j]'s placement index */
    const char *name = sg_host_get_name(hosts[i]);
    const char **p = bsearch(&name, acc.names, n_hosts, sizeof *acc.names, placement_cmp_name);
    acc.index[p - acc.names] = i;
  }
  msg_traffic_foreach(placement_add_pair, &acc);
  size_t lo, hi, senders = placement_bits_count(acc.senders, n_hosts, &lo, &hi);
  for (size_t i = 0; i < acc.n; i++) {
    double cap = sg_link_get_bandwidth(acc.ids[i]) * sim_time;
    acc.st[i].utilization = cap > 0 ? acc.st[i].bytes / cap : 0;
    const link_track *t = &acc.tr[i];
    const char *tier = t->direct ? "direct"
                       : t->min_d == 0 ? "host"
                       : t->min_d == 1 && placement_bits_count(t->src, n_hosts, &lo, &hi) < senders ? "uplink"
                                                                                            : "core";
    snprintf(acc.st[i].tier, sizeof acc.st[i].tier, "%s", tier);
    /* a FATPIPE link (SimGrid's loopbacks, a star's default backbone) bounds each flow
     * alone, so its bytes say nothing of contention: output.c ranks it apart */
    const char *sharing = t->self && !t->other             ? "loopback"
                          : sg_link_is_shared(acc.ids[i]) ? "shared"
                                                           : "fatpipe";
    snprintf(acc.st[i].sharing, sizeof acc.st[i].sharing, "%s", sharing);
    placement_windows(&acc.st[i], acc.ids[i], sim_time, n_windows, linkload_width());
    platform_where(layout, acc.st[i].name, acc.st[i].where, sizeof acc.st[i].where);
    acc.st[i].from = placement_hosts_text(&acc, t->src, hosts);
    acc.st[i].to = placement_hosts_text(&acc, t->dst, hosts);
    xbt_free(t->src);
    xbt_free(t->dst);
  }
  xbt_free(acc.senders);
  xbt_free(acc.names);
  xbt_free(acc.index);
  xbt_free(acc.tr);
  xbt_dynar_free(&acc.route);
  xbt_free(acc.ids);
  *n = acc.n;
  return acc.st;
}

/* What-if factors on any platform, after loading and before the run: every link
 * SimGrid lists (the _UP and _DOWN halves of split-duplex links are listed, checked on
 * 3.32) gets its bandwidth and latency scaled. Host speed cannot be set through 3.32's
 * C API (sg_host_set_pstate only picks among a file's pstates), so speed_factor divides
 * the flops of every execution instead (compute_execute): the same simulated times. */
void placement_scale_links(const scenario *sc)
{
  if (sc->platform.bw_factor == 1 && sc->platform.lat_factor == 1)
    return;
  size_t n = sg_link_count();
  sg_link_t *links = sg_link_list();
  for (size_t i = 0; i < n; i++) {
    if (sc->platform.bw_factor != 1)
      sg_link_set_bandwidth(links[i], sg_link_get_bandwidth(links[i]) * sc->platform.bw_factor);
    if (sc->platform.lat_factor != 1)
      sg_link_set_latency(links[i], sg_link_get_latency(links[i]) * sc->platform.lat_factor);
  }
  xbt_free(links);
}

void placement_links_free(link_stat *links, size_t n)
{
  for (size_t i = 0; links && i < n; i++) {
    xbt_free(links[i].name);
    xbt_free(links[i].from);
    xbt_free(links[i].to);
    xbt_free(links[i].series);
  }
  xbt_free(links);
}

/* linkload.c - each link's bytes in windows of simulated time (linkload.h).
 *
 * A link is registered the first time a route through it is asked for: its index into
 * ll.links is kept in SimGrid's per-link data (index + 1; 0: not registered), so that a
 * route's links are found without a search and linkload_bytes finds a link's windows
 * after the run. Routes are computed once per (source, destination) pair by the caller
 * (msg.c keeps one per pair). A plain mutex (no simulated effect) guards everything
 * against actors running on other threads. */
#include "algorithms/linkload.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/asserts.h>
#include <xbt/dynar.h>
#include <xbt/sysdep.h>

/* The first windows' width: 2^-30 s (about a nanosecond), below any route's latency, so
 * that the width is always set by the run's length, never by this start. */
#define LINKLOAD_FIRST_WIDTH (1.0 / 1073741824.0)

struct linkload_route {
  size_t n;
  size_t *link; /* indices into ll.links */
};

typedef struct ll_link {
  sg_link_t link;
  long long *bytes; /* [ll.cap] */
} ll_link;

static struct {
  pthread_mutex_t mu;
  int on;
  size_t cap;    /* windows at most */
  double width;  /* of each window, s */
  ll_link *links;
  size_t n_links, cap_links;
  linkload_route **routes;
  size_t n_routes, cap_routes;
} ll = {.mu = PTHREAD_MUTEX_INITIALIZER};

void linkload_start(size_t max_windows)
{
  xbt_assert(max_windows >= 2, "linkload: %zu windows (at least 2)", max_windows);
  linkload_stop();
  ll.on = 1;
  ll.cap = max_windows;
  ll.width = LINKLOAD_FIRST_WIDTH;
}

int linkload_on(void)
{
  return ll.on;
}

/* Link l's index, registering it; under ll.mu. */
static size_t linkload_index(sg_link_t l)
{
  uintptr_t slot = (uintptr_t)sg_link_get_data(l);
  if (slot)
    return (size_t)(slot - 1);
  if (ll.n_links == ll.cap_links) {
    ll.cap_links = ll.cap_links ? 2 * ll.cap_links : 256;
    ll.links = xbt_realloc(ll.links, ll.cap_links * sizeof(*ll.links));
  }
  ll.links[ll.n_links] = (ll_link){l, xbt_malloc0(ll.cap * sizeof(long long))};
  sg_link_set_data(l, (void *)(uintptr_t)(ll.n_links + 1));
  return ll.n_links++;
}

linkload_route *linkload_route_of(sg_host_t src, sg_host_t dst)
{
  xbt_dynar_t route = xbt_dynar_new(sizeof(sg_link_t), NULL);
  sg_host_get_route(src, dst, route);
  linkload_route *r = xbt_malloc(sizeof(*r));
  r->n = xbt_dynar_length(route);
  r->link = xbt_malloc((r->n ? r->n : 1) * sizeof(size_t));
  pthread_mutex_lock(&ll.mu);
  unsigned k;
  sg_link_t l;
  xbt_dynar_foreach (route, k, l)
    r->link[k] = linkload_index(l);
  if (ll.n_routes == ll.cap_routes) {
    ll.cap_routes = ll.cap_routes ? 2 * ll.cap_routes : 256;
    ll.routes = xbt_realloc(ll.routes, ll.cap_routes * sizeof(*ll.routes));
  }
  ll.routes[ll.n_routes++] = r;
  pthread_mutex_unlock(&ll.mu);
  xbt_dynar_free(&route);
  return r;
}

/* Doubles the width until t fits before the last window's end, merging neighbouring
 * windows of every link; under ll.mu. k * width is exact for a power-of-two width, so a
 * window's edges after merging are edges it had before. */
static void linkload_fit(double t)
{
  while (t >= (double)ll.cap * ll.width) {
    for (size_t i = 0; i < ll.n_links; i++) {
      long long *b = ll.links[i].bytes;
      for (size_t k = 0; k < ll.cap; k++)
        b[k] = 2 * k + 1 < ll.cap ? b[2 * k] + b[2 * k + 1] : 2 * k < ll.cap ? b[2 * k] : 0;
    }
    ll.width *= 2;
  }
}

/* The message's bytes moved by time x in [t0, t1], at an even rate: a whole number, 0 at
 * t0 and all of them at t1, whatever the rounding in between. */
static long long linkload_moved(long long bytes, double t0, double t1, double x)
{
  if (x >= t1)
    return bytes;
  if (x <= t0)
    return 0;
  return (long long)floor((double)bytes * ((x - t0) / (t1 - t0)));
}

void linkload_add(const linkload_route *r, double bytes, double t0, double t1)
{
  long long b = llround(bytes);
  if (!ll.on || r == NULL || r->n == 0 || b <= 0)
    return;
  pthread_mutex_lock(&ll.mu);
  linkload_fit(t1);
  double w = ll.width;
  size_t first = (size_t)floor(t0 / w), last = (size_t)floor(t1 / w);
  for (size_t k = first; k <= last && k < ll.cap; k++) {
    long long in = t1 <= t0 ? b
                            : linkload_moved(b, t0, t1, (double)(k + 1) * w) - linkload_moved(b, t0, t1, (double)k * w);
    for (size_t i = 0; in && i < r->n; i++)
      ll.links[r->link[i]].bytes[k] += in;
  }
  pthread_mutex_unlock(&ll.mu);
}

double linkload_width(void)
{
  return ll.width;
}

size_t linkload_close(double end)
{
  pthread_mutex_lock(&ll.mu);
  linkload_fit(end);
  double n = ceil(end / ll.width);
  pthread_mutex_unlock(&ll.mu);
  return n < 1 ? 1 : (size_t)n; /* end < cap x width: at most cap */
}

const long long *linkload_bytes(sg_link_t l)
{
  uintptr_t slot = ll.on ? (uintptr_t)sg_link_get_data(l) : 0;
  return slot ? ll.links[slot - 1].bytes : NULL;
}

void linkload_stop(void)
{
  if (!ll.on)
    return;
  for (size_t i = 0; i < ll.n_links; i++) {
    sg_link_set_data(ll.links[i].link, NULL);
    xbt_free(ll.links[i].bytes);
  }
  for (size_t i = 0; i < ll.n_routes; i++) {
    xbt_free(ll.routes[i]->link);
    xbt_free(ll.routes[i]);
  }
  xbt_free(ll.links);
  xbt_free(ll.routes);
  ll.links = NULL;
  ll.routes = NULL;
  ll.n_links = ll.cap_links = ll.n_routes = ll.cap_routes = 0;
  ll.on = 0;
}

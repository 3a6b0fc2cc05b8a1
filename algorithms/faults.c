/* faults.c - [faults] parsing and the injector actor. */
#include "algorithms/faults.h"

#include <errno.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/dynar.h>
#include <xbt/sysdep.h>

#include "algorithms/msg.h"

/* Links that are down now, for the route filter; a plain mutex (no simulated effect)
 * guards them against senders on other threads. One engine per process. */
static struct {
  pthread_mutex_t mu;
  sg_link_t *down;
  size_t n, cap;
} links = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int parse_time(const char *s, char **end, double *t)
{
  errno = 0;
  *t = strtod(s, end);
  return *end != s && errno == 0 && isfinite(*t);
}

/* One item "TARGET@TIME[:FACTOR][+DURATION]" into ev[0] (and ev[1] when a duration is given);
 * returns the events made (1 or 2), or -1 with err. */
static int parse_item(fault_kind kind, const char *item, fault_event ev[2], char *err, size_t errlen)
{
  const char *what = kind == FAULT_HOST_OFF ? "HOST@TIME[+DURATION]"
                     : kind == FAULT_LINK_OFF ? "LINK@TIME[+DURATION]"
                                              : "LINK@TIME:FACTOR[+DURATION]";
  const char *at = strrchr(item, '@');
  if (at == NULL || at == item || (size_t)(at - item) >= sizeof(ev[0].target)) {
    snprintf(err, errlen, "'%s' is not %s", item, what);
    return -1;
  }
  memset(ev, 0, 2 * sizeof(*ev));
  ev[0].kind = kind;
  memcpy(ev[0].target, item, (size_t)(at - item));
  char *end;
  if (!parse_time(at + 1, &end, &ev[0].time) || ev[0].time <= 0) {
    snprintf(err, errlen, "'%s': the time must be a number of simulated seconds > 0", item);
    return -1;
  }
  if (kind == FAULT_LINK_DEGRADE) {
    char *fend;
    if (*end != ':' || !parse_time(end + 1, &fend, &ev[0].factor) || ev[0].factor <= 0) {
      snprintf(err, errlen, "'%s' is not %s with FACTOR > 0", item, what);
      return -1;
    }
    end = fend;
  }
  if (*end == '\0')
    return 1;
  double dur;
  char *dend;
  if (*end != '+' || !parse_time(end + 1, &dend, &dur) || *dend != '\0' || dur <= 0) {
    snprintf(err, errlen, "'%s' is not %s (DURATION > 0)", item, what);
    return -1;
  }
  ev[1] = ev[0];
  ev[1].kind = kind == FAULT_HOST_OFF ? FAULT_HOST_ON : kind == FAULT_LINK_OFF ? FAULT_LINK_ON : FAULT_LINK_DEGRADE;
  ev[1].time = ev[0].time + dur;
  ev[1].factor = kind == FAULT_LINK_DEGRADE ? 1 : 0; /* a degradation ends at the nominal bandwidth */
  return 2;
}

int faults_parse(fault_plan *p, fault_kind kind, const char *text, char *err, size_t errlen)
{
  char buf[4096];
  if (strlen(text) >= sizeof(buf)) {
    snprintf(err, errlen, "the list is longer than %zu characters", sizeof(buf) - 1);
    return -1;
  }
  snprintf(buf, sizeof(buf), "%s", text);
  fault_event *ev = p->ev;
  size_t n = p->n;
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ' || *tok == '\t')
      tok++;
    size_t len = strlen(tok);
    while (len > 0 && (tok[len - 1] == ' ' || tok[len - 1] == '\t'))
      tok[--len] = '\0';
    fault_event two[2];
    int k = parse_item(kind, tok, two, err, errlen);
    if (k < 0) {
      if (ev != p->ev)
        xbt_free(ev);
      return -1;
    }
    fault_event *grown = xbt_malloc((n + (size_t)k) * sizeof(*grown));
    if (n)
      memcpy(grown, ev, n * sizeof(*ev));
    if (ev != p->ev)
      xbt_free(ev);
    ev = grown;
    memcpy(ev + n, two, (size_t)k * sizeof(*ev));
    n += (size_t)k;
  }
  if (ev != p->ev) {
    xbt_free(p->ev);
    p->ev = ev;
    p->n = n;
  }
  return 0;
}

void faults_sort(fault_plan *p)
{
  for (size_t i = 1; i < p->n; i++) /* insertion sort: stable, and lists are short */
    for (size_t j = i; j > 0 && p->ev[j - 1].time > p->ev[j].time; j--) {
      fault_event t = p->ev[j];
      p->ev[j] = p->ev[j - 1];
      p->ev[j - 1] = t;
    }
}

void faults_clear(fault_plan *p)
{
  if (p == NULL)
    return;
  msg_set_route_filter(NULL);
  pthread_mutex_lock(&links.mu);
  xbt_free(links.down);
  links.down = NULL;
  links.n = links.cap = 0;
  pthread_mutex_unlock(&links.mu);
  xbt_free(p->ev);
  xbt_free(p->nominal);
  p->ev = NULL;
  p->nominal = NULL;
  p->n = 0;
}

sg_link_t faults_link_by_name(const char *name)
{
  sg_link_t *all = sg_link_list();
  size_t n = sg_link_count();
  sg_link_t found = NULL;
  for (size_t i = 0; i < n && found == NULL; i++)
    if (strcmp(sg_link_get_name(all[i]), name) == 0)
      found = all[i];
  xbt_free(all);
  return found;
}

int faults_host_returns(const fault_plan *p, sg_host_t host, double t)
{
  for (size_t i = 0; p && i < p->n; i++)
    if (p->ev[i].kind == FAULT_HOST_ON && p->ev[i].host == host && p->ev[i].time >= t)
      return 1;
  return 0;
}

int faults_has_host_failures(const fault_plan *p)
{
  for (size_t i = 0; p && i < p->n; i++)
    if (p->ev[i].kind == FAULT_HOST_OFF)
      return 1;
  return 0;
}

double faults_wait_timeout(const run_config *cfg)
{
  return cfg->faults ? cfg->faults->wait_timeout : -1.0;
}

static int run_host(const run_config *cfg, sg_host_t h)
{
  for (size_t i = 0; i < cfg->n_hosts; i++)
    if (cfg->hosts[i] == h)
      return 1;
  return 0;
}

/* Ends the whole simulation now: every other actor is killed in one step, so no
 * survivor ever waits on a dead peer. The injector, a daemon, dies with the last of
 * them at its next SimGrid call: everything is recorded first. */
static void stop_run(fault_plan *p, int why, metrics_status st)
{
  p->stopped = why;
  p->stopped_at = simgrid_get_clock();
  metrics_set_status(p->m, st);
  sg_actor_kill_all();
}

static void set_link_down(sg_link_t l, int down)
{
  pthread_mutex_lock(&links.mu);
  size_t k = 0;
  while (k < links.n && links.down[k] != l)
    k++;
  if (down && k == links.n) {
    if (links.n == links.cap) {
      links.cap = links.cap ? 2 * links.cap : 4;
      links.down = xbt_realloc(links.down, links.cap * sizeof(sg_link_t));
    }
    links.down[links.n++] = l;
  } else if (!down && k < links.n) {
    links.down[k] = links.down[--links.n];
  }
  pthread_mutex_unlock(&links.mu);
}

static int route_crosses(sg_host_t src, sg_host_t dst, const sg_link_t *set, size_t n)
{
  xbt_dynar_t route = xbt_dynar_new(sizeof(sg_link_t), NULL);
  sg_host_get_route(src, dst, route);
  int hit = 0;
  sg_link_t l;
  unsigned int i;
  xbt_dynar_foreach (route, i, l)
    for (size_t k = 0; k < n && !hit; k++)
      hit = l == set[k];
  xbt_dynar_free(&route);
  return hit;
}

/* msg's route filter: a message whose route crosses a link that is down is lost. */
static int route_ok(sg_host_t src, sg_host_t dst)
{
  pthread_mutex_lock(&links.mu);
  int ok = links.n == 0 || !route_crosses(src, dst, links.down, links.n);
  pthread_mutex_unlock(&links.mu);
  return ok;
}

/* Whether the link lies on the route between two of the run's hosts. */
static int on_run_route(const fault_plan *p, sg_link_t l)
{
  for (size_t a = 0; a < p->cfg->n_hosts; a++)
    for (size_t b = 0; b < p->cfg->n_hosts; b++)
      if (a != b && route_crosses(p->cfg->hosts[a], p->cfg->hosts[b], &l, 1))
        return 1;
  return 0;
}

static void apply(fault_plan *p, size_t i)
{
  fault_event *ev = &p->ev[i];
  switch (ev->kind) {
  case FAULT_HOST_OFF:
    if (p->fail_stop && run_host(p->cfg, ev->host)) {
      ev->applied = 1;
      atomic_fetch_add(&p->workers_lost, 1);
      stop_run(p, 1, METRICS_HOST_FAILED); /* the host dies with the run */
      return;
    }
    sg_host_turn_off(ev->host);
    break;
  case FAULT_HOST_ON:
    sg_host_turn_on(ev->host);
    break;
  case FAULT_LINK_OFF:
    if (p->fail_stop && on_run_route(p, ev->link)) {
      ev->applied = 1;
      stop_run(p, 3, METRICS_LINK_FAILED);
      return;
    }
    set_link_down(ev->link, 1);
    break;
  case FAULT_LINK_ON:
    set_link_down(ev->link, 0);
    break;
  case FAULT_LINK_DEGRADE:
    sg_link_set_bandwidth(ev->link, p->nominal[i] * ev->factor);
    break;
  }
  ev->applied = 1;
}

/* Applies each event at its time, then watches for a run that outlives its deadline.
 * It is a daemon: the run ends when the algorithm's actors do, events still to come
 * are then reported as not applied. */
static void injector_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  fault_plan *p = sg_actor_self_get_data();
  for (size_t i = 0; i < p->n && !p->stopped; i++) {
    if (p->ev[i].time > simgrid_get_clock())
      sg_actor_sleep_until(p->ev[i].time);
    apply(p, i);
    if (p->hook && !p->stopped)
      p->hook(p->hook_ctx, &p->ev[i]);
  }
  if (!p->stopped) {
    if (p->deadline > simgrid_get_clock())
      sg_actor_sleep_until(p->deadline);
    stop_run(p, 2, METRICS_STALLED);
  }
}

void faults_stop_run(fault_plan *p)
{
  stop_run(p, 1, METRICS_HOST_FAILED);
}

void faults_start(fault_plan *p, const run_config *cfg, metrics *m)
{
  msg_set_route_filter(route_ok);
  p->cfg = cfg;
  p->m = m;
  xbt_free(p->nominal);
  p->nominal = xbt_malloc0((p->n + 1) * sizeof(double));
  for (size_t i = 0; i < p->n; i++)
    if (p->ev[i].link)
      p->nominal[i] = sg_link_get_bandwidth(p->ev[i].link);
  sg_actor_t a = sg_actor_init("fault-injector", p->safe_host);
  sg_actor_set_data(a, p);
  sg_actor_start(a, injector_actor, 0, NULL);
  sg_actor_daemonize(a);
}

/* faultcfg.c - the [faults] section, resolved against the loaded platform. */
#include "sim/faultcfg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/config.h>
#include <xbt/sysdep.h>

#include "algorithms/registry.h"
#include "models/rng.h"

size_t faultcfg_workers(const scenario *sc, size_t n_hosts)
{
  const algorithm *a = algorithm_find(sc->run.algorithm);
  return a->plan.fault_workers ? a->plan.fault_workers(sc, n_hosts) : n_hosts;
}

/* Index in the run's hosts of a role address, or -1: rankI for every algorithm, the
 * others as the algorithm names its roles. */
static long role_index(const scenario *sc, const char *name, size_t n_hosts)
{
  long k;
  const algorithm *a = algorithm_find(sc->run.algorithm);
  if (run_role_number(name, "rank", &k))
    return k >= 0 && (size_t)k < n_hosts ? k : -1;
  return a->plan.fault_role ? a->plan.fault_role(sc, name, n_hosts) : -1;
}

static int resolve(const scenario *sc, fault_event *ev, const sg_host_t *hosts, size_t n_hosts, sg_host_t *all,
                   size_t n_all, char *err, size_t errlen)
{
  if (ev->kind == FAULT_HOST_OFF || ev->kind == FAULT_HOST_ON) {
    for (size_t i = 0; i < n_all && ev->host == NULL; i++)
      if (strcmp(sg_host_get_name(all[i]), ev->target) == 0)
        ev->host = all[i];
    long k = ev->host ? -1 : role_index(sc, ev->target, n_hosts);
    if (k >= 0)
      ev->host = hosts[k];
    if (ev->host == NULL) {
      snprintf(err, errlen, "faults.host_failures: '%s' is neither a host of the platform nor a role of this run "
               "(replicaK, shardK, coordinator, rankI)", ev->target);
      return -1;
    }
    return 0;
  }
  ev->link = faults_link_by_name(ev->target);
  if (ev->link == NULL) { /* name a few, in the platform's order: SimGrid makes up cluster link names */
    sg_link_t *links = sg_link_list();
    size_t nl = sg_link_count();
    char some[256] = "";
    for (size_t i = 0; i < nl && i < 3; i++)
      snprintf(some + strlen(some), sizeof(some) - strlen(some), "%s%s", i ? ", " : "", sg_link_get_name(links[i]));
    xbt_free(links);
    snprintf(err, errlen, "faults.%s: '%s' is not a link of the platform (it has %zu, e.g. %s)",
             ev->kind == FAULT_LINK_DEGRADE ? "link_degrade" : "link_failures", ev->target, nl, some);
    return -1;
  }
  return 0;
}

/* SimGrid 3.32's NetworkCm02Link::set_bandwidth adds S/new - S/old to the penalty of
 * every flow on the link, including the reverse TCP cross traffic that never got the
 * S/old term: raising a bandwidth then makes a penalty negative and aborts the run
 * ("Variable penalty should not be negative"). Refuse what would raise one. */
static int check_raises(const fault_plan *p, char *err, size_t errlen)
{
  if (!sg_cfg_get_boolean("network/crosstraffic") || sg_cfg_get_double("network/weight-S") <= 0)
    return 0;
  for (size_t i = 0; i < p->n; i++) {
    if (p->ev[i].kind != FAULT_LINK_DEGRADE)
      continue;
    double before = 1;
    for (size_t j = 0; j < i; j++)
      if (p->ev[j].kind == FAULT_LINK_DEGRADE && p->ev[j].link == p->ev[i].link)
        before = p->ev[j].factor;
    if (p->ev[i].factor > before) {
      snprintf(err, errlen, "faults.link_degrade: raising %s's bandwidth again at %.17g s aborts SimGrid 3.32 under "
               "TCP cross traffic; leave it degraded (no +DURATION) or run with --cfg=network/crosstraffic:0",
               p->ev[i].target, p->ev[i].time);
      return -1;
    }
  }
  return 0;
}

/* The first platform host no event turns off. */
static sg_host_t safe_host(const fault_plan *p, sg_host_t *all, size_t n_all)
{
  for (size_t i = 0; i < n_all; i++) {
    int hit = 0;
    for (size_t j = 0; j < p->n && !hit; j++)
      hit = p->ev[j].kind == FAULT_HOST_OFF && p->ev[j].host == all[i];
    if (!hit)
      return all[i];
  }
  return NULL;
}

int faultcfg_build(const scenario *sc, const sg_host_t *hosts, size_t n_hosts, sg_host_t *all, size_t n_all,
                   fault_plan *p, char *err, size_t errlen)
{
  fault_plan q;
  memset(&q, 0, sizeof(q));
  char e[512];
  if (faults_parse(&q, FAULT_HOST_OFF, sc->faults.host_failures, e, sizeof e) != 0 ||
      faults_parse(&q, FAULT_LINK_OFF, sc->faults.link_failures, e, sizeof e) != 0 ||
      faults_parse(&q, FAULT_LINK_DEGRADE, sc->faults.link_degrade, e, sizeof e) != 0) {
    snprintf(err, errlen, "faults: %s", e); /* the scenario checks made this unreachable */
    faults_clear(&q);
    return -1;
  }
  if (q.n == 0)
    return 0;
  for (size_t i = 0; i < q.n; i++)
    if (resolve(sc, &q.ev[i], hosts, n_hosts, all, n_all, err, errlen) != 0) {
      faults_clear(&q);
      return -1;
    }
  faults_sort(&q);
  if (check_raises(&q, err, errlen) != 0) {
    faults_clear(&q);
    return -1;
  }
  q.safe_host = safe_host(&q, all, n_all);
  if (q.safe_host == NULL) {
    snprintf(err, errlen, "faults.host_failures: every host of the platform fails; the fault injector and the "
             "evaluator need one that does not");
    faults_clear(&q);
    return -1;
  }
  q.wait_timeout = sc->faults.wait_timeout > 0 ? sc->faults.wait_timeout : sc->run.eval_every;
  q.checkpoint_interval = sc->faults.checkpoint_interval;
  q.checkpoint_bw = sc->faults.checkpoint_bw;
  /* each algorithm says whether it survives failures (algorithms/README.md, Faults) */
  q.fail_stop = algorithm_find(sc->run.algorithm)->fail_stop;
  q.workers_started = (int)faultcfg_workers(sc, n_hosts);
  double last = q.ev[q.n - 1].time;
  q.deadline = (last > sc->run.max_sim_time ? last : sc->run.max_sim_time) + 10 * q.wait_timeout;
  *p = q;
  return 1;
}

double *faultcfg_slowdown(const scenario *sc, size_t n_hosts)
{
  double f, s;
  if (algorithm_find(sc->run.algorithm)->own_stragglers || scenario_stragglers(sc->faults.stragglers, &f, &s) != 0 ||
      f <= 0)
    return NULL;
  size_t W = faultcfg_workers(sc, n_hosts);
  size_t k = (size_t)(f * (double)W + 0.5);
  k = k == 0 ? 1 : k > W ? W : k;
  size_t *idx = xbt_malloc(W * sizeof(size_t)), *pick = xbt_malloc(k * sizeof(size_t));
  for (size_t i = 0; i < W; i++)
    idx[i] = i;
  gsl_rng *rng = rng_create(sc->run.seed, RNG_ROLE_STRAGGLER, 0);
  gsl_ran_choose(rng, pick, k, idx, W, sizeof(size_t)); /* as sandblaster's pick_stragglers */
  gsl_rng_free(rng);
  double *slow = xbt_malloc(n_hosts * sizeof(double));
  for (size_t i = 0; i < n_hosts; i++)
    slow[i] = 1.0;
  for (size_t i = 0; i < k; i++)
    slow[pick[i]] = s;
  xbt_free(idx);
  xbt_free(pick);
  return slow;
}

/* consensus_rounds.c - the mixing weights of each round of distributed subgradient
 * consensus (Nedic and Ozdaglar, IEEE TAC 2009): one doubly-stochastic matrix of a fixed
 * graph, or each round's weights of the active subgraph of a time-varying graph
 * (graph_tv, every edge active at least once every B rounds), generated once per round
 * for all agents so that an edge is active for both of its ends. */
#include "algorithms/consensus_impl.h"

#include <simgrid/mutex.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "models/rng.h"

static void round_put(round_w *w, size_t *e, size_t j, double a)
{
  w->idx[*e] = j;
  w->a[*e] = a;
  ++*e;
}

/* The rows of W over g's edges and the diagonal, agents ascending. */
static round_w *round_from(const gsl_matrix *W, const graph *g)
{
  size_t m = graph_n(g), len = m + 2 * graph_n_edges(g), e = 0;
  round_w *w = xbt_malloc0(sizeof(*w));
  w->start = xbt_malloc((m + 1) * sizeof(size_t));
  w->idx = xbt_malloc(len * sizeof(size_t));
  w->a = xbt_malloc(len * sizeof(double));
  for (size_t i = 0; i < m; i++) {
    const size_t *nb = graph_neighbors(g, i);
    size_t deg = graph_degree(g, i), k = 0;
    w->start[i] = e;
    for (; k < deg && nb[k] < i; k++)
      round_put(w, &e, nb[k], gsl_matrix_get(W, i, nb[k]));
    round_put(w, &e, i, gsl_matrix_get(W, i, i));
    for (; k < deg; k++)
      round_put(w, &e, nb[k], gsl_matrix_get(W, i, nb[k]));
  }
  w->start[m] = e;
  return w;
}

static void round_free(round_w *w)
{
  if (w == NULL)
    return;
  xbt_free(w->start);
  xbt_free(w->idx);
  xbt_free(w->a);
  xbt_free(w);
}


void consensus_schedule_init(schedule *s, const run_config *cfg, const consensus_setup *p)
{
  memset(s, 0, sizeof(*s));
  s->m = p->agents;
  if (p->W != NULL) {
    s->fixed = round_from(p->W, p->g);
    return;
  }
  s->tv = graph_tv_create(p->g, p->q, p->interval);
  xbt_assert(s->tv != NULL, "time-varying graph with q = %g and B = %zu", p->q, p->interval);
  s->rng = rng_create(cfg->seed, RNG_ROLE_LINK, 0);
  s->rule = p->rule;
  s->Wk = gsl_matrix_alloc(s->m, s->m);
  s->mu = sg_mutex_init();
}

void consensus_schedule_free(schedule *s)
{
  round_free(s->fixed);
  for (size_t k = 0; k < s->n; k++)
    round_free(s->rounds[k]);
  xbt_free(s->rounds);
  graph_tv_free(s->tv);
  if (s->rng)
    gsl_rng_free(s->rng);
  if (s->Wk)
    gsl_matrix_free(s->Wk);
  if (s->mu)
    sg_mutex_destroy(s->mu);
}

/* Round k's weights. Time-varying rounds are drawn in round order from one stream,
 * whichever agent asks first, so every agent sees the same round k. */
const round_w *consensus_schedule_round(schedule *s, long k)
{
  if (s->fixed)
    return s->fixed;
  sg_mutex_lock(s->mu);
  while (s->n <= (size_t)k) {
    const graph *active = graph_tv_next(s->tv, s->rng);
    char why[256];
    graph_weights(active, s->rule, s->Wk);
    xbt_assert(graph_check_doubly_stochastic(s->Wk, active, 1e-12, why, sizeof(why)) == 0, "round %zu: %s", s->n,
               why);
    if (s->n == s->cap) {
      s->cap = s->cap ? 2 * s->cap : 64;
      s->rounds = xbt_realloc(s->rounds, s->cap * sizeof(round_w *));
    }
    s->rounds[s->n++] = round_from(s->Wk, active);
  }
  const round_w *w = s->rounds[k];
  sg_mutex_unlock(s->mu);
  xbt_assert(w != NULL, "round %ld asked for after every agent was done with it", k);
  return w;
}

void consensus_schedule_done(schedule *s, long k)
{
  if (s->fixed)
    return;
  sg_mutex_lock(s->mu);
  if (++s->rounds[k]->users == s->m) {
    round_free(s->rounds[k]);
    s->rounds[k] = NULL;
  }
  sg_mutex_unlock(s->mu);
}

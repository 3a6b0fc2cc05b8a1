/* consensus.c - distributed subgradient consensus over real messages.
 *
 * Agent i repeats, for k = 0, 1, ... (Nedic and Ozdaglar, IEEE TAC 2009):
 *   send_state           x_i(k) to every neighbour j whose edge is active in round k
 *   compute_subgradient  d_i(k), a subgradient of f_i at x_i(k), while the values travel
 *   receive_neighbours   sync: x_j(k) from every active neighbour j;
 *                        async: whatever values have arrived, the latest from each j
 *   mix                  v_i = sum_j a_ij(k) x_j over j = i and the active neighbours
 *   subgradient_step     x_i(k+1) = v_i - alpha(k) d_i(k)
 * Every x_i(0) is 0. The weights a_ij(k) are one doubly-stochastic matrix for a fixed
 * graph, or each round's weights of the active subgraph of a time-varying graph
 * (graph_tv), generated once per round for all agents, so that an edge is active for
 * both of its ends: the exchange is symmetric, as the paper's doubly-stochastic case
 * needs.
 *
 * Sync mode keeps rounds: an agent mixes only once it has every active neighbour's
 * round-k value, and keeps a value that arrives from a neighbour already in a later
 * round for that round. Async mode never waits: each agent mixes with the latest value
 * received from each active neighbour (x_j(0) = 0 until one arrives), so how stale it
 * is comes from simulated compute and network time; staleness = k minus the value's
 * round (0 if the neighbour is ahead) is recorded for every value mixed (all 0 in
 * sync mode).
 *
 * Async messages are taken by a second actor per agent, its inbox (inbox_actor), which
 * receives with blocking calls and keeps the newest value of each neighbour; at
 * receive_neighbours the agent takes those kept so far, that is every value that has
 * arrived. The agent itself never polls a receive: in SimGrid 3.32 a comm that
 * sg_comm_test finds done stays in its actor's activity list for the actor's lifetime
 * (CommImpl::finish removes it only for a simcall waiting on it), and every
 * sg_actor_execute removes its exec from that list with a linear scan
 * (ExecImpl::post), so polling made each iteration cost O(values received so far)
 * and a run O(n^2) in its length. (sg_comm_wait_any_for with timeout 0 is no way out:
 * when it times out, 3.32's C wrapper drops a reference to every comm it was given,
 * freeing the pending receive under the caller.)
 *
 * Measurements: sync mode measures after every round r, when all x_i(r) are known,
 * from a per-round slot array that each agent deposits its state into; the last to
 * deposit measures. Async mode uses the shared evaluator (eval.c) every run.eval_every
 * simulated seconds, which copies every agent's state under its lock. Both reduce in
 * rank order, so that the sum does not depend on arrival order. An agent's state for a
 * measurement is x_i(k), the sum of its earlier iterates x_i(0..k-1) and k: the running
 * average xhat_i(k) = (1/k) sum_{h<k} x_i(h) is the estimate Nedic and Ozdaglar's rate
 * bounds (Section IV) speak of, so a measurement gives the gap of the mean of the
 * iterates, of the mean of the running averages, and the worst agent's of both. The
 * running sum is bookkeeping for the measurements, not part of the method: it costs no
 * simulated time. */
#include "algorithms/consensus.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/mutex.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/compute.h"
#include "algorithms/eval.h"
#include "algorithms/consensus_msg.h"
#include "models/rng.h"

/* One round's mixing weights, row by row: agent i mixes with weight a[e] the value of
 * agent idx[e], for e in [start[i], start[i+1]), agents ascending, i itself included. */
typedef struct round_w {
  size_t *start;
  size_t *idx;
  double *a;
  size_t users; /* agents done with the round (time-varying graphs free it after the last) */
} round_w;

/* The weights of every round: one fixed round_w, or rounds of a time-varying graph
 * generated in order, on demand, by whichever agent first needs one. */
typedef struct schedule {
  size_t m;
  round_w *fixed;
  graph_tv *tv;
  gsl_rng *rng;
  graph_wrule rule;
  gsl_matrix *Wk;    /* scratch: the weights of the round being generated */
  round_w **rounds;  /* [k]: round k, NULL once every agent is done with it */
  size_t n, cap;
  sg_mutex_t mu;
} schedule;

/* What a measurement reads of one agent, STATE_LEN(dim) doubles: x_i(k), then
 * sum_{h<k} x_i(h), then k. */
#define STATE_LEN(dim) (2 * (dim) + 1)

/* Sync: the states of round r deposited so far (agent i's at i * STATE_LEN(dim)). */
typedef struct open_round {
  long r; /* -1: free */
  size_t count;
  double *x;
} open_round;

/* Async: what an agent's inbox actor has received. The inbox actor writes it under
 * mu; the agent takes the fresh values under mu. */
typedef struct inbox {
  sg_mutex_t mu;
  double *newest;       /* [p * dim]: the newest value received from neighbour nb[p] */
  long *newest_step;    /* [p]: its round */
  int *fresh;           /* [p]: newest changed since the agent last took it */
  long *received;       /* [p]: values received from nb[p] */
  long *announced;      /* [p]: values nb[p] says it sent, once it is done */
  int *done;            /* [p]: nb[p] is done */
} inbox;

typedef struct agent {
  struct consensus *c;
  size_t rank;
  sg_mailbox_t mbox;
  const size_t *nb;     /* neighbours in the union graph, ascending */
  size_t deg;
  gsl_vector *x, *v, *d; /* x_i(k), the mixed value, the subgradient */
  gsl_vector *xsum;     /* sum_{h<k} x_i(h), for the measurements' running averages */
  double *latest;       /* [p * dim]: the latest value of neighbour nb[p] the agent has */
  long *latest_step;    /* [p]: its round */
  long *sent;           /* [p]: values sent to nb[p] */
  int *nb_done;         /* [p]: async: nb[p] was done when the agent last took its inbox */
  consensus_state_msg **early; /* sync: values of rounds the agent has not reached yet */
  size_t n_early, cap_early;
  inbox in;             /* async */
  sg_mutex_t mu;        /* guards x, xsum and k_done against the async evaluator */
  long k_done;          /* iterations completed */
  metrics_slot *slot;
} agent;

struct consensus {
  const run_config *cfg;
  const consensus_setup *p;
  size_t m, dim, rows;
  metrics *met;
  agent *agents;
  schedule sched;
  sg_bar_t ready;       /* every mailbox has its receiver before any value is sent (sync: the
                           agents wait; async: the agents and their inbox actors) */
  eval_ctl *eval;       /* async mode */
  sg_mutex_t mu;        /* sync: open rounds, the stop decision, the trace */
  open_round *open;
  size_t n_open;
  long started;         /* sync: rounds started by the furthest agent */
  long stop_at;         /* sync: rounds < stop_at run; -1: not decided */
  int stop;             /* sync: divergence seen */
  long snap_iteration;  /* async: iteration of the evaluator's snapshot */
  consensus_point *trace;
  size_t n_trace, cap_trace;
  gsl_vector *xbar, *diff, *yhat, *xhat;
};

static const char *step_names[] = {"constant", "harmonic", "sqrt"};

size_t consensus_hosts_needed(const consensus_setup *p) { return p->agents; }
size_t consensus_metrics_slots(const consensus_setup *p) { return p->agents; }

int consensus_step_parse(const char *s, consensus_step *rule)
{
  for (int i = CONSENSUS_STEP_CONSTANT; i <= CONSENSUS_STEP_SQRT; i++)
    if (strcmp(s, step_names[i]) == 0) {
      *rule = (consensus_step)i;
      return 0;
    }
  return -1;
}

const char *consensus_step_name(consensus_step rule)
{
  xbt_assert((unsigned)rule <= CONSENSUS_STEP_SQRT, "unknown step rule %d", (int)rule);
  return step_names[rule];
}

/* ---- costs ------------------------------------------------------------------ */

/* One subgradient of f_i: two passes over the agent's rows x dim shard, the residuals
 * A x and then A^T s, each a multiply and an add per entry (as the cost model counts a dense
 * layer); the ridge term's 2 dim flops are left out. */
static double subgradient_flops(const consensus *c)
{
  return 4.0 * (double)c->rows * (double)c->dim;
}

/* Mixing n values (a multiply and an add per element each) and the step (another). */
static double mix_flops(const consensus *c, size_t n)
{
  return 2.0 * (double)c->dim * (double)(n + 1);
}

static double step_size(const consensus_setup *p, long k)
{
  switch (p->step_rule) {
  case CONSENSUS_STEP_CONSTANT: return p->alpha0;
  case CONSENSUS_STEP_HARMONIC: return p->alpha0 / (double)(k + 1);
  case CONSENSUS_STEP_SQRT: return p->alpha0 / sqrt((double)(k + 1));
  }
  xbt_die("unknown step rule %d", (int)p->step_rule);
}

/* ---- the weights of each round ------------------------------------------------ */

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

static size_t row_len(const round_w *w, size_t i)
{
  return w->start[i + 1] - w->start[i];
}

static void schedule_init(schedule *s, const run_config *cfg, const consensus_setup *p)
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

static void schedule_free(schedule *s)
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
static const round_w *schedule_round(schedule *s, long k)
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

static void schedule_done(schedule *s, long k)
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

/* ---- measurements ---------------------------------------------------------------- */

/* F(x) - f*, F summed in agent order. */
static double gap_at(const consensus *c, const gsl_vector *x)
{
  double F;
  objective_sum_value(c->m, c->p->fs, x, &F);
  return F - c->p->fstar;
}

/* Agent i's running average xhat_i(k) = (1/k) sum_{h<k} x_i(h) from its state st into
 * out; x_i(0) itself at k = 0, before there is anything to average. */
static void running_average(size_t dim, const double *st, gsl_vector *out)
{
  double k = st[2 * dim];
  if (k < 1) {
    memcpy(out->data, st, dim * sizeof(double));
    return;
  }
  memcpy(out->data, st + dim, dim * sizeof(double));
  gsl_vector_scale(out, 1.0 / k);
}

/* Measures the agents' states st (agent i's at i * STATE_LEN(dim)) and appends the
 * point; returns the optimality gap. Sums go in rank order. */
static double record_point(consensus *c, long iteration, const double *st)
{
  size_t m = c->m, dim = c->dim, len = STATE_LEN(dim);
  gsl_vector_set_zero(c->xbar);
  gsl_vector_set_zero(c->yhat);
  for (size_t i = 0; i < m; i++) {
    gsl_vector_const_view xi = gsl_vector_const_view_array(st + i * len, dim);
    gsl_vector_add(c->xbar, &xi.vector);
    running_average(dim, st + i * len, c->xhat);
    gsl_vector_add(c->yhat, c->xhat);
  }
  gsl_vector_scale(c->xbar, 1.0 / (double)m);
  gsl_vector_scale(c->yhat, 1.0 / (double)m);
  double err = 0, worst = -INFINITY, worst_avg = -INFINITY;
  for (size_t i = 0; i < m; i++) {
    memcpy(c->diff->data, st + i * len, dim * sizeof(double));
    double g = gap_at(c, c->diff);
    worst = g > worst ? g : worst;
    gsl_vector_sub(c->diff, c->xbar);
    double e = gsl_blas_dnrm2(c->diff);
    err = e > err ? e : err;
    running_average(dim, st + i * len, c->xhat);
    g = gap_at(c, c->xhat);
    worst_avg = g > worst_avg ? g : worst_avg;
  }
  if (c->n_trace == c->cap_trace) {
    c->cap_trace = c->cap_trace ? 2 * c->cap_trace : 256;
    c->trace = xbt_realloc(c->trace, c->cap_trace * sizeof(*c->trace));
  }
  double gap = gap_at(c, c->xbar);
  c->trace[c->n_trace++] = (consensus_point){.iteration = iteration, .sim_time = simgrid_get_clock(),
                                             .consensus_error = err, .optimality_gap = gap,
                                             .ergodic_gap = gap_at(c, c->yhat), .agent_gap_max = worst,
                                             .agent_ergodic_gap_max = worst_avg};
  return gap;
}

/* An agent's state for a measurement into dst (STATE_LEN(dim) doubles); the caller
 * holds what guards it. */
static void state_copy(const agent *a, double *dst)
{
  size_t dim = a->c->dim;
  memcpy(dst, a->x->data, dim * sizeof(double));
  memcpy(dst + dim, a->xsum->data, dim * sizeof(double));
  dst[2 * dim] = (double)a->k_done;
}

/* Sync: the last agent to deposit round r records it, as the evaluator would. */
static void measure_round(consensus *c, long r, const double *x)
{
  const run_config *cfg = c->cfg;
  double now = simgrid_get_clock(), gap = record_point(c, r, x);
  long steps = r * (long)c->m;
  metrics_record_eval(c->met, now, steps, gap, NAN);
  if (cfg->on_eval)
    cfg->on_eval(cfg->on_eval_ctx, now, steps, gap, NAN);
  if (!isfinite(gap)) {
    metrics_set_status(c->met, METRICS_DIVERGED);
    c->stop = 1;
  }
}

/* Round r's slot, opened on first use (agents may be rounds apart). */
static open_round *open_round_at(consensus *c, long r)
{
  open_round *free_slot = NULL;
  for (size_t i = 0; i < c->n_open; i++) {
    if (c->open[i].r == r)
      return &c->open[i];
    if (c->open[i].r < 0 && free_slot == NULL)
      free_slot = &c->open[i];
  }
  if (free_slot == NULL) {
    c->open = xbt_realloc(c->open, (c->n_open + 1) * sizeof(*c->open));
    free_slot = &c->open[c->n_open++];
    free_slot->x = xbt_malloc(c->m * STATE_LEN(c->dim) * sizeof(double));
  }
  free_slot->r = r;
  free_slot->count = 0;
  return free_slot;
}

/* Sync: deposits agent i's state of round r; the last of the m agents measures the
 * round and frees it. */
static void deposit_state(agent *a, long r)
{
  consensus *c = a->c;
  sg_mutex_lock(c->mu);
  open_round *o = open_round_at(c, r);
  state_copy(a, o->x + a->rank * STATE_LEN(c->dim));
  if (++o->count == c->m) {
    measure_round(c, r, o->x);
    o->r = -1;
  }
  sg_mutex_unlock(c->mu);
}

/* Async evaluator: copies every agent's state, each under its agent's lock. */
static void snapshot(void *ctx, gsl_vector *w)
{
  consensus *c = ctx;
  long done = 0;
  for (size_t i = 0; i < c->m; i++) {
    agent *a = &c->agents[i];
    sg_mutex_lock(a->mu);
    state_copy(a, w->data + i * STATE_LEN(c->dim));
    done += a->k_done;
    sg_mutex_unlock(a->mu);
  }
  c->snap_iteration = done / (long)c->m;
}

static int measure(void *ctx, const gsl_vector *w, double *loss, double *accuracy)
{
  consensus *c = ctx;
  *loss = record_point(c, c->snap_iteration, w->data);
  *accuracy = NAN;
  return 0;
}

/* ---- messages ----------------------------------------------------------------------- */

/* Position of agent j among a's union neighbours. */
static size_t nbr_pos(const agent *a, size_t j)
{
  size_t lo = 0, hi = a->deg;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (a->nb[mid] < j)
      lo = mid + 1;
    else
      hi = mid;
  }
  xbt_assert(lo < a->deg && a->nb[lo] == j, "agent %zu: %zu is not a neighbour", a->rank, j);
  return lo;
}

/* Copies the iterate m carries into *x (dim values) and its round into *step, unless
 * *step is already later; returns whether it did. */
static int keep_newer(size_t dim, double *x, long *step, const consensus_state_msg *m)
{
  xbt_assert(m->dim == dim, "agent %d sent %zu values, not %zu", m->src, m->dim, dim);
  if (m->k < *step)
    return 0;
  memcpy(x, m->x, dim * sizeof(double));
  *step = m->k;
  return 1;
}

/* Sync: keeps an iterate as its sender's latest; frees the message. */
static void keep_value(agent *a, consensus_state_msg *m)
{
  size_t p = nbr_pos(a, (size_t)m->src), dim = a->c->dim;
  keep_newer(dim, a->latest + p * dim, &a->latest_step[p], m);
  msg_free(m);
}

/* Async, in the inbox actor: a neighbour's iterate. */
static void inbox_keep_state(agent *a, const consensus_state_msg *m)
{
  inbox *in = &a->in;
  size_t p = nbr_pos(a, (size_t)m->src), dim = a->c->dim;
  sg_mutex_lock(in->mu);
  in->received[p]++;
  if (keep_newer(dim, in->newest + p * dim, &in->newest_step[p], m))
    in->fresh[p] = 1;
  sg_mutex_unlock(in->mu);
}

/* Async, in the inbox actor: a neighbour has stopped, after `sent` iterates to us. */
static void inbox_keep_done(agent *a, const consensus_done_msg *m)
{
  inbox *in = &a->in;
  size_t p = nbr_pos(a, (size_t)m->src);
  sg_mutex_lock(in->mu);
  in->done[p] = 1;
  in->announced[p] = m->sent;
  sg_mutex_unlock(in->mu);
}

/* Async, in the inbox actor: an iterate or a done notice; frees the message. */
static void inbox_keep(agent *a, msg *m)
{
  if (m->kind == CONSENSUS_MSG_STATE)
    inbox_keep_state(a, consensus_state_msg_of(m));
  else
    inbox_keep_done(a, consensus_done_msg_of(m));
  msg_free(m);
}

/* Async, in the inbox actor: more messages will come (a neighbour is not done, or some
 * of its values are still on their way). The inbox actor is the only writer of these
 * counts, so it reads them without the lock. */
static int expecting(const agent *a)
{
  for (size_t p = 0; p < a->deg; p++)
    if (!a->in.done[p] || a->in.received[p] < a->in.announced[p])
      return 1;
  return 0;
}

/* Async: takes from the inbox every value that has arrived since the last take, and
 * which neighbours are done. */
static void inbox_take(agent *a)
{
  inbox *in = &a->in;
  size_t dim = a->c->dim;
  sg_mutex_lock(in->mu);
  for (size_t p = 0; p < a->deg; p++) {
    if (in->fresh[p]) {
      memcpy(a->latest + p * dim, in->newest + p * dim, dim * sizeof(double));
      a->latest_step[p] = in->newest_step[p];
      in->fresh[p] = 0;
    }
    a->nb_done[p] = in->done[p];
  }
  sg_mutex_unlock(in->mu);
}

/* Sync: takes the kept values of round k; returns how many. */
static size_t take_early(agent *a, long k)
{
  size_t got = 0, kept = 0;
  for (size_t e = 0; e < a->n_early; e++) {
    if (a->early[e]->k == k) {
      keep_value(a, a->early[e]);
      got++;
    } else {
      a->early[kept++] = a->early[e];
    }
  }
  a->n_early = kept;
  return got;
}

static void keep_early(agent *a, consensus_state_msg *m)
{
  if (a->n_early == a->cap_early) {
    a->cap_early = a->cap_early ? 2 * a->cap_early : 4;
    a->early = xbt_realloc(a->early, a->cap_early * sizeof(consensus_state_msg *));
  }
  a->early[a->n_early++] = m;
}

/* ---- steps of an agent ------------------------------------------------------------- */

/* Sync mode decides when to stop for all agents at once: the first agent to find the
 * step limit, the time limit or a divergence fixes the end at the furthest round any
 * agent has started, so none waits for a neighbour that has left. Async agents stop on
 * their own. */
static int goes_on(agent *a, long k)
{
  consensus *c = a->c;
  const run_config *cfg = c->cfg;
  if (c->p->async)
    return k < cfg->max_steps && !eval_should_stop(c->eval);
  sg_mutex_lock(c->mu);
  if (c->stop_at < 0 && (c->stop || k >= cfg->max_steps || simgrid_get_clock() >= cfg->max_sim_time))
    c->stop_at = c->started > k ? c->started : k;
  int go = c->stop_at < 0 || k < c->stop_at;
  if (go && k + 1 > c->started)
    c->started = k + 1;
  sg_mutex_unlock(c->mu);
  return go;
}

/* Nedic-Ozdaglar: x_i(k) goes to every neighbour j with a_ji(k) in use (an async agent
 * skips neighbours that are done). */
static void send_state(agent *a, const round_w *w, long k)
{
  consensus *c = a->c;
  for (size_t e = w->start[a->rank]; e < w->start[a->rank + 1]; e++) {
    size_t j = w->idx[e];
    if (j == a->rank)
      continue;
    size_t p = nbr_pos(a, j);
    if (c->p->async && a->nb_done[p])
      continue;
    consensus_state_msg *m = consensus_state_msg_create((int)a->rank, k, c->dim);
    memcpy(m->x, a->x->data, c->dim * sizeof(double));
    msg_send(c->agents[j].mbox, c->cfg->hosts[j], &m->hdr, msg_bytes((double)c->dim, c->cfg->elem_bytes));
    a->sent[p]++;
  }
}

/* d_i(k) in the subdifferential of f_i at x_i(k) (objective.h picks the element). */
static void compute_subgradient(agent *a)
{
  consensus *c = a->c;
  objective_subgrad(c->p->fs[a->rank], a->x, a->d);
  compute_execute(c->cfg, subgradient_flops(c));
}

/* Sync: every active neighbour's x_j(k); async: what has arrived. */
static void receive_neighbours(agent *a, const round_w *w, long k)
{
  if (a->c->p->async) {
    inbox_take(a);
    return;
  }
  size_t need = row_len(w, a->rank) - 1, got = take_early(a, k);
  while (got < need) {
    consensus_state_msg *m = consensus_state_msg_of(msg_recv(a->mbox));
    xbt_assert(m->k >= k, "agent %zu in round %ld got the iterate of round %ld", a->rank, k, m->k);
    if (m->k == k) {
      keep_value(a, m);
      got++;
    } else {
      keep_early(a, m);
    }
  }
}

/* v_i = sum_j a_ij(k) x_j, j ascending; records each neighbour value's staleness. */
static void mix(agent *a, const round_w *w, long k)
{
  consensus *c = a->c;
  gsl_vector_set_zero(a->v);
  for (size_t e = w->start[a->rank]; e < w->start[a->rank + 1]; e++) {
    size_t j = w->idx[e];
    const double *xj = a->x->data;
    if (j != a->rank) {
      size_t p = nbr_pos(a, j);
      xj = a->latest + p * c->dim;
      metrics_slot_staleness(a->slot, k > a->latest_step[p] ? k - a->latest_step[p] : 0);
    }
    gsl_vector_const_view xv = gsl_vector_const_view_array(xj, c->dim);
    gsl_blas_daxpy(w->a[e], &xv.vector, a->v);
  }
}

/* x_i(k+1) = v_i - alpha(k) d_i(k); x_i(k) joins the running sum. */
static void subgradient_step(agent *a, const round_w *w, long k)
{
  consensus *c = a->c;
  compute_execute(c->cfg, mix_flops(c, row_len(w, a->rank)));
  sg_mutex_lock(a->mu);
  gsl_vector_add(a->xsum, a->x);
  gsl_vector_memcpy(a->x, a->v);
  gsl_blas_daxpy(-step_size(c->p, k), a->d, a->x);
  a->k_done = k + 1;
  sg_mutex_unlock(a->mu);
}

/* Counts the iteration; sync: deposits x_i(k+1) for round k+1's measurement. */
static void record_state(agent *a, long k)
{
  a->slot->steps++;
  if (a->c->p->async)
    eval_step_done(a->c->eval);
  else
    deposit_state(a, k + 1);
}

/* Async: tells every neighbour how many values it sent, so that its inbox actor knows
 * when it has them all. Sync needs no such end: every value sent was for a round its
 * receiver ran. */
static void say_done(agent *a)
{
  consensus *c = a->c;
  if (!c->p->async) {
    xbt_assert(a->n_early == 0, "agent %zu ends with %zu values of later rounds", a->rank, a->n_early);
    return;
  }
  eval_finished(c->eval);
  for (size_t p = 0; p < a->deg; p++) {
    consensus_done_msg *m = consensus_done_msg_create((int)a->rank, a->sent[p]);
    msg_send(c->agents[a->nb[p]].mbox, c->cfg->hosts[a->nb[p]], &m->hdr, MSG_HEADER_BYTES);
  }
}

static void agent_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  agent *a = sg_actor_self_get_data();
  consensus *c = a->c;
  if (!c->p->async)
    sg_mailbox_set_receiver(sg_mailbox_get_name(a->mbox)); /* values travel as they are sent */
  sg_barrier_wait(c->ready);
  for (long k = 0; goes_on(a, k); k++) {
    const round_w *w = schedule_round(&c->sched, k);
    send_state(a, w, k);
    compute_subgradient(a);
    receive_neighbours(a, w, k);
    mix(a, w, k);
    subgradient_step(a, w, k);
    schedule_done(&c->sched, k);
    record_state(a, k);
  }
  say_done(a);
}

/* Async: agent i's receiving side. It receives every message sent to agent i, each with
 * a blocking receive (which SimGrid drops from its activity list once done), and keeps
 * the newest value of each neighbour for the agent to take; it ends once every
 * neighbour is done and all of that neighbour's values are in, so no send is left
 * unmatched. */
static void inbox_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  agent *a = sg_actor_self_get_data();
  sg_mailbox_set_receiver(sg_mailbox_get_name(a->mbox)); /* values travel as they are sent */
  sg_barrier_wait(a->c->ready);
  while (expecting(a))
    inbox_keep(a, msg_recv(a->mbox));
}

/* ---- set-up ---------------------------------------------------------------------------- */

/* n neighbour slots of dim values each (x_j(0) = 0, round 0). */
static void inbox_init(inbox *in, size_t n, size_t dim)
{
  in->mu = sg_mutex_init();
  in->newest = xbt_malloc0(n * dim * sizeof(double));
  in->newest_step = xbt_malloc0(n * sizeof(long));
  in->fresh = xbt_malloc0(n * sizeof(int));
  in->received = xbt_malloc0(n * sizeof(long));
  in->announced = xbt_malloc0(n * sizeof(long));
  in->done = xbt_malloc0(n * sizeof(int));
}

/* Frees what inbox_init allocated; a zeroed inbox (sync mode) is a no-op. */
static void inbox_release(inbox *in)
{
  if (in->mu == NULL)
    return;
  sg_mutex_destroy(in->mu);
  xbt_free(in->newest);
  xbt_free(in->newest_step);
  xbt_free(in->fresh);
  xbt_free(in->received);
  xbt_free(in->announced);
  xbt_free(in->done);
}

static void agent_init(consensus *c, agent *a, size_t i)
{
  size_t dim = c->dim;
  a->c = c;
  a->rank = i;
  a->mbox = mbox_of("agent", (int)i);
  a->nb = graph_neighbors(c->p->g, i);
  a->deg = graph_degree(c->p->g, i);
  a->x = gsl_vector_calloc(dim);
  a->v = gsl_vector_calloc(dim);
  a->d = gsl_vector_calloc(dim);
  a->xsum = gsl_vector_calloc(dim);
  size_t n = a->deg ? a->deg : 1;
  a->latest = xbt_malloc0(n * dim * sizeof(double));
  a->latest_step = xbt_malloc0(n * sizeof(long));
  a->sent = xbt_malloc0(n * sizeof(long));
  a->nb_done = xbt_malloc0(n * sizeof(int));
  a->mu = sg_mutex_init();
  a->slot = metrics_slot_at(c->met, i);
  if (c->p->async)
    inbox_init(&a->in, n, dim);
}

static void agent_release(agent *a)
{
  gsl_vector_free(a->x);
  gsl_vector_free(a->v);
  gsl_vector_free(a->d);
  gsl_vector_free(a->xsum);
  xbt_free(a->latest);
  xbt_free(a->latest_step);
  xbt_free(a->sent);
  xbt_free(a->nb_done);
  inbox_release(&a->in);
  for (size_t e = 0; e < a->n_early; e++)
    msg_free(a->early[e]);
  xbt_free(a->early);
  sg_mutex_destroy(a->mu);
}

/* Starts fn as "role-i" on agent i's host, with agent i as its data. */
static void start_actor(consensus *c, const char *role, size_t i, void (*fn)(int, char **))
{
  char name[32];
  mbox_name(name, sizeof(name), role, (int)i);
  sg_actor_t actor = sg_actor_init(name, c->cfg->hosts[i]);
  sg_actor_set_data(actor, &c->agents[i]);
  sg_actor_start(actor, fn, 0, NULL);
}

consensus *consensus_deploy(const run_config *cfg, const consensus_setup *p, metrics *m)
{
  if (cfg->n_hosts < consensus_hosts_needed(p) || cfg->max_steps <= 0 || !cfg->numerics || p->agents == 0)
    return NULL;
  consensus *c = xbt_malloc0(sizeof(*c));
  c->cfg = cfg;
  c->p = p;
  c->m = p->agents;
  c->dim = objective_dim(p->fs[0]);
  c->rows = objective_rows(p->fs[0]);
  c->met = m;
  c->mu = sg_mutex_init();
  c->stop_at = -1;
  c->xbar = gsl_vector_calloc(c->dim);
  c->diff = gsl_vector_calloc(c->dim);
  c->yhat = gsl_vector_calloc(c->dim);
  c->xhat = gsl_vector_calloc(c->dim);
  schedule_init(&c->sched, cfg, p);
  c->ready = sg_barrier_init((unsigned)(p->async ? 2 * c->m : c->m));
  c->agents = xbt_malloc0(c->m * sizeof(agent));
  for (size_t i = 0; i < c->m; i++)
    agent_init(c, &c->agents[i], i);
  double *st0 = xbt_malloc0(c->m * STATE_LEN(c->dim) * sizeof(double));
  metrics_record_eval(m, 0.0, 0, record_point(c, 0, st0), NAN); /* every x_i(0) = 0, k = 0 */
  xbt_free(st0);
  if (p->async) {
    c->eval = eval_ctl_create(cfg, m, (int)c->m, snapshot, c);
    eval_set_snapshot_size(c->eval, c->m * STATE_LEN(c->dim));
    eval_set_measure(c->eval, measure, c);
  }
  for (size_t i = 0; i < c->m; i++)
    start_actor(c, "agent", i, agent_actor);
  for (size_t i = 0; i < c->m && p->async; i++)
    start_actor(c, "inbox", i, inbox_actor);
  if (c->eval)
    eval_start(c->eval, cfg->hosts[0]);
  return c;
}

void consensus_free(consensus *c)
{
  if (c == NULL)
    return;
  for (size_t i = 0; i < c->m; i++)
    agent_release(&c->agents[i]);
  xbt_free(c->agents);
  for (size_t i = 0; i < c->n_open; i++)
    xbt_free(c->open[i].x);
  xbt_free(c->open);
  schedule_free(&c->sched);
  sg_barrier_destroy(c->ready);
  eval_ctl_free(c->eval);
  sg_mutex_destroy(c->mu);
  gsl_vector_free(c->xbar);
  gsl_vector_free(c->diff);
  gsl_vector_free(c->yhat);
  gsl_vector_free(c->xhat);
  xbt_free(c->trace);
  xbt_free(c);
}

size_t consensus_trace(const consensus *c, const consensus_point **points)
{
  *points = c->trace;
  return c->n_trace;
}

/* ---- the descriptor: run.algorithm = consensus --------------------------------- */

static int check_topology(const char *v, char *why, size_t len)
{
  return key_check_name_or_file(v, "ring|grid|torus|complete|star|erdos-renyi|geometric", "edgelist:", "a topology",
                                "ring, grid, torus, complete, star, erdos-renyi, geometric or edgelist:PATH", why, len);
}

static int check_weights(const char *v, char *why, size_t len)
{
  return key_check_name_or_file(v, "metropolis|lazy-metropolis|max-degree|uniform", "matrix:", "a weight rule",
                                "metropolis, lazy-metropolis, max-degree, uniform or matrix:PATH", why, len);
}

static const key_spec consensus_keys[] = {
  {"consensus", "agents", KEY_SIZE, KEY_FIELD(consensus_params, agents), .def = "8", .unit = "agents",
   .doc = "Agents m, agent i on host i, each with its own objective f_i on its own data shard.",
   KEY_GE(1), KEY_LE(100000)},
  {"consensus", "topology", KEY_STR, KEY_FIELD(consensus_params, topology), .def = "ring", .unit = "",
   .doc = "Communication graph: `ring`, `grid` and `torus` (2-D, `grid_rows` rows), `complete`, "
          "`star` (agent 0 in the centre), `erdos-renyi` (G(m, p)), `geometric` (m points uniform in "
          "the unit square, joined within `radius`), or `edgelist:PATH` (lines `i j`, 0-based). Random "
          "graphs are drawn from `run.seed`; a disconnected graph is an error.",
   .check = check_topology, .paths = "edgelist:"},
  {"consensus", "grid_rows", KEY_LONG, KEY_FIELD(consensus_params, grid_rows), .def = "0", .unit = "agents",
   .doc = "`grid` and `torus`: rows of the lattice, which must divide `agents`; 0: the most square "
          "shape (the largest divisor of m up to sqrt(m)).",
   KEY_GE(0)},
  {"consensus", "p", KEY_DOUBLE, KEY_FIELD(consensus_params, er_p), .def = "0.5", .unit = "probability",
   .doc = "`erdos-renyi`: probability of each edge.", KEY_GE(0), KEY_LE(1)},
  {"consensus", "radius", KEY_DOUBLE, KEY_FIELD(consensus_params, radius), .def = "0.5", .unit = "",
   .doc = "`geometric`: two agents are neighbours when their points are at most this far apart.",
   KEY_GE(0)},
  {"consensus", "q", KEY_DOUBLE, KEY_FIELD(consensus_params, q), .def = "1", .unit = "probability",
   .doc = "Time-varying graph: each edge of the topology is active in a round with this "
          "probability (drawn from `run.seed`); 1: the fixed graph.",
   KEY_GE(0), KEY_LE(1)},
  {"consensus", "interval", KEY_SIZE, KEY_FIELD(consensus_params, interval), .def = "5", .unit = "rounds",
   .doc = "Time-varying graph: an edge inactive for `interval - 1` rounds is active in the next, so "
          "every edge is active at least once every `interval` rounds (Nedic-Ozdaglar's B).",
   KEY_GE(1)},
  {"consensus", "weights", KEY_STR, KEY_FIELD(consensus_params, weights), .def = "metropolis", .unit = "",
   .doc = "Mixing weights: `metropolis` (1/(1 + max(d_i, d_j)) on an edge), `lazy-metropolis` "
          "((I + Metropolis)/2: self-weights at least 1/2, as async runs and constant steps want; "
          "algorithms/README.md), `max-degree` (1/(1 + d_max)), `uniform` (1/(1 + d_i), regular "
          "graphs only), or `matrix:PATH` (m lines of m numbers). Each must be doubly stochastic "
          "within 1e-12 and zero off the graph's edges.",
   .check = check_weights, .paths = "matrix:"},
  {"consensus", "objective", KEY_CHOICE, KEY_FIELD(consensus_params, objective), .def = "least-squares", .unit = "",
   .doc = "Each agent's f_i on its shard (A_i, b_i): `least-squares` 1/2 ||A_i x - b_i||^2, `l1` "
          "||A_i x - b_i||_1, `hinge` sum_j max(0, 1 - b_j a_j.x); plus lambda/(2m) ||x||^2. The "
          "data is synthetic, drawn from `run.seed`.",
   .choices = "least-squares|l1|hinge"},
  {"consensus", "dim", KEY_LONG, KEY_FIELD(consensus_params, dim), .def = "10", .unit = "",
   .doc = "Dimension of x.", KEY_GE(1), KEY_LE(100000)},
  {"consensus", "rows", KEY_LONG, KEY_FIELD(consensus_params, rows), .def = "20", .unit = "rows",
   .doc = "Data rows in each agent's shard.", KEY_GE(1), KEY_LE(100000000)},
  {"consensus", "lambda", KEY_DOUBLE, KEY_FIELD(consensus_params, lambda), .def = "1", .unit = "",
   .doc = "Regularisation: the sum of the f_i carries lambda/2 ||x||^2, each agent lambda/m of it.",
   KEY_GE(0)},
  {"consensus", "step_rule", KEY_CHOICE, KEY_FIELD(consensus_params, step_rule), .def = "harmonic", .unit = "",
   .doc = "Step alpha(k) at an agent's iteration k: `constant` alpha0, `harmonic` alpha0/(k+1), "
          "`sqrt` alpha0/sqrt(k+1).",
   .choices = "constant|harmonic|sqrt"},
  {"consensus", "alpha0", KEY_DOUBLE, KEY_FIELD(consensus_params, alpha0), .def = "0.1", .unit = "",
   .doc = "Step size scale alpha0.", KEY_GT(0)},
  {"consensus", "mode", KEY_CHOICE, KEY_FIELD(consensus_params, async), .def = "sync", .unit = "",
   .doc = "`sync`: rounds, each agent waits for every neighbour's round-k value; `async`: each agent "
          "mixes the latest values that have arrived and never waits (measured every "
          "`run.eval_every`).",
   .choices = "sync|async"},
};

/* Combinations a consensus run cannot take. Whether the graph is connected and the
 * weights doubly stochastic is checked once they are built (prepare). */
static int validate(const scenario *sc, const void *params, char *why, size_t len)
{
  const consensus_params *p = params;
  int tv = p->q < 1, grid = strcmp(p->topology, "grid") == 0 || strcmp(p->topology, "torus") == 0;
  size_t nk = sizeof consensus_keys / sizeof consensus_keys[0];
  const char *unused = !grid && key_changed(consensus_keys, nk, p, "grid_rows")                     ? "grid_rows"
                       : strcmp(p->topology, "erdos-renyi") != 0 && key_changed(consensus_keys, nk, p, "p") ? "p"
                       : strcmp(p->topology, "geometric") != 0 && key_changed(consensus_keys, nk, p, "radius")
                           ? "radius"
                           : NULL;
  if (unused)
    snprintf(why, len, "consensus.%s: has no effect with consensus.topology = %s (grid_rows shapes grid and torus, p "
             "erdos-renyi, radius geometric)", unused, p->topology);
  else if (sc->run.max_steps == 0)
    snprintf(why, len, "run.max_steps: consensus runs a fixed number of iterations per agent: set it "
             "(run.max_sim_time also bounds a run)");
  else if (!sc->model.numerics)
    snprintf(why, len, "model.numerics: consensus always computes its iterates; timing-only runs are "
             "not available");
  else if (sc->run.target_accuracy > 0)
    snprintf(why, len, "run.target_accuracy: consensus has no accuracy to reach (its loss is the "
             "optimality gap)");
  else if (grid && p->grid_rows > 0 && p->agents % (size_t)p->grid_rows != 0)
    snprintf(why, len, "consensus.grid_rows: %ld rows do not divide %zu agents", p->grid_rows, p->agents);
  else if (tv && strncmp(p->weights, "matrix:", 7) == 0)
    snprintf(why, len, "consensus.weights: a fixed matrix cannot follow a time-varying graph "
             "(consensus.q = %g < 1); use metropolis, lazy-metropolis or max-degree", p->q);
  else if (tv && strcmp(p->weights, "uniform") == 0)
    snprintf(why, len, "consensus.weights: uniform weights are doubly stochastic only on regular "
             "graphs, which a time-varying graph's rounds are not (consensus.q = %g < 1)", p->q);
  else
    return 0;
  return -1;
}

static size_t hosts_needed(const scenario *sc, const void *params, const char **why)
{
  (void)sc;
  *why = "consensus.agents";
  return ((const consensus_params *)params)->agents;
}

typedef struct consensus_run {
  consensus_setup setup;
  graph *g;
  gsl_matrix *W;
  objective **fs;
  consensus *c;
} consensus_run;

/* Rows of a grid or torus over m agents: consensus.grid_rows, or the largest divisor of
 * m up to sqrt(m) (the most square shape; a prime m gives a path or a ring). */
static size_t lattice_rows(const consensus_params *p)
{
  size_t m = p->agents, r = 1;
  if (p->grid_rows > 0)
    return (size_t)p->grid_rows;
  for (size_t k = 1; k * k <= m; k++)
    if (m % k == 0)
      r = k;
  return r;
}

static graph *build_graph(const consensus_params *p, uint64_t seed, char *err, size_t len)
{
  size_t m = p->agents;
  const char *t = p->topology;
  if (strncmp(t, "edgelist:", 9) == 0)
    return graph_load_edgelist(t + 9, m, err, len);
  if (strcmp(t, "ring") == 0)
    return graph_ring(m);
  if (strcmp(t, "complete") == 0)
    return graph_complete(m);
  if (strcmp(t, "star") == 0)
    return graph_star(m);
  if (strcmp(t, "grid") == 0 || strcmp(t, "torus") == 0) {
    size_t r = lattice_rows(p);
    return t[0] == 'g' ? graph_grid2d(r, m / r) : graph_torus2d(r, m / r);
  }
  gsl_rng *r = rng_create(seed, RNG_ROLE_GRAPH, 0);
  graph *g = strcmp(t, "erdos-renyi") == 0 ? graph_erdos_renyi(m, p->er_p, r) : graph_geometric(m, p->radius, r, NULL);
  gsl_rng_free(r);
  return g;
}

/* The fixed weight matrix, checked doubly stochastic within 1e-12 on the graph; none
 * for a time-varying graph, whose rounds' weights come from a rule that is doubly
 * stochastic by construction (validate refuses uniform and matrices there). */
static int build_weights(const consensus_params *p, consensus_run *r, char *err, size_t len)
{
  size_t m = p->agents;
  char why[512];
  graph_wrule rule;
  if (strncmp(p->weights, "matrix:", 7) == 0) {
    r->W = graph_load_matrix(p->weights + 7, m, err, len);
    if (r->W == NULL)
      return -1;
  } else if (p->q < 1) {
    return 0;
  } else {
    xbt_assert(graph_wrule_parse(p->weights, &rule) == 0, "weights '%s' passed validation", p->weights);
    r->W = gsl_matrix_alloc(m, m);
    graph_weights(r->g, rule, r->W);
  }
  if (graph_check_doubly_stochastic(r->W, r->g, 1e-12, why, sizeof(why)) != 0) {
    snprintf(err, len, "consensus.weights: %s on this %s graph: %s", p->weights, p->topology, why);
    return -1;
  }
  return 0;
}

static void free_run(void *state);

/* The graph, its weights and the agents' synthetic objectives (objective_synthetic's
 * stream of run.seed) with the centralized reference f*, all checked before the run. */
static void *prepare(const run_config *cfg, char *err, size_t len)
{
  const consensus_params *p = algorithm_params(cfg->sc, &consensus_algorithm);
  size_t m = p->agents;
  consensus_run *r = xbt_malloc0(sizeof(*r));
  r->g = build_graph(p, cfg->seed, err, len);
  if (r->g == NULL) {
    free_run(r);
    return NULL;
  }
  if (!graph_is_connected(r->g)) {
    const char *hint = strcmp(p->topology, "erdos-renyi") == 0 ? " (drawn from run.seed: raise consensus.p or try another seed)"
                       : strcmp(p->topology, "geometric") == 0 ? " (drawn from run.seed: raise consensus.radius or try another seed)"
                                                               : "";
    snprintf(err, len, "consensus.topology: the %s graph on %zu agents is disconnected, and every agent must "
             "reach every other%s", p->topology, m, hint);
    free_run(r);
    return NULL;
  }
  if (build_weights(p, r, err, len) != 0) {
    free_run(r);
    return NULL;
  }
  r->fs = xbt_malloc0(m * sizeof(objective *));
  gsl_rng *rng = rng_create(cfg->seed, RNG_ROLE_DATA, 0);
  xbt_assert(objective_synthetic((objective_kind)p->objective, m, (size_t)p->dim, (size_t)p->rows, p->lambda, rng,
                                 r->fs) == 0, "consensus problem sizes passed validation");
  gsl_rng_free(rng);
  double fstar;
  gsl_vector *xstar = gsl_vector_alloc((size_t)p->dim);
  objective_reference(m, r->fs, xstar, &fstar);
  gsl_vector_free(xstar);
  graph_wrule rule = GRAPH_W_METROPOLIS;
  graph_wrule_parse(p->weights, &rule);
  r->setup = (consensus_setup){.agents = m, .g = r->g, .W = r->W, .rule = rule, .q = p->q, .interval = p->interval,
                               .fs = r->fs, .fstar = fstar, .step_rule = (consensus_step)p->step_rule,
                               .alpha0 = p->alpha0, .async = p->async};
  return r;
}

static size_t metrics_slots(void *state, const run_config *cfg)
{
  (void)cfg;
  return consensus_metrics_slots(&((consensus_run *)state)->setup);
}

static void deploy(void *state, const run_config *cfg, metrics *m)
{
  consensus_run *r = state;
  r->c = consensus_deploy(cfg, &r->setup, m);
  xbt_assert(r->c != NULL, "a validated consensus scenario could not be deployed");
}

/* consensus.csv: every measurement of the agents' iterates, the documented columns
 * first, then the running averages' gap and the worst agent's gaps. */
static void report_run(void *state, const run_config *cfg, metrics *m, report *rep)
{
  const consensus_run *r = state;
  const consensus_params *p = algorithm_params(cfg->sc, &consensus_algorithm);
  rep->examples = metrics_total_steps(m) * p->rows;
  rep->step_workers = p->agents;
  rep->step = "iteration";
  rep->worker_role = "agent";
  const consensus_point *pt;
  size_t n = consensus_trace(r->c, &pt);
  report_text b = {0};
  report_printf(&b, "iteration,sim_time_s,consensus_error,optimality_gap,ergodic_gap,agent_gap_max,"
                    "agent_ergodic_gap_max\n");
  for (size_t i = 0; i < n; i++) {
    const double v[] = {pt[i].sim_time, pt[i].consensus_error, pt[i].optimality_gap, pt[i].ergodic_gap,
                        pt[i].agent_gap_max, pt[i].agent_ergodic_gap_max};
    report_printf(&b, "%ld", pt[i].iteration);
    for (size_t j = 0; j < sizeof(v) / sizeof(v[0]); j++) {
      report_printf(&b, ",");
      report_double(&b, v[j]);
    }
    report_printf(&b, "\n");
  }
  report_add_file(rep, "consensus.csv", &b);
}

/* Its own measures, the last measurement's: how far the agents are from agreeing and
 * from the optimum (there is no held-out loss or accuracy). */
static void closing(void *state, const run_config *cfg, const report_outcome *o, char *line, size_t len)
{
  const consensus_run *r = state;
  const consensus_params *p = algorithm_params(cfg->sc, &consensus_algorithm);
  const consensus_point *pt;
  size_t n = consensus_trace(r->c, &pt);
  char perf[400];
  report_perf_text(&o->perf, 1, perf, sizeof perf);
  int k = snprintf(line, len, "consensus %s %s: %zu agents on %s, %.6g simulated s", p->async ? "async" : "sync",
                   o->status, p->agents, p->topology, o->sim_time);
  if (n > 0)
    k += snprintf(line + k, len - (size_t)k, ", iteration %ld: consensus error %.4g, optimality gap %.4g",
                  pt[n - 1].iteration, pt[n - 1].consensus_error, pt[n - 1].optimality_gap);
  if (perf[0])
    snprintf(line + k, len - (size_t)k, "; %s", perf);
}

static void free_run(void *state)
{
  consensus_run *r = state;
  consensus_free(r->c);
  for (size_t i = 0; r->fs && i < graph_n(r->g); i++)
    objective_free(r->fs[i]);
  xbt_free(r->fs);
  if (r->W)
    gsl_matrix_free(r->W);
  graph_free(r->g);
  xbt_free(r);
}

/* Each agent's shard (rows x (dim + 1)) and a few iterates of dim, the weight matrix of a
 * fixed graph (agents^2), and async mode's inbox per agent. */
static double footprint(const scenario *sc, const void *params, double *actors, const char **what)
{
  (void)sc;
  const consensus_params *p = params;
  double m = (double)p->agents, d = (double)p->dim;
  *actors = m * (p->async ? 2 : 1) + 1;
  *what = "consensus.agents x consensus.rows x (consensus.dim + 1) data, and agents^2 weights on a fixed graph";
  return (m * ((double)p->rows * (d + 1) + 8 * d) + (p->q < 1 ? 0 : m * m)) * 8;
}

const algorithm consensus_algorithm = {
  .name = "consensus",
  .summary = "distributed subgradient consensus: agents mix neighbours' iterates (Nedic and Ozdaglar 2009)",
  .section_doc = "distributed subgradient consensus (Nedic and Ozdaglar 2009, `run.algorithm = consensus`): agents, "
                 "their graph and weights, the problem, the step",
  ALGORITHM_SECTION(consensus_keys, consensus_params),
  .files = "consensus.csv",
  .fail_stop = 1,
  .loss_name = "gap", /* the optimality gap it records as progress.csv's loss */
  .validate = validate,
  .hosts_needed = hosts_needed,
  .footprint = footprint,
  .prepare = prepare,
  .metrics_slots = metrics_slots,
  .deploy = deploy,
  .report = report_run,
  .closing = closing,
  .free = free_run,
};

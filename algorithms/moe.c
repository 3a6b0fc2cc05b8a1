/* moe.c - expert parallelism (run.algorithm = moe; GShard, Lepikhin et al. 2020; Switch
 * Transformer, Fedus et al. 2021): P ranks, each a data-parallel rank of the MoE GPT holding
 * E/P experts of every layer. Each step every rank
 *   numerics        draws its shard and computes its gradient through the MoE GPT routing
 *                   its own tokens (one routing group), which hands out each layer's routing:
 *                   the tokens it sends each expert, kept and dropped (models/gpt.h); no
 *                   simulated time;
 *   forward         per layer: attention (replicated) and the router's flops; an all-to-all
 *                   of the counts; the dispatch all-to-all, each pair's message the rows the
 *                   router sent the peer's experts; its experts' flops on exactly the rows
 *                   they received; the combine all-to-all back; then the logits;
 *   backward        the same in reverse, the combine's gradient to the experts' owners first
 *                   and the dispatch's back, each at twice the forward flops;
 *   allreduce       of the non-expert gradients over the P ranks (an expert's stays put);
 *   update          SGD or Adam with the mean gradient: the replicated entries once, each
 *                   expert by its owner, summing the ranks' contributions in rank order.
 * Why this equals the serial MoE GPT with the shards as routing groups, and what is timed:
 * algorithms/doc/moe.md. */
#include "algorithms/moe_impl.h"

#include <math.h>
#include <string.h>
#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/engine.h>
#include <simgrid/mutex.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "algorithms/compute.h"
#include "algorithms/msg.h"
#include "models/moe.h"
#include "models/optim.h"
#include "models/rng.h"
#include "models/transformer.h"

size_t moe_ep_expert_at(const moe_ep *m, size_t l, size_t e)
{
  gpt_layout lay;
  gpt_layout_of(&m->gd, &lay);
  size_t h = m->p->hidden, E = m->p->experts;
  return lay.layer0 + l * lay.layer_size + (moe_layer_n_params(h, E) - moe_n_params(h, E)) +
         moe_expert_offset(h, E, e);
}

/* ---- the numerics of a step (no simulated time) --------------------------------- */

/* Draws the rank's shard, computes its gradient and publishes its routing counts. */
static void rank_numerics(moe_ep_rank *k)
{
  moe_ep *m = k->m;
  const moe_params *p = m->p;
  size_t P = p->ranks, E = p->experts, r = k->rank;
  data_sample_batch(m->tok_train, 0, data_n(m->tok_train), k->rng, p->batch, k->seqs, k->y);
  moe_routing **routes = xbt_malloc0(p->layers * sizeof(moe_routing *));
  xbt_assert(gpt_loss_grad_routed(&m->gd, m->w, p->batch, k->seqs->data, &k->loss, k->g, routes) == 0,
             "moe: the GPT refused a validated shape");
  for (size_t l = 0; l < p->layers; l++) {
    for (size_t e = 0; e < E; e++) {
      m->kept[(l * P + r) * E + e] = routes[l]->kept[e];
      m->routed[(l * P + r) * E + e] = routes[l]->routed[e];
    }
    m->dropped_of[l * P + r] = routes[l]->dropped;
    moe_routing_free(routes[l]);
  }
  xbt_free(routes);
  for (size_t i = 0; i < m->n_dense; i++)
    k->pack[i] = gsl_vector_get(k->g, m->dense_idx[i]);
}

/* max / mean of n counts (1 when all are 0). */
static double max_over_mean(const double *c, size_t n)
{
  double mx = 0, sum = 0;
  for (size_t i = 0; i < n; i++) {
    mx = fmax(mx, c[i]);
    sum += c[i];
  }
  return sum > 0 ? mx * (double)n / sum : 1;
}

/* Rank 0, once every rank has routed: the step's imbalance and drops, and the tokens each
 * rank's dispatch sends each rank. */
static void record_step(moe_ep *m)
{
  const moe_params *p = m->p;
  size_t P = p->ranks, E = p->experts, L = p->layers;
  double tokens = (double)(p->batch * p->seq), *routed = xbt_malloc0(E * sizeof(double));
  double *kept = xbt_malloc0(E * sizeof(double));
  moe_ep_step st = {0, 0, 0, 0, 0};
  double cross = 0;
  for (size_t l = 0; l < L; l++) {
    memset(routed, 0, E * sizeof(double));
    memset(kept, 0, E * sizeof(double));
    for (size_t s = 0; s < P; s++) {
      for (size_t e = 0; e < E; e++) {
        size_t q = moe_ep_owner(p, e), kk = m->kept[(l * P + s) * E + e];
        routed[e] += (double)m->routed[(l * P + s) * E + e];
        kept[e] += (double)kk;
        m->tokens[s * P + q] += (double)kk;
        cross += q != s ? (double)kk : 0;
      }
      st.dropped += (double)m->dropped_of[l * P + s];
    }
    st.imbalance += max_over_mean(routed, E) / (double)L;
    st.kept_imbalance += max_over_mean(kept, E) / (double)L;
  }
  double assigned = (double)(L * P * p->top_k) * tokens;
  m->dropped_all += st.dropped;
  m->assigned_all += assigned;
  st.dropped /= assigned;
  /* a pair's rows cross four times: dispatch, combine, and their two backward passes */
  st.bytes = 4 * cross * (double)p->hidden * (double)m->cfg->elem_bytes;
  if (m->n_steps == m->cap_steps) {
    m->cap_steps = m->cap_steps ? 2 * m->cap_steps : 64;
    m->steps = xbt_realloc(m->steps, m->cap_steps * sizeof(moe_ep_step));
  }
  m->steps[m->n_steps++] = st;
  xbt_free(routed);
  xbt_free(kept);
}

/* ---- the simulated step ---------------------------------------------------------- */

/* Rows rank s's dispatch sends rank q's experts in layer l. */
static size_t rows_to(const moe_ep *m, size_t l, size_t s, size_t q)
{
  size_t E = m->p->experts, per = E / m->p->ranks, n = 0;
  for (size_t e = q * per; e < (q + 1) * per; e++)
    n += m->kept[(l * m->p->ranks + s) * E + e];
  return n;
}

/* One all-to-all of layer l's rows: toward the experts' owners (the dispatch, and the
 * combine's backward) or back from them; timed, and its bytes counted per pair. */
static void exchange_rows(moe_ep_rank *k, size_t l, int to_owner, const char *what)
{
  moe_ep *m = k->m;
  size_t P = m->p->ranks, r = k->rank, h = m->p->hidden;
  for (size_t q = 0; q < P; q++) {
    size_t mine = rows_to(m, l, r, q) * h, theirs = rows_to(m, l, q, r) * h;
    k->scount[q] = to_owner ? mine : theirs;
    k->rcount[q] = to_owner ? theirs : mine;
    if (q != r)
      m->bytes[r * P + q] += (double)k->scount[q] * (double)m->cfg->elem_bytes;
  }
  account_label_push("%s layer %zu", what, l);
  double t0 = simgrid_get_clock();
  coll_alltoallv(m->comm, r, NULL, k->scount, NULL, k->rcount);
  k->a2a_s += simgrid_get_clock() - t0;
  account_label_pop();
}

/* The counts a variable all-to-all needs first: E/P per pair, the tokens for each expert. */
static void exchange_counts(moe_ep_rank *k, size_t l)
{
  size_t P = k->m->p->ranks, per = k->m->p->experts / P;
  for (size_t q = 0; q < P; q++)
    k->scount[q] = k->rcount[q] = per;
  account_label_push("dispatch counts layer %zu", l);
  double t0 = simgrid_get_clock();
  coll_alltoallv(k->m->comm, k->rank, NULL, k->scount, NULL, k->rcount);
  k->a2a_s += simgrid_get_clock() - t0;
  account_label_pop();
}

/* The rank's experts of layer l on the rows they received: forward, or backward (2x). */
static void experts_compute(moe_ep_rank *k, size_t l, double times)
{
  moe_ep *m = k->m;
  size_t P = m->p->ranks, E = m->p->experts, per = E / P;
  double flops = 0;
  for (size_t e = k->rank * per; e < (k->rank + 1) * per; e++) {
    size_t rows = 0;
    for (size_t s = 0; s < P; s++)
      rows += m->kept[(l * P + s) * E + e];
    flops += moe_expert_flops(m->p->hidden, rows);
  }
  account_label_push("experts layer %zu", l);
  if (flops > 0)
    compute_execute(m->cfg, times * flops);
  account_label_pop();
}

/* A layer's replicated work on the rank's n tokens: attention (the layer's flops but the
 * MLP's, transformer.h) and the router's 2 n h E. */
static void replicated_compute(moe_ep_rank *k, size_t l, double times, const char *what)
{
  const moe_params *p = k->m->p;
  size_t n = p->batch * p->seq;
  transformer_dims d = {.b = p->batch, .s = p->seq, .h = p->hidden, .heads = p->heads};
  double attn = transformer_layer_flops(&d) - moe_expert_flops(p->hidden, n);
  double router = 2.0 * (double)n * (double)p->hidden * (double)p->experts;
  account_label_push("%s layer %zu", what, l);
  compute_execute(k->m->cfg, times * (attn + router));
  account_label_pop();
}

static void logits_compute(moe_ep_rank *k, double times, const char *what)
{
  const moe_params *p = k->m->p;
  account_label_push("%s", what);
  compute_execute(k->m->cfg, times * 2.0 * (double)(p->batch * p->seq) * (double)p->hidden * (double)p->vocab);
  account_label_pop();
}

static void forward_backward(moe_ep_rank *k)
{
  size_t L = k->m->p->layers;
  for (size_t l = 0; l < L; l++) {
    replicated_compute(k, l, 1, "attention and router");
    exchange_counts(k, l);
    exchange_rows(k, l, 1, "dispatch");
    experts_compute(k, l, 1);
    exchange_rows(k, l, 0, "combine");
  }
  logits_compute(k, 1, "logits");
  logits_compute(k, 2, "logits backward");
  for (size_t l = L; l-- > 0;) {
    exchange_rows(k, l, 1, "combine backward");
    experts_compute(k, l, 2);
    exchange_rows(k, l, 0, "dispatch backward");
    replicated_compute(k, l, 2, "attention and router backward");
  }
}

static void apply(const moe_params *p, double *w, double *m1, double *m2, const double *g, size_t n, long step)
{
  if (p->optimizer == MOE_EP_ADAM)
    optim_adam_apply(w, m1, m2, g, n, p->lr, OPTIM_ADAM_B1, OPTIM_ADAM_B2, OPTIM_ADAM_EPS, step);
  else
    optim_sgd_apply(w, g, n, p->lr);
}

/* The mean gradient's update: the replicated entries (rank 0 writes the one copy the ranks
 * share; every rank holds the same sum), then each of the rank's experts, its gradient the
 * ranks' contributions summed in rank order. */
static void update(moe_ep_rank *k, long step, double *gexp)
{
  moe_ep *m = k->m;
  const moe_params *p = m->p;
  size_t P = p->ranks, per = p->experts / P, es = m->expert_size;
  sg_mutex_lock(m->mu);
  if (k->rank == 0) {
    for (size_t i = 0; i < m->n_dense; i++) {
      m->wpack[i] = gsl_vector_get(m->w, m->dense_idx[i]);
      k->pack[i] /= (double)P;
    }
    apply(p, m->wpack, m->pm1, m->pm2, k->pack, m->n_dense, step);
    for (size_t i = 0; i < m->n_dense; i++)
      gsl_vector_set(m->w, m->dense_idx[i], m->wpack[i]);
  }
  for (size_t l = 0; l < p->layers; l++)
    for (size_t e = k->rank * per; e < (k->rank + 1) * per; e++) {
      size_t off = moe_ep_expert_at(m, l, e);
      memset(gexp, 0, es * sizeof(double));
      for (size_t s = 0; s < P; s++)
        for (size_t i = 0; i < es; i++)
          gexp[i] += gsl_vector_get(m->ranks[s].g, off + i);
      for (size_t i = 0; i < es; i++)
        gexp[i] /= (double)P;
      apply(p, m->w->data + off, m->m1 + off, m->m2 + off, gexp, es, step);
    }
  sg_mutex_unlock(m->mu);
}

/* Every rank meets; rank 0 counts the finished step and decides whether another starts. */
static int all_go_on(moe_ep_rank *k, long step)
{
  moe_ep *m = k->m;
  sg_barrier_wait(m->bar);
  if (k->rank == 0) {
    if (step > 0) {
      double loss = 0;
      for (size_t s = 0; s < m->p->ranks; s++)
        loss += m->ranks[s].loss;
      m->train_loss = loss / (double)m->p->ranks;
      m->steps[m->n_steps - 1].end_s = simgrid_get_clock();
      m->slot->steps++;
      eval_step_done(m->eval);
    }
    m->go = !eval_should_stop(m->eval) && (m->cfg->max_steps == 0 || step < m->cfg->max_steps);
    if (!m->go)
      m->end = simgrid_get_clock();
  }
  sg_barrier_wait(m->bar);
  return m->go;
}

static void rank_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  moe_ep_rank *k = sg_actor_self_get_data();
  moe_ep *m = k->m;
  double *gexp = xbt_malloc0(m->expert_size * sizeof(double));
  for (long step = 0; all_go_on(k, step); step++) {
    rank_numerics(k);
    sg_barrier_wait(m->bar); /* every rank's routing is known: the counts all-to-all carries it */
    if (k->rank == 0)
      record_step(m);
    forward_backward(k);
    account_label_push("allreduce");
    coll_allreduce(m->comm, k->rank, k->pack, m->n_dense, (coll_algo)m->p->algo);
    account_label_pop();
    update(k, step + 1, gexp);
    if (k->rank == 0)
      m->updates = step + 1;
  }
  xbt_free(gexp);
  eval_finished(m->eval);
}

/* ---- set-up ------------------------------------------------------------------------ */

static void moe_ep_snapshot(void *ctx, gsl_vector *w)
{
  moe_ep *m = ctx;
  sg_mutex_lock(m->mu);
  gsl_vector_memcpy(w, m->w);
  sg_mutex_unlock(m->mu);
}

static int measure(void *ctx, const gsl_vector *w, double *loss, double *accuracy)
{
  moe_ep *m = ctx;
  return gpt_evaluate(&m->gd, w, data_n(m->tok_test), m->tok_test->X->data, loss, accuracy);
}

/* The non-expert entries: every entry but the experts' blocks, in layout order. */
static void dense_entries(moe_ep *m)
{
  unsigned char *expert = xbt_malloc0(m->n_params);
  for (size_t l = 0; l < m->p->layers; l++)
    for (size_t e = 0; e < m->p->experts; e++)
      memset(expert + moe_ep_expert_at(m, l, e), 1, m->expert_size);
  m->dense_idx = xbt_malloc0(m->n_params * sizeof(size_t));
  for (size_t i = 0; i < m->n_params; i++)
    if (!expert[i])
      m->dense_idx[m->n_dense++] = i;
  xbt_free(expert);
}

/* The GPT, its language, its initial parameters. */
void *moe_ep_prepare(const run_config *cfg, char *err, size_t len)
{
  (void)err;
  (void)len;
  const moe_params *p = algorithm_params(cfg->sc, &moe_algorithm);
  const scenario *sc = cfg->sc;
  moe_ep *m = xbt_malloc0(sizeof(*m));
  m->cfg = cfg;
  m->p = p;
  m->gd = (gpt_dims){p->vocab, p->seq, p->hidden, p->heads, p->layers,
                     {p->experts, p->top_k, p->capacity_factor, p->aux_coef, 1}};
  m->n_params = gpt_n_params(&m->gd);
  m->expert_size = moe_expert_size(p->hidden);
  size_t ntr = (size_t)sc->data.train, nte = (size_t)sc->data.test;
  gsl_rng *r = rng_create(cfg->seed, RNG_ROLE_DATA, 0);
  dataset *all = data_synthetic_tokens(ntr + nte, p->seq + 1, p->vocab, r);
  gsl_rng_free(r);
  xbt_assert(all, "moe: the token language refused validated sizes");
  m->tok_train = data_slice(all, 0, ntr);
  m->tok_test = data_slice(all, ntr, ntr + nte);
  data_free(all);
  m->w0 = gsl_vector_alloc(m->n_params);
  r = rng_create(cfg->seed, RNG_ROLE_INIT, 0);
  gpt_init_params(&m->gd, r, m->w0);
  gsl_rng_free(r);
  m->w = gsl_vector_alloc(m->n_params);
  gsl_vector_memcpy(m->w, m->w0);
  xbt_assert(measure(m, m->w0, &m->initial_loss, &m->initial_accuracy) == 0, "moe: held-out sequences do not fit");
  dense_entries(m);
  m->m1 = xbt_malloc0(m->n_params * sizeof(double));
  m->m2 = xbt_malloc0(m->n_params * sizeof(double));
  m->pm1 = xbt_malloc0(m->n_dense * sizeof(double));
  m->pm2 = xbt_malloc0(m->n_dense * sizeof(double));
  m->wpack = xbt_malloc0(m->n_dense * sizeof(double));
  size_t P = p->ranks, E = p->experts, L = p->layers;
  m->kept = xbt_malloc0(L * P * E * sizeof(size_t));
  m->routed = xbt_malloc0(L * P * E * sizeof(size_t));
  m->dropped_of = xbt_malloc0(L * P * sizeof(size_t));
  m->bytes = xbt_malloc0(P * P * sizeof(double));
  m->tokens = xbt_malloc0(P * P * sizeof(double));
  m->train_loss = NAN;
  return m;
}

void moe_ep_deploy(void *state, const run_config *cfg, metrics *mt)
{
  moe_ep *m = state;
  size_t P = m->p->ranks;
  m->cfg = cfg; /* the run's, hosts placed (prepare's may be another copy) */
  coll_opts o = {cfg->elem_bytes, 0, NULL, 0, coll_mode_of(cfg), cfg->comm_sms}; /* unchunked; additions free */
  m->comm = coll_comm_create("moe", cfg->hosts, P, &o);
  xbt_assert(m->comm != NULL, "moe: a communicator of %zu ranks", P);
  m->bar = sg_barrier_init((unsigned)P);
  m->mu = sg_mutex_init();
  m->slot = metrics_slot_at(mt, 0);
  m->eval = eval_ctl_create(cfg, mt, (int)P, moe_ep_snapshot, m);
  eval_set_snapshot_size(m->eval, m->n_params);
  eval_set_measure(m->eval, measure, m);
  m->ranks = xbt_malloc0(P * sizeof(moe_ep_rank));
  for (size_t i = 0; i < P; i++) {
    moe_ep_rank *k = &m->ranks[i];
    char name[48];
    k->m = m;
    k->rank = i;
    k->rng = rng_create(cfg->seed, RNG_ROLE_WORKER, (int)i);
    k->seqs = gsl_matrix_alloc(m->p->batch, m->p->seq + 1);
    k->y = xbt_malloc0(m->p->batch * sizeof(double));
    k->g = gsl_vector_alloc(m->n_params);
    k->pack = xbt_malloc0(m->n_dense * sizeof(double));
    k->scount = xbt_malloc0(P * sizeof(size_t));
    k->rcount = xbt_malloc0(P * sizeof(size_t));
    mbox_name(name, sizeof(name), "gpu", (int)i);
    sg_actor_t a = sg_actor_init(name, cfg->hosts[i]);
    sg_actor_set_data(a, k);
    sg_actor_start(a, rank_actor, 0, NULL);
  }
  eval_start(m->eval, cfg->hosts[0]);
}

void moe_ep_free(void *state)
{
  moe_ep *m = state;
  if (m == NULL)
    return;
  for (size_t i = 0; m->ranks && i < m->p->ranks; i++) {
    moe_ep_rank *k = &m->ranks[i];
    gsl_rng_free(k->rng);
    gsl_matrix_free(k->seqs);
    gsl_vector_free(k->g);
    xbt_free(k->y);
    xbt_free(k->pack);
    xbt_free(k->scount);
    xbt_free(k->rcount);
  }
  xbt_free(m->ranks);
  coll_comm_free(m->comm);
  if (m->bar)
    sg_barrier_destroy(m->bar);
  if (m->mu)
    sg_mutex_destroy(m->mu);
  eval_ctl_free(m->eval);
  data_free(m->tok_train);
  data_free(m->tok_test);
  gsl_vector_free(m->w0);
  gsl_vector_free(m->w);
  double *v[] = {m->m1, m->m2, m->pm1, m->pm2, m->wpack, m->bytes, m->tokens};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    xbt_free(v[i]);
  xbt_free(m->kept);
  xbt_free(m->routed);
  xbt_free(m->dropped_of);
  xbt_free(m->dense_idx);
  xbt_free(m->steps);
  xbt_free(m);
}

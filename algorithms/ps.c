/* ps.c - parameter-server shard actor. */
#include "algorithms/ps.h"

#include <string.h>
#include <simgrid/actor.h>
#include <simgrid/mutex.h>
#include <xbt/sysdep.h>

#include "algorithms/msg.h"
#include "models/cost.h"
#include "models/data.h"
#include "models/optim.h"

struct ps_shard {
  const run_config *cfg;
  int rank;
  size_t begin, end;     /* numeric slice */
  double sim_elems;      /* simulated elements of the slice (virtual network share) */
  gsl_vector_view w;     /* view of the global parameters (numerics on) */
  double *acc;           /* Adagrad sums of squared gradients */
  ps_rule rule;
  long version;          /* updates applied so far */
  sg_mutex_t mu;         /* guards w against the evaluator's snapshot */
  sg_mailbox_t inbox;
  sg_mailbox_t *client_box;
  const sg_host_t *client_hosts;
  int n_clients;
  metrics_slot *slot;
  eval_ctl *eval;
  int numerics;
};

ps_shard *ps_create(const run_config *cfg, gsl_vector *w, int rank, int n_shards, ps_rule rule,
                    const char *client_role, const sg_host_t *client_hosts, int n_clients,
                    metrics_slot *slot, eval_ctl *eval)
{
  ps_shard *s = xbt_malloc0(sizeof(*s));
  s->client_box = xbt_malloc((size_t)n_clients * sizeof(sg_mailbox_t));
  for (int c = 0; c < n_clients; c++)
    s->client_box[c] = mbox_of(client_role, c);
  s->client_hosts = client_hosts;
  s->cfg = cfg;
  s->rank = rank;
  s->rule = rule;
  s->n_clients = n_clients;
  s->slot = slot;
  s->eval = eval;
  s->numerics = cfg->numerics && w != NULL;
  data_shard_bounds(net_n_params(cfg->model), (size_t)n_shards, (size_t)rank, &s->begin, &s->end);
  size_t sb, se;
  data_shard_bounds((size_t)cfg->sim_params, (size_t)n_shards, (size_t)rank, &sb, &se);
  s->sim_elems = (double)(se - sb);
  if (s->numerics) {
    s->w = gsl_vector_subvector(w, s->begin, s->end - s->begin);
    if (rule.adagrad)
      s->acc = xbt_malloc0((s->end - s->begin) * sizeof(double));
  }
  s->mu = sg_mutex_init();
  return s;
}

void ps_free(ps_shard *s)
{
  if (s == NULL)
    return;
  sg_mutex_destroy(s->mu);
  xbt_free(s->client_box);
  xbt_free(s->acc);
  xbt_free(s);
}

size_t ps_begin(const ps_shard *s) { return s->begin; }
size_t ps_end(const ps_shard *s) { return s->end; }
double ps_sim_elems(const ps_shard *s) { return s->sim_elems; }

void ps_snapshot(ps_shard *s, gsl_vector *w)
{
  if (!s->numerics)
    return;
  sg_mutex_lock(s->mu);
  memcpy(w->data + s->begin, s->w.vector.data, (s->end - s->begin) * sizeof(double));
  sg_mutex_unlock(s->mu);
}

/* Replies to a fetch with a copy of the slice and the version it is at. */
static void send_parameters(ps_shard *s, int client)
{
  size_t n = s->numerics ? s->end - s->begin : 0;
  msg *m = msg_create(MSG_PARAMS, s->rank, 0, n);
  m->version = s->version;
  if (n)
    memcpy(m->data, s->w.vector.data, n * sizeof(double));
  msg_send(s->client_box[client], s->client_hosts[client], m, msg_bytes(s->sim_elems, s->cfg->elem_bytes));
}

/* Dean'12 4.1: the shard applies each gradient as it arrives. Staleness = updates
 * applied since the parameters this gradient was computed on were fetched. */
static void apply_update(ps_shard *s, const msg *push)
{
  metrics_slot_staleness(s->slot, s->version - push->version);
  run_execute(s->cfg, cost_update_flops((size_t)s->sim_elems, s->rule.adagrad));
  if (s->numerics) {
    sg_mutex_lock(s->mu);
    if (s->rule.adagrad)
      optim_adagrad_apply(s->w.vector.data, s->acc, push->data, push->n, s->rule.gamma);
    else
      optim_sgd_apply(s->w.vector.data, push->data, push->n, s->rule.lr);
    sg_mutex_unlock(s->mu);
  }
  s->version++;
}

/* Serves fetches and pushes in arrival order until every client said it is done. */
static void ps_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  ps_shard *s = sg_actor_self_get_data();
  int done = 0;
  /* A server's NIC takes messages as they come, not one rendezvous at a time: a
   * mailbox with a permanent receiver starts every transfer when it is sent. */
  sg_mailbox_set_receiver(sg_mailbox_get_name(s->inbox));
  while (done < s->n_clients) {
    msg *m = msg_recv(s->inbox);
    if (m->kind == MSG_FETCH)
      send_parameters(s, m->src);
    else if (m->kind == MSG_PUSH)
      apply_update(s, m);
    else if (m->kind == MSG_DONE)
      done++;
    msg_free(m);
  }
  eval_finished(s->eval);
}

void ps_start(ps_shard *s, sg_host_t host)
{
  char name[32];
  mbox_name(name, sizeof(name), "ps", s->rank);
  s->inbox = sg_mailbox_by_name(name);
  sg_actor_t a = sg_actor_init(name, host);
  sg_actor_set_data(a, s);
  sg_actor_start(a, ps_actor, 0, NULL);
}

/* modelpar.c - a model replica partitioned over machines (Dean'12 sec. 3).
 *
 * Partition p owns some units of every layer (models/arch: LC layers tiled, dense
 * layers split by units). Layer 0 is the data: each partition reads the inputs it
 * needs locally. For every later layer l, p needs arch_plan_halo(l, p, q) activations
 * of layer l-1 from each other partition q: they travel q -> p forward (one value per
 * unit and example, whatever the number of edges) and their gradients p -> q
 * backward. Each message goes to a mailbox of its own (layer, direction, receiver),
 * so a partition waits exactly for what the next phase needs. */
#include "algorithms/modelpar.h"

#include <math.h>
#include <gsl/gsl_randist.h>
#include <simgrid/actor.h>
#include <simgrid/mailbox.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/eval.h"
#include "algorithms/msg.h"
#include "models/cost.h"
#include "models/rng.h"

typedef struct part {
  modelpar *mp;
  int p;
  sg_mailbox_t *fwd_in;   /* [l]: activations of layer l-1 that p needs for layer l */
  sg_mailbox_t *bwd_in;   /* [l]: gradients of p's layer-l units from their users */
  gsl_rng *rng;           /* jitter of this machine's processing time */
  metrics_slot *slot;
} part;

struct modelpar {
  const run_config *cfg;
  const arch *a;
  const arch_plan *plan;
  size_t L;               /* layers, input included */
  size_t P;
  part *parts;
  eval_ctl *eval;
  double jitter_sigma;    /* of the log of the processing-time factor */
};

size_t modelpar_hosts_needed(const arch_plan *plan) { return arch_plan_parts(plan); }
size_t modelpar_metrics_slots(const arch_plan *plan) { return arch_plan_parts(plan); }

static sg_mailbox_t mbox_at(char dir, size_t l, size_t p)
{
  char role[16];
  snprintf(role, sizeof(role), "mp%c%zu", dir, l);
  return mbox_of(role, (int)p);
}

/* Per-machine variance (Dean'12 sec. 3: speed-ups fall short mainly because all
 * machines wait for the slowest): every compute phase takes its nominal time times a
 * lognormal factor of mean 1 and coefficient of variation cfg->jitter. */
static void compute(part *pt, double flops)
{
  double s = pt->mp->jitter_sigma;
  double factor = s > 0 ? gsl_ran_lognormal(pt->rng, -0.5 * s * s, s) : 1.0;
  run_execute(pt->mp->cfg, flops * factor);
}

/* Flops per example of p's units in layer l, forward (backward is twice this). */
static double forward_flops(const modelpar *mp, size_t l, size_t p)
{
  double per_unit = arch_layer_train_flops(mp->a, l) / 3.0 / (double)arch_units(mp->a, l);
  return per_unit * (double)arch_plan_units(mp->plan, l, p);
}

static void send_values(const modelpar *mp, msg_kind kind, sg_mailbox_t to, size_t q, size_t count, long step)
{
  msg *m = msg_create(kind, 0, step, 0);
  double values = (double)count * (double)mp->cfg->sgd.batch;
  msg_send(to, mp->cfg->hosts[q], m, msg_bytes(values, mp->cfg->elem_bytes));
}

static void receive_values(sg_mailbox_t from, size_t n, long step)
{
  for (size_t i = 0; i < n; i++) {
    msg *m = msg_recv(from);
    xbt_assert(m->step == step, "partition message of step %ld arrived during step %ld", m->step, step);
    msg_free(m);
  }
}

/* Number of partitions q != p with halo(l, p, q) > 0 (senders to p forward). */
static size_t providers(const modelpar *mp, size_t l, size_t p)
{
  size_t n = 0;
  for (size_t q = 0; q < mp->P; q++)
    n += q != p && arch_plan_halo(mp->plan, l, p, q) > 0;
  return n;
}

/* Number of partitions r != p with halo(l, r, p) > 0 (users of p's layer-(l-1) units). */
static size_t users(const modelpar *mp, size_t l, size_t p)
{
  size_t n = 0;
  for (size_t r = 0; r < mp->P; r++)
    n += r != p && arch_plan_halo(mp->plan, l, r, p) > 0;
  return n;
}

static void forward_pass(part *pt, long step)
{
  modelpar *mp = pt->mp;
  size_t p = (size_t)pt->p;
  double batch = (double)mp->cfg->sgd.batch;
  for (size_t l = 1; l < mp->L; l++) {
    if (l > 1)
      receive_values(pt->fwd_in[l], providers(mp, l, p), step);
    compute(pt, forward_flops(mp, l, p) * batch);
    if (l + 1 < mp->L)
      for (size_t r = 0; r < mp->P; r++)
        if (r != p && arch_plan_halo(mp->plan, l + 1, r, p) > 0)
          send_values(mp, MSG_ACTIVATIONS, mp->parts[r].fwd_in[l + 1], r, arch_plan_halo(mp->plan, l + 1, r, p), step);
  }
}

static void backward_pass(part *pt, long step)
{
  modelpar *mp = pt->mp;
  size_t p = (size_t)pt->p;
  double batch = (double)mp->cfg->sgd.batch;
  for (size_t l = mp->L - 1; l >= 1; l--) {
    if (l + 1 < mp->L)
      receive_values(pt->bwd_in[l], users(mp, l + 1, p), step);
    compute(pt, 2.0 * forward_flops(mp, l, p) * batch);
    if (l > 1)
      for (size_t q = 0; q < mp->P; q++)
        if (q != p && arch_plan_halo(mp->plan, l, p, q) > 0)
          send_values(mp, MSG_GRADIENTS, mp->parts[q].bwd_in[l - 1], q, arch_plan_halo(mp->plan, l, p, q), step);
  }
}

static void apply_update(part *pt)
{
  compute(pt, cost_update_flops((size_t)arch_plan_params(pt->mp->plan, (size_t)pt->p), 0));
}

/* Dean'12 sec. 3: each partition runs its share of every minibatch's forward and
 * backward pass; the replica's step ends when every partition has updated. */
static void partition_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  part *pt = sg_actor_self_get_data();
  modelpar *mp = pt->mp;
  for (size_t l = 1; l < mp->L; l++) {
    sg_mailbox_set_receiver(sg_mailbox_get_name(pt->fwd_in[l]));
    sg_mailbox_set_receiver(sg_mailbox_get_name(pt->bwd_in[l]));
  }
  for (long step = 0; step < mp->cfg->max_steps; step++) {
    forward_pass(pt, step);
    backward_pass(pt, step);
    apply_update(pt);
    pt->slot->steps += pt->p == 0;
    if (pt->p == 0)
      eval_step_done(mp->eval);
  }
  eval_finished(mp->eval);
}

modelpar *modelpar_deploy(const run_config *cfg, const arch *a, const arch_plan *plan, metrics *m)
{
  size_t P = arch_plan_parts(plan);
  if (cfg->n_hosts < P || cfg->max_steps <= 0)
    return NULL;
  modelpar *mp = xbt_malloc0(sizeof(*mp));
  mp->cfg = cfg;
  mp->a = a;
  mp->plan = plan;
  mp->L = arch_n_layers(a);
  mp->P = P;
  mp->jitter_sigma = sqrt(log1p(cfg->jitter * cfg->jitter));
  mp->eval = eval_ctl_create(cfg, m, (int)P, NULL, NULL);
  mp->parts = xbt_malloc0(P * sizeof(part));
  for (size_t p = 0; p < P; p++) {
    part *pt = &mp->parts[p];
    pt->mp = mp;
    pt->p = (int)p;
    pt->slot = metrics_slot_at(m, p);
    pt->rng = rng_create(cfg->seed, RNG_ROLE_MACHINE, (int)p);
    pt->fwd_in = xbt_malloc0(mp->L * sizeof(sg_mailbox_t));
    pt->bwd_in = xbt_malloc0(mp->L * sizeof(sg_mailbox_t));
    for (size_t l = 1; l < mp->L; l++) {
      pt->fwd_in[l] = mbox_at('f', l, p);
      pt->bwd_in[l] = mbox_at('b', l, p);
    }
  }
  for (size_t p = 0; p < P; p++) {
    char name[32];
    mbox_name(name, sizeof(name), "partition", (int)p);
    sg_actor_t actor = sg_actor_init(name, cfg->hosts[p]);
    sg_actor_set_data(actor, &mp->parts[p]);
    sg_actor_start(actor, partition_actor, 0, NULL);
  }
  eval_start(mp->eval, cfg->hosts[0]);
  return mp;
}

void modelpar_free(modelpar *mp)
{
  if (mp == NULL)
    return;
  for (size_t p = 0; p < mp->P; p++) {
    gsl_rng_free(mp->parts[p].rng);
    xbt_free(mp->parts[p].fwd_in);
    xbt_free(mp->parts[p].bwd_in);
  }
  xbt_free(mp->parts);
  eval_ctl_free(mp->eval);
  xbt_free(mp);
}

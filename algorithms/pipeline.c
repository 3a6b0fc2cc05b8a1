/* pipeline.c - pipeline model parallelism with a synchronous flush: the devices and their
 * steps (GPipe, Huang et al. 2019; PipeDream-Flush's 1F1B; Megatron's interleaved 1F1B,
 * Narayanan et al. 2021). The layers are cut into K = p*v contiguous model chunks; chunk c
 * lives on device c mod p (Narayanan et al. 2021 sec. 2.2.2: device s holds chunks s, s+p,
 * ...; v = 1 is the plain layout, chunk s on device s). Each step every device runs its
 * operations from pipeline_schedule_ops (pipeline_sched.c) in order, then the flush. What a
 * chunk computes sits behind chunk_kernel (pipeline_impl.h): dense layers (pipeline_dense.c)
 * or GPT layers on tensor groups (pipeline_gpt.c). The descriptor, run.algorithm =
 * pipeline, is pipeline_config.c and pipeline_report.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/engine.h>
#include <simgrid/mailbox.h>
#include <simgrid/mutex.h>
#include <simgrid/semaphore.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "algorithms/collectives.h"
#include "algorithms/eval.h"
#include "algorithms/pipeline_impl.h"
#include "algorithms/tensor_stage.h"
#include "algorithms/zero3.h"
#include "models/data.h"

size_t pipeline_hosts_needed(const pipeline_params *p, const tensor_params *t)
{
  return p->transformer ? p->stages * t->ranks * (t->dp > 0 ? t->dp : 1) : p->stages;
}
size_t pipeline_metrics_slots(void) { return 1; }

/* ---- a device's operations -------------------------------------------------- *
 *
 * Each step device 0 (the data loader) draws the step's data, and every device runs its
 * operations in order:
 *   forward (j, c)   receive_activations of microbatch j from chunk c-1 (chunk 0 reads
 *                    its rows), compute_forward, send_activations to chunk c+1 (the last
 *                    chunk computes the loss instead), stash what backward needs;
 *   backward (j, c)  receive_gradients from chunk c+1 (the last chunk starts from its
 *                    loss), recompute the forward from the stashed input if asked,
 *                    compute_backward (accumulating the chunk's gradient), send the
 *                    gradient of its input to chunk c-1;
 * then apply_update (GPipe sec. 2.2: gradients accumulate over the m microbatches and
 * are applied synchronously at the end of the mini-batch). Sends are fire-and-forget to
 * a mailbox per (chunk, direction) that its device listens on, so a transfer overlaps
 * the sender's next computation and the receiver waits only for data it needs. */

/* Simulated seconds of one phase of chunk c on b examples, after handling the message
 * it computes on (got). */
static double timed_phase(device *d, const chunk *c, kernel_phase ph, double b, const kernel_io *io)
{
  double t0 = simgrid_get_clock();
  if (io->in && d->pl->kernel->received)
    d->pl->kernel->received(d->pl, d, c, b, io);
  d->pl->kernel->compute(d->pl, d, c, ph, b, io);
  return simgrid_get_clock() - t0;
}

static void stash_add(device *d, double elems)
{
  d->stash_bytes += elems * (double)d->pl->cfg->elem_bytes;
  if (d->stash_bytes > d->st.peak_stash_bytes)
    d->st.peak_stash_bytes = d->stash_bytes;
}

/* The wait before the sender put the message is idle (the bubble: the previous stage still
 * computing), the rest communication (the message in flight). */
static pipeline_msg *receive_from(sg_mailbox_t box, pipeline_msg_kind kind, long step, long mb)
{
  double t0 = simgrid_get_clock();
  pipeline_msg *in = pipeline_msg_of(msg_recv(box), kind);
  account_wait_idle(in->sent_at - t0);
  xbt_assert(in->step == step && in->microbatch == mb,
             "pipeline: expected %s of step %ld microbatch %ld, got step %ld microbatch %ld",
             kind == PIPELINE_MSG_ACTIVATIONS ? "activations" : "gradients", step, mb, in->step, in->microbatch);
  return in;
}

/* Sends out, which stands for `elems` elements (its data holds them with numerics). */
static void send_to(device *d, const chunk *to, pipeline_msg *out, double elems)
{
  double bytes = msg_bytes(elems, d->pl->cfg->elem_bytes);
  d->st.bytes_sent += bytes;
  out->sent_at = simgrid_get_clock();
  msg_send(out->hdr.kind == PIPELINE_MSG_ACTIVATIONS ? to->fwd_in[d->lane] : to->bwd_in[d->lane],
           d->pl->cfg->hosts[to->device * d->pl->lanes + d->lane], &out->hdr, bytes);
}

/* A message for microbatch mb of step `step` with room for n elements with numerics,
 * and none when timing only. */
static pipeline_msg *message(pipeline *pl, pipeline_msg_kind kind, size_t c, long step, long mb, double n)
{
  return pipeline_msg_create(kind, (int)c, step, mb, pl->numeric ? (size_t)n : 0);
}

static void forward_op(device *d, const pipeline_op *op, long step)
{
  pipeline *pl = d->pl;
  chunk *c = &pl->chunks[op->chunk];
  double b = (double)pl->p->microbatch;
  account_label_push("forward mb %ld chunk %zu", op->microbatch, op->chunk);
  pipeline_msg *in =
      op->chunk > 0 ? receive_from(c->fwd_in[d->lane], PIPELINE_MSG_ACTIVATIONS, step, op->microbatch) : NULL;
  pipeline_msg *out =
      op->chunk + 1 < pl->K ? message(pl, PIPELINE_MSG_ACTIVATIONS, op->chunk, step, op->microbatch, b * c->out_width)
                            : NULL;
  kernel_io io = {op->microbatch, in, out};
  d->st.forward_s += timed_phase(d, c, PHASE_FORWARD, b, &io);
  if (pl->numeric && pl->kernel->forward)
    pl->kernel->forward(c->k, op->microbatch, in ? NULL : pl->X, in, out ? out->data : NULL, !pl->p->recompute);
  else
    msg_free(in);
  if (out)
    send_to(d, &pl->chunks[op->chunk + 1], out, b * c->out_width);
  d->stashed++;
  if (d->stashed > d->st.peak_stashed)
    d->st.peak_stashed = d->stashed;
  stash_add(d, b * (pl->p->recompute ? c->in_width : c->act_elems));
  account_label_pop();
}

static void backward_op(device *d, const pipeline_op *op, long step)
{
  pipeline *pl = d->pl;
  chunk *c = &pl->chunks[op->chunk];
  double b = (double)pl->p->microbatch;
  account_label_push("backward mb %ld chunk %zu", op->microbatch, op->chunk);
  pipeline_msg *in =
      op->chunk + 1 < pl->K ? receive_from(c->bwd_in[d->lane], PIPELINE_MSG_GRADIENTS, step, op->microbatch) : NULL;
  if (pl->p->recompute) { /* one more forward, from the stashed input (Chen et al. 2016) */
    kernel_io none = {op->microbatch, NULL, NULL};
    d->st.recompute_s += timed_phase(d, c, PHASE_RECOMPUTE, b, &none);
    if (pl->numeric)
      pl->kernel->recompute(c->k, op->microbatch);
    stash_add(d, b * (c->act_elems - c->in_width));
  }
  pipeline_msg *out =
      op->chunk > 0 ? message(pl, PIPELINE_MSG_GRADIENTS, op->chunk, step, op->microbatch, b * c->in_width) : NULL;
  kernel_io io = {op->microbatch, in, out};
  d->st.backward_s += timed_phase(d, c, PHASE_BACKWARD, b, &io);
  if (pl->numeric && pl->kernel->backward)
    pl->kernel->backward(c->k, op->microbatch, in ? in->data : NULL, out ? out->data : NULL);
  msg_free(in);
  if (out)
    send_to(d, &pl->chunks[op->chunk - 1], out, b * c->in_width);
  d->stashed--;
  stash_add(d, -b * c->act_elems);
  account_label_pop();
}

/* Device 0, between steps, with every device at the barrier: the finished step is
 * published and counted, the run's end decided, and the next step's rows drawn. */
static void between_steps(pipeline *pl, long step)
{
  const run_config *cfg = pl->cfg;
  if (step > 0) {
    if (pl->numeric) {
      sg_mutex_lock(pl->mu);
      pl->kernel->publish(pl);
      sg_mutex_unlock(pl->mu);
    }
    pl->slot->steps++;
    eval_step_done(pl->eval);
  }
  pl->go = !eval_should_stop(pl->eval) && (cfg->max_steps == 0 || step < cfg->max_steps);
  if (!pl->go)
    pl->end = simgrid_get_clock();
  else if (pl->numeric)
    pl->kernel->draw(pl);
}

static int all_go_on(device *d, long step)
{
  pipeline *pl = d->pl;
  sg_barrier_wait(pl->start);
  if (d->idx == 0)
    between_steps(pl, step);
  sg_barrier_wait(pl->start);
  return pl->go;
}

static void listen(device *d)
{
  pipeline *pl = d->pl;
  for (size_t c = d->rank; c < pl->K; c += pl->p->stages) {
    sg_mailbox_set_receiver(sg_mailbox_get_name(pl->chunks[c].fwd_in[d->lane]));
    sg_mailbox_set_receiver(sg_mailbox_get_name(pl->chunks[c].bwd_in[d->lane]));
  }
}

static void pl_flush(device *d) { d->pl->kernel->flush(d->pl, d); }

/* mirror_replicas: replica j >= 1's device mirrors replica 0's twin (same stage, same tensor
 * rank); NULL for replica 0's devices and without mirroring. */
static device *twin_of(device *d)
{
  pipeline *pl = d->pl;
  if (!pl->p->mirror || d->lane < pl->t)
    return NULL;
  return &pl->devs[d->rank * pl->lanes + d->lane % pl->t];
}

static void device_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  device *d = sg_actor_self_get_data();
  device *twin = twin_of(d);
  if (twin == NULL)
    listen(d);
  for (long step = 0; all_go_on(d, step); step++) {
    if (twin) /* its replica computes and sends what replica 0 does, on links of its own: wait for the flush */
      sg_sem_acquire(twin->flushing);
    else
      for (size_t i = 0; i < d->n_ops; i++)
        if (d->ops[i].backward)
          backward_op(d, &d->ops[i], step);
        else
          forward_op(d, &d->ops[i], step);
    pl_flush(d);
  }
  eval_finished(d->pl->eval);
}

/* ---- set-up ---------------------------------------------------------------- */

static void pipeline_snapshot(void *ctx, gsl_vector *w)
{
  pipeline *pl = ctx;
  sg_mutex_lock(pl->mu);
  gsl_vector_memcpy(w, pl->w_pub);
  sg_mutex_unlock(pl->mu);
}

static int shapes_fit_model(const arch *shapes, const net *model)
{
  if (arch_n_layers(shapes) != net_n_layers(model) + 1)
    return 0;
  for (size_t l = 0; l < arch_n_layers(shapes); l++)
    if (arch_units(shapes, l) != net_layer_size(model, l))
      return 0;
  return 1;
}

static void chunks_init(pipeline *pl, const size_t *counts)
{
  pl->chunks = xbt_malloc0(pl->K * sizeof(chunk));
  size_t l = 1;
  for (size_t c = 0; c < pl->K; c++) {
    chunk *ch = &pl->chunks[c];
    ch->first = l;
    ch->last = l + counts[c] - 1;
    ch->device = c % pl->p->stages;
    pl->kernel->costs(pl, ch);
    l = ch->last + 1;
    ch->fwd_in = xbt_malloc(pl->lanes * sizeof(sg_mailbox_t));
    ch->bwd_in = xbt_malloc(pl->lanes * sizeof(sg_mailbox_t));
    if (pl->lanes == 1) {
      ch->fwd_in[0] = mbox_of("pp-fwd", (int)c);
      ch->bwd_in[0] = mbox_of("pp-bwd", (int)c);
    }
    for (size_t lane = 0; pl->lanes > 1 && lane < pl->lanes; lane++) {
      char fwd[32], bwd[32];
      snprintf(fwd, sizeof(fwd), "pp-fwd-%zu", c);
      snprintf(bwd, sizeof(bwd), "pp-bwd-%zu", c);
      ch->fwd_in[lane] = mbox_of(fwd, (int)lane);
      ch->bwd_in[lane] = mbox_of(bwd, (int)lane);
    }
  }
}

/* Layers the chunks split: the transformer's, or the dense layers of the shapes. */
static size_t model_layers(const pipeline *pl)
{
  return pl->p->transformer ? pl->tp.layers : arch_n_layers(pl->shapes) - 1;
}

/* Megatron-LM's split of transformer layers: the same number on every chunk (the
 * embedding and the logits ride on the first and last); a remainder goes one layer each
 * to the first chunks. */
static void split_uniform(size_t layers, size_t k, size_t *counts)
{
  for (size_t c = 0; c < k; c++)
    counts[c] = layers / k + (c < layers % k ? 1 : 0);
}

static int counts_fit(const pipeline *pl, const size_t *counts)
{
  size_t sum = 0;
  for (size_t c = 0; c < pl->K; c++) {
    if (counts[c] == 0)
      return 0;
    sum += counts[c];
  }
  return sum == model_layers(pl);
}

/* 3D parallelism's communicators, Megatron-LM's order (initialize_model_parallel): device
 * (s, j, r) on hosts[(s dp + j) t + r]; the tensor group of (s, j) is t consecutive hosts,
 * the data-parallel group of (s, r) the hosts r apart by t within stage s's d t hosts, the
 * embedding pair of lane (j, r) its devices on the first and the last stage. */
static void comms_init(pipeline *pl)
{
  const run_config *cfg = pl->cfg;
  size_t p = pl->p->stages, t = pl->t, dp = pl->dp;
  coll_opts o = {cfg->elem_bytes, 0, cfg, 0, coll_mode_of(cfg), cfg->comm_sms};
  pl->tcomm = xbt_malloc0(p * dp * sizeof(coll_comm *));
  for (size_t g = 0; g < p * dp; g++)
    pl->tcomm[g] = coll_comm_create("pp-tensor", cfg->hosts + g * t, t, &o);
  sg_host_t *h = xbt_malloc((dp > 2 ? dp : 2) * sizeof(sg_host_t));
  if (dp > 1) {
    pl->dcomm = xbt_malloc0(p * t * sizeof(coll_comm *));
    pl->zgroups = xbt_malloc0(p * t * sizeof(struct zero3_group *));
    for (size_t s = 0; s < p; s++)
      for (size_t r = 0; r < t; r++) {
        for (size_t j = 0; j < dp; j++)
          h[j] = cfg->hosts[(s * dp + j) * t + r];
        pl->dcomm[s * t + r] = coll_comm_create("pp-data", h, dp, &o);
        /* ZeRO-3 with NCCL's latency spends each round's latency itself (zero3.c) */
        coll_comm_set_no_chain(pl->dcomm[s * t + r], pl->p->zero == 3 && pl->p->zero_nccl);
      }
  }
  if (pl->tp.vocab > 0 && p > 1) {
    pl->ecomm = xbt_malloc0(pl->lanes * sizeof(coll_comm *));
    for (size_t lane = 0; lane < pl->lanes; lane++) {
      h[0] = cfg->hosts[lane];
      h[1] = cfg->hosts[(p - 1) * pl->lanes + lane];
      pl->ecomm[lane] = coll_comm_create("pp-embedding", h, 2, &o);
    }
  }
  xbt_free(h);
}

/* The shapes a transformer pipeline can run (as tensor_stage_create checks them). */
static int transformer_fits(const tensor_params *q)
{
  return q->ranks > 0 && q->heads > 0 && q->hidden % q->heads == 0 && q->heads % q->ranks == 0 &&
         (!q->seqpar || q->seq % q->ranks == 0) && (q->vocab % q->ranks == 0);
}

pipeline *pipeline_deploy(const run_config *cfg, const pipeline_params *p, const tensor_params *tp, const arch *shapes,
                          metrics *m)
{
  size_t K = p->stages * p->chunks;
  size_t layers = p->transformer ? tp->layers : arch_n_layers(shapes) - 1;
  if (p->stages == 0 || cfg->n_hosts < pipeline_hosts_needed(p, tp) || K == 0 || layers < K ||
      pipeline_schedule_ops((pipeline_schedule)p->schedule, p->stages, p->microbatches, p->chunks, 0, NULL) == 0 ||
      (cfg->numerics && !p->transformer && !shapes_fit_model(shapes, cfg->model)) ||
      (cfg->numerics && p->transformer && tp->vocab < DATA_TOKENS_SUCCESSORS) ||
      (p->transformer && (p->recompute || !transformer_fits(tp))) ||
      (!p->transformer && p->optimizer != PIPELINE_OPT_SGD))
    return NULL;
  pipeline *pl = xbt_malloc0(sizeof(*pl));
  pl->cfg = cfg;
  pl->p = p;
  pl->shapes = shapes;
  pl->K = K;
  pl->tp = *tp;
  pl->t = p->transformer ? tp->ranks : 1;
  pl->dp = p->transformer && tp->dp > 0 ? tp->dp : 1;
  pl->lanes = pl->t * pl->dp;
  pl->n_devs = p->stages * pl->lanes;
  size_t *counts = xbt_malloc0(K * sizeof(size_t));
  if (p->split)
    memcpy(counts, p->split, K * sizeof(size_t));
  else if (p->transformer)
    split_uniform(layers, K, counts);
  else
    pipeline_split_balanced(shapes, K, counts);
  if (!counts_fit(pl, counts)) {
    xbt_free(counts);
    xbt_free(pl);
    return NULL;
  }
  pl->kernel = p->transformer ? &pipeline_gpt_kernel : &pipeline_dense_kernel;
  chunks_init(pl, counts);
  xbt_free(counts);
  if (p->transformer)
    comms_init(pl);
  if (cfg->numerics) {
    pl->numeric = 1;
    pl->kernel->numerics(pl);
  }
  pl->start = sg_barrier_init((unsigned)pl->n_devs);
  pl->mu = sg_mutex_init();
  pl->slot = metrics_slot_at(m, 0);
  pl->eval = eval_ctl_create(cfg, m, (int)pl->n_devs, cfg->numerics ? pipeline_snapshot : NULL, pl);
  if (cfg->numerics && p->transformer) {
    eval_set_snapshot_size(pl->eval, pl->w_pub->size);
    eval_set_measure(pl->eval, pipeline_gpt_measure, pl);
  }
  pl->devs = xbt_malloc0(pl->n_devs * sizeof(device));
  size_t n_ops = 2 * (size_t)p->microbatches * p->chunks;
  for (size_t i = 0; i < pl->n_devs; i++) {
    device *d = &pl->devs[i];
    char name[48];
    d->pl = pl;
    d->idx = i;
    d->rank = i / pl->lanes;
    d->lane = i % pl->lanes;
    size_t s = d->rank;
    d->ops = xbt_malloc(n_ops * sizeof(pipeline_op));
    d->n_ops = pipeline_schedule_ops((pipeline_schedule)p->schedule, p->stages, p->microbatches, p->chunks, s, d->ops);
    xbt_assert(d->n_ops == n_ops, "device %zu: %zu operations, want %zu", s, d->n_ops, n_ops);
    for (size_t c = s; c < K; c += p->stages)
      d->st.params += pl->chunks[c].params;
    if (pl->kernel->attach)
      pl->kernel->attach(pl, d);
    if (p->mirror && pl->dp > 1 && d->lane < pl->t)
      d->flushing = sg_sem_init(0);
    mbox_name(name, sizeof(name), p->mirror && d->lane >= pl->t ? "pp-mirror" : "pp-device", (int)i);
    sg_actor_t a = sg_actor_init(name, cfg->hosts[i]);
    sg_actor_set_data(a, d);
    sg_actor_start(a, device_actor, 0, NULL);
  }
  eval_start(pl->eval, cfg->hosts[0]);
  return pl;
}

static void comms_free(coll_comm **c, size_t n)
{
  for (size_t i = 0; c && i < n; i++)
    coll_comm_free(c[i]);
  xbt_free(c);
}

void pipeline_free(pipeline *pl)
{
  if (pl == NULL)
    return;
  for (size_t c = 0; pl->numeric && pl->kernel->free && c < pl->K; c++)
    pl->kernel->free(pl->chunks[c].k);
  for (size_t i = 0; i < pl->n_devs; i++) {
    if (pl->kernel->detach)
      pl->kernel->detach(&pl->devs[i]);
    xbt_free(pl->devs[i].ops);
    if (pl->devs[i].flushing)
      sg_sem_destroy(pl->devs[i].flushing);
  }
  for (size_t c = 0; c < pl->K; c++) {
    xbt_free(pl->chunks[c].fwd_in);
    xbt_free(pl->chunks[c].bwd_in);
  }
  comms_free(pl->tcomm, pl->p->stages * pl->dp);
  comms_free(pl->dcomm, pl->p->stages * pl->t);
  for (size_t g = 0; pl->zgroups && g < pl->p->stages * pl->t; g++)
    zero3_group_free(pl->zgroups[g]);
  xbt_free(pl->zgroups);
  comms_free(pl->ecomm, pl->lanes);
  xbt_free(pl->devs);
  xbt_free(pl->chunks);
  if (pl->w) {
    gsl_vector_free(pl->w);
    gsl_vector_free(pl->w_pub);
    gsl_vector_free(pl->g);
    gsl_vector_free(pl->acc);
    gsl_matrix_free(pl->X);
    xbt_free(pl->y);
    gsl_rng_free(pl->rng);
  }
  if (pl->w0) {
    gsl_vector_free(pl->w0);
    gsl_vector_free(pl->w_pub);
    data_free(pl->tok_train);
    data_free(pl->tok_test);
    gsl_matrix_free(pl->seqs);
    xbt_free(pl->seq_y);
    gsl_rng_free(pl->rng);
  }
  eval_ctl_free(pl->eval);
  sg_mutex_destroy(pl->mu);
  sg_barrier_destroy(pl->start);
  xbt_free(pl);
}

void pipeline_stage_get(const pipeline *pl, size_t s, pipeline_stage_stats *st)
{
  xbt_assert(s < pl->p->stages, "stage %zu of %zu", s, pl->p->stages);
  *st = pl->devs[s * pl->lanes].st; /* replica 0's tensor rank 0 */
  st->busy_s = st->forward_s + st->backward_s + st->recompute_s;
  st->idle_s = fmax(0, pl->end - st->busy_s - st->update_s); /* below 0 only by rounding */
}

void pipeline_result_get(const pipeline *pl, pipeline_result *r)
{
  const pipeline_params *p = pl->p;
  memset(r, 0, sizeof(*r));
  r->makespan_s = pl->end;
  r->steps = pl->slot->steps;
  for (size_t s = 0; s < p->stages; s++) {
    pipeline_stage_stats st;
    pipeline_stage_get(pl, s, &st);
    r->bubble_fraction += pl->end > 0 ? st.idle_s / pl->end / (double)p->stages : 0;
  }
  pipeline_schedule sch = (pipeline_schedule)p->schedule;
  r->formula = pipeline_bubble_formula(sch, p->stages, p->microbatches, p->chunks);
  double vm = (double)p->microbatches * (double)(sch == PIPELINE_INTERLEAVED ? p->chunks : 1);
  r->formula_ideal = (double)(p->stages - 1) / vm;
  double mb = (double)r->steps * (double)p->microbatches;
  r->t_forward_s = mb > 0 ? pl->devs[0].st.forward_s / mb : 0;
  r->t_backward_s = mb > 0 ? pl->devs[0].st.backward_s / mb : 0;
  r->gpus = pl->n_devs;
  for (size_t i = 0; i < pl->n_devs; i++) {
    device *twin = twin_of(&pl->devs[i]);
    r->p2p_bytes += (twin ? twin : &pl->devs[i])->st.bytes_sent;
  }
  if (p->transformer) {
    r->model_flops = tensor_microbatch_flops(&pl->tp) * mb * (double)pl->dp;
    r->tflops_per_gpu = pl->end > 0 ? r->model_flops / pl->end / (double)pl->n_devs / 1e12 : 0;
  }
}

const coll_comm *pipeline_tensor_comm(const pipeline *pl, size_t s, size_t j)
{
  xbt_assert(s < pl->p->stages && j < pl->dp, "stage %zu replica %zu", s, j);
  return pl->tcomm ? pl->tcomm[s * pl->dp + j] : NULL;
}

const coll_comm *pipeline_dp_comm(const pipeline *pl, size_t s, size_t r)
{
  xbt_assert(s < pl->p->stages && r < pl->t, "stage %zu tensor rank %zu", s, r);
  return pl->dcomm ? pl->dcomm[s * pl->t + r] : NULL;
}

void pipeline_chunk_layers(const pipeline *pl, size_t c, size_t *first, size_t *last)
{
  xbt_assert(c < pl->K, "chunk %zu of %zu", c, pl->K);
  *first = pl->chunks[c].first;
  *last = pl->chunks[c].last;
}

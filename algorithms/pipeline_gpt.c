/* pipeline_gpt.c - the pipeline's transformer chunk kernel (pipeline.model = transformer: 3D
 * parallelism, Narayanan et al. 2021, PTD-P): each chunk is a block of GPT layers, each stage a
 * tensor group of t devices (one actor per GPU) running tensor_stage_forward / _backward
 * (tensor_stage.h) with its group's collectives, and d replicas of the whole pipeline. Device
 * (s, j, r) sends its chunk's boundary to device (s+1, j, r): with scatter/gather (PTD-P
 * sec. 4.1) its 1/t slice, which the receiving group allgathers; without, the whole b s h. At
 * the flush each (stage, tensor rank) allreduces its gradients across the d replicas and the
 * first and last stage the tied embedding's. With numerics the stages are models/gpt.h's GPT,
 * each device holding its tensor rank's entries only; after the run, the model they hold
 * (pipeline_gpt_get) and the serial GPT it is checked against (pipeline_gpt_serial). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/semaphore.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "algorithms/collectives.h"
#include "algorithms/pipeline_impl.h"
#include "algorithms/tensor_stage.h"
#include "algorithms/zero3.h"
#include "models/data.h"
#include "models/gpt.h"
#include "models/optim.h"
#include "models/rng.h"

/* With numerics the boundary's values are the messages' payload, the collectives sum real
 * buffers, and the flush's optimizer updates the device's entries (packed as its
 * data-parallel allreduce sends them). The numerics change no simulated time: they run
 * between the timing model's collectives, except, with sequence parallelism, two
 * collectives the timing model lacks (tf_sum_replicated, and tensor.c's backward_embedding). */

/* A device's state: its tensor rank's share of each of its chunks, and the elements of its
 * data-parallel gradient allreduce (all its chunks, one bucket, as tensor.c). With numerics,
 * its entries of the model packed in that allreduce's order (tensor_stage.h: chunk after chunk),
 * their gradients and the optimizer's state, and the boundary buffers of the phase it runs. */
typedef struct tf_device {
  tensor_stage **ts; /* by local chunk k: chunk k p + stage */
  double dp_elems;
  /* numerics */
  size_t n;          /* packed entries (dp_elems) */
  size_t *off;       /* [k]: local chunk k's first packed entry */
  double *w, *g;     /* packed parameters and gradients */
  double *m1, *m2;   /* Adam's moments */
  long updates;      /* optimizer steps taken */
  double *rep;       /* sequence parallelism: the replicated gradients, gathered for their sum */
  size_t nrep;
  double *bin, *bout; /* n x h: the phase's incoming boundary (after the allgather) and outgoing one */
  double loss;       /* the last chunk's device: the step's microbatch losses, summed */
  /* pipeline.zero = 1 with d > 1: the device's block of the packed entries (coll_block over its
   * data-parallel group), the only ones it updates and keeps optimizer state for (all of them
   * otherwise), and the elements its reduce-scatters and allgathers carried over the run */
  size_t sh_off, sh_len;
  double z1_scattered, z1_gathered;
  /* pipeline.zero = 3 with d > 1: its ZeRO-3 (zero3.h), and its stages' layers and ends */
  zero3 *zq;
  size_t *zlayers;
  int *zfirst, *zlast;
} tf_device;

/* ZeRO-3 over the device's data-parallel group (pipeline.zero = 3, d > 1): zero3.h, with the
 * group's ring worked out once (pl->zgroups) and the device's chunks as its stages. */
static void zero_attach(struct pipeline *pl, device *d, tf_device *k)
{
  size_t r = d->lane % pl->t, gi = d->rank * pl->t + r, v = pl->p->chunks;
  if (pl->zgroups[gi] == NULL)
    pl->zgroups[gi] = zero3_group_create(pl->dcomm[gi]);
  k->zlayers = xbt_malloc0(v * sizeof(size_t));
  k->zfirst = xbt_malloc0(v * sizeof(int));
  k->zlast = xbt_malloc0(v * sizeof(int));
  for (size_t i = 0; i < v; i++) {
    size_t c = i * pl->p->stages + d->rank;
    k->zlayers[i] = pl->chunks[c].last - pl->chunks[c].first + 1;
    k->zfirst[i] = c == 0;
    k->zlast[i] = c + 1 == pl->K;
  }
  zero3_opts o = {pl->p->zero_tensors, pl->p->zero_persistence, pl->p->zero_prefetch, pl->p->zero_host,
                  pl->p->zero_nccl,   pl->p->zero_allreduce};
  zero3_stages st = {&pl->tp, k->ts, k->zlayers, k->zfirst, k->zlast, v};
  char name[48];
  snprintf(name, sizeof(name), "pp-zero-%zu", d->idx);
  k->zq = zero3_attach(pl->cfg, &o, pl->zgroups[gi], pl->dcomm[gi], d->lane / pl->t, pl->cfg->hosts[d->idx], name,
                       &st);
}

static void tf_costs(const struct pipeline *pl, chunk *c)
{
  const tensor_params *q = &pl->tp;
  double sh = (double)q->seq * (double)q->hidden, t = (double)pl->t, n = (double)(c->last - c->first + 1);
  double b = (double)q->microbatch;
  /* PTD-P sec. 4.1: with scatter/gather each rank sends b s h / t of a boundary's b s h */
  c->in_width = c->out_width = pl->p->scatter_gather ? sh / t : sh;
  c->fwd_flops = n * tensor_layer_flops(q) / b / t; /* per example (sequence) and rank */
  c->bwd_flops = 2 * c->fwd_flops;
  /* stash per sequence: with recomputation each layer's input (Megatron's full
   * checkpointing); without, Korthikanti et al. 2022 eq. 2 with tensor parallelism,
   * s h (10 + 24/t + 5 a s/(h t)) bytes per layer at 2 bytes an element */
  double a = (double)q->heads, s = (double)q->seq, h = (double)q->hidden;
  c->act_elems = q->recompute ? n * sh : n * sh * (10 + 24 / t + 5 * a * s / (h * t)) / 2;
  c->params = 0; /* counted per device from tensor_stage_dp_elements (tf_attach) */
}

/* Elements of one stage boundary: b s h. */
static size_t tf_boundary(const struct pipeline *pl)
{
  return pl->tp.microbatch * pl->tp.seq * pl->tp.hidden;
}

/* Numerics of a device: each chunk's stage takes its entries of the initial model; the
 * packed vector is read back from them. */
static void tf_attach_numerics(struct pipeline *pl, device *d, tf_device *k)
{
  size_t p = pl->p->stages, v = pl->p->chunks;
  k->n = (size_t)k->dp_elems;
  k->off = xbt_malloc0(v * sizeof(size_t));
  k->w = xbt_malloc0(k->n * sizeof(double));
  k->g = xbt_malloc0(k->n * sizeof(double));
  k->sh_off = 0;
  k->sh_len = k->n;
  if (pl->p->zero == 1 && pl->dcomm)
    coll_block(k->n, pl->dp, d->lane / pl->t, &k->sh_off, &k->sh_len);
  k->m1 = xbt_malloc0(k->sh_len * sizeof(double)); /* Adam's moments of the entries it updates */
  k->m2 = xbt_malloc0(k->sh_len * sizeof(double));
  k->bin = xbt_malloc0(tf_boundary(pl) * sizeof(double));
  k->bout = xbt_malloc0(tf_boundary(pl) * sizeof(double));
  size_t off = 0;
  for (size_t i = 0; i < v; i++) {
    const chunk *ch = &pl->chunks[i * p + d->rank];
    xbt_assert(tensor_stage_numerics(k->ts[i], &pl->gd, ch->first - 1, pl->p->microbatches, pl->w0) == 0,
               "pipeline: a stage refused the GPT's shapes");
    k->off[i] = off;
    tensor_stage_get_params(k->ts[i], k->w + off);
    off += (size_t)tensor_stage_dp_elements(k->ts[i]);
    k->nrep += tensor_stage_replicated(k->ts[i]);
  }
  xbt_assert(off == k->n, "pipeline: packed %zu entries, the allreduce has %zu", off, k->n);
  k->rep = xbt_malloc0(k->nrep * sizeof(double));
}

static void tf_attach(struct pipeline *pl, device *d)
{
  tf_device *k = xbt_malloc0(sizeof(*k));
  size_t p = pl->p->stages, j = d->lane / pl->t, r = d->lane % pl->t;
  k->ts = xbt_malloc0(pl->p->chunks * sizeof(tensor_stage *));
  for (size_t c = d->rank; c < pl->K; c += p) {
    const chunk *ch = &pl->chunks[c];
    tensor_stage *ts = tensor_stage_create(pl->cfg, &pl->tp, pl->tcomm[d->rank * pl->dp + j], r,
                                           ch->last - ch->first + 1, c == 0, c + 1 == pl->K);
    xbt_assert(ts != NULL, "pipeline: tensor_stage_create refused a validated shape");
    k->ts[c / p] = ts;
    k->dp_elems += tensor_stage_dp_elements(ts);
  }
  d->st.params = k->dp_elems;
  d->ks = k;
  if (pl->p->zero == 3 && pl->dcomm)
    zero_attach(pl, d, k);
  if (pl->numeric)
    tf_attach_numerics(pl, d, k);
}

static void tf_detach(device *d)
{
  tf_device *k = d->ks;
  if (k == NULL)
    return;
  for (size_t i = 0; i < d->pl->p->chunks; i++)
    tensor_stage_free(k->ts[i]);
  xbt_free(k->ts);
  double *v[] = {k->w, k->g, k->m1, k->m2, k->rep, k->bin, k->bout};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    xbt_free(v[i]);
  xbt_free(k->off);
  zero3_free(k->zq);
  xbt_free(k->zlayers);
  xbt_free(k->zfirst);
  xbt_free(k->zlast);
  xbt_free(k);
  d->ks = NULL;
}

/* Replica j's microbatch mb: b sequences of the step's draw. */
static const double *tf_seqs(const struct pipeline *pl, size_t j, long mb)
{
  size_t row = (j * (size_t)pl->p->microbatches + (size_t)mb) * pl->tp.microbatch;
  return gsl_matrix_const_ptr(pl->seqs, row, 0);
}

/* With scatter/gather (t > 1) a boundary message is the rank's block of the b s h elements
 * (collectives.h's coll_block: its rows with sequence parallelism); else all of them. */
static void tf_slice(const struct pipeline *pl, size_t r, size_t *off, size_t *len)
{
  if (pl->p->scatter_gather && pl->t > 1)
    coll_block(tf_boundary(pl), pl->t, r, off, len);
  else {
    *off = 0;
    *len = tf_boundary(pl);
  }
}

static void tf_compute(const struct pipeline *pl, device *d, const chunk *c, kernel_phase ph, double examples,
                       const kernel_io *io)
{
  (void)examples; /* the stage's microbatch is tensor.microbatch */
  tf_device *k = d->ks;
  tensor_stage *ts = k->ts[(size_t)(c - pl->chunks) / pl->p->stages];
  xbt_assert(ph != PHASE_RECOMPUTE, "pipeline: transformer stages recompute inside their backward");
  if (!pl->numeric) {
    size_t i = (size_t)(c - pl->chunks) / pl->p->stages;
    if (k->zq)
      zero3_pass_begin(k->zq, i, ph == PHASE_BACKWARD);
    if (ph == PHASE_FORWARD)
      tensor_stage_forward(ts, 0, NULL, NULL, NULL);
    else
      tensor_stage_backward(ts, 0, NULL, NULL, NULL);
    if (k->zq)
      zero3_pass_end(k->zq, i, ph == PHASE_BACKWARD);
    return;
  }
  const double *seqs = tf_seqs(pl, d->lane / pl->t, io->mb);
  double *out = io->out ? k->bout : NULL;
  if (ph == PHASE_FORWARD)
    tensor_stage_forward(ts, io->mb, seqs, k->bin, out);
  else
    tensor_stage_backward(ts, io->mb, seqs, k->bin, out);
  if (out) {
    size_t off, len;
    tf_slice(pl, d->lane % pl->t, &off, &len);
    xbt_assert(io->out->n == len, "pipeline: a boundary message of %zu elements, the slice has %zu", io->out->n, len);
    memcpy(io->out->data, out + off, len * sizeof(double));
  }
}

/* PTD-P sec. 4.1: the slices that came from the t ranks of the other stage, allgathered
 * so every rank of the group holds the whole b s h. With numerics the message's elements
 * go to their place in the boundary buffer first. (With sequence parallelism the rank's own
 * rows were its slice already: the allgather is kept, as the timing model has it.) */
static void tf_received(const struct pipeline *pl, device *d, const chunk *c, double examples, const kernel_io *io)
{
  (void)c;
  tf_device *k = d->ks;
  size_t j = d->lane / pl->t, r = d->lane % pl->t;
  if (pl->numeric) {
    size_t off, len;
    tf_slice(pl, r, &off, &len);
    xbt_assert(io->in->n == len, "pipeline: a boundary message of %zu elements, the slice has %zu", io->in->n, len);
    memcpy(k->bin + off, io->in->data, len * sizeof(double));
  }
  if (!pl->p->scatter_gather || pl->t == 1)
    return;
  coll_allgather(pl->tcomm[d->rank * pl->dp + j], r, pl->numeric ? k->bin : NULL,
                 (size_t)examples * pl->tp.seq * pl->tp.hidden);
}

/* Numerics only, before the data-parallel allreduce: with sequence parallelism each rank's
 * replicated gradients (LayerNorms, bo, b2) are its rows' share, so its tensor group sums
 * them, one allreduce of all its chunks' (Megatron-LM allreduces the sequence-parallel
 * LayerNorm gradients over the tensor group before the data-parallel one). */
static void tf_sum_replicated(struct pipeline *pl, device *d, tf_device *k)
{
  size_t j = d->lane / pl->t, r = d->lane % pl->t, at = 0;
  for (size_t i = 0; i < pl->p->chunks; i++) {
    size_t n = tensor_stage_replicated(k->ts[i]);
    memcpy(k->rep + at, k->g + k->off[i], n * sizeof(double));
    at += n;
  }
  coll_allreduce(pl->tcomm[d->rank * pl->dp + j], r, k->rep, k->nrep, COLL_RING);
  at = 0;
  for (size_t i = 0; i < pl->p->chunks; i++) {
    size_t n = tensor_stage_replicated(k->ts[i]);
    memcpy(k->g + k->off[i], k->rep + at, n * sizeof(double));
    at += n;
  }
}

/* The tied embedding's gradient entries of local chunk i (its V/t rows), or NULL. */
static double *tf_embedding(tf_device *k, size_t i)
{
  size_t e = tensor_stage_embedding_offset(k->ts[i]);
  return e < (size_t)tensor_stage_dp_elements(k->ts[i]) ? k->g + k->off[i] + e : NULL;
}

/* The optimizer on the device's block of the packed entries (all of them but with
 * pipeline.zero = 1), the same rule as the serial model's element by element
 * (pipeline_serial_check): the step's gradient is the mean over the m d microbatches. */
static void tf_update(struct pipeline *pl, tf_device *k)
{
  double scale = 1.0 / ((double)pl->p->microbatches * (double)pl->dp);
  double *w = k->w + k->sh_off, *g = k->g + k->sh_off;
  for (size_t i = 0; i < k->sh_len; i++)
    g[i] *= scale;
  k->updates++;
  if (pl->p->optimizer == PIPELINE_OPT_ADAM)
    optim_adam_apply(w, k->m1, k->m2, g, k->sh_len, pl->p->lr, OPTIM_ADAM_B1, OPTIM_ADAM_B2, OPTIM_ADAM_EPS,
                     k->updates);
  else
    optim_sgd_apply(w, g, k->sh_len, pl->p->lr);
}

static void tf_set_params(struct pipeline *pl, tf_device *k)
{
  for (size_t i = 0; i < pl->p->chunks; i++)
    tensor_stage_set_params(k->ts[i], k->w + k->off[i]);
}

/* The first and last stage's allreduce of the tied embedding's V h / t rows (emb: their
 * gradients with numerics, else NULL). */
static void tf_tie(struct pipeline *pl, device *d, double *emb)
{
  size_t p = pl->p->stages;
  if (pl->ecomm && (d->rank == 0 || d->rank == p - 1))
    coll_allreduce(pl->ecomm[d->lane], d->rank == 0 ? 0 : 1, emb, pl->tp.vocab * pl->tp.hidden / pl->t, COLL_RING);
}

/* ZeRO-1 (pipeline.zero = 1, d > 1): the tie first (its two ends' packed blocks differ, so it
 * goes before the gradient is scattered, as Megatron-LM's distributed optimizer orders them),
 * then the ring reduce-scatter of the gradient over the data-parallel group, the update of the
 * device's block, and the ring allgather of the updated parameters: one bucket each, as the
 * allreduce they replace, whose two halves they are (the same bytes). */
static void tf_flush_zero1(struct pipeline *pl, device *d, tf_device *k, double *emb)
{
  size_t j = d->lane / pl->t, r = d->lane % pl->t, n = (size_t)k->dp_elems;
  coll_comm *dc = pl->dcomm[d->rank * pl->t + r];
  tf_tie(pl, d, emb);
  coll_reduce_scatter(dc, j, pl->numeric ? k->g : NULL, n);
  if (pl->numeric)
    tf_update(pl, k);
  coll_allgather(dc, j, pl->numeric ? k->w : NULL, n);
  k->z1_scattered += (double)n;
  k->z1_gathered += (double)n;
}

/* The flush (PTD-P sec. 2, Megatron-LM's finalize): each (stage, tensor rank) allreduces
 * its gradients across the d replicas (ring, one bucket), then the first and last stage
 * allreduce the tied embedding's V h / t rows; the optimizer costs no simulated time, as in
 * tensor.c. With numerics these sum the packed gradients, then the optimizer updates them.
 * ZeRO-3 has reduce-scattered the gradients already; ZeRO-1 scatters them here
 * (tf_flush_zero1). */
static void tf_flush(struct pipeline *pl, device *d)
{
  tf_device *k = d->ks;
  size_t j = d->lane / pl->t, r = d->lane % pl->t, p = pl->p->stages, v = pl->p->chunks;
  double *g = pl->numeric ? k->g : NULL, *emb = NULL;
  if (pl->numeric) {
    for (size_t i = 0; i < v; i++)
      tensor_stage_take_grads(k->ts[i], k->g + k->off[i]);
    if (d->rank == p - 1 && pl->tp.vocab)
      k->loss = tensor_stage_take_loss(k->ts[v - 1]);
    emb = d->rank == 0 ? tf_embedding(k, 0) : d->rank == p - 1 ? tf_embedding(k, v - 1) : NULL;
    if (p == 1 && v > 1) { /* both ends of the model on this device: their tie is a local sum */
      double *last = tf_embedding(k, v - 1);
      for (size_t i = 0; i < pl->tp.vocab / pl->t * pl->tp.hidden; i++)
        last[i] = emb[i] += last[i];
    }
  }
  if (d->flushing) /* its mirrors join the flush now */
    for (size_t i = 1; i < pl->dp; i++)
      sg_sem_release(d->flushing);
  double t0 = simgrid_get_clock();
  if (pl->numeric && pl->tp.seqpar && pl->t > 1)
    tf_sum_replicated(pl, d, k);
  if (pl->p->zero == 1 && pl->dcomm) {
    tf_flush_zero1(pl, d, k, emb);
    d->st.update_s += simgrid_get_clock() - t0;
    if (pl->numeric)
      tf_set_params(pl, k);
    return;
  }
  if (k->zq) /* ZeRO-3: the last reduce-scatters end; nothing is left to allreduce */
    zero3_flush(k->zq);
  else if (pl->dcomm)
    coll_allreduce(pl->dcomm[d->rank * pl->t + r], j, g, (size_t)k->dp_elems, COLL_RING);
  tf_tie(pl, d, emb);
  d->st.update_s += simgrid_get_clock() - t0;
  if (pl->numeric) {
    tf_update(pl, k);
    tf_set_params(pl, k);
  }
}

/* The GPT, its language, its initial parameters and held-out measures, and the draws. */
static void tf_numerics(struct pipeline *pl)
{
  const run_config *cfg = pl->cfg;
  const tensor_params *q = &pl->tp;
  const scenario *sc = cfg->sc;
  pl->gd = (gpt_dims){q->vocab, q->seq, q->hidden, q->heads, q->layers, {0}};
  size_t ntr = (size_t)sc->data.train, nte = (size_t)sc->data.test;
  gsl_rng *r = rng_create(cfg->seed, RNG_ROLE_DATA, 0);
  dataset *all = data_synthetic_tokens(ntr + nte, q->seq + 1, q->vocab, r);
  gsl_rng_free(r);
  xbt_assert(all, "pipeline: the token language refused validated sizes");
  pl->tok_train = data_slice(all, 0, ntr);
  pl->tok_test = data_slice(all, ntr, ntr + nte);
  data_free(all);
  pl->w0 = gsl_vector_alloc(gpt_n_params(&pl->gd));
  r = rng_create(cfg->seed, RNG_ROLE_INIT, 0);
  gpt_init_params(&pl->gd, r, pl->w0);
  gsl_rng_free(r);
  pl->w_pub = gsl_vector_alloc(pl->w0->size);
  gsl_vector_memcpy(pl->w_pub, pl->w0);
  xbt_assert(gpt_evaluate(&pl->gd, pl->w0, data_n(pl->tok_test), pl->tok_test->X->data, &pl->initial_loss,
                          &pl->initial_accuracy) == 0,
             "pipeline: held-out sequences do not fit the GPT");
  size_t rows = (size_t)pl->p->microbatches * q->microbatch * pl->dp;
  pl->seqs = gsl_matrix_alloc(rows, q->seq + 1);
  pl->seq_y = xbt_malloc0(rows * sizeof(double));
  pl->rng = rng_create(cfg->seed, RNG_ROLE_WORKER, 0);
  pl->train_loss = NAN;
}

/* Replica 0's devices hold every entry once per tensor rank; the replicated ones are equal
 * on every rank (tested: pipeline_copies_diff), so the last writer's are everyone's. */
static void tf_publish(struct pipeline *pl)
{
  double loss = 0;
  for (size_t i = 0; i < pl->n_devs; i++) {
    device *d = &pl->devs[i];
    tf_device *k = d->ks;
    for (size_t c = 0; d->lane < pl->t && c < pl->p->chunks; c++)
      tensor_stage_export(k->ts[c], pl->w_pub);
    if (d->rank == pl->p->stages - 1 && d->lane % pl->t == 0)
      loss += k->loss;
  }
  pl->train_loss = loss / ((double)pl->p->microbatches * (double)pl->dp);
}

static void tf_draw(struct pipeline *pl)
{
  data_sample_batch(pl->tok_train, 0, data_n(pl->tok_train), pl->rng, pl->seqs->size1, pl->seqs, pl->seq_y);
}

const chunk_kernel pipeline_gpt_kernel = {tf_costs, tf_attach,   tf_detach,  tf_compute, tf_received,
                                         tf_flush, tf_numerics, tf_publish, tf_draw,    NULL,
                                         NULL,     NULL,        NULL,       NULL};

/* The evaluator's measures of the whole model's parameters w. */
int pipeline_gpt_measure(void *ctx, const gsl_vector *w, double *loss, double *accuracy)
{
  pipeline *pl = ctx;
  return gpt_evaluate(&pl->gd, w, data_n(pl->tok_test), pl->tok_test->X->data, loss, accuracy);
}

/* ---- after the run ------------------------------------------------------------ */

int pipeline_zero_get(const pipeline *pl, double *gathered, double *scattered, double *layer_elems)
{
  const tf_device *k = pl->p->transformer && pl->n_devs ? pl->devs[0].ks : NULL;
  if (k != NULL && k->zq != NULL) {
    zero3_counts(k->zq, gathered, scattered, layer_elems);
    return 0;
  }
  if (k == NULL || pl->p->zero != 1 || pl->dcomm == NULL)
    return -1;
  *gathered = k->z1_gathered;
  *scattered = k->z1_scattered;
  *layer_elems = 0;
  return 0;
}

int pipeline_gpt_get(const pipeline *pl, pipeline_gpt_result *r)
{
  memset(r, 0, sizeof(*r));
  if (pl->w0 == NULL)
    return -1;
  r->dims = &pl->gd;
  r->w = pl->w_pub;
  r->w0 = pl->w0;
  for (size_t i = 0; i < pl->n_devs; i++) {
    const tf_device *k = pl->devs[i].ks;
    for (size_t c = 0; c < pl->p->chunks; c++)
      r->copies_diff = fmax(r->copies_diff, tensor_stage_diff(k->ts[c], pl->w_pub));
  }
  r->initial_loss = pl->initial_loss;
  r->initial_accuracy = pl->initial_accuracy;
  r->train_loss = pl->train_loss;
  r->train_sequences = data_n(pl->tok_train);
  r->test_sequences = data_n(pl->tok_test);
  return 0;
}

void pipeline_gpt_serial(const pipeline *pl, long steps, gsl_vector *ws)
{
  xbt_assert(pl->w0 && ws->size == pl->w0->size, "pipeline_gpt_serial: not a numeric transformer run");
  size_t n = ws->size, b = pl->tp.microbatch, m = (size_t)pl->p->microbatches;
  gsl_vector *g = gsl_vector_alloc(n), *g1 = gsl_vector_alloc(n);
  double *m1 = xbt_malloc0(n * sizeof(double)), *m2 = xbt_malloc0(n * sizeof(double));
  gsl_matrix *X = gsl_matrix_alloc(pl->seqs->size1, pl->seqs->size2);
  double *y = xbt_malloc0(X->size1 * sizeof(double)), loss;
  gsl_rng *r = rng_create(pl->cfg->seed, RNG_ROLE_WORKER, 0); /* device 0's stream: the same draws */
  gsl_vector_memcpy(ws, pl->w0);
  for (long step = 1; step <= steps; step++) {
    data_sample_batch(pl->tok_train, 0, data_n(pl->tok_train), r, X->size1, X, y);
    gsl_vector_set_zero(g);
    for (size_t j = 0; j < pl->dp; j++)
      for (size_t mb = 0; mb < m; mb++) {
        xbt_assert(gpt_loss_grad(&pl->gd, ws, b, gsl_matrix_const_ptr(X, (j * m + mb) * b, 0), &loss, g1) == 0,
                   "pipeline_gpt_serial: shapes");
        gsl_vector_add(g, g1);
      }
    gsl_vector_scale(g, 1.0 / ((double)m * (double)pl->dp));
    if (pl->p->optimizer == PIPELINE_OPT_ADAM)
      optim_adam_apply(ws->data, m1, m2, g->data, n, pl->p->lr, OPTIM_ADAM_B1, OPTIM_ADAM_B2, OPTIM_ADAM_EPS, step);
    else
      optim_sgd_apply(ws->data, g->data, n, pl->p->lr);
  }
  gsl_rng_free(r);
  gsl_vector_free(g);
  gsl_vector_free(g1);
  gsl_matrix_free(X);
  xbt_free(y);
  xbt_free(m1);
  xbt_free(m2);
}

/* tensor_stage.c - the tensor-parallel stage (tensor_stage.h): one rank's share of a block
 * of Megatron-LM GPT layers (Shoeybi et al. 2019 sec. 3) for another algorithm's actor, as
 * the 3D stages of PTD-P (Narayanan et al. 2021) run them; with numerics its weights,
 * stashes, embedding and logits shards and their packed data-parallel vectors. Also the
 * counts the tensor algorithm and pipeline share: data-parallel elements and buckets, flops,
 * memory, shape checks. The layer passes themselves are tensor_stage_layers.c's. */
#include "algorithms/tensor_stage.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <simgrid/host.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/compute.h"
#include "algorithms/tensor_stage_impl.h"
#include "models/gpt.h"
#include "models/transformer.h"

/* ---- the counts and checks the tensor algorithm and pipeline share --------------- */

double tensor_dp_elements(const tensor_params *p)
{
  double h = (double)p->hidden;
  double layers = (double)p->layers * ((12 * h * h + 7 * h) / (double)p->ranks + 6 * h);
  /* the rank's V/t embedding rows (tied with the logits), the replicated position
   * embedding (s x h) and final LayerNorm (2h) */
  double vocab = p->vocab ? (double)p->vocab * h / (double)p->ranks + (double)p->seq * h + 2 * h : 0;
  return layers + vocab;
}

/* Gradient units in backward order: layer L-1 down to layer 0, then the embedding. */
static size_t dp_units(const tensor_params *p) { return p->layers + (p->vocab ? 1 : 0); }

static double unit_elements(const tensor_params *p, size_t u)
{
  double h = (double)p->hidden;
  if (u < p->layers)
    return (12 * h * h + 7 * h) / (double)p->ranks + 6 * h;
  return (double)p->vocab * h / (double)p->ranks + (double)p->seq * h + 2 * h;
}

size_t tensor_dp_buckets(const tensor_params *p, size_t elem_bytes, double *elems, size_t *last)
{
  size_t nb = 0, n = dp_units(p);
  double acc = 0;
  for (size_t u = 0; u < n; u++) {
    acc += unit_elements(p, u);
    if (u == n - 1 || acc * (double)elem_bytes >= p->bucket_bytes) {
      if (elems)
        elems[nb] = acc;
      if (last)
        last[nb] = u;
      nb++;
      acc = 0;
    }
  }
  return nb;
}

double tensor_microbatch_flops(const tensor_params *p)
{
  double logits = 2.0 * (double)p->microbatch * (double)p->seq * (double)p->hidden * (double)p->vocab;
  return (p->recompute ? 4.0 : 3.0) * tensor_layer_flops(p) * (double)p->layers + 3.0 * logits;
}

double tensor_layer_flops(const tensor_params *p)
{
  transformer_dims d = {p->microbatch, p->seq, p->hidden, p->heads};
  return transformer_layer_flops(&d);
}

int tensor_validate_shapes(const tensor_params *p, char *why, size_t len)
{
  if (p->hidden % p->heads != 0)
    snprintf(why, len, "tensor.heads: %zu heads do not divide tensor.hidden = %zu", p->heads, p->hidden);
  else if (p->heads % p->ranks != 0)
    snprintf(why, len, "tensor.ranks: %zu ranks must divide tensor.heads = %zu (each rank owns whole heads)",
             p->ranks, p->heads);
  else if (p->seqpar && p->seq % p->ranks != 0)
    snprintf(why, len, "tensor.seq: sequence parallelism cuts %zu tokens into %zu equal shards", p->seq, p->ranks);
  else if (p->vocab % p->ranks != 0)
    snprintf(why, len, "tensor.vocab: %zu ranks must divide the vocabulary V = %zu (each rank owns V / t rows)",
             p->ranks, p->vocab);
  else
    return 0;
  return -1;
}

int tensor_validate_fuse(const scenario *sc, const tensor_params *p, char *why, size_t len)
{
  if (!p->fuse || !sc->model.numerics)
    return 0;
  snprintf(why, len, "tensor.fuse_layers: fused layer passes are timing only; set model.numerics = off or "
           "tensor.fuse_layers = off");
  return -1;
}

int tensor_check_mem_bw(const tensor_params *p, const run_config *cfg, char *err, size_t len)
{
  static const char *const names[] = {"none", "unfused", "fused"};
  if (p->kernels == TRANSFORMER_KERNELS_NONE)
    return 0;
  for (size_t i = 0; i < cfg->n_hosts; i++)
    if (compute_host_mem_bw(cfg->hosts[i]) <= 0) {
      snprintf(err, len, "tensor.kernels = %s: host %s has no mem_bw property (bytes/s, e.g. <prop id=\"mem_bw\" "
               "value=\"900e9\"/>); the dgx2h and selene presets have it", names[p->kernels],
               sg_host_get_name(cfg->hosts[i]));
      return -1;
    }
  return 0;
}

double tensor_optimizer_bytes_per_param(size_t elem_bytes) { return elem_bytes < 4 ? 12 : 8; }

double tensor_layer_activation_bytes(const tensor_params *p)
{
  double sbh = (double)p->seq * (double)p->microbatch * (double)p->hidden, t = (double)p->ranks;
  double as_h = 5 * (double)p->heads * (double)p->seq / (double)p->hidden;
  if (p->recompute)
    return 2 * sbh / (p->seqpar ? t : 1);
  return p->seqpar ? sbh * (34 + as_h) / t : sbh * (10 + 24 / t + as_h / t);
}

/* ---- a tensor-parallel pipeline stage ---------------------------------------------- */

struct tensor_stage {
  tensor t;            /* the shapes and options, with p.layers = the stage's layers */
  tensor_params p;
  rank rk;
  int first, last;
  stage_num sn;        /* numerics (rk.sn points here), else zero */
};

tensor_stage *tensor_stage_create(const run_config *cfg, const tensor_params *p, coll_comm *tc, size_t me,
                                  size_t layers, int first, int last)
{
  transformer_dims d = {p->microbatch, p->seq, p->hidden, p->heads};
  if (tc == NULL || me >= p->ranks || transformer_dims_check(&d) != 0 || p->heads % p->ranks != 0 ||
      (p->seqpar && p->seq % p->ranks != 0) || (p->vocab && p->vocab % p->ranks != 0))
    return NULL;
  tensor_stage *ts = xbt_malloc0(sizeof(*ts));
  ts->p = *p;
  ts->p.layers = layers;
  ts->t.cfg = cfg;
  ts->t.p = &ts->p;
  ts->t.d = d;
  ts->t.n = d.b * d.s;
  ts->rk.tp = &ts->t;
  ts->rk.me = me;
  ts->rk.tc = tc;
  ts->rk.has_gpu = compute_gpu(cfg, coll_comm_host(tc, me), &ts->rk.gpu);
  if (ts->rk.has_gpu)
    tensor_rank_gpu_times(&ts->rk);
  ts->first = first;
  ts->last = last;
  return ts;
}

/* The rank's rows [row0, row0 + rows) of an n x h buffer. */
static gsl_matrix_view rows_of(const stage_num *sn, double *buf, size_t h)
{
  return gsl_matrix_view_array(buf + sn->row0 * h, sn->rows, h);
}

int tensor_stage_numerics(tensor_stage *ts, const gpt_dims *g, size_t layer0, long microbatches, const gsl_vector *w)
{
  const tensor_params *p = &ts->p;
  stage_num *sn = &ts->sn;
  rank *rk = &ts->rk;
  size_t L = p->layers, h = p->hidden, t = p->ranks, me = rk->me, m = (size_t)microbatches;
  gpt_layout gl;
  gpt_layout_of(g, &gl);
  if (gpt_dims_check(g) != 0 || g->hidden != h || g->heads != p->heads || g->seq != p->seq || g->vocab != p->vocab ||
      layer0 + L > g->layers || microbatches < 1 || w->size != gl.total || w->stride != 1 || rk->sn != NULL)
    return -1;
  sn->g = *g;
  sn->layer0 = layer0;
  sn->m = m;
  size_t slots = p->recompute ? 1 : m;
  sn->parts = xbt_malloc0(slots * sizeof(transformer_part **));
  for (size_t k = 0; k < slots; k++) {
    sn->parts[k] = xbt_malloc0(L * sizeof(transformer_part *));
    for (size_t l = 0; l < L; l++) {
      sn->parts[k][l] = transformer_part_create(&ts->t.d, t, me, p->seqpar);
      xbt_assert(sn->parts[k][l], "tensor stage: a validated split was refused");
    }
  }
  transformer_part_rows(sn->parts[0][0], &sn->row0, &sn->rows);
  sn->act = xbt_malloc0(m * sizeof(gsl_matrix **));
  for (size_t k = 0; k < m; k++) {
    sn->act[k] = xbt_malloc0((L + 1) * sizeof(gsl_matrix *));
    for (size_t l = 0; l <= L; l++)
      sn->act[k][l] = gsl_matrix_calloc(sn->rows, h);
  }
  transformer_shard_ranges(h, t, me, 1, sn->rep, 4);
  sn->nsplit = transformer_shard_ranges(h, t, me, 0, NULL, 0);
  sn->split = xbt_malloc(sn->nsplit * sizeof(transformer_range));
  transformer_shard_ranges(h, t, me, 0, sn->split, sn->nsplit);
  sn->w = xbt_malloc0(L * sizeof(gsl_vector *));
  rk->gacc = xbt_malloc0(L * sizeof(gsl_vector *));
  for (size_t l = 0; l < L; l++) {
    /* the rank reads only its own entries: any other would spread NaN into every result */
    sn->w[l] = gsl_vector_alloc(gl.layer_size);
    gsl_vector_set_all(sn->w[l], NAN);
    const double *src = w->data + gl.layer0 + (layer0 + l) * gl.layer_size;
    for (size_t k = 0; k < 4; k++)
      memcpy(sn->w[l]->data + sn->rep[k].off, src + sn->rep[k].off, sn->rep[k].len * sizeof(double));
    for (size_t k = 0; k < sn->nsplit; k++)
      memcpy(sn->w[l]->data + sn->split[k].off, src + sn->split[k].off, sn->split[k].len * sizeof(double));
    rk->gacc[l] = gsl_vector_calloc(gl.layer_size);
  }
  ts->t.w = sn->w;
  rk->gtmp = gsl_vector_alloc(gl.layer_size);
  rk->dcur = gsl_matrix_calloc(sn->rows, h);
  rk->dnext = gsl_matrix_calloc(sn->rows, h);
  size_t vl = p->vocab / t;
  if (ts->first || ts->last) {
    sn->E = xbt_malloc(vl * h * sizeof(double));
    memcpy(sn->E, w->data + gl.embed + me * vl * h, vl * h * sizeof(double));
    sn->dE = xbt_malloc0(vl * h * sizeof(double));
  }
  if (ts->first) {
    sn->P = xbt_malloc(p->seq * h * sizeof(double));
    memcpy(sn->P, w->data + gl.pos, p->seq * h * sizeof(double));
    sn->dP = xbt_malloc0(p->seq * h * sizeof(double));
    sn->emb = gsl_matrix_calloc(ts->t.n, h);
  }
  if (ts->last) {
    sn->lnf = xbt_malloc(2 * h * sizeof(double));
    memcpy(sn->lnf, w->data + gl.lnf_g, 2 * h * sizeof(double));
    sn->dlnf = xbt_malloc0(2 * h * sizeof(double));
    sn->head = xbt_malloc0(m * sizeof(gpt_head *));
    for (size_t k = 0; k < m; k++) {
      sn->head[k] = gpt_head_create(g, t, me, p->microbatch, sn->row0, sn->rows);
      xbt_assert(sn->head[k], "tensor stage: the logits do not split");
    }
  }
  rk->sn = sn;
  return 0;
}

/* Microbatch mb's stash becomes the rank's current activations. */
static void stage_use(tensor_stage *ts, long mb, const double *seqs)
{
  stage_num *sn = &ts->sn;
  xbt_assert(mb >= 0 && (size_t)mb < sn->m, "tensor stage: microbatch %ld of %zu", mb, sn->m);
  ts->rk.act = sn->act[mb];
  ts->rk.parts = sn->parts[ts->p.recompute ? 0 : mb];
  sn->cur = sn->head ? sn->head[mb] : NULL;
  sn->seqs = seqs;
}

void tensor_stage_forward(tensor_stage *ts, long mb, const double *seqs, const double *in, double *out)
{
  stage_num *sn = ts->rk.sn;
  size_t h = ts->p.hidden;
  if (sn) {
    stage_use(ts, mb, seqs);
    if (!ts->first) {
      gsl_matrix_view x = rows_of(sn, (double *)in, h);
      gsl_matrix_memcpy(ts->rk.act[0], &x.matrix);
    }
  }
  tensor_rank_forward(&ts->rk, ts->first, ts->last);
  if (sn && out) {
    gsl_matrix_view z = rows_of(sn, out, h);
    gsl_matrix_memcpy(&z.matrix, ts->rk.act[ts->p.layers]);
  }
}

void tensor_stage_backward(tensor_stage *ts, long mb, const double *seqs, const double *dout, double *din)
{
  stage_num *sn = ts->rk.sn;
  size_t h = ts->p.hidden;
  if (sn) {
    stage_use(ts, mb, seqs);
    if (!ts->last) {
      gsl_matrix_view dz = rows_of(sn, (double *)dout, h);
      gsl_matrix_memcpy(ts->rk.dcur, &dz.matrix);
    }
  }
  tensor_rank_backward(&ts->rk, ts->first, ts->last);
  if (sn && din) {
    gsl_matrix_view dx = rows_of(sn, din, h);
    gsl_matrix_memcpy(&dx.matrix, ts->rk.dcur);
  }
}

void tensor_stage_set_hook(tensor_stage *ts, tensor_stage_hook fn, void *ctx)
{
  ts->rk.hook = fn;
  ts->rk.hook_ctx = ctx;
}

double tensor_stage_layer_elements(const tensor_stage *ts)
{
  tensor_params one = ts->p;
  one.layers = 1;
  one.vocab = 0;
  return tensor_dp_elements(&one);
}

double tensor_stage_dp_elements(const tensor_stage *ts)
{
  tensor_params q = ts->p;
  double h = (double)q.hidden;
  q.vocab = 0;
  double e = tensor_dp_elements(&q);
  /* tied embedding: first and last stage each hold the V/t rows; position embedding on the
   * first, final LayerNorm on the last */
  if (ts->p.vocab && (ts->first || ts->last))
    e += (double)ts->p.vocab * h / (double)ts->p.ranks;
  if (ts->p.vocab && ts->first)
    e += (double)ts->p.seq * h;
  if (ts->p.vocab && ts->last)
    e += 2 * h;
  return e;
}

/* The packed order (tensor.h): every block of the stage in turn, as (parameters, gradients,
 * length, offset in the whole model's vector). */
typedef struct stage_block {
  double *w, *g;
  size_t len, model_off;
} stage_block;

/* Calls fn on each block of the stage in the packed order, with its offset in the packed
 * vector; returns the vector's length. */
static size_t stage_walk(tensor_stage *ts, void (*fn)(void *ctx, const stage_block *b, size_t off), void *ctx)
{
  stage_num *sn = ts->rk.sn;
  size_t L = ts->p.layers, h = ts->p.hidden, off = 0, vl = ts->p.vocab / ts->p.ranks;
  gpt_layout gl;
  gpt_layout_of(&sn->g, &gl);
  for (size_t l = 0; l < L; l++) /* replicated entries first: [0, tensor_stage_replicated) */
    for (size_t k = 0; k < 4; k++) {
      stage_block b = {sn->w[l]->data + sn->rep[k].off, ts->rk.gacc[l]->data + sn->rep[k].off, sn->rep[k].len,
                       gl.layer0 + (sn->layer0 + l) * gl.layer_size + sn->rep[k].off};
      fn(ctx, &b, off);
      off += b.len;
    }
  if (ts->last) {
    stage_block b = {sn->lnf, sn->dlnf, 2 * h, gl.lnf_g};
    fn(ctx, &b, off);
    off += b.len;
  }
  for (size_t l = 0; l < L; l++)
    for (size_t k = 0; k < sn->nsplit; k++) {
      stage_block b = {sn->w[l]->data + sn->split[k].off, ts->rk.gacc[l]->data + sn->split[k].off, sn->split[k].len,
                       gl.layer0 + (sn->layer0 + l) * gl.layer_size + sn->split[k].off};
      fn(ctx, &b, off);
      off += b.len;
    }
  if (ts->first) {
    stage_block b = {sn->P, sn->dP, ts->p.seq * h, gl.pos};
    fn(ctx, &b, off);
    off += b.len;
  }
  if (ts->first || ts->last) {
    stage_block b = {sn->E, sn->dE, vl * h, gl.embed + ts->rk.me * vl * h};
    fn(ctx, &b, off);
    off += b.len;
  }
  return off;
}

static void nothing(void *ctx, const stage_block *b, size_t off)
{
  (void)ctx, (void)b, (void)off;
}

size_t tensor_stage_replicated(const tensor_stage *ts)
{
  return ts->p.layers * 6 * ts->p.hidden + (ts->last ? 2 * ts->p.hidden : 0);
}

size_t tensor_stage_embedding_offset(const tensor_stage *ts)
{
  size_t n = stage_walk((tensor_stage *)ts, nothing, NULL);
  return ts->first || ts->last ? n - ts->p.vocab / ts->p.ranks * ts->p.hidden : n;
}

static void take_grad(void *ctx, const stage_block *b, size_t off)
{
  memcpy((double *)ctx + off, b->g, b->len * sizeof(double));
  memset(b->g, 0, b->len * sizeof(double));
}

static void take_param(void *ctx, const stage_block *b, size_t off)
{
  memcpy((double *)ctx + off, b->w, b->len * sizeof(double));
}

static void put_param(void *ctx, const stage_block *b, size_t off)
{
  memcpy(b->w, (const double *)ctx + off, b->len * sizeof(double));
}

static void export_param(void *ctx, const stage_block *b, size_t off)
{
  (void)off;
  memcpy(((gsl_vector *)ctx)->data + b->model_off, b->w, b->len * sizeof(double));
}

typedef struct diff_ctx {
  const gsl_vector *w;
  double d;
} diff_ctx;

static void diff_param(void *ctx, const stage_block *b, size_t off)
{
  (void)off;
  diff_ctx *c = ctx;
  for (size_t i = 0; i < b->len; i++)
    c->d = fmax(c->d, fabs(b->w[i] - c->w->data[b->model_off + i]));
}

static stage_num *numeric(const tensor_stage *ts)
{
  xbt_assert(ts->rk.sn, "tensor stage: numerics were not set up (tensor_stage_numerics)");
  return ts->rk.sn;
}

void tensor_stage_take_grads(tensor_stage *ts, double *buf)
{
  numeric(ts);
  stage_walk(ts, take_grad, buf);
}

void tensor_stage_get_params(const tensor_stage *ts, double *buf)
{
  numeric(ts);
  stage_walk((tensor_stage *)ts, take_param, buf);
}

void tensor_stage_set_params(tensor_stage *ts, const double *buf)
{
  numeric(ts);
  stage_walk(ts, put_param, (void *)buf);
}

void tensor_stage_export(const tensor_stage *ts, gsl_vector *w)
{
  numeric(ts);
  stage_walk((tensor_stage *)ts, export_param, w);
}

double tensor_stage_diff(const tensor_stage *ts, const gsl_vector *w)
{
  numeric(ts);
  diff_ctx c = {w, 0};
  stage_walk((tensor_stage *)ts, diff_param, &c);
  return c.d;
}

double tensor_stage_take_loss(tensor_stage *ts)
{
  double l = numeric(ts)->loss;
  ts->sn.loss = 0;
  return l;
}

void tensor_stage_free(tensor_stage *ts)
{
  if (ts == NULL)
    return;
  stage_num *sn = ts->rk.sn;
  if (sn) {
    size_t L = ts->p.layers, slots = ts->p.recompute ? 1 : sn->m;
    for (size_t k = 0; k < slots; k++) {
      for (size_t l = 0; l < L; l++)
        transformer_part_free(sn->parts[k][l]);
      xbt_free(sn->parts[k]);
    }
    for (size_t k = 0; k < sn->m; k++) {
      for (size_t l = 0; l <= L; l++)
        gsl_matrix_free(sn->act[k][l]);
      xbt_free(sn->act[k]);
      if (sn->head)
        gpt_head_free(sn->head[k]);
    }
    for (size_t l = 0; l < L; l++) {
      gsl_vector_free(sn->w[l]);
      gsl_vector_free(ts->rk.gacc[l]);
    }
    xbt_free(sn->parts);
    xbt_free(sn->act);
    xbt_free(sn->head);
    xbt_free(sn->w);
    xbt_free(sn->split);
    xbt_free(ts->rk.gacc);
    gsl_vector_free(ts->rk.gtmp);
    gsl_matrix_free(ts->rk.dcur);
    gsl_matrix_free(ts->rk.dnext);
    if (sn->emb)
      gsl_matrix_free(sn->emb);
    double *v[] = {sn->E, sn->dE, sn->P, sn->dP, sn->lnf, sn->dlnf};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
      xbt_free(v[i]);
  }
  xbt_free(ts);
}

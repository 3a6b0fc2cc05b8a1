/* compressed.c - compressed gradient buckets of synchronous data parallelism: top-k, 1-bit
 * and QSGD by allgather of every rank's message (decoded and summed in rank order by every
 * rank), PowerSGD by an allreduce of P and one of Q (Vogels et al. Alg. 1). */
#include "algorithms/compressed.h"

#include <math.h>
#include <string.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "algorithms/compute.h"
#include "models/rng.h"

typedef struct tensor {
  size_t rows, cols, off; /* off: in the bucket's range of the gradient */
} tensor;

typedef struct bucket {
  size_t nt;
  tensor *t;
  size_t plen, qlen;      /* PowerSGD: elements of the P (and uncompressed) and Q allreduces */
} bucket;

struct compressed {
  const run_config *cfg;
  compress_params p;
  size_t ranks, nb;
  bucket *b;
  coll_comm *dense;       /* PowerSGD's allreduces */
  coll_comm *bytes;       /* the allgathers, elements of one byte */
  compress_state ***st;   /* [rank][b * max_nt + t], numerics only */
  compress_msg ***msg;    /* [rank][b * max_nt + t], the board every rank reads after the allgather */
  double **pbuf, **qbuf;  /* [rank]: PowerSGD's factors of the largest bucket */
  gsl_rng **rng;          /* [rank]: QSGD's draws */
  size_t max_nt;
};

/* Layer l's tensors into t (NULL: only counted); returns their number. */
static size_t layer_tensors(const arch *shapes, size_t l, tensor *t, size_t *off)
{
  double params = arch_layer_params(shapes, l);
  size_t out = arch_units(shapes, l), in = arch_units(shapes, l - 1), n = 0;
  if (params <= 0)
    return 0;
  if (arch_layer_at(shapes, l)->kind == ARCH_DENSE && params == (double)out * (double)(in + 1)) {
    if (t) {
      t[0] = (tensor){out, in, *off};
      t[1] = (tensor){1, out, *off + out * in};
    }
    n = 2;
  } else {
    if (t)
      t[0] = (tensor){1, (size_t)params, *off};
    n = 1;
  }
  *off += (size_t)params;
  return n;
}

static void buckets_init(compressed *c, const arch *shapes, const size_t *first)
{
  size_t top = arch_n_layers(shapes) - 1;
  c->b = xbt_malloc0(c->nb * sizeof(bucket));
  for (size_t b = 0; b < c->nb; b++) {
    bucket *bk = &c->b[b];
    size_t last = b == 0 ? top : first[b - 1] - 1, off = 0;
    for (size_t l = first[b]; l <= last; l++)
      bk->nt += layer_tensors(shapes, l, NULL, &off);
    bk->t = xbt_malloc0((bk->nt ? bk->nt : 1) * sizeof(tensor));
    off = 0;
    size_t k = 0;
    for (size_t l = first[b]; l <= last; l++)
      k += layer_tensors(shapes, l, bk->t + k, &off);
    for (size_t i = 0; i < bk->nt; i++) {
      const tensor *t = &bk->t[i];
      int f = compress_powersgd_applies(&c->p, t->rows, t->cols);
      bk->plen += f ? t->rows * (size_t)c->p.rank : t->rows * t->cols;
      bk->qlen += f ? t->cols * (size_t)c->p.rank : 0;
    }
    if (bk->nt > c->max_nt)
      c->max_nt = bk->nt;
  }
}

static void states_init(compressed *c, size_t rank)
{
  gsl_rng *init = rng_create(c->cfg->seed, RNG_ROLE_POWERSGD, 0); /* the same first Q on every rank */
  size_t plen = 0, qlen = 0;
  c->st[rank] = xbt_malloc0(c->nb * c->max_nt * sizeof(compress_state *));
  c->msg[rank] = xbt_malloc0(c->nb * c->max_nt * sizeof(compress_msg *));
  for (size_t b = 0; b < c->nb; b++) {
    for (size_t i = 0; i < c->b[b].nt; i++) {
      const tensor *t = &c->b[b].t[i];
      compress_state *s = compress_state_create(&c->p, t->rows, t->cols, init);
      xbt_assert(s != NULL, "compression parameters the configuration checked");
      c->st[rank][b * c->max_nt + i] = s;
      c->msg[rank][b * c->max_nt + i] = xbt_malloc0(sizeof(compress_msg));
      compress_msg_alloc(s, c->msg[rank][b * c->max_nt + i]);
    }
    plen = c->b[b].plen > plen ? c->b[b].plen : plen;
    qlen = c->b[b].qlen > qlen ? c->b[b].qlen : qlen;
  }
  gsl_rng_free(init);
  if (c->p.method == COMPRESS_POWERSGD) {
    c->pbuf[rank] = xbt_malloc0((plen ? plen : 1) * sizeof(double));
    c->qbuf[rank] = xbt_malloc0((qlen ? qlen : 1) * sizeof(double));
  }
  c->rng[rank] = rng_create(c->cfg->seed, RNG_ROLE_QSGD, (int)rank);
}

compressed *compressed_create(const run_config *cfg, const compress_params *p, const sg_host_t *hosts, size_t ranks,
                              const arch *shapes, size_t nb, const size_t *first, coll_comm *dense)
{
  if (p->method == COMPRESS_NONE)
    return NULL;
  compressed *c = xbt_malloc0(sizeof(*c));
  c->cfg = cfg;
  c->p = *p;
  c->ranks = ranks;
  c->nb = nb;
  c->dense = dense;
  buckets_init(c, shapes, first);
  coll_opts o = {1, 0, NULL, 0, coll_mode_of(cfg), cfg->comm_sms};
  c->bytes = coll_comm_create("dp-compressed", hosts, ranks, &o);
  if (cfg->numerics) {
    c->st = xbt_malloc0(ranks * sizeof(*c->st));
    c->msg = xbt_malloc0(ranks * sizeof(*c->msg));
    c->pbuf = xbt_malloc0(ranks * sizeof(double *));
    c->qbuf = xbt_malloc0(ranks * sizeof(double *));
    c->rng = xbt_malloc0(ranks * sizeof(gsl_rng *));
    for (size_t r = 0; r < ranks; r++)
      states_init(c, r);
  }
  return c;
}

void compressed_free(compressed *c)
{
  if (c == NULL)
    return;
  for (size_t r = 0; c->st && r < c->ranks; r++) {
    for (size_t b = 0; b < c->nb; b++)
      for (size_t i = 0; i < c->b[b].nt; i++) {
        compress_state_free(c->st[r][b * c->max_nt + i]);
        compress_msg_release(c->msg[r][b * c->max_nt + i]);
        xbt_free(c->msg[r][b * c->max_nt + i]);
      }
    xbt_free(c->st[r]);
    xbt_free(c->msg[r]);
    xbt_free(c->pbuf[r]);
    xbt_free(c->qbuf[r]);
    gsl_rng_free(c->rng[r]);
  }
  xbt_free(c->st);
  xbt_free(c->msg);
  xbt_free(c->pbuf);
  xbt_free(c->qbuf);
  xbt_free(c->rng);
  for (size_t b = 0; b < c->nb; b++)
    xbt_free(c->b[b].t);
  xbt_free(c->b);
  coll_comm_free(c->bytes);
  xbt_free(c);
}

static double bucket_bytes(const compressed *c, size_t b, long step)
{
  double sum = 0;
  for (size_t i = 0; i < c->b[b].nt; i++)
    sum += compress_wire_bytes(&c->p, c->b[b].t[i].rows, c->b[b].t[i].cols, step, c->cfg->elem_bytes);
  return ceil(sum);
}

double compressed_step_bytes(const compressed *c, long step)
{
  double sum = 0;
  for (size_t b = 0; b < c->nb; b++)
    sum += bucket_bytes(c, b, step);
  return sum;
}

double compressed_dense_bytes(const compressed *c)
{
  double sum = 0;
  for (size_t b = 0; b < c->nb; b++)
    for (size_t i = 0; i < c->b[b].nt; i++)
      sum += (double)c->b[b].t[i].rows * (double)c->b[b].t[i].cols * (double)c->cfg->elem_bytes;
  return sum;
}

/* Compression's work on this rank's host (none: no execution at all). */
static void spend(const compressed *c, double flops)
{
  if (flops > 0)
    compute_execute(c->cfg, flops);
}

/* ---- top-k, 1-bit, QSGD: allgather of every rank's message -------------------------------- */

static void gather_bucket(compressed *c, size_t me, size_t b, double *grad, long step)
{
  const bucket *bk = &c->b[b];
  double enc = 0, dec = 0;
  for (size_t i = 0; i < bk->nt; i++) {
    enc += compress_encode_flops(&c->p, bk->t[i].rows, bk->t[i].cols, step);
    dec += compress_decode_flops(&c->p, bk->t[i].rows, bk->t[i].cols, step, c->ranks);
    if (grad)
      compress_encode(c->st[me][b * c->max_nt + i], grad + bk->t[i].off, step, c->rng[me],
                      c->msg[me][b * c->max_nt + i]);
  }
  account_label_push("compress bucket %zu", b);
  spend(c, enc);
  account_label_pop();
  /* Every rank's message is complete once this rank has received it: the allgather's
   * messages carry its bytes, the numbers are read from the ranks' boards. */
  coll_allgather(c->bytes, me, NULL, c->ranks * (size_t)bucket_bytes(c, b, step));
  if (grad) {
    for (size_t i = 0; i < bk->nt; i++)
      memset(grad + bk->t[i].off, 0, bk->t[i].rows * bk->t[i].cols * sizeof(double));
    for (size_t q = 0; q < c->ranks; q++) /* rank order: the same sum on every rank */
      for (size_t i = 0; i < bk->nt; i++)
        compress_decode_add(c->msg[q][b * c->max_nt + i], grad + bk->t[i].off);
  }
  account_label_push("decompress bucket %zu", b);
  spend(c, dec);
  account_label_pop();
}

/* ---- PowerSGD: allreduce of P, then of Q ----------------------------------------------- */

static void powersgd_bucket(compressed *c, size_t me, size_t b, double *grad, coll_algo algo)
{
  const bucket *bk = &c->b[b];
  double *P = grad ? c->pbuf[me] : NULL, *Q = grad ? c->qbuf[me] : NULL, first = 0, rest = 0, dec = 0;
  size_t po = 0, qo = 0;
  for (size_t i = 0; i < bk->nt; i++) {
    const tensor *t = &bk->t[i];
    double n = (double)t->rows * (double)t->cols;
    int f = compress_powersgd_applies(&c->p, t->rows, t->cols);
    if (f) { /* M = g + e and P = M Q before the first allreduce, the rest after it */
      first += n + 2 * n * c->p.rank;
      rest += compress_encode_flops(&c->p, t->rows, t->cols, 0) - (n + 2 * n * c->p.rank);
      dec += compress_decode_flops(&c->p, t->rows, t->cols, 0, c->ranks);
    }
    if (grad && f)
      compress_powersgd_p(c->st[me][b * c->max_nt + i], grad + t->off, P + po);
    else if (grad)
      memcpy(P + po, grad + t->off, t->rows * t->cols * sizeof(double));
    po += f ? t->rows * (size_t)c->p.rank : t->rows * t->cols;
  }
  spend(c, first);
  coll_allreduce(c->dense, me, P, bk->plen, algo);
  po = 0;
  for (size_t i = 0; grad && i < bk->nt; i++) {
    const tensor *t = &bk->t[i];
    if (compress_powersgd_applies(&c->p, t->rows, t->cols)) {
      compress_powersgd_q(c->st[me][b * c->max_nt + i], P + po, Q + qo);
      po += t->rows * (size_t)c->p.rank;
      qo += t->cols * (size_t)c->p.rank;
    } else {
      po += t->rows * t->cols;
    }
  }
  spend(c, rest);
  if (bk->qlen)
    coll_allreduce(c->dense, me, Q, bk->qlen, algo);
  po = qo = 0;
  for (size_t i = 0; grad && i < bk->nt; i++) {
    const tensor *t = &bk->t[i];
    if (compress_powersgd_applies(&c->p, t->rows, t->cols)) {
      compress_powersgd_decode(c->st[me][b * c->max_nt + i], P + po, Q + qo, grad + t->off);
      po += t->rows * (size_t)c->p.rank;
      qo += t->cols * (size_t)c->p.rank;
    } else {
      memcpy(grad + t->off, P + po, t->rows * t->cols * sizeof(double));
      po += t->rows * t->cols;
    }
  }
  spend(c, dec);
}

void compressed_bucket(compressed *c, size_t me, size_t b, double *grad, long step, coll_algo algo)
{
  if (c->p.method == COMPRESS_POWERSGD)
    powersgd_bucket(c, me, b, grad, algo);
  else
    gather_bucket(c, me, b, grad, step);
}

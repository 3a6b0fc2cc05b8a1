/* transformer_shape.c - a GPT layer's shapes and costs: the parameter layout and each
 * tensor-parallel rank's shard of it, the layer's flops, each phase's GEMMs and
 * memory-bound kernels (Megatron-LM's counts), for the timing that needs no numerics. */
#include "models/transformer.h"

#include <string.h>

int transformer_dims_check(const transformer_dims *d)
{
  if (d == NULL || d->b == 0 || d->s == 0 || d->h == 0 || d->heads == 0 || d->h % d->heads != 0)
    return -1;
  return 0;
}

void transformer_layout_of(size_t h, transformer_layout *l)
{
  size_t o = 0;
  l->ln1_g = o; o += h;
  l->ln1_b = o; o += h;
  l->Wq = o; o += h * h;
  l->Wk = o; o += h * h;
  l->Wv = o; o += h * h;
  l->bq = o; o += h;
  l->bk = o; o += h;
  l->bv = o; o += h;
  l->Wo = o; o += h * h;
  l->bo = o; o += h;
  l->ln2_g = o; o += h;
  l->ln2_b = o; o += h;
  l->W1 = o; o += 4 * h * h;
  l->b1 = o; o += 4 * h;
  l->W2 = o; o += 4 * h * h;
  l->b2 = o; o += h;
  l->total = o;
}

size_t transformer_n_params(size_t h)
{
  transformer_layout l;
  transformer_layout_of(h, &l);
  return l.total;
}

size_t transformer_shard_tensors(size_t h, size_t t, double out[TRANSFORMER_LAYER_TENSORS])
{
  double hh = (double)h, tt = (double)t;
  const double v[TRANSFORMER_LAYER_TENSORS] = {hh, hh, 3 * hh * hh / tt, 3 * hh / tt, hh * hh / tt, hh,
                                               hh, hh, 4 * hh * hh / tt, 4 * hh / tt, 4 * hh * hh / tt, hh};
  for (size_t i = 0; i < TRANSFORMER_LAYER_TENSORS; i++)
    out[i] = v[i];
  return TRANSFORMER_LAYER_TENSORS;
}

double transformer_layer_flops(const transformer_dims *d)
{
  double b = (double)d->b, s = (double)d->s, h = (double)d->h;
  return 24.0 * b * s * h * h + 4.0 * b * s * s * h;
}

/* Element passes (one element read, or written, once) of the memory-bound kernels per
 * phase, as {R, S, A} (transformer.h). Read off the two code bases' layer (Megatron-LM
 * 2019 mpu/transformer.py; 2021 megatron/model/transformer.py, fused_*), counting for
 * each kernel its inputs and outputs, a dropout mask as half an element (one byte per
 * fp16 element) and a broadcast bias or mask as nothing:
 *   unfused, forward attention: LayerNorm 2; the MLP's bias 2, dropout 2.5 and residual
 *     add 3 (R 9.5); Q and K each divided by d^(1/4) 4, Q, K, V made contiguous 6 and the
 *     context 2 (S 12); scores masked (multiply, subtract) 4, softmax 2, dropout 2.5 (A 8.5);
 *   unfused, forward MLP: the attention's bias 2, dropout 2.5, residual 3 and LayerNorm 2
 *     (R 9.5); GeLU of 4h columns read and written (S 8);
 *   unfused, backward MLP: dropout 2.5, bias gradient 1, LayerNorm 1 backward 3 and the
 *     residual gradient's sum 3 (R 9.5); GeLU backward 12 and b1's gradient 4 (S 16);
 *   unfused, backward attention: LayerNorm 2 backward 3, residual sum 3, dropout 2.5,
 *     bias gradient 1 (R 9.5); context 2, Q, K, V 6, their scaling 4 and bias gradient 3
 *     (S 15); dropout 2.5, softmax 3 and mask 2 backward (A 7.5);
 *   fused: bias-dropout-add 3.5 in place of 7.5 forward, no Q, K, V copies, fused
 *     scale-mask-softmax 2 forward and 3 backward; GeLU's bias gradient inside its kernel
 *     stays a read of 4h columns. */
static const double mem_passes[3][4][3] = {
    {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
    {{9.5, 12, 8.5}, {9.5, 8, 0}, {9.5, 16, 0}, {9.5, 15, 7.5}},
    {{5.5, 2, 4.5}, {5.5, 8, 0}, {9.5, 16, 0}, {9.5, 5, 5.5}},
};

int transformer_kernels_parse(const char *s, transformer_kernels *k)
{
  static const char *const names[] = {"none", "unfused", "fused"};
  for (int i = 0; i < 3; i++)
    if (strcmp(s, names[i]) == 0) {
      *k = (transformer_kernels)i;
      return 0;
    }
  return -1;
}

double transformer_phase_mem_elems(const transformer_dims *d, transformer_kernels k, size_t t, int seqpar,
                                   transformer_phase ph)
{
  const double *p = mem_passes[k][ph];
  double b = (double)d->b, s = (double)d->s, h = (double)d->h, a = (double)d->heads, tt = (double)t;
  double bsh = b * s * h;
  return p[0] * bsh / (seqpar ? tt : 1) + p[1] * bsh / tt + p[2] * b * a * s * s / tt;
}

/* Kernels of each phase in the table above: unfused, forward attention LayerNorm, the
 * MLP's bias, dropout and residual (4), Q and K scaled, Q K V made contiguous, the context
 * (6), the mask's multiply and subtract, softmax, dropout (4); forward MLP the attention's
 * bias, dropout, residual, LayerNorm, GeLU (5); backward MLP dropout, bias gradient,
 * LayerNorm, residual sum, GeLU, b1's gradient (6); backward attention LayerNorm,
 * residual, dropout, bias gradient (4), the context, Q K V, their scaling and bias
 * gradient (7), dropout, softmax, mask (3). Fused: LayerNorm and bias-dropout-add (2), the
 * context (1), scale-mask-softmax and dropout (2); bias-dropout-add, LayerNorm and
 * bias-GeLU (3); the four of the residual branch and bias-GeLU's backward with b1's
 * gradient (6); the four, the context and the bias gradient, softmax's and dropout's (8). */
static const size_t phase_kernels[3][4] = {{0, 0, 0, 0}, {14, 5, 6, 14}, {5, 3, 6, 8}};

size_t transformer_phase_kernels(transformer_kernels k, transformer_phase ph) { return phase_kernels[k][ph]; }

static gemm_shape gemm_of(double m, double n, double k, double batch)
{
  return (gemm_shape){m, n, k, batch};
}

size_t transformer_phase_gemms(const transformer_dims *d, size_t t, transformer_phase ph, gemm_shape *g)
{
  double b = (double)d->b, s = (double)d->s, h = (double)d->h, tt = (double)t, n = b * s;
  double hd = h / (double)d->heads, heads = b * (double)d->heads / tt;
  switch (ph) {
  case TRANSFORMER_FWD_ATTN:
    g[0] = gemm_of(n, 3 * h / tt, h, 1);
    g[1] = gemm_of(s, s, hd, heads);
    g[2] = gemm_of(s, hd, s, heads);
    g[3] = gemm_of(n, h, h / tt, 1);
    return 4;
  case TRANSFORMER_FWD_MLP:
    g[0] = gemm_of(n, 4 * h / tt, h, 1);
    g[1] = gemm_of(n, h, 4 * h / tt, 1);
    return 2;
  case TRANSFORMER_BWD_MLP:
    g[0] = gemm_of(n, 4 * h / tt, h, 1);
    g[1] = gemm_of(4 * h / tt, h, n, 1);
    g[2] = gemm_of(n, h, 4 * h / tt, 1);
    return 3;
  case TRANSFORMER_BWD_ATTN:
    g[0] = gemm_of(n, h / tt, h, 1);
    g[1] = gemm_of(h / tt, h, n, 1);
    g[2] = gemm_of(s, s, hd, heads);
    g[3] = gemm_of(s, hd, s, heads);
    g[4] = gemm_of(s, hd, s, heads);
    g[5] = gemm_of(s, hd, s, heads);
    g[6] = gemm_of(n, h, 3 * h / tt, 1);
    return 7;
  }
  return 0;
}

size_t transformer_wgrad_gemm(const transformer_dims *d, size_t t, transformer_phase ph, gemm_shape *g)
{
  double h = (double)d->h, tt = (double)t, n = (double)d->b * (double)d->s;
  if (ph == TRANSFORMER_BWD_MLP)
    *g = gemm_of(h, 4 * h / tt, n, 1);
  else if (ph == TRANSFORMER_BWD_ATTN)
    *g = gemm_of(h, 3 * h / tt, n, 1);
  else
    return 0;
  return 1;
}

gemm_shape transformer_logits_gemm(const transformer_dims *d, size_t t, size_t vocab, int which)
{
  double h = (double)d->h, v = (double)vocab / (double)t, n = (double)d->b * (double)d->s;
  return which == 0 ? gemm_of(n, v, h, 1) : which == 1 ? gemm_of(n, h, v, 1) : gemm_of(h, v, n, 1);
}

/* Appends [off, off + len) to out (when there is room) and counts it. */
static void add_range(transformer_range *out, size_t max, size_t *n, size_t off, size_t len)
{
  if (out != NULL && *n < max)
    out[*n] = (transformer_range){off, len};
  (*n)++;
}

size_t transformer_shard_ranges(size_t h, size_t t, size_t r, int replicated, transformer_range *out, size_t max)
{
  if (t == 0 || r >= t || h % t != 0)
    return 0;
  transformer_layout l;
  transformer_layout_of(h, &l);
  size_t n = 0, hl = h / t, fl = 4 * h / t;
  if (replicated) {
    add_range(out, max, &n, l.ln1_g, 2 * h); /* ln1_g, ln1_b */
    add_range(out, max, &n, l.bo, h);
    add_range(out, max, &n, l.ln2_g, 2 * h); /* ln2_g, ln2_b */
    add_range(out, max, &n, l.b2, h);
    return n;
  }
  size_t wqkv[] = {l.Wq, l.Wk, l.Wv}, bqkv[] = {l.bq, l.bk, l.bv};
  for (size_t k = 0; k < 3; k++) /* column-parallel: columns [r hl, (r+1) hl) of every row */
    for (size_t row = 0; row < h; row++)
      add_range(out, max, &n, wqkv[k] + row * h + r * hl, hl);
  for (size_t k = 0; k < 3; k++)
    add_range(out, max, &n, bqkv[k] + r * hl, hl);
  add_range(out, max, &n, l.Wo + r * hl * h, hl * h); /* row-parallel: whole rows */
  for (size_t row = 0; row < h; row++)
    add_range(out, max, &n, l.W1 + row * 4 * h + r * fl, fl);
  add_range(out, max, &n, l.b1 + r * fl, fl);
  add_range(out, max, &n, l.W2 + r * fl * h, fl * h);
  return n;
}

/* deepspeed.c - DeepSpeed 0.3's ZeRO-3 as a cost model: a Megatron GPT layer's parameter
 * tensors and the host work of its list collectives (deepspeed.h). */
#include <math.h>

#include "models/deepspeed.h"

void ds_layer_params(double h, double t, ds_param out[DS_LAYER_PARAMS])
{
  /* Megatron-LM's ParallelTransformerLayer: input_layernorm, attention.query_key_value
   * (column-parallel: 3h/t rows), attention.dense (row-parallel: h/t columns, its bias whole),
   * post_attention_layernorm, mlp.dense_h_to_4h (column-parallel), mlp.dense_4h_to_h (row-parallel) */
  const ds_param p[DS_LAYER_PARAMS] = {
      {"input_layernorm.weight", h},        {"input_layernorm.bias", h},
      {"query_key_value.weight", 3 * h * h / t}, {"query_key_value.bias", 3 * h / t},
      {"attention.dense.weight", h * h / t}, {"attention.dense.bias", h},
      {"post_attention_layernorm.weight", h}, {"post_attention_layernorm.bias", h},
      {"dense_h_to_4h.weight", 4 * h * h / t}, {"dense_h_to_4h.bias", 4 * h / t},
      {"dense_4h_to_h.weight", 4 * h * h / t}, {"dense_4h_to_h.bias", h}};
  for (size_t i = 0; i < DS_LAYER_PARAMS; i++)
    out[i] = p[i];
}

size_t ds_rest_params(double h, double t, double vocab, double seq, int first, int last, ds_param out[4])
{
  size_t n = 0;
  if (first || last)
    out[n++] = (ds_param){"word_embeddings.weight", vocab * h / t};
  if (first)
    out[n++] = (ds_param){"position_embeddings.weight", seq * h};
  if (last) {
    out[n++] = (ds_param){"final_layernorm.weight", h};
    out[n++] = (ds_param){"final_layernorm.bias", h};
  }
  return n;
}

double ds_aligned(double n, double d)
{
  return d > 0 ? ceil(n / d) * d : n;
}

ds_work ds_gather_work(double n, double d, double elem_bytes, double view_s)
{
  double all = ds_aligned(n, d), part = all / d;
  /* torch.zeros writes the gathered tensor; the own partition is copied into it; PyTorch's
   * d copies read and write every block */
  return (ds_work){d * view_s, 2 + d, elem_bytes * (all + 2 * part + 2 * all)};
}

ds_work ds_scatter_work(double n, double d, double elem_bytes, double view_s)
{
  double all = ds_aligned(n, d);
  return (ds_work){d * view_s, 1 + d, elem_bytes * (2 * n + 2 * all)};
}

int ds_bucket_add(ds_bucket *b, double n, double limit, ds_bucket *flushed)
{
  int out = b->k > 0 && b->elems + n > limit;
  if (out) {
    *flushed = *b;
    *b = (ds_bucket){0, 0};
  }
  b->elems += n;
  b->k++;
  return out;
}

ds_work ds_allreduce_work(double n, size_t k, double d, double elem_bytes, double view_s)
{
  double kk = (double)k;
  return (ds_work){2 * kk * view_s, 2 + 2 * kk, elem_bytes * (2 * n + 2 * n + 2 * n + 2 * ds_aligned(n, d) / d)};
}

ds_work ds_persist_work(const double *n, size_t k, double d, double elem_bytes, double view_s)
{
  ds_work w = {0, d, 0};
  double parts = 0;
  for (size_t i = 0; i < k; i++) {
    double part = ds_aligned(n[i], d) / d, ranks = fmin(d, ceil(n[i] / part));
    parts += part;
    w.cpu_s += view_s * (1 + 3 * ranks); /* its own partition's view, then the loop's three per rank */
    w.kernels += 1 + ranks;
    w.hbm_bytes += elem_bytes * (2 * part + 2 * ranks * part);
  }
  w.hbm_bytes += elem_bytes * 2 * d * parts; /* PyTorch's copies out of its flat buffer */
  return w;
}

/* cost.c - flops and bytes from layer shapes (models/README.md, Cost model).
 *
 * Simulated compute time is flops / host speed, so every figure here is a
 * count of multiply-adds derived from shapes, never a measurement. The
 * virtual networks are the published shapes of models too large to run
 * numerically; their costs are what the simulator charges. */

#include "models/cost.h"
#include "models/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t cost_dtype_bytes(cost_dtype t)
{
  switch (t) {
  case COST_FP32: return 4;
  case COST_FP16: return 2;
  case COST_BF16: return 2;
  case COST_FP8: return 1;
  case COST_TF32: return 4;
  }
  mem_die("cost", "invalid dtype");
  return 0;
}

size_t cost_dtype_wire_bytes(cost_dtype t)
{
  return t == COST_FP8 ? cost_dtype_bytes(COST_BF16) : cost_dtype_bytes(t);
}

int cost_dtype_parse(const char *s, cost_dtype *t)
{
  static const cost_dtype all[] = {COST_FP32, COST_FP16, COST_BF16, COST_FP8, COST_TF32};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    if (strcmp(s, cost_dtype_name(all[i])) == 0) {
      *t = all[i];
      return 0;
    }
  }
  return -1;
}

const char *cost_dtype_name(cost_dtype t)
{
  switch (t) {
  case COST_FP32: return "fp32";
  case COST_FP16: return "fp16";
  case COST_BF16: return "bf16";
  case COST_FP8: return "fp8";
  case COST_TF32: return "tf32";
  }
  mem_die("cost", "invalid dtype");
  return NULL;
}

/* One multiply and one add per weight: Z = X W^T. */
double cost_dense_fwd_flops(size_t n_in, size_t n_out)
{
  return 2.0 * (double)n_in * (double)n_out;
}

/* Two products of the forward's size: dX = dZ W and dW = dZ^T X. */
double cost_dense_bwd_flops(size_t n_in, size_t n_out)
{
  return 2.0 * cost_dense_fwd_flops(n_in, n_out);
}

double cost_mlp_params(size_t n_sizes, const size_t *sizes)
{
  double p = 0.0;
  for (size_t l = 0; l + 1 < n_sizes; l++)
    p += (double)sizes[l] * (double)sizes[l + 1] + (double)sizes[l + 1];
  return p;
}

/* Bias additions and activations are O(n_out) per layer against O(n_in*n_out)
 * for the products, so they are left out, as the cost model does everywhere. */
double cost_mlp_train_flops(size_t n_sizes, const size_t *sizes)
{
  double f = 0.0;
  for (size_t l = 0; l + 1 < n_sizes; l++)
    f += cost_dense_fwd_flops(sizes[l], sizes[l + 1]) + cost_dense_bwd_flops(sizes[l], sizes[l + 1]);
  return f;
}

double cost_transformer_fwd_flops(double b, double s, double h)
{
  return 24.0 * b * s * h * h + 4.0 * b * s * s * h;
}

double cost_update_flops(size_t n, int adagrad)
{
  return (double)n * (adagrad ? 6.0 : 2.0);
}

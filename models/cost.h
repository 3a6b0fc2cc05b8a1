#ifndef MODELS_COST_H
#define MODELS_COST_H
/* cost.h - flops and bytes from layer shapes (models/README.md, Cost model), and the virtual
 * networks whose shapes set simulated costs when the numeric model is smaller. */

#include <stddef.h>

typedef enum cost_dtype { COST_FP32, COST_FP16, COST_BF16, COST_FP8, COST_TF32 } cost_dtype;

/* Bytes per element: 4 for fp32 and tf32 (NVIDIA's TensorFloat-32 computes on fp32 values), 2 for
 * fp16 and bf16, 1 for fp8 (e4m3 or e5m2). */
size_t cost_dtype_bytes(cost_dtype t);
/* Bytes per element of what a run keeps and sends in this datatype (parameters, gradients,
 * activations, collectives): cost_dtype_bytes, but 2 for fp8, whose training (NVIDIA's
 * Transformer Engine) runs only the GEMMs' operands in fp8 and keeps the rest in bf16. */
size_t cost_dtype_wire_bytes(cost_dtype t);
/* Parses "fp32|fp16|bf16|fp8|tf32"; returns 0 or -1. */
int cost_dtype_parse(const char *s, cost_dtype *t);
const char *cost_dtype_name(cost_dtype t);

/* Dense n_in x n_out layer, per example: 2*n_in*n_out forward, twice that backward. */
double cost_dense_fwd_flops(size_t n_in, size_t n_out);
double cost_dense_bwd_flops(size_t n_in, size_t n_out);

/* A stack of dense layers given by sizes[0..n_sizes-1]: parameters (weights and
 * biases) and forward+backward flops per example. */
double cost_mlp_params(size_t n_sizes, const size_t *sizes);
double cost_mlp_train_flops(size_t n_sizes, const size_t *sizes);

/* Transformer layer forward flops for batch b, sequence s, hidden h:
 * 24*b*s*h^2 + 4*b*s^2*h (Narayanan et al. 2021). */
double cost_transformer_fwd_flops(double b, double s, double h);

/* Flops for a parameter-server shard to apply one update to n parameters:
 * fixed-rate SGD 2 per parameter (multiply, subtract); Adagrad 6 (square, accumulate,
 * square root, divide, multiply, subtract). */
double cost_update_flops(size_t n, int adagrad);

#endif

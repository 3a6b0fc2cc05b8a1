#ifndef MODELS_TRANSFORMER_H
#define MODELS_TRANSFORMER_H
/* transformer.h - exact numerics of one GPT transformer layer (pre-LayerNorm, as
 * Megatron-LM's GPT-2: Y = X + Attn(LN1(X)), Z = Y + MLP(LN2(Y))), a serial reference and
 * its Megatron tensor-parallel split over t ranks (Shoeybi et al. 2019, sec. 3; with
 * sequence parallelism, Korthikanti et al. 2022), with the collectives left to the caller.
 *
 * Shapes: n = s*b rows in Megatron's [s, b, h] order (row = pos*b + example), h columns.
 * Attention: `heads` heads of h/heads columns, causal mask, softmax(QK^T/sqrt(d))V per
 * example. MLP: h -> 4h (GeLU, GPT-2's tanh form) -> h. LayerNorm eps 1e-5. No dropout
 * (p = 0), so numerics are deterministic.
 * Parameter layout (one vector, 12h^2 + 13h entries), matrices row-major as X*W (in x out):
 * ln1_g, ln1_b [h]; Wq, Wk, Wv [h x h]; bq, bk, bv [h]; Wo [h x h]; bo [h];
 * ln2_g, ln2_b [h]; W1 [h x 4h]; b1 [4h]; W2 [4h x h]; b2 [h]. */

#include <stddef.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_vector.h>

#include "models/gemm.h"

typedef struct transformer_dims {
  size_t b;     /* microbatch: sequences */
  size_t s;     /* sequence length */
  size_t h;     /* hidden size */
  size_t heads; /* attention heads; h % heads == 0 */
} transformer_dims;

/* Offsets of each parameter block in the layout above. */
typedef struct transformer_layout {
  size_t ln1_g, ln1_b, Wq, Wk, Wv, bq, bk, bv, Wo, bo, ln2_g, ln2_b, W1, b1, W2, b2, total;
} transformer_layout;

/* 0 if d is usable (all > 0, heads divides h), else -1. */
int transformer_dims_check(const transformer_dims *d);
void transformer_layout_of(size_t h, transformer_layout *l);
size_t transformer_n_params(size_t h);
/* The parameter tensors of one layer as a framework holds them (Megatron-LM's modules: the
 * fused Q K V weight and bias, the output projection's, the MLP's two, two LayerNorms), in
 * its order (LayerNorm 1's gain and bias, Q K V's weight and bias, Wo's weight and bias,
 * LayerNorm 2's gain and bias, W1's, W2's), as one of t tensor ranks holds them: the
 * elements of each into out; returns TRANSFORMER_LAYER_TENSORS. They add up to the rank's
 * (12 h^2 + 7 h) / t + 6 h. */
#define TRANSFORMER_LAYER_TENSORS 12
size_t transformer_shard_tensors(size_t h, size_t t, double out[TRANSFORMER_LAYER_TENSORS]);
/* Forward flops of one layer, 24*b*s*h^2 + 4*b*s^2*h (Narayanan et al. 2021, sec. 5.1;
 * Narayanan et al. 2021); backward is twice that. */
double transformer_layer_flops(const transformer_dims *d);

/* ---- Memory-bound kernels ----
 * The elementwise kernels between a layer's GEMMs (LayerNorm, bias, dropout, residual,
 * GeLU, scale/mask/softmax, layout copies) run at the GPU's memory bandwidth, not its
 * flop rate. Their traffic per layer per microbatch, in elements read or written, is
 *   R x b s h     (replicated on every tensor rank; split t ways with sequence parallelism)
 * + S x b s h / t (split: the rank's heads or MLP columns)
 * + A x b a s^2 / t (the rank's attention scores, a heads)
 * with R, S, A per phase from a table for two software generations (transformer.c):
 *   TRANSFORMER_KERNELS_UNFUSED: Megatron-LM 2019 (PyTorch eager ops, apex LayerNorm,
 *     TorchScript GeLU), forward R 19, S 20, A 8.5; backward R 19, S 31, A 7.5;
 *   TRANSFORMER_KERNELS_FUSED: Megatron-LM 2021 (PTD-P: fused bias-GeLU, bias-dropout-add,
 *     scale-mask-softmax), forward R 11, S 10, A 4.5; backward R 19, S 21, A 5.5.
 * The optimizer's traffic (per parameter, per step) is not in it. */
typedef enum transformer_kernels {
  TRANSFORMER_KERNELS_NONE,    /* memory-bound kernels take no simulated time: GEMM flops only */
  TRANSFORMER_KERNELS_UNFUSED,
  TRANSFORMER_KERNELS_FUSED
} transformer_kernels;

/* The four compute phases of a tensor-parallel layer, each ending at a collective:
 * forward attention (to g), forward MLP (to g), backward MLP (to f'), backward attention
 * (to f'). A kernel that runs just after a collective is counted in the phase before the
 * next one, and the layer's last ones (forward: the MLP's bias-dropout-residual; backward:
 * LayerNorm 1 and the residual gradient) in its first phase: the same total per layer. */
typedef enum transformer_phase {
  TRANSFORMER_FWD_ATTN,
  TRANSFORMER_FWD_MLP,
  TRANSFORMER_BWD_MLP,
  TRANSFORMER_BWD_ATTN
} transformer_phase;

/* Parses "none|unfused|fused"; returns 0 or -1. */
int transformer_kernels_parse(const char *s, transformer_kernels *k);

#define TRANSFORMER_MAX_GEMMS 8

/* The GEMMs (models/gemm.h; the attention's batched over the rank's b heads / t) one of t
 * ranks runs in phase ph of one layer for one microbatch, in the order they run, into g (TRANSFORMER_MAX_GEMMS entries); returns their number. n = b s rows
 * (all of them, also with sequence parallelism, after the allgather), d = h / heads:
 *   forward attention: Q K V (n, 3h/t, h); scores Q K^T (s, s, d) and context (s, d, s),
 *     batched b heads/t; Wo (n, h, h/t);
 *   forward MLP: W1 (n, 4h/t, h); W2 (n, h, 4h/t);
 *   backward MLP: W2's input gradient (n, 4h/t, h) and weight gradient (4h/t, h, n), W1's
 *     input gradient (n, h, 4h/t); its weight gradient is transformer_wgrad_gemm's;
 *   backward attention: Wo's input gradient (n, h/t, h) and weight gradient (h/t, h, n);
 *     the context's two gradients (s, s, d) and (s, d, s), the scores' two (s, d, s),
 *     batched; Q K V's input gradient (n, h, 3h/t).
 * Their 2 m n k batch add up to the phase's share of 3 (24 b s h^2 + 4 b s^2 h) / t. */
size_t transformer_phase_gemms(const transformer_dims *d, size_t t, transformer_phase ph, gemm_shape *g);
/* The weight-gradient GEMM of the column-parallel layer whose input gradient ends phase
 * ph (the one Megatron overlaps with that allreduce): backward MLP, W1's (h, 4h/t, n);
 * backward attention, Q K V's (h, 3h/t, n). 1 with *g set, or 0 for a forward phase. */
size_t transformer_wgrad_gemm(const transformer_dims *d, size_t t, transformer_phase ph, gemm_shape *g);
/* The tied logits layer of a V-token vocabulary split t ways: which = 0 the forward (n, V/t,
 * h), 1 the input gradient (n, h, V/t), 2 the weight gradient (h, V/t, n). */
gemm_shape transformer_logits_gemm(const transformer_dims *d, size_t t, size_t vocab, int which);
/* Memory-bound kernels launched in phase ph (the same table as transformer_phase_mem_elems,
 * counted per kernel); 0 for TRANSFORMER_KERNELS_NONE. */
size_t transformer_phase_kernels(transformer_kernels k, transformer_phase ph);
/* Elements one of t tensor ranks reads or writes in memory-bound kernels in phase ph of
 * one layer for one microbatch (seqpar: sequence parallelism splits the replicated ones);
 * 0 for TRANSFORMER_KERNELS_NONE. */
double transformer_phase_mem_elems(const transformer_dims *d, transformer_kernels k, size_t t, int seqpar,
                                   transformer_phase ph);

/* LayerNorm gains 1 and biases 0; matrices U(-g, g) with g = sqrt(6 / (in + out))
 * (Glorot), biases U(-0.1, 0.1) so that their gradients are exercised. Draws from r in
 * layout order. w has transformer_n_params(h) entries, contiguous. */
void transformer_init_params(size_t h, gsl_rng *r, gsl_vector *w);

/* Serial reference (plain loops, independent of the partitioned code). X, Z: n x h.
 * Returns 0, or -1 if a shape does not fit. Allocates its own scratch. */
int transformer_layer_forward(const transformer_dims *d, const gsl_vector *w, const gsl_matrix *X, gsl_matrix *Z);
/* Given dL/dZ, sets dX = dL/dX and grad = dL/dw (layout above). Returns 0 or -1. */
int transformer_layer_backward(const transformer_dims *d, const gsl_vector *w, const gsl_matrix *X,
                               const gsl_matrix *dZ, gsl_matrix *dX, gsl_vector *grad);

/* The attention half of the serial layer, for a layer whose MLP is replaced (models/moe.h's
 * mixture of experts): Y = X + Attn(LN1(X)) Wo + bo. w points at the layer's parameters in the
 * layout above, of which only the entries before ln2_g are read. The backward, given dY (the
 * whole gradient at Y), recomputes the forward, writes the gradients of ln1_g .. bo into
 * grad (same layout; the other entries untouched) and sets dX = dY + the gradient through the
 * attention. Both return 0, or -1 if a shape does not fit. */
int transformer_attn_forward(const transformer_dims *d, const double *w, const gsl_matrix *X, gsl_matrix *Y);
int transformer_attn_backward(const transformer_dims *d, const double *w, const gsl_matrix *X, const gsl_matrix *dY,
                              gsl_matrix *dX, double *grad);

/* ---- Tensor-parallel rank ----
 * Rank r of t owns heads [r*heads/t, (r+1)*heads/t) (Q, K, V columns, column-parallel; Wo
 * rows, row-parallel) and MLP columns [r*4h/t, (r+1)*4h/t) of W1/b1 (column-parallel, GeLU
 * local) and the same rows of W2 (row-parallel). Row-parallel biases bo, b2 are added
 * once, after the reduction. Plain: every rank holds all n rows of X, Y, Z (LayerNorm and
 * residuals replicated). Sequence-parallel: rank r holds rows [r*n/t, (r+1)*n/t) (positions
 * [r*s/t, (r+1)*s/t)) and runs LayerNorm, residuals and biases on them only.
 * Each phase reads and writes the rank's buffers (transformer_part_buf, n*h doubles each). Between
 * the phases the caller runs the collectives over the tensor group, in this order:
 *   forward:  fwd_ln1; [SP: allgather XN]; fwd_attn; g(RED); fwd_ln2; [SP: allgather YN];
 *             fwd_mlp; g(RED); fwd_out
 *   backward: bwd_out; [SP: allgather DFULL]; bwd_mlp; f'(RED); bwd_ln2;
 *             [SP: allgather DFULL]; bwd_attn; f'(RED); bwd_ln1
 * where g (forward) and f' (backward of f) are: plain, an allreduce (sum) of RED; SP, a
 * reduce-scatter of RED leaving rank r's rows summed. Allgathers and reduce-scatters use
 * blocks of n*h/t elements (coll_block with n*h divisible by t) = row shards.
 * grad (transformer_n_params entries, zeroed by the caller) gets the rank's own shard of every
 * split weight and, for LayerNorm, bo and b2: plain, the full gradient (equal on every
 * rank); SP, this rank's rows' contribution (the sum over ranks is the gradient). */
typedef enum transformer_buf { TRANSFORMER_XN, TRANSFORMER_YN, TRANSFORMER_RED, TRANSFORMER_DFULL } transformer_buf;
typedef struct transformer_part transformer_part;

/* NULL unless transformer_dims_check passes, r < t, heads % t == 0, and (SP) s % t == 0.
 * Caller frees with transformer_part_free (NULL is a no-op). */
transformer_part *transformer_part_create(const transformer_dims *d, size_t t, size_t r, int seqpar);
void transformer_part_free(transformer_part *p);
double *transformer_part_buf(transformer_part *p, transformer_buf which);
/* Rows this rank holds of X, Z, dZ, dX: [*row0, *row0 + *rows). */
void transformer_part_rows(const transformer_part *p, size_t *row0, size_t *rows);

/* X_local, Z_local, dZ_local, dX_local: rows x h (transformer_part_rows). */
void transformer_fwd_ln1(transformer_part *p, const gsl_vector *w, const gsl_matrix *X_local);
void transformer_fwd_attn(transformer_part *p, const gsl_vector *w);
void transformer_fwd_ln2(transformer_part *p, const gsl_vector *w);
void transformer_fwd_mlp(transformer_part *p, const gsl_vector *w);
void transformer_fwd_out(transformer_part *p, const gsl_vector *w, gsl_matrix *Z_local);
void transformer_bwd_out(transformer_part *p, const gsl_matrix *dZ_local, gsl_vector *grad);
void transformer_bwd_mlp(transformer_part *p, const gsl_vector *w, gsl_vector *grad);
void transformer_bwd_ln2(transformer_part *p, const gsl_vector *w, gsl_vector *grad);
void transformer_bwd_attn(transformer_part *p, const gsl_vector *w, gsl_vector *grad);
void transformer_bwd_ln1(transformer_part *p, const gsl_vector *w, gsl_vector *grad, gsl_matrix *dX_local);

/* Combines t ranks' grads (as above) into the full gradient: entries of split weights
 * from their owner, LayerNorm/bo/b2 from rank 0 (plain) or summed in rank order (SP). */
void transformer_grad_combine(size_t h, size_t t, int seqpar, const gsl_vector *const *parts, gsl_vector *out);

/* LayerNorm over the h columns of each row (eps 1e-5), the kernel every layer uses, for the
 * model around the layers (models/gpt.h's final LayerNorm): y = g * xhat + b with
 * xhat = (x - mean) * rstd; keeps xhat and rstd (one per row) for the backward. */
void transformer_ln_forward(const gsl_matrix *x, const double *g, const double *b, gsl_matrix *xhat, double *rstd,
                            gsl_matrix *y);
/* Given dy, sets dx and adds the rows' gain and bias gradients into dg and db, row by row. */
void transformer_ln_backward(const gsl_matrix *dy, const gsl_matrix *xhat, const double *rstd, const double *g,
                             double *dg, double *db, gsl_matrix *dx);

/* The MLP's GeLU (GPT-2's tanh form) and its derivative, for models/moe.h's experts. */
double transformer_gelu(double x);
double transformer_gelu_grad(double x);

/* A block of entries [off, off + len) of a layer's parameter vector (the layout above). */
typedef struct transformer_range {
  size_t off, len;
} transformer_range;

/* The entries tensor rank r of t holds of one layer, as ranges in layout order:
 * replicated = 1, the ones every rank holds (ln1_g, ln1_b, bo, ln2_g, ln2_b, b2: 4 ranges,
 * 6h entries); replicated = 0, its shards of the split ones (its Q, K, V columns and their
 * biases, its rows of Wo, its columns of W1 and b1, its rows of W2: 4h + 6 ranges,
 * (12h^2 + 7h)/t entries). Writes at most max ranges into out (NULL: only counts) and returns
 * how many there are; 0 if t does not divide h or r >= t. */
size_t transformer_shard_ranges(size_t h, size_t t, size_t r, int replicated, transformer_range *out, size_t max);

/* gather_output of a column-parallel layer: rank r's n x (c/t) block parts[r] becomes
 * columns [r*c/t, (r+1)*c/t) of out (n x c). Returns 0, or -1 if a shape does not fit. */
int transformer_gather_columns(size_t t, const gsl_matrix *const *parts, gsl_matrix *out);

#endif

#ifndef MODELS_MOE_H
#define MODELS_MOE_H
/* moe.h - a mixture-of-experts layer in place of a GPT layer's MLP: E experts, each an MLP of
 * the dense layer's shape (h -> 4h GeLU -> h), behind a softmax router (Shazeer et al. 2017),
 * with top-1 gating (Switch Transformer, Fedus et al. 2021) or top-2 (GShard, Lepikhin et al.
 * 2020), a capacity per expert with token dropping, and Switch's auxiliary load-balancing
 * loss. Exact forward and backward; the router's gradient flows through the gate values and
 * the auxiliary loss. No SimGrid.
 *
 * Routing, of the n rows X (n x h, the second LayerNorm's output) in groups:
 *   probabilities   p = softmax(X Wr), Wr [h x E], no bias;
 *   choices         top-1: the likeliest expert; top-2: the two likeliest (ties: the lowest id);
 *   gates           top-1: p of the chosen expert (Switch); top-2: p renormalised over the
 *                   two chosen, p_a / (p_a + p_b) (GShard);
 *   groups          the rows are cut into G groups routed apart (G = 1: one), as expert
 *                   parallelism routes each data-parallel rank's tokens: rows are in
 *                   Megatron's [s, b] order (row = position x b + example), group g holds the
 *                   rows of examples [g b/G, (g+1) b/G), in row order;
 *   capacity        C = ceil(capacity_factor x tokens_of_a_group x k / E) per expert per group;
 *   dropping        a group's assignments take an expert's slots in this fixed order: every
 *                   token's first choice in row (token index) order, then every token's second
 *                   choice in row order (GShard's priority of first choices); an assignment
 *                   finding its expert full is dropped. A dropped assignment contributes
 *                   nothing and its gate is not renormalised away; a token whose every
 *                   assignment is dropped passes through the residual alone;
 *   output          M_i = sum over i's kept assignments, in choice order, of gate x expert(x_i);
 *   auxiliary loss  aux = coefficient x E x (1/G) sum_g sum_e f_ge P_ge, f_ge the share of
 *                   group g's tokens whose first choice is e (before dropping), P_ge the mean
 *                   of p_e over them (Switch Transformer, eq. 4; GShard's l_aux uses the
 *                   first choice too); f is piecewise constant, so its gradient flows
 *                   through P alone.
 * An expert's buffer holds its kept assignments group after group, each group's in slot order;
 * an expert runs on its buffer's rows, so an expert-parallel run that receives each group's
 * rows in group order computes the same rows in the same order.
 *
 * Parameter layout of the mixture (one vector, moe_n_params(h, E) entries): Wr [h x E]
 * row-major, then expert e at moe_expert_offset(h, E, e): W1 [h x 4h], b1 [4h], W2 [4h x h],
 * b2 [h] (the dense layer's MLP block of transformer.h, in its order). A whole layer
 * (moe_layer_*) is transformer.h's layout up to and including ln2_b, then the mixture. */

#include <stddef.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>

#include "models/transformer.h"

typedef struct moe_config {
  size_t experts;         /* E >= 2; 0 in a model: no mixture, dense MLPs */
  size_t top_k;           /* 1 or 2, at most E */
  double capacity_factor; /* > 0 */
  double aux_coef;        /* >= 0; 0: no auxiliary loss */
  size_t groups;          /* 0 or 1: one group; else it divides the examples */
} moe_config;

/* 0 if c is usable (as above), else -1. */
int moe_config_check(const moe_config *c);
/* ceil(capacity_factor x tokens x k / E), computed as an exact ceiling of the product. */
size_t moe_capacity(const moe_config *c, size_t tokens);
size_t moe_expert_size(size_t h); /* 8h^2 + 5h */
size_t moe_expert_offset(size_t h, size_t experts, size_t e);
size_t moe_n_params(size_t h, size_t experts);
/* Forward flops of one expert on m tokens: its two GEMMs, 2 x 2 m h 4h (as the dense MLP's
 * share of transformer_layer_flops); backward is twice that. The router's 2 n h E is apart. */
double moe_expert_flops(size_t h, size_t m);

/* Wr and each expert's W1, W2 U(-g, g) with Glorot's g (sqrt(6 / (in + out))), biases
 * U(-0.1, 0.1), drawn from r in layout order. w has moe_n_params(h, E) entries. */
void moe_init_params(size_t h, size_t experts, gsl_rng *r, double *w);

/* The routing of n rows (above). Arrays n x k are row-major by token then choice. */
typedef struct moe_routing {
  size_t n, b, experts, top_k, groups, capacity; /* b examples; capacity per expert per group */
  double *prob;          /* n x E */
  size_t *choice;        /* n x k, likeliest first */
  double *gate;          /* n x k */
  long *slot;            /* n x k: the slot in its expert's group buffer, -1 if dropped */
  size_t *group_of;      /* n */
  size_t *kept;          /* G x E: assignments kept (the tokens group g sends expert e) */
  size_t *routed;        /* G x E: assignments routed, before dropping */
  size_t *first;         /* G x E: first choices (f's numerators) */
  size_t dropped;        /* assignments dropped */
  size_t dropped_tokens; /* tokens whose every assignment is dropped */
  double aux;            /* the auxiliary loss, coefficient included */
} moe_routing;

/* Routes X (n x h) with router Wr [h x E]; b is the number of examples (n / b positions), which
 * the groups divide. NULL if a shape or c does not fit. Free with moe_routing_free. */
moe_routing *moe_route(const moe_config *c, const double *Wr, const gsl_matrix *X, size_t b);
void moe_routing_free(moe_routing *r);
/* Rows of expert e's buffer (group after group, slot order): writes their token rows into
 * tok (NULL: only counts) and returns how many. */
size_t moe_expert_rows(const moe_routing *r, size_t e, size_t *tok);

/* Kept assignments per (shard, expert) into counts (shards x E, zeroed here): shard s holds
 * the rows of examples [s b/shards, (s+1) b/shards), as groups do; the tokens a data-parallel
 * rank holding shard s sends expert e. -1 unless shards divides b, else 0. With shards equal
 * to the groups this is kept. */
int moe_shard_counts(const moe_routing *r, size_t shards, size_t *counts);

/* One expert (we: its block) on the m rows of x: u = x W1 + b1 (m x 4h, kept for the
 * backward), y = GeLU(u) W2 + b2. BLAS GEMMs; m = 0 does nothing. */
void moe_expert_forward(size_t h, const double *we, const gsl_matrix *x, gsl_matrix *u, gsl_matrix *y);
/* Its backward from dy: adds the block's gradient into ge (same layout) and sets dx. */
void moe_expert_backward(size_t h, const double *we, const gsl_matrix *x, const gsl_matrix *u, const gsl_matrix *dy,
                         gsl_matrix *dx, double *ge);

/* The serial mixture: M (n x h) from X (n x h), w the mixture's parameters. When r is not
 * NULL, *r gets the routing (the caller frees it). Returns 0, or -1 if a shape does not fit. */
int moe_forward(const moe_config *c, size_t h, const double *w, const gsl_matrix *X, size_t b, gsl_matrix *M,
                moe_routing **r);
/* Given dM = dL/dM, for the loss L + aux: sets dX and writes the mixture's gradient into grad
 * (moe_n_params entries, overwritten), the router's through the gates and the auxiliary loss.
 * Recomputes the forward. Returns 0 or -1. */
int moe_backward(const moe_config *c, size_t h, const double *w, const gsl_matrix *X, size_t b,
                 const gsl_matrix *dM, gsl_matrix *dX, double *grad);

/* ---- The pieces, as an expert-parallel rank runs them ----
 * moe_forward is moe_route, then each expert on its buffer (moe_expert_rows' rows of X), then
 * moe_combine; moe_backward is moe_combine_backward, each expert's backward, then
 * moe_router_backward. An expert-parallel rank holding data shard g of G routes its own rows
 * alone (groups 1: the serial routing's group g), sends each expert's owner the rows of
 * moe_expert_rows in their order (the dispatch all-to-all), gets back the outputs (the
 * combine), and the owner runs its expert on the shards' rows concatenated in shard order: the
 * serial expert's buffer. y, dy, dx: per expert, its buffer's rows x h (NULL when empty). */
/* M (n x h, overwritten) = sum over row i's kept assignments, in choice order, of gate x y. */
void moe_combine(const moe_routing *r, const gsl_matrix *const *y, gsl_matrix *M);
/* Its backward from dM: dy[e]'s rows = gate x dM's row; dgate (n x k) = dM's row . y's row
 * (0 for a dropped assignment). */
void moe_combine_backward(const moe_routing *r, const gsl_matrix *const *y, const gsl_matrix *dM, gsl_matrix *const *dy,
                          double *dgate);
/* dX (overwritten) = the experts' input gradients dx added into their tokens' rows in expert
 * order, then the router's: through the gates (dgate) and the auxiliary loss counted with
 * weight aux_weight in the loss (1 serially; 1/G on a rank that routed 1 of G shards alone);
 * adds X^T dlogits into dWr. */
void moe_router_backward(const moe_config *c, const moe_routing *r, const double *Wr, const gsl_matrix *X,
                         const gsl_matrix *const *dx, const double *dgate, double aux_weight, double *dWr,
                         gsl_matrix *dX);

/* ---- A whole layer: Z = Y + M(LN2(Y)), Y = X + Attn(LN1(X)) ---- */
size_t moe_layer_n_params(size_t h, size_t experts);
/* transformer_init_params' draws for the attention and LayerNorms (the dense MLP's drawn and
 * dropped), then moe_init_params. w has moe_layer_n_params entries. */
void moe_layer_init_params(size_t h, size_t experts, gsl_rng *r, double *w);
/* Z from X (n x h, n = d->b d->s); *r as moe_forward's (may be NULL). Returns 0 or -1. */
int moe_layer_forward(const transformer_dims *d, const moe_config *c, const double *w, const gsl_matrix *X,
                      gsl_matrix *Z, moe_routing **r);
/* Given dZ, for the loss L + the layer's aux: dX and grad (moe_layer_n_params, overwritten). */
int moe_layer_backward(const transformer_dims *d, const moe_config *c, const double *w, const gsl_matrix *X,
                       const gsl_matrix *dZ, gsl_matrix *dX, double *grad);

#endif

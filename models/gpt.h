#ifndef MODELS_GPT_H
#define MODELS_GPT_H
/* gpt.h - a small GPT language model around transformer.h's layers: token and position
 * embeddings, L pre-LayerNorm layers, a final LayerNorm, logits tied to the token embedding and
 * the mean next-token cross-entropy (GPT-2, Radford et al. 2019, as Megatron-LM trains it). A
 * serial reference, a fast evaluation, and one tensor rank's share of Megatron's
 * vocabulary-parallel embedding and cross-entropy, with the collectives left to the caller. */

#include <stddef.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_vector.h>

#include "models/moe.h"

typedef struct gpt_dims {
  size_t vocab;  /* V: token ids 0..V-1 */
  size_t seq;    /* s: positions */
  size_t hidden; /* h */
  size_t heads;  /* attention heads; heads divides h */
  size_t layers; /* L */
  moe_config moe; /* moe.experts = 0 (as a zeroed struct): dense MLPs; else every layer's MLP is
                     a mixture of experts (models/moe.h), its layer in moe_layer_* layout */
} gpt_dims;

/* Offsets in one parameter vector: E [V x h] row-major (token v's embedding is row v; the
 * logits are X E^T), P [s x h] (position k is row k), layer l at layer0 + l x layer_size in
 * transformer.h's layout, then the final LayerNorm's lnf_g and lnf_b [h]. */
typedef struct gpt_layout {
  size_t embed, pos, layer0, layer_size, lnf_g, lnf_b, total;
} gpt_layout;

/* 0 if every size is > 0, heads divides hidden, vocab >= 2 and, with experts, moe_config_check
 * passes, else -1. */
int gpt_dims_check(const gpt_dims *d);
void gpt_layout_of(const gpt_dims *d, gpt_layout *l);
size_t gpt_n_params(const gpt_dims *d);

/* E and P ~ N(0, 0.02^2) (GPT-2's and Megatron-LM's init_method_std), then every layer by
 * transformer_init_params in layer order, the final LayerNorm's gain 1 and bias 0; draws from
 * r in layout order. w has gpt_n_params entries, contiguous. */
void gpt_init_params(const gpt_dims *d, gsl_rng *r, gsl_vector *w);

/* Sequences: b of them, seq + 1 token ids each, row-major (seqs[i (s+1) + k], ids held as
 * exact doubles): position k's input is token k and its target token k+1. Activations have
 * n = s b rows in Megatron's [s, b] order: row k b + i is sequence i's position k. */

/* Serial reference: the mean cross-entropy of the b s next-token predictions (plus, with
 * experts, every layer's auxiliary loss) into *loss and, when grad is not NULL, its gradient
 * (layout above). Plain loops throughout (the layers by transformer_layer_forward and
 * _backward, or moe_layer_*), independent of the partitioned code. Returns 0, or -1 if a shape
 * does not fit (with experts: moe.groups must divide b) or a token is not below V. */
int gpt_loss_grad(const gpt_dims *d, const gsl_vector *w, size_t b, const double *seqs, double *loss,
                  gsl_vector *grad);
/* gpt_loss_grad that also hands out each layer's routing: with experts, routes[k] (L entries)
 * gets layer k's (the caller frees them with moe_routing_free); NULL with dense layers. */
int gpt_loss_grad_routed(const gpt_dims *d, const gsl_vector *w, size_t b, const double *seqs, double *loss,
                         gsl_vector *grad, moe_routing **routes);

/* Held-out measures of n sequences: the mean next-token cross-entropy and the share of the
 * n s predictions whose largest logit is the target's (ties: the lowest id), one sequence at
 * a time through one-rank partitions (BLAS GEMMs). With experts, through the serial reference,
 * each sequence routed alone (one group: capacity over its s tokens), the cross-entropy
 * without the auxiliary loss. Returns 0 or -1 as gpt_loss_grad. */
int gpt_evaluate(const gpt_dims *d, const gsl_vector *w, size_t n, const double *seqs, double *loss,
                 double *accuracy);

/* ---- A vocabulary-parallel rank ----
 * Rank r of t owns token rows [r V/t, (r+1) V/t) of E, held as E_r (V/t x h, row-major):
 * Megatron-LM's VocabParallelEmbedding, whose rows the logits share. t divides V. */

/* Rank r's partial lookup into x (n x h): row k b + i is E_r's row of token seqs[i][k] when
 * rank r owns it, else 0; the sum over the ranks is the embedding. */
void gpt_embed_lookup(const gpt_dims *d, size_t t, size_t r, const double *E_r, size_t b, const double *seqs,
                      gsl_matrix *x);
/* Adds P's row of each row's position to x, whose row i is activation row row0 + i. */
void gpt_embed_positions(const gpt_dims *d, const double *P, size_t b, size_t row0, gsl_matrix *x);
/* The lookup's backward from dx (n x h, every row: the gradient at the embedding's output):
 * row by row, adds dx's row into dE_r's row of its token for the tokens rank r owns, and into
 * dP's row of its position when dP is not NULL. */
void gpt_embed_backward(const gpt_dims *d, size_t t, size_t r, size_t b, const double *seqs, const gsl_matrix *dx,
                        double *dE_r, double *dP);

/* One microbatch of b sequences through rank r's share of the final LayerNorm, the tied
 * logits and the cross-entropy; the rank holds activation rows [row0, row0 + rows) (all n of
 * them, or its sequence-parallel shard). Forward, in this order, the caller summing
 * gpt_head_red (n values) over the ranks after each of the last three steps but loss:
 *   norm     the final LayerNorm of the rank's rows z into its rows of gpt_head_x; with
 *            sequence parallelism the caller then allgathers the other rows;
 *   logits   logits = X E_r^T for every row; red = the rank's largest logit of each row;
 *   targets  shift c = (the sum of the ranks' maxima) / t; red = the target's logit - c on
 *            the rank that owns the target, 0 on the others;
 *   sumexp   red = the sum over the rank's tokens of exp(logit - c);
 *   loss     returns the mean over the rows of log(sum of exp) - (target's logit - c).
 * Megatron-LM's cross-entropy shifts by the largest logit, an allreduce with max; any shift
 * common to the ranks leaves the softmax as it is, and with sum-only collectives the mean of
 * the ranks' maxima is one. Backward: gpt_head_backward writes the rank's partial gradient of
 * X into gpt_head_dx (the caller sums it over the ranks: f'), then gpt_head_norm_backward
 * reads the rank's rows of the sum. NULL unless the shapes fit (t divides V, row0 + rows <= n). */
typedef struct gpt_head gpt_head;
gpt_head *gpt_head_create(const gpt_dims *d, size_t t, size_t r, size_t b, size_t row0, size_t rows);
void gpt_head_free(gpt_head *hd);
double *gpt_head_x(gpt_head *hd);  /* n x h: the final LayerNorm's output */
double *gpt_head_dx(gpt_head *hd); /* n x h: its gradient */
double *gpt_head_red(gpt_head *hd); /* n: what the caller sums */
void gpt_head_norm(gpt_head *hd, const double *g, const double *b, const gsl_matrix *z);
void gpt_head_logits(gpt_head *hd, const double *E_r);
void gpt_head_targets(gpt_head *hd, const double *seqs);
void gpt_head_sumexp(gpt_head *hd);
double gpt_head_loss(gpt_head *hd);
/* dlogits of the mean loss; adds dlogits^T X into dE_r, then sets gpt_head_dx = dlogits E_r. */
void gpt_head_backward(gpt_head *hd, const double *E_r, double *dE_r);
/* The final LayerNorm's backward of the rank's rows of gpt_head_dx into dz (rows x h); adds
 * the rows' gain and bias gradients into dg and db. */
void gpt_head_norm_backward(gpt_head *hd, const double *g, double *dg, double *db, gsl_matrix *dz);

#endif

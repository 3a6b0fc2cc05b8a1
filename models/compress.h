#ifndef MODELS_COMPRESS_H
#define MODELS_COMPRESS_H
/* compress.h - gradient compression with error feedback, one rank's side of one tensor:
 * top-k sparsification with Deep Gradient Compression's momentum correction and warm-up,
 * 1-bit quantisation, QSGD's stochastic levels and PowerSGD's rank-r factors; their exact
 * wire sizes and their flops from shapes. No communication here: algorithms/ moves them. */

#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>

typedef enum compress_method {
  COMPRESS_NONE,
  COMPRESS_TOPK,    /* Lin et al., ICLR 2018 (DGC) */
  COMPRESS_ONEBIT,  /* Seide et al., Interspeech 2014 */
  COMPRESS_QSGD,    /* Alistarh et al., NeurIPS 2017 */
  COMPRESS_POWERSGD /* Vogels et al., NeurIPS 2019 */
} compress_method;

typedef struct compress_params {
  compress_method method;
  double ratio;       /* top-k: fraction of a tensor's elements sent, (0, 1] */
  double momentum;    /* top-k: DGC's momentum correction m (0: plain error feedback) */
  long warmup_steps;  /* top-k: DGC's warm-up, steps over which the density falls to ratio */
  int levels;         /* QSGD: s >= 1 levels */
  int rank;           /* PowerSGD: r >= 1 */
} compress_params;

/* Bytes of a top-k index on the wire (a 32-bit element index). */
#define COMPRESS_INDEX_BYTES 4

/* One rank's state for one rows x cols tensor (row-major; a vector is 1 x n): the
 * error-feedback residual, DGC's momentum, PowerSGD's M and warm-started Q. */
typedef struct compress_state compress_state;

/* What one rank sends for one tensor (top-k, 1-bit, QSGD); the caller owns the arrays,
 * sized by compress_msg_alloc, and frees them with compress_msg_release. */
typedef struct compress_msg {
  compress_method method;
  size_t n, cols;     /* the tensor's elements, and its row length */
  int levels;         /* QSGD: s */
  size_t k;           /* top-k: entries sent, in increasing index order */
  uint32_t *idx;      /* top-k: [k] indices */
  double *val;        /* top-k: [k] values */
  unsigned char *bit; /* 1-bit: [n] 1 for the non-negative reconstruction value, 0 for the negative */
  int *level;         /* QSGD: [n] signed level in [-s, s] */
  double *scale;      /* 1-bit: [2 rows] per row (non-negative mean, negative mean); QSGD: [1] the L2 norm */
} compress_msg;

/* DGC's warm-up: in the first warmup_steps steps the density is 25%, 6.25%, 1.5625%, 0.39%
 * (each quarter of the warm-up four times sparser, Lin et al. sec. 3.3), never below ratio;
 * ratio afterwards. */
double compress_density(const compress_params *p, long step);
/* Top-k's entries for an n-element tensor at step: ceil(density n), at least 1. */
size_t compress_topk_k(const compress_params *p, size_t n, long step);

/* PowerSGD compresses a matrix with rows, cols > 1 whose factors are smaller than it:
 * r (rows + cols) < rows cols; any other tensor goes uncompressed in the factors' allreduce. */
int compress_powersgd_applies(const compress_params *p, size_t rows, size_t cols);

/* Bytes one rank's message for a rows x cols tensor carries at step (values of elem_bytes):
 *  top-k    k (COMPRESS_INDEX_BYTES + elem_bytes);
 *  1-bit    ceil(n / 8) + 2 rows elem_bytes (a bit per element, two scales per row);
 *  QSGD     ceil(n (1 + ceil(log2(s + 1))) / 8) + elem_bytes (sign and level per element, fixed
 *           width, and the norm);
 *  PowerSGD r (rows + cols) elem_bytes (P then Q), or n elem_bytes if it does not apply;
 *  none     n elem_bytes. */
double compress_wire_bytes(const compress_params *p, size_t rows, size_t cols, long step, size_t elem_bytes);
/* Flops one rank spends compressing a rows x cols tensor, and decompressing the messages of
 * `ranks` ranks (top-k, 1-bit, QSGD) or the factors' product (PowerSGD); compress.c says
 * what each counts. */
double compress_encode_flops(const compress_params *p, size_t rows, size_t cols, long step);
double compress_decode_flops(const compress_params *p, size_t rows, size_t cols, long step, size_t ranks);

/* A state for a rows x cols tensor, residual and momentum 0. PowerSGD draws its first Q
 * (cols x r, N(0, 1)) from init, which must give every rank the same draws; other methods
 * ignore init (may be NULL). Returns NULL if rows or cols is 0 or p is out of range. Free
 * with compress_state_free (NULL is a no-op). */
compress_state *compress_state_create(const compress_params *p, size_t rows, size_t cols, gsl_rng *init);
void compress_state_free(compress_state *s);
/* The error-feedback residual (rows x cols), owned by s. */
const double *compress_residual(const compress_state *s);

/* Arrays of m for s's tensor at its largest message (top-k at step 0); release with
 * compress_msg_release. */
void compress_msg_alloc(const compress_state *s, compress_msg *m);
void compress_msg_release(compress_msg *m);
/* For a message that travels as one allocation: lays m's arrays for s's message at step
 * out in mem, a block of the returned number of bytes aligned for a double (its doubles
 * first, then its indices, levels or bits), sized for exactly that step's message; with mem
 * NULL only returns the number. m owns nothing then: never compress_msg_release it. */
size_t compress_msg_place(const compress_state *s, long step, compress_msg *m, void *mem);

/* Top-k, 1-bit and QSGD. Error feedback: v = residual + g (top-k with momentum m: u = m u +
 * g, v = residual + u), the message encodes v, and the residual becomes v minus the
 * message's decoding (top-k also zeroes u where it sent: DGC's momentum factor masking).
 * Top-k sends the k entries of largest |v| (ties: lower index). 1-bit sends per row the
 * sign bits of v and two reconstruction values, the means of the row's non-negative and of
 * its negative entries. QSGD sends norm = ||v||_2 and level_i = sign(v_i) (l + b), l =
 * floor(s |v_i| / norm), b ~ Bernoulli(s |v_i| / norm - l) drawn from r in index order. */
void compress_encode(compress_state *s, const double *g, long step, gsl_rng *r, compress_msg *m);
/* out[i] += the message's value of element i. */
void compress_decode_add(const compress_msg *m, double *out);

/* PowerSGD (Vogels et al. Alg. 1), in three calls around the two allreduces:
 *  compress_powersgd_p: M = g + residual; P = M Q (rows x r, row-major) with the warm Q;
 *  compress_powersgd_q: P, the ranks' sum of P, is orthonormalised in place (modified
 *    Gram-Schmidt over its columns; a zero column stays zero); Q_local = M^T P (cols x r);
 *    the residual becomes M - P Q_local^T;
 *  compress_powersgd_decode: out = P Qsum^T (rows x cols), Qsum the ranks' sum of Q_local,
 *    which is kept as the next step's Q (warm start). */
void compress_powersgd_p(compress_state *s, const double *g, double *P);
void compress_powersgd_q(compress_state *s, double *P, double *Q);
void compress_powersgd_decode(compress_state *s, const double *P, const double *Qsum, double *out);
/* Modified Gram-Schmidt over the r columns of the rows x r row-major matrix A. */
void compress_orthonormalise(double *A, size_t rows, size_t r);

/* "none|topk|onebit|qsgd|powersgd"; the parser returns 0 or -1. */
int compress_method_parse(const char *s, compress_method *m);
const char *compress_method_name(compress_method m);

#endif

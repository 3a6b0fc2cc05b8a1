#ifndef MODELS_NOISE_SCALE_H
#define MODELS_NOISE_SCALE_H
/* noise_scale.h - the gradient noise scale of a model at given parameters (McCandlish,
 * Kaplan, Amodei et al. 2018, "An Empirical Model of Large-Batch Training", Appendix A.1):
 * B_simple = tr(Sigma) / |G|^2, where G is the expected gradient of one example's loss and
 * Sigma the covariance of that gradient. Below B_simple examples a step's gradient is
 * mostly noise, so larger (or several stale) batches make progress nearly in proportion to
 * their examples; far above it they waste them.
 *
 * Estimated from n rows without per-example gradients: the rows are cut into m = n / b
 * batches of b rows (the rest unused); with |g_b|^2 the mean over them of each batch's
 * squared gradient norm and |g_n|^2 that of their mean (the gradient of all m b rows),
 *   |G|^2    ~ (B |g_n|^2 - b |g_b|^2) / (B - b),   B = m b,
 *   tr(Sigma) ~ (|g_b|^2 - |g_n|^2) / (1/b - 1/B),
 * both unbiased (E|g_k|^2 = |G|^2 + tr(Sigma)/k for a mean of k independent rows); the
 * ratio is not, and its spread grows as B_simple approaches B: measure on rows well above
 * the value measured. */

#include <stddef.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "models/net.h"

/* The batch of b rows dtsim's runs measure with (run.noise_scale_examples): small against
 * every noise scale worth measuring, large enough that a batch's gradient is one dgemm. */
#define NOISE_SCALE_BATCH 32

typedef struct noise_scale {
  double grad_sq;     /* |G|^2 estimated; may come out <= 0 when B_simple is near B or above */
  double trace_sigma; /* tr(Sigma) estimated */
  double b_simple;    /* trace_sigma / grad_sq; +infinity when grad_sq <= 0 */
} noise_scale;

/* The estimate at parameters w of net n from the rows of X (labels y) in batches of b rows,
 * each gradient through net_loss_grad with workspace ws (which must take b rows); g is
 * scratch of n's parameter count. Returns 0, or -1 if b is 0, fewer than 2 batches fit, or
 * a shape does not fit. Deterministic: batches in row order, sums in a fixed order. */
int noise_scale_estimate(const net *n, const gsl_vector *w, const gsl_matrix *X, const double *y, size_t b,
                         net_ws *ws, gsl_vector *g, noise_scale *out);

#endif

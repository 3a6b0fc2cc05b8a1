#ifndef MODELS_MINIBATCH_H
#define MODELS_MINIBATCH_H
/* minibatch.h - one worker's minibatch gradients: its rows of the training set,
 * its own random stream, and the scratch space, so that every algorithm draws and
 * differentiates minibatches the same way (and Downpour's replica 0 draws exactly
 * what sequential SGD draws). */

#include <stdint.h>
#include <gsl/gsl_vector.h>

#include "models/data.h"
#include "models/net.h"

typedef struct minibatch minibatch;

/* A worker of rank `rank` drawing `batch` rows uniformly with replacement from rows
 * [begin, end) of d, with the stream rng_create(seed, RNG_ROLE_WORKER, rank). m and d
 * must outlive it. Returns NULL on an empty row range or a zero batch. */
minibatch *minibatch_create(const net *m, const dataset *d, size_t begin, size_t end, size_t batch,
                            uint64_t seed, int rank);
void minibatch_free(minibatch *mb);

/* Draws the next minibatch and writes the mean loss gradient at w into grad (and the
 * loss into *loss if not NULL). Returns 0, or -1 if shapes do not fit. */
int minibatch_gradient(minibatch *mb, const gsl_vector *w, gsl_vector *grad, double *loss);

/* The initial parameters of a run: Glorot-uniform from rng_create(seed, RNG_ROLE_INIT, 0).
 * Caller frees with gsl_vector_free. */
gsl_vector *minibatch_initial_params(const net *m, uint64_t seed);

/* A shared warmstart (Dean'12 sec. 5: every Downpour and Sandblaster run of Fig. 4
 * starts from the same ~10 h of simple SGD): minibatch_initial_params, then `steps`
 * steps of sequential SGD at rate lr on `batch` rows drawn with replacement from all
 * of d with the stream rng_create(seed, RNG_ROLE_WARMSTART, 0). steps = 0 gives the
 * initial parameters. Returns NULL on a zero batch, an empty d or shapes that do not
 * fit; caller frees with gsl_vector_free. */
gsl_vector *minibatch_warmstart(const net *m, const dataset *d, size_t batch, double lr, long steps, uint64_t seed);

#endif

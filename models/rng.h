#ifndef MODELS_RNG_H
#define MODELS_RNG_H
/* rng.h - per-actor random streams derived from one master seed.
 * Every consumer of randomness owns its own mt19937 stream, seeded from
 * (master seed, role, rank) through splitmix64, so streams never overlap by
 * accident and a run is reproducible whatever the scheduling. */

#include <gsl/gsl_rng.h>
#include <stdint.h>

/* Who draws from a stream. Append only: changing a value changes every result. */
typedef enum rng_role {
  RNG_ROLE_DATA = 1,   /* synthetic data generation (teacher weights, examples) */
  RNG_ROLE_SPLIT = 2,  /* train/test split of a loaded file */
  RNG_ROLE_INIT = 3,   /* initial model parameters */
  RNG_ROLE_WORKER = 4, /* minibatch draws of a worker / replica, rank = replica */
  RNG_ROLE_PS = 5,     /* parameter-server shard, rank = shard */
  RNG_ROLE_EVAL = 6,   /* evaluator */
  RNG_ROLE_MACHINE = 7, /* a machine's processing-time jitter, rank = partition */
  RNG_ROLE_GRAPH = 8,   /* random communication graph (G(n,p), geometric), rank 0 */
  RNG_ROLE_LINK = 9,    /* time-varying graph: which edges are active per round, rank 0 */
  RNG_ROLE_STRAGGLER = 10, /* [faults] stragglers: which workers are slow, rank 0 */
  RNG_ROLE_WARMSTART = 11, /* minibatch draws of the shared SGD warmstart, rank 0 */
  RNG_ROLE_HOST_SPEED = 12, /* platform.speed_spread: each host's fixed speed factor, rank 0 */
  RNG_ROLE_QSGD = 13,       /* QSGD's stochastic rounding of a data-parallel replica, rank = replica */
  RNG_ROLE_POWERSGD = 14,   /* PowerSGD's first Q, rank 0: the same draws on every replica */
  RNG_ROLE_NOISE_SCALE = 15 /* run.noise_scale_examples' rows drawn from a stream's teacher, rank 0 */
} rng_role;

/* Mixes (master, role, rank) with splitmix64 and maps the result into
 * [1, 2^32-1]: mt19937 uses 32 bits of its seed and treats 0 as 4357. */
unsigned long rng_seed_for(uint64_t master, int role, int rank);

/* Returns a new mt19937 stream seeded with rng_seed_for(); caller frees it
 * with gsl_rng_free(). Never returns NULL (allocation failure aborts). */
gsl_rng *rng_create(uint64_t master, int role, int rank);

#endif

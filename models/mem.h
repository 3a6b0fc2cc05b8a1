#ifndef MODELS_MEM_H
#define MODELS_MEM_H
/* mem.h - allocate or panic, for models/ (which has no SimGrid, hence no xbt_malloc):
 * an allocation failure, like a broken invariant, prints one line and aborts; the one-line
 * error a loader hands back (mem_seterr). And the model state a data-parallel GPU holds
 * under ZeRO's sharding (mem_zero_state). */

#include <stddef.h>
#include <gsl/gsl_matrix.h>

/* Prints "module: what" on stderr and aborts. */
void mem_die(const char *module, const char *what) __attribute__((noreturn));

/* Formats one line into err (errlen bytes), as snprintf; nothing when err is NULL or errlen 0. */
void mem_seterr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* malloc, calloc and realloc that never return NULL (a zero size allocates one byte). */
void *mem_alloc(size_t size);
void *mem_calloc(size_t n, size_t size);
void *mem_realloc(void *p, size_t size);

/* gsl_matrix_alloc that never returns NULL; free with gsl_matrix_free. */
gsl_matrix *mem_matrix(size_t rows, size_t cols);

/* The model state per GPU of data parallelism over nd ranks under ZeRO's stage (Rajbhandari
 * et al., SC'20, sec. 5.1 and Table 1): psi parameters and as many gradients of elem_bytes
 * each (2 in the paper's mixed precision), k bytes of optimizer state per parameter (12 for
 * mixed-precision Adam: the fp32 copy, momentum and variance). Stage 0 holds everything,
 * (2 + 2 + k) psi with 2-byte elements; stage 1 shards the optimizer state, 2 psi + 2 psi +
 * k psi / nd; stage 2 the gradients too, 2 psi + (2 + k) psi / nd; stage 3 the parameters
 * too, (2 + 2 + k) psi / nd. Bytes, unrounded (psi / nd where nd does not divide psi). */
typedef struct mem_zero {
  double params, grads, optimizer;
} mem_zero;
mem_zero mem_zero_state(int stage, double psi, double nd, double elem_bytes, double k);
double mem_zero_total(const mem_zero *m);

#endif

#ifndef MODELS_MEM_H
#define MODELS_MEM_H
/* mem.h - allocate or panic, for models/ (which has no SimGrid, hence no xbt_malloc):
 * an allocation failure, like a broken invariant, prints one line and aborts. */

#include <stddef.h>
#include <gsl/gsl_matrix.h>

/* Prints "module: what" on stderr and aborts. */
void mem_die(const char *module, const char *what) __attribute__((noreturn));

/* malloc, calloc and realloc that never return NULL (a zero size allocates one byte). */
void *mem_alloc(size_t size);
void *mem_calloc(size_t n, size_t size);
void *mem_realloc(void *p, size_t size);

/* gsl_matrix_alloc that never returns NULL; free with gsl_matrix_free. */
gsl_matrix *mem_matrix(size_t rows, size_t cols);

#endif

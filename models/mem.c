/* mem.c - allocate or panic; ZeRO's model state per GPU. */
#include "models/mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void mem_die(const char *module, const char *what)
{
  fprintf(stderr, "%s: %s\n", module, what);
  abort();
}

void mem_seterr(char *err, size_t errlen, const char *fmt, ...)
{
  if (err == NULL || errlen == 0)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

void *mem_alloc(size_t size)
{
  return mem_realloc(NULL, size);
}

void *mem_calloc(size_t n, size_t size)
{
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (p == NULL)
    mem_die("models", "out of memory");
  return p;
}

void *mem_realloc(void *p, size_t size)
{
  p = realloc(p, size ? size : 1);
  if (p == NULL)
    mem_die("models", "out of memory");
  return p;
}

gsl_matrix *mem_matrix(size_t rows, size_t cols)
{
  gsl_matrix *m = gsl_matrix_alloc(rows, cols);
  if (m == NULL)
    mem_die("models", "out of memory");
  return m;
}

mem_zero mem_zero_state(int stage, double psi, double nd, double elem_bytes, double k)
{
  mem_zero m = {elem_bytes * psi, elem_bytes * psi, k * psi};
  if (stage >= 1)
    m.optimizer /= nd;
  if (stage >= 2)
    m.grads /= nd;
  if (stage >= 3)
    m.params /= nd;
  return m;
}

double mem_zero_total(const mem_zero *m)
{
  return m->params + m->grads + m->optimizer;
}

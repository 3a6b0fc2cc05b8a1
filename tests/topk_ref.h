#ifndef TESTS_TOPK_REF_H
#define TESTS_TOPK_REF_H
/* topk_ref.h - the reference top-k the compression tests (check_compress, check_ps_compress, sim_ps_compress)
 * hold models/compress.c's selection to: independent of it, by repeated search. */

#include <math.h>
#include <stddef.h>
#include <string.h>

/* The k entries of largest |v[0..n)| by repeated search, ties to the lower index:
 * mark[i] = 1 for the chosen, 0 elsewhere. */
static inline void topk_ref(const double *v, size_t n, size_t k, unsigned char *mark)
{
  memset(mark, 0, n);
  for (size_t j = 0; j < k; j++) {
    size_t best = n;
    for (size_t i = 0; i < n; i++)
      if (!mark[i] && (best == n || fabs(v[i]) > fabs(v[best])))
        best = i;
    mark[best] = 1;
  }
}

#endif

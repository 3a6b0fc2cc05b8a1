#ifndef ALGORITHMS_COLLECTIVES_IMPL_H
#define ALGORITHMS_COLLECTIVES_IMPL_H
/* collectives_impl.h - what collectives.c (the collectives over mailboxes) and
 * collectives_ref.c (their serial references, formulas and names) share. Not part of
 * the module's interface (collectives.h). */

#include <stddef.h>

#include "algorithms/collectives.h"

/* The largest power of two <= p (p >= 1): the members recursive halving-doubling
 * pairs up after folding the others in. */
size_t coll_pow2_floor(size_t p);

/* Element i of block b of the result of op by algo over the p inputs x (root for
 * broadcast and reduce), added in the order the algorithm's schedule adds it; v is
 * scratch of p doubles. The rounds of collectives.c compute their blocks with it. */
double coll_reference_at(coll_op op, coll_algo algo, size_t p, size_t root, size_t b, size_t i,
                         const double *const *x, double *v);

#endif

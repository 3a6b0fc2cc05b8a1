#ifndef ALGORITHMS_COLLECTIVES_ROUNDS_H
#define ALGORITHMS_COLLECTIVES_ROUNDS_H
/* collectives_rounds.h - COLL_ROUNDS inside the collectives: whether a ring op on c runs as
 * one bulk-synchronous round, and the round of one ring op or of a batch of them
 * (collectives_rounds.c has the model). For collectives.c; callers use collectives.h. */

#include <stddef.h>

#include "algorithms/collectives_comm.h"

int coll_as_round(const coll_comm *c);
void coll_rounds_ring(coll_comm *c, size_t me, double *buf, size_t n, coll_op op);
void coll_rounds_batch(coll_comm *c, size_t me, const coll_op *ops, size_t nops, size_t reps, size_t n);

#endif

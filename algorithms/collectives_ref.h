#ifndef ALGORITHMS_COLLECTIVES_REF_H
#define ALGORITHMS_COLLECTIVES_REF_H
/* collectives_ref.h - what the collectives of collectives.h must give and take, apart from
 * any transport: the operations and algorithms, the blocks a vector is cut into, the serial
 * reference of each result, the alpha-beta formulas and the names. collectives.c computes
 * its rounds' blocks with it; nothing here sends a message. */

#include <stddef.h>

typedef enum coll_op {
  COLL_ALLREDUCE,
  COLL_REDUCE_SCATTER,
  COLL_ALLGATHER,
  COLL_BCAST,
  COLL_REDUCE
} coll_op;

typedef enum coll_algo {
  COLL_RING,            /* Patarasuk-Yuan / Baidu ring: reduce-scatter then allgather */
  COLL_HALVING_DOUBLING, /* Rabenseifner: recursive-halving reduce-scatter, recursive-doubling allgather */
  COLL_TREE             /* binomial tree: reduce to rank 0, then broadcast from it */
} coll_algo;

/* How a communicator's collectives are simulated (run.collectives; algorithms/README.md,
 * Collectives, has what each models and the error table).
 *  - COLL_MESSAGES: every step of every member is a SimGrid message, as MPICH sends it.
 *  - COLL_ROUNDS: a ring collective (allreduce, reduce-scatter, allgather) is one
 *    bulk-synchronous round: the members meet (a SimGrid barrier, no simulated time), the
 *    steps' latencies pass as one chain of zero-byte SimGrid transfers over the ring's
 *    slowest route (one per step beyond the first), then every member sends its right
 *    neighbour, as one SimGrid transfer, the bytes of all its steps, which shares the links
 *    under contention as SimGrid decides. p + 2(p-1) activities instead of 2p(p-1)
 *    messages; sums are computed in the ring's own order from the members' buffers, so
 *    numerics are those of COLL_MESSAGES bit for bit. Halving-doubling and trees (O(log p)
 *    messages per member already) and chunked communicators run as messages. */
typedef enum coll_mode { COLL_MESSAGES, COLL_ROUNDS } coll_mode;

/* Elements [*off, *off + *len) of an n-element vector cut into p blocks: block b holds
 * n/p elements, one more for b < n % p. */
void coll_block(size_t n, size_t p, size_t b, size_t *off, size_t *len);

/* The result member `me` must hold after op, computed serially in the collective's own
 * order from the p inputs x[0..p-1] (n doubles each) into out (n doubles):
 *  - ring (allreduce, reduce-scatter): element of block b = x[b+1] + x[b+2] + ... + x[b]
 *    (ranks mod p), added left to right: the order the block travels round the ring;
 *  - halving-doubling: pairwise tree over the ranks in order, ((x0+x1)+(x2+x3))+...;
 *    with p not a power of two, the first 2r ranks (r = p - 2^floor(lg p)) are first
 *    paired, x[2i] + x[2i+1], and the tree runs over those sums and the other ranks;
 *  - tree (allreduce, reduce): binomial order over ranks counted from root, s(q) = s(q) +
 *    s(q + m) for m = 1, 2, 4, ... (the pairwise tree when p is a power of two);
 *  - allgather: each block its owner's; bcast: root's vector.
 * For reduce-scatter only block me is set, for reduce only root's out; the rest of out is
 * left alone. */
void coll_reference(coll_op op, coll_algo algo, size_t p, size_t root, size_t me, size_t n, const double *const *x,
                    double *out);

/* Alpha-beta(-gamma) time of op on p members for n bytes (Thakur,
 * Rabenseifner and Gropp 2005): alpha s per message, beta s per byte, gamma s per byte
 * reduced. Unchunked transfers; every member on its own full-duplex link to a
 * non-blocking switch. ceil(lg p) steps for trees. */
double coll_formula(coll_op op, coll_algo algo, size_t p, double n, double alpha, double beta, double gamma);
/* nccl-tests' bus-bandwidth factor: busbw = algbw x factor (nccl-tests' doc/PERFORMANCE.md). */
double coll_busbw_factor(coll_op op, size_t p);

/* Names: "allreduce|reduce-scatter|allgather|broadcast|reduce" and
 * "ring|halving-doubling|tree". Parsers return 0 or -1. */
int coll_op_parse(const char *s, coll_op *op);
const char *coll_op_name(coll_op op);
int coll_algo_parse(const char *s, coll_algo *algo);
const char *coll_algo_name(coll_algo algo);
/* "messages|rounds"; the parser returns 0 or -1. */
int coll_mode_parse(const char *s, coll_mode *mode);
const char *coll_mode_name(coll_mode mode);

/* The largest power of two <= p (p >= 1): the members recursive halving-doubling
 * pairs up after folding the others in. */
size_t coll_pow2_floor(size_t p);

/* Element i of block b of the result of op by algo over the p inputs x (root for
 * broadcast and reduce), added in the order the algorithm's schedule adds it; v is
 * scratch of p doubles. The rounds of collectives.c compute their blocks with it. */
double coll_reference_at(coll_op op, coll_algo algo, size_t p, size_t root, size_t b, size_t i,
                         const double *const *x, double *v);

#endif

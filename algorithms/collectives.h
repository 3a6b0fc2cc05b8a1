#ifndef ALGORITHMS_COLLECTIVES_H
#define ALGORITHMS_COLLECTIVES_H
/* collectives.h - MPI-style collectives over mailboxes (ring, recursive halving-doubling,
 * binomial tree), called by every member's actor of a communicator: a group of hosts with
 * its own mailbox namespace, so several groups (tensor, data, pipeline) can coexist. The
 * operations, algorithms and modes, and what each must compute, are collectives_ref.h's. */

#include <stddef.h>
#include <simgrid/forward.h>

#include "algorithms/collectives_comm.h"
#include "algorithms/collectives_ref.h"
#include "algorithms/run.h"

/* coll_opts and the communicator (create, free, size, host, settings): collectives_comm.h. */

/* Every collective below is called by each member's actor with its own rank `me`, the same
 * n (and root, algo) on every member, in the same order on every member. buf holds n
 * doubles (numeric mode), or is NULL on every member (timing only: messages carry only
 * their simulated size, n * elem_bytes + MSG_HEADER_BYTES). Members that disagree break
 * an invariant: a message with another element count than expected aborts (xbt_assert).
 * Sums follow a fixed order per element, whatever the timing; coll_reference states
 * each order and computes it serially. */

/* Point to point: a blocking send of n elements to member `to`, and its receive. */
void coll_send(coll_comm *c, size_t me, size_t to, const double *buf, size_t n);
void coll_recv(coll_comm *c, size_t me, size_t from, double *buf, size_t n);

/* buf: in, each member's vector; out, the element-wise sum on every member. */
void coll_allreduce(coll_comm *c, size_t me, double *buf, size_t n, coll_algo algo);
/* Ring. In: each member's vector; out: coll_block(n, p, me) of buf holds that block's sum
 * (the rest of buf is scratch). */
void coll_reduce_scatter(coll_comm *c, size_t me, double *buf, size_t n);
/* Ring. In: coll_block(n, p, me) of buf holds member me's block; out: every block. */
void coll_allgather(coll_comm *c, size_t me, double *buf, size_t n);
/* Timing only: ops[0..nops) repeated reps times (allreduce with algo, reduce-scatter and
 * allgather, the latter two rings), back to back on n elements each, as if called one by
 * one. In COLL_ROUNDS, with every allreduce a ring, the whole batch is one round: one
 * barrier, one latency chain of all its steps (less one), one transfer per member of all
 * its bytes. On a contention-free ring that is the time of the collectives one after
 * another; under contention the batch's bytes share the links as one flow per member.
 * Otherwise the collectives run one by one, as messages or rounds. */
void coll_batch(coll_comm *c, size_t me, const coll_op *ops, size_t nops, size_t reps, size_t n, coll_algo algo);
/* Binomial tree. buf: root's vector, copied to every member. */
void coll_bcast(coll_comm *c, size_t me, size_t root, double *buf, size_t n);
/* Binomial tree. Out: the sum on root (other members' buf is scratch). */
void coll_reduce(coll_comm *c, size_t me, size_t root, double *buf, size_t n);

/* Pairwise exchange (p - 1 steps; in step k, member me sends to me + k and receives from
 * me - k, mod p). send holds member me's blocks for members 0..p-1 back to back, scount[q]
 * elements for q; recv gets the blocks from members 0..p-1 back to back, rcount[q] from q.
 * Member q's scount[me] must equal member me's rcount[q] (a mismatch aborts, as above), and
 * scount[me] == rcount[me] (its own block, copied). A block of 0 elements sends no message;
 * every other block is one message (chunked as opts say) of its elements x elem_bytes + the
 * header. send and recv are NULL on every member for timing only. Runs as messages in
 * COLL_ROUNDS too. */
void coll_alltoallv(coll_comm *c, size_t me, const double *send, const size_t *scount, double *recv,
                    const size_t *rcount);

#endif

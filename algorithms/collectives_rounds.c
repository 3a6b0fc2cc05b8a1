/* collectives_rounds.c - COLL_ROUNDS: a ring collective, or a batch of them, as one
 * bulk-synchronous round of SimGrid activities (the manual: algorithms/doc/collective.md). */
#include "algorithms/collectives_rounds.h"

#include <string.h>
#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/host.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "algorithms/coll_msg.h"
#include "algorithms/collectives_comm_impl.h"

/* ---- rounds (COLL_ROUNDS): a ring collective as one bulk-synchronous round ---------- *
 *
 * A ring collective of s steps (2(p-1) for allreduce, p-1 for reduce-scatter and
 * allgather) costs, on a contention-free ring, s (alpha + b beta): a latency per step and
 * the bytes of every step. A round keeps both terms as SimGrid activities and drops the
 * 2p(p-1)-message count:
 *  1. every member arrives at the communicator's barrier (no simulated time): the round
 *     starts when the last member is there, as no ring step of the slowest member's
 *     neighbours can complete before it arrives;
 *  2. member 0 runs the chain of the steps' latencies: s - 1 zero-byte SimGrid transfers
 *     (sg_host_sendto) over the ring pair with the largest route latency, the pair every
 *     step waits for; the others wait at the barrier again. Each transfer takes what
 *     SimGrid's network model gives a zero-byte message on that route (LV08's latency
 *     factor included); the s-th latency is the bulk transfer's own;
 *  3. every member sends its right neighbour one message of the bytes of all its steps
 *     (each step's elements x elem_bytes + the 64-byte header, exactly as the step
 *     messages add up, so links.csv and the byte totals are unchanged) and receives its left
 *     neighbour's: the bandwidth each flow gets, with every other flow on its links, is
 *     SimGrid's. Each member leaves when its own send and receive are done.
 * What it does not model: within a round no member runs ahead of or behind its neighbours
 * step by step, so a bottleneck flow that message-level steps would hold every step behind
 * shares its links with the others' whole transfers instead (algorithms/README.md,
 * Collectives: the error table).
 *
 * Numerics: the members publish their input buffers before the first barrier; between the
 * barriers member b computes block b of the result in the ring's own order (coll_reference_at,
 * the order messages add it in), reading the others' inputs, which nobody writes until
 * every member has passed the second barrier; after it each member copies the blocks it
 * receives. The sums are therefore those of message level bit for bit. */

/* Steps of a ring op on p members. */
static size_t ring_steps(coll_op op, size_t p)
{
  return op == COLL_ALLREDUCE ? 2 * (p - 1) : p - 1;
}

/* Elements member r sends to its right neighbour over a ring op's steps, in *elems, and the
 * elements of them it adds on arrival at r + 1 (reduce-scatter steps), in *reduced: the
 * blocks ring_reduce_scatter and ring_allgather send, each message elems x elem_bytes + 64. */
static void ring_sent(coll_op op, size_t p, size_t n, size_t r, size_t *elems, size_t *reduced)
{
  size_t e = 0, red = 0, off, len;
  if (op != COLL_ALLGATHER)
    for (size_t s = 0; s + 1 < p; s++) {
      coll_block(n, p, (r + 2 * p - s - 1) % p, &off, &len);
      e += len;
      red += len;
    }
  if (op != COLL_REDUCE_SCATTER)
    for (size_t s = 0; s + 1 < p; s++) {
      coll_block(n, p, (r + p - s) % p, &off, &len);
      e += len;
    }
  *elems = e;
  *reduced = red;
}

/* Between the barriers: member me's block of the result, from every member's input. */
static void rounds_part(coll_comm *c, size_t me, coll_op op, size_t n)
{
  size_t p = c->p, off, len;
  coll_rank *rk = &c->ranks[me];
  coll_block(n, p, me, &off, &len);
  if (len > rk->part_cap) {
    rk->part = xbt_realloc(rk->part, len * sizeof(double));
    rk->part_cap = len;
  }
  if (op == COLL_ALLGATHER) {
    memcpy(rk->part, rk->in + off, len * sizeof(double));
    return;
  }
  const double **x = xbt_malloc(p * sizeof(double *));
  double *v = xbt_malloc(p * sizeof(double));
  for (size_t k = 0; k < p; k++)
    x[k] = c->ranks[k].in;
  for (size_t i = 0; i < len; i++)
    rk->part[i] = coll_reference_at(op, COLL_RING, p, 0, me, off + i, x, v);
  xbt_free(v);
  xbt_free(x);
}

/* The round's first barrier, then the check that every member called the same. */
static void rounds_meet(coll_comm *c, size_t me, coll_op op, size_t n, size_t batch, const double *buf)
{
  coll_rank *rk = &c->ranks[me];
  rk->op = op;
  rk->n = n;
  rk->batch = batch;
  rk->in = buf;
  account_comm_begin();
  sg_barrier_wait(c->bar);
  for (size_t k = 0; k < c->p; k++) {
    const coll_rank *o = &c->ranks[k];
    xbt_assert(o->op == op && o->n == n && o->batch == batch && (o->in == NULL) == (buf == NULL),
               "%s: member %zu called %s of %zu elements%s (batch %zu), member %zu %s of %zu%s (batch %zu): members "
               "called different collectives",
               c->ns, me, coll_op_name(op), n, buf ? "" : " (timing only)", batch, k, coll_op_name(o->op), o->n,
               o->in ? "" : " (timing only)", o->batch);
  }
}

/* Member 0 runs the chain of `steps` - 1 latencies while the others wait (none with
 * coll_comm_set_no_chain); then the second barrier. */
static void rounds_chain(coll_comm *c, size_t me, size_t steps)
{
  if (me == 0 && !c->no_chain)
    for (size_t s = 1; s < steps; s++)
      sg_host_sendto(c->slow_src, c->slow_dst, 0);
  sg_barrier_wait(c->bar);
}

/* The round's transfers: member me sends its right neighbour out_elems elements (the
 * bytes of `steps` step messages) and receives in_elems from its left, `reduced` of them
 * added on arrival. */
static void rounds_transfer(coll_comm *c, size_t me, size_t out_elems, size_t in_elems, size_t reduced, size_t steps)
{
  size_t p = c->p, right = (me + 1) % p, left = (me + p - 1) % p;
  peer_box *b = coll_box_of(c, me, right);
  coll_msg *m = coll_msg_create((int)me, b->sent++, out_elems, 0);
  double bytes = (double)out_elems * (double)c->o.elem_bytes + (double)(steps * MSG_HEADER_BYTES);
  sg_comm_t both[2];
  pending pd;
  both[0] = msg_send_async(b->out, c->hosts[right], &m->hdr, bytes);
  coll_post_recv(c, me, left, &pd);
  both[1] = pd.comm;
  sg_comm_wait_all(both, 2);
  account_comm_end();
  coll_take_recv(c, me, &pd, NULL, 0, in_elems, 0);
  coll_reduce_cost(c, reduced);
}

void coll_rounds_ring(coll_comm *c, size_t me, double *buf, size_t n, coll_op op)
{
  size_t p = c->p, left = (me + p - 1) % p;
  rounds_meet(c, me, op, n, 0, buf);
  if (buf)
    rounds_part(c, me, op, n);
  rounds_chain(c, me, ring_steps(op, p));
  if (buf)
    for (size_t k = 0; k < p; k++) {
      size_t off, len;
      if (op == COLL_REDUCE_SCATTER ? k != me : op == COLL_ALLGATHER && k == me)
        continue;
      coll_block(n, p, k, &off, &len);
      memcpy(buf + off, c->ranks[k].part, len * sizeof(double));
    }
  size_t out_elems, in_elems, reduced, unused;
  ring_sent(op, p, n, me, &out_elems, &unused);
  ring_sent(op, p, n, left, &in_elems, &reduced);
  rounds_transfer(c, me, out_elems, in_elems, reduced, ring_steps(op, p));
}

/* Whether op on c runs as a round: rounds mode, more than one member, unchunked. */
int coll_as_round(const coll_comm *c)
{
  return c->o.mode == COLL_ROUNDS && c->p > 1 && c->chunk_elems == SIZE_MAX;
}

/* A batch as one round: the steps of all its collectives in one latency chain, the bytes
 * of all of them in one transfer per member. */
void coll_rounds_batch(coll_comm *c, size_t me, const coll_op *ops, size_t nops, size_t reps, size_t n)
{
  size_t p = c->p, left = (me + p - 1) % p, steps = 0, out_elems = 0, in_elems = 0, reduced = 0;
  for (size_t i = 0; i < nops; i++) {
    size_t o, in, r, unused;
    ring_sent(ops[i], p, n, me, &o, &unused);
    ring_sent(ops[i], p, n, left, &in, &r);
    steps += reps * ring_steps(ops[i], p);
    out_elems += reps * o;
    in_elems += reps * in;
    reduced += reps * r;
  }
  rounds_meet(c, me, ops[0], n, nops * reps, NULL);
  rounds_chain(c, me, steps);
  rounds_transfer(c, me, out_elems, in_elems, reduced, steps);
}

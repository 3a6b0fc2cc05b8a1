/* collectives.c - collectives over mailboxes, with real payloads or sizes only: ring
 * (Patarasuk and Yuan 2009), recursive halving-doubling (Rabenseifner) and binomial trees,
 * as MPICH builds them; their serial references, alpha-beta formulas and names are in
 * collectives_ref.h. Sums: a member adds what it receives into its own
 * buffer, element by element, so each element's result is set by the grouping of the tree
 * or chain the algorithm builds, which the schedule fixes (coll_reference). The SMs a
 * collective holds have a section of their own below; rounds (COLL_ROUNDS) are in
 * collectives_rounds.c, the communicator and its transfers in collectives_comm.c;
 * algorithms/doc/collective.md is the manual. */
#include "algorithms/collectives.h"

#include <math.h>
#include <string.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "algorithms/coll_msg.h"
#include "algorithms/collectives_comm_impl.h"
#include "algorithms/collectives_rounds.h"

/* Receives kept posted per transfer: combine one chunk while the next travels. */
#define COLL_WINDOW 2

/* Transfers (their mailboxes, chunks and receives): collectives_comm.c. */

static size_t n_chunks(const coll_comm *c, size_t len)
{
  return len <= c->chunk_elems ? 1 : len / c->chunk_elems + (len % c->chunk_elems != 0);
}

/* Chunk k of a transfer of len elements starting at off. */
static void chunk_at(const coll_comm *c, size_t off, size_t len, size_t k, size_t *coff, size_t *clen)
{
  size_t step = len <= c->chunk_elems ? len : c->chunk_elems;
  *coff = off + k * step;
  *clen = k * step + step <= len ? step : len - k * step;
}

/* Posts one message of elements [off, off + len) of buf (none when buf is NULL) to `to`. */
static sg_comm_t post_send(coll_comm *c, size_t me, size_t to, const double *buf, size_t off, size_t len)
{
  peer_box *b = coll_box_of(c, me, to);
  coll_msg *m = coll_msg_create((int)me, b->sent++, len, buf ? len : 0);
  if (m->n)
    memcpy(m->data, buf + off, len * sizeof(double));
  return msg_send_async(b->out, c->hosts[to], &m->hdr, msg_bytes((double)len, c->o.elem_bytes));
}

static void finish_recv(coll_comm *c, size_t me, pending *pd, double *buf, size_t off, size_t len, int reduce)
{
  account_comm_wait(pd->comm);
  coll_take_recv(c, me, pd, buf, off, len, reduce);
}

/* One step of a collective: elements [soff, soff + slen) of buf go to `to` while
 * [roff, roff + rlen) come from `from` and are added (reduce) or copied into buf. Either
 * side may be absent (NO_PEER). Chunked as the top of the file says. */
#define NO_PEER ((size_t)-1)
static void exchange(coll_comm *c, size_t me, size_t to, size_t soff, size_t slen, size_t from, size_t roff,
                     size_t rlen, double *buf, int reduce)
{
  size_t ns = to == NO_PEER ? 0 : n_chunks(c, slen), nr = from == NO_PEER ? 0 : n_chunks(c, rlen);
  pending win[COLL_WINDOW];
  if (ns <= 1 && nr <= 1) { /* one message each way: wait for both at once */
    sg_comm_t both[2];
    size_t k = 0;
    if (ns)
      both[k++] = post_send(c, me, to, buf, soff, slen);
    if (nr) {
      coll_post_recv(c, me, from, &win[0]);
      both[k++] = win[0].comm;
    }
    msg_wait_all(both, k);
    if (nr)
      coll_take_recv(c, me, &win[0], buf, roff, rlen, reduce);
    return;
  }
  sg_comm_t *sends = xbt_malloc((ns ? ns : 1) * sizeof(sg_comm_t));
  for (size_t k = 0; k < ns; k++) {
    size_t o, l;
    chunk_at(c, soff, slen, k, &o, &l);
    sends[k] = post_send(c, me, to, buf, o, l);
  }
  for (size_t k = 0; k < nr && k < COLL_WINDOW; k++)
    coll_post_recv(c, me, from, &win[k]);
  for (size_t k = 0; k < nr; k++) {
    size_t o, l;
    chunk_at(c, roff, rlen, k, &o, &l);
    finish_recv(c, me, &win[k % COLL_WINDOW], buf, o, l, reduce);
    if (k + COLL_WINDOW < nr)
      coll_post_recv(c, me, from, &win[k % COLL_WINDOW]);
  }
  if (ns)
    msg_wait_all(sends, ns);
  xbt_free(sends);
}

/* ---- the SMs a collective holds (opts.hold_sms) ----------------------------------- *
 *
 * NCCL runs a collective as a kernel of one CUDA block per channel, each on an SM that no
 * compute kernel shares, from the moment the member enters it (waiting for its peers
 * included) to its end. A member's GPU host is one core whose speed is the device's: while
 * the member is in a collective, an execution bounded at the held share of that speed runs
 * beside whatever the host computes (account_hold_begin), and SimGrid's CPU sharing leaves a
 * concurrent execution (an overlapped GEMM) the rest; with nothing beside it, it costs no
 * time. It is cancelled when the collective ends (account_hold_end). The HBM it takes too:
 * coll_comm_set_hbm, at the rate the member sent in its previous allreduce. */
static sg_exec_t hold_begin(const coll_comm *c, size_t me)
{
  double share = c->held[me] + (1 - c->held[me]) * fmin(c->hbm_per_Bps * c->rate[me], 1);
  return c->p > 1 ? account_hold_begin(share) : NULL; /* a member alone runs no kernel */
}

void coll_send(coll_comm *c, size_t me, size_t to, const double *buf, size_t n)
{
  exchange(c, me, to, 0, n, NO_PEER, 0, 0, (double *)buf, 0); /* sends only read buf */
}

void coll_recv(coll_comm *c, size_t me, size_t from, double *buf, size_t n)
{
  exchange(c, me, NO_PEER, 0, 0, from, 0, n, buf, 0);
}


/* ---- all-to-all of variable blocks (pairwise exchange, MPICH's alltoallv for long
 * messages) -------------------------------------------------------------------------- *
 * Step k = 1 .. p-1: member me sends its block for (me + k) mod p while it receives the block
 * from (me - k) mod p, so every step is a permutation and no member receives from two at
 * once. A pair whose block is empty exchanges nothing (both ends know the count). The
 * blocks travel in one scratch buffer, sends first, receives after. */
static size_t sum_counts(const size_t *n, size_t p)
{
  size_t t = 0;
  for (size_t i = 0; i < p; i++)
    t += n[i];
  return t;
}

void coll_alltoallv(coll_comm *c, size_t me, const double *send, const size_t *scount, double *recv,
                    const size_t *rcount)
{
  size_t p = c->p, st = sum_counts(scount, p), rt = sum_counts(rcount, p);
  xbt_assert(scount[me] == rcount[me], "%s: member %zu keeps %zu elements but expects %zu from itself", c->ns, me,
             scount[me], rcount[me]);
  double *buf = send ? xbt_malloc((st + rt + 1) * sizeof(double)) : NULL;
  size_t *soff = xbt_malloc(p * sizeof(size_t)), *roff = xbt_malloc(p * sizeof(size_t));
  for (size_t i = 0, so = 0, ro = st; i < p; so += scount[i], ro += rcount[i], i++) {
    soff[i] = so;
    roff[i] = ro;
  }
  if (buf && st)
    memcpy(buf, send, st * sizeof(double));
  sg_exec_t h = hold_begin(c, me);
  account_label_push("alltoallv pairwise %s", c->ns);
  for (size_t k = 1; k < p; k++) {
    size_t to = (me + k) % p, from = (me + p - k) % p;
    exchange(c, me, scount[to] ? to : NO_PEER, soff[to], scount[to], rcount[from] ? from : NO_PEER, roff[from],
             rcount[from], buf, 0);
  }
  account_label_pop();
  account_hold_end(h);
  if (buf) {
    memcpy(buf + roff[me], buf + soff[me], scount[me] * sizeof(double));
    if (rt)
      memcpy(recv, buf + st, rt * sizeof(double));
  }
  xbt_free(buf);
  xbt_free(soff);
  xbt_free(roff);
}

/* ---- ring (Patarasuk and Yuan 2009; MPICH allreduce_intra_ring.c) ----------------- */

/* Step s of p-1: send block (me - s - 1) to the right, receive block (me - s - 2) from
 * the left and add it to ours, so member me ends with block me complete and block b's
 * sum runs x[b+1], x[b+2], ..., x[b]. */
static void ring_reduce_scatter(coll_comm *c, size_t me, double *buf, size_t n)
{
  size_t p = c->p, right = (me + 1) % p, left = (me + p - 1) % p;
  for (size_t s = 0; s + 1 < p; s++) {
    size_t sb = (me + 2 * p - s - 1) % p, rb = (me + 2 * p - s - 2) % p, so, sl, ro, rl;
    coll_block(n, p, sb, &so, &sl);
    coll_block(n, p, rb, &ro, &rl);
    exchange(c, me, right, so, sl, left, ro, rl, buf, 1);
  }
}

/* Step s of p-1: send block (me - s) to the right, receive block (me - s - 1). */
static void ring_allgather(coll_comm *c, size_t me, double *buf, size_t n)
{
  size_t p = c->p, right = (me + 1) % p, left = (me + p - 1) % p;
  for (size_t s = 0; s + 1 < p; s++) {
    size_t sb = (me + p - s) % p, rb = (me + 2 * p - s - 1) % p, so, sl, ro, rl;
    coll_block(n, p, sb, &so, &sl);
    coll_block(n, p, rb, &ro, &rl);
    exchange(c, me, right, so, sl, left, ro, rl, buf, 0);
  }
}

static void reduce_scatter(coll_comm *c, size_t me, double *buf, size_t n)
{
  if (coll_as_round(c))
    coll_rounds_ring(c, me, buf, n, COLL_REDUCE_SCATTER);
  else
    ring_reduce_scatter(c, me, buf, n);
}

static void allgather(coll_comm *c, size_t me, double *buf, size_t n)
{
  if (coll_as_round(c))
    coll_rounds_ring(c, me, buf, n, COLL_ALLGATHER);
  else
    ring_allgather(c, me, buf, n);
}

void coll_reduce_scatter(coll_comm *c, size_t me, double *buf, size_t n)
{
  sg_exec_t h = hold_begin(c, me);
  account_label_push("reduce-scatter ring %s", c->ns);
  reduce_scatter(c, me, buf, n);
  account_label_pop();
  account_hold_end(h);
}

void coll_allgather(coll_comm *c, size_t me, double *buf, size_t n)
{
  sg_exec_t h = hold_begin(c, me);
  account_label_push("allgather ring %s", c->ns);
  allgather(c, me, buf, n);
  account_label_pop();
  account_hold_end(h);
}

/* ---- recursive halving-doubling (Rabenseifner; MPICH
 * allreduce_intra_reduce_scatter_allgather.c) --------------------------------------- */

/* Elements [*off, *off + *len) of blocks [lo, hi) of q blocks. */
static void blocks_span(size_t n, size_t q, size_t lo, size_t hi, size_t *off, size_t *len)
{
  size_t o1, l1, o2, l2;
  coll_block(n, q, lo, &o1, &l1);
  coll_block(n, q, hi - 1, &o2, &l2);
  *off = o1;
  *len = o2 + l2 - o1;
}

/* On q = 2^k virtual members (vr, real member real(vr)): recursive halving with
 * distance 1, 2, 4, ... (so partial sums pair neighbours first: the pairwise tree in
 * rank order), then recursive doubling back, distance q/2 down to 1. */
static void halving_doubling(coll_comm *c, size_t me, size_t vr, size_t q, size_t r, double *buf, size_t n)
{
#define REAL(v) ((v) < r ? 2 * (v) + 1 : (v) + r)
  size_t lo = 0, hi = q; /* the blocks this member is responsible for */
  for (size_t mask = 1; mask < q; mask <<= 1) { /* reduce-scatter: keep half, send half */
    size_t mid = (lo + hi) / 2, peer = REAL(vr ^ mask), ko, kl, go, gl;
    int lower = (vr & mask) == 0;
    blocks_span(n, q, lower ? lo : mid, lower ? mid : hi, &ko, &kl);
    blocks_span(n, q, lower ? mid : lo, lower ? hi : mid, &go, &gl);
    exchange(c, me, peer, go, gl, peer, ko, kl, buf, 1);
    if (lower)
      hi = mid;
    else
      lo = mid;
  }
  for (size_t mask = q / 2; mask >= 1; mask >>= 1) { /* allgather: swap halves, double */
    size_t w = hi - lo, peer = REAL(vr ^ mask), mo, ml, po, pl;
    int lower = (vr & mask) == 0;
    size_t plo = lower ? hi : lo - w;
    blocks_span(n, q, lo, hi, &mo, &ml);
    blocks_span(n, q, plo, plo + w, &po, &pl);
    exchange(c, me, peer, mo, ml, peer, po, pl, buf, 0);
    if (lower)
      hi += w;
    else
      lo -= w;
  }
#undef REAL
}

/* p not a power of two: the first 2r members pair up, the even one hands its vector to
 * the odd one and gets the result back at the end (MPICH's approach: 2 more steps of the
 * whole vector). */
static void allreduce_hd(coll_comm *c, size_t me, double *buf, size_t n)
{
  size_t p = c->p, q = coll_pow2_floor(p), r = p - q;
  if (me < 2 * r && me % 2 == 0) {
    exchange(c, me, me + 1, 0, n, NO_PEER, 0, 0, buf, 0);
    exchange(c, me, NO_PEER, 0, 0, me + 1, 0, n, buf, 0);
    return;
  }
  if (me < 2 * r)
    exchange(c, me, NO_PEER, 0, 0, me - 1, 0, n, buf, 1);
  halving_doubling(c, me, me < 2 * r ? me / 2 : me - r, q, r, buf, n);
  if (me < 2 * r)
    exchange(c, me, me - 1, 0, n, NO_PEER, 0, 0, buf, 0);
}

/* ---- binomial trees (MPICH bcast_intra_binomial.c, reduce_intra_binomial.c) -------- */

/* Member q (counted from root) receives from q - m, m its lowest set bit, then sends
 * to q + m' for m' = m/2, m/4, ..., 1 (root: from the largest power of two below p),
 * largest subtree first. Chunk k is forwarded while chunk k+1 arrives. */
static void tree_bcast(coll_comm *c, size_t me, size_t root, double *buf, size_t n)
{
  size_t p = c->p, q = (me + p - root) % p, mask = 1, nc = n_chunks(c, n);
  while (mask < p && !(q & mask))
    mask <<= 1;
  size_t parent = q ? (q - mask + root) % p : NO_PEER;
  pending win;
  if (parent != NO_PEER)
    coll_post_recv(c, me, parent, &win);
  for (size_t k = 0; k < nc; k++) {
    size_t o, l;
    chunk_at(c, 0, n, k, &o, &l);
    if (parent != NO_PEER) {
      finish_recv(c, me, &win, buf, o, l, 0);
      if (k + 1 < nc)
        coll_post_recv(c, me, parent, &win);
    }
    for (size_t m = mask >> 1; m >= 1; m >>= 1)
      if (q + m < p)
        account_comm_wait(post_send(c, me, (q + m + root) % p, buf, o, l));
  }
}

/* Member q adds chunk k of each child q + m (m = 1, 2, 4, ... below its lowest set bit)
 * in that order, then sends it to its parent q - m. */
static void tree_reduce(coll_comm *c, size_t me, size_t root, double *buf, size_t n)
{
  size_t p = c->p, q = (me + p - root) % p, mask = 1, nc = n_chunks(c, n);
  while (mask < p && !(q & mask))
    mask <<= 1;
  size_t parent = q ? (q - mask + root) % p : NO_PEER;
  sg_comm_t *up = xbt_malloc(nc * sizeof(sg_comm_t));
  for (size_t k = 0; k < nc; k++) {
    size_t o, l;
    chunk_at(c, 0, n, k, &o, &l);
    for (size_t m = 1; m < mask && q + m < p; m <<= 1) {
      pending pd;
      coll_post_recv(c, me, (q + m + root) % p, &pd);
      finish_recv(c, me, &pd, buf, o, l, 1);
    }
    if (parent != NO_PEER)
      up[k] = post_send(c, me, parent, buf, o, l);
  }
  if (parent != NO_PEER)
    msg_wait_all(up, nc);
  xbt_free(up);
}

void coll_bcast(coll_comm *c, size_t me, size_t root, double *buf, size_t n)
{
  xbt_assert(root < c->p, "%s: root %zu of %zu members", c->ns, root, c->p);
  if (c->p == 1)
    return;
  sg_exec_t h = hold_begin(c, me);
  account_label_push("broadcast tree %s", c->ns);
  tree_bcast(c, me, root, buf, n);
  account_label_pop();
  account_hold_end(h);
}

void coll_reduce(coll_comm *c, size_t me, size_t root, double *buf, size_t n)
{
  xbt_assert(root < c->p, "%s: root %zu of %zu members", c->ns, root, c->p);
  if (c->p == 1)
    return;
  sg_exec_t h = hold_begin(c, me);
  account_label_push("reduce tree %s", c->ns);
  tree_reduce(c, me, root, buf, n);
  account_label_pop();
  account_hold_end(h);
}

static void allreduce(coll_comm *c, size_t me, double *buf, size_t n, coll_algo algo)
{
  switch (algo) {
  case COLL_RING:
    if (coll_as_round(c)) {
      coll_rounds_ring(c, me, buf, n, COLL_ALLREDUCE);
      return;
    }
    ring_reduce_scatter(c, me, buf, n);
    ring_allgather(c, me, buf, n);
    return;
  case COLL_HALVING_DOUBLING:
    allreduce_hd(c, me, buf, n);
    return;
  case COLL_TREE:
    tree_reduce(c, me, 0, buf, n);
    tree_bcast(c, me, 0, buf, n);
    return;
  }
  xbt_die("unknown allreduce algorithm %d", (int)algo);
}

void coll_allreduce(coll_comm *c, size_t me, double *buf, size_t n, coll_algo algo)
{
  if (c->p == 1)
    return;
  sg_exec_t h = hold_begin(c, me);
  double t0 = simgrid_get_clock();
  account_label_push("allreduce %s %s", coll_algo_name(algo), c->ns);
  allreduce(c, me, buf, n, algo);
  account_label_pop();
  account_hold_end(h);
  double dt = simgrid_get_clock() - t0; /* each algorithm sends about a ring's 2 (p - 1) / p n */
  if (c->hbm_per_Bps > 0 && dt > 0)
    c->rate[me] = 2.0 * (double)(c->p - 1) * (double)n * (double)c->o.elem_bytes / (double)c->p / dt;
}

void coll_batch(coll_comm *c, size_t me, const coll_op *ops, size_t nops, size_t reps, size_t n, coll_algo algo)
{
  if (c->p == 1 || nops == 0 || reps == 0)
    return;
  int ring = 1;
  for (size_t i = 0; i < nops; i++) {
    xbt_assert(ops[i] == COLL_ALLREDUCE || ops[i] == COLL_REDUCE_SCATTER || ops[i] == COLL_ALLGATHER,
               "%s: coll_batch takes allreduce, reduce-scatter and allgather, not %s", c->ns, coll_op_name(ops[i]));
    ring = ring && (ops[i] != COLL_ALLREDUCE || algo == COLL_RING);
  }
  sg_exec_t h = hold_begin(c, me);
  account_label_push("%zu collectives x %zu %s", nops, reps, c->ns);
  if (coll_as_round(c) && ring)
    coll_rounds_batch(c, me, ops, nops, reps, n);
  else
    for (size_t r = 0; r < reps; r++)
      for (size_t i = 0; i < nops; i++) {
        if (ops[i] == COLL_ALLREDUCE)
          allreduce(c, me, NULL, n, algo);
        else if (ops[i] == COLL_REDUCE_SCATTER)
          reduce_scatter(c, me, NULL, n);
        else
          allgather(c, me, NULL, n);
      }
  account_label_pop();
  account_hold_end(h);
}

#ifndef MODELS_NCCL_H
#define MODELS_NCCL_H
/* nccl.h - NCCL's own model of a collective's time, as NCCL 2.8.4 (Feb. 2021, the release of
 * PTD-P's runs; src/graph/tuning.cc and enqueue.cc's ncclTopoGetAlgoTime) tunes itself with it:
 * for each algorithm (ring, tree) and protocol (LL, LL128, Simple) a latency, a base plus one
 * hardware latency per step (NVLink inside a node, the network between nodes), and a bus
 * bandwidth; NCCL runs the pair of least modelled time. Allgather and reduce-scatter have only
 * the ring in NCCL 2.8 (tuning.cc skips every other algorithm for them), whose latency grows
 * with the ranks; allreduce also has the double binary tree, whose latency grows with the
 * logarithm of the nodes. No SimGrid. */

#include <stddef.h>

typedef enum nccl_coll { NCCL_ALLGATHER, NCCL_REDUCE_SCATTER, NCCL_ALLREDUCE } nccl_coll;
typedef enum nccl_algo { NCCL_TREE, NCCL_RING, NCCL_ALGOS } nccl_algo;
typedef enum nccl_proto { NCCL_LL, NCCL_LL128, NCCL_SIMPLE, NCCL_PROTOS } nccl_proto;

/* A communicator: `ranks` members on `nodes` nodes (1: behind one NVLink switch), `channels`
 * (one SM each), and the bus bandwidth of its Simple ring (bytes/s: its links at NCCL's share),
 * on A100s (the Ampere rows of tuning.cc's tables) with AMD CPUs (a DGX A100's). */
typedef struct nccl_ring {
  size_t ranks, nodes, channels;
  double bus_bw;
} nccl_ring;

/* Seconds of latency of collective c with algorithm a and protocol p on `bytes` (the whole
 * buffer: ranks x the per-rank count for allgather and reduce-scatter): tuning.cc's baseLat,
 * plus, for the ring, (steps - inter) intra-node and `inter` network hardware latencies (steps
 * = ranks - 1, inter = nodes - 1, twice that for allreduce; an allreduce's Simple ring x 1.9 on
 * several nodes from ranks / 16 x 64 KiB, its "plateau effect"), for the tree 2 ((ranks/nodes -
 * 1) intra + log2(nodes) network latencies). 0 on one rank; -1 for a tree that is not an
 * allreduce. */
double nccl_latency(const nccl_ring *r, nccl_coll c, nccl_algo a, nccl_proto p, double bytes);
/* Seconds NCCL expects it to take: latency + bytes / the algorithm's bandwidth (the bus
 * bandwidth after tuning.cc's refinements, times ranks / steps for the ring, / 2 for the tree,
 * the tree's bandwidth corrected for sizes under 256 MiB); -1 when NCCL does not run it. */
double nccl_time(const nccl_ring *r, nccl_coll c, nccl_algo a, nccl_proto p, double bytes);
/* The algorithm and protocol NCCL picks for c on `bytes` (the least nccl_time; ties to the
 * first in tree, ring and LL, LL128, Simple order). */
void nccl_pick(const nccl_ring *r, nccl_coll c, double bytes, nccl_algo *a, nccl_proto *p);
/* Seconds NCCL's model of what it picks (nccl_pick) adds to the bytes a Simple ring moves at
 * the ring's bus bandwidth (ranks - 1 or, for allreduce, 2 (ranks - 1) steps of bytes / ranks):
 * its latency, and its protocol's or algorithm's lower bandwidth; 0 on one rank. */
double nccl_extra(const nccl_ring *r, nccl_coll c, double bytes);

#endif

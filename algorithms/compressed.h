#ifndef ALGORITHMS_COMPRESSED_H
#define ALGORITHMS_COMPRESSED_H
/* compressed.h - the compressed gradient exchange of a synchronous data-parallel group
 * (dataparallel.compress): what each method of models/compress.h puts on the wire and how the
 * ranks sum it. Top-k, 1-bit and QSGD cannot be summed on the way by a ring allreduce: every
 * rank's message goes to every rank by an allgather, and each rank decodes and adds them in
 * rank order. PowerSGD's factors can: an allreduce of P, then one of Q. */

#include <stddef.h>
#include <simgrid/forward.h>

#include "algorithms/collectives.h"
#include "algorithms/run.h"
#include "models/arch.h"
#include "models/compress.h"

typedef struct compressed compressed;

/* The exchange for `ranks` replicas on hosts[0..ranks), over the gradient buckets of shapes
 * (nb buckets, bucket b's lowest layer first[b], as dataparallel_buckets; bucket 0 ends at
 * the last layer): each dense layer is two tensors, its weights (out x in) and its biases
 * (1 x out), any other layer with parameters one vector. dense is the group's communicator
 * (PowerSGD's allreduces, in cfg->elem_bytes elements); the allgathers go over a
 * communicator of its own sized in bytes. With cfg->numerics every rank keeps a state per
 * tensor. p is copied, shapes read here; cfg and dense outlive c. Returns NULL if p->method is
 * COMPRESS_NONE. Free after the engine has run. */
compressed *compressed_create(const run_config *cfg, const compress_params *p, const sg_host_t *hosts, size_t ranks,
                              const arch *shapes, size_t nb, const size_t *first, coll_comm *dense);
void compressed_free(compressed *c);

/* Rank me's share of bucket b's exchange at step (called by every rank, buckets in the
 * same order): compresses grad (the bucket's range of the gradient, NULL without
 * numerics), exchanges, and leaves in grad the ranks' decoded sum, in rank order. Compression
 * and decompression cost their flops on rank me's host; algo is PowerSGD's allreduce. */
void compressed_bucket(compressed *c, size_t me, size_t b, double *grad, long step, coll_algo algo);

/* Bytes one rank's messages carry over all buckets at step, and the dense gradient's. */
double compressed_step_bytes(const compressed *c, long step);
double compressed_dense_bytes(const compressed *c);

#endif

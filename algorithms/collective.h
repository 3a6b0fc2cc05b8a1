#ifndef ALGORITHMS_COLLECTIVE_H
#define ALGORITHMS_COLLECTIVE_H
/* collective.h - nccl-tests in simulation (run.algorithm = collective): every member of one
 * communicator runs `iterations` of one collective back to back; numeric
 * runs then check every member's result against the serial sum in the collective's order. */

#include <stddef.h>

#include "algorithms/algorithm.h"
#include "algorithms/metrics.h"
#include "algorithms/run.h"

/* The [collective] section. */
typedef struct collective_params {
  int op;              /* a coll_op */
  int algorithm;       /* a coll_algo, or -1: auto (ring; tree for broadcast and reduce) */
  long bytes;          /* of each member's vector on the wire */
  size_t ranks;
  size_t root;         /* broadcast and reduce */
  double chunk_bytes;  /* 0: unchunked */
  long iterations;
  double reduce_flops; /* per element added; 0: reductions take no simulated time */
} collective_params;

/* run.algorithm = collective */
extern const algorithm collective_algorithm;

/* One collective as the run times it: member i of one communicator runs on hosts[i]. op
 * and algo hold coll_op and coll_algo values (collectives.h). */
typedef struct collective_setup {
  int op;
  int algo;
  size_t ranks;
  size_t elements;     /* per member's vector: bytes / elem_bytes */
  size_t root;
  double chunk_bytes;
  long iterations;
  double reduce_flops;
} collective_setup;

typedef struct collective collective;

/* What a run measured. */
typedef struct collective_result {
  double time_s;       /* simulated time when the last member finished its last iteration */
  double iter_s;       /* time_s / iterations: nccl-tests' time per iteration */
  int numeric;         /* 1: buffers were real and checked */
  int exact;           /* numeric: every member's result equals coll_reference bit for bit */
  double max_rel_error; /* numeric: max over members and elements of |got - s| / sum_j |x_j|,
                           s the plain sum in rank order (0 when nothing is summed) */
} collective_result;

/* Creates the communicator over cfg->hosts[0..ranks-1] and one member actor per host;
 * records the iterations as rank 0's steps in m (one slot). cfg and m outlive the run.
 * Returns NULL if cfg has fewer hosts than ranks or elements is 0. Free with collective_free
 * after the engine has run. */
collective *collective_deploy(const run_config *cfg, const collective_setup *p, metrics *m);
void collective_free(collective *b);

/* After the engine has run: the measurements and, for numeric runs, the check. */
void collective_result_get(const collective *b, collective_result *r);

#endif

#ifndef ALGORITHMS_MOE_H
#define ALGORITHMS_MOE_H
/* moe.h - expert parallelism (run.algorithm = moe): P GPUs, each a data-parallel rank of
 * the small GPT (models/gpt.h) whose every layer's MLP is a mixture of E experts
 * (models/moe.h), holding E/P experts of each layer. Each rank routes its own tokens; the
 * dispatch and combine all-to-alls carry, between every pair of GPUs, the rows the trained
 * router actually sent; the non-expert gradients are allreduced over the P ranks, an
 * expert's gradient stays on its owner. algorithms/doc/moe.md has the step, what is timed
 * and how the numerics are checked. Its functions are moe_ep_* (expert parallelism), as
 * moe_* names the layer's (models/moe.h). */

#include <stddef.h>

#include "algorithms/algorithm.h"

/* The [moe] section. */
typedef struct moe_params {
  size_t ranks;           /* P GPUs, rank r on hosts[r] */
  size_t experts;         /* E experts per layer, E/P on each rank */
  size_t top_k;           /* 1 (Switch) or 2 (GShard) */
  double capacity_factor; /* per expert per rank's routing group */
  double aux_coef;        /* the auxiliary load-balancing loss's coefficient; 0: off */
  size_t hidden, heads, layers, seq, vocab;
  size_t batch;           /* sequences per rank per step: its routing group */
  double lr;
  int optimizer;          /* MOE_EP_SGD or MOE_EP_ADAM */
  int algo;               /* the non-expert gradients' allreduce: a coll_algo */
  int serial_check;       /* 1: after the run, replay it serially and compare the parameters */
} moe_params;

enum { MOE_EP_SGD, MOE_EP_ADAM };

/* run.algorithm = moe */
extern const algorithm moe_algorithm;

#endif

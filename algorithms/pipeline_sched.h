#ifndef ALGORITHMS_PIPELINE_SCHED_H
#define ALGORITHMS_PIPELINE_SCHED_H
/* pipeline_sched.h - the schedules of a pipeline (pure, no SimGrid): the order of the
 * forward and backward passes each device runs per step under GPipe (Huang et al. 2019),
 * 1F1B (PipeDream-Flush) and Megatron's interleaved 1F1B (Narayanan et al. 2021 sec. 2.2),
 * their bubble formulas, and the balanced split of dense layers into model chunks. */

#include <stddef.h>

#include "models/arch.h"

typedef enum pipeline_schedule {
  PIPELINE_GPIPE,      /* all forwards, then all backwards (Huang et al. 2019) */
  PIPELINE_1F1B,       /* PipeDream-Flush: p-s-1 warm-up forwards, then one forward one backward */
  PIPELINE_INTERLEAVED /* Megatron's interleaved 1F1B over v chunks per device (Narayanan et al. 2021) */
} pipeline_schedule;

/* One entry of a device's schedule: a forward or backward pass of one microbatch
 * through one model chunk (chunk c = k*p + s is device s's k-th chunk). */
typedef struct pipeline_op {
  int backward; /* 0: forward, 1: backward */
  long microbatch;
  size_t chunk;
} pipeline_op;

/* Parses "gpipe|1f1b|interleaved"; returns 0 or -1. */
int pipeline_schedule_parse(const char *s, pipeline_schedule *out);
const char *pipeline_schedule_name(pipeline_schedule s);

/* The ordered operations of `device` (< p) under schedule s with m microbatches and v
 * chunks per device: 2*m*v of them, written into ops (room for 2*m*v; NULL: only
 * counted). Pure (no SimGrid). Returns their number, or 0 if the arguments are
 * impossible: p, m or v is 0,
 * device >= p, v != 1 for gpipe and 1f1b, or interleaved with m not a multiple of p. On
 * every device forwards and backwards of one chunk each come in microbatch order. */
size_t pipeline_schedule_ops(pipeline_schedule s, size_t p, long m, size_t v, size_t device, pipeline_op *ops);

/* The bubble fraction as a share of the step's time with equal stages and free
 * communication: (p-1)/(m+p-1), or (p-1)/(v*m+p-1) for interleaved (PTD-P sec. 2.2's
 * (p-1)/m and (p-1)/(v*m), which are relative to the ideal time, turned into shares of
 * ideal + bubble). */
double pipeline_bubble_formula(pipeline_schedule s, size_t p, long m, size_t v);

/* Splits layers 1..n_layers-1 of shapes into k contiguous chunks, writing chunk c's
 * layer count into counts[c]: the split whose largest chunk (training flops per example)
 * is smallest, ties going to the split with the latest boundaries. Returns 0, or -1 if
 * k is 0 or there are fewer layers than chunks. */
int pipeline_split_balanced(const arch *shapes, size_t k, size_t *counts);

#endif

#ifndef MODELS_COREPOOL_H
#define MODELS_COREPOOL_H
/* corepool.h - equal-cost tasks (a machine's per-message CPU work) list-scheduled over the
 * cores of one machine, each task on the core that frees first, in the order they come. */

#include <stddef.h>

typedef struct corepool corepool;

/* A pool of `cores` cores, all free at time 0; NULL if cores is 0. Free with corepool_free. */
corepool *corepool_create(size_t cores);

/* Frees the pool; NULL is a no-op. */
void corepool_free(corepool *pool);

/* Frees every core at time `now` (the start of a phase); the latest finish becomes `now`. */
void corepool_reset(corepool *pool, double now);

/* Schedules a task of `cost` seconds that can start at `ready` on the core that frees first
 * (the lowest-numbered of those tied): it starts at max(ready, that core's free time).
 * Returns the time it finishes. */
double corepool_add(corepool *pool, double ready, double cost);

/* The time the last task scheduled since the last reset finishes (that reset's `now` if none). */
double corepool_end(const corepool *pool);

#endif

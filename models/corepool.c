/* corepool.c - list scheduling of a machine's per-message CPU work over its cores.
 *
 * Dean et al. 2012 sec. 3: the framework "parallelizes computation in each machine using
 * all available cores, and manages communication". A machine that sends or receives k
 * messages in one phase can process them on its C cores side by side: k tasks of equal
 * cost o, all ready at once, end after ceil(k/C) o; tasks that arrive one by one start when
 * they arrive or when a core frees. With one core this is processing one after another. */
#include "models/corepool.h"

#include <stdlib.h>

#include "models/mem.h"

struct corepool {
  size_t cores;
  double *free_at; /* [c]: when core c is free */
  double end;      /* latest finish since the last reset */
};

corepool *corepool_create(size_t cores)
{
  if (cores == 0)
    return NULL;
  corepool *pool = mem_alloc(sizeof *pool);
  pool->cores = cores;
  pool->free_at = mem_calloc(cores, sizeof(double));
  pool->end = 0;
  return pool;
}

void corepool_free(corepool *pool)
{
  if (pool == NULL)
    return;
  free(pool->free_at);
  free(pool);
}

void corepool_reset(corepool *pool, double now)
{
  for (size_t c = 0; c < pool->cores; c++)
    pool->free_at[c] = now;
  pool->end = now;
}

double corepool_add(corepool *pool, double ready, double cost)
{
  size_t first = 0;
  for (size_t c = 1; c < pool->cores; c++)
    if (pool->free_at[c] < pool->free_at[first])
      first = c;
  double start = ready > pool->free_at[first] ? ready : pool->free_at[first];
  pool->free_at[first] = start + cost;
  if (pool->free_at[first] > pool->end)
    pool->end = pool->free_at[first];
  return pool->free_at[first];
}

double corepool_end(const corepool *pool)
{
  return pool->end;
}

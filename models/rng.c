/* rng.c - per-actor random streams derived from one master seed.
 *
 * A stream's seed is a chain of splitmix64 steps over the master seed, the
 * role and the rank, so that neighbouring inputs (rank 3 and rank 4, seed 1
 * and seed 2) give unrelated mt19937 streams. The derivation is part of every
 * result: changing it changes every number dtsim prints. */

#include "models/rng.h"

#include <stdio.h>
#include <stdlib.h>

/* splitmix64's output function (Steele, Lea and Flood, OOPSLA 2014; the
 * constants are Vigna's), applied to x plus the golden-ratio increment. It is
 * a bijection on 64-bit words, so distinct inputs give distinct outputs. */
static uint64_t splitmix64(uint64_t x)
{
  uint64_t z = x + UINT64_C(0x9e3779b97f4a7c15);
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

unsigned long rng_seed_for(uint64_t master, int role, int rank)
{
  /* Role and rank go in as 32-bit patterns so negative values stay defined. */
  uint64_t h = splitmix64(master);
  h = splitmix64(h ^ (uint64_t)(uint32_t)role);
  h = splitmix64(h ^ (uint64_t)(uint32_t)rank);
  /* Top 32 bits onto [1, 2^32-1]: mt19937 reads 32 bits and maps 0 to 4357. */
  return (unsigned long)((h >> 32) % UINT64_C(0xffffffff) + 1);
}

gsl_rng *rng_create(uint64_t master, int role, int rank)
{
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  if (r == NULL) {
    fprintf(stderr, "rng_create: out of memory\n");
    abort();
  }
  gsl_rng_set(r, rng_seed_for(master, role, rank));
  return r;
}

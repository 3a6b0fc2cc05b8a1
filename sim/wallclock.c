/* wallclock.c - a monotonic clock for the progress line (wallclock.h). */
#include "sim/wallclock.h"

#include <time.h>

double wallclock_seconds(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#ifndef SIM_WALLCLOCK_H
#define SIM_WALLCLOCK_H
/* wallclock.h - the one reading of the machine's clock in dtsim: the progress line's
 * estimate of the wall time a run has left. It never reaches a result file, so results
 * stay byte-identical whatever the machine's speed (tests/lint_determinism.cmake exempts
 * this module, and only it). */

/* Seconds of a monotonic clock since an arbitrary start. */
double wallclock_seconds(void);

#endif

#ifndef SIM_INTERRUPT_H
#define SIM_INTERRUPT_H
/* interrupt.h - Ctrl-C (SIGINT) and SIGTERM in dtsim's processes. A run ends at once
 * with one line on stderr and exit status 128 + the signal (130, 143), after removing
 * its temporary files, and leaves no result folder; SimGrid's own SIGINT handler (its
 * actor listing, exit 1) is replaced. A parent of child runs (reproduce, sweep) notes
 * the signal, stops its children and cleans up before it exits the same way. */

/* A run: catches SIGINT and SIGTERM from now on. Call it again after simgrid_init,
 * which installs SimGrid's handler over it. */
void interrupt_run_catch(void);
/* Removed when a signal ends the run (NULL: none); the strings are copied. */
void interrupt_run_remove(const char *file, const char *dir);
/* 1: signals wait (the results are being written, which must not stop half-way);
 * 0: a waiting signal is delivered now. Written is the result folder once complete,
 * which the last line then names. */
void interrupt_run_hold(int hold, const char *written);

/* A parent: SIGINT and SIGTERM set a flag (and interrupt a blocking wait) instead of
 * ending the process. */
void interrupt_parent_catch(void);
/* The signal caught (SIGINT or SIGTERM), or 0. */
int interrupt_caught(void);

#endif

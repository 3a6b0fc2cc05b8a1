#ifndef SIM_SWEEP_H
#define SIM_SWEEP_H
/* sweep.h - `dtsim sweep`: a scenario run at every point of the cartesian product of
 * --vary lists, each point in its own process (or emitted as shell commands for GNU
 * parallel or a Slurm array), summarised as sweep.csv and sweep.png; `--merge` rebuilds
 * those from the point folders alone. */

/* argv[0] is "sweep". Returns the exit status: 0 when sweep.csv is written (or the jobs
 * emitted), points that missed their goal included; 2 on bad input, or when a point's
 * run fails (exit status 2 or a crash), after one line on stderr naming the point and
 * its log. */
int sweep_main(int argc, char **argv);

#endif

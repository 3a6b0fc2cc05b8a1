#ifndef SIM_REPRODUCE_H
#define SIM_REPRODUCE_H
/* reproduce.h - `dtsim reproduce NAME`: a published experiment's grid of simulations,
 * each in its own process (one SimGrid engine per process), written as results/NAME/:
 * the scenario, NAME.csv, NAME.png (gnuplot) and a README comparing with the paper. */

/* argv[0] is "reproduce". Returns the exit status: 0; 1 when --check finds a
 * difference from the committed CSV; 2 on bad input. */
int reproduce_main(int argc, char **argv);

#endif

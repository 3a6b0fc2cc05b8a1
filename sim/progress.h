#ifndef SIM_PROGRESS_H
#define SIM_PROGRESS_H
/* progress.h - the progress line a run draws on stderr (sim/README.md): its text from one
 * evaluation's figures and the wall time spent (progress_line, tested without a clock), and
 * the meter that draws it at every evaluation. */
#include <stddef.h>

typedef struct progress_point {
  double t;              /* simulated seconds so far */
  double bound;          /* run.max_sim_time */
  int may_end_sooner;    /* run.max_steps or run.target_accuracy is set: it may end before the bound */
  long steps;            /* steps of all workers so far */
  double loss, acc;      /* NAN: not measured (timing-only, consensus's accuracy) */
  const char *loss_name; /* the algorithm's name for its loss ("gap"); NULL: "loss" */
  double spent;          /* wall seconds since the run started */
} progress_point;

/* Writes the line (no newline) into buf of len bytes: the simulated time against the bound and
 * its share, the steps, the loss (by its algorithm's name) and accuracy when measured, and the
 * wall time left at the pace so far once a second of it has passed (at most that, when
 * run.max_steps or a target may end the run sooner). */
void progress_line(char *buf, size_t len, const progress_point *p);

/* The wall time a sweep has left, for its per-point line: ", about N s of wall time to go"
 * at the pace of the ran points finished in spent wall seconds, left points still to run;
 * "" when none has finished yet, in the first wall second, or when none is left. */
void progress_sweep_left(char *buf, size_t len, size_t ran, size_t left, double spent);

/* The progress line, at every evaluation: simulated time against run.max_sim_time, steps,
 * loss and accuracy when measured, and the wall time left at this pace. On a terminal it
 * is redrawn in place; elsewhere (--progress) a line every PROGRESS_EVERY wall seconds.
 * The caller fills the settings; shown and last start at 0. */
typedef struct progress {
  int shown;             /* a line is on screen without its newline (terminal) */
  int tty;
  double bound;          /* run.max_sim_time */
  int may_end_sooner;    /* run.max_steps or a target may end the run before it */
  const char *loss_name; /* the algorithm's name for its loss; NULL: "loss" */
  double start, last;    /* wall seconds (wallclock_seconds) at the start and at the last line */
} progress;

/* A run's on_eval callback (algorithms/run.h), ctx a progress: draws the line on stderr
 * when it is due. */
void progress_show(void *ctx, double t, long steps, double loss, double acc);

#endif

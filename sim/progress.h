#ifndef SIM_PROGRESS_H
#define SIM_PROGRESS_H
/* progress.h - the progress line a run draws on stderr (sim/README.md): its text from one
 * evaluation's figures and the wall time spent (progress_line, tested without a clock), the
 * estimate of a long run's wall time from its pace in its first wall seconds
 * (progress_estimate), and the meter that draws them as the run evaluates and advances. */
#include <pthread.h>
#include <stddef.h>

typedef struct progress_point {
  double t;              /* simulated seconds so far */
  double bound;          /* run.max_sim_time */
  int may_end_sooner;    /* run.max_steps or run.target_accuracy is set: it may end before the bound */
  long steps;            /* steps of all workers so far; < 0: not known (a line between evaluations) */
  double loss, acc;      /* NAN: not measured (timing-only, consensus's accuracy) */
  const char *loss_name; /* the algorithm's name for its loss ("gap"); NULL: "loss" */
  double spent;          /* wall seconds since the run started */
} progress_point;

/* Writes the line (no newline) into buf of len bytes: the simulated time against the bound and
 * its share, the steps, the loss (by its algorithm's name) and accuracy when measured, and the
 * wall time left at the pace so far once a second of it has passed (at most that, when
 * run.max_steps or a target may end the run sooner). */
void progress_line(char *buf, size_t len, const progress_point *p);

/* The first wall seconds of a run measure its pace (simulated s per wall s); a run whose
 * pace puts it over PROGRESS_LONG wall seconds says so, once. Both are the user's patience,
 * not a property of the run: a few minutes is where waiting without a word stops being
 * reasonable (issue 47: a run of 21 minutes that said nothing). */
#define PROGRESS_CALIBRATE 2.0
#define PROGRESS_LONG 180.0

/* The line a run prints when, at the pace of t simulated seconds in `spent` wall seconds, it
 * will take more than PROGRESS_LONG wall seconds to reach `bound` (run.max_sim_time;
 * may_end_sooner: a target may stop it first): into buf, returning 1; else buf "" and 0. No
 * wall-clock value reaches a result file: this goes to stderr. */
int progress_estimate(char *buf, size_t len, double t, double bound, int may_end_sooner, double spent);

/* The wall time a sweep has left, for its per-point line: ", about N s of wall time to go"
 * at the pace of the ran points finished in spent wall seconds, left points still to run;
 * "" when none has finished yet, in the first wall second, or when none is left. */
void progress_sweep_left(char *buf, size_t len, size_t ran, size_t left, double spent);

/* The meter. At every evaluation it draws the progress line (simulated time against
 * run.max_sim_time, steps, loss and accuracy when measured, the wall time left at this pace):
 * on a terminal redrawn in place, elsewhere (--progress) a line every PROGRESS_EVERY wall
 * seconds. Between evaluations it hears the run advance (account.h's tick): once
 * PROGRESS_CALIBRATE wall seconds have passed it prints progress_estimate's line when the
 * run is long, and it draws a line of the simulated time whenever none came for
 * PROGRESS_EVERY seconds (the first within PROGRESS_CALIBRATE), evaluations being rare or
 * absent (tensor parallelism has none). Fill the settings, then progress_begin; after the
 * run, progress_end. */
typedef struct progress {
  int draw;              /* draw the progress line: a terminal, or --progress */
  int warn;              /* print the long run's estimate (not --quiet, and no run.max_steps: the
                            estimate is against the simulated time) */
  int tty;
  double bound;          /* run.max_sim_time */
  int may_end_sooner;    /* run.max_steps or a target may end the run before it */
  const char *loss_name; /* the algorithm's name for its loss; NULL: "loss" */
  /* the meter's own state (progress_begin): */
  pthread_mutex_t mu;    /* evaluations and ticks may come from different SimGrid threads */
  int shown;             /* a line is on screen without its newline (terminal) */
  int measured;          /* the pace has been measured */
  double start, last;    /* wall seconds (wallclock_seconds) at the start and at the last line */
  double last_eval;      /* ... and at the last line of an evaluation (ticks' lines do not delay them) */
} progress;

void progress_begin(progress *p);
/* Ends a line left open on the terminal; frees what progress_begin took. */
void progress_end(progress *p);

/* A run's on_eval callback (algorithms/run.h), ctx a progress: draws the line on stderr
 * when it is due. */
void progress_show(void *ctx, double t, long steps, double loss, double acc);

/* The accounting's tick (account_set_tick), ctx a progress: the estimate and the lines
 * between evaluations. */
void progress_tick(void *ctx, double t);

#endif

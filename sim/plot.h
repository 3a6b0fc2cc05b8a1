#ifndef SIM_PLOT_H
#define SIM_PLOT_H
/* plot.h - pictures drawn by gnuplot: a run's own curve (progress.png), its busiest links
 * over time (links.png), and the plumbing the
 * sweeps and reproductions draw theirs with (a script piped to gnuplot, which writes a
 * temporary file that is renamed into place, as every result file is). */
#include <stddef.h>
#include <stdio.h>

/* Pipes script to gnuplot; script writes its picture to tmp, which is then renamed to
 * png. show_output 0 discards gnuplot's own messages (warnings about a one-value axis are
 * not ours to show). Returns 0, or -1 with a message in err (gnuplot missing or failing;
 * tmp is removed). */
int plot_gnuplot(const char *script, const char *tmp, const char *png, int show_output, char *err, size_t len);

/* s as a gnuplot single-quoted string ('' stands for one quote). */
void plot_put_string(FILE *f, const char *s);

/* Writes dir/progress.png from a run's progress.csv text: loss (left axis, logarithmic
 * when it spans a factor of 100 and stays positive) and accuracy (right axis, 0 to 1)
 * against simulated time, each only when measured (has_loss, has_accuracy); title names
 * the run. Returns 1 when drawn, 0 when the run has no curve (fewer than two evaluations,
 * or nothing measured), -1 with a message in err when gnuplot could not draw it. */
int plot_progress(const char *dir, const char *title, const char *csv, int has_loss, int has_accuracy, char *err,
                  size_t len);

/* Writes dir/links.png: line i (of n), titled names[i], is y[i][k] in each window k of
 * width w (the last ends at end) against simulated time, drawn as steps; title names the
 * run. Returns 0, or -1 with a message in err when gnuplot could not draw it. */
int plot_links(const char *dir, const char *title, size_t n, const char *const *names, const double *const *y,
               size_t windows, double w, double end, char *err, size_t len);

#endif

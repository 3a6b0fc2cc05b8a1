#ifndef SIM_LAB_SWEEP_PLOT_H
#define SIM_LAB_SWEEP_PLOT_H
/* sweep_plot.h - sweep.png: a metric against the first varied key, one line per
 * combination of the other keys, drawn by gnuplot. Private to sim/lab's sweep. */
#include <stddef.h>

/* What the plot shows: n points in product order, their nk varied keys' values, and the
 * metric's value at each. */
typedef struct sweep_plot_data {
  size_t n, nk;
  const char *const *keys;   /* the nk varied keys, "section.key" */
  const char *const *values; /* point i's value of key k at [i * nk + k] */
  const double *y;           /* point i's metric; NAN where it has none */
  const char *metric;        /* the metric's column name, for the title */
  const char *label;         /* what it is with its unit, for the y axis */
} sweep_plot_data;

/* Draws d into out/sweep.png (through out/.sweep.png.tmp, renamed when whole): the first
 * key's values on x (numbers, or categories in their order when one is not a number), each
 * axis logarithmic when its values span a decade (sweep_spans_decades), every line with
 * its own point type, size and dash pattern so that lines on top of one another stay
 * visible. Returns 0, or -1 with a message in err. */
int sweep_plot(const char *out, const sweep_plot_data *d, char *err, size_t len);

/* The gnuplot script sweep_plot feeds gnuplot (it writes out/.sweep.png.tmp); the caller
 * frees it with free(). */
char *sweep_plot_script(const char *out, const sweep_plot_data *d);

/* Whether the n values span a factor of 10 or more, all positive and finite: then
 * sweep.png draws their axis logarithmic. */
int sweep_spans_decades(const double *v, size_t n);

#endif

/* sweep_plot.c - sweep.png's gnuplot script, from the values sweep_merge.c read (sweep_plot.h). */
#include "sim/lab/sweep_plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "sim/plot.h"
#include "sim/scenario.h"

/* An axis is logarithmic from this factor between its largest and smallest value: a
 * decade, where a linear axis starts to squeeze the small values onto its floor (a
 * bandwidth sweep of 0.1, 1 and 10: step times 15.2, 1.55 and 0.17 s). */
#define SWEEP_LOG_FACTOR 10.0

int sweep_spans_decades(const double *v, size_t n)
{
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (!(v[i] > 0) || !isfinite(v[i]))
      return 0;
    lo = fmin(lo, v[i]);
    hi = fmax(hi, v[i]);
  }
  return n > 1 && hi / lo >= SWEEP_LOG_FACTOR;
}

static int is_number(const char *s, double *x)
{
  char *end;
  errno = 0;
  *x = strtod(s, &end);
  return end != s && *end == '\0' && errno == 0 && isfinite(*x);
}

static const char *value_of(const sweep_plot_data *d, size_t i, size_t k)
{
  return d->values[i * d->nk + k];
}

/* A varied key as an axis label: "sgd.lr", with its unit from the key table when it has
 * one ("downpour.replicas (replicas)"). */
static void key_label(const char *key, char *buf, size_t len)
{
  snprintf(buf, len, "%s", key);
  for (size_t i = 0; i < scenario_key_count(); i++) {
    const char *section, *name, *unit;
    scenario_key_at(NULL, i, &section, &name, NULL, 0, NULL, &unit, NULL);
    size_t sl = strlen(section);
    if (strncmp(key, section, sl) == 0 && key[sl] == '.' && strcmp(key + sl + 1, name) == 0 && unit && *unit &&
        strcmp(unit, "-") != 0)
      snprintf(buf, len, "%s (%s)", key, unit);
  }
}

/* sweep.png's x values and series: the distinct values of the first key (xs[0..nx), numeric
 * when every one is a number, xv then their values), and the combinations of the
 * other keys (ns series, first[s] a point of series s), in product order; xi[i] and si[i]
 * are point i's value and series. */
typedef struct plot_layout {
  const char **xs;
  size_t nx, *xi, *si, ns;
  size_t *first;
  int numeric;
  double *xv;
} plot_layout;

static void plot_layout_of(const sweep_plot_data *d, plot_layout *pl)
{
  size_t n = d->n;
  *pl = (plot_layout){.xs = xbt_malloc0(n * sizeof(char *)), .xi = xbt_malloc0(n * sizeof(size_t)),
                      .si = xbt_malloc0(n * sizeof(size_t)), .first = xbt_malloc0(n * sizeof(size_t)),
                      .numeric = 1, .xv = xbt_malloc0(n * sizeof(double))};
  for (size_t i = 0; i < n; i++) {
    const char *x = value_of(d, i, 0);
    size_t j = 0;
    while (j < pl->nx && strcmp(pl->xs[j], x) != 0)
      j++;
    if (j == pl->nx) {
      pl->numeric &= is_number(x, &pl->xv[pl->nx]);
      pl->xs[pl->nx++] = x;
    }
    pl->xi[i] = j;
    size_t s = 0;
    for (; s < pl->ns; s++) {
      int same = 1;
      for (size_t k = 1; same && k < d->nk; k++)
        same = strcmp(value_of(d, pl->first[s], k), value_of(d, i, k)) == 0;
      if (same)
        break;
    }
    if (s == pl->ns)
      pl->first[pl->ns++] = i;
    pl->si[i] = s;
  }
}

static void plot_layout_free(plot_layout *pl)
{
  xbt_free(pl->first);
  xbt_free(pl->si);
  xbt_free(pl->xi);
  xbt_free(pl->xs);
  xbt_free(pl->xv);
}

/* The script's settings: the terminal and output, the axes' labels, the title, and the x
 * axis's scale or categories. */
static void put_plot_axes(FILE *f, const char *out, const sweep_plot_data *d, const plot_layout *pl)
{
  fputs("set terminal pngcairo size 800,560 noenhanced\nset output ", f);
  size_t tl = strlen(out) + 32;
  char *tmp = xbt_malloc(tl);
  snprintf(tmp, tl, "%s/.sweep.png.tmp", out);
  plot_put_string(f, tmp);
  xbt_free(tmp);
  fputs("\nset datafile missing '?'\nset key outside right top\nset grid\nset format y '%.4g'\nset xlabel ", f);
  char label[512];
  key_label(d->keys[0], label, sizeof label);
  plot_put_string(f, label);
  fputs("\nset ylabel ", f);
  plot_put_string(f, d->label);
  /* the column's name only: the y label says what it is, and a longer title is clipped */
  char heading[700];
  snprintf(heading, sizeof heading, "dtsim sweep: %s against %s", d->metric, d->keys[0]);
  fputs("\nset title ", f);
  plot_put_string(f, heading);
  fputs("\n", f);
  double *y = xbt_malloc0((d->n ? d->n : 1) * sizeof(double));
  size_t ny = 0;
  for (size_t i = 0; i < d->n; i++)
    if (!isnan(d->y[i]))
      y[ny++] = d->y[i];
  if (pl->numeric && sweep_spans_decades(pl->xv, pl->nx))
    fputs("set logscale x\n", f);
  if (sweep_spans_decades(y, ny))
    fputs("set logscale y\n", f);
  xbt_free(y);
  if (!pl->numeric) {
    fprintf(f, "set xrange [-0.5:%zu.5]\nset xtics (", pl->nx - 1);
    for (size_t j = 0; j < pl->nx; j++) {
      plot_put_string(f, pl->xs[j]);
      fprintf(f, " %zu%s", j, j + 1 < pl->nx ? ", " : ")\n");
    }
  }
}

/* Series s's look: its own point type (filled circle, open square, open triangle, ...) and
 * dash pattern, and in turns of three a larger open point over a thinner line, so that a
 * line drawn over an equal one leaves the one below visible around its points, beside its
 * line and through its gaps. */
static void put_series_style(FILE *f, size_t s)
{
  static const int types[] = {7, 4, 8, 6, 12, 10, 14, 5, 9, 13};
  double turn = (double)(s % 3);
  fprintf(f, "with linespoints pt %d ps %.1f dt %zu lw %.2f ", types[s % 10], 1.0 + 0.5 * turn, s % 5 + 1,
          3.0 - 0.9 * turn);
}

/* The datablocks, one per series, and the plot command that draws them. */
static void put_plot_data(FILE *f, const sweep_plot_data *d, const plot_layout *pl)
{
  for (size_t s = 0; s < pl->ns; s++) {
    fprintf(f, "$s%zu << EOD\n", s);
    for (size_t i = 0; i < d->n; i++) {
      if (pl->si[i] != s)
        continue;
      if (pl->numeric)
        fputs(value_of(d, i, 0), f);
      else
        fprintf(f, "%zu", pl->xi[i]);
      if (!isnan(d->y[i]))
        fprintf(f, " %.17g\n", d->y[i]);
      else
        fputs(" ?\n", f);
    }
    fputs("EOD\n", f);
  }
  fputs("plot ", f);
  for (size_t s = 0; s < pl->ns; s++) {
    fprintf(f, "$s%zu using 1:2 ", s);
    put_series_style(f, s);
    if (d->nk == 1)
      fputs("notitle", f);
    else {
      char title[1024];
      size_t o = 0;
      for (size_t k = 1; k < d->nk && o < sizeof(title); k++)
        o += (size_t)snprintf(title + o, sizeof(title) - o, "%s%s=%s", k > 1 ? ", " : "", d->keys[k],
                              value_of(d, pl->first[s], k));
      fputs("title ", f);
      plot_put_string(f, title);
    }
    fputs(s + 1 < pl->ns ? ", \\\n     " : "\n", f);
  }
}

char *sweep_plot_script(const char *out, const sweep_plot_data *d)
{
  plot_layout pl;
  plot_layout_of(d, &pl);
  char *script = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&script, &size);
  xbt_assert(f, "open_memstream failed");
  put_plot_axes(f, out, d, &pl);
  put_plot_data(f, d, &pl);
  fclose(f);
  plot_layout_free(&pl);
  return script;
}

int sweep_plot(const char *out, const sweep_plot_data *d, char *err, size_t len)
{
  char *script = sweep_plot_script(out, d);
  /* gnuplot writes out/.sweep.png.tmp, renamed to sweep.png; its warnings (a one-value
   * axis) are not ours to show, a failure is */
  size_t pl = strlen(out) + 32;
  char *tmp = xbt_malloc(pl), *png = xbt_malloc(pl);
  snprintf(tmp, pl, "%s/.sweep.png.tmp", out);
  snprintf(png, pl, "%s/sweep.png", out);
  int rc = plot_gnuplot(script, tmp, png, 0, err, len);
  xbt_free(png);
  xbt_free(tmp);
  free(script); /* open_memstream's */
  return rc;
}

/* plot.c - pictures drawn by gnuplot (plot.h). */
#include "sim/plot.h"

#include <errno.h>
#include <signal.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xbt/asserts.h>

/* Why gnuplot, run by the shell popen starts, did not draw png, from pclose's status: the
 * shell's 127 is a command not found; a signal (Ctrl-C, SIGTERM) ends either gnuplot, which
 * the shell may have become, or the shell, which then exits 128 + the signal. */
static void gnuplot_failure(int status, const char *png, char *err, size_t len)
{
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  int sig = WIFSIGNALED(status) ? WTERMSIG(status) : code > 128 ? code - 128 : 0;
  if (status == -1)
    snprintf(err, len, "cannot wait for gnuplot drawing %s: %s", png, strerror(errno));
  else if (code == 127)
    snprintf(err, len, "gnuplot not found: cannot draw %s (is gnuplot installed?)", png);
  else if (sig > 0)
    snprintf(err, len, "gnuplot was stopped by signal %d (%s) while drawing %s", sig, strsignal(sig), png);
  else
    snprintf(err, len, "gnuplot failed to draw %s (exit status %d)", png, code);
}

int plot_gnuplot(const char *script, const char *tmp, const char *png, int show_output, char *err, size_t len)
{
  FILE *g = popen(show_output ? "gnuplot 2>&1" : "gnuplot >/dev/null 2>&1", "w");
  if (g == NULL) {
    snprintf(err, len, "cannot run gnuplot: %s", strerror(errno));
    return -1;
  }
  /* without gnuplot the shell exits at once, and writing to it would raise SIGPIPE, which
   * kills the process: ignored while writing, the write fails and pclose says why */
  void (*was)(int) = signal(SIGPIPE, SIG_IGN);
  fputs(script, g);
  int status = pclose(g);
  signal(SIGPIPE, was);
  if (status != 0) {
    gnuplot_failure(status, png, err, len);
    unlink(tmp);
    return -1;
  }
  if (rename(tmp, png) != 0) {
    snprintf(err, len, "cannot write %s: %s", png, strerror(errno));
    unlink(tmp);
    return -1;
  }
  return 0;
}

void plot_put_string(FILE *f, const char *s)
{
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'')
      fputc('\'', f);
    fputc(*s, f);
  }
  fputc('\'', f);
}

/* The evaluations of progress.csv (sim_time_s,step,loss,accuracy): how many, and the
 * least and largest loss. */
static size_t progress_rows(const char *csv, double *lo, double *hi)
{
  size_t n = 0;
  *lo = INFINITY;
  *hi = -INFINITY;
  const char *p = strchr(csv, '\n');
  while (p && p[1]) {
    p++;
    const char *f = p;
    for (int k = 0; k < 2 && f; k++) {
      f = strchr(f, ',');
      f = f ? f + 1 : NULL;
    }
    char *end;
    double loss = f ? strtod(f, &end) : NAN;
    if (f && end != f) {
      *lo = fmin(*lo, loss);
      *hi = fmax(*hi, loss);
    }
    n++;
    p = strchr(p, '\n');
  }
  return n;
}

int plot_progress(const char *dir, const char *title, const char *csv, int has_loss, int has_accuracy, char *err,
                  size_t len)
{
  double lo, hi;
  if ((!has_loss && !has_accuracy) || progress_rows(csv, &lo, &hi) < 2)
    return 0;
  char tmp[4200], png[4200];
  snprintf(tmp, sizeof tmp, "%s/.progress.png.tmp", dir);
  snprintf(png, sizeof png, "%s/progress.png", dir);
  char *script = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&script, &size);
  xbt_assert(f, "open_memstream failed");
  fputs("set terminal pngcairo size 640,400 noenhanced\nset output ", f);
  plot_put_string(f, tmp);
  fputs("\nset datafile separator ','\nset datafile missing ''\nset key top center horizontal\nset grid\n"
        "set xlabel 'simulated time (s)'\nset title ",
        f);
  plot_put_string(f, title);
  fputs("\n", f);
  if (has_loss) {
    fputs("set ylabel 'held-out loss'\n", f);
    if (lo > 0 && isfinite(hi) && hi / lo >= 100)
      fputs("set logscale y\n", f);
  }
  if (has_accuracy)
    fprintf(f, "set %s 'held-out accuracy (fraction)'\nset %s [0:1]\n%s", has_loss ? "y2label" : "ylabel",
            has_loss ? "y2range" : "yrange", has_loss ? "set y2tics\nset ytics nomirror\n" : "");
  /* the data inline: the script does not depend on where it runs */
  fputs("$p << EOD\n", f);
  fputs(strchr(csv, '\n') + 1, f);
  fputs("EOD\nplot ", f);
  if (has_loss)
    fputs("$p using 1:3 with linespoints pt 7 ps 0.5 title 'loss'", f);
  if (has_accuracy)
    fprintf(f, "%s$p using 1:4 %swith linespoints pt 5 ps 0.5 title 'accuracy'", has_loss ? ", " : "",
            has_loss ? "axes x1y2 " : "");
  fputs("\n", f);
  fclose(f);
  int rc = plot_gnuplot(script, tmp, png, 0, err, len);
  free(script); /* open_memstream's */
  return rc == 0 ? 1 : -1;
}

int plot_links(const char *dir, const char *title, size_t n, const char *const *names, const double *const *y,
               size_t windows, double w, double end, char *err, size_t len)
{
  char tmp[4200], png[4200];
  snprintf(tmp, sizeof tmp, "%s/.links.png.tmp", dir);
  snprintf(png, sizeof png, "%s/links.png", dir);
  char *script = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&script, &size);
  xbt_assert(f, "open_memstream failed");
  fputs("set terminal pngcairo size 800,450 noenhanced\nset output ", f);
  plot_put_string(f, tmp);
  fputs("\nset key below\nset grid\nset xlabel 'simulated time (s)'\n"
        "set ylabel 'utilization (fraction of bandwidth)'\nset yrange [0:*]\nset title ",
        f);
  plot_put_string(f, title);
  fprintf(f, "\nset xrange [0:%.17g]", end);
  /* the data inline; each window's value holds until the next window starts, and the
   * last one's until the run ends, hence the row at `end` */
  fputs("\n$l << EOD\n", f);
  for (size_t k = 0; k <= windows; k++) {
    fprintf(f, "%.17g", k < windows ? (double)k * w : end);
    for (size_t i = 0; i < n; i++)
      fprintf(f, " %.17g", y[i][k < windows ? k : windows - 1]);
    fputc('\n', f);
  }
  fputs("EOD\nplot ", f);
  for (size_t i = 0; i < n; i++) {
    fprintf(f, "%s$l using 1:%zu with steps lw 2 title ", i ? ", " : "", i + 2);
    plot_put_string(f, names[i]);
  }
  fputs("\n", f);
  fclose(f);
  int rc = plot_gnuplot(script, tmp, png, 0, err, len);
  free(script); /* open_memstream's */
  return rc;
}

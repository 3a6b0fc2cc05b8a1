/* progress.c - the progress line (progress.h): its text, and the meter that draws it on
 * stderr as a run evaluates. */
#include "sim/progress.h"

#include <math.h>
#include <stdio.h>

#include "sim/wallclock.h"

/* Off a terminal (--progress into a log), a line every this many wall seconds at most. */
#define PROGRESS_EVERY 10.0

/* Below a second of wall time the pace says little: no estimate yet. */
#define PROGRESS_MIN_SPENT 1.0

/* The free room after the n bytes written so far (snprintf returns what it would have written). */
static size_t room(size_t len, int n)
{
  return n < 0 || (size_t)n >= len ? 0 : len - (size_t)n;
}

static char *at(char *buf, size_t len, int n)
{
  return room(len, n) ? buf + n : buf + len - 1;
}

void progress_line(char *buf, size_t len, const progress_point *p)
{
  if (len == 0)
    return;
  int n = snprintf(buf, len, "dtsim: sim %.4g / %.4g s (%.0f%%), %ld step%s", p->t, p->bound,
                   100 * fmin(p->t / p->bound, 1), p->steps, p->steps == 1 ? "" : "s");
  if (!isnan(p->loss))
    n += snprintf(at(buf, len, n), room(len, n), ", %s %.4g", p->loss_name ? p->loss_name : "loss", p->loss);
  if (!isnan(p->acc))
    n += snprintf(at(buf, len, n), room(len, n), ", accuracy %.4g", p->acc);
  if (p->t > 0 && p->t < p->bound && p->spent >= PROGRESS_MIN_SPENT)
    snprintf(at(buf, len, n), room(len, n), "%s about %.0f s of wall time to go",
             p->may_end_sooner ? ", at most" : ",", p->spent * (p->bound - p->t) / p->t);
}

void progress_sweep_left(char *buf, size_t len, size_t ran, size_t left, double spent)
{
  if (len == 0)
    return;
  buf[0] = '\0';
  if (ran > 0 && left > 0 && spent >= PROGRESS_MIN_SPENT)
    snprintf(buf, len, ", about %.0f s of wall time to go", spent * (double)left / (double)ran);
}

void progress_show(void *ctx, double t, long steps, double loss, double acc)
{
  progress *p = ctx;
  double now = wallclock_seconds();
  if (!p->tty && p->last > 0 && now - p->last < PROGRESS_EVERY)
    return;
  p->last = now;
  char line[256];
  progress_point pt = {.t = t, .bound = p->bound, .may_end_sooner = p->may_end_sooner, .steps = steps,
                       .loss = loss, .acc = acc, .loss_name = p->loss_name, .spent = now - p->start};
  progress_line(line, sizeof line, &pt);
  fprintf(stderr, p->tty ? "\r%s   " : "%s\n", line);
  fflush(stderr);
  p->shown = p->tty;
}

/* progress.c - the progress line (progress.h): its text, the long run's estimate, and the
 * meter that draws them on stderr as a run evaluates and advances. */
#include "sim/progress.h"

#include <math.h>
#include <stdio.h>

#include "sim/wallclock.h"

/* Off a terminal (--progress into a log), a line every this many wall seconds at most; and
 * between evaluations, a line when none came for this long. */
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
  int n = snprintf(buf, len, "dtsim: sim %.4g / %.4g s (%.0f%%)", p->t, p->bound, 100 * fmin(p->t / p->bound, 1));
  if (p->steps >= 0)
    n += snprintf(at(buf, len, n), room(len, n), ", %ld step%s", p->steps, p->steps == 1 ? "" : "s");
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

/* Wall seconds as the estimate says them: minutes up to two hours, then hours. */
static void wall_text(char *buf, size_t len, double s)
{
  if (s < 7200)
    snprintf(buf, len, "%.0f min", s / 60);
  else
    snprintf(buf, len, "%.1f h", s / 3600);
}

int progress_estimate(char *buf, size_t len, double t, double bound, int may_end_sooner, double spent)
{
  if (len == 0)
    return 0;
  buf[0] = '\0';
  double wall = t > 0 ? spent * bound / t : INFINITY;
  if (!(t > 0) || t >= bound || !(wall > PROGRESS_LONG))
    return 0;
  char w[32];
  wall_text(w, sizeof w, wall);
  snprintf(buf, len, "dtsim: this run will take %sabout %s of wall time: an estimate, at its pace over its first %.3g "
           "wall s (%.3g simulated s per wall s) up to run.max_sim_time = %g s%s",
           may_end_sooner ? "at most " : "", w, spent, t / spent, bound,
           may_end_sooner ? ", unless run.target_accuracy ends it sooner" : "");
  return 1;
}

void progress_begin(progress *p)
{
  pthread_mutex_init(&p->mu, NULL);
  p->shown = p->measured = 0;
  p->start = wallclock_seconds();
  p->last = p->last_eval = 0;
}

void progress_end(progress *p)
{
  if (p->shown)
    fputc('\n', stderr);
  p->shown = 0;
  pthread_mutex_destroy(&p->mu);
}

/* Draws one line (p->mu held). */
static void draw(progress *p, double now, const progress_point *pt)
{
  char line[256];
  progress_line(line, sizeof line, pt);
  fprintf(stderr, p->tty ? "\r%s   " : "%s\n", line);
  fflush(stderr);
  p->shown = p->tty;
  p->last = now;
}

void progress_show(void *ctx, double t, long steps, double loss, double acc)
{
  progress *p = ctx;
  double now = wallclock_seconds();
  pthread_mutex_lock(&p->mu);
  if (p->draw && (p->tty || p->last_eval == 0 || now - p->last_eval >= PROGRESS_EVERY)) {
    progress_point pt = {.t = t, .bound = p->bound, .may_end_sooner = p->may_end_sooner, .steps = steps,
                         .loss = loss, .acc = acc, .loss_name = p->loss_name, .spent = now - p->start};
    draw(p, now, &pt);
    p->last_eval = now;
  }
  pthread_mutex_unlock(&p->mu);
}

void progress_tick(void *ctx, double t)
{
  progress *p = ctx;
  double now = wallclock_seconds(), spent = now - p->start;
  if (spent < PROGRESS_CALIBRATE || !(t > 0))
    return;
  pthread_mutex_lock(&p->mu);
  if (!p->measured) {
    char line[400];
    p->measured = 1;
    if (p->warn && progress_estimate(line, sizeof line, t, p->bound, p->may_end_sooner, spent)) {
      fprintf(stderr, "%s%s\n", p->shown ? "\n" : "", line);
      p->shown = 0;
    }
  }
  if (p->draw && (p->last == 0 || now - p->last >= PROGRESS_EVERY)) {
    progress_point pt = {.t = t, .bound = p->bound, .may_end_sooner = p->may_end_sooner, .steps = -1,
                         .loss = NAN, .acc = NAN, .loss_name = p->loss_name, .spent = spent};
    draw(p, now, &pt);
  }
  pthread_mutex_unlock(&p->mu);
}

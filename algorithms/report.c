/* report.c - an algorithm's additions to a run's results. */
#include "algorithms/report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

void report_printf(report_text *t, const char *fmt, ...)
{
  va_list ap;
  for (;;) {
    size_t room = t->cap - t->len;
    va_start(ap, fmt);
    int n = vsnprintf(t->s ? t->s + t->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < room) {
      t->len += (size_t)n;
      return;
    }
    t->cap = t->cap * 2 + (size_t)n + 64;
    t->s = xbt_realloc(t->s, t->cap);
  }
}

void report_double(report_text *t, double x)
{
  if (isnan(x))
    report_printf(t, "nan");
  else
    report_printf(t, "%.17g", x);
}

json_t *report_num(double x)
{
  return isfinite(x) ? json_real(x) : json_null();
}

report *report_create(void)
{
  report *r = xbt_malloc0(sizeof(*r));
  r->blocks = json_object();
  r->step_time_s = r->model_flops = r->flops_time_s = NAN;
  return r;
}

void report_free(report *r)
{
  if (r == NULL)
    return;
  json_decref(r->blocks);
  for (size_t i = 0; i < r->n_files; i++)
    xbt_free(r->files[i].text.s);
  xbt_free(r->files);
  xbt_free(r->progress_rows.s);
  xbt_free(r->twins);
  xbt_free(r);
}

void report_add_block(report *r, const char *key, json_t *block)
{
  json_object_set_new(r->blocks, key, block);
}

void report_add_file(report *r, const char *name, report_text *text)
{
  xbt_assert(strlen(name) < sizeof(r->files[0].name), "result file name '%s' is too long", name);
  r->files = xbt_realloc(r->files, (r->n_files + 1) * sizeof(*r->files));
  report_file *f = &r->files[r->n_files++];
  snprintf(f->name, sizeof(f->name), "%s", name);
  f->text = *text;
  *text = (report_text){0};
}

/* s as "4.52 ms", "1.2 s", "3.4 us" */
static void seconds_text(double s, char *buf, size_t len)
{
  if (s >= 1 || s == 0)
    snprintf(buf, len, "%.3g s", s);
  else if (s >= 1e-3)
    snprintf(buf, len, "%.3g ms", s * 1e3);
  else
    snprintf(buf, len, "%.3g us", s * 1e6);
}

void report_perf_text(const report_perf *p, int with_rate, char *buf, size_t len)
{
  size_t n = 0;
  buf[0] = '\0';
#define ADD(...) (n += (size_t)snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__), n = n < len ? n : len - 1)
  if (with_rate && isfinite(p->step_time_s)) {
    char t[32];
    seconds_text(p->step_time_s, t, sizeof t);
    ADD("%s per %s", t, p->step ? p->step : "step");
  }
  if (with_rate && isfinite(p->examples_per_s) && p->examples_per_s > 0)
    ADD("%s%.3g examples/s", n ? ", " : "", p->examples_per_s);
  if (with_rate && isfinite(p->tflops_per_device))
    ADD("%s%.3g Tflop/s per device", n ? ", " : "", p->tflops_per_device);
  if (with_rate && isfinite(p->mfu))
    ADD(" (MFU %.3g%%)", 100 * p->mfu);
  if (p->worker_role && isfinite(p->compute_pct))
    ADD("%s%s: compute %.3g%%, comm %.3g%% (exposed %.3g%%)", n ? "; " : "", p->worker_role, p->compute_pct,
        p->comm_pct, p->exposed_comm_pct);
  if (p->worker_role && isfinite(p->compute_pct) && isfinite(p->idle_pct))
    ADD(", idle %.3g%%", p->idle_pct);
#undef ADD
}

void report_bytes_text(double b, char *buf, size_t len)
{
  static const char *const units[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB"};
  size_t u = 0;
  while (b >= 1000 && u + 1 < sizeof units / sizeof *units) {
    b /= 1000;
    u++;
  }
  snprintf(buf, len, "%.3g %s", b, units[u]);
}

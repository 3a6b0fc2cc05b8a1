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

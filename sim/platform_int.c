/* platform_int.c - what sim/platform*.c share: the error formatter, the number format of
 * written files, and the name checks (platform_int.h). */
#include "sim/platform_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void platform_set_err(char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;
  if (!err || !errlen)
    return;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

/* Shortest decimal that reads back as the same double, so the file shows 5e-05, not
 * 5.0000000000000002e-05, and still round-trips exactly. */
void platform_fmt_num(char *buf, size_t n, double v)
{
  if (v >= 1 && v < 1e15 && v == (double)(long long)v) {
    snprintf(buf, n, "%lld", (long long)v);
    return;
  }
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, n, "%.*g", p, v);
    if (strtod(buf, NULL) == v)
      return;
  }
}

int platform_valid_model(const char *m) { return strcmp(m, "LV08") == 0 || strcmp(m, "CM02") == 0; }

int platform_valid_name(const char *s)
{
  if (!*s)
    return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '-' || *s == '_' || *s == '.'))
      return 0;
  return 1;
}

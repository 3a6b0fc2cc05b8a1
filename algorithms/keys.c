/* keys.c - helpers for the key tables' value checks. */
#include "algorithms/keys.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *key_quote(const char *v, char *buf, size_t len)
{
  if (strlen(v) > KEY_QUOTE_MAX)
    snprintf(buf, len, "'%.*s...'", KEY_QUOTE_MAX, v);
  else
    snprintf(buf, len, "'%s'", v);
  return buf;
}

int key_choice_ok(const char *choices, const char *v)
{
  size_t n = strlen(v);
  for (const char *p = choices; *p;) {
    size_t m = strcspn(p, "|");
    if (m == n && strncmp(p, v, n) == 0)
      return 1;
    p += m + (p[m] == '|');
  }
  return 0;
}

int key_check_name_or_file(const char *v, const char *names, const char *prefix, const char *what,
                           const char *all, char *why, size_t len)
{
  char q[KEY_QUOTE_MAX + 8];
  size_t n = strlen(prefix);
  if (key_choice_ok(names, v))
    return 0;
  if (strncmp(v, prefix, n) == 0) {
    if (v[n] != '\0')
      return 0;
    snprintf(why, len, "%s needs a file name, as in %sfile.txt", key_quote(v, q, sizeof q), prefix);
    return -1;
  }
  snprintf(why, len, "%s is not %s (%s)", key_quote(v, q, sizeof q), what, all);
  return -1;
}

int key_sizes_parse(const char *text, size_t *sizes, size_t cap)
{
  const char *p = text;
  size_t n = 0;
  for (;;) {
    char *end;
    unsigned long x;
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p < '0' || *p > '9')
      return -1;
    errno = 0;
    x = strtoul(p, &end, 10);
    if (errno == ERANGE || x < 1 || x > KEY_SIZE_MAX)
      return -1;
    if (sizes) {
      if (n >= cap)
        return -1;
      sizes[n] = (size_t)x;
    }
    n++;
    p = end;
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p == '\0')
      break;
    if (*p != ',')
      return -1;
    p++;
  }
  return n > INT_MAX ? -1 : (int)n;
}

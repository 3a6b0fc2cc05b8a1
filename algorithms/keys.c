/* keys.c - helpers for the key tables' value checks. */
#include "algorithms/keys.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <xbt/asserts.h>

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

static int bool_word(const char *v)
{
  return strcasecmp(v, "on") == 0 || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0 || strcmp(v, "1") == 0;
}

/* The position of v in choices ("a|b|c"), or -1. */
static int choice_position(const char *choices, const char *v)
{
  size_t n = strlen(v);
  int i = 0;
  for (const char *p = choices; *p; i++) {
    size_t m = strcspn(p, "|");
    if (m == n && strncmp(p, v, n) == 0)
      return i;
    p += m + (p[m] == '|');
  }
  return -1;
}

int key_changed(const key_spec *table, size_t n, const void *params, const char *name)
{
  const key_spec *k = NULL;
  const char *dot = strchr(name, '.');
  for (size_t i = 0; i < n && !k; i++)
    if (dot ? strncmp(table[i].section, name, (size_t)(dot - name)) == 0 && table[i].section[dot - name] == '\0' &&
                  strcmp(table[i].key, dot + 1) == 0
            : strcmp(table[i].key, name) == 0)
      k = &table[i];
  xbt_assert(k, "key_changed: no key '%s' in this table", name);
  const char *f = (const char *)params + k->offset;
  switch (k->type) {
  case KEY_STR:
    if (k->empty_alias && !*k->def && strcmp(f, k->empty_alias) == 0)
      return 0;
    return strcmp(f, k->def) != 0;
  case KEY_DOUBLE: {
    double x;
    memcpy(&x, f, sizeof x);
    return x != strtod(k->def, NULL);
  }
  case KEY_LONG: {
    long x;
    memcpy(&x, f, sizeof x);
    return x != strtol(k->def, NULL, 10);
  }
  case KEY_INT: {
    int x;
    memcpy(&x, f, sizeof x);
    return x != (int)strtol(k->def, NULL, 10);
  }
  case KEY_SIZE: {
    size_t x;
    memcpy(&x, f, sizeof x);
    return x != (size_t)strtoul(k->def, NULL, 10);
  }
  case KEY_U64: {
    uint64_t x;
    memcpy(&x, f, sizeof x);
    return x != (uint64_t)strtoull(k->def, NULL, 10);
  }
  case KEY_BOOL: {
    int x;
    memcpy(&x, f, sizeof x);
    return x != bool_word(k->def);
  }
  case KEY_CHOICE: {
    int x, pos = choice_position(k->choices, k->def);
    memcpy(&x, f, sizeof x);
    return x != (k->values ? k->values[pos] : pos);
  }
  }
  return 0;
}

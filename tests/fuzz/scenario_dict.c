/* scenario_dict.c - prints a libFuzzer dictionary for the scenario harnesses from the
 * key table itself (so it follows every key added): "[section]", "key", "key=",
 * "section.key=", each default, and every `word` quoted in a key's documentation
 * (the names most keys accept). Built with DTSIM_FUZZ; the fuzz target runs it. */

#include <stdio.h>
#include <string.h>

#include "sim/scenario.h"

static void entry(const char *prefix, const char *text, size_t len, const char *suffix)
{
  char buf[1024];
  int n = snprintf(buf, sizeof buf, "%s%.*s%s", prefix, (int)len, text, suffix);
  if (n <= 0 || (size_t)n >= sizeof buf)
    return;
  putchar('"');
  for (const char *p = buf; *p; p++) {
    unsigned char c = (unsigned char)*p;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20 || c >= 0x7f)
      printf("\\x%02X", c);
    else
      putchar(c);
  }
  puts("\"");
}

int main(void)
{
  scenario s;
  char value[SCENARIO_STR + 64], dotted[128];
  const char *last = "";
  scenario_defaults(&s);
  for (size_t i = 0; i < scenario_key_count(); i++) {
    const char *sec, *key, *doc;
    scenario_key_at(&s, i, &sec, &key, value, sizeof value, NULL, NULL, &doc);
    if (strcmp(sec, last) != 0)
      entry("[", sec, strlen(sec), "]\n");
    last = sec;
    entry("", key, strlen(key), "");
    entry("", key, strlen(key), "=");
    snprintf(dotted, sizeof dotted, "%s.%s", sec, key);
    entry("", dotted, strlen(dotted), "=");
    if (*value)
      entry("", value, strlen(value), "");
    for (const char *p = strchr(doc, '`'); p; p = strchr(p, '`')) {
      const char *end = strchr(p + 1, '`');
      if (!end)
        break;
      if (end > p + 1)
        entry("", p + 1, (size_t)(end - p - 1), "");
      p = end + 1;
    }
  }
  return 0;
}

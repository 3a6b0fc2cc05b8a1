#ifndef TESTS_FUZZ_SCENARIO_UTIL_H
#define TESTS_FUZZ_SCENARIO_UTIL_H
/* fuzz_scenario_util.h - comparing scenarios by their effective values, and the round
 * trip every valid scenario must survive; shared by the scenario and --set harnesses. */

#include "fuzz_util.h"

#include "sim/scenario.h"

#define VALLEN (SCENARIO_STR + 64)

/* Every key's effective value in a and b is the same text (the text round-trips
 * exactly: scenario_key_at's contract). Returns the first key that differs, or -1. */
static inline long first_difference(const scenario *a, const scenario *b)
{
  char va[VALLEN], vb[VALLEN];
  if (memcmp(a, b, sizeof *a) == 0) /* a fast path: formatting every key is most of the time */
    return -1;
  for (size_t i = 0; i < scenario_key_count(); i++) {
    scenario_key_at(a, i, NULL, NULL, va, sizeof va, NULL, NULL, NULL);
    scenario_key_at(b, i, NULL, NULL, vb, sizeof vb, NULL, NULL, NULL);
    if (strcmp(va, vb) != 0)
      return (long)i;
  }
  return -1;
}

static inline void check_same(const scenario *a, const scenario *b, const char *what)
{
  long i = first_difference(a, b);
  if (i >= 0) {
    const char *sec, *key;
    char va[VALLEN], vb[VALLEN];
    scenario_key_at(a, (size_t)i, &sec, &key, va, sizeof va, NULL, NULL, NULL);
    scenario_key_at(b, (size_t)i, NULL, NULL, vb, sizeof vb, NULL, NULL, NULL);
    fuzz_fail("%s: %s.%s is '%s', then '%s'", what, sec, key, va, vb);
  }
}

/* The effective values as an INI file, keys grouped under their section. */
static inline char *write_ini(const scenario *s)
{
  char *text = NULL, value[VALLEN];
  size_t len = 0;
  const char *last = "";
  FILE *f = open_memstream(&text, &len);
  FUZZ_CHECK(f != NULL, "open_memstream failed");
  for (size_t i = 0; i < scenario_key_count(); i++) {
    const char *sec, *key;
    scenario_key_at(s, i, &sec, &key, value, sizeof value, NULL, NULL, NULL);
    if (strcmp(sec, last) != 0)
      fprintf(f, "[%s]\n", sec);
    last = sec;
    fprintf(f, "%s=%s\n", key, value);
  }
  fclose(f);
  return text;
}

/* ini: also through INI text, which can hold any value read from INI but not every
 * --set value (a value with " ;" in it, or longer than inih's line). */
static inline void check_round_trip(const scenario *a, int ini)
{
  scenario b;
  char err[512], value[VALLEN], assign[VALLEN + 128];
  char *text = ini ? write_ini(a) : NULL;
  scenario_defaults(&b);
  if (ini) {
  FUZZ_CHECK(scenario_load_string(&b, text, "written.ini", err, sizeof err) == 0,
             "a valid scenario written out does not parse: %s\n%s", err, text);
  FUZZ_CHECK(scenario_validate(&b, "written.ini", err, sizeof err) == 0,
             "a valid scenario written out does not validate: %s", err);
  check_same(a, &b, "INI round trip");
  free(text);
  }

  scenario_defaults(&b);
  for (size_t i = 0; i < scenario_key_count(); i++) {
    const char *sec, *key;
    scenario_key_at(a, i, &sec, &key, value, sizeof value, NULL, NULL, NULL);
    snprintf(assign, sizeof assign, "%s.%s=%s", sec, key, value);
    FUZZ_CHECK(scenario_set(&b, assign, err, sizeof err) == 0, "--set %s is refused: %s", assign, err);
  }
  FUZZ_CHECK(scenario_validate(&b, "<set>", err, sizeof err) == 0, "--set round trip does not validate: %s", err);
  check_same(a, &b, "--set round trip");
}

#endif

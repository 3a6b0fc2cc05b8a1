/* fuzz_set.c - libFuzzer harness: the input is up to 16 NUL-separated `--set
 * SECTION.KEY=VALUE` strings (an argument holds any other byte, newlines included),
 * applied in order over the defaults as `dtsim run` does, then validated. Invariants
 * besides not crashing:
 *  - a refused assignment leaves the scenario unchanged and reports one non-empty line
 *    starting with "--set ";
 *  - an accepted one changes one key (or platform.preset and platform.file together),
 *    and setting that key again to its effective value changes nothing;
 *  - a scenario that validates round-trips through --set (as in fuzz_scenario.c; not
 *    through INI, which cannot hold every --set value). */

#include "fuzz_scenario_util.h"

#define MAX_SETS 16

/* Whether key i is platform.preset or platform.file, which one assignment may change
 * together (naming one forgets the other). */
static int is_platform_source(size_t i)
{
  const char *sec, *key;
  scenario_key_at(NULL, i, &sec, &key, NULL, 0, NULL, NULL, NULL);
  return strcmp(sec, "platform") == 0 && (strcmp(key, "preset") == 0 || strcmp(key, "file") == 0);
}

static void check_accepted(const scenario *before, const scenario *after, const char *assign)
{
  char vb[VALLEN], va[VALLEN], again[VALLEN + 128], err[512];
  size_t changed = 0;
  for (size_t i = 0; i < scenario_key_count(); i++) {
    const char *sec, *key;
    scenario_key_at(before, i, NULL, NULL, vb, sizeof vb, NULL, NULL, NULL);
    scenario_key_at(after, i, &sec, &key, va, sizeof va, NULL, NULL, NULL);
    if (strcmp(va, vb) == 0)
      continue;
    changed++;
    FUZZ_CHECK(changed == 1 || is_platform_source(i), "--set %s changed %s.%s too", assign, sec, key);
    scenario copy = *after;
    snprintf(again, sizeof again, "%s.%s=%s", sec, key, va);
    FUZZ_CHECK(scenario_set(&copy, again, err, sizeof err) == 0, "--set %s (an effective value) is refused: %s",
               again, err);
    check_same(after, &copy, "setting an effective value again");
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  scenario s, before;
  char err[512];
  char *text = malloc(size + 1);
  FUZZ_CHECK(text != NULL, "out of memory");
  memcpy(text, data, size);
  text[size] = '\0';
  scenario_defaults(&s);
  /* A command-line argument holds any byte but NUL, so NUL separates assignments. */
  for (size_t at = 0, n = 0; at < size && n < MAX_SETS; at += strlen(text + at) + 1, n++) {
    const char *line = text + at;
    before = s;
    int rc = scenario_set(&s, line, err, sizeof err);
    if (rc != 0) {
      FUZZ_CHECK(rc == -1, "scenario_set returned %d", rc);
      fuzz_check_error(err, "--set ");
      check_same(&before, &s, "a refused --set");
    } else {
      check_accepted(&before, &s, line);
    }
  }
  free(text);
  int rc = scenario_validate(&s, "<set>", err, sizeof err);
  if (rc != 0) {
    FUZZ_CHECK(rc == -1, "scenario_validate returned %d", rc);
    fuzz_check_error(err, "<set>: ");
    return 0;
  }
  check_round_trip(&s, 0);
  return 0;
}

/* scenario_list.c - the keys as a list (for summary.json's "scenario" block) and as the
 * Markdown key reference of sim/KEYS.md and `dtsim list keys`. */

#include "sim/scenario.h"
#include "sim/keytable.h"
#include "sim/scenario_int.h"

#include <stdio.h>
#include <string.h>
#include <xbt/asserts.h>

/* ---------- listing and output ---------- */

size_t scenario_key_count(void)
{
  size_t n;
  scenario_keys_init();
  keytable_keys(&n);
  return n;
}

/* The table's i-th key; `who` names the caller when i is past the last. */
static const key_ref *scenario_list_key(size_t i, const char *who)
{
  size_t n;
  scenario_keys_init();
  const key_ref *keys = keytable_keys(&n);
  xbt_assert(i < n, "%s: index %zu past the %zu keys", who, i, n);
  return &keys[i];
}

void scenario_key_at(const scenario *s, size_t i, const char **section, const char **key,
                     char *value, size_t valuelen, const char **def, const char **unit,
                     const char **doc)
{
  const key_ref *r = scenario_list_key(i, "scenario_key_at");
  const key_spec *k = r->k;
  if (section)
    *section = k->section;
  if (key)
    *key = k->key;
  if (value && valuelen)
    keytable_format_value(s, r, value, valuelen);
  if (def)
    *def = k->def;
  if (unit)
    *unit = k->unit;
  if (doc)
    *doc = k->doc;
}

int scenario_key_file(const scenario *s, size_t i, char *path, size_t len)
{
  const key_ref *r = scenario_list_key(i, "scenario_key_file");
  const key_spec *k = r->k;
  if (k->paths == NULL)
    return 0;
  const char *value = keytable_cfield(s, r);
  for (const char *p = k->paths;; p += strcspn(p, "|") + 1) { /* "" or "a:|b:" */
    size_t m = strcspn(p, "|");
    if (strncmp(value, p, m) == 0 && value[m] != '\0') {
      snprintf(path, len, "%s", value + m);
      return 1;
    }
    if (p[m] == '\0')
      return 0;
  }
}

/* Markdown table cells must not contain a bare '|'. */
static void put_cell(FILE *out, const char *text)
{
  for (const char *p = text; *p; p++) {
    if (*p == '|')
      fputc('\\', out);
    fputc(*p, out);
  }
}

void scenario_print_reference(FILE *out)
{
  char names[512], range[96];
  size_t n_keys, n_sections;
  scenario_keys_init();
  const key_ref *keys = keytable_keys(&n_keys);
  const section_spec *sections = keytable_sections(&n_sections);
  for (size_t si = 0; si < n_sections; si++) {
    fprintf(out, "%s**[%s]** %s\n\n", si ? "\n" : "", sections[si].name, sections[si].doc);
    fprintf(out, "| key | default | unit | meaning |\n|---|---|---|---|\n");
    for (size_t i = 0; i < n_keys; i++) {
      const key_spec *k = keys[i].k;
      if (strcmp(k->section, sections[si].name) != 0)
        continue;
      fprintf(out, "| `%s.%s` | ", k->section, k->key);
      if (*k->def)
        fprintf(out, "`%s`", k->def);
      else
        fputs("(empty)", out);
      fputs(" | ", out);
      put_cell(out, *k->unit ? k->unit : "-");
      fputs(" | ", out);
      put_cell(out, k->doc);
      keytable_names_list(k, names, sizeof names, 1);
      keytable_range_text(k, range, sizeof range);
      if (k->type == KEY_BOOL)
        fputs(" `on` or `off`.", out);
      if (*names) {
        fputs(" One of: ", out);
        put_cell(out, names);
        fputs(".", out);
      }
      if (*range) {
        fputs(" Range: ", out);
        put_cell(out, range);
        fputs(".", out);
      }
      fputs(" |\n", out);
    }
    for (size_t a = 0; a < scenario_alias_count(); a++) {
      const char *section, *key, *to_section, *to_key;
      scenario_alias_at(a, &section, &key, &to_section, &to_key);
      if (strcmp(section, sections[si].name) == 0)
        fprintf(out, "\n`%s.%s` is an old name of `%s.%s`, still read (and written in summary.json's scenario block, "
                "with that key's value).\n", section, key, to_section, to_key);
    }
  }
}

size_t scenario_alias_count(void)
{
  return keytable_alias_count();
}

void scenario_alias_at(size_t i, const char **section, const char **key, const char **to_section, const char **to_key)
{
  keytable_alias_at(i, section, key, to_section, to_key);
}

/* keytable.c - the key table behind scenario.h, and the generic machinery over it.
 *
 * Everything about a key lives in one row of a key table (algorithms/keys.h); the rows
 * themselves are scenario.c's (the common sections) and each algorithm's descriptor's.
 * This module owns the one table they are gathered into (keytable_build, called by the
 * scenario before it reads anything) and all that is done with a row whatever its key:
 * lookup of a section and key (and their old names), did-you-mean messages, conversion
 * and range checks of a value by its key's type, storing and formatting a value,
 * defaults, per-key validation. It knows no key by name but the two platform keys
 * that exclude each other. */

#include "sim/keytable.h"
#include "algorithms/registry.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <xbt/asserts.h>

/* ---------- the table ---------- */

#define SECTIONS_MAX (SETTINGS_MAX_ALGORITHMS + 8)

/* Built once by keytable_build; read only afterwards. */
static struct {
  key_ref keys[KEYS_MAX];
  size_t n_keys;
  section_spec sections[SECTIONS_MAX];
  size_t n_sections;
} keytable;

static void keytable_add_keys(const key_spec *k, size_t n, int alg)
{
  for (size_t i = 0; i < n; i++) {
    xbt_assert(keytable.n_keys < KEYS_MAX, "scenario: more than %d keys", KEYS_MAX);
    keytable.keys[keytable.n_keys++] = (key_ref){&k[i], alg};
  }
}

static void keytable_add_sections(const section_spec *sec, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    xbt_assert(keytable.n_sections < SECTIONS_MAX, "scenario: more than %d sections", SECTIONS_MAX);
    keytable.sections[keytable.n_sections++] = sec[i];
  }
}

void keytable_build(const key_rows *head, const key_rows *tail)
{
  if (keytable.n_keys > 0)
    return;
  keytable_add_sections(head->sections, head->n_sections);
  keytable_add_keys(head->keys, head->n_keys, -1);
  for (size_t a = 0; a < algorithm_count; a++) {
    const algorithm *alg = algorithm_registry[a];
    xbt_assert(alg->params_size <= SETTINGS_PARAMS_BYTES, "%s's parameters outgrow SETTINGS_PARAMS_BYTES",
               alg->name);
    keytable_add_sections(&(section_spec){alg->name, alg->section_doc}, 1);
    for (size_t i = 0; i < alg->n_keys; i++)
      xbt_assert(strcmp(alg->keys[i].section, alg->name) == 0, "key %s.%s is in %s's table", alg->keys[i].section,
                 alg->keys[i].key, alg->name);
    keytable_add_keys(alg->keys, alg->n_keys, (int)a);
  }
  keytable_add_sections(tail->sections, tail->n_sections);
  keytable_add_keys(tail->keys, tail->n_keys, -1);
}

const key_ref *keytable_keys(size_t *n)
{
  xbt_assert(keytable.n_keys > 0, "the key table is read before keytable_build");
  if (n)
    *n = keytable.n_keys;
  return keytable.keys;
}

const section_spec *keytable_sections(size_t *n)
{
  xbt_assert(keytable.n_sections > 0, "the key table is read before keytable_build");
  if (n)
    *n = keytable.n_sections;
  return keytable.sections;
}

size_t keytable_index(const key_ref *r)
{
  xbt_assert(r >= keytable.keys && r < keytable.keys + keytable.n_keys, "a key_ref outside the table");
  return (size_t)(r - keytable.keys);
}

/* ---------- small helpers ---------- */

void keytable_msgf(char *msg, size_t len, const char *fmt, ...)
{
  va_list ap;
  if (!msg || !len)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, len, fmt, ap);
  va_end(ap);
}

const char *keytable_quote(const char *v, char *buf, size_t len)
{
  return key_quote(v, buf, len);
}

void *keytable_field(scenario *s, const key_ref *r)
{
  return (r->alg < 0 ? (char *)s : (char *)s->sections[r->alg].bytes) + r->k->offset;
}

const void *keytable_cfield(const scenario *s, const key_ref *r)
{
  return (r->alg < 0 ? (const char *)s : (const char *)s->sections[r->alg].bytes) + r->k->offset;
}

/* Shortest of %.15g, %.16g, %.17g that reads back as the same double: "0.05" rather
 * than %.17g's "0.050000000000000003", and still exact. */
void keytable_format_double(double x, char *buf, size_t len)
{
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, len, "%.*g", prec, x);
    if (strtod(buf, NULL) == x)
      return;
  }
}

static size_t keytable_levenshtein(const char *a, const char *b)
{
  size_t la = strlen(a), lb = strlen(b);
  size_t row[64];
  if (la >= 64 || lb >= 64)
    return SIZE_MAX;
  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best)
        best = up + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

const section_spec *keytable_section_find(const char *name)
{
  for (size_t i = 0; i < keytable.n_sections; i++)
    if (strcmp(keytable.sections[i].name, name) == 0)
      return &keytable.sections[i];
  return NULL;
}

/* Old names kept for one key, as scripts use them: reading one sets its key. */
static const struct {
  const char *section, *key, *to_section, *to_key;
} keytable_aliases[] = {
    {"tensor", "steps", "run", "max_steps"}, /* tensor runs count their steps in run.max_steps, as every run does */
};

static const key_ref *keytable_key_find_exact(const char *section, const char *key);

/* The key section.key names, itself or through an alias. */
const key_ref *keytable_key_find(const char *section, const char *key)
{
  for (size_t i = 0; i < sizeof keytable_aliases / sizeof *keytable_aliases; i++)
    if (strcmp(section, keytable_aliases[i].section) == 0 && strcmp(key, keytable_aliases[i].key) == 0)
      return keytable_key_find_exact(keytable_aliases[i].to_section, keytable_aliases[i].to_key);
  return keytable_key_find_exact(section, key);
}

static const key_ref *keytable_key_find_exact(const char *section, const char *key)
{
  for (size_t i = 0; i < keytable.n_keys; i++)
    if (strcmp(keytable.keys[i].k->section, section) == 0 && strcmp(keytable.keys[i].k->key, key) == 0)
      return &keytable.keys[i];
  return NULL;
}

void keytable_unknown_section_msg(const char *section, char *msg, size_t len)
{
  char list[256] = "";
  const char *near = NULL;
  for (size_t i = 0; i < keytable.n_sections; i++) {
    if (!near && keytable_levenshtein(section, keytable.sections[i].name) <= 2)
      near = keytable.sections[i].name;
    strcat(list, i ? ", " : "");
    strcat(list, keytable.sections[i].name);
  }
  if (near)
    keytable_msgf(msg, len, "unknown section [%.*s]; did you mean [%s]?", QUOTE_MAX, section, near);
  else
    keytable_msgf(msg, len, "unknown section [%.*s] (sections: %s)", QUOTE_MAX, section, list);
}

void keytable_unknown_key_msg(const char *section, const char *key, char *msg, size_t len)
{
  const key_spec *near = NULL, *elsewhere = NULL;
  size_t best = 3;
  for (size_t i = 0; i < keytable.n_keys; i++) {
    const key_spec *k = keytable.keys[i].k;
    if (strcmp(k->section, section) == 0) {
      size_t d = keytable_levenshtein(key, k->key);
      if (d < best && d < strlen(key)) {
        best = d;
        near = k;
      }
    } else if (!elsewhere && strcmp(k->key, key) == 0) {
      elsewhere = k;
    }
  }
  if (near)
    keytable_msgf(msg, len, "unknown key '%.*s' in section [%s]; did you mean '%s'?", QUOTE_MAX, key,
         section, near->key);
  else if (elsewhere)
    keytable_msgf(msg, len, "unknown key '%.*s' in section [%s]; it belongs in [%s]", QUOTE_MAX, key,
         section, elsewhere->section);
  else
    keytable_msgf(msg, len, "unknown key '%.*s' in section [%s]", QUOTE_MAX, key, section);
}

void keytable_names_list(const key_spec *k, char *buf, size_t len, int code)
{
  const char *tick = code ? "`" : "";
  size_t used = 0;
  buf[0] = '\0';
  if (k->choices) {
    const char *p = k->choices;
    while (*p && used + 1 < len) {
      size_t n = strcspn(p, "|");
      used += (size_t)snprintf(buf + used, len - used, "%s%s%.*s%s", used ? ", " : "", tick,
                               (int)n, p, tick);
      p += n + (p[n] == '|');
    }
  } else if (k->name_at) {
    const char *name;
    for (size_t i = 0; (name = k->name_at(i)) != NULL && used + 1 < len; i++)
      used += (size_t)snprintf(buf + used, len - used, "%s%s%s%s", used ? ", " : "", tick,
                               name, tick);
  }
}

static int keytable_choice_ok(const char *choices, const char *v)
{
  return key_choice_ok(choices, v);
}

/* ---------- conversions ---------- */

void keytable_range_text(const key_spec *k, char *buf, size_t len)
{
  char lo[32], hi[32];
  keytable_format_double(k->lo, lo, sizeof lo);
  keytable_format_double(k->hi, hi, sizeof hi);
  buf[0] = '\0';
  if (k->lo_kind != KEY_UNBOUNDED && k->hi_kind != KEY_UNBOUNDED)
    snprintf(buf, len, "in %s%s, %s%s", k->lo_kind == KEY_INCL ? "[" : "(", lo, hi,
             k->hi_kind == KEY_INCL ? "]" : ")");
  else if (k->lo_kind != KEY_UNBOUNDED)
    snprintf(buf, len, "%s %s", k->lo_kind == KEY_INCL ? ">=" : ">", lo);
  else if (k->hi_kind != KEY_UNBOUNDED)
    snprintf(buf, len, "%s %s", k->hi_kind == KEY_INCL ? "<=" : "<", hi);
}

static int keytable_in_range(const key_spec *k, double x)
{
  if (k->lo_kind == KEY_INCL && !(x >= k->lo))
    return 0;
  if (k->lo_kind == KEY_EXCL && !(x > k->lo))
    return 0;
  if (k->hi_kind == KEY_INCL && !(x <= k->hi))
    return 0;
  if (k->hi_kind == KEY_EXCL && !(x < k->hi))
    return 0;
  return 1;
}

static int keytable_range_check(const key_spec *k, double x, const char *shown, char *msg, size_t len)
{
  char r[96];
  if (keytable_in_range(k, x))
    return 0;
  keytable_range_text(k, r, sizeof r);
  keytable_msgf(msg, len, "must be %s, got %s", r, shown);
  return -1;
}

static int keytable_parse_double(const char *v, double *out, char *msg, size_t len)
{
  char *end, q[QUOTE_MAX + 8];
  double x;
  if (!*v) {
    keytable_msgf(msg, len, "a number is required");
    return -1;
  }
  errno = 0;
  x = strtod(v, &end);
  if (end == v || *end != '\0') {
    keytable_msgf(msg, len, "%s is not a number", keytable_quote(v, q, sizeof q));
    return -1;
  }
  if (errno == ERANGE) { /* overflow, or underflow to zero or a subnormal */
    keytable_msgf(msg, len, "%s is out of range", keytable_quote(v, q, sizeof q));
    return -1;
  }
  if (!isfinite(x)) {
    keytable_msgf(msg, len, "%s is not a finite number", keytable_quote(v, q, sizeof q));
    return -1;
  }
  *out = x;
  return 0;
}

/* Decimal digits with an optional sign, nothing else: strtol alone would also take
 * leading blanks and, for unsigned types, a minus sign that wraps around. */
static int keytable_integer_syntax(const char *v, int allow_minus)
{
  const char *p = v;
  if (*p == '+' || (allow_minus && *p == '-'))
    p++;
  if (!*p)
    return 0;
  for (; *p; p++)
    if (*p < '0' || *p > '9')
      return 0;
  return 1;
}

static int keytable_parse_long(const char *v, long *out, char *msg, size_t len)
{
  char q[QUOTE_MAX + 8];
  long x;
  if (!*v) {
    keytable_msgf(msg, len, "an integer is required");
    return -1;
  }
  if (!keytable_integer_syntax(v, 1)) {
    keytable_msgf(msg, len, "%s is not an integer", keytable_quote(v, q, sizeof q));
    return -1;
  }
  errno = 0;
  x = strtol(v, NULL, 10);
  if (errno == ERANGE) {
    keytable_msgf(msg, len, "%s is out of range", keytable_quote(v, q, sizeof q));
    return -1;
  }
  *out = x;
  return 0;
}

static int keytable_parse_u64(const char *v, uint64_t *out, char *msg, size_t len)
{
  char q[QUOTE_MAX + 8];
  unsigned long long x;
  if (!*v) {
    keytable_msgf(msg, len, "an integer is required");
    return -1;
  }
  if (!keytable_integer_syntax(v, 0)) {
    keytable_msgf(msg, len, "%s is not an integer from 0 to %" PRIu64, keytable_quote(v, q, sizeof q),
         UINT64_MAX);
    return -1;
  }
  errno = 0;
  x = strtoull(v, NULL, 10);
  if (errno == ERANGE || x > UINT64_MAX) {
    keytable_msgf(msg, len, "%s is out of range (at most %" PRIu64 ")", keytable_quote(v, q, sizeof q),
         UINT64_MAX);
    return -1;
  }
  *out = (uint64_t)x;
  return 0;
}

static int keytable_parse_bool(const char *v, int *out, char *msg, size_t len)
{
  static const char *const yes[] = {"on", "true", "yes", "1"};
  static const char *const no[] = {"off", "false", "no", "0"};
  char q[QUOTE_MAX + 8];
  for (size_t i = 0; i < 4; i++) {
    if (strcasecmp(v, yes[i]) == 0) {
      *out = 1;
      return 0;
    }
    if (strcasecmp(v, no[i]) == 0) {
      *out = 0;
      return 0;
    }
  }
  keytable_msgf(msg, len, "%s is not on or off (true/false, yes/no and 1/0 also work)",
       keytable_quote(v, q, sizeof q));
  return -1;
}

int keytable_check_string(const key_spec *k, const char *v, char *msg, size_t len)
{
  char names[512], q[QUOTE_MAX + 8];
  if (strlen(v) >= k->size) {
    keytable_msgf(msg, len, "%s is too long (at most %zu characters)", keytable_quote(v, q, sizeof q),
         k->size - 1);
    return -1;
  }
  if (k->choices && !keytable_choice_ok(k->choices, v)) {
    keytable_names_list(k, names, sizeof names, 0);
    keytable_msgf(msg, len, "%s is not one of: %s", keytable_quote(v, q, sizeof q), names);
    return -1;
  }
  if (k->check)
    return k->check(v, msg, len);
  return 0;
}

const key_ref *keytable_key_preset(void)
{
  return keytable_key_find("platform", "preset");
}

const key_ref *keytable_key_file(void)
{
  return keytable_key_find("platform", "file");
}

/* The choice's position in k->choices, or -1. */
static int keytable_choice_index(const key_spec *k, const char *v)
{
  int i = 0;
  size_t n = strlen(v);
  for (const char *p = k->choices; *p; i++) {
    size_t m = strcspn(p, "|");
    if (m == n && strncmp(p, v, n) == 0)
      return i;
    p += m + (p[m] == '|');
  }
  return -1;
}

/* The name of the choice stored as x, or NULL. */
static const char *keytable_choice_name(const key_spec *k, int x, char *buf, size_t len)
{
  int i = 0;
  for (const char *p = k->choices; *p; i++) {
    size_t m = strcspn(p, "|");
    if ((k->values ? k->values[i] : i) == x) {
      snprintf(buf, len, "%.*s", (int)m, p);
      return buf;
    }
    p += m + (p[m] == '|');
  }
  return NULL;
}

/* Integer keys stored as int or size_t: the range of the type is checked too. */
static int keytable_integer_fits(key_type t, long x)
{
  return t == KEY_INT ? x >= INT_MIN && x <= INT_MAX : t == KEY_SIZE ? x >= 0 : 1;
}

static void keytable_store_integer(void *f, key_type t, long x)
{
  if (t == KEY_INT) {
    int v = (int)x;
    memcpy(f, &v, sizeof v);
  } else if (t == KEY_SIZE) {
    size_t v = (size_t)x;
    memcpy(f, &v, sizeof v);
  } else {
    memcpy(f, &x, sizeof x);
  }
}

static long keytable_load_integer(const void *f, key_type t)
{
  if (t == KEY_INT) {
    int v;
    memcpy(&v, f, sizeof v);
    return v;
  }
  if (t == KEY_SIZE) {
    size_t v;
    memcpy(&v, f, sizeof v);
    return v > LONG_MAX ? LONG_MAX : (long)v;
  }
  long v;
  memcpy(&v, f, sizeof v);
  return v;
}

/* Converts and checks `value` for key r, then stores it; on error s is unchanged and
 * msg holds the problem (without the key's name, which the caller prefixes). */
int keytable_key_assign(scenario *s, const key_ref *r, const char *value, char *msg, size_t len)
{
  const key_spec *k = r->k;
  char shown[40];
  switch (k->type) {
  case KEY_STR: {
    const char *v = k->empty_alias && strcmp(value, k->empty_alias) == 0 ? "" : value;
    if (keytable_check_string(k, v, msg, len) != 0)
      return -1;
    memcpy(keytable_field(s, r), v, strlen(v) + 1);
    /* The platform is a preset or a file: naming one forgets the other, so that
     * --set platform.file=x.xml works over a scenario that names a preset. */
    if (*v && r == keytable_key_file())
      s->platform.preset[0] = '\0';
    if (*v && r == keytable_key_preset())
      s->platform.file[0] = '\0';
    return 0;
  }
  case KEY_CHOICE: {
    char names[512], q[QUOTE_MAX + 8];
    int i = keytable_choice_index(k, value);
    if (i < 0) {
      keytable_names_list(k, names, sizeof names, 0);
      keytable_msgf(msg, len, "%s is not one of: %s", keytable_quote(value, q, sizeof q), names);
      return -1;
    }
    int x = k->values ? k->values[i] : i;
    memcpy(keytable_field(s, r), &x, sizeof x);
    return 0;
  }
  case KEY_DOUBLE: {
    double x;
    if (keytable_parse_double(value, &x, msg, len) != 0)
      return -1;
    keytable_format_double(x, shown, sizeof shown);
    if (keytable_range_check(k, x, shown, msg, len) != 0)
      return -1;
    memcpy(keytable_field(s, r), &x, sizeof x);
    return 0;
  }
  case KEY_LONG:
  case KEY_INT:
  case KEY_SIZE: {
    long x;
    if (keytable_parse_long(value, &x, msg, len) != 0)
      return -1;
    snprintf(shown, sizeof shown, "%ld", x);
    if (keytable_range_check(k, (double)x, shown, msg, len) != 0)
      return -1;
    if (!keytable_integer_fits(k->type, x)) {
      keytable_msgf(msg, len, "%s is out of range", shown);
      return -1;
    }
    keytable_store_integer(keytable_field(s, r), k->type, x);
    return 0;
  }
  case KEY_U64: {
    uint64_t x;
    if (keytable_parse_u64(value, &x, msg, len) != 0)
      return -1;
    memcpy(keytable_field(s, r), &x, sizeof x);
    return 0;
  }
  case KEY_BOOL: {
    int x;
    if (keytable_parse_bool(value, &x, msg, len) != 0)
      return -1;
    memcpy(keytable_field(s, r), &x, sizeof x);
    return 0;
  }
  }
  return -1;
}

void keytable_format_value(const scenario *s, const key_ref *r, char *buf, size_t len)
{
  const key_spec *k = r->k;
  const void *f = keytable_cfield(s, r);
  switch (k->type) {
  case KEY_STR:
    snprintf(buf, len, "%.*s", (int)k->size, (const char *)f);
    break;
  case KEY_CHOICE: {
    int x;
    memcpy(&x, f, sizeof x);
    if (keytable_choice_name(k, x, buf, len) == NULL)
      snprintf(buf, len, "%d", x);
    break;
  }
  case KEY_DOUBLE: {
    double x;
    memcpy(&x, f, sizeof x);
    keytable_format_double(x, buf, len);
    break;
  }
  case KEY_LONG:
  case KEY_INT:
  case KEY_SIZE:
    snprintf(buf, len, "%ld", keytable_load_integer(f, k->type));
    break;
  case KEY_U64: {
    uint64_t x;
    memcpy(&x, f, sizeof x);
    snprintf(buf, len, "%" PRIu64, x);
    break;
  }
  case KEY_BOOL: {
    int x;
    memcpy(&x, f, sizeof x);
    snprintf(buf, len, "%s", x ? "on" : "off");
    break;
  }
  }
}

static size_t keytable_type_size(key_type t)
{
  switch (t) {
  case KEY_DOUBLE:
    return sizeof(double);
  case KEY_LONG:
    return sizeof(long);
  case KEY_INT:
  case KEY_BOOL:
  case KEY_CHOICE:
    return sizeof(int);
  case KEY_SIZE:
    return sizeof(size_t);
  case KEY_U64:
    return sizeof(uint64_t);
  case KEY_STR:
    break;
  }
  return 0;
}

/* ---------- defaults ---------- */

void keytable_defaults(scenario *s)
{
  char msg[256];
  xbt_assert(keytable.n_keys > 0, "keytable_defaults before keytable_build");
  memset(s, 0, sizeof *s);
  registry_bind_sections(s);
  for (size_t i = 0; i < keytable.n_keys; i++) {
    const key_spec *k = keytable.keys[i].k;
    xbt_assert(k->type == KEY_STR || k->size == keytable_type_size(k->type),
               "scenario: key %s.%s: field size does not match its type", k->section, k->key);
    xbt_assert(keytable_key_assign(s, &keytable.keys[i], k->def, msg, sizeof msg) == 0,
               "scenario: default of %s.%s is invalid: %s", k->section, k->key, msg);
  }
}

/* ---------- validation of one key ---------- */

int keytable_validate_key(const scenario *s, const key_ref *r, char *msg, size_t len)
{
  const key_spec *k = r->k;
  char shown[40];
  const void *f = keytable_cfield(s, r);
  switch (k->type) {
  case KEY_STR:
    if (!memchr(f, '\0', k->size)) {
      keytable_msgf(msg, len, "value is not terminated within %zu characters", k->size);
      return -1;
    }
    if (k->empty_alias && strcmp(f, k->empty_alias) == 0)
      return 0;
    return keytable_check_string(k, f, msg, len);
  case KEY_CHOICE: {
    int x;
    memcpy(&x, f, sizeof x);
    if (keytable_choice_name(k, x, shown, sizeof shown) == NULL) {
      keytable_msgf(msg, len, "holds %d, which is none of its choices", x);
      return -1;
    }
    return 0;
  }
  case KEY_DOUBLE: {
    double x;
    memcpy(&x, f, sizeof x);
    keytable_format_double(x, shown, sizeof shown);
    if (!isfinite(x)) {
      keytable_msgf(msg, len, "must be a finite number, got %s", shown);
      return -1;
    }
    return keytable_range_check(k, x, shown, msg, len);
  }
  case KEY_LONG:
  case KEY_INT:
  case KEY_SIZE: {
    long x = keytable_load_integer(f, k->type);
    snprintf(shown, sizeof shown, "%ld", x);
    return keytable_range_check(k, (double)x, shown, msg, len);
  }
  case KEY_BOOL: {
    int x;
    memcpy(&x, f, sizeof x);
    if (x != 0 && x != 1) {
      keytable_msgf(msg, len, "must be on or off, got %d", x);
      return -1;
    }
    return 0;
  }
  case KEY_U64:
    return 0;
  }
  return 0;
}

/* ---------- old names ---------- */

size_t keytable_alias_count(void)
{
  return sizeof keytable_aliases / sizeof *keytable_aliases;
}

void keytable_alias_at(size_t i, const char **section, const char **key, const char **to_section, const char **to_key)
{
  xbt_assert(i < keytable_alias_count(), "keytable_alias_at: index %zu past the aliases", i);
  *section = keytable_aliases[i].section;
  *key = keytable_aliases[i].key;
  *to_section = keytable_aliases[i].to_section;
  *to_key = keytable_aliases[i].to_key;
}


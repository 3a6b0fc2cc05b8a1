/* scenario_read.c - reading a scenario: INI files and strings (through inih) and --set.
 *
 * inih is fed through our own line reader (ini_parse_stream), which
 *  - counts physical lines, so every message carries the right line number even though
 *    Debian's inih reports handler errors only through its return value;
 *  - strips leading blanks and inline comments itself, so the syntax is the same
 *    whatever INI_ALLOW_MULTILINE / INI_ALLOW_INLINE_COMMENTS inih was built with
 *    (an indented line is an ordinary line, never a continuation);
 *  - reports lines too long for inih's fixed buffer instead of letting inih split them,
 *    and gives syntax errors a message that says what was expected. */

#include "sim/scenario.h"
#include "sim/keytable.h"
#include "sim/scenario_int.h"

#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <xbt/asserts.h>

/* ---------- INI parsing ---------- */

/* What ini_parse_stream's reader and handler share for one file or string. */
typedef struct load_ctx {
  scenario *s;
  const char *name; /* path, or the name standing for it */
  FILE *fp;         /* the file, or NULL when reading text */
  const char *text; /* the rest of the string */
  int lineno;       /* physical line last handed to inih */
  int read_errno;   /* errno of a read error, 0 if none */
  int err_line;     /* line of the first error, 0 if none */
  char err[512];
  int seen[KEYS_MAX]; /* line on which each key was set, 0 if not set */
  char line[4096];
} load_ctx;

static void load_error(load_ctx *c, int line, const char *fmt, ...)
{
  va_list ap;
  int n;
  if (c->err_line)
    return;
  c->err_line = line;
  n = snprintf(c->err, sizeof c->err, "%s:%d: ", c->name, line);
  if (n < 0 || (size_t)n >= sizeof c->err)
    return;
  va_start(ap, fmt);
  vsnprintf(c->err + n, sizeof c->err - (size_t)n, fmt, ap);
  va_end(ap);
}

/* Reads one physical line into c->line without its '\n'. Returns its length, or -1 at
 * the end of the input; *cut is set if the line did not fit. */
static long read_physical(load_ctx *c, int *cut)
{
  size_t n = 0;
  int ch, any = 0;
  *cut = 0;
  for (;;) {
    if (c->fp) {
      ch = getc(c->fp);
      if (ch == EOF) {
        if (ferror(c->fp) && !c->read_errno)
          c->read_errno = errno ? errno : EIO;
        break;
      }
    } else {
      ch = (unsigned char)*c->text;
      if (ch == '\0')
        break;
      c->text++;
    }
    any = 1;
    if (ch == '\n')
      break;
    if (n + 1 < sizeof c->line)
      c->line[n++] = (char)ch;
    else
      *cut = 1;
  }
  c->line[n] = '\0';
  return any ? (long)n : -1;
}

static int is_blank(char ch)
{
  return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* inih's reader: hands inih one cleaned line at a time, or "\n" for a line that is a
 * comment, blank, or already reported as an error. */
static char *reader(char *str, int num, void *stream)
{
  load_ctx *c = stream;
  int cut;
  char *p, *e;
  if (num < 3 || read_physical(c, &cut) < 0)
    return NULL;
  c->lineno++;
  p = c->line;
  if (c->lineno == 1 && strncmp(p, "\xEF\xBB\xBF", 3) == 0)
    p += 3; /* UTF-8 byte order mark */
  while (is_blank(*p))
    p++;
  strcpy(str, "\n");
  if (*p == ';' || *p == '#' || *p == '\0')
    return str;
  /* Inline comments: ';' or '#' after a blank. inih's own rule (Debian's build) only
   * knows ';'; doing it here makes '#' work too and keeps both independent of how
   * inih was compiled. */
  for (e = p + 1; *e; e++)
    if ((*e == ';' || *e == '#') && is_blank(e[-1])) {
      *e = '\0';
      break;
    }
  e = p + strlen(p);
  while (e > p && is_blank(e[-1]))
    *--e = '\0';
  if (cut || e - p > num - 3) {
    load_error(c, c->lineno, "line is longer than %d characters, inih's limit", num - 3);
    return str;
  }
  if (*p == '[') {
    char *close = strchr(p, ']');
    char *name = p + 1, *tail;
    if (!close) {
      load_error(c, c->lineno, "section header '%.*s' has no closing ']'", QUOTE_MAX, p);
      return str;
    }
    *close = '\0';
    for (tail = close + 1; is_blank(*tail); tail++)
      ;
    if (*tail) {
      load_error(c, c->lineno, "unexpected '%.*s' after [%.*s]; a key goes on its own line",
                 QUOTE_MAX, tail, QUOTE_MAX, name);
      return str;
    }
    while (is_blank(*name))
      name++;
    for (e = close; e > name && is_blank(e[-1]);)
      *--e = '\0';
    if (!keytable_section_find(name)) {
      char msg[256];
      keytable_unknown_section_msg(name, msg, sizeof msg);
      load_error(c, c->lineno, "%s", msg);
    }
    snprintf(str, (size_t)num, "[%s]\n", name);
    return str;
  }
  if (!strpbrk(p, "=:")) {
    load_error(c, c->lineno, "expected 'key = value' or '[section]', got '%.*s'", QUOTE_MAX, p);
    return str;
  }
  snprintf(str, (size_t)num, "%s\n", p);
  return str;
}

/* A path value read from the scenario file `file`: after one of `prefixes` ("" or
 * "a:|b:"), a relative path is the file's folder's, "exp/data.csv" for "data.csv" in
 * exp/a.ini. Returns 1 with the joined value in out, or 0 when it stays as written
 * (absolute, not a path, or the file is in the current folder). */
static int from_folder(const char *file, const char *prefixes, const char *value, char *out, size_t len)
{
  const char *slash = strrchr(file, '/');
  if (slash == NULL)
    return 0;
  size_t pre = 0;
  for (const char *p = prefixes;;) {
    size_t m = strcspn(p, "|");
    if (strncmp(value, p, m) == 0 && value[m] != '\0') {
      pre = m;
      break;
    }
    if (!p[m])
      return 0;
    p += m + 1;
  }
  if (value[pre] == '/' || value[pre] == '\0')
    return 0;
  snprintf(out, len, "%.*s%.*s%s", (int)pre, value, (int)(slash - file + 1), file, value + pre);
  return 1;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
  load_ctx *c = user;
  const key_ref *r;
  size_t idx;
  char msg[400];
  if (c->err_line)
    return 1; /* only the first error is reported */
  if (!value) {
    load_error(c, c->lineno, "'%.*s' has no value", QUOTE_MAX, name);
    return 0;
  }
  if (!*section) {
    load_error(c, c->lineno, "'%.*s' comes before any [section]", QUOTE_MAX, name);
    return 0;
  }
  if (!keytable_section_find(section))
    return 1; /* reported on the section's header line */
  if (!*name) {
    load_error(c, c->lineno, "a key name is missing before '='");
    return 0;
  }
  r = keytable_key_find(section, name);
  if (!r) {
    keytable_unknown_key_msg(section, name, msg, sizeof msg);
    load_error(c, c->lineno, "%s", msg);
    return 0;
  }
  const key_spec *k = r->k;
  idx = keytable_index(r);
  if (c->seen[idx]) {
    if (strcmp(k->section, section) != 0 || strcmp(k->key, name) != 0)
      load_error(c, c->lineno, "%s.%s is an old name of %s.%s, which is set twice (first on line %d)", section, name,
                 k->section, k->key, c->seen[idx]);
    else
      load_error(c, c->lineno, "%s.%s is set twice (first on line %d)", k->section, k->key, c->seen[idx]);
    return 0;
  }
  if (*value && (r == keytable_key_file() || r == keytable_key_preset())) {
    const key_ref *other = r == keytable_key_file() ? keytable_key_preset() : keytable_key_file();
    size_t oi = keytable_index(other);
    if (c->seen[oi] && *(const char *)keytable_cfield(c->s, other)) {
      load_error(c, c->lineno, "%s.%s: %s.%s is also set (line %d); give a preset or a file, "
                 "not both", k->section, k->key, other->k->section, other->k->key, c->seen[oi]);
      return 0;
    }
  }
  char joined[SETTINGS_STR + 8];
  if (k->paths && from_folder(c->name, k->paths, value, joined, sizeof joined)) {
    if (strlen(joined) >= k->size) {
      load_error(c, c->lineno, "%s.%s: '%.*s' taken from the scenario's folder is longer than %zu characters",
                 k->section, k->key, QUOTE_MAX, joined, k->size - 1);
      return 0;
    }
    value = joined;
  }
  if (keytable_key_assign(c->s, r, value, msg, sizeof msg) != 0) {
    load_error(c, c->lineno, "%s.%s: %s", k->section, k->key, msg);
    return 0;
  }
  c->seen[idx] = c->lineno;
  return 1;
}

static int load_run(load_ctx *c, char *err, size_t errlen)
{
  int rc = ini_parse_stream(reader, c, handler, c);
  if (c->read_errno) {
    keytable_msgf(err, errlen, "%s: cannot read: %s", c->name, strerror(c->read_errno));
    return -1;
  }
  if (c->err_line && (rc <= 0 || c->err_line <= rc)) {
    keytable_msgf(err, errlen, "%s", c->err);
    return -1;
  }
  if (rc > 0) { /* inih found a problem our reader did not foresee */
    keytable_msgf(err, errlen, "%s:%d: syntax error", c->name, rc);
    return -1;
  }
  if (rc < 0) {
    keytable_msgf(err, errlen, "%s: cannot parse (inih error %d)", c->name, rc);
    return -1;
  }
  return 0;
}

static load_ctx *load_ctx_new(scenario *s, const char *name)
{
  scenario_keys_init();
  load_ctx *c = calloc(1, sizeof *c);
  xbt_assert(c, "scenario: out of memory");
  c->s = s;
  c->name = name ? name : "<string>";
  return c;
}

int scenario_load_stream(scenario *s, FILE *fp, const char *name, char *err, size_t errlen)
{
  load_ctx *c = load_ctx_new(s, name);
  int rc;
  c->fp = fp;
  rc = load_run(c, err, errlen);
  free(c);
  return rc;
}

int scenario_load_file(scenario *s, const char *path, char *err, size_t errlen)
{
  int rc;
  FILE *fp = fopen(path, "r");
  if (!fp) {
    keytable_msgf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  rc = scenario_load_stream(s, fp, path, err, errlen);
  fclose(fp);
  return rc;
}

int scenario_load_string(scenario *s, const char *text, const char *name, char *err,
                         size_t errlen)
{
  load_ctx *c = load_ctx_new(s, name);
  int rc;
  c->text = text;
  rc = load_run(c, err, errlen);
  free(c);
  return rc;
}

/* ---------- --set ---------- */

static void trim(char *p)
{
  char *start = p, *e;
  while (is_blank(*start) || *start == '\n')
    start++;
  memmove(p, start, strlen(start) + 1);
  e = p + strlen(p);
  while (e > p && (is_blank(e[-1]) || e[-1] == '\n'))
    *--e = '\0';
}

int scenario_set(scenario *s, const char *assignment, char *err, size_t errlen)
{
  char buf[SETTINGS_STR + 128], whole[SETTINGS_STR + 128], msg[400], q[QUOTE_MAX + 8];
  char *eq, *dot, *section, *key, *value;
  const key_ref *k;
  scenario_keys_init();
  /* Messages quote the assignment, so it is taken without the blanks and line breaks
   * around it (trim drops those anyway), and a newline inside it, which would split the
   * one-line message, is refused: no value needs one, and none can come from INI. */
  size_t lead = strspn(assignment, " \t\r\n\f\v"), end = strlen(assignment);
  while (end > lead && strchr(" \t\r\n\f\v", assignment[end - 1]))
    end--;
  size_t brk = lead + strcspn(assignment + lead, "\n");
  if (brk < end) {
    keytable_msgf(err, errlen, "--set %.*s...: a newline cannot be part of SECTION.KEY=VALUE",
         (int)(brk - lead < QUOTE_MAX ? brk - lead : QUOTE_MAX), assignment + lead);
    return -1;
  }
  if (end - lead >= sizeof buf) {
    keytable_msgf(err, errlen, "--set %s: too long", keytable_quote(assignment + lead, q, sizeof q));
    return -1;
  }
  memcpy(whole, assignment + lead, end - lead);
  whole[end - lead] = '\0';
  assignment = whole;
  strcpy(buf, assignment);
  eq = strchr(buf, '=');
  if (!eq) {
    keytable_msgf(err, errlen, "--set %.*s: expected SECTION.KEY=VALUE, e.g. downpour.lr=0.1", QUOTE_MAX,
         assignment);
    return -1;
  }
  *eq = '\0';
  value = eq + 1;
  dot = strchr(buf, '.');
  if (!dot) {
    keytable_msgf(err, errlen, "--set %.*s: expected SECTION.KEY=VALUE, got no '.' before '='",
         QUOTE_MAX, assignment);
    return -1;
  }
  *dot = '\0';
  section = buf;
  key = dot + 1;
  trim(section);
  trim(key);
  trim(value);
  if (!*section || !*key) {
    keytable_msgf(err, errlen, "--set %.*s: expected SECTION.KEY=VALUE, the %s is empty", QUOTE_MAX,
         assignment, *section ? "key" : "section");
    return -1;
  }
  if (!keytable_section_find(section)) {
    keytable_unknown_section_msg(section, msg, sizeof msg);
    keytable_msgf(err, errlen, "--set %.*s: %s", QUOTE_MAX, assignment, msg);
    return -1;
  }
  k = keytable_key_find(section, key);
  if (!k) {
    keytable_unknown_key_msg(section, key, msg, sizeof msg);
    keytable_msgf(err, errlen, "--set %.*s: %s", QUOTE_MAX, assignment, msg);
    return -1;
  }
  if (keytable_key_assign(s, k, value, msg, sizeof msg) != 0) {
    keytable_msgf(err, errlen, "--set %.*s: %s", QUOTE_MAX, assignment, msg);
    return -1;
  }
  return 0;
}

/* The key an assignment names, and its value (trimmed, an empty alias as ""), into val;
 * NULL when the assignment is malformed (scenario_set says how). */
static const key_ref *assigned_key(const char *assignment, char *val, size_t len)
{
  char buf[SETTINGS_STR + 128];
  if (strlen(assignment) >= sizeof buf)
    return NULL;
  strcpy(buf, assignment);
  char *eq = strchr(buf, '='), *dot = strchr(buf, '.');
  if (!eq || !dot || dot > eq)
    return NULL;
  *eq = *dot = '\0';
  char *value = eq + 1, *key = dot + 1;
  trim(buf);
  trim(key);
  trim(value);
  const key_ref *r = keytable_key_find(buf, key);
  if (r && r->k->empty_alias && strcmp(value, r->k->empty_alias) == 0)
    value[0] = '\0';
  snprintf(val, len, "%s", value);
  return r;
}

int scenario_sets_conflict(char *const *sets, int n, char *err, size_t errlen)
{
  char v[SETTINGS_STR + 128], w[SETTINGS_STR + 128];
  scenario_keys_init();
  for (int i = 0; i < n; i++) {
    const key_ref *r = assigned_key(sets[i], v, sizeof v);
    if (!r || !v[0] || (r != keytable_key_file() && r != keytable_key_preset()))
      continue;
    const key_ref *other = r == keytable_key_file() ? keytable_key_preset() : keytable_key_file();
    for (int j = 0; j < i; j++)
      if (assigned_key(sets[j], w, sizeof w) == other && w[0]) {
        keytable_msgf(err, errlen, "--set %.*s: %s.%s: %s.%s is also set (--set %.*s); give a preset or a file, not both",
                 QUOTE_MAX, sets[i], r->k->section, r->k->key, other->k->section, other->k->key, QUOTE_MAX, sets[j]);
        return -1;
      }
  }
  return 0;
}

int scenario_key_source(const char *path, char *const *sets, int nsets, const char *name, char *out, size_t len)
{
  char v[SETTINGS_STR + 128], section[64];
  scenario_keys_init();
  size_t sl = strcspn(name, ".");
  if (name[sl] != '.' || sl >= sizeof section)
    return -1;
  snprintf(section, sizeof section, "%.*s", (int)sl, name);
  const key_ref *r = keytable_key_find(section, name + sl + 1);
  if (r == NULL)
    return -1;
  for (int j = nsets - 1; j >= 0; j--)
    if (assigned_key(sets[j], v, sizeof v) == r) {
      keytable_msgf(out, len, "--set %.*s", QUOTE_MAX, sets[j]);
      return 0;
    }
  scenario scratch;
  scenario_defaults(&scratch);
  load_ctx *c = load_ctx_new(&scratch, path ? path : "<default>");
  char err[600];
  c->fp = path ? fopen(path, "r") : NULL;
  c->text = path ? NULL : scenario_default_ini;
  int line = (!path || c->fp) && load_run(c, err, sizeof err) == 0 ? c->seen[keytable_index(r)] : 0;
  if (c->fp)
    fclose(c->fp);
  free(c);
  if (line > 0 && path)
    keytable_msgf(out, len, "%s:%d", path, line);
  else if (line > 0)
    keytable_msgf(out, len, "the built-in scenario (dtsim run --print-default), line %d", line);
  else
    keytable_msgf(out, len, "%s, which leaves %s.%s at its default", path ? path : "the built-in scenario", r->k->section,
             r->k->key);
  return 0;
}

static int word_is_option(const char *a) { return a[0] == '-' && a[1] == '-' && a[2] != '\0'; }

int scenario_split_assignment(int argc, char **argv, int i, char *err, size_t len)
{
  const char *a = argv[i + 1], *eq = strchr(a, '=');
  int split = i + 2 < argc && !word_is_option(argv[i + 2]) &&
              ((eq == NULL && argv[i + 2][0] == '=') || (eq != NULL && eq[1] == '\0'));
  /* `... = 4`: the value is the word after the lone '=' */
  const char *value = split && strcmp(argv[i + 2], "=") == 0 && i + 3 < argc && !word_is_option(argv[i + 3]) ? argv[i + 3] : NULL;
  const char *form = strcmp(argv[i], "--vary") == 0 ? "SECTION.KEY=V1,V2,..." : "SECTION.KEY=VALUE";
  if (split)
    snprintf(err, len, "%s %s %s%s%s: the shell split the assignment at its blanks; write it as one word, "
             "%s %s, without blanks around '=' (or quote it)", argv[i], a, argv[i + 2], value ? " " : "",
             value ? value : "", argv[i], form);
  return split;
}

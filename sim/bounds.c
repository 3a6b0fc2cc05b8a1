/* bounds.c - `dtsim run --assert 'NAME OP RHS'`: a regression check for CI. Each bound names
 * a figure of summary.json by its dotted path and holds it to a number or to a multiple of
 * the same figure in the --expect summary.json (performance.step_time_s<=1.02*expected).
 * Expressions and names are checked before the run, so a typo costs no simulation; the
 * figures after it, each broken bound one line saying the figure, the bound and the value. */
#include "sim/bounds.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xbt/sysdep.h>

#define EXPR_MAX 200

typedef enum { OP_LE, OP_GE, OP_LT, OP_GT, OP_EQ } bound_op;

static const char *const op_text[] = {"<=", ">=", "<", ">", "=="};

typedef struct bound {
  char expr[EXPR_MAX + 1]; /* as given, for messages */
  char name[EXPR_MAX + 1];
  bound_op op;
  double c;     /* the bound, or the factor of `expected` */
  int relative; /* the bound is c x the expected figure */
} bound;

struct bounds {
  bound *v;
  size_t n;
};

bounds *bounds_create(void) { return xbt_malloc0(sizeof(bounds)); }

void bounds_free(bounds *b)
{
  if (b == NULL)
    return;
  xbt_free(b->v);
  xbt_free(b);
}

size_t bounds_count(const bounds *b) { return b ? b->n : 0; }

int bounds_use_expected(const bounds *b)
{
  for (size_t i = 0; b && i < b->n; i++)
    if (b->v[i].relative)
      return 1;
  return 0;
}

static const char *skip_blanks(const char *p) { return p + strspn(p, " \t"); }

/* The right-hand side: a number, `expected`, or a number times `expected` (either order). */
static int parse_rhs(const char *p, bound *x)
{
  char *end;
  p = skip_blanks(p);
  if (strncmp(p, "expected", 8) == 0) {
    x->relative = 1;
    x->c = 1;
    p = skip_blanks(p + 8);
    if (*p == '\0')
      return 0;
    if (*p != '*')
      return -1;
    x->c = strtod(skip_blanks(p + 1), &end);
    return end == skip_blanks(p + 1) || *skip_blanks(end) || !isfinite(x->c) ? -1 : 0;
  }
  x->c = strtod(p, &end);
  if (end == p || !isfinite(x->c))
    return -1;
  p = skip_blanks(end);
  if (*p == '*') {
    p = skip_blanks(p + 1);
    if (strncmp(p, "expected", 8) != 0)
      return -1;
    x->relative = 1;
    p = skip_blanks(p + 8);
  }
  return *p ? -1 : 0;
}

/* A figure's name: words of letters, digits, '_' and '-' joined by single dots. */
static int name_ok(const char *s)
{
  size_t n = strlen(s);
  return n > 0 && s[0] != '.' && s[n - 1] != '.' && strstr(s, "..") == NULL &&
         strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") == n;
}

int bounds_add(bounds *b, const char *expr, char *err, size_t len)
{
  bound x = {.op = OP_EQ};
  if (strlen(expr) > EXPR_MAX) {
    snprintf(err, len, "--assert '%.40s...': longer than %d characters", expr, EXPR_MAX);
    return -1;
  }
  snprintf(x.expr, sizeof x.expr, "%s", expr);
  size_t at = strcspn(expr, "<>=!");
  const char *o = expr + at, *rhs = NULL;
  for (int k = 0; k < 5 && rhs == NULL; k++)
    if (strncmp(o, op_text[k], strlen(op_text[k])) == 0) {
      x.op = (bound_op)k;
      rhs = o + strlen(op_text[k]);
    }
  const char *start = skip_blanks(expr);
  size_t nl = (size_t)(o - start);
  while (nl > 0 && (start[nl - 1] == ' ' || start[nl - 1] == '\t'))
    nl--;
  memcpy(x.name, start, nl);
  x.name[nl] = '\0';
  if (rhs == NULL || *o == '\0' || (*rhs == '=' && x.op != OP_EQ) || !name_ok(x.name) || parse_rhs(rhs, &x) != 0) {
    snprintf(err, len, "--assert '%s': expected NAME OP BOUND, OP one of <= >= < > ==, BOUND a number, expected, or "
             "a number times expected (e.g. 'final_accuracy>=0.86', 'performance.step_time_s<=1.02*expected')", expr);
    return -1;
  }
  b->v = xbt_realloc(b->v, (b->n + 1) * sizeof *b->v);
  b->v[b->n++] = x;
  return 0;
}

static int listed(const char *s, size_t n, const char *const *list)
{
  for (; *list; list++)
    if (strlen(*list) == n && strncmp(*list, s, n) == 0)
      return 1;
  return 0;
}

/* Whether a run of `algorithm` writes a number under name in summary.json (output.c's
 * summary_json and performance_json; the algorithm's own block, named after it, holds what
 * the algorithm reports; breakdown's ROLE is any role; faults only with [faults]). */
static int name_possible(const char *name, const char *algorithm)
{
  static const char *const top[] = {"seed", "sim_time_s", "steps", "examples", "final_loss", "final_accuracy",
                                    "time_to_target_s", "hosts_used", NULL};
  static const char *const staleness[] = {"mean", "p50", "p99", "max", NULL};
  static const char *const comm[] = {"bytes_total", NULL};
  static const char *const perf[] = {"step_time_s", "examples_per_s", "tflops_per_device", "peak_tflops_per_device",
                                     "mfu", "compute_pct", "comm_pct", "exposed_comm_pct", "idle_pct", NULL};
  static const char *const breakdown[] = {"actors", "compute_s", "comm_s", "exposed_comm_s", "compute_pct",
                                          "comm_pct", "exposed_comm_pct", NULL};
  static const char *const faults[] = {"wait_timeout_s", "workers_started", "workers_alive_at_end", "checkpoints",
                                       "shard_restarts", "lost_updates", "undelivered_pushes", "missed_fetches",
                                       "reissued_portions", "stopped_at_s", NULL};
  const char *dot = strchr(name, '.');
  if (dot == NULL)
    return listed(name, strlen(name), top);
  size_t bl = (size_t)(dot - name);
  const char *m = dot + 1, *dot2 = strchr(m, '.');
  if (bl == strlen(algorithm) && strncmp(name, algorithm, bl) == 0)
    return 1;
  if (bl == 9 && strncmp(name, "breakdown", bl) == 0)
    return dot2 && !strchr(dot2 + 1, '.') && listed(dot2 + 1, strlen(dot2 + 1), breakdown);
  if (dot2)
    return 0;
  return (bl == 9 && strncmp(name, "staleness", bl) == 0 && listed(m, strlen(m), staleness)) ||
         (bl == 4 && strncmp(name, "comm", bl) == 0 && listed(m, strlen(m), comm)) ||
         (bl == 11 && strncmp(name, "performance", bl) == 0 && listed(m, strlen(m), perf)) ||
         (bl == 6 && strncmp(name, "faults", bl) == 0 && listed(m, strlen(m), faults));
}

/* The value under a dotted name, or NULL. */
static const json_t *figure(const json_t *root, const char *name)
{
  char word[EXPR_MAX + 1];
  const json_t *j = root;
  for (const char *p = name; j && *p; p += *p == '.') {
    size_t n = strcspn(p, ".");
    snprintf(word, sizeof word, "%.*s", (int)n, p);
    j = json_is_object(j) ? json_object_get(j, word) : NULL;
    p += n;
  }
  return j;
}

int bounds_check(const bounds *b, const char *algorithm, const json_t *expected, char *err, size_t len)
{
  for (size_t i = 0; b && i < b->n; i++) {
    const bound *x = &b->v[i];
    if (!name_possible(x->name, algorithm)) {
      snprintf(err, len, "--assert '%s': %s is not a figure a %s run's summary.json has (a top-level number such as "
               "final_accuracy, or staleness., comm., performance., breakdown.ROLE., faults. or %s.'s members)",
               x->expr, x->name, algorithm, algorithm);
      return -1;
    }
    if (x->relative && expected == NULL) {
      snprintf(err, len, "--assert '%s': expected needs --expect FILE, a saved summary.json", x->expr);
      return -1;
    }
    /* the scenarios agree (main checks it), so the saved file has every figure the run will */
    const json_t *saved = expected ? figure(expected, x->name) : NULL;
    if (expected && (saved == NULL || (x->relative && !json_is_number(saved)))) {
      snprintf(err, len, "--assert '%s': the --expect file has %s at %s", x->expr, saved ? "no number" : "nothing",
               x->name);
      return -1;
    }
  }
  return 0;
}

static int holds(double v, bound_op op, double limit)
{
  switch (op) {
  case OP_LE:
    return v <= limit;
  case OP_GE:
    return v >= limit;
  case OP_LT:
    return v < limit;
  case OP_GT:
    return v > limit;
  case OP_EQ:
    return v == limit;
  }
  return 0;
}

/* a and b with 6 significant digits, or all 17 when those would look the same */
static void two_numbers(double a, double b, char *sa, char *sb, size_t len)
{
  snprintf(sa, len, "%.6g", a);
  snprintf(sb, len, "%.6g", b);
  if (strcmp(sa, sb) == 0 && a != b) {
    snprintf(sa, len, "%.17g", a);
    snprintf(sb, len, "%.17g", b);
  }
}

size_t bounds_verdict(const bounds *b, const char *dir, const json_t *expected, FILE *err_out)
{
  char path[4200];
  snprintf(path, sizeof path, "%s/summary.json", dir);
  json_t *got = json_load_file(path, 0, NULL);
  size_t broken = 0;
  for (size_t i = 0; b && i < b->n; i++) {
    const bound *x = &b->v[i];
    const json_t *v = got ? figure(got, x->name) : NULL;
    double want = x->relative ? x->c * json_number_value(figure(expected, x->name)) : x->c;
    char sv[40], sb[40], how[120] = "";
    if (x->relative)
      snprintf(how, sizeof how, " (%.6g x expected %.6g)", x->c, json_number_value(figure(expected, x->name)));
    if (!json_is_number(v)) {
      fprintf(err_out, "dtsim: --assert '%s' failed: %s is %s in %s, not a number to compare with %s %.17g%s\n",
              x->expr, x->name, v == NULL ? "absent" : json_is_null(v) ? "null" : "not a number", path,
              op_text[x->op], want, how);
      broken++;
    } else if (!holds(json_number_value(v), x->op, want)) {
      two_numbers(json_number_value(v), want, sv, sb, sizeof sv);
      fprintf(err_out, "dtsim: --assert '%s' failed: %s = %s, bound %s %s%s\n", x->expr, x->name, sv,
              op_text[x->op], sb, how);
      broken++;
    }
  }
  json_decref(got);
  return broken;
}

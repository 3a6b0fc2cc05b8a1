/* sweep_grid.c - a sweep's grid (sweep_grid.h): the --vary lists parsed, the points of
 * their product in order, their names and their scenarios. */
#include "sim/lab/sweep_grid.h"

#include <stdio.h>
#include <string.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#define ERRLEN 1400

static char *trimmed(const char *s, size_t n)
{
  while (n > 0 && (*s == ' ' || *s == '\t')) {
    s++;
    n--;
  }
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
    n--;
  char *t = xbt_malloc(n + 1);
  memcpy(t, s, n);
  t[n] = '\0';
  return t;
}

void sweep_vary_clear(sweep_vary *v)
{
  for (size_t i = 0; i < v->n; i++)
    xbt_free(v->values[i]);
  xbt_free(v->values);
  xbt_free(v->key);
}

int sweep_vary_parse(const char *arg, sweep_vary *v, char *err, size_t len)
{
  *v = (sweep_vary){.arg = arg};
  const char *eq = strchr(arg, '=');
  if (eq == NULL || memchr(arg, '.', (size_t)(eq - arg)) == NULL) {
    snprintf(err, len, "--vary %s: expected SECTION.KEY=V1,V2,..., e.g. sgd.lr=0.01,0.1", arg);
    return -1;
  }
  v->key = trimmed(arg, (size_t)(eq - arg));
  const char *list = eq + 1;
  char sep = strchr(list, ';') ? ';' : ',';
  size_t cap = 1;
  for (const char *c = list; *c; c++)
    cap += *c == sep;
  v->values = xbt_malloc0(cap * sizeof(char *));
  for (const char *p = list;;) {
    size_t n = strcspn(p, sep == ';' ? ";" : ",");
    char *val = trimmed(p, n);
    if (val[0] == '\0') {
      xbt_free(val);
      snprintf(err, len, "--vary %s: %s", arg,
               list[strspn(list, " \t")] == '\0' ? "no values after '='" : "an empty value in the list");
      return -1;
    }
    for (size_t i = 0; i < v->n; i++)
      if (strcmp(v->values[i], val) == 0) {
        snprintf(err, len, "--vary %s: value '%s' is listed twice", arg, val);
        xbt_free(val);
        return -1;
      }
    v->values[v->n++] = val;
    if (p[n] == '\0')
      break;
    p += n + 1;
  }
  return 0;
}

size_t sweep_grid_size(const sweep_grid *g, size_t max)
{
  size_t n = 1;
  for (size_t k = 0; k < g->nv; k++) {
    if (n > max / g->vs[k].n)
      return 0;
    n *= g->vs[k].n;
  }
  return n;
}

void sweep_grid_pick(const sweep_grid *g, size_t i, size_t *pick)
{
  for (size_t k = g->nv; k-- > 0;) {
    pick[k] = i % g->vs[k].n;
    i /= g->vs[k].n;
  }
}

/* A varied key's name in a point's folder name: without its section, unless another
 * varied key has the same name. */
static const char *short_name(const sweep_grid *g, size_t k)
{
  const char *dot = strchr(g->vs[k].key, '.');
  const char *name = dot ? dot + 1 : g->vs[k].key;
  for (size_t j = 0; j < g->nv; j++) {
    const char *d = strchr(g->vs[j].key, '.');
    if (j != k && strcmp(d ? d + 1 : g->vs[j].key, name) == 0)
      return g->vs[k].key;
  }
  return name;
}

void sweep_grid_name(const sweep_grid *g, size_t index, size_t count, const size_t *pick, char *out, size_t len)
{
  int width = 3;
  for (size_t c = count; c >= 1000; c /= 10)
    width++;
  size_t o = (size_t)snprintf(out, len, "%0*zu", width, index);
  for (size_t k = 0; k < g->nv && o + 1 < len; k++) {
    char val[48];
    const char *v = g->vs[k].values[pick[k]];
    size_t i = 0;
    for (; v[i] && i + 1 < sizeof(val); i++)
      val[i] = (strchr("._+-", v[i]) || (v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'z') ||
                (v[i] >= 'A' && v[i] <= 'Z'))
                   ? v[i]
                   : '_';
    val[i] = '\0';
    o += (size_t)snprintf(out + o, len - o, "-%s=%s", short_name(g, k), val);
  }
}

/* scenario_set's message without its "--set ASSIGNMENT: " prefix (we name the --vary). */
static const char *set_problem(const char *msg, const char *assignment)
{
  size_t n = strlen(assignment);
  if (strncmp(msg, "--set ", 6) == 0 && strncmp(msg + 6, assignment, n) == 0 && strncmp(msg + 6 + n, ": ", 2) == 0)
    return msg + 8 + n;
  return msg;
}

int sweep_grid_set(scenario *s, const char *key, const char *value, char *err, size_t len)
{
  char assign[SCENARIO_STR + 200], msg[ERRLEN];
  snprintf(assign, sizeof(assign), "%s=%s", key, value);
  if (scenario_set(s, assign, msg, sizeof(msg)) == 0)
    return 0;
  snprintf(err, len, "%s", set_problem(msg, assign));
  return -1;
}

int sweep_grid_base(const sweep_grid *g, scenario *s, char *err, size_t len)
{
  scenario_defaults(s);
  if (g->scenario ? scenario_load_file(s, g->scenario, err, len)
                  : scenario_load_string(s, scenario_default_ini, "<default>", err, len))
    return -1;
  for (size_t i = 0; i < g->nsets; i++)
    if (scenario_set(s, g->sets[i], err, len) != 0)
      return -1;
  if (g->seed && sweep_grid_set(s, "run.seed", g->seed, err, len) != 0) {
    snprintf(err, len, "--seed: '%s' is not a valid seed (a non-negative integer)", g->seed);
    return -1;
  }
  return 0;
}

void sweep_grid_point(const sweep_grid *g, const scenario *base, const size_t *pick, scenario *s)
{
  char err[ERRLEN];
  *s = *base;
  for (size_t k = 0; k < g->nv; k++)
    xbt_assert(sweep_grid_set(s, g->vs[k].key, g->vs[k].values[pick[k]], err, sizeof(err)) == 0,
               "checked before: %s", err);
}

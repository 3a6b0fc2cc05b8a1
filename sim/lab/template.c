/* template.c - filling a reproduction's Markdown template (template.h) from its values. */
#include "sim/lab/template.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xbt/asserts.h>

/* The templates compiled in (templates.c, made by embed_templates.cmake). */
typedef struct template_entry {
  const char *name;
  const char *text;
} template_entry;
extern const template_entry template_table[];
extern const size_t template_count;

const char *template_text(const char *name)
{
  for (size_t i = 0; i < template_count; i++)
    if (strcmp(template_table[i].name, name) == 0)
      return template_table[i].text;
  return NULL;
}

void template_set(json_t *values, const char *key, const char *fmt, ...)
{
  char *text = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&text, &n);
  xbt_assert(f, "open_memstream failed");
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fclose(f);
  json_object_set_new(values, key, json_string(text));
  free(text);
}

void template_set_stream(json_t *values, const char *key, FILE *f, char **text)
{
  fclose(f);
  size_t n = *text ? strlen(*text) : 0;
  if (n > 0 && (*text)[n - 1] == '\n')
    (*text)[n - 1] = '\0';
  json_object_set_new(values, key, json_string(*text ? *text : ""));
  free(*text);
  *text = NULL;
}

void template_list(json_t *values, const char *key)
{
  json_object_set_new(values, key, json_array());
}

json_t *template_add(json_t *values, const char *key)
{
  json_t *list = json_object_get(values, key);
  if (list == NULL) {
    list = json_array();
    json_object_set_new(values, key, list);
  }
  json_t *item = json_object();
  json_array_append_new(list, item);
  return item;
}

/* One tag {{...}} at s: its kind ('#', '^', '/' or 0), its name and where it ends. */
typedef struct tag {
  char kind;
  char name[64];
  const char *end; /* past the closing braces */
} tag;

static int read_tag(const char *s, const char *stop, tag *t, char *err, size_t len)
{
  const char *close = strstr(s + 2, "}}");
  if (close == NULL || close > stop) {
    snprintf(err, len, "template: '{{' without '}}' at '%.20s'", s);
    return -1;
  }
  const char *n = s + 2;
  t->kind = (*n == '#' || *n == '^' || *n == '/') ? *n++ : 0;
  size_t nl = (size_t)(close - n);
  if (nl == 0 || nl >= sizeof t->name) {
    snprintf(err, len, "template: an empty or overlong name at '%.20s'", s);
    return -1;
  }
  memcpy(t->name, n, nl);
  t->name[nl] = '\0';
  t->end = close + 2;
  return 0;
}

/* The {{/name}} closing the section whose body starts at s, nested ones of the same name
 * skipped; NULL if there is none. *after is past it. */
static const char *section_end(const char *s, const char *stop, const char *name, const char **after)
{
  int depth = 0;
  for (const char *p = strstr(s, "{{"); p && p < stop; p = strstr(p + 2, "{{")) {
    tag t;
    char ignore[8];
    if (read_tag(p, stop, &t, ignore, sizeof ignore) != 0 || strcmp(t.name, name) != 0)
      continue;
    if (t.kind == '#' || t.kind == '^')
      depth++;
    else if (t.kind == '/' && depth-- == 0) {
      *after = t.end;
      return p;
    }
  }
  return NULL;
}

static int truthy(const json_t *v)
{
  return json_is_true(v) || (json_is_string(v) && json_string_length(v) > 0) || (json_is_array(v) && json_array_size(v) > 0);
}

static int fill(FILE *out, const char *s, const char *stop, const json_t *values, char *err, size_t len);

/* A list section: its body once per item, each an object whose values hide the outer
 * ones of the same name. */
static int fill_items(FILE *out, const char *s, const char *stop, const json_t *items, const json_t *values, char *err,
                      size_t len)
{
  size_t i;
  const json_t *item;
  json_array_foreach(items, i, item) {
    if (!json_is_object(item)) {
      snprintf(err, len, "template: item %zu of a list is not an object", i);
      return -1;
    }
    json_t *scope = json_copy((json_t *)values);
    json_object_update(scope, (json_t *)item);
    int rc = fill(out, s, stop, scope, err, len);
    json_decref(scope);
    if (rc != 0)
      return -1;
  }
  return 0;
}

static int fill(FILE *out, const char *s, const char *stop, const json_t *values, char *err, size_t len)
{
  while (s < stop) {
    const char *open = strstr(s, "{{");
    if (open == NULL || open >= stop) {
      fwrite(s, 1, (size_t)(stop - s), out);
      return 0;
    }
    fwrite(s, 1, (size_t)(open - s), out);
    tag t;
    if (read_tag(open, stop, &t, err, len) != 0)
      return -1;
    const json_t *v = json_object_get(values, t.name);
    if (v == NULL || !(json_is_string(v) || json_is_boolean(v) || json_is_array(v))) {
      snprintf(err, len, "template: '%s' has no value (a string, a boolean or a list)", t.name);
      return -1;
    }
    if (t.kind == '/') {
      snprintf(err, len, "template: '{{/%s}}' closes no section", t.name);
      return -1;
    }
    if (t.kind == 0) {
      if (!json_is_string(v)) {
        snprintf(err, len, "template: '%s' is a boolean or a list: use it as a section", t.name);
        return -1;
      }
      fputs(json_string_value(v), out);
      s = t.end;
      continue;
    }
    const char *after, *body_end = section_end(t.end, stop, t.name, &after);
    if (body_end == NULL) {
      snprintf(err, len, "template: '{{%c%s}}' is never closed", t.kind, t.name);
      return -1;
    }
    if (t.kind == '#' && json_is_array(v)) {
      if (fill_items(out, t.end, body_end, v, values, err, len) != 0)
        return -1;
    } else if ((t.kind == '#') == truthy(v) && fill(out, t.end, body_end, values, err, len) != 0)
      return -1;
    s = after;
  }
  return 0;
}

char *template_fill(const char *tmpl, const json_t *values, char *err, size_t len)
{
  char *text = NULL;
  size_t n = 0;
  FILE *out = open_memstream(&text, &n);
  if (out == NULL) {
    snprintf(err, len, "template: out of memory");
    return NULL;
  }
  int rc = fill(out, tmpl, tmpl + strlen(tmpl), values, err, len);
  fclose(out);
  if (rc != 0) {
    free(text);
    return NULL;
  }
  return text;
}

char *template_render(const char *name, const json_t *values, char *err, size_t len)
{
  const char *tmpl = template_text(name);
  if (tmpl == NULL) {
    snprintf(err, len, "template: no template '%s' compiled in", name);
    return NULL;
  }
  return template_fill(tmpl, values, err, len);
}

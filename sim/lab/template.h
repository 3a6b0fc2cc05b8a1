#ifndef SIM_LAB_TEMPLATE_H
#define SIM_LAB_TEMPLATE_H
/* template.h - a reproduction's README is a Markdown template in sim/lab/templates/,
 * compiled into the binary, whose gaps the reproduction fills with what it computed from
 * its CSV. The prose lives in the template; the C code computes numbers and tables.
 *
 * Syntax (a small subset of Mustache):
 *   {{name}}              the value of name, a string, as it is;
 *   {{#name}}...{{/name}} the text between, when name is true or a non-empty string;
 *   {{^name}}...{{/name}} the text between, when name is false or an empty string;
 *   {{#list}}...{{/list}} the text between once per item of list (an array of objects),
 *                         the item's values hiding the outer ones; {{^list}} when it is empty.
 * Every name a template uses must be in the values: a missing one is an error, so a typo
 * in a template fails its reproduction's test instead of printing nothing. */

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* values[key] = the printf-formatted string (format checked by the compiler). */
void template_set(json_t *values, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* values[key] = what f (open_memstream's over *text) wrote, less one final newline (a table
 * set so sits on its own lines in the template); f is closed and *text freed. */
void template_set_stream(json_t *values, const char *key, FILE *f, char **text);

/* values[key] = an empty list, for a list section that may get no item. */
void template_list(json_t *values, const char *key);
/* A new item (an empty object) appended to the list values[key], made if need be. */
json_t *template_add(json_t *values, const char *key);

/* The template compiled in as NAME (sim/lab/templates/NAME.md), or NULL. */
const char *template_text(const char *name);

/* tmpl with its gaps filled from values (an object of strings, booleans and lists): a malloc'ed
 * string, or NULL with one line in err. */
char *template_fill(const char *tmpl, const json_t *values, char *err, size_t len);

/* template_text(name) filled; a missing template is an error too. */
char *template_render(const char *name, const json_t *values, char *err, size_t len);

#endif

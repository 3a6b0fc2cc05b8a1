#ifndef SIM_KEYTABLE_H
#define SIM_KEYTABLE_H
/* keytable.h - the key table behind scenario.h: every key of every section in one
 * table, built once from the rows it is given, and the generic machinery over it. */

#include <stddef.h>

#include "algorithms/keys.h"
#include "algorithms/settings.h"

typedef struct section_spec {
  const char *name;
  const char *doc;
} section_spec;

/* Every key, in the order of the key reference and of summary.json's "scenario" block:
 * the head sections', each registered algorithm's (its own section), the tail's. `alg` is
 * the registry position of the algorithm whose parameter struct holds the value, or -1
 * for the scenario's own sections. */
typedef struct key_ref {
  const key_spec *k;
  int alg;
} key_ref;

/* Rows a caller owns and hands to keytable_build: its sections, then its keys. */
typedef struct key_rows {
  const section_spec *sections;
  size_t n_sections;
  const key_spec *keys;
  size_t n_keys;
} key_rows;

#define KEYS_MAX 512
#define QUOTE_MAX KEY_QUOTE_MAX

/* Builds the table once, from head's rows, each registered algorithm's section and keys,
 * then tail's; later calls do nothing. The rows must outlive the process (static tables). */
void keytable_build(const key_rows *head, const key_rows *tail);

/* The table's keys and their count in *n (n may be NULL); the sections likewise. Abort
 * if keytable_build has not run. */
const key_ref *keytable_keys(size_t *n);
const section_spec *keytable_sections(size_t *n);
/* r's position in keytable_keys. */
size_t keytable_index(const key_ref *r);

/* vsnprintf into msg of len bytes; a NULL msg or len 0 is a no-op. */
void keytable_msgf(char *msg, size_t len, const char *fmt, ...);
/* 'v' for a message, cut past QUOTE_MAX characters (key_quote); returns buf. */
const char *keytable_quote(const char *v, char *buf, size_t len);
/* Where key r's value lives in s: the scenario's own field or its algorithm section's. */
void *keytable_field(scenario *s, const key_ref *r);
const void *keytable_cfield(const scenario *s, const key_ref *r);
/* x as the shortest of %.15g, %.16g, %.17g that reads back as x. */
void keytable_format_double(double x, char *buf, size_t len);
/* The section of that name, or NULL. */
const section_spec *keytable_section_find(const char *name);
/* The key section.key names, itself or through an old name, or NULL. */
const key_ref *keytable_key_find(const char *section, const char *key);
/* platform.preset and platform.file, which exclude each other. */
const key_ref *keytable_key_preset(void);
const key_ref *keytable_key_file(void);
/* The one-line message for an unknown section or key, with a did-you-mean when one is near. */
void keytable_unknown_section_msg(const char *section, char *msg, size_t len);
void keytable_unknown_key_msg(const char *section, const char *key, char *msg, size_t len);
/* k's accepted names, comma-separated ("" when it has no list); code: each in backticks. */
void keytable_names_list(const key_spec *k, char *buf, size_t len, int code);
/* k's range as text ("in [0, 1)", ">= 0"), or "" when unbounded. */
void keytable_range_text(const key_spec *k, char *buf, size_t len);
/* A string value v against k's length, choices and check: 0, or -1 with the problem in msg. */
int keytable_check_string(const key_spec *k, const char *v, char *msg, size_t len);
/* value converted, checked and stored for key r: 0, or -1 with the problem in msg (without
 * the key's name, which the caller prefixes) and s unchanged. */
int keytable_key_assign(scenario *s, const key_ref *r, const char *value, char *msg, size_t len);
/* Key r's value in s, formatted so that it parses back identically. */
void keytable_format_value(const scenario *s, const key_ref *r, char *buf, size_t len);
/* Key r's value in s checked again by its type, range and check (scenario_validate's first
 * pass, whoever set it): 0, or -1 with the problem in msg. */
int keytable_validate_key(const scenario *s, const key_ref *r, char *msg, size_t len);

/* Fills s with every key's default value (the table built). */
void keytable_defaults(scenario *s);

/* The old key names still read: their count, and the i-th alias section.key of the key
 * to_section.to_key. */
size_t keytable_alias_count(void);
void keytable_alias_at(size_t i, const char **section, const char **key, const char **to_section, const char **to_key);

#endif

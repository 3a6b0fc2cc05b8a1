#ifndef SIM_SCENARIO_INT_H
#define SIM_SCENARIO_INT_H
/* scenario_int.h - the key-table machinery sim/scenario*.c and sim/keytable.c share; not
 * part of scenario.h's interface. */

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

#define KEYS_MAX 512
#define QUOTE_MAX KEY_QUOTE_MAX

/* The tables (scenario.c), built once by scn_keys_init; every public function calls it. */
extern key_ref scn_keys[KEYS_MAX];
extern size_t scn_n_keys;
extern section_spec scn_sections[];
extern size_t scn_n_sections;
void scn_keys_init(void);

/* keytable.c: lookup, messages, conversions. */
void scn_msgf(char *msg, size_t len, const char *fmt, ...);
const char *scn_quote(const char *v, char *buf, size_t len);
void *scn_field(scenario *s, const key_ref *r);
const void *scn_cfield(const scenario *s, const key_ref *r);
void scn_format_double(double x, char *buf, size_t len);
const section_spec *scn_section_find(const char *name);
const key_ref *scn_key_find(const char *section, const char *key);
const key_ref *scn_key_preset(void);
const key_ref *scn_key_file(void);
void scn_unknown_section_msg(const char *section, char *msg, size_t len);
void scn_unknown_key_msg(const char *section, const char *key, char *msg, size_t len);
void scn_names_list(const key_spec *k, char *buf, size_t len, int code);
void scn_range_text(const key_spec *k, char *buf, size_t len);
int scn_check_string(const key_spec *k, const char *v, char *msg, size_t len);
int scn_key_assign(scenario *s, const key_ref *r, const char *value, char *msg, size_t len);
void scn_format_value(const scenario *s, const key_ref *r, char *buf, size_t len);
int scn_validate_key(const scenario *s, const key_ref *r, char *msg, size_t len);

#endif

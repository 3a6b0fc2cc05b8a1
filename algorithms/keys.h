#ifndef ALGORITHMS_KEYS_H
#define ALGORITHMS_KEYS_H
/* keys.h - a scenario key as one row of a table: its section and name, its type and
 * where its value lives, its default, unit, one line of documentation and the values it
 * accepts. sim/keytable.c and sim/scenario*.c parse, check, print and document every
 * key from such tables: the common sections' own and each algorithm's (algorithm.h). */

#include <stddef.h>

typedef enum key_type {
  KEY_STR,    /* char[size]; `choices` (if set) lists the only accepted values */
  KEY_DOUBLE, /* double */
  KEY_LONG,   /* long */
  KEY_INT,    /* int (the integer range of an int is checked) */
  KEY_SIZE,   /* size_t (negative values are refused) */
  KEY_U64,    /* uint64_t */
  KEY_BOOL,   /* int, 0 or 1; written on/off */
  KEY_CHOICE  /* int: the value's position in `choices`, or values[position] when `values` is set */
} key_type;

typedef enum key_bound { KEY_UNBOUNDED, KEY_INCL, KEY_EXCL } key_bound;

typedef struct key_spec {
  const char *section;
  const char *key;
  key_type type;
  size_t offset;           /* into the struct the table describes */
  size_t size;             /* of the field: a string's capacity; checked against the type */
  const char *def;         /* default, parsed like any value */
  const char *unit;
  const char *doc;         /* one line; the accepted values are appended from the row */
  const char *choices;     /* KEY_STR, KEY_CHOICE: "a|b|c" */
  const int *values;       /* KEY_CHOICE: the int stored for each choice; NULL: its position */
  const char *empty_alias; /* KEY_STR: a word that means the empty value ("none") */
  const char *paths;       /* KEY_STR: the value names a file after one of these prefixes ("" the whole
                              value, "libsvm:|csv:"): a relative one in a scenario file is taken from
                              the file's folder */
  int (*check)(const char *v, char *msg, size_t len); /* KEY_STR: more checks; 0 or -1 with msg */
  const char *(*name_at)(size_t i);                   /* KEY_STR: accepted names, for the docs */
  key_bound lo_kind, hi_kind; /* numbers: their range */
  double lo, hi;
} key_spec;

/* Row helpers: KEY_FIELD(struct_type, field) for .offset and .size; KEY_GT(x) ... for
 * the range. */
#define KEY_FIELD(T, f) .offset = offsetof(T, f), .size = sizeof(((T *)0)->f)
#define KEY_GT(x) .lo_kind = KEY_EXCL, .lo = (x)
#define KEY_GE(x) .lo_kind = KEY_INCL, .lo = (x)
#define KEY_LT(x) .hi_kind = KEY_EXCL, .hi = (x)
#define KEY_LE(x) .hi_kind = KEY_INCL, .hi = (x)

/* Values quoted in messages are cut to this many characters. */
#define KEY_QUOTE_MAX 60

/* Helpers for a table's `check` functions. */
/* 'v' for a message, cut with "..." past KEY_QUOTE_MAX characters; returns buf. */
const char *key_quote(const char *v, char *buf, size_t len);
/* Whether v is one of `choices` ("a|b|c"). */
int key_choice_ok(const char *choices, const char *v);
/* v is one of `names` ("a|b|c") or `prefix` followed by a non-empty path: 0, or -1 with
 * one line in msg, worded with `what` and `all`. */
int key_check_name_or_file(const char *v, const char *names, const char *prefix, const char *what,
                           const char *all, char *msg, size_t len);
/* Each listed size is at most this: far above anything trainable, far below overflow of
 * the products of sizes that models/cost.c computes in double. */
#define KEY_SIZE_MAX 1000000000UL
/* Parses a list of sizes ("64,128,10": each from 1 to KEY_SIZE_MAX, blanks around commas
 * allowed) into sizes[0..cap-1]. Returns their number, or -1 if the text is malformed or
 * lists more than cap sizes. sizes may be NULL: then it only counts. */
int key_sizes_parse(const char *text, size_t *sizes, size_t cap);

/* Whether the key `name` ("key", or "section.key" in a table of several sections) of
 * table[0..n-1] holds another value than its default in the struct at params (a
 * descriptor's validate refuses a key set where it changes nothing). The key must be in
 * the table. */
int key_changed(const key_spec *table, size_t n, const void *params, const char *name);

#endif

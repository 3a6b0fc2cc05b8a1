#ifndef SIM_SCENARIO_H
#define SIM_SCENARIO_H
/* scenario.h - the scenario file (INI, parsed with inih) as a validated config.
 * Key tables list every key with its section, type, default, unit and one line of
 * documentation: the common sections' here, each algorithm's in its descriptor
 * (algorithms/algorithm.h); parsing, --set overrides, validation, the "scenario" block of
 * summary.json and the key reference (sim/KEYS.md) all come from the tables. */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "algorithms/settings.h"

#define SCENARIO_STR SETTINGS_STR
#define SCENARIO_MAX_LAYERS SETTINGS_MAX_LAYERS

/* Fills s with every key's default value. */
void scenario_defaults(scenario *s);

/* Reads an INI file over the current values of s. On error returns -1 and writes one
 * line "PATH:LINE: problem" (or "PATH: problem") into err; s may be partly updated. */
int scenario_load_file(scenario *s, const char *path, char *err, size_t errlen);

/* Same, from an open stream read to its end (the caller closes it); `name` stands for
 * the path in messages. */
int scenario_load_stream(scenario *s, FILE *fp, const char *name, char *err, size_t errlen);

/* Same, from a string; `name` stands for the path in messages. */
int scenario_load_string(scenario *s, const char *text, const char *name, char *err, size_t errlen);

/* Applies one "SECTION.KEY=VALUE" override. Returns 0, or -1 with a message in err. */
int scenario_set(scenario *s, const char *assignment, char *err, size_t errlen);
/* Refuses --set assignments (already each applied without error) that name both a
 * platform.preset and a platform.file, as one INI file naming both is refused (a single
 * --set of either over a file naming the other replaces it). Returns 0, or -1 with one
 * line in err. */
int scenario_sets_conflict(char *const *sets, int n, char *err, size_t errlen);
/* Where the key `name` (SECTION.KEY, or an old name of it) took its value in a scenario
 * read from path (NULL: the built-in one) and then the --sets: "--set SECTION.KEY=VALUE"
 * (the last one naming it), "PATH:LINE", or the scenario that leaves it at its default,
 * into out. Returns 0, or -1 when name is no key. */
int scenario_key_source(const char *path, char *const *sets, int nsets, const char *name, char *out, size_t len);
/* Whether the option at argv[i] (--set, --vary) was given an assignment the shell split at
 * its blanks (`--set downpour.replicas = 4`, `... =4`, `...= 4`): the words after it would
 * otherwise be taken for a scenario file. Then err says how to write it. */
int scenario_split_assignment(int argc, char **argv, int i, char *err, size_t len);

/* Checks values and their combinations (positive sizes, known names, layer shapes that
 * fit the model type, ...). Returns 0, or -1 with one line in err naming the key.
 * `origin` (the scenario path) prefixes the message. */
int scenario_validate(const scenario *s, const char *origin, char *err, size_t errlen);

/* Refuses a key changed from its default in the section of an algorithm that
 * run.algorithm neither is nor reads (its descriptor's `reads`): `[downpour]` keys in a
 * dataparallel run. Returns 0, or -1 with one line in err. `dtsim run` checks it when
 * the scenario chose the algorithm, not a `--set run.algorithm` (a file shared by several
 * algorithms, as the reproductions' are, runs each that way). */
int scenario_foreign_section(const scenario *s, const char *origin, char *err, size_t errlen);

/* Number of keys in the table, and the i-th key's fields (for listing and output).
 * value: the key's current value in s, formatted so that it parses back identically. */
size_t scenario_key_count(void);
void scenario_key_at(const scenario *s, size_t i, const char **section, const char **key,
                     char *value, size_t valuelen, const char **def, const char **unit,
                     const char **doc);
/* The file the i-th key's value names in s (platform.file; data.source's libsvm:PATH and
 * csv:PATH), without its prefix, into path: 1, or 0 when the key names no file. */
int scenario_key_file(const scenario *s, size_t i, char *path, size_t len);

/* Parses a model.layers list ("64,128,10": sizes from 1 to 10^9, blanks around commas
 * allowed) into sizes[0..cap-1]. Returns the number of sizes, or -1 if the text is
 * malformed or lists more than cap sizes. sizes may be NULL: then it only counts. */
int scenario_layers(const char *text, size_t *sizes, size_t cap);

/* Parses a faults.stragglers value "FRACTION:SLOWDOWN" (FRACTION in [0, 1], SLOWDOWN
 * finite and >= 1; "" means 0:1). Returns 0, or -1 if malformed or out of range. */
int scenario_stragglers(const char *text, double *fraction, double *slowdown);

/* Old key names still read (keytable.c's aliases): the i-th alias section.key of the key
 * to_section.to_key. */
size_t scenario_alias_count(void);
void scenario_alias_at(size_t i, const char **section, const char **key, const char **to_section, const char **to_key);

/* Prints the key reference as Markdown tables (sim/KEYS.md's, and `dtsim list keys`). */
void scenario_print_reference(FILE *out);

/* The built-in default scenario (INI text) that `dtsim` alone runs. */
extern const char scenario_default_ini[];

#endif

#ifndef ALGORITHMS_REGISTRY_H
#define ALGORITHMS_REGISTRY_H
/* registry.h - every algorithm dtsim runs, in the order of the key reference. sim/ finds
 * the algorithms here; the algorithms themselves include only algorithm.h. Adding an
 * algorithm is its files, its descriptor and one line in registry.c. */

#include <stddef.h>

#include "algorithms/algorithm.h"

extern const algorithm *const algorithm_registry[];
extern const size_t algorithm_count;

/* The descriptor called name, or NULL. */
const algorithm *algorithm_find(const char *name);
/* Its position in the registry (the index of its section in scenario.sections). */
size_t algorithm_index(const algorithm *a);
/* The registry's i-th name, or NULL past its end (for name lists). */
const char *algorithm_name_at(size_t i);
/* Gives each registered algorithm its section of s (sections[i] to the i-th). */
void registry_bind_sections(scenario *s);

#endif

#ifndef SIM_FOOTPRINT_H
#define SIM_FOOTPRINT_H
/* footprint.h - the memory a run will need, estimated before anything is allocated,
 * against what this process may use. */

#include <stddef.h>

#include "algorithms/registry.h"

/* Refuses a run of algorithm a on `hosts` hosts that cannot fit: its numeric state over
 * the memory this process may use, its actors' guard pages over vm.max_map_count, their
 * stacks over the address-space limit (SimGrid's options sg_argv[1..sg_argc-1] may lift
 * the last two). Returns 0, or -1 with one line in err. */
int footprint_check(const scenario *sc, const algorithm *a, size_t hosts, int sg_argc, char **sg_argv, char *err,
                    size_t errlen);

#endif

#ifndef SIM_SCENARIO_INT_H
#define SIM_SCENARIO_INT_H
/* scenario_int.h - what sim/scenario*.c share and scenario.h does not offer: the key
 * table's rows handed to keytable.c. */

#include "sim/keytable.h"

/* Builds the key table (keytable_build) from the common sections' rows, once; every
 * public function of scenario.h calls it before it reads the table. */
void scenario_keys_init(void);
/* The common sections' rows that come before the algorithms' (n of them). */
const key_spec *scenario_head_keys(size_t *n);

#endif

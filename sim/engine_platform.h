#ifndef SIM_ENGINE_PLATFORM_H
#define SIM_ENGINE_PLATFORM_H
/* engine_platform.h - the pipeline's steps that settle a run's platform file before
 * SimGrid starts (engine_build.h has the pipeline). The steps return 0, or -1 with one
 * line in b->err. */

#include "sim/engine_build.h"

/* The platform file into b->platform: the user's platform.file, or the preset (with the
 * scenario's what-if changes and the algorithm's bank) written into a private temporary
 * folder that engine_build_free removes. */
int engine_platform_write(engine_build *b);
/* The platform's hosts against the run's: enough of them, and every one the run will use
 * reachable at a positive speed (platform_check_use). */
int engine_platform_check(engine_build *b);
/* One line on stderr when the shards run as a bank (not with --quiet). */
void engine_platform_note(const engine_build *b);

#endif

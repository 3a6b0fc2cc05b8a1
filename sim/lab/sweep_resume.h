#ifndef SIM_LAB_SWEEP_RESUME_H
#define SIM_LAB_SWEEP_RESUME_H
/* sweep_resume.h - whether `dtsim sweep` may write into its --out folder: a new folder, or
 * one holding this same sweep (its sweep.json equal to this sweep's identity), which the
 * sweep then resumes. Private to sweep.c. */
#include <jansson.h>
#include <stddef.h>

/* Whether the sweep of identity ident can be written into out: a new folder (*resume = 0),
 * or one holding this same sweep, interrupted or not, whose sweep.json equals ident
 * (*resume = 1). Returns 0, or -1 with a message: another sweep (saying what differs), or
 * a folder that cannot be written. */
int sweep_out_unusable(const char *out, const json_t *ident, int *resume, char *err, size_t len);

#endif

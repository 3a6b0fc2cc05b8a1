#ifndef SIM_PLATFORM_INT_H
#define SIM_PLATFORM_INT_H
/* platform_int.h - what sim/platform*.c share and nothing else includes: the host limit,
 * a generated cluster's defaults, the error formatter and the name checks. */

#include <stddef.h>

/* SimGrid keeps host ids in int; far beyond what one process simulates anyway. */
#define PLATFORM_MAX_HOSTS ((size_t)10000000)

/* Defaults of a generated cluster (`dtsim platform --topology T`), round numbers chosen
 * to be easy to reason about, not to model a machine: 1 Gflop/s cores, 10 Gb/s links,
 * 1 us per link, and the plain alpha-beta network model. */
#define GEN_SPEED 1e9
#define GEN_BW 1.25e9
#define GEN_LAT 1e-6
#define GEN_MODEL "CM02"

/* The shortest decimal that reads back as v (5e-05, not 5.0000000000000002e-05). */
void platform_fmt_num(char *buf, size_t n, double v);

/* printf into err[0..errlen-1] (nothing if err is NULL). */
void platform_set_err(char *err, size_t errlen, const char *fmt, ...);
/* A network model dtsim writes (LV08, CM02); a cluster name SimGrid ids accept. */
int platform_valid_model(const char *m);
int platform_valid_name(const char *s);

#endif

#ifndef TESTS_PLATFORM_UTIL_H
#define TESTS_PLATFORM_UTIL_H
/* platform_util.h - what check_platform.c and check_platform_p2p.c share: a SimGrid engine
 * started quietly, a platform_spec written to a temporary file, a small generated spec. */

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <simgrid/engine.h>
#include <xbt/sysdep.h>

#include "sim/platform.h"

/* TOL_BW: a route's bandwidth is one of its links', copied: equal; 1e-3 B/s is below 1e-11
 * of any bandwidth here (1.25e8 .. 1.5e11 B/s). */
#define TOL_BW 1e-3

/* simgrid_init with quiet logs, an optional extra option, and thread contexts under the
 * sanitizers (ASan does not follow SimGrid's own stack switching). */
static inline void start_engine(const char *cfg)
{
  static char arg0[] = "check_platform", quiet[] = "--log=root.thresh:warning",
              threads[] = "--cfg=contexts/factory:thread", extra[128];
  char *argv[5];
  int argc = 0;
  argv[argc++] = arg0;
  argv[argc++] = quiet;
#ifdef DTSIM_SANITIZE
  argv[argc++] = threads;
#else
  (void)threads;
#endif
  if (cfg) {
    snprintf(extra, sizeof extra, "%s", cfg);
    argv[argc++] = extra;
  }
  argv[argc] = NULL;
  simgrid_init(&argc, argv);
}

static inline char *write_spec(const platform_spec *spec)
{
  char *path = xbt_malloc(64);
  char err[256] = "";
  snprintf(path, 64, "/tmp/check_platform-XXXXXX");
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  FILE *f = fdopen(fd, "w");
  ck_assert_ptr_nonnull(f);
  ck_assert_msg(platform_write(spec, f, err, sizeof err) == 0, "platform_write: %s", err);
  ck_assert_int_eq(fclose(f), 0);
  return path;
}

static inline platform_spec generated(platform_topology t, size_t hosts)
{
  platform_spec s;
  memset(&s, 0, sizeof s);
  s.topology = t;
  s.hosts = hosts;
  s.speed = 1e9;
  s.cores = 1;
  s.bw = 1.25e9;
  s.lat = 1e-6;
  s.network_model = "CM02";
  s.name = "host";
  return s;
}

#endif

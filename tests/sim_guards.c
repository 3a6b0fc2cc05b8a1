/* sim_guards.c - what is checked before a simulation starts, so that a run is never
 * wasted nor ends in an abort: the platform pre-check (hosts of no speed, unroutable
 * pairs, links of no bandwidth), SimGrid options named when refused. Each bad input
 * must end with exit status 2, one line on stderr and no result folder. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "cli_util.h"

/* Runs dtsim with args in a fresh folder; checks exit 2, one line holding every one of
 * the NULL-terminated needles, no result folder, and that the line names no temporary
 * file of dtsim's own. */
static void bad_input(const char *const *args, const char *const *needles)
{
  char *dir = cli_tmpdir();
  cli_assert_bad_input(dir, args, needles[0]);
  char *err = cli_read(dir, "stderr");
  for (size_t i = 1; needles[i]; i++)
    ck_assert_msg(strstr(err, needles[i]) != NULL, "stderr lacks '%s': %s", needles[i], err);
  ck_assert_msg(strstr(err, "/tmp/dtsim-") == NULL, "the message blames a temporary file: %s", err);
  free(err);
  free(dir);
}

START_TEST(test_guards_host_speed_zero)
{
  /* dataparallel computes on both hosts; host "dead" has 0 flop/s */
  const char *args[] = {"run", "--set", "run.algorithm=dataparallel", "--set", "dataparallel.replicas=2",
                        "--set", "platform.file=" TEST_DATA_DIR "/platform-speed0.xml", "--set", "run.max_steps=2",
                        "--out", "out", NULL};
  const char *needles[] = {"platform-speed0.xml", "host dead", "speed of 0", NULL};
  bad_input(args, needles);
}
END_TEST

START_TEST(test_guards_no_route)
{
  const char *args[] = {"run", "--set", "run.algorithm=collective", "--set", "collective.ranks=3",
                        "--set", "platform.file=" TEST_DATA_DIR "/platform-noroute.xml", "--out", "out", NULL};
  const char *needles[] = {"platform-noroute.xml", "no route from host h0 to host h2", NULL};
  bad_input(args, needles);
}
END_TEST

START_TEST(test_guards_link_bandwidth_zero)
{
  const char *args[] = {"run", "--set", "run.algorithm=collective", "--set", "collective.ranks=2",
                        "--set", "platform.file=" TEST_DATA_DIR "/platform-bw0.xml", "--out", "out", NULL};
  const char *needles[] = {"platform-bw0.xml", "link stuck", "bandwidth 0", NULL};
  bad_input(args, needles);
}
END_TEST

START_TEST(test_guards_simgrid_option_named)
{
  const char *args[] = {"run", "--set", "run.max_steps=2", "--cfg=nosuch/opt:1", "--out", "out", NULL};
  const char *needles[] = {"--cfg=nosuch/opt:1", "nosuch/opt", NULL};
  bad_input(args, needles);
  /* one bad option among good ones is the one named */
  const char *two[] = {"run", "--set", "run.max_steps=2", "--cfg=network/model:CM02", "--cfg=contexts/nthreads:abc",
                       "--out", "out", NULL};
  const char *n2[] = {"--cfg=contexts/nthreads:abc", NULL};
  bad_input(two, n2);
}
END_TEST

static Suite *guards_suite(void)
{
  Suite *s = suite_create("guards");
  ADD_TCASE(s, "platform", test_guards_host_speed_zero, test_guards_no_route, test_guards_link_bandwidth_zero,
            test_guards_simgrid_option_named);
  return s;
}

CHECK_MAIN(guards_suite)

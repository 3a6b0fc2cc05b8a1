/* check_reproduce_store.c - Check suite for sim/lab/reproduce_store: a run's identity names
 * the sources' hash and SimGrid's version (not the executable's bytes); a kept run keeps its
 * evaluations and figures but not its images nor links.csv, and is taken back whole; pruning
 * deletes only the runs other sources made. */

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/fileio.h"
#include "sim/lab/reproduce_store.h"

#include "check_util.h"

/* A temporary folder with a scenario and a finished run's folder (dir/run with a summary,
 * progress, links.csv and a plot) and its log. */
static void make_work(char *work)
{
  strcpy(work, "/tmp/dtsim-check-store-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(work));
  char err[256], run[600];
  ck_assert_int_eq(fileio_write(work, "s.ini", "[run]\nalgorithm = sgd\n", 22, err, sizeof err), 0);
  snprintf(run, sizeof run, "%s/run", work);
  ck_assert_int_eq(fileio_mkdirs(run, err, sizeof err), 0);
  ck_assert_int_eq(fileio_write(run, "summary.json", "{}\n", 3, err, sizeof err), 0);
  ck_assert_int_eq(fileio_write(run, "progress.csv", "sim_time_s\n1\n", 13, err, sizeof err), 0);
  ck_assert_int_eq(fileio_write(run, "links.csv", "link\nl1\n", 8, err, sizeof err), 0);
  ck_assert_int_eq(fileio_write(run, "progress.png", "PNG", 3, err, sizeof err), 0);
  ck_assert_int_eq(fileio_write(work, "run.log", "done\n", 5, err, sizeof err), 0);
}

static int exists(const char *dir, const char *name)
{
  char path[700];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return access(path, F_OK) == 0;
}

START_TEST(test_store_identity_names_sources)
{
  char work[64], err[256] = "";
  make_work(work);
  const char *sets[] = {"sgd.lr=0.1"};
  json_t *id = reproduce_store_identity(work, "s.ini", sets, 1, NULL, 0, err, sizeof err);
  ck_assert_msg(id != NULL, "%s", err);
  const char *src = json_string_value(json_object_get(id, "sources_sha256"));
  ck_assert_ptr_nonnull(src);
  ck_assert_uint_eq(strlen(src), 64); /* SHA-256 in hex */
  ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(id, "simgrid")), "3.32"));
  ck_assert_ptr_null(json_object_get(id, "dtsim_fnv1a")); /* no executable's hash: it differs by machine */
  json_decref(id);
  fileio_remove_tree(work);
}
END_TEST

START_TEST(test_store_keeps_small_files_and_takes_back)
{
  char work[64], err[256] = "", store[128], dir[128], back[128];
  make_work(work);
  snprintf(store, sizeof store, "%s/store", work);
  snprintf(dir, sizeof dir, "%s/run", work);
  json_t *id = reproduce_store_identity(work, "s.ini", NULL, 0, NULL, 0, err, sizeof err);
  ck_assert_msg(id != NULL, "%s", err);
  char log[200], from[200];
  snprintf(log, sizeof log, "%s.log", dir);
  snprintf(from, sizeof from, "%s/run.log", work);
  ck_assert_int_eq(rename(from, log), 0); /* a run's log sits beside its folder */
  ck_assert_int_eq(reproduce_store_put(store, dir, id, 0, err, sizeof err), 0);
  ck_assert_uint_eq(reproduce_store_count(store), 1);
  snprintf(back, sizeof back, "%s/back", work);
  ck_assert_int_eq(reproduce_store_take(store, back, 0, 1, id), 1);
  ck_assert(exists(back, "summary.json") && exists(back, "progress.csv"));
  ck_assert(!exists(back, "links.csv") && !exists(back, "progress.png"));
  ck_assert(exists(work, "back.log"));
  /* a run with another identity is not there */
  json_object_set_new(id, "sets", json_pack("[s]", "sgd.lr=0.3"));
  ck_assert_int_eq(reproduce_store_take(store, back, 0, 1, id), 0);
  json_decref(id);
  fileio_remove_tree(work);
}
END_TEST

/* A kept run whose run.json names other sources is pruned; this build's stays. */
START_TEST(test_store_prune_other_sources)
{
  char work[64], err[256] = "", store[128], dir[128];
  make_work(work);
  snprintf(store, sizeof store, "%s/store", work);
  snprintf(dir, sizeof dir, "%s/run", work);
  char log[200], from[200];
  snprintf(log, sizeof log, "%s.log", dir);
  snprintf(from, sizeof from, "%s/run.log", work);
  ck_assert_int_eq(rename(from, log), 0);
  json_t *id = reproduce_store_identity(work, "s.ini", NULL, 0, NULL, 0, err, sizeof err);
  ck_assert_msg(id != NULL, "%s", err);
  ck_assert_int_eq(reproduce_store_put(store, dir, id, 0, err, sizeof err), 0);
  json_t *old = json_deep_copy(id);
  json_object_set_new(old, "sources_sha256", json_string("0000000000000000000000000000000000000000000000000000000000000000"));
  ck_assert_int_eq(reproduce_store_put(store, dir, old, 0, err, sizeof err), 0);
  ck_assert_uint_eq(reproduce_store_count(store), 2);
  ck_assert_uint_eq(reproduce_store_prune(store), 1);
  ck_assert_uint_eq(reproduce_store_count(store), 1);
  char back[128];
  snprintf(back, sizeof back, "%s/back", work);
  ck_assert_int_eq(reproduce_store_take(store, back, 0, 1, id), 1); /* this build's run stayed */
  json_decref(old);
  json_decref(id);
  fileio_remove_tree(work);
}
END_TEST

Suite *reproduce_store_suite(void)
{
  Suite *s = suite_create("reproduce_store");
  ADD_TCASE(s, "store", test_store_identity_names_sources, test_store_keeps_small_files_and_takes_back,
            test_store_prune_other_sources);
  return s;
}

CHECK_MAIN(reproduce_store_suite)

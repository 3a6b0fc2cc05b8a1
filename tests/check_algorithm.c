/* check_algorithm.c - the registry and its descriptors (algorithms/algorithm.h): what
 * sim/ relies on when it dispatches through them without naming any algorithm. */

#include <check.h>
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "algorithms/registry.h"
#include "check_util.h"
#include "figures_util.h"
#include "sim/scenario.h"

START_TEST(test_algorithm_registry_complete)
{
  ck_assert_uint_ge(algorithm_count, 8);
  ck_assert_uint_le(algorithm_count, SETTINGS_MAX_ALGORITHMS);
  for (size_t i = 0; i < algorithm_count; i++) {
    const algorithm *a = algorithm_registry[i];
    ck_assert_msg(a->name && *a->name && a->summary && *a->summary && a->section_doc && *a->section_doc,
                  "algorithm %zu lacks a name, summary or section doc", i);
    ck_assert_msg(a->plan.validate && a->plan.hosts_needed && a->run.prepare && a->run.deploy && a->run.free,
                  "%s lacks a required hook", a->name);
    ck_assert_msg(a->params_size > 0 && a->params_size <= SETTINGS_PARAMS_BYTES, "%s: %zu parameter bytes", a->name,
                  a->params_size);
    ck_assert_msg(a->keys != NULL && a->n_keys > 0, "%s has no keys", a->name);
    for (size_t k = 0; k < a->n_keys; k++) {
      const key_spec *ks = &a->keys[k];
      ck_assert_str_eq(ks->section, a->name);
      ck_assert_msg(ks->offset + ks->size <= a->params_size, "%s.%s lies outside its parameter struct", a->name,
                    ks->key);
    }
  }
}
END_TEST

START_TEST(test_algorithm_lookup)
{
  for (size_t i = 0; i < algorithm_count; i++) {
    const algorithm *a = algorithm_registry[i];
    ck_assert_ptr_eq(algorithm_find(a->name), a);
    ck_assert_uint_eq(algorithm_index(a), i);
    ck_assert_str_eq(algorithm_name_at(i), a->name);
    for (size_t j = 0; j < i; j++)
      ck_assert_str_ne(algorithm_registry[j]->name, a->name);
  }
  ck_assert_ptr_null(algorithm_find("adam"));
  ck_assert_ptr_null(algorithm_find(""));
  ck_assert_ptr_null(algorithm_name_at(algorithm_count));
}
END_TEST

/* Every algorithm's defaults validate, and a key of one algorithm's section lands in its
 * own parameter struct and nowhere else. */
START_TEST(test_algorithm_sections_separate)
{
  char err[1024];
  for (size_t i = 0; i < algorithm_count; i++) {
    const algorithm *a = algorithm_registry[i];
    scenario s, t;
    scenario_defaults(&s);
    snprintf(s.run.algorithm, sizeof s.run.algorithm, "%s", a->name);
    const void *p = algorithm_params(&s, a);
    ck_assert_ptr_eq(p, s.sections[i].bytes);
    /* consensus needs a step bound; a tensor or pipeline run of the default shapes is fine */
    if (strcmp(a->name, "consensus") == 0)
      s.run.max_steps = 10;
    ck_assert_msg(a->plan.validate(&s, p, err, sizeof err) == 0, "%s's defaults: %s", a->name, err);
    t = s;
    char set[128];
    snprintf(set, sizeof set, "%s.%s=%s", a->name, a->keys[0].key, a->keys[0].def);
    ck_assert_msg(scenario_set(&t, set, err, sizeof err) == 0, "%s", err);
    for (size_t j = 0; j < algorithm_count; j++)
      if (j != i)
        ck_assert(memcmp(s.sections[j].bytes, t.sections[j].bytes, SETTINGS_PARAMS_BYTES) == 0);
  }
}
END_TEST

/* What each descriptor says it reports (reports, figures) covers what every golden run's
 * summary.json holds, one run of every algorithm but moe (tests/sim_moe.c checks its own). */
START_TEST(test_algorithm_figures_declared)
{
  DIR *d = opendir(TEST_GOLDEN_DIR);
  ck_assert_ptr_nonnull(d);
  size_t n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/summary.json", TEST_GOLDEN_DIR, e->d_name);
    json_t *j = e->d_name[0] == '.' ? NULL : json_load_file(path, 0, NULL);
    if (j == NULL)
      continue;
    figures_assert_declared(j, path);
    json_decref(j);
    n++;
  }
  closedir(d);
  ck_assert_uint_ge(n, algorithm_count - 1); /* a golden run of every algorithm but moe */
}
END_TEST

static Suite *algorithm_suite(void)
{
  Suite *s = suite_create("algorithm");
  ADD_TCASE(s, "registry", test_algorithm_registry_complete, test_algorithm_lookup);
  ADD_TCASE(s, "sections", test_algorithm_sections_separate);
  ADD_TCASE(s, "figures", test_algorithm_figures_declared);
  return s;
}

CHECK_MAIN(algorithm_suite)

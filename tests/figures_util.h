#ifndef TESTS_FIGURES_UTIL_H
#define TESTS_FIGURES_UTIL_H
/* figures_util.h - a run's summary.json held against its algorithm's descriptor: every
 * optional figure it has a number for is in the descriptor's `reports`, every number of its
 * own block in its `figures` (algorithms/algorithm.h), since a sweep refuses, before any
 * point runs, a --plot-metric that no point's descriptor lists. Header-only. */

#include <check.h>
#include <jansson.h>

#include "algorithms/registry.h"

/* Asserts that every number under o (objects recursively, arrays left out, as sweep.csv
 * flattens a block) is listed by its last name in list. */
static inline void figures_assert_block(const json_t *o, const char *list, const char *alg, const char *where)
{
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)o, key, v)
  {
    if (json_is_object(v))
      figures_assert_block(v, list, alg, where);
    else if (json_is_number(v))
      ck_assert_msg(algorithm_lists(list, key), "%s: %s reports %s.%s, which its descriptor's figures lack", where,
                    alg, alg, key);
  }
}

/* summary (a parsed summary.json, where names it) against its algorithm's descriptor. */
static inline void figures_assert_declared(const json_t *summary, const char *where)
{
  const char *name = json_string_value(json_object_get(summary, "algorithm"));
  const algorithm *a = name ? algorithm_find(name) : NULL;
  ck_assert_msg(a != NULL, "%s: no algorithm", where);
  static const char *const top[] = {"final_loss", "final_accuracy"};
  for (size_t i = 0; i < 2; i++)
    ck_assert_msg(!json_is_number(json_object_get(summary, top[i])) || algorithm_lists(a->reports, top[i]),
                  "%s: %s reports %s, which its descriptor's reports lack", where, a->name, top[i]);
  static const char *const perf[] = {"examples_per_s", "tflops_per_device", "mfu"};
  const json_t *p = json_object_get(summary, "performance");
  for (size_t i = 0; i < 3; i++)
    ck_assert_msg(!json_is_number(json_object_get(p, perf[i])) || algorithm_lists(a->reports, perf[i]),
                  "%s: %s reports performance.%s, which its descriptor's reports lack", where, a->name, perf[i]);
  const json_t *st = json_object_get(summary, "staleness");
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)st, key, v)
  {
    ck_assert_msg(json_number_value(v) == 0 || algorithm_lists(a->reports, "staleness"),
                  "%s: %s reports staleness.%s = %g, but its descriptor's reports lack staleness", where, a->name, key,
                  json_number_value(v));
  }
  const json_t *block = json_object_get(summary, a->name);
  if (block)
    figures_assert_block(block, a->figures, a->name, where);
}

#endif

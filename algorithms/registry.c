/* registry.c - the registry: every algorithm dtsim runs, one line each. */
#include "algorithms/registry.h"

#include <string.h>
#include <xbt/asserts.h>

#include "algorithms/collective.h"
#include "algorithms/consensus.h"
#include "algorithms/dataparallel.h"
#include "algorithms/downpour.h"
#include "algorithms/moe.h"
#include "algorithms/pipeline.h"
#include "algorithms/sandblaster.h"
#include "algorithms/sgd.h"
#include "algorithms/tensor.h"

const algorithm *const algorithm_registry[] = {
  &sgd_algorithm,
  &downpour_algorithm,
  &consensus_algorithm,
  &sandblaster_algorithm,
  &collective_algorithm,
  &dataparallel_algorithm,
  &tensor_algorithm,
  &pipeline_algorithm,
  &moe_algorithm,
};
const size_t algorithm_count = sizeof algorithm_registry / sizeof algorithm_registry[0];

_Static_assert(sizeof algorithm_registry / sizeof algorithm_registry[0] <= SETTINGS_MAX_ALGORITHMS,
               "raise SETTINGS_MAX_ALGORITHMS");

const algorithm *algorithm_find(const char *name)
{
  for (size_t i = 0; i < algorithm_count; i++)
    if (strcmp(algorithm_registry[i]->name, name) == 0)
      return algorithm_registry[i];
  return NULL;
}

size_t algorithm_index(const algorithm *a)
{
  for (size_t i = 0; i < algorithm_count; i++)
    if (algorithm_registry[i] == a)
      return i;
  xbt_die("algorithm '%s' is not in the registry", a->name);
}

const char *algorithm_name_at(size_t i)
{
  return i < algorithm_count ? algorithm_registry[i]->name : NULL;
}

void registry_bind_sections(scenario *s)
{
  for (size_t i = 0; i < algorithm_count; i++)
    s->sections[i].owner = algorithm_registry[i];
}

/* run.c - the run's configuration as algorithms read it: the shapes that set costs,
 * the starting parameters, role addresses. */
#include "algorithms/run.h"

#include "models/arch.h"
#include "models/minibatch.h"

#include <stdlib.h>
#include <string.h>

int run_role_number(const char *name, const char *prefix, long *k)
{
  size_t n = strlen(prefix);
  if (strncmp(name, prefix, n) != 0 || name[n] < '0' || name[n] > '9')
    return 0;
  char *end;
  *k = strtol(name + n, &end, 10);
  return *end == '\0';
}

const arch *run_shapes(const run_config *cfg, arch **own)
{
  const arch *v = cfg->sc->model.virtual_net[0] ? arch_virtual_find(cfg->sc->model.virtual_net) : NULL;
  *own = NULL;
  if (v != NULL)
    return v;
  *own = arch_create();
  arch_add_input(*own, net_layer_size(cfg->model, 0), 1, 1);
  for (size_t l = 1; l <= net_n_layers(cfg->model); l++)
    arch_add_dense(*own, net_layer_size(cfg->model, l));
  return *own;
}

gsl_vector *run_initial_params(const run_config *cfg)
{
  if (cfg->init == NULL)
    return minibatch_initial_params(cfg->model, cfg->seed);
  gsl_vector *w = gsl_vector_alloc(cfg->init->size);
  gsl_vector_memcpy(w, cfg->init);
  return w;
}

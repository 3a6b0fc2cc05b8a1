/* algorithm.c - what every descriptor shares: finding its section in a scenario. */
#include "algorithms/algorithm.h"

#include <stdio.h>
#include <string.h>
#include <xbt/asserts.h>

const void *algorithm_params(const scenario *sc, const algorithm *a)
{
  for (size_t i = 0; i < SETTINGS_MAX_ALGORITHMS; i++)
    if (sc->sections[i].owner == a)
      return sc->sections[i].bytes;
  xbt_die("algorithm '%s' has no section in the scenario (scenario_defaults binds them)", a->name);
}

void *algorithm_params_mut(scenario *sc, const algorithm *a)
{
  return (void *)algorithm_params(sc, a);
}

int algorithm_lists(const char *list, const char *word)
{
  size_t n = strlen(word);
  for (const char *r = list; r && *r; r += strcspn(r, " "), r += *r == ' ')
    if (strcspn(r, " ") == n && strncmp(r, word, n) == 0)
      return 1;
  return 0;
}

int algorithm_reads(const algorithm *a, const char *name)
{
  return strcmp(a->name, name) == 0 || algorithm_lists(a->reads, name);
}

const void *algorithm_section(const scenario *sc, const algorithm *reader, const char *name)
{
  xbt_assert(algorithm_reads(reader, name), "%s reads [%s] without listing it in its descriptor's reads", reader->name,
             name);
  for (size_t i = 0; i < SETTINGS_MAX_ALGORITHMS; i++) {
    const algorithm *a = sc->sections[i].owner;
    if (a && strcmp(a->name, name) == 0)
      return sc->sections[i].bytes;
  }
  return NULL;
}

double algorithm_layers_params(const scenario *sc)
{
  size_t sizes[SETTINGS_MAX_LAYERS];
  int n = key_sizes_parse(sc->model.layers, sizes, SETTINGS_MAX_LAYERS);
  double p = 0;
  for (int l = 0; l + 1 < n; l++)
    p += ((double)sizes[l] + 1) * (double)sizes[l + 1];
  return p;
}

void algorithm_bank_choose(algorithm_bank *b, const char *section, int mode, int whole, int replicas, int shards)
{
  memset(b, 0, sizeof(*b));
  b->asked = mode == ALGORITHM_BANK_ON;
  if (b->asked)
    snprintf(b->why, sizeof b->why, "%s.ps_bank = bank", section);
  else if (mode == ALGORITHM_BANK_AUTO && whole && replicas >= ALGORITHM_BANK_AUTO_FROM)
    snprintf(b->why, sizeof b->why, "%s.ps_bank = auto: %d replicas >= %d", section, replicas,
             ALGORITHM_BANK_AUTO_FROM);
  else
    return;
  b->hosts = 1;
  b->scale = shards;
}

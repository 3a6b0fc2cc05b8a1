/* scenario_check.c - the checks across a scenario's keys (scenario_validate) and of the
 * sections its algorithm does not read (scenario_foreign_section); each key's own check is
 * its row's (scenario.c). */
#include "sim/scenario.h"
#include "sim/keytable.h"
#include "sim/scenario_int.h"

#include <stdio.h>
#include <string.h>
#include <xbt/asserts.h>

#include "algorithms/registry.h"
#include "models/noise_scale.h"

/* Layer shapes each model type can have (models/net.h builds them). */
static int validate_shapes(const scenario *s, char *msg, size_t len)
{
  size_t sizes[SETTINGS_MAX_LAYERS];
  int n = scenario_layers(s->model.layers, sizes, SETTINGS_MAX_LAYERS);
  size_t out;
  if (n < 2)
    return 0; /* reported by the per-key check */
  out = sizes[n - 1];
  if (strcmp(s->model.type, "linear") == 0 || strcmp(s->model.type, "logistic") == 0) {
    if (n != 2 || out != 1) {
      keytable_msgf(msg, len, "%s needs exactly 2 sizes, inputs and 1 output (e.g. 64,1), got '%s'",
           s->model.type, s->model.layers);
      return -1;
    }
  } else if (strcmp(s->model.type, "softmax") == 0) {
    if (n != 2 || out < 2) {
      keytable_msgf(msg, len, "softmax needs exactly 2 sizes, inputs and at least 2 classes (e.g. 64,10), "
           "got '%s'", s->model.layers);
      return -1;
    }
  } else if (strcmp(s->model.type, "mlp") == 0) {
    if (n < 3) {
      keytable_msgf(msg, len, "mlp needs at least 3 sizes (inputs, hidden..., outputs), got '%s'",
           s->model.layers);
      return -1;
    }
    if (out < 2) {
      keytable_msgf(msg, len, "mlp needs at least 2 outputs (classes), got '%s'; for one output use "
           "model.type = logistic (binary) or linear (regression)", s->model.layers);
      return -1;
    }
  }
  return 0;
}

/* A key of a common section set where it changes nothing: the data set of an algorithm
 * that trains on none, model.layers' shape for an algorithm that does not train it, a
 * warmstart's batch or rate without a warmstart, a target accuracy a timing-only run
 * cannot reach. The keys of a part that a switch turns off stay allowed ([data] with
 * model.numerics = off), as a scenario is often run both ways. The algorithms' sections
 * are their validate hooks' (algorithms/keys.h key_changed). Returns 0, or -1 with one
 * line in msg naming the key. */
static int ineffective_key(const scenario *s, const algorithm *alg, char *msg, size_t len)
{
  static const char *const data_names[] = {"data.source", "data.train", "data.test", "data.test_fraction",
                                          "data.teacher_hidden", "data.separation",
                                          "data.input_decay"};
  static const char *const shape_keys[] = {"model.type", "model.layers", "model.activation", "model.virtual"};
  static const char *const warm_keys[] = {"model.warmstart_batch", "model.warmstart_lr"};
  size_t nk;
  const key_spec *head_keys = scenario_head_keys(&nk);
  for (size_t i = 0; i < sizeof data_names / sizeof *data_names; i++)
    if (!alg->uses_data && key_changed(head_keys, nk, s, data_names[i])) {
      keytable_msgf(msg, len, "%s: has no effect: run.algorithm = %s trains on no data set of [data]", data_names[i],
           s->run.algorithm);
      return -1;
    }
  for (size_t i = 0; i < sizeof shape_keys / sizeof *shape_keys && !alg->trains_layers; i++)
    if (key_changed(head_keys, nk, s, shape_keys[i])) {
      keytable_msgf(msg, len, "%s: has no effect: run.algorithm = %s does not train model.layers (its shapes are "
                    "its own section's)", shape_keys[i], s->run.algorithm);
      return -1;
    }
  for (size_t i = 0; i < sizeof warm_keys / sizeof *warm_keys && s->model.warm_steps == 0; i++)
    if (key_changed(head_keys, nk, s, warm_keys[i])) {
      keytable_msgf(msg, len, "%s: has no effect without a warmstart (model.warmstart_steps = 0)", warm_keys[i]);
      return -1;
    }
  if (s->model.framework[0] && !alg->framework_host) {
    keytable_msgf(msg, len, "model.framework: has no effect: run.algorithm = %s runs no framework host (tensor does)",
                  s->run.algorithm);
    return -1;
  }
  if (s->run.noise_scale_examples > 0 && (!s->model.numerics || !alg->uses_data)) {
    keytable_msgf(msg, len, "run.noise_scale_examples: %s measures no gradient", !s->model.numerics
                  ? "a timing-only run (model.numerics = off)" : "an algorithm without a data set");
    return -1;
  }
  if (s->run.curvature_examples > 0 && (!s->model.numerics || !alg->uses_data)) {
    keytable_msgf(msg, len, "run.curvature_examples: %s has no loss to measure", !s->model.numerics
                  ? "a timing-only run (model.numerics = off)" : "an algorithm without a data set");
    return -1;
  }
  if (s->run.noise_scale_examples > 0 && s->run.noise_scale_examples < 2 * NOISE_SCALE_BATCH) {
    keytable_msgf(msg, len, "run.noise_scale_examples: %ld examples make fewer than two batches of %d; 0 or at "
                  "least %d", s->run.noise_scale_examples, NOISE_SCALE_BATCH, 2 * NOISE_SCALE_BATCH);
    return -1;
  }
  if (s->run.target_accuracy > 0 && !s->model.numerics) {
    keytable_msgf(msg, len, "run.target_accuracy: a timing-only run (model.numerics = off) measures no accuracy, so it "
         "could only end target_not_reached");
    return -1;
  }
  return 0;
}

int scenario_validate(const scenario *s, const char *origin, char *err, size_t errlen)
{
  char msg[400];
  const char *o = origin ? origin : "<default>";
  scenario_keys_init();
  size_t n_keys;
  const key_ref *keys = keytable_keys(&n_keys);
  for (size_t i = 0; i < n_keys; i++)
    if (keytable_validate_key(s, &keys[i], msg, sizeof msg) != 0) {
      keytable_msgf(err, errlen, "%s: %s.%s: %s", o, keys[i].k->section, keys[i].k->key, msg);
      return -1;
    }
  const algorithm *alg = algorithm_find(s->run.algorithm);
  xbt_assert(alg != NULL, "run.algorithm '%s' passed its key check", s->run.algorithm);
  if (s->platform.preset[0] && s->platform.file[0]) {
    keytable_msgf(err, errlen, "%s: platform.preset: must be empty when platform.file is set (got '%s' "
         "and '%s')", o, s->platform.preset, s->platform.file);
    return -1;
  }
  if (!s->platform.preset[0] && !s->platform.file[0]) {
    keytable_msgf(err, errlen, "%s: platform.preset: give a preset or a platform.file, both are empty", o);
    return -1;
  }
  if (s->platform.file[0] && (s->platform.gen_topology[0] || s->platform.host_cores > 0 || s->platform.sharing[0] ||
                              !s->platform.link_efficiency || strcmp(s->platform.uplink_routing, "pooled") == 0 ||
                              s->platform.power[0])) {
    keytable_msgf(err, errlen, "%s: platform.%s: changes a preset's generated platform; with platform.file set, edit "
         "the file (bw_factor, lat_factor and speed_factor work on any platform)", o,
         s->platform.gen_topology[0] ? "topology" : s->platform.host_cores > 0 ? "host_cores"
                                                   : s->platform.sharing[0]    ? "sharing"
                                                   : !s->platform.link_efficiency ? "link_efficiency"
                                                   : s->platform.power[0]      ? "power"
                                                                               : "uplink_routing");
    return -1;
  }
  if (s->run.collectives != 0 && (s->faults.host_failures[0] || s->faults.link_failures[0])) {
    keytable_msgf(err, errlen, "%s: run.collectives: rounds cannot lose a member or a transfer midway (a round "
                  "waits for every member at a barrier); use messages with faults.%s", o,
         s->faults.host_failures[0] ? "host_failures" : "link_failures");
    return -1;
  }
  if (validate_shapes(s, msg, sizeof msg) != 0) {
    keytable_msgf(err, errlen, "%s: model.layers: %s", o, msg);
    return -1;
  }
  int teacher = strcmp(s->data.source, "synthetic-teacher") == 0;
  if ((s->data.stream || s->data.label_noise > 0 || s->data.input_decay > 0) && !teacher) {
    keytable_msgf(err, errlen, "%s: data.%s: only the synthetic-teacher source has a teacher to draw from "
                  "(data.source = %s)",
                  o, s->data.stream ? "stream" : s->data.label_noise > 0 ? "label_noise" : "input_decay", s->data.source);
    return -1;
  }
  if (s->data.label_noise > 0 && strcmp(s->model.type, "linear") == 0) {
    keytable_msgf(err, errlen, "%s: data.label_noise: needs class labels to replace; model.type = linear has real "
                  "targets", o);
    return -1;
  }
  if (s->model.warm_steps > 0 && (!s->model.numerics || !alg->trains_layers)) {
    keytable_msgf(err, errlen, "%s: model.warmstart_steps: a warmstart trains model.layers before the run, which %s", o,
         !s->model.numerics ? "a timing-only run (model.numerics = off) does not have"
                            : "this run.algorithm does not train");
    return -1;
  }
  if (ineffective_key(s, alg, msg, sizeof msg) != 0) {
    keytable_msgf(err, errlen, "%s: %s", o, msg);
    return -1;
  }
  if (alg->plan.validate(s, algorithm_params(s, alg), msg, sizeof msg) != 0) {
    keytable_msgf(err, errlen, "%s: %s", o, msg);
    return -1;
  }
  return 0;
}

int scenario_foreign_section(const scenario *s, const char *origin, char *err, size_t errlen)
{
  const algorithm *alg = algorithm_find(s->run.algorithm);
  xbt_assert(alg != NULL, "run.algorithm '%s' passed its key check", s->run.algorithm);
  char reads[128];
  snprintf(reads, sizeof reads, "[%s]%s%s%s", alg->name, alg->reads ? " and [" : "", alg->reads ? alg->reads : "",
           alg->reads ? "]" : "");
  for (size_t a = 0; a < algorithm_count; a++) {
    const algorithm *other = algorithm_registry[a];
    if (algorithm_reads(alg, other->name))
      continue;
    const void *params = algorithm_params(s, other);
    for (size_t i = 0; i < other->n_keys; i++)
      if (key_changed(other->keys, other->n_keys, params, other->keys[i].key)) {
        keytable_msgf(err, errlen, "%s: %s.%s: has no effect: run.algorithm = %s reads only %s (a file shared by "
                 "several algorithms runs each with --set run.algorithm=NAME)", origin ? origin : "<default>", other->name,
                 other->keys[i].key, alg->name, reads);
        return -1;
      }
  }
  return 0;
}

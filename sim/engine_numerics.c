/* engine_numerics.c - the steps of engine_run's pipeline that build the numerics a run
 * starts from: the network model.type and model.layers describe, the training and
 * held-out data (generated from the seed, or read from data.source and split), and the
 * warmstart's parameters; each checked where a user can get it wrong, before SimGrid
 * starts. */
#include "sim/engine_numerics.h"

#include <stdio.h>
#include <string.h>
#include <xbt/asserts.h>

#include "models/minibatch.h"
#include "models/rng.h"

/* The network model.type and model.layers describe: 0, or -1 with one line in err. */
int engine_numerics_model(engine_build *b)
{
  const scenario *sc = b->sc;
  char *err = b->err;
  size_t sizes[SCENARIO_MAX_LAYERS];
  size_t n = (size_t)scenario_layers(sc->model.layers, sizes, SCENARIO_MAX_LAYERS);
  net_act act = NET_ACT_TANH;
  net_act_parse(sc->model.activation, &act);
  net_loss loss = NET_LOSS_SOFTMAX;
  if (strcmp(sc->model.type, "linear") == 0)
    loss = NET_LOSS_MSE;
  else if (strcmp(sc->model.type, "logistic") == 0)
    loss = NET_LOSS_LOGISTIC;
  b->model = net_create(n, sizes, act, loss);
  if (b->model == NULL)
    snprintf(err, ENGINE_ERRLEN, "model: cannot build this network (check model.type and model.layers)");
  return b->model ? 0 : -1;
}

/* Classes a synthetic data set gets for this model: regression for linear models. */
static size_t engine_numerics_classes(const net *m)
{
  switch (net_get_loss(m)) {
  case NET_LOSS_MSE:
    return 0;
  case NET_LOSS_LOGISTIC:
    return 2;
  case NET_LOSS_SOFTMAX:
    break;
  }
  return net_n_outputs(m);
}

static int engine_numerics_check_labels(const dataset *d, const net *m, const char *path, char *err)
{
  net_loss loss = net_get_loss(m);
  if (data_dim(d) != net_n_inputs(m)) {
    snprintf(err, ENGINE_ERRLEN, "%s: the data has %zu features but model.layers starts with %zu inputs", path,
             data_dim(d), net_n_inputs(m));
    return -1;
  }
  if (loss == NET_LOSS_MSE)
    return 0;
  size_t room = loss == NET_LOSS_LOGISTIC ? 2 : net_n_outputs(m);
  if (d->n_classes == 0 || d->n_classes > room) {
    snprintf(err, ENGINE_ERRLEN, "%s: the labels %s, but the model has room for %zu classes", path,
             d->n_classes ? "have more classes" : "are not class indices", room);
    return -1;
  }
  return 0;
}

/* run.noise_scale_examples' rows: drawn from the stream's teacher with a generator of
 * their own (the other draws stay what they were), else the first training rows. */
static void engine_numerics_noise_set(engine_build *b)
{
  size_t n = (size_t)b->sc->run.noise_scale_examples;
  if (n == 0 || b->train == NULL)
    return;
  if (b->teacher) {
    gsl_rng *r = rng_create(b->sc->run.seed, RNG_ROLE_NOISE_SCALE, 0);
    b->noise = data_teacher_sample(b->teacher, n, r);
    gsl_rng_free(r);
  } else {
    b->noise = data_slice(b->train, 0, n < data_n(b->train) ? n : data_n(b->train));
  }
}

static int engine_numerics_sets(engine_build *b);

/* The training and held-out sets, when the run computes with data: generated from the
 * seed, or read from data.source and split; and the noise scale's rows. 0, or -1 with one
 * line in err. */
int engine_numerics_data(engine_build *b)
{
  int rc = engine_numerics_sets(b);
  if (rc == 0)
    engine_numerics_noise_set(b);
  return rc;
}

static int engine_numerics_sets(engine_build *b)
{
  const scenario *sc = b->sc;
  char *err = b->err;
  if (!sc->model.numerics || !b->alg->uses_data)
    return 0;
  size_t dim = net_n_inputs(b->model), classes = engine_numerics_classes(b->model);
  if (strncmp(sc->data.source, "synthetic-", 10) == 0) {
    size_t ntr = (size_t)sc->data.train, nte = (size_t)sc->data.test;
    int teacher = strcmp(sc->data.source, "synthetic-teacher") == 0;
    gsl_rng *r = rng_create(sc->run.seed, RNG_ROLE_DATA, 0);
    data_teacher *t = teacher ? data_teacher_create(dim, (size_t)sc->data.teacher_hidden, classes,
                                                    sc->data.label_noise, r)
                              : NULL;
    if (t && data_teacher_set_decay(t, sc->data.input_decay) != 0)
      xbt_die("data.input_decay: checked by the scenario");
    if (t && sc->data.stream) { /* the held-out set first: the same whatever data.train */
      b->test = data_teacher_sample(t, nte, r);
      b->train = data_teacher_sample(t, ntr, r);
      gsl_rng_free(r);
      data_set_stream(b->train, t);
      b->teacher = t;
      return 0;
    }
    dataset *all = teacher ? (t ? data_teacher_sample(t, ntr + nte, r) : NULL)
                           : data_synthetic_gaussian(ntr + nte, dim, classes, sc->data.separation, r);
    gsl_rng_free(r);
    if (all == NULL) {
      data_teacher_free(t);
      snprintf(err, ENGINE_ERRLEN, "data.source: cannot generate %s data for this model", sc->data.source);
      return -1;
    }
    b->train = data_slice(all, 0, ntr);
    b->test = data_slice(all, ntr, ntr + nte);
    data_free(all);
    data_teacher_free(t);
    return 0;
  }
  const char *path = strchr(sc->data.source, ':') + 1;
  dataset *all = strncmp(sc->data.source, "libsvm:", 7) == 0 ? data_load_libsvm(path, err, ENGINE_ERRLEN)
                                                         : data_load_csv(path, err, ENGINE_ERRLEN);
  if (all == NULL)
    return -1;
  int rc = engine_numerics_check_labels(all, b->model, path, err);
  if (rc == 0) {
    gsl_rng *r = rng_create(sc->run.seed, RNG_ROLE_SPLIT, 0);
    rc = data_split(all, sc->data.test_fraction, r, &b->train, &b->test);
    gsl_rng_free(r);
    if (rc != 0)
      snprintf(err, ENGINE_ERRLEN, "%s: %zu examples are too few to split with test_fraction %g", path, data_n(all),
               sc->data.test_fraction);
  }
  data_free(all);
  return rc;
}

/* The warmstart's parameters (model.warmstart_steps), trained before the run: 0, or -1
 * with one line in err. */
int engine_numerics_warmstart(engine_build *b)
{
  const scenario *sc = b->sc;
  char *err = b->err;
  if (sc->model.warm_steps <= 0)
    return 0;
  b->init = minibatch_warmstart(b->model, b->train, (size_t)sc->model.warm_batch, sc->model.warm_lr,
                                sc->model.warm_steps, sc->run.seed);
  if (b->init != NULL)
    return 0;
  snprintf(err, ENGINE_ERRLEN, "model.warmstart_steps: the warmstart cannot train this model on this data");
  return -1;
}

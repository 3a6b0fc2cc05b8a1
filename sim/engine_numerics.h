#ifndef SIM_ENGINE_NUMERICS_H
#define SIM_ENGINE_NUMERICS_H
/* engine_numerics.h - the pipeline's steps that build a run's model, data and warmstart
 * (engine_build.h has the pipeline). Each returns 0, or -1 with one line in b->err. */

#include "sim/engine_build.h"

/* The network model.type and model.layers describe, into b->model. */
int engine_numerics_model(engine_build *b);
/* The training and held-out sets, when the run computes with data: generated from the
 * seed, or read from data.source, checked against the model and split. */
int engine_numerics_data(engine_build *b);
/* The warmstart's parameters (model.warmstart_steps), trained before the run, into b->init. */
int engine_numerics_warmstart(engine_build *b);

#endif

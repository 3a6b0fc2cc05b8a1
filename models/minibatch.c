/* minibatch.c - a worker's minibatch draws and gradients. */
#include "models/minibatch.h"
#include "models/mem.h"

#include <stdlib.h>

#include "models/optim.h"
#include "models/rng.h"

struct minibatch {
  const net *m;
  const dataset *d;
  size_t begin, end, batch;
  gsl_rng *rng;
  net_ws *ws;
  gsl_matrix *Xb;
  double *yb;
};

static minibatch *create(const net *m, const dataset *d, size_t begin, size_t end, size_t batch, gsl_rng *rng)
{
  if (begin >= end || end > data_n(d) || batch == 0) {
    gsl_rng_free(rng);
    return NULL;
  }
  minibatch *mb = mem_calloc(1, sizeof(*mb));
  double *yb = mem_alloc(batch * sizeof(double));
  mb->m = m;
  mb->d = d;
  mb->begin = begin;
  mb->end = end;
  mb->batch = batch;
  mb->rng = rng;
  mb->ws = net_ws_create(m, batch);
  mb->Xb = gsl_matrix_alloc(batch, net_n_inputs(m));
  mb->yb = yb;
  return mb;
}

minibatch *minibatch_create(const net *m, const dataset *d, size_t begin, size_t end, size_t batch,
                            uint64_t seed, int rank)
{
  return create(m, d, begin, end, batch, rng_create(seed, RNG_ROLE_WORKER, rank));
}

void minibatch_free(minibatch *mb)
{
  if (mb == NULL)
    return;
  gsl_rng_free(mb->rng);
  net_ws_free(mb->ws);
  gsl_matrix_free(mb->Xb);
  free(mb->yb);
  free(mb);
}

int minibatch_gradient(minibatch *mb, const gsl_vector *w, gsl_vector *grad, double *loss)
{
  double l;
  data_sample_batch(mb->d, mb->begin, mb->end, mb->rng, mb->batch, mb->Xb, mb->yb);
  int rc = net_loss_grad(mb->m, w, mb->Xb, mb->yb, mb->ws, &l, grad);
  if (loss)
    *loss = l;
  return rc;
}

gsl_vector *minibatch_initial_params(const net *m, uint64_t seed)
{
  gsl_rng *r = rng_create(seed, RNG_ROLE_INIT, 0);
  gsl_vector *w = gsl_vector_alloc(net_n_params(m));
  net_init_params(m, r, w);
  gsl_rng_free(r);
  return w;
}

gsl_vector *minibatch_warmstart(const net *m, const dataset *d, size_t batch, double lr, long steps, uint64_t seed)
{
  gsl_vector *w = minibatch_initial_params(m, seed);
  if (steps <= 0)
    return w;
  minibatch *mb = create(m, d, 0, data_n(d), batch, rng_create(seed, RNG_ROLE_WARMSTART, 0));
  if (mb == NULL) {
    gsl_vector_free(w);
    return NULL;
  }
  gsl_vector *g = gsl_vector_alloc(w->size);
  int rc = 0;
  for (long k = 0; k < steps && rc == 0; k++) {
    rc = minibatch_gradient(mb, w, g, NULL);
    optim_sgd_apply(w->data, g->data, w->size, lr);
  }
  gsl_vector_free(g);
  minibatch_free(mb);
  if (rc != 0) {
    gsl_vector_free(w);
    return NULL;
  }
  return w;
}

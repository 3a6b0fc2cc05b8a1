/* bench_moe.c - what the router learns: the small GPT of models/gpt.h with every MLP a mixture of
 * E = 4 experts (models/moe.h), trained serially (gpt_loss_grad_routed, Adam) on the synthetic
 * token language, with the auxiliary loss off and on (0.01, Switch's, and 0.1), capacity factors 1.0 and 2.0, top-1 and
 * top-2. One line per case: the expert imbalance (max / mean of the assignments each expert was
 * routed, before dropping, per layer, averaged over the layers) over the first 100 steps and
 * over the last 20, the
 * dropped share of assignments (same average), the last 20 steps' mean cross-entropy without
 * the auxiliary loss, the held-out cross-entropy, and the wall time (a benchmark figure, not a
 * result). Numerics only: no SimGrid, no simulated time.
 *
 * usage: bench_moe [STEPS]   (default 300) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "models/data.h"
#include "models/gpt.h"
#include "models/optim.h"
#include "models/rng.h"

#define VOCAB 64
#define SEQ 16
#define HIDDEN 16
#define LAYERS 2
#define EXPERTS 4
#define BATCH 8
#define HELD_OUT 64
#define LR 3e-3
#define TAIL 20
#define EARLY 100

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct outcome {
  double early, imbalance, dropped, train_ce, held_ce;
} outcome;

/* One step's imbalance: max / mean of the assignments routed to each expert, averaged over the layers. */
static double imbalance_of(moe_routing *const *routes)
{
  double im = 0.0;
  for (size_t k = 0; k < LAYERS; k++) {
    size_t mx = 0, sum = 0;
    for (size_t e = 0; e < EXPERTS; e++) {
      mx = routes[k]->routed[e] > mx ? routes[k]->routed[e] : mx;
      sum += routes[k]->routed[e];
    }
    im += (double)mx / ((double)sum / EXPERTS) / LAYERS;
  }
  return im;
}

/* Adds one of the last steps' routing figures into o; returns the step's auxiliary loss. */
static double step_figures(moe_routing *const *routes, outcome *o)
{
  double aux = 0.0;
  o->imbalance += imbalance_of(routes) / TAIL;
  for (size_t k = 0; k < LAYERS; k++) {
    o->dropped += (double)routes[k]->dropped / (double)(routes[k]->n * routes[k]->top_k) / LAYERS / TAIL;
    aux += routes[k]->aux;
  }
  return aux;
}

static outcome train(size_t top_k, double cf, double aux_coef, long steps, const dataset *tr, const dataset *te)
{
  gpt_dims d = {VOCAB, SEQ, HIDDEN, 2, LAYERS, {EXPERTS, top_k, cf, aux_coef, 1}};
  size_t np = gpt_n_params(&d);
  gsl_vector *w = gsl_vector_alloc(np), *g = gsl_vector_alloc(np);
  double *m = calloc(np, sizeof(double)), *v = calloc(np, sizeof(double));
  gsl_rng *init = rng_create(1, RNG_ROLE_INIT, 0), *draw = rng_create(1, RNG_ROLE_WORKER, 0);
  gpt_init_params(&d, init, w);
  gsl_matrix *xb = gsl_matrix_alloc(BATCH, SEQ + 1);
  double *yb = malloc(BATCH * sizeof(double));
  outcome o = {0, 0, 0, 0, 0};
  moe_routing *routes[LAYERS];
  for (long t = 1; t <= steps; t++) {
    data_sample_batch(tr, 0, tr->X->size1, draw, BATCH, xb, yb);
    double loss;
    if (gpt_loss_grad_routed(&d, w, BATCH, xb->data, &loss, g, routes) != 0) {
      fprintf(stderr, "bench_moe: shapes\n");
      exit(1);
    }
    if (t <= EARLY)
      o.early += imbalance_of(routes) / EARLY;
    if (t > steps - TAIL) {
      double aux = step_figures(routes, &o);
      o.train_ce += (loss - aux) / TAIL;
    }
    for (size_t k = 0; k < LAYERS; k++)
      moe_routing_free(routes[k]);
    optim_adam_apply(w->data, m, v, g->data, np, LR, OPTIM_ADAM_B1, OPTIM_ADAM_B2, OPTIM_ADAM_EPS, t);
  }
  double acc;
  gpt_evaluate(&d, w, te->X->size1, te->X->data, &o.held_ce, &acc);
  gsl_vector_free(w);
  gsl_vector_free(g);
  free(m);
  free(v);
  free(yb);
  gsl_matrix_free(xb);
  gsl_rng_free(init);
  gsl_rng_free(draw);
  return o;
}

int main(int argc, char **argv)
{
  long steps = argc > 1 ? atol(argv[1]) : 300;
  if (steps < EARLY) {
    fprintf(stderr, "usage: bench_moe [STEPS >= %d]\n", EARLY);
    return 2;
  }
  gsl_rng *r = rng_create(1, RNG_ROLE_DATA, 0);
  dataset *all = data_synthetic_tokens(4096 + HELD_OUT, SEQ + 1, VOCAB, r); /* one language, two parts */
  dataset *tr = data_slice(all, 0, 4096), *te = data_slice(all, 4096, 4096 + HELD_OUT);
  printf("# V %d s %d h %d L %d E %d, batch %d sequences (%d tokens), Adam lr %g, %ld steps; floor %.4f nats\n",
         VOCAB, SEQ, HIDDEN, LAYERS, EXPERTS, BATCH, BATCH * SEQ, LR, steps, data_tokens_loss_floor(SEQ + 1, VOCAB));
  printf("top_k,capacity_factor,aux_loss,early_imbalance,imbalance,dropped_fraction,train_ce,held_out_ce,wall_s\n");
  static const double cfs[] = {1.0, 2.0}, auxs[] = {0.0, 0.01, 0.1};
  for (size_t k = 1; k <= 2; k++)
    for (size_t c = 0; c < 2; c++)
      for (size_t a = 0; a < 3; a++) {
        double t0 = now();
        outcome o = train(k, cfs[c], auxs[a], steps, tr, te);
        printf("%zu,%.2f,%.2f,%.4f,%.4f,%.4f,%.4f,%.4f,%.1f\n", k, cfs[c], auxs[a], o.early, o.imbalance, o.dropped,
               o.train_ce, o.held_ce, now() - t0);
        fflush(stdout);
      }
  data_free(all);
  data_free(tr);
  data_free(te);
  gsl_rng_free(r);
  return 0;
}

/* bench_grad.c - the numeric floor: N minibatch gradient evaluations (and SGD
 * updates) of an MLP in a plain sequential loop, timed with the wall clock (a
 * benchmark, not a result). dtsim's wall time for a run doing the same number of
 * gradient evaluations, divided by this, is the overhead dtsim adds to numerics.
 *
 * usage: bench_grad LAYERS BATCH EVALS EXAMPLES   e.g. bench_grad 784,256,10 32 1000 12000
 * (EXAMPLES: how many synthetic-teacher examples to generate, as dtsim does for
 * train + test, so that both pay for the same data.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/data.h"
#include "models/net.h"
#include "models/optim.h"
#include "models/rng.h"

#ifdef DTSIM_OPENBLAS
void openblas_set_num_threads(int n); /* one BLAS thread, as dtsim uses */
#endif

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
  if (argc != 5) {
    fprintf(stderr, "usage: %s LAYERS BATCH EVALS EXAMPLES\n", argv[0]);
    return 2;
  }
#ifdef DTSIM_OPENBLAS
  openblas_set_num_threads(1);
#endif
  size_t sizes[16], n = 0;
  for (char *p = strtok(argv[1], ","); p && n < 16; p = strtok(NULL, ","))
    sizes[n++] = strtoul(p, NULL, 10);
  size_t batch = strtoul(argv[2], NULL, 10), evals = strtoul(argv[3], NULL, 10), train = strtoul(argv[4], NULL, 10);
  net *m = net_create(n, sizes, NET_ACT_TANH, NET_LOSS_SOFTMAX);
  gsl_rng *r = rng_create(1, RNG_ROLE_DATA, 0);
  double t0 = now();
  dataset *d = data_synthetic_teacher(train, sizes[0], 16, sizes[n - 1], r);
  double t_data = now() - t0;
  gsl_vector *w = gsl_vector_alloc(net_n_params(m)), *g = gsl_vector_alloc(net_n_params(m));
  net_init_params(m, r, w);
  net_ws *ws = net_ws_create(m, batch);
  gsl_matrix *Xb = gsl_matrix_alloc(batch, sizes[0]);
  double *yb = malloc(batch * sizeof(double)), loss = 0;
  t0 = now();
  for (size_t i = 0; i < evals; i++) {
    data_sample_batch(d, 0, data_n(d), r, batch, Xb, yb);
    net_loss_grad(m, w, Xb, yb, ws, &loss, g);
    optim_sgd_apply(w->data, g->data, w->size, 0.01);
  }
  double t_loop = now() - t0;
  printf("gradient_evals %zu loop_s %.3f data_gen_s %.3f per_eval_ms %.3f last_loss %.6g\n", evals, t_loop, t_data,
         1e3 * t_loop / (double)evals, loss);
  free(yb);
  gsl_matrix_free(Xb);
  net_ws_free(ws);
  gsl_vector_free(w);
  gsl_vector_free(g);
  data_free(d);
  gsl_rng_free(r);
  net_free(m);
  return 0;
}

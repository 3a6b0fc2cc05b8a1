/* check_archnet.c - Check suite for models/archnet: the layout and the plan
 * accessors it relies on, gradients against central differences for dense, 2-D
 * and 1-D locally connected nets, equality with models/net on dense nets, and
 * partitioned forward/backward steps, driven as the actors drive them, against
 * the unpartitioned reference for every tiling of 1..9 machines. */

#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

#include "models/arch.h"
#include "models/archnet.h"
#include "models/net.h"
#include "models/rng.h"

#include "check_util.h"

/* As check_net.c: h = 1e-6 gives truncation ~h^2 and rounding ~1e-16/h = 1e-10
 * on O(1) losses; 1e-5 relative with a 1e-8 floor catches any wrong term. */
#define FD_STEP 1e-6
#define FD_RTOL 1e-5
#define FD_ATOL 1e-8

/* Sums that archnet computes in the same order in both runs are compared exactly.
 * GSL's CBLAS computes every dgemm/dgemv entry as one loop in k order, whatever
 * the block of columns, so dense layers are exact too; OpenBLAS may block a k-sum
 * differently for different shapes, so that build allows rounding. */
#ifdef DTSIM_OPENBLAS
#define BLAS_RTOL 1e-13
#else
#define BLAS_RTOL 0.0
#endif
/* dLoss/dA_{l-1} is summed per partition, then over partitions in rank order: a
 * different association of the same terms than the reference's single pass, so
 * gradients below the top layer may differ by a few ulps of the largest term
 * (measured: below 1e-15 of the layer's largest component). */
#define PART_RTOL 1e-12

/* |x - ref| <= rtol*|ref|: with rtol = 0, bit for bit (up to the sign of zero). */
#define ck_assert_close(x, ref, rtol)                                                          \
  ck_assert_msg(fabs((x) - (ref)) <= (rtol) * fabs(ref), "%s = %.17g, %s = %.17g, rtol %g", #x, \
                (double)(x), #ref, (double)(ref), (double)(rtol))

/* ---- nets ---- */

/* 1-D input of 7 units, dense 9-6-4. */
static arch *arch_fc(void)
{
  arch *a = arch_create();
  ck_assert_int_eq(arch_add_input(a, 7, 1, 1), 0);
  ck_assert_int_eq(arch_add_dense(a, 9), 0);
  ck_assert_int_eq(arch_add_dense(a, 6), 0);
  ck_assert_int_eq(arch_add_dense(a, 4), 0);
  return a;
}

/* 13x11x2 input; LC 3x2 window, strides 2,1, 3 channels -> 6x10x3; LC 2x3 window,
 * stride 1, 2 channels -> 5x8x2; dense 4. Windows and strides differ per axis so a
 * swapped x/y shows; tiles fit px <= 5, py <= 8, so every P in 1..9 has a tiling. */
static arch *arch_lc2d(void)
{
  arch *a = arch_create();
  ck_assert_int_eq(arch_add_input(a, 13, 11, 2), 0);
  ck_assert_int_eq(arch_add_local(a, 3, 2, 2, 1, 3), 0);
  ck_assert_int_eq(arch_add_local(a, 2, 3, 1, 1, 2), 0);
  ck_assert_int_eq(arch_add_dense(a, 4), 0);
  return a;
}

/* 1-D: 20x1x2 input; LC window 4 stride 2, 3 channels -> 9; LC window 3 stride 1,
 * 2 channels -> 7; one logistic output. */
static arch *arch_lc1d(void)
{
  arch *a = arch_create();
  ck_assert_int_eq(arch_add_input(a, 20, 1, 2), 0);
  ck_assert_int_eq(arch_add_local(a, 4, 1, 2, 1, 3), 0);
  ck_assert_int_eq(arch_add_local(a, 3, 1, 1, 1, 2), 0);
  ck_assert_int_eq(arch_add_dense(a, 1), 0);
  return a;
}

/* ---- problems ---- */

typedef struct problem {
  arch *a;
  archnet *n;
  gsl_vector *w;
  gsl_matrix *X;
  double *y;
} problem;

/* Glorot weights plus N(0, 0.3) on every parameter (non-zero biases), N(0,1)
 * inputs, random labels for the loss. */
static problem problem_make(arch *a, net_act act, net_loss loss, size_t rows, uint64_t seed)
{
  problem pb = {a, archnet_create(a, act, loss), NULL, NULL, NULL};
  ck_assert_ptr_nonnull(pb.n);
  gsl_rng *r = rng_create(seed, RNG_ROLE_INIT, 0);
  pb.w = gsl_vector_alloc(archnet_n_params(pb.n));
  archnet_init_params(pb.n, r, pb.w);
  for (size_t i = 0; i < pb.w->size; i++)
    pb.w->data[i] += gsl_ran_gaussian(r, 0.3);
  pb.X = gsl_matrix_alloc(rows, arch_units(a, 0));
  for (size_t i = 0; i < rows * pb.X->size2; i++)
    pb.X->data[i] = gsl_ran_gaussian(r, 1.0);
  pb.y = malloc(rows * sizeof *pb.y);
  size_t k = arch_units(a, arch_n_layers(a) - 1);
  for (size_t i = 0; i < rows; i++) {
    switch (loss) {
    case NET_LOSS_MSE: pb.y[i] = gsl_ran_gaussian(r, 1.0); break;
    case NET_LOSS_LOGISTIC: pb.y[i] = (double)gsl_rng_uniform_int(r, 2); break;
    case NET_LOSS_SOFTMAX: pb.y[i] = (double)gsl_rng_uniform_int(r, k); break;
    }
  }
  gsl_rng_free(r);
  return pb;
}

static void problem_free(problem *pb)
{
  archnet_free(pb->n);
  arch_free(pb->a);
  gsl_vector_free(pb->w);
  gsl_matrix_free(pb->X);
  free(pb->y);
}

static double loss_at(const problem *pb, archnet_ws *ws)
{
  double loss;
  ck_assert_int_eq(archnet_loss_grad(pb->n, pb->w, pb->X, pb->y, ws, &loss, NULL), 0);
  return loss;
}

/* ---- layout and plan accessors ---- */

/* Known answer, by hand: input 3x2x2 holding x_u = u; LC 2x2 window, stride 1, one
 * channel -> 2 units of 8 weights + bias; dense 1 (MSE), identity hidden.
 * LC unit 0 has all weights 1: its window is cells (0,0) (1,0) (0,1) (1,1) = units
 * 0,1,2,3,6,7,8,9, sum 36. LC unit 1 (x = 1) has weight 1 at k = 5 = (dy*2 + dx)*2 + ci
 * with dy = 1, dx = 0, ci = 1: cell (1,1), unit (1*3 + 1)*2 + 1 = 9, plus bias 0.5.
 * Output 1*36 + 10*9.5 = 131; target 130 gives loss 0.5*1^2. */
START_TEST(test_archnet_layout_known_answer)
{
  arch *a = arch_create();
  ck_assert_int_eq(arch_add_input(a, 3, 2, 2), 0);
  ck_assert_int_eq(arch_add_local(a, 2, 2, 1, 1, 1), 0);
  ck_assert_int_eq(arch_add_dense(a, 1), 0);
  archnet *n = archnet_create(a, NET_ACT_IDENTITY, NET_LOSS_MSE);
  ck_assert_uint_eq(archnet_n_params(n), 2 * 9 + 3);
  ck_assert_uint_eq(archnet_layer_offset(n, 1), 0);
  ck_assert_uint_eq(archnet_layer_offset(n, 2), 18);
  ck_assert_uint_eq(archnet_layer_offset(n, 3), 21);
  size_t b, e;
  archnet_param_range(n, 1, 1, 2, &b, &e);
  ck_assert_uint_eq(b, 9);
  ck_assert_uint_eq(e, 18);
  gsl_vector *w = gsl_vector_calloc(archnet_n_params(n));
  for (size_t k = 0; k < 8; k++)
    gsl_vector_set(w, k, 1.0);
  gsl_vector_set(w, 9 + 5, 1.0);
  gsl_vector_set(w, 9 + 8, 0.5);
  gsl_vector_set(w, 18, 1.0);
  gsl_vector_set(w, 19, 10.0);
  gsl_matrix *X = gsl_matrix_alloc(1, 12);
  for (size_t u = 0; u < 12; u++)
    gsl_matrix_set(X, 0, u, (double)u);
  double y = 130.0, loss;
  archnet_ws *ws = archnet_ws_create(n, 1);
  ck_assert_int_eq(archnet_loss_grad(n, w, X, &y, ws, &loss, NULL), 0);
  ck_assert_double_eq(loss, 0.5);
  archnet_ws_free(ws);
  gsl_matrix_free(X);
  gsl_vector_free(w);
  archnet_free(n);
  arch_free(a);
}
END_TEST

START_TEST(test_archnet_layout_params)
{
  arch *(*const make[])(void) = {arch_fc, arch_lc2d, arch_lc1d};
  for (size_t m = 0; m < 3; m++) {
    arch *a = make[m]();
    archnet *n = archnet_create(a, NET_ACT_TANH, m == 2 ? NET_LOSS_LOGISTIC : NET_LOSS_SOFTMAX);
    ck_assert_double_eq((double)archnet_n_params(n), arch_params(a));
    for (size_t l = 1; l < arch_n_layers(a); l++) {
      size_t b, e;
      archnet_param_range(n, l, 0, arch_units(a, l), &b, &e);
      ck_assert_uint_eq(b, archnet_layer_offset(n, l));
      ck_assert_uint_eq(e, archnet_layer_offset(n, l + 1));
      ck_assert_double_eq((double)(e - b), arch_layer_params(a, l));
    }
    archnet_free(n);
    arch_free(a);
  }
}
END_TEST

/* Runs are increasing, non-empty, owned by p per arch_plan_owner, count
 * arch_plan_units, and cover every unit exactly once; their parameter ranges add up
 * to arch_plan_params. */
static void check_runs(const archnet *n, const arch_plan *pl)
{
  const arch *a = archnet_arch(n);
  size_t P = arch_plan_parts(pl);
  for (size_t l = 0; l < arch_n_layers(a); l++) {
    size_t units = arch_units(a, l);
    unsigned char *seen = calloc(units, 1);
    for (size_t p = 0; p < P; p++) {
      size_t count = 0, last = 0;
      for (size_t k = 0; k < arch_plan_runs(pl, l, p); k++) {
        size_t b, e;
        arch_plan_run(pl, l, p, k, &b, &e);
        ck_assert_uint_lt(b, e);
        ck_assert(k == 0 || b >= last);
        last = e;
        count += e - b;
        for (size_t u = b; u < e; u++) {
          ck_assert_uint_eq(arch_plan_owner(pl, l, u), p);
          ck_assert_uint_eq(seen[u], 0);
          seen[u] = 1;
        }
      }
      ck_assert_uint_eq(count, arch_plan_units(pl, l, p));
    }
    for (size_t u = 0; u < units; u++)
      ck_assert_uint_eq(seen[u], 1);
    free(seen);
  }
  for (size_t p = 0; p < P; p++) {
    size_t params = 0;
    for (size_t l = 1; l < arch_n_layers(a); l++)
      for (size_t k = 0; k < arch_plan_runs(pl, l, p); k++) {
        size_t u0, u1, b, e;
        arch_plan_run(pl, l, p, k, &u0, &u1);
        archnet_param_range(n, l, u0, u1, &b, &e);
        params += e - b;
      }
    ck_assert_double_eq((double)params, arch_plan_params(pl, p));
  }
}

/* arch_plan_param_ranges, clipped to any window [b, e), gives exactly the parameters
 * of p's units in archnet's layout (owner per parameter from archnet_param_range),
 * as increasing ranges that neither touch nor overlap; counting (cap 0) agrees. */
static void check_param_ranges(const archnet *n, const arch_plan *pl)
{
  size_t np = archnet_n_params(n), P = arch_plan_parts(pl);
  const arch *a = archnet_arch(n);
  size_t *owner = malloc(np * sizeof(size_t));
  for (size_t p = 0; p < P; p++)
    for (size_t l = 1; l < arch_n_layers(a); l++)
      for (size_t k = 0; k < arch_plan_runs(pl, l, p); k++) {
        size_t u0, u1, b, e;
        arch_plan_run(pl, l, p, k, &u0, &u1);
        archnet_param_range(n, l, u0, u1, &b, &e);
        for (size_t i = b; i < e; i++) owner[i] = p;
      }
  size_t windows[][2] = {{0, np}, {0, np / 3}, {np / 3, 2 * np / 3}, {np / 2, np}, {5, 6}};
  size_t rb[256], re[256];
  for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++) {
    size_t wb = windows[w][0], we = windows[w][1], covered = 0;
    for (size_t p = 0; p < P; p++) {
      size_t count = arch_plan_param_ranges(pl, p, wb, we, rb, re, 256);
      ck_assert_uint_le(count, 256);
      ck_assert_uint_eq(arch_plan_param_ranges(pl, p, wb, we, NULL, NULL, 0), count);
      for (size_t r = 0; r < count; r++) {
        ck_assert_uint_lt(rb[r], re[r]);
        ck_assert(r == 0 || rb[r] > re[r - 1]);
        ck_assert_uint_ge(rb[r], wb);
        ck_assert_uint_le(re[r], we);
        for (size_t i = rb[r]; i < re[r]; i++) ck_assert_uint_eq(owner[i], p);
        covered += re[r] - rb[r];
      }
    }
    ck_assert_uint_eq(covered, we - wb); /* every parameter of the window, once */
  }
  free(owner);
}

START_TEST(test_archnet_plan_param_ranges)
{
  arch *(*const make[])(void) = {arch_fc, arch_lc2d, arch_lc1d};
  for (size_t m = 0; m < 3; m++) {
    arch *a = make[m]();
    archnet *n = archnet_create(a, NET_ACT_TANH, m == 2 ? NET_LOSS_LOGISTIC : NET_LOSS_SOFTMAX);
    for (size_t px = 1; px <= 9; px++)
      for (size_t py = 1; px * py <= 9; py++) {
        arch_plan *pl = arch_plan_create(a, px, py);
        if (pl == NULL) continue;
        check_param_ranges(n, pl);
        arch_plan_free(pl);
      }
    archnet_free(n);
    arch_free(a);
  }
}
END_TEST

START_TEST(test_archnet_plan_runs)
{
  arch *(*const make[])(void) = {arch_fc, arch_lc2d, arch_lc1d};
  for (size_t m = 0; m < 3; m++) {
    arch *a = make[m]();
    archnet *n = archnet_create(a, NET_ACT_TANH, m == 2 ? NET_LOSS_LOGISTIC : NET_LOSS_SOFTMAX);
    for (size_t px = 1; px <= 9; px++)
      for (size_t py = 1; px * py <= 9; py++) {
        arch_plan *pl = arch_plan_create(a, px, py);
        if (pl == NULL) continue;
        ck_assert_ptr_eq(arch_plan_arch(pl), a);
        check_runs(n, pl);
        arch_plan_free(pl);
      }
    archnet_free(n);
    arch_free(a);
  }
}
END_TEST

/* Tile owners on a virtual net: 100 columns over 9 tiles of 11 or 12 (floor(i*100/9)),
 * so x = 11 is the first cell of tile 1 and x = 99 the last of tile 8. */
START_TEST(test_archnet_plan_owner_virtual)
{
  const arch *a = arch_virtual_find("image-80m");
  arch_plan *pl = arch_plan_create(a, 9, 9);
  ck_assert_uint_eq(arch_plan_owner(pl, 0, (0 * 100 + 10) * 3 + 2), 0);
  ck_assert_uint_eq(arch_plan_owner(pl, 0, (0 * 100 + 11) * 3), 1);
  ck_assert_uint_eq(arch_plan_owner(pl, 0, (11 * 100 + 99) * 3 + 1), 9 + 8);
  ck_assert_uint_eq(arch_plan_owner(pl, 0, 100 * 100 * 3 - 1), 80);
  /* LC1 is 91x91x8; p = 40 is tile (4, 4), rows [floor(4*91/9), floor(5*91/9)) = [40, 50):
   * 10 runs of columns [40, 50) times 8 channels. */
  ck_assert_uint_eq(arch_plan_runs(pl, 1, 40), 10);
  size_t b, e;
  arch_plan_run(pl, 1, 40, 3, &b, &e);
  ck_assert_uint_eq(b, (43 * 91 + 40) * 8);
  ck_assert_uint_eq(e, (43 * 91 + 50) * 8);
  arch_plan_free(pl);
}
END_TEST

/* ---- gradient against central differences ---- */

static void check_gradient(arch *a, net_act act, net_loss kind, size_t rows, size_t max_batch)
{
  problem pb = problem_make(a, act, kind, rows, 11);
  size_t np = archnet_n_params(pb.n);
  gsl_vector *g = gsl_vector_alloc(np);
  archnet_ws *ws = archnet_ws_create(pb.n, max_batch);
  double loss;
  ck_assert_int_eq(archnet_loss_grad(pb.n, pb.w, pb.X, pb.y, ws, &loss, g), 0);
  ck_assert_double_eq(loss, loss_at(&pb, ws));
  for (size_t i = 0; i < np; i++) {
    double wi = gsl_vector_get(pb.w, i);
    gsl_vector_set(pb.w, i, wi + FD_STEP);
    double up = loss_at(&pb, ws);
    gsl_vector_set(pb.w, i, wi - FD_STEP);
    double down = loss_at(&pb, ws);
    gsl_vector_set(pb.w, i, wi);
    double fd = (up - down) / (2 * FD_STEP), gi = gsl_vector_get(g, i);
    ck_assert_double_eq_tol(gi, fd, FD_ATOL + FD_RTOL * fmax(fabs(gi), fabs(fd)));
  }
  archnet_ws_free(ws);
  gsl_vector_free(g);
  problem_free(&pb);
}

START_TEST(test_archnet_gradient_dense)
{
  check_gradient(arch_fc(), NET_ACT_TANH, NET_LOSS_SOFTMAX, 6, 6);
}
END_TEST

START_TEST(test_archnet_gradient_lc2d)
{
  check_gradient(arch_lc2d(), NET_ACT_SIGMOID, NET_LOSS_SOFTMAX, 4, 7);
}
END_TEST

START_TEST(test_archnet_gradient_lc1d)
{
  check_gradient(arch_lc1d(), NET_ACT_TANH, NET_LOSS_LOGISTIC, 5, 5);
}
END_TEST

/* MSE on an LC net, one example in a larger workspace. */
START_TEST(test_archnet_gradient_lc_mse)
{
  arch *a = arch_create();
  ck_assert_int_eq(arch_add_input(a, 6, 5, 1), 0);
  ck_assert_int_eq(arch_add_local(a, 2, 2, 2, 1, 2), 0);
  ck_assert_int_eq(arch_add_dense(a, 1), 0);
  check_gradient(a, NET_ACT_TANH, NET_LOSS_MSE, 1, 4);
}
END_TEST

/* ---- dense nets equal models/net ---- */

/* Index in net.c's layout of archnet index i, for dense layers: archnet keeps
 * [W_j, b_j] per unit j, net.c W (row-major) then b per layer. */
static size_t net_index(const archnet *an, const net *nn, size_t i)
{
  size_t l = 1;
  while (i >= archnet_layer_offset(an, l + 1))
    l++;
  size_t n_in = net_layer_size(nn, l - 1), r = i - archnet_layer_offset(an, l);
  size_t j = r / (n_in + 1), k = r % (n_in + 1), off = net_layer_offset(nn, l - 1);
  return k < n_in ? off + j * n_in + k : off + n_in * net_layer_size(nn, l) + j;
}

static void check_equals_net(size_t n_sizes, const size_t *sizes, net_act act, net_loss kind, size_t rows)
{
  arch *a = arch_create();
  ck_assert_int_eq(arch_add_input(a, sizes[0], 1, 1), 0);
  for (size_t i = 1; i < n_sizes; i++)
    ck_assert_int_eq(arch_add_dense(a, sizes[i]), 0);
  problem pb = problem_make(a, act, kind, rows, 5);
  net *nn = net_create(n_sizes, sizes, act, kind);
  size_t np = archnet_n_params(pb.n);
  ck_assert_uint_eq(np, net_n_params(nn));
  gsl_vector *w0 = gsl_vector_alloc(np), *nw0 = gsl_vector_alloc(np);
  gsl_vector *nw = gsl_vector_alloc(np), *g = gsl_vector_alloc(np), *ng = gsl_vector_alloc(np);
  /* Same seed: the same draws in the same order. */
  gsl_rng *r = rng_create(5, RNG_ROLE_INIT, 0);
  archnet_init_params(pb.n, r, w0);
  gsl_rng *r2 = rng_create(5, RNG_ROLE_INIT, 0);
  net_init_params(nn, r2, nw0);
  for (size_t i = 0; i < np; i++) {
    ck_assert_double_eq(gsl_vector_get(w0, i), gsl_vector_get(nw0, net_index(pb.n, nn, i)));
    gsl_vector_set(nw, net_index(pb.n, nn, i), gsl_vector_get(pb.w, i));
  }
  archnet_ws *ws = archnet_ws_create(pb.n, rows);
  net_ws *nws = net_ws_create(nn, rows);
  double loss, nloss;
  ck_assert_int_eq(archnet_loss_grad(pb.n, pb.w, pb.X, pb.y, ws, &loss, g), 0);
  ck_assert_int_eq(net_loss_grad(nn, nw, pb.X, pb.y, nws, &nloss, ng), 0);
  ck_assert_close(loss, nloss, BLAS_RTOL);
  for (size_t i = 0; i < np; i++) {
    double gi = gsl_vector_get(g, i), ngi = gsl_vector_get(ng, net_index(pb.n, nn, i));
    ck_assert_close(gi, ngi, BLAS_RTOL);
  }
  double acc, nacc;
  ck_assert_int_eq(archnet_evaluate(pb.n, pb.w, pb.X, pb.y, ws, &loss, &acc), 0);
  ck_assert_int_eq(net_evaluate(nn, nw, pb.X, pb.y, nws, &nloss, &nacc), 0);
  ck_assert_close(loss, nloss, BLAS_RTOL);
  ck_assert_double_eq(acc, nacc);
  net_ws_free(nws);
  archnet_ws_free(ws);
  gsl_rng_free(r);
  gsl_rng_free(r2);
  gsl_vector_free(w0);
  gsl_vector_free(nw0);
  gsl_vector_free(nw);
  gsl_vector_free(g);
  gsl_vector_free(ng);
  net_free(nn);
  problem_free(&pb);
}

START_TEST(test_archnet_net_softmax)
{
  static const size_t sizes[] = {5, 7, 6, 3};
  check_equals_net(4, sizes, NET_ACT_TANH, NET_LOSS_SOFTMAX, 9);
}
END_TEST

START_TEST(test_archnet_net_mse)
{
  static const size_t sizes[] = {4, 6, 1};
  check_equals_net(3, sizes, NET_ACT_SIGMOID, NET_LOSS_MSE, 8);
}
END_TEST

START_TEST(test_archnet_net_logistic)
{
  static const size_t sizes[] = {3, 5, 4, 1};
  check_equals_net(4, sizes, NET_ACT_RELU, NET_LOSS_LOGISTIC, 7);
}
END_TEST

/* ---- partitioned steps against the reference ---- */

/* Receptive field of p in layer l: the units of layer l-1 that p's units of l read
 * (from the shapes, independently of archnet). need[u] = 1 for those. */
static void receptive_field(const arch_plan *pl, size_t l, size_t p, unsigned char *need)
{
  const arch *a = arch_plan_arch(pl);
  const arch_layer *L = arch_layer_at(a, l), *in = arch_layer_at(a, l - 1);
  memset(need, 0, arch_units(a, l - 1));
  for (size_t k = 0; k < arch_plan_runs(pl, l, p); k++) {
    size_t u0, u1;
    arch_plan_run(pl, l, p, k, &u0, &u1);
    for (size_t u = u0; u < u1; u++) {
      if (L->kind == ARCH_DENSE) {
        memset(need, 1, arch_units(a, l - 1));
        return;
      }
      size_t cell = u / L->ch, x = cell % L->gx, y = cell / L->gx;
      for (size_t dy = 0; dy < L->ry; dy++)
        for (size_t dx = 0; dx < L->rx; dx++)
          for (size_t c = 0; c < in->ch; c++)
            need[((y * L->sy + dy) * in->gx + x * L->sx + dx) * in->ch + c] = 1;
    }
  }
}

/* keep[u] = 1 for the units of layer l-1 that p may read: its own plus the field.
 * Checks that the field's units owned by each q != p number arch_plan_halo(l, p, q). */
static void allowed_reads(const arch_plan *pl, size_t l, size_t p, unsigned char *need, unsigned char *keep)
{
  size_t units = arch_units(arch_plan_arch(pl), l - 1), P = arch_plan_parts(pl);
  receptive_field(pl, l, p, need);
  for (size_t q = 0; q < P; q++) {
    size_t count = 0;
    for (size_t u = 0; u < units; u++)
      count += q != p && need[u] && arch_plan_owner(pl, l - 1, u) == q;
    ck_assert_uint_eq(count, arch_plan_halo(pl, l, p, q));
  }
  for (size_t u = 0; u < units; u++)
    keep[u] = need[u] || arch_plan_owner(pl, l - 1, u) == p;
}

/* A copy of M with NaN in the columns where cols[u] == 0. */
static void poison_copy(const gsl_matrix *M, const unsigned char *cols, gsl_matrix *out)
{
  for (size_t i = 0; i < M->size1; i++)
    for (size_t u = 0; u < M->size2; u++)
      gsl_matrix_set(out, i, u, cols[u] ? gsl_matrix_get(M, i, u) : NAN);
}

static void own_columns(const arch_plan *pl, size_t l, size_t p, unsigned char *own)
{
  for (size_t u = 0; u < arch_units(arch_plan_arch(pl), l); u++)
    own[u] = arch_plan_owner(pl, l, u) == p;
}

/* Columns outside own are bit-identical in M and its earlier copy S; those in own finite. */
static void check_writes(const gsl_matrix *M, const gsl_matrix *S, const unsigned char *own)
{
  for (size_t i = 0; i < M->size1; i++)
    for (size_t u = 0; u < M->size2; u++) {
      double m = gsl_matrix_get(M, i, u), s = gsl_matrix_get(S, i, u);
      if (own[u])
        ck_assert(isfinite(m));
      else
        ck_assert(memcmp(&m, &s, sizeof m) == 0);
    }
}

static gsl_matrix *nan_matrix(size_t rows, size_t cols)
{
  gsl_matrix *m = gsl_matrix_alloc(rows, cols);
  gsl_matrix_set_all(m, NAN);
  return m;
}

/* One batch through the partitioned steps in the actors' order, each step checked
 * for what it reads (everything else NaN) and writes (nothing else changes);
 * returns the loss and fills grad. */
static double run_partitioned(const problem *pb, const arch_plan *pl, gsl_vector *grad)
{
  const archnet *n = pb->n;
  size_t L = arch_n_layers(pb->a) - 1, P = arch_plan_parts(pl), rows = pb->X->size1;
  gsl_matrix **A = calloc(L + 1, sizeof *A), **D = calloc(L + 1, sizeof *D);
  A[0] = gsl_matrix_alloc(rows, arch_units(pb->a, 0));
  gsl_matrix_memcpy(A[0], pb->X);
  for (size_t l = 1; l <= L; l++) {
    A[l] = nan_matrix(rows, arch_units(pb->a, l));
    D[l] = nan_matrix(rows, arch_units(pb->a, l));
  }
  gsl_vector_set_all(grad, NAN);
  gsl_vector *gsnap = gsl_vector_alloc(grad->size);
  double loss = NAN;

  for (size_t l = 1; l <= L; l++) {
    size_t nin = arch_units(pb->a, l - 1), nout = arch_units(pb->a, l);
    unsigned char *need = malloc(nin), *keep = malloc(nin), *own = malloc(nout);
    gsl_matrix *Ap = gsl_matrix_alloc(rows, nin), *snap = gsl_matrix_alloc(rows, nout);
    gsl_matrix *clean = gsl_matrix_alloc(rows, nout);
    for (size_t p = 0; p < P; p++) {
      allowed_reads(pl, l, p, need, keep);
      own_columns(pl, l, p, own);
      poison_copy(A[l - 1], keep, Ap);
      gsl_matrix_memcpy(snap, A[l]);
      gsl_matrix_memcpy(clean, A[l]);
      ck_assert_int_eq(archnet_forward_part(n, pl, l, p, pb->w, Ap, A[l]), 0);
      check_writes(A[l], snap, own);
      ck_assert_int_eq(archnet_forward_part(n, pl, l, p, pb->w, A[l - 1], clean), 0);
      for (size_t i = 0; i < rows * nout; i++)
        ck_assert(memcmp(&A[l]->data[i], &clean->data[i], sizeof(double)) == 0);
    }
    free(need);
    free(keep);
    free(own);
    gsl_matrix_free(Ap);
    gsl_matrix_free(snap);
    gsl_matrix_free(clean);
  }

  /* The logits A[L] are gathered (here: shared); every partition sees the same loss. */
  {
    size_t nout = arch_units(pb->a, L);
    unsigned char *own = malloc(nout);
    gsl_matrix *snap = gsl_matrix_alloc(rows, nout);
    for (size_t p = 0; p < P; p++) {
      double lp;
      own_columns(pl, L, p, own);
      gsl_matrix_memcpy(snap, D[L]);
      ck_assert_int_eq(archnet_output_part(n, pl, p, A[L], pb->y, &lp, D[L]), 0);
      check_writes(D[L], snap, own);
      if (p == 0) loss = lp;
      ck_assert(memcmp(&lp, &loss, sizeof lp) == 0);
    }
    free(own);
    gsl_matrix_free(snap);
  }

  for (size_t l = L; l >= 1; l--) {
    size_t nin = arch_units(pb->a, l - 1), nout = arch_units(pb->a, l);
    unsigned char *need = malloc(nin), *keep = malloc(nin), *own = malloc(nout), *own_in = malloc(nin);
    gsl_matrix *Ap = gsl_matrix_alloc(rows, nin), *Al = gsl_matrix_alloc(rows, nout);
    gsl_matrix *Dl = gsl_matrix_alloc(rows, nout), *snap = gsl_matrix_alloc(rows, nin);
    gsl_matrix **parts = calloc(P, sizeof *parts);
    const gsl_matrix **sent = calloc(P, sizeof *sent);
    for (size_t p = 0; p < P; p++) {
      allowed_reads(pl, l, p, need, keep);
      own_columns(pl, l, p, own);
      poison_copy(A[l - 1], keep, Ap);
      poison_copy(A[l], own, Al);
      poison_copy(D[l], own, Dl);
      gsl_vector_memcpy(gsnap, grad);
      if (l > 1) parts[p] = nan_matrix(rows, nin);
      ck_assert_int_eq(archnet_backward_part(n, pl, l, p, pb->w, Ap, Al, Dl, grad, parts[p]), 0);
      /* D_l now holds dLoss/dZ_l in p's columns: keep it as p would. */
      for (size_t i = 0; i < rows; i++)
        for (size_t u = 0; u < nout; u++)
          if (own[u]) gsl_matrix_set(D[l], i, u, gsl_matrix_get(Dl, i, u));
      /* grad changed exactly on p's parameters. */
      for (size_t k = 0; k < arch_plan_runs(pl, l, p); k++) {
        size_t u0, u1, b, e;
        arch_plan_run(pl, l, p, k, &u0, &u1);
        archnet_param_range(n, l, u0, u1, &b, &e);
        for (size_t i = b; i < e; i++) {
          ck_assert(isfinite(gsl_vector_get(grad, i)));
          gsl_vector_set(gsnap, i, gsl_vector_get(grad, i));
        }
      }
      ck_assert(memcmp(gsnap->data, grad->data, grad->size * sizeof(double)) == 0);
      /* The contribution is finite, and 0 outside p's receptive field, so sending
       * only the halo loses nothing. */
      for (size_t i = 0; l > 1 && i < rows; i++)
        for (size_t u = 0; u < nin; u++) {
          double v = gsl_matrix_get(parts[p], i, u);
          ck_assert(isfinite(v));
          if (!need[u]) ck_assert(v == 0.0);
        }
    }
    for (size_t q = 0; l > 1 && q < P; q++) {
      for (size_t p = 0; p < P; p++)
        sent[p] = p == q || arch_plan_halo(pl, l, p, q) > 0 ? parts[p] : NULL;
      own_columns(pl, l - 1, q, own_in);
      gsl_matrix_memcpy(snap, D[l - 1]);
      ck_assert_int_eq(archnet_sum_parts(n, pl, l, q, sent, D[l - 1]), 0);
      check_writes(D[l - 1], snap, own_in);
    }
    for (size_t p = 0; p < P; p++)
      gsl_matrix_free(parts[p]);
    free(parts);
    free(sent);
    free(need);
    free(keep);
    free(own);
    free(own_in);
    gsl_matrix_free(Ap);
    gsl_matrix_free(Al);
    gsl_matrix_free(Dl);
    gsl_matrix_free(snap);
  }
  for (size_t i = 0; i < grad->size; i++)
    ck_assert(isfinite(gsl_vector_get(grad, i)));
  for (size_t l = 0; l <= L; l++) {
    gsl_matrix_free(A[l]);
    gsl_matrix_free(D[l]);
  }
  free(A);
  free(D);
  gsl_vector_free(gsnap);
  return loss;
}

/* Largest |g_part - g_ref| over a layer, relative to the layer's largest |g_ref|. */
static double layer_rel_err(const archnet *n, size_t l, const gsl_vector *g, const gsl_vector *ref)
{
  double diff = 0.0, scale = 0.0;
  for (size_t i = archnet_layer_offset(n, l); i < archnet_layer_offset(n, l + 1); i++) {
    diff = fmax(diff, fabs(gsl_vector_get(g, i) - gsl_vector_get(ref, i)));
    scale = fmax(scale, fabs(gsl_vector_get(ref, i)));
  }
  return scale > 0 ? diff / scale : diff;
}

/* For every tiling px x py of 1..9 machines that arch_plan_create accepts: the same
 * loss bit for bit, the same top-layer gradient bit for bit (both come from
 * per-unit sums in the reference's order), the lower layers within PART_RTOL,
 * and everything bit for bit for P = 1. Returns the number of tilings and marks
 * the machine counts seen. */
static size_t check_partitioned(arch *a, net_act act, net_loss kind, size_t rows, int *seen_P)
{
  problem pb = problem_make(a, act, kind, rows, 23);
  size_t np = archnet_n_params(pb.n), L = arch_n_layers(a) - 1, plans = 0;
  gsl_vector *ref = gsl_vector_alloc(np), *g = gsl_vector_alloc(np);
  archnet_ws *ws = archnet_ws_create(pb.n, rows);
  double ref_loss;
  ck_assert_int_eq(archnet_loss_grad(pb.n, pb.w, pb.X, pb.y, ws, &ref_loss, ref), 0);
  for (size_t px = 1; px <= 9; px++)
    for (size_t py = 1; px * py <= 9; py++) {
      arch_plan *pl = arch_plan_create(a, px, py);
      if (pl == NULL) continue;
      plans++;
      seen_P[px * py] = 1;
      double loss = run_partitioned(&pb, pl, g);
      ck_assert_close(loss, ref_loss, BLAS_RTOL);
      for (size_t l = 1; l <= L; l++) {
        double tol = l == L ? BLAS_RTOL : px * py == 1 ? BLAS_RTOL : PART_RTOL;
        ck_assert_double_le(layer_rel_err(pb.n, l, g, ref), tol);
      }
      arch_plan_free(pl);
    }
  archnet_ws_free(ws);
  gsl_vector_free(ref);
  gsl_vector_free(g);
  problem_free(&pb);
  return plans;
}

/* Dense layers split by units, 4 outputs over up to 9 machines (some own none). */
START_TEST(test_archnet_partition_fc)
{
  int seen[10] = {0};
  /* No layer is tiled, so every px x py with px*py <= 9 is accepted: sum over
   * px = 1..9 of floor(9/px) = 9+4+3+2+1+1+1+1+1 = 23. */
  ck_assert_uint_eq(check_partitioned(arch_fc(), NET_ACT_TANH, NET_LOSS_SOFTMAX, 5, seen), 23);
  for (int P = 1; P <= 9; P++)
    ck_assert_int_eq(seen[P], 1);
}
END_TEST

START_TEST(test_archnet_partition_lc2d)
{
  int seen[10] = {0};
  /* LC2 is 5x8: px <= 5, py <= 8 and px*py <= 9: 8 + 4 + 3 + 2 + 1 = 18 tilings. */
  ck_assert_uint_eq(check_partitioned(arch_lc2d(), NET_ACT_SIGMOID, NET_LOSS_SOFTMAX, 4, seen), 18);
  for (int P = 1; P <= 9; P++)
    ck_assert_int_eq(seen[P], 1);
}
END_TEST

START_TEST(test_archnet_partition_lc1d)
{
  int seen[10] = {0};
  /* A 1-D grid tiles as px x 1 only; LC2 has 7 cells: P = 1..7. */
  ck_assert_uint_eq(check_partitioned(arch_lc1d(), NET_ACT_RELU, NET_LOSS_LOGISTIC, 3, seen), 7);
  for (int P = 1; P <= 7; P++)
    ck_assert_int_eq(seen[P], 1);
}
END_TEST

/* ---- limits and invariants ---- */

START_TEST(test_archnet_create_rejects)
{
  arch *a = arch_create();
  ck_assert_ptr_null(archnet_create(a, NET_ACT_TANH, NET_LOSS_MSE));
  ck_assert_int_eq(arch_add_input(a, 4, 1, 1), 0);
  ck_assert_ptr_null(archnet_create(a, NET_ACT_TANH, NET_LOSS_MSE));
  ck_assert_int_eq(arch_add_dense(a, 3), 0);
  ck_assert_ptr_null(archnet_create(a, NET_ACT_TANH, NET_LOSS_MSE));
  ck_assert_ptr_null(archnet_create(a, NET_ACT_TANH, NET_LOSS_LOGISTIC));
  ck_assert_ptr_null(archnet_create(a, (net_act)99, NET_LOSS_SOFTMAX));
  archnet *n = archnet_create(a, NET_ACT_TANH, NET_LOSS_SOFTMAX);
  ck_assert_ptr_nonnull(n);
  ck_assert_ptr_null(archnet_ws_create(n, 0));
  archnet_free(n);
  archnet_free(NULL);
  archnet_ws_free(NULL);
  arch_free(a);
}
END_TEST

START_TEST(test_archnet_shapes)
{
  problem pb = problem_make(arch_lc2d(), NET_ACT_TANH, NET_LOSS_SOFTMAX, 3, 1);
  archnet_ws *ws = archnet_ws_create(pb.n, 2);
  double loss;
  /* 3 rows do not fit a workspace of 2. */
  ck_assert_int_eq(archnet_loss_grad(pb.n, pb.w, pb.X, pb.y, ws, &loss, NULL), -1);
  arch_plan *pl = arch_plan_create(pb.a, 2, 2);
  gsl_matrix *A1 = gsl_matrix_alloc(3, arch_units(pb.a, 1)), *bad = gsl_matrix_alloc(3, 5);
  gsl_matrix *short_rows = gsl_matrix_alloc(2, arch_units(pb.a, 1));
  ck_assert_int_eq(archnet_forward_part(pb.n, pl, 1, 0, pb.w, pb.X, A1), 0);
  ck_assert_int_eq(archnet_forward_part(pb.n, pl, 1, 0, pb.w, pb.X, bad), -1);
  ck_assert_int_eq(archnet_forward_part(pb.n, pl, 1, 0, pb.w, pb.X, short_rows), -1);
  ck_assert_int_eq(archnet_forward_part(pb.n, pl, 2, 0, pb.w, pb.X, A1), -1);
  gsl_matrix_free(A1);
  gsl_matrix_free(bad);
  gsl_matrix_free(short_rows);
  arch_plan_free(pl);
  archnet_ws_free(ws);
  problem_free(&pb);
}
END_TEST

START_TEST(test_archnet_plan_of_other_arch)
{
  problem pb = problem_make(arch_lc2d(), NET_ACT_TANH, NET_LOSS_SOFTMAX, 2, 1);
  arch *other = arch_lc2d();
  arch_plan *pl = arch_plan_create(other, 1, 1);
  gsl_matrix *A1 = gsl_matrix_alloc(2, arch_units(pb.a, 1));
  (void)archnet_forward_part(pb.n, pl, 1, 0, pb.w, pb.X, A1);
}
END_TEST

START_TEST(test_archnet_run_out_of_range)
{
  arch *a = arch_lc2d();
  arch_plan *pl = arch_plan_create(a, 2, 2);
  size_t b, e;
  arch_plan_run(pl, 1, 0, arch_plan_runs(pl, 1, 0), &b, &e);
}
END_TEST

Suite *archnet_suite(void)
{
  Suite *s = suite_create("archnet");
  ADD_TCASE(s, "create", test_archnet_create_rejects, test_archnet_shapes);
  ADD_TCASE(s, "layout", test_archnet_layout_known_answer, test_archnet_layout_params);
  ADD_TCASE(s, "plan", test_archnet_plan_runs, test_archnet_plan_param_ranges, test_archnet_plan_owner_virtual);
  ADD_TCASE(s, "gradient", test_archnet_gradient_dense, test_archnet_gradient_lc2d, test_archnet_gradient_lc1d,
            test_archnet_gradient_lc_mse);
  ADD_TCASE(s, "net", test_archnet_net_softmax, test_archnet_net_mse, test_archnet_net_logistic);
  ADD_TCASE(s, "partition", test_archnet_partition_fc, test_archnet_partition_lc2d, test_archnet_partition_lc1d);
  TCase *tc = tcase_create("invariants");
  tcase_add_test_raise_signal(tc, test_archnet_plan_of_other_arch, SIGABRT);
  tcase_add_test_raise_signal(tc, test_archnet_run_out_of_range, SIGABRT);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(archnet_suite)

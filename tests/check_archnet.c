/* check_archnet.c - Check suite for models/archnet: the layout and the plan
 * accessors it relies on, gradients against central differences for dense, 2-D
 * and 1-D locally connected nets, equality with models/net on dense nets, limits.
 * The partitioned steps against the reference are check_archnet_partition.c's. */

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

#include "archnet_util.h"
#include "check_util.h"

/* As check_net.c: h = 1e-6 gives truncation ~h^2 and rounding ~1e-16/h = 1e-10
 * on O(1) losses; 1e-5 relative with a 1e-8 floor catches any wrong term. */
#define FD_STEP 1e-6
#define FD_RTOL 1e-5
#define FD_ATOL 1e-8

/* ---- problems ---- */

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
  TCase *tc = tcase_create("invariants");
  tcase_add_test_raise_signal(tc, test_archnet_plan_of_other_arch, SIGABRT);
  tcase_add_test_raise_signal(tc, test_archnet_run_out_of_range, SIGABRT);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(archnet_suite)

/* check_net.c - Check suite for models/net: gradients against central
 * differences for every loss and hidden activation, known answers, numerical
 * stability of the losses, evaluation, initialisation and shape checks. */

#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

#include "models/net.h"
#include "models/rng.h"

#include "check_util.h"

/* Tolerances, each with where it comes from. */
/* Central differences with h = 1e-6 have truncation error ~h^2 and rounding
 * error ~1e-16/h = 1e-10 on O(1) losses, so 1e-5 relative (with a 1e-8 floor
 * for gradients near zero) leaves a wide margin while still catching any
 * wrong term in the backward pass, which shows up at O(1). */
#define FD_STEP 1e-6
#define FD_RTOL 1e-5
#define FD_ATOL 1e-8
/* TOL_KNOWN: hand values of magnitude <= 3 (1.0625, 2.75, ln 5, 11/14...) against a few
 * floating-point operations (a two-term dot product, a log, a mean), each rounding by
 * <= u |x| (u = 2^-53: 3.3e-16 at 3); 1e-15 holds several of them. */
#define TOL_KNOWN 1e-15
/* TOL_ORDER: the mean of 4 losses summed in two chunks or one differs by the order of 4
 * additions, <= 3 u sum ~ 7e-16 on these O(1) losses. */
#define TOL_ORDER 1e-15

/* Labels for a network with k outputs: class indices for softmax, {0,1} for
 * logistic, N(0,1) targets for MSE. */
static void random_labels(const net *n, gsl_rng *r, double *y, size_t rows)
{
  for (size_t i = 0; i < rows; i++) {
    switch (net_get_loss(n)) {
    case NET_LOSS_MSE: y[i] = gsl_ran_gaussian(r, 1.0); break;
    case NET_LOSS_LOGISTIC: y[i] = (double)gsl_rng_uniform_int(r, 2); break;
    case NET_LOSS_SOFTMAX: y[i] = (double)gsl_rng_uniform_int(r, net_n_outputs(n)); break;
    }
  }
}

static double loss_at(const net *n, const gsl_vector *w, const gsl_matrix *X, const double *y, net_ws *ws)
{
  double loss;
  ck_assert_int_eq(net_loss_grad(n, w, X, y, ws, &loss, NULL), 0);
  return loss;
}

/* Builds a network, random parameters and a batch of `rows` (workspace of
 * max_batch >= rows), and compares every gradient component with central
 * differences. */
static void check_gradient(size_t n_sizes, const size_t *sizes, net_act act, net_loss kind, size_t rows,
                           size_t max_batch)
{
  net *n = net_create(n_sizes, sizes, act, kind);
  ck_assert_ptr_nonnull(n);
  gsl_rng *r = rng_create(11, RNG_ROLE_INIT, 0);
  size_t p = net_n_params(n);
  gsl_vector *w = gsl_vector_alloc(p), *g = gsl_vector_alloc(p);
  gsl_matrix *X = gsl_matrix_alloc(rows, net_n_inputs(n));
  double *y = malloc(rows * sizeof *y);
  net_init_params(n, r, w);
  /* Non-zero biases, so their gradients and their effect on kinks are exercised. */
  for (size_t i = 0; i < p; i++)
    gsl_vector_set(w, i, gsl_vector_get(w, i) + gsl_ran_gaussian(r, 0.3));
  for (size_t i = 0; i < X->size1 * X->size2; i++)
    X->data[i] = gsl_ran_gaussian(r, 1.0);
  random_labels(n, r, y, rows);

  net_ws *ws = net_ws_create(n, max_batch);
  double loss;
  ck_assert_int_eq(net_loss_grad(n, w, X, y, ws, &loss, g), 0);
  ck_assert_double_eq(loss, loss_at(n, w, X, y, ws));
  for (size_t i = 0; i < p; i++) {
    double wi = gsl_vector_get(w, i);
    gsl_vector_set(w, i, wi + FD_STEP);
    double up = loss_at(n, w, X, y, ws);
    gsl_vector_set(w, i, wi - FD_STEP);
    double down = loss_at(n, w, X, y, ws);
    gsl_vector_set(w, i, wi);
    double fd = (up - down) / (2 * FD_STEP), gi = gsl_vector_get(g, i);
    ck_assert_double_eq_tol(gi, fd, FD_ATOL + FD_RTOL * fmax(fabs(gi), fabs(fd)));
  }
  net_ws_free(ws);
  free(y);
  gsl_matrix_free(X);
  gsl_vector_free(w);
  gsl_vector_free(g);
  gsl_rng_free(r);
  net_free(n);
}

/* ---- gradient ---- */

START_TEST(test_net_gradient_linear)
{
  static const size_t sizes[] = {4, 1};
  check_gradient(2, sizes, NET_ACT_IDENTITY, NET_LOSS_MSE, 9, 9);
}
END_TEST

START_TEST(test_net_gradient_logistic)
{
  static const size_t sizes[] = {5, 1};
  check_gradient(2, sizes, NET_ACT_IDENTITY, NET_LOSS_LOGISTIC, 9, 9);
}
END_TEST

START_TEST(test_net_gradient_softmax)
{
  static const size_t sizes[] = {4, 3};
  check_gradient(2, sizes, NET_ACT_IDENTITY, NET_LOSS_SOFTMAX, 9, 9);
}
END_TEST

START_TEST(test_net_gradient_mlp_sigmoid)
{
  static const size_t sizes[] = {3, 5, 4, 3};
  check_gradient(4, sizes, NET_ACT_SIGMOID, NET_LOSS_SOFTMAX, 7, 7);
}
END_TEST

START_TEST(test_net_gradient_mlp_tanh)
{
  static const size_t sizes[] = {3, 6, 1};
  check_gradient(3, sizes, NET_ACT_TANH, NET_LOSS_MSE, 7, 7);
}
END_TEST

/* With Gaussian inputs no pre-activation lies within FD_STEP of relu's kink
 * for this seed (it would show as a gradient off by O(1) in one component). */
START_TEST(test_net_gradient_mlp_relu)
{
  static const size_t sizes[] = {4, 8, 5, 1};
  check_gradient(4, sizes, NET_ACT_RELU, NET_LOSS_LOGISTIC, 7, 7);
}
END_TEST

/* A batch smaller than the workspace goes through submatrix views. */
START_TEST(test_net_gradient_partial_batch)
{
  static const size_t sizes[] = {3, 4, 3};
  check_gradient(3, sizes, NET_ACT_TANH, NET_LOSS_SOFTMAX, 5, 16);
  check_gradient(3, sizes, NET_ACT_TANH, NET_LOSS_SOFTMAX, 1, 16);
}
END_TEST

/* ---- known answers ---- */

/* f(x) = 2 x1 - x2 + 0.5 on x = (1, 2), y = 1 and x = (3, 0.5), y = 4.
 * By hand: f = 0.5 and 6, residuals -0.5 and 2, loss = (0.125 + 2) / 2 = 1.0625;
 * dW = ((-0.5*1 + 2*3) / 2, (-0.5*2 + 2*0.5) / 2) = (2.75, 0), db = 1.5 / 2 = 0.75. */
START_TEST(test_net_known_linear)
{
  static const size_t sizes[] = {2, 1};
  net *n = net_create(2, sizes, NET_ACT_IDENTITY, NET_LOSS_MSE);
  double wv[] = {2, -1, 0.5}, xv[] = {1, 2, 3, 0.5}, y[] = {1, 4}, g[3];
  gsl_vector_view w = gsl_vector_view_array(wv, 3), gv = gsl_vector_view_array(g, 3);
  gsl_matrix_view X = gsl_matrix_view_array(xv, 2, 2);
  net_ws *ws = net_ws_create(n, 2);
  double loss;
  ck_assert_int_eq(net_loss_grad(n, &w.vector, &X.matrix, y, ws, &loss, &gv.vector), 0);
  ck_assert_double_eq_tol(loss, 1.0625, TOL_KNOWN);
  ck_assert_double_eq_tol(g[0], 2.75, TOL_KNOWN);
  ck_assert_double_eq_tol(g[1], 0.0, TOL_KNOWN);
  ck_assert_double_eq_tol(g[2], 0.75, TOL_KNOWN);
  net_ws_free(ws);
  net_free(n);
}
END_TEST

/* Zero weights give uniform probabilities 1/k, so the cross-entropy is ln k
 * whatever the inputs and labels; likewise ln 2 for logistic. */
START_TEST(test_net_known_uniform)
{
  static const size_t soft[] = {3, 5}, logi[] = {3, 1};
  double xv[] = {1, -2, 3, 0.5, 0, -1}, y[] = {4, 0};
  gsl_matrix_view X = gsl_matrix_view_array(xv, 2, 3);
  net *n = net_create(2, soft, NET_ACT_IDENTITY, NET_LOSS_SOFTMAX);
  net *m = net_create(2, logi, NET_ACT_IDENTITY, NET_LOSS_LOGISTIC);
  gsl_vector *w = gsl_vector_calloc(net_n_params(n)), *v = gsl_vector_calloc(net_n_params(m));
  net_ws *ws = net_ws_create(n, 4), *wm = net_ws_create(m, 4);
  double loss, yl[] = {1, 0};
  ck_assert_int_eq(net_loss_grad(n, w, &X.matrix, y, ws, &loss, NULL), 0);
  ck_assert_double_eq_tol(loss, log(5.0), TOL_KNOWN);
  ck_assert_int_eq(net_loss_grad(m, v, &X.matrix, yl, wm, &loss, NULL), 0);
  ck_assert_double_eq_tol(loss, log(2.0), TOL_KNOWN);
  net_ws_free(ws);
  net_ws_free(wm);
  gsl_vector_free(w);
  gsl_vector_free(v);
  net_free(n);
  net_free(m);
}
END_TEST

/* ---- stability: logits far outside exp's range ---- */

/* Logistic, one input x = 1, weight 1000 (logit 1000): a wrong label costs
 * exactly 1000 (max(z,0) - y z + log1p(e^-1000) = 1000 + 0), a right one
 * e^-1000, i.e. 0 in doubles; the gradient is (s(z) - y) * x = -1 and 0. */
START_TEST(test_net_stability_logistic)
{
  static const size_t sizes[] = {1, 1};
  net *n = net_create(2, sizes, NET_ACT_IDENTITY, NET_LOSS_LOGISTIC);
  double wv[] = {1000, 0}, xv[] = {1}, g[2], loss;
  gsl_vector_view w = gsl_vector_view_array(wv, 2), gv = gsl_vector_view_array(g, 2);
  gsl_matrix_view X = gsl_matrix_view_array(xv, 1, 1);
  net_ws *ws = net_ws_create(n, 1);
  double y0[] = {0}, y1[] = {1};
  ck_assert_int_eq(net_loss_grad(n, &w.vector, &X.matrix, y0, ws, &loss, &gv.vector), 0);
  ck_assert_double_eq(loss, 1000.0);
  ck_assert_double_eq(g[0], 1.0);
  ck_assert_int_eq(net_loss_grad(n, &w.vector, &X.matrix, y1, ws, &loss, &gv.vector), 0);
  ck_assert_double_eq(loss, 0.0);
  ck_assert_double_eq(g[0], 0.0);
  wv[0] = -1000; /* logit -1000: the sigmoid must not compute e^1000 */
  ck_assert_int_eq(net_loss_grad(n, &w.vector, &X.matrix, y1, ws, &loss, &gv.vector), 0);
  ck_assert_double_eq(loss, 1000.0);
  ck_assert_double_eq(g[0], -1.0);
  net_ws_free(ws);
  net_free(n);
}
END_TEST

/* Softmax with logits (1000, 0): by max-subtraction the loss of class 1 is
 * 1000 + log1p(e^-1000) = 1000 and of class 0 is log1p(e^-1000) = 0. */
START_TEST(test_net_stability_softmax)
{
  static const size_t sizes[] = {1, 2};
  net *n = net_create(2, sizes, NET_ACT_IDENTITY, NET_LOSS_SOFTMAX);
  double wv[] = {1000, 0, 0, 0}, xv[] = {1}, loss;
  gsl_vector_view w = gsl_vector_view_array(wv, 4);
  gsl_matrix_view X = gsl_matrix_view_array(xv, 1, 1);
  net_ws *ws = net_ws_create(n, 1);
  double y0[] = {0}, y1[] = {1};
  ck_assert_int_eq(net_loss_grad(n, &w.vector, &X.matrix, y1, ws, &loss, NULL), 0);
  ck_assert_double_eq(loss, 1000.0);
  ck_assert_int_eq(net_loss_grad(n, &w.vector, &X.matrix, y0, ws, &loss, NULL), 0);
  ck_assert_double_eq(loss, 0.0);
  net_ws_free(ws);
  net_free(n);
}
END_TEST

/* ---- evaluate ---- */

/* Identity-like softmax 2 -> 3 (W rows (1,0), (0,1), (0,0)), by hand:
 * (2,0) -> logits (2,0,0) class 0, label 0, right; (0,2) -> class 1, label 1, right;
 * (-1,-1) -> (-1,-1,0) class 2, label 2, right; (3,0) -> class 0, label 1, wrong.
 * Accuracy 3/4. A workspace of 3 rows makes net_evaluate take two chunks. */
START_TEST(test_net_evaluate_softmax)
{
  static const size_t sizes[] = {2, 3};
  net *n = net_create(2, sizes, NET_ACT_IDENTITY, NET_LOSS_SOFTMAX);
  double wv[] = {1, 0, 0, 1, 0, 0, 0, 0, 0}, xv[] = {2, 0, 0, 2, -1, -1, 3, 0}, y[] = {0, 1, 2, 1};
  gsl_vector_view w = gsl_vector_view_array(wv, 9);
  gsl_matrix_view X = gsl_matrix_view_array(xv, 4, 2);
  net_ws *small = net_ws_create(n, 3), *whole = net_ws_create(n, 4);
  double loss, acc, ref;
  ck_assert_int_eq(net_evaluate(n, &w.vector, &X.matrix, y, small, &loss, &acc), 0);
  ck_assert_double_eq(acc, 0.75);
  /* The chunked mean equals the one-batch mean (up to summation order). */
  ck_assert_int_eq(net_loss_grad(n, &w.vector, &X.matrix, y, whole, &ref, NULL), 0);
  ck_assert_double_eq_tol(loss, ref, TOL_ORDER);
  net_ws_free(small);
  net_ws_free(whole);
  net_free(n);
}
END_TEST

/* Logistic f(x) = x on x = (-2, -0.5, 0, 3), labels (0, 1, 1, 1): predictions
 * (0, 0, 1, 1), p = 0.5 at x = 0 counting as class 1; 3 of 4 right. */
START_TEST(test_net_evaluate_logistic)
{
  static const size_t sizes[] = {1, 1};
  net *n = net_create(2, sizes, NET_ACT_IDENTITY, NET_LOSS_LOGISTIC);
  double wv[] = {1, 0}, xv[] = {-2, -0.5, 0, 3}, y[] = {0, 1, 1, 1}, loss, acc;
  gsl_vector_view w = gsl_vector_view_array(wv, 2);
  gsl_matrix_view X = gsl_matrix_view_array(xv, 4, 1);
  net_ws *ws = net_ws_create(n, 2);
  ck_assert_int_eq(net_evaluate(n, &w.vector, &X.matrix, y, ws, &loss, &acc), 0);
  ck_assert_double_eq(acc, 0.75);
  net_ws_free(ws);
  net_free(n);
}
END_TEST

/* Linear f(x) = x on x = (1, 2, 3), y = (1, 2, 4). By hand: SSE = 1, mean y = 7/3,
 * SST = (16 + 1 + 25) / 9 = 14/3, R^2 = 1 - 3/14 = 11/14; loss = 0.5 * 1 / 3. */
START_TEST(test_net_evaluate_r2)
{
  static const size_t sizes[] = {1, 1};
  net *n = net_create(2, sizes, NET_ACT_IDENTITY, NET_LOSS_MSE);
  double wv[] = {1, 0}, xv[] = {1, 2, 3}, y[] = {1, 2, 4}, loss, acc;
  gsl_vector_view w = gsl_vector_view_array(wv, 2);
  gsl_matrix_view X = gsl_matrix_view_array(xv, 3, 1);
  net_ws *ws = net_ws_create(n, 2);
  ck_assert_int_eq(net_evaluate(n, &w.vector, &X.matrix, y, ws, &loss, &acc), 0);
  ck_assert_double_eq_tol(acc, 11.0 / 14.0, TOL_KNOWN);
  ck_assert_double_eq_tol(loss, 1.0 / 6.0, TOL_KNOWN);
  net_ws_free(ws);
  net_free(n);
}
END_TEST

/* ---- init ---- */

START_TEST(test_net_init_determinism)
{
  static const size_t sizes[] = {6, 4, 3};
  net *n = net_create(3, sizes, NET_ACT_RELU, NET_LOSS_SOFTMAX);
  size_t p = net_n_params(n);
  gsl_vector *a = gsl_vector_alloc(p), *b = gsl_vector_alloc(p), *c = gsl_vector_alloc(p);
  gsl_rng *ra = rng_create(5, RNG_ROLE_INIT, 0), *rb = rng_create(5, RNG_ROLE_INIT, 0);
  gsl_rng *rc = rng_create(6, RNG_ROLE_INIT, 0);
  net_init_params(n, ra, a);
  net_init_params(n, rb, b);
  net_init_params(n, rc, c);
  ck_assert_int_eq(memcmp(a->data, b->data, p * sizeof(double)), 0);
  ck_assert_int_ne(memcmp(a->data, c->data, p * sizeof(double)), 0);
  for (size_t l = 0; l < net_n_layers(n); l++) {
    size_t n_in = net_layer_size(n, l), n_out = net_layer_size(n, l + 1), off = net_layer_offset(n, l);
    double bound = sqrt(6.0 / (double)(n_in + n_out)); /* Glorot & Bengio 2010, eq. 16 */
    for (size_t k = 0; k < n_in * n_out; k++)
      ck_assert_double_le(fabs(gsl_vector_get(a, off + k)), bound);
    for (size_t k = 0; k < n_out; k++)
      ck_assert_double_eq(gsl_vector_get(a, off + n_in * n_out + k), 0.0);
  }
  gsl_rng_free(ra);
  gsl_rng_free(rb);
  gsl_rng_free(rc);
  gsl_vector_free(a);
  gsl_vector_free(b);
  gsl_vector_free(c);
  net_free(n);
}
END_TEST

/* ---- create and shapes ---- */

START_TEST(test_net_create_rejects)
{
  static const size_t ok[] = {3, 4, 2}, zero[] = {3, 0, 2}, one[] = {3, 1}, two[] = {3, 2};
  ck_assert_ptr_null(net_create(1, ok, NET_ACT_TANH, NET_LOSS_SOFTMAX));
  ck_assert_ptr_null(net_create(3, zero, NET_ACT_TANH, NET_LOSS_SOFTMAX));
  ck_assert_ptr_null(net_create(2, one, NET_ACT_TANH, NET_LOSS_SOFTMAX));
  ck_assert_ptr_null(net_create(2, two, NET_ACT_TANH, NET_LOSS_MSE));
  ck_assert_ptr_null(net_create(2, two, NET_ACT_TANH, NET_LOSS_LOGISTIC));
  net_free(NULL);
  net_ws_free(NULL);
}
END_TEST

/* 3 -> 4 -> 2: layer 0 has 12 weights and 4 biases, layer 1 8 and 2 (26 in all). */
START_TEST(test_net_create_layout)
{
  static const size_t sizes[] = {3, 4, 2};
  net *n = net_create(3, sizes, NET_ACT_TANH, NET_LOSS_SOFTMAX);
  ck_assert_uint_eq(net_n_params(n), 26);
  ck_assert_uint_eq(net_n_layers(n), 2);
  ck_assert_uint_eq(net_n_inputs(n), 3);
  ck_assert_uint_eq(net_n_outputs(n), 2);
  ck_assert_uint_eq(net_layer_offset(n, 0), 0);
  ck_assert_uint_eq(net_layer_offset(n, 1), 16);
  ck_assert_uint_eq(net_layer_offset(n, 2), 26);
  ck_assert_int_eq(net_get_loss(n), NET_LOSS_SOFTMAX);
  net_free(n);
}
END_TEST

START_TEST(test_net_shapes_rejected)
{
  static const size_t sizes[] = {3, 2};
  net *n = net_create(2, sizes, NET_ACT_IDENTITY, NET_LOSS_SOFTMAX);
  gsl_vector *w = gsl_vector_calloc(net_n_params(n)), *shortw = gsl_vector_calloc(5);
  gsl_matrix *wide = gsl_matrix_calloc(2, 4), *tall = gsl_matrix_calloc(5, 3);
  double y[5] = {0}, loss, acc;
  net_ws *ws = net_ws_create(n, 4);
  ck_assert_int_eq(net_loss_grad(n, w, wide, y, ws, &loss, NULL), -1);
  ck_assert_int_eq(net_loss_grad(n, w, tall, y, ws, &loss, NULL), -1); /* 5 rows > max_batch 4 */
  ck_assert_int_eq(net_loss_grad(n, shortw, tall, y, ws, &loss, NULL), -1);
  ck_assert_int_eq(net_evaluate(n, w, wide, y, ws, &loss, &acc), -1);
  ck_assert_int_eq(net_evaluate(n, w, tall, y, ws, &loss, &acc), 0); /* evaluate chunks */
  ck_assert_ptr_null(net_ws_create(n, 0));
  net_ws_free(ws);
  gsl_matrix_free(wide);
  gsl_matrix_free(tall);
  gsl_vector_free(w);
  gsl_vector_free(shortw);
  net_free(n);
}
END_TEST

/* A softmax label outside 0..k-1 is a broken invariant: abort, never read past the row. */
START_TEST(test_net_bad_label_aborts)
{
  static const size_t sizes[] = {2, 3};
  net *n = net_create(2, sizes, NET_ACT_IDENTITY, NET_LOSS_SOFTMAX);
  gsl_vector *w = gsl_vector_calloc(net_n_params(n));
  gsl_matrix *X = gsl_matrix_calloc(1, 2);
  double y[] = {3}, loss;
  net_ws *ws = net_ws_create(n, 1);
  net_loss_grad(n, w, X, y, ws, &loss, NULL);
}
END_TEST

START_TEST(test_net_act_names)
{
  net_act a;
  for (int i = NET_ACT_IDENTITY; i <= NET_ACT_RELU; i++) {
    ck_assert_int_eq(net_act_parse(net_act_name((net_act)i), &a), 0);
    ck_assert_int_eq(a, i);
  }
  ck_assert_int_eq(net_act_parse("softplus", &a), -1);
}
END_TEST

Suite *net_suite(void)
{
  Suite *s = suite_create("net");
  ADD_TCASE(s, "gradient", test_net_gradient_linear, test_net_gradient_logistic, test_net_gradient_softmax,
            test_net_gradient_mlp_sigmoid, test_net_gradient_mlp_tanh, test_net_gradient_mlp_relu,
            test_net_gradient_partial_batch);
  ADD_TCASE(s, "known_answer", test_net_known_linear, test_net_known_uniform);
  ADD_TCASE(s, "stability", test_net_stability_logistic, test_net_stability_softmax);
  ADD_TCASE(s, "evaluate", test_net_evaluate_softmax, test_net_evaluate_logistic, test_net_evaluate_r2);
  ADD_TCASE(s, "init", test_net_init_determinism);
  ADD_TCASE(s, "create", test_net_create_rejects, test_net_create_layout, test_net_act_names);
  ADD_TCASE(s, "limits", test_net_shapes_rejected);
  TCase *tc = tcase_create("invariants");
  tcase_add_test_raise_signal(tc, test_net_bad_label_aborts, SIGABRT);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(net_suite)

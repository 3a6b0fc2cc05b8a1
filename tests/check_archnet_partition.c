/* check_archnet_partition.c - Check suite for models/archnet's partitioned steps, driven
 * as the actors drive them, against the unpartitioned reference for every tiling of 1..9
 * machines: each step reads only what it may and writes only its own, the loss and the
 * top layer's gradient are bit for bit, the lower layers within rounding. The nets and
 * problems are archnet_util.h's; the rest of archnet is check_archnet.c's. */

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/arch.h"
#include "models/archnet.h"
#include "models/rng.h"

#include "archnet_util.h"
#include "check_util.h"

/* dLoss/dA_{l-1} is summed per partition, then over partitions in rank order: a
 * different association of the same terms than the reference's single pass, so
 * gradients below the top layer may differ by a few ulps of the largest term
 * (measured: below 1e-15 of the layer's largest component). */
#define PART_RTOL 1e-12

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

/* The forward steps of every layer, each partition's checked for what it reads (everything
 * else NaN) and writes (nothing else changes); A[1..L] end as the reference's. */
static void forward_parts(const problem *pb, const arch_plan *pl, gsl_matrix **A)
{
  const archnet *n = pb->n;
  size_t L = arch_n_layers(pb->a) - 1, P = arch_plan_parts(pl), rows = pb->X->size1;
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
}

/* The loss step: the logits A[L] are gathered (here: shared); every partition sees the same
 * loss and writes only its columns of D[L]. Returns the loss. */
static double output_parts(const problem *pb, const arch_plan *pl, gsl_matrix **A, gsl_matrix **D)
{
  const archnet *n = pb->n;
  size_t L = arch_n_layers(pb->a) - 1, P = arch_plan_parts(pl), rows = pb->X->size1;
  double loss = NAN;
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
  return loss;
}

/* The backward step of layer l: each partition's, checked for what it reads and that it
 * changes exactly its own parameters' gradients (gsnap is scratch of grad's size), its
 * contribution to dLoss/dA_{l-1} 0 outside its receptive field; then each owner's sum. */
static void backward_parts(const problem *pb, const arch_plan *pl, size_t l, gsl_matrix **A, gsl_matrix **D,
                           gsl_vector *grad, gsl_vector *gsnap)
{
  const archnet *n = pb->n;
  size_t P = arch_plan_parts(pl), rows = pb->X->size1;
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

/* One batch through the partitioned steps in the actors' order, each step checked
 * for what it reads (everything else NaN) and writes (nothing else changes);
 * returns the loss and fills grad. */
static double run_partitioned(const problem *pb, const arch_plan *pl, gsl_vector *grad)
{
  size_t L = arch_n_layers(pb->a) - 1, rows = pb->X->size1;
  gsl_matrix **A = calloc(L + 1, sizeof *A), **D = calloc(L + 1, sizeof *D);
  A[0] = gsl_matrix_alloc(rows, arch_units(pb->a, 0));
  gsl_matrix_memcpy(A[0], pb->X);
  for (size_t l = 1; l <= L; l++) {
    A[l] = nan_matrix(rows, arch_units(pb->a, l));
    D[l] = nan_matrix(rows, arch_units(pb->a, l));
  }
  gsl_vector_set_all(grad, NAN);
  gsl_vector *gsnap = gsl_vector_alloc(grad->size);
  forward_parts(pb, pl, A);
  double loss = output_parts(pb, pl, A, D);
  for (size_t l = L; l >= 1; l--)
    backward_parts(pb, pl, l, A, D, grad, gsnap);
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

static Suite *archnet_partition_suite(void)
{
  Suite *s = suite_create("archnet_partition");
  ADD_TCASE(s, "partition", test_archnet_partition_fc, test_archnet_partition_lc2d, test_archnet_partition_lc1d);
  return s;
}

CHECK_MAIN(archnet_partition_suite)

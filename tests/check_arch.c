/* check_arch.c - Check suite for models/arch: shapes, parameter and flop counts
 * (hand-computed and against cost.c), the virtual DistBelief networks, and the
 * partition over px x py machines: ownership, sums, and halo sizes checked by
 * hand and against a unit-by-unit count. */

#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "models/arch.h"
#include "models/cost.h"
#include "models/data.h"

#include "check_util.h"

/* Tolerances, each with where it comes from. */
/* TOL_PAPER_REL: Dean et al. 2012 Fig. 3 name the image networks by rounded sizes (80M, 330M,
 * 1.7B parameters); arch.c's shapes must give them within 8% (image-80m, 8 maps per patch,
 * the paper's lowest count, is 7.2% above; the other two within 1%). */
#define TOL_PAPER_REL 0.08

/* A layer to add: kind, then the arguments of arch_add_input/dense/local/pool/lcn. */
typedef struct spec {
  arch_kind kind;
  size_t v[5];
} spec;

static arch *build(const spec *s, size_t n)
{
  arch *a = arch_create();
  for (size_t i = 0; i < n; i++) {
    const size_t *v = s[i].v;
    int rc = s[i].kind == ARCH_INPUT  ? arch_add_input(a, v[0], v[1], v[2])
             : s[i].kind == ARCH_DENSE ? arch_add_dense(a, v[0])
             : s[i].kind == ARCH_POOL  ? arch_add_pool(a, v[0], v[1], v[2], v[3])
             : s[i].kind == ARCH_LCN   ? arch_add_lcn(a, v[0], v[1])
                                       : arch_add_local(a, v[0], v[1], v[2], v[3], v[4]);
    ck_assert_int_eq(rc, 0);
  }
  return a;
}

#define BUILD(s) build((s), sizeof(s) / sizeof((s)[0]))

START_TEST(test_arch_create_rejects)
{
  arch *a = arch_create();
  ck_assert_int_eq(arch_add_dense(a, 4), -1);       /* no input yet */
  ck_assert_int_eq(arch_add_local(a, 1, 1, 1, 1, 1), -1);
  ck_assert_int_eq(arch_add_input(a, 0, 1, 1), -1); /* zero size */
  ck_assert_int_eq(arch_add_input(a, 8, 8, 1), 0);
  ck_assert_int_eq(arch_add_input(a, 8, 8, 1), -1); /* second input */
  ck_assert_int_eq(arch_add_local(a, 9, 3, 1, 1, 1), -1); /* window wider than the grid */
  ck_assert_int_eq(arch_add_local(a, 3, 3, 0, 1, 1), -1); /* zero stride */
  ck_assert_int_eq(arch_add_local(a, 3, 3, 1, 1, 0), -1); /* zero channels */
  ck_assert_int_eq(arch_add_dense(a, 0), -1);
  ck_assert_uint_eq(arch_n_layers(a), 1);
  ck_assert_int_eq(arch_add_pool(a, 9, 1, 1, 1), -1);     /* pooling window wider than the grid */
  ck_assert_int_eq(arch_add_pool(a, 2, 2, 1, 0), -1);     /* zero stride */
  ck_assert_int_eq(arch_add_lcn(a, 0, 3), -1);            /* zero window */
  ck_assert_int_eq(arch_add_lcn(a, 3, 9), -1);            /* LCN window taller than the grid */
  ck_assert_uint_eq(arch_n_layers(a), 1);
  ck_assert_int_eq(arch_add_dense(a, 5), 0);
  ck_assert_int_eq(arch_add_local(a, 1, 1, 1, 1, 1), -1); /* LC over a dense layer */
  ck_assert_int_eq(arch_add_pool(a, 1, 1, 1, 1), -1);     /* nor pooling */
  ck_assert_int_eq(arch_add_lcn(a, 1, 1), -1);            /* nor LCN */
  ck_assert_uint_eq(arch_n_layers(a), 2);
  ck_assert_str_eq(arch_name(a), "");
  arch_free(a);
  arch_free(NULL);
}
END_TEST

/* By hand, floor((in - r)/s) + 1: (11-3)/2+1 = 5, (7-2)/3+1 = 2 (rows 2, 5, 6 unread). */
START_TEST(test_arch_create_shapes)
{
  arch *a = arch_create();
  ck_assert_int_eq(arch_add_input(a, 11, 7, 2), 0);
  ck_assert_int_eq(arch_add_local(a, 3, 2, 2, 3, 4), 0);
  const arch_layer *L = arch_layer_at(a, 1);
  ck_assert_int_eq(L->kind, ARCH_LOCAL);
  ck_assert_uint_eq(L->gx, 5);
  ck_assert_uint_eq(L->gy, 2);
  ck_assert_uint_eq(L->ch, 4);
  ck_assert_uint_eq(arch_units(a, 1), 40);
  ck_assert_uint_eq(arch_units(a, 0), 154);
  ck_assert_int_eq(arch_add_dense(a, 3), 0);
  L = arch_layer_at(a, 2);
  ck_assert(L->kind == ARCH_DENSE && L->gx == 3 && L->gy == 1 && L->ch == 1);
  arch_free(a);
  /* Pooling keeps the channels, (9-3)/2+1 = 4 by (6-2)/1+1 = 5; LCN keeps the grid. */
  a = arch_create();
  ck_assert_int_eq(arch_add_input(a, 9, 6, 5), 0);
  ck_assert_int_eq(arch_add_pool(a, 3, 2, 2, 1), 0);
  L = arch_layer_at(a, 1);
  ck_assert(L->kind == ARCH_POOL && L->gx == 4 && L->gy == 5 && L->ch == 5 && L->rx == 3 && L->sx == 2);
  ck_assert_int_eq(arch_add_lcn(a, 3, 3), 0);
  L = arch_layer_at(a, 2);
  ck_assert(L->kind == ARCH_LCN && L->gx == 4 && L->gy == 5 && L->ch == 5 && L->sx == 1 && L->sy == 1);
  ck_assert_int_eq(arch_add_local(a, 2, 2, 1, 1, 3), 0); /* LC over LCN */
  ck_assert_uint_eq(arch_units(a, 3), 3 * 4 * 3);
  arch_free(a);
}
END_TEST

/* Same net as check_cost's 2-3-1: weights 9, biases 4; flops 6 * 9 = 54. */
START_TEST(test_arch_flops_dense)
{
  static const spec s[] = {{ARCH_INPUT, {2, 1, 1}}, {ARCH_DENSE, {3}}, {ARCH_DENSE, {1}}};
  arch *a = BUILD(s);
  ck_assert_double_eq(arch_layer_params(a, 0), 0.0);
  ck_assert_double_eq(arch_layer_params(a, 1), 9.0);
  ck_assert_double_eq(arch_layer_params(a, 2), 4.0);
  ck_assert_double_eq(arch_params(a), 13.0);
  ck_assert_double_eq(arch_train_flops(a), 54.0);
  arch_free(a);
}
END_TEST

/* By hand: 5x5x2 input, LC 3x3 stride 2, 4 channels -> 2x2x4 = 16 units of fan-in
 * 3*3*2 = 18: params 16*19 = 304, flops 6*16*18 = 1728. Dense 16 -> 3: params
 * 16*3 + 3 = 51, flops 6*48 = 288. Totals 355 and 2016. */
START_TEST(test_arch_flops_local)
{
  static const spec s[] = {{ARCH_INPUT, {5, 5, 2}}, {ARCH_LOCAL, {3, 3, 2, 2, 4}}, {ARCH_DENSE, {3}}};
  arch *a = BUILD(s);
  ck_assert_uint_eq(arch_units(a, 1), 16);
  ck_assert_double_eq(arch_layer_params(a, 1), 304.0);
  ck_assert_double_eq(arch_layer_train_flops(a, 1), 1728.0);
  ck_assert_double_eq(arch_layer_params(a, 2), 51.0);
  ck_assert_double_eq(arch_layer_train_flops(a, 2), 288.0);
  ck_assert_double_eq(arch_params(a), 355.0);
  ck_assert_double_eq(arch_train_flops(a), 2016.0);
  arch_free(a);
}
END_TEST

/* By hand: 6x6x2 input, pooling 2x2 stride 2 -> 3x3x2 = 18 units of fan-in 4: flops 6*18*4 =
 * 432, no parameters; LCN 3x3 -> 18 units of fan-in 2*9 = 18: flops 6*18*18 = 1944; dense
 * 18 -> 2: params 38, flops 6*36 = 216. Totals 38 and 2592. */
START_TEST(test_arch_flops_pool_lcn)
{
  static const spec s[] = {{ARCH_INPUT, {6, 6, 2}}, {ARCH_POOL, {2, 2, 2, 2}}, {ARCH_LCN, {3, 3}}, {ARCH_DENSE, {2}}};
  arch *a = BUILD(s);
  ck_assert_uint_eq(arch_units(a, 1), 18);
  ck_assert_double_eq(arch_layer_params(a, 1), 0.0);
  ck_assert_double_eq(arch_layer_train_flops(a, 1), 432.0);
  ck_assert_double_eq(arch_layer_params(a, 2), 0.0);
  ck_assert_double_eq(arch_layer_train_flops(a, 2), 1944.0);
  ck_assert_double_eq(arch_layer_params(a, 3), 38.0);
  ck_assert_double_eq(arch_params(a), 38.0);
  ck_assert_double_eq(arch_train_flops(a), 2592.0);
  arch_free(a);
}
END_TEST

/* Dean et al. 2012 sec. 5; 41,777,152 is the derivation in cost.c, and the flops
 * must be cost.c's too (one cost model, two descriptions). */
START_TEST(test_arch_params_speech)
{
  const arch *a = arch_virtual_find("speech-42m");
  ck_assert_ptr_nonnull(a);
  ck_assert_double_eq(arch_params(a), 41777152.0);
  static const size_t sizes[] = {440, 2560, 2560, 2560, 2560, 8192};
  ck_assert_double_eq(arch_params(a), cost_mlp_params(6, sizes));
  ck_assert_double_eq(arch_train_flops(a), cost_mlp_train_flops(6, sizes));
  ck_assert_uint_eq(arch_n_layers(a), 6);
}
END_TEST

/* Layer-by-layer breakdowns and train flops documented in arch.c (input, then LC,
 * pooling, LCN for each of the 3 stages, then the output), each re-derived here as
 * units x (fan_in + 1); targets 80M, 330M, 1.7B from Dean et al. 2012 Fig. 3, within
 * TOL_PAPER_REL; every stage is 10x10 filtering of 8 to 36 maps (the paper's range),
 * 5x5 pooling and 5x5 LCN (Le et al. 2012), and the 21,841 outputs sit on the last
 * pooled stage. */
START_TEST(test_arch_params_image)
{
  static const struct {
    const char *name;
    double lc[3], out, total, target, flops;
  } nets[] = {
    {"image-80m", {66248.0 * 301, 48672.0 * 801, 2048.0 * 801}, 1152.0 * 21841 + 21841, 85750041.0, 80e6,
     543684192.0},
    {"image-330m", {107653.0 * 301, 79092.0 * 1301, 54925.0 * 1301}, 5733.0 * 21841 + 21841, 331995964.0, 330e6,
     2069287818.0},
    {"image-1.7b", {289835.0 * 301, 212940.0 * 3501, 147875.0 * 3501}, 15435.0 * 21841 + 21841, 1687591326.0, 1.7e9,
     10333917510.0},
  };
  /* The documented per-layer figures of arch.c. */
  static const double documented[3][4] = {
    {19940648, 38986272, 1640448, 25182673},
    {32403553, 102898692, 71457425, 125236294},
    {87240335, 745502940, 517710375, 337137676},
  };
  double prev = 0.0;
  for (size_t i = 0; i < 3; i++) {
    const arch *a = arch_virtual_find(nets[i].name);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(arch_n_layers(a), 11);
    double sum = 0.0;
    for (size_t k = 0; k < 3; k++) {
      const arch_layer *lc = arch_layer_at(a, 1 + 3 * k), *pool = arch_layer_at(a, 2 + 3 * k),
                       *lcn = arch_layer_at(a, 3 + 3 * k);
      ck_assert(lc->kind == ARCH_LOCAL && lc->rx == 10 && lc->ry == 10 && lc->sx == 1 && lc->ch >= 8 && lc->ch <= 36);
      ck_assert(pool->kind == ARCH_POOL && pool->rx == 5 && pool->ry == 5 && pool->ch == lc->ch);
      ck_assert(lcn->kind == ARCH_LCN && lcn->rx == 5 && lcn->gx == pool->gx && lcn->ch == lc->ch);
      ck_assert_double_eq(arch_layer_params(a, 1 + 3 * k), nets[i].lc[k]);
      ck_assert_double_eq(arch_layer_params(a, 1 + 3 * k), documented[i][k]);
      ck_assert_double_eq(arch_layer_params(a, 2 + 3 * k) + arch_layer_params(a, 3 + 3 * k), 0.0);
      sum += documented[i][k];
    }
    ck_assert_double_eq(arch_layer_params(a, 10), nets[i].out);
    ck_assert_double_eq(arch_layer_params(a, 10), documented[i][3]);
    sum += documented[i][3];
    ck_assert_double_eq(sum, nets[i].total);
    ck_assert_double_eq(arch_params(a), nets[i].total);
    ck_assert_double_eq(arch_train_flops(a), nets[i].flops);
    ck_assert_double_eq_tol(arch_params(a), nets[i].target, TOL_PAPER_REL * nets[i].target);
    ck_assert(arch_params(a) > prev);
    prev = arch_params(a);
    /* 100x100x3 in; 21,841 outputs over the last pooled stage (arch.c's assumptions). */
    const arch_layer *in = arch_layer_at(a, 0);
    ck_assert(in->gx == 100 && in->gy == 100 && in->ch == 3);
    ck_assert_int_eq(arch_layer_at(a, 10)->kind, ARCH_DENSE);
    ck_assert_uint_eq(arch_units(a, 10), 21841);
    ck_assert_double_eq(arch_layer_params(a, 10), (double)arch_units(a, 9) * 21841 + 21841);
  }
}
END_TEST

/* Every virtual network is listed, found by name, and is exactly what the public
 * add calls build from its layers (so the static grids obey floor((in-r)/s)+1). */
START_TEST(test_arch_virtual_listing)
{
  size_t i = 0;
  for (const arch *v; (v = arch_virtual_at(i)) != NULL; i++) {
    ck_assert_ptr_eq(arch_virtual_find(arch_name(v)), v);
    ck_assert(strlen(arch_description(v)) > 0);
    arch *a = arch_create();
    for (size_t l = 0; l < arch_n_layers(v); l++) {
      const arch_layer *L = arch_layer_at(v, l);
      int rc = L->kind == ARCH_INPUT  ? arch_add_input(a, L->gx, L->gy, L->ch)
               : L->kind == ARCH_DENSE ? arch_add_dense(a, L->gx)
               : L->kind == ARCH_POOL  ? arch_add_pool(a, L->rx, L->ry, L->sx, L->sy)
               : L->kind == ARCH_LCN   ? arch_add_lcn(a, L->rx, L->ry)
                                       : arch_add_local(a, L->rx, L->ry, L->sx, L->sy, L->ch);
      ck_assert_int_eq(rc, 0);
      const arch_layer *M = arch_layer_at(a, l);
      ck_assert(M->kind == L->kind && M->gx == L->gx && M->gy == L->gy && M->ch == L->ch && M->rx == L->rx &&
                M->ry == L->ry && M->sx == L->sx && M->sy == L->sy);
    }
    ck_assert_double_eq(arch_params(a), arch_params(v));
    arch_free(a);
  }
  ck_assert_uint_eq(i, 4);
  ck_assert_ptr_nonnull(arch_virtual_find("image-1.7b"));
  ck_assert_ptr_null(arch_virtual_find("image-2b"));
}
END_TEST

/* Units, parameters and flops of the partitions add up to the whole, exactly
 * (integers below 2^53 are exact in double). */
static void check_sums(const arch *a, size_t px, size_t py)
{
  arch_plan *pl = arch_plan_create(a, px, py);
  ck_assert_ptr_nonnull(pl);
  size_t P = arch_plan_parts(pl);
  ck_assert_uint_eq(P, px * py);
  for (size_t l = 0; l < arch_n_layers(a); l++) {
    size_t u = 0;
    for (size_t p = 0; p < P; p++) u += arch_plan_units(pl, l, p);
    ck_assert_uint_eq(u, arch_units(a, l));
  }
  double params = 0.0, flops = 0.0;
  for (size_t p = 0; p < P; p++) {
    params += arch_plan_params(pl, p);
    flops += arch_plan_flops(pl, p);
  }
  ck_assert_double_eq(params, arch_params(a));
  ck_assert_double_eq(flops, arch_train_flops(a));
  arch_plan_free(pl);
}

/* The narrowest side of a's tiled layers (LC, pooling, LCN and the 2-D input). */
static size_t narrowest_grid(const arch *a)
{
  size_t g = (size_t)-1;
  for (size_t l = 0; l < arch_n_layers(a); l++) {
    const arch_layer *L = arch_layer_at(a, l);
    if (L->kind == ARCH_DENSE)
      continue;
    g = L->gx < g ? L->gx : g;
    g = L->gy < g ? L->gy : g;
  }
  return g;
}

START_TEST(test_arch_plan_sums)
{
  /* Tilings for Fig. 3's machine counts: 1, 2, 4, 8, 9, 64, 81, 128, 144. */
  static const size_t tilings[][2] = {{1, 1}, {2, 1}, {1, 2}, {2, 2}, {4, 2}, {3, 3},
                                      {8, 8}, {9, 9}, {12, 12}, {16, 8}};
  for (size_t i = 0; arch_virtual_at(i) != NULL; i++) {
    const arch *a = arch_virtual_at(i);
    for (size_t t = 0; t < sizeof tilings / sizeof tilings[0]; t++) {
      size_t px = tilings[t][0], py = tilings[t][1];
      if (arch_layer_at(a, 0)->gy == 1) { /* speech: dense blocks only, P = px*py */
        check_sums(a, px * py, 1);
        continue;
      }
      if (px > narrowest_grid(a)) { /* image-80m's last pooled grid is 12 wide: 16 columns leave tiles empty */
        ck_assert_ptr_null(arch_plan_create(a, px, py));
        continue;
      }
      check_sums(a, px, py);
    }
  }
  arch_plan_free(NULL);
}
END_TEST

/* Dense layers are split as data_shard_bounds splits rows: one split rule everywhere. */
START_TEST(test_arch_plan_dense_blocks)
{
  const arch *a = arch_virtual_find("speech-42m");
  arch_plan *pl = arch_plan_create(a, 7, 1);
  for (size_t l = 0; l < arch_n_layers(a); l++)
    for (size_t p = 0; p < 7; p++) {
      size_t b, e;
      data_shard_bounds(arch_units(a, l), 7, p, &b, &e);
      ck_assert_uint_eq(arch_plan_units(pl, l, p), e - b);
    }
  /* By hand: 440 = 63*6 + 62, 2560 = 366*5 + 365*2, 8192 = 1171*2 + 1170*5. */
  ck_assert_uint_eq(arch_plan_units(pl, 0, 0), 63);
  ck_assert_uint_eq(arch_plan_units(pl, 0, 6), 62);
  ck_assert_uint_eq(arch_plan_units(pl, 1, 4), 366);
  ck_assert_uint_eq(arch_plan_units(pl, 1, 5), 365);
  ck_assert_uint_eq(arch_plan_units(pl, 5, 1), 1171);
  ck_assert_uint_eq(arch_plan_units(pl, 5, 2), 1170);
  arch_plan_free(pl);
}
END_TEST

/* By hand, 10 -> 6 -> 4 on P = 2: blocks 5|5, 3|3, 2|2. Each partition needs all
 * 10 inputs, 5 of them the other's; then all 6 hidden units, 3 the other's.
 * Params per partition 3*(10+1) + 2*(6+1) = 47; flops 6*(3*10 + 2*6) = 252. */
START_TEST(test_arch_halo_dense)
{
  static const spec s[] = {{ARCH_INPUT, {10, 1, 1}}, {ARCH_DENSE, {6}}, {ARCH_DENSE, {4}}};
  arch *a = BUILD(s);
  arch_plan *pl = arch_plan_create(a, 2, 1);
  ck_assert_uint_eq(arch_plan_halo(pl, 1, 0, 1), 5);
  ck_assert_uint_eq(arch_plan_halo(pl, 1, 1, 0), 5);
  ck_assert_uint_eq(arch_plan_halo(pl, 2, 0, 1), 3);
  ck_assert_uint_eq(arch_plan_halo(pl, 2, 1, 0), 3);
  ck_assert_uint_eq(arch_plan_halo(pl, 1, 0, 0), 0);
  ck_assert_uint_eq(arch_plan_halo(pl, 0, 0, 1), 0);
  ck_assert_double_eq(arch_plan_halo_total(pl, 1), 10.0);
  ck_assert_double_eq(arch_plan_halo_total(pl, 2), 6.0);
  ck_assert_double_eq(arch_plan_params(pl, 0), 47.0);
  ck_assert_double_eq(arch_plan_params(pl, 1), 47.0);
  ck_assert_double_eq(arch_plan_flops(pl, 0), 252.0);
  arch_plan_free(pl);
  /* By hand on P = 7: the 4 output units sit on partitions 0..3 (blocks 1,1,1,1,0,0,0),
   * so partitions 4..6 need nothing; partition 0 needs the 6 hidden units, one from
   * each of partitions 0..5 (blocks 1,1,1,1,1,1,0): 5 from others. */
  pl = arch_plan_create(a, 7, 1);
  ck_assert_uint_eq(arch_plan_units(pl, 2, 4), 0);
  ck_assert_uint_eq(arch_plan_halo(pl, 2, 4, 0), 0);
  ck_assert_uint_eq(arch_plan_halo(pl, 2, 0, 5), 1);
  ck_assert_uint_eq(arch_plan_halo(pl, 2, 0, 6), 0);
  ck_assert_double_eq(arch_plan_halo_total(pl, 2), 4 * 5.0);
  arch_plan_free(pl);
  arch_free(a);
}
END_TEST

/* By hand: input 8x8x2, LC 3x3 stride 1, 4 channels -> 6x6x4, P = 2x1.
 * Input columns: partition 0 owns x 0..3, partition 1 x 4..7 (floor(i*8/2)).
 * Output columns: 0..2 and 3..5 (floor(i*6/2)). Partition 0's outputs read input
 * columns [0*1, (3-1)*1 + 3) = 0..4: column 4 is partition 1's, all 8 rows, both
 * channels: 1*8*2 = 16. Partition 1's outputs read [3, 5+3) = 3..7: column 3 is
 * partition 0's: 16. Per edge it would be more: input cell (4, y, c) feeds
 * partition 0's outputs (2, y', k) for up to 3 rows y' and all 4 channels k. */
START_TEST(test_arch_halo_local_2x1)
{
  static const spec s[] = {{ARCH_INPUT, {8, 8, 2}}, {ARCH_LOCAL, {3, 3, 1, 1, 4}}};
  arch *a = BUILD(s);
  arch_plan *pl = arch_plan_create(a, 2, 1);
  ck_assert_uint_eq(arch_plan_units(pl, 0, 0), 64);
  ck_assert_uint_eq(arch_plan_units(pl, 1, 1), 3 * 6 * 4);
  ck_assert_uint_eq(arch_plan_halo(pl, 1, 0, 1), 16);
  ck_assert_uint_eq(arch_plan_halo(pl, 1, 1, 0), 16);
  ck_assert_double_eq(arch_plan_halo_total(pl, 1), 32.0);
  arch_plan_free(pl);
  arch_free(a);
}
END_TEST

/* By hand: input 9x9x1, LC 3x3 stride 1 -> 7x7, P = 3x3 (p = j*3 + i).
 * Input tiles per axis: [0,3) [3,6) [6,9). Output tiles: [0,2) [2,4) [4,7).
 * Needed input per axis: [0,4), [2,6), [4,9). Overlap of need i with tile i':
 *   i=0: 3 1 0    i=1: 1 3 0    i=2: 0 2 3
 * halo(p=(i,j), q=(i',j')) = ox(i,i') * oy(j,j'). Centre p=4: from q=0 1*1,
 * q=1 3*1, q=3 1*3, others 0: 7 = 4*4 - 3*3. Corner p=8: from q=4 2*2, q=5 3*2,
 * q=7 2*3: 16 = 5*5 - 9. Not symmetric: halo(4, 8) = ox(1,2)*oy(1,2) = 0.
 * Total = sum of needed areas - own = (4+4+5)^2 - 81 = 88. */
START_TEST(test_arch_halo_local_3x3)
{
  static const spec s[] = {{ARCH_INPUT, {9, 9, 1}}, {ARCH_LOCAL, {3, 3, 1, 1, 1}}};
  arch *a = BUILD(s);
  arch_plan *pl = arch_plan_create(a, 3, 3);
  static const size_t ov[3][3] = {{3, 1, 0}, {1, 3, 0}, {0, 2, 3}};
  for (size_t p = 0; p < 9; p++)
    for (size_t q = 0; q < 9; q++) {
      size_t want = p == q ? 0 : ov[p % 3][q % 3] * ov[p / 3][q / 3];
      ck_assert_uint_eq(arch_plan_halo(pl, 1, p, q), want);
    }
  ck_assert_uint_eq(arch_plan_halo(pl, 1, 4, 0), 1);
  ck_assert_uint_eq(arch_plan_halo(pl, 1, 8, 4), 4);
  ck_assert_uint_eq(arch_plan_halo(pl, 1, 4, 8), 0);
  ck_assert_double_eq(arch_plan_halo_total(pl, 1), 88.0);
  arch_plan_free(pl);
  arch_free(a);
}
END_TEST

/* By hand: 1-D input 8x1x1, LC window 2 stride 4 -> (8-2)/4+1 = 2 outputs, P = 2x1.
 * Output 0 reads x 0..1 and output 1 reads x 4..5, each inside its own input tile
 * ([0,4), [4,8)): no halo. Same with window 4 = stride (tiles abut exactly). */
START_TEST(test_arch_halo_local_disjoint)
{
  static const spec s[] = {{ARCH_INPUT, {8, 1, 1}}, {ARCH_LOCAL, {2, 1, 4, 1, 3}},
                           {ARCH_LOCAL, {1, 1, 1, 1, 1}}};
  arch *a = BUILD(s);
  arch_plan *pl = arch_plan_create(a, 2, 1);
  ck_assert_uint_eq(arch_units(a, 1), 6);
  ck_assert_double_eq(arch_plan_halo_total(pl, 1), 0.0);
  ck_assert_double_eq(arch_plan_halo_total(pl, 2), 0.0);
  arch_plan_free(pl);
  arch_free(a);
  static const spec t[] = {{ARCH_INPUT, {8, 1, 1}}, {ARCH_LOCAL, {4, 1, 4, 1, 1}}};
  a = BUILD(t);
  pl = arch_plan_create(a, 2, 1);
  ck_assert_double_eq(arch_plan_halo_total(pl, 1), 0.0);
  arch_plan_free(pl);
  arch_free(a);
}
END_TEST

/* One machine owns everything and receives nothing. */
START_TEST(test_arch_halo_single)
{
  for (size_t i = 0; arch_virtual_at(i) != NULL; i++) {
    const arch *a = arch_virtual_at(i);
    arch_plan *pl = arch_plan_create(a, 1, 1);
    for (size_t l = 0; l < arch_n_layers(a); l++) {
      ck_assert_double_eq(arch_plan_halo_total(pl, l), 0.0);
      ck_assert_uint_eq(arch_plan_units(pl, l, 0), arch_units(a, l));
    }
    ck_assert_double_eq(arch_plan_flops(pl, 0), arch_train_flops(a));
    arch_plan_free(pl);
  }
}
END_TEST

/* ---- Unit-by-unit reference: owners from the documented tiling and blocks, and
 * the set of distinct inputs each partition reads, by enumerating every edge. */

static size_t owner(const arch *a, size_t l, size_t u, size_t px, size_t py, int tiled)
{
  const arch_layer *L = arch_layer_at(a, l);
  size_t P = px * py;
  if (!tiled) {
    for (size_t k = 0; k < P; k++) {
      size_t b, e;
      data_shard_bounds(arch_units(a, l), P, k, &b, &e);
      if (u >= b && u < e) return k;
    }
    ck_abort_msg("unit %zu of layer %zu has no owner", u, l);
    return 0;
  }
  size_t x = (u / L->ch) % L->gx, y = u / L->ch / L->gx, i = 0, j = 0;
  while (!(x >= i * L->gx / px && x < (i + 1) * L->gx / px)) i++;
  while (!(y >= j * L->gy / py && y < (j + 1) * L->gy / py)) j++;
  return j * px + i;
}

static int is_windowed(arch_kind k)
{
  return k == ARCH_LOCAL || k == ARCH_POOL || k == ARCH_LCN;
}

static int is_tiled(const arch *a, size_t l)
{
  const arch_layer *L = arch_layer_at(a, l);
  if (is_windowed(L->kind)) return 1;
  return L->kind == ARCH_INPUT &&
         (L->gy > 1 || (arch_n_layers(a) > 1 && is_windowed(arch_layer_at(a, 1)->kind)));
}

static void check_bruteforce(const arch *a, size_t px, size_t py)
{
  arch_plan *pl = arch_plan_create(a, px, py);
  ck_assert_msg(pl != NULL, "no plan for %zux%zu", px, py);
  size_t P = px * py;
  for (size_t l = 1; l < arch_n_layers(a); l++) {
    const arch_layer *L = arch_layer_at(a, l), *in = arch_layer_at(a, l - 1);
    size_t n_in = arch_units(a, l - 1), n_out = arch_units(a, l);
    size_t *own_in = malloc(n_in * sizeof *own_in), *own_out = malloc(n_out * sizeof *own_out);
    size_t *count = calloc(P * P, sizeof *count); /* count[p*P + q] */
    char *need = malloc(n_in);
    for (size_t u = 0; u < n_in; u++) own_in[u] = owner(a, l - 1, u, px, py, is_tiled(a, l - 1));
    for (size_t u = 0; u < n_out; u++) own_out[u] = owner(a, l, u, px, py, is_tiled(a, l));
    for (size_t p = 0; p < P; p++) {
      memset(need, 0, n_in);
      for (size_t u = 0; u < n_out; u++) {
        if (own_out[u] != p) continue;
        if (L->kind == ARCH_DENSE) {
          memset(need, 1, n_in);
          continue;
        }
        size_t x = (u / L->ch) % L->gx, y = u / L->ch / L->gx, uc = u % L->ch;
        for (size_t dy = 0; dy < L->ry; dy++)
          for (size_t dx = 0; dx < L->rx; dx++) {
            /* LC and pooling windows start at x*s; an LCN's is centred, clipped to the grid */
            long ix = (long)(x * L->sx + dx), iy = (long)(y * L->sy + dy);
            if (L->kind == ARCH_LCN) {
              ix = (long)x + (long)dx - (long)(L->rx - 1) / 2;
              iy = (long)y + (long)dy - (long)(L->ry - 1) / 2;
              if (ix < 0 || iy < 0 || ix >= (long)in->gx || iy >= (long)in->gy)
                continue;
            }
            for (size_t c = 0; c < in->ch; c++)
              if (L->kind != ARCH_POOL || c == uc) /* a pooling unit reads its own map */
                need[((size_t)iy * in->gx + (size_t)ix) * in->ch + c] = 1;
          }
      }
      for (size_t v = 0; v < n_in; v++)
        if (need[v] && own_in[v] != p) count[p * P + own_in[v]]++;
    }
    double total = 0.0;
    for (size_t p = 0; p < P; p++)
      for (size_t q = 0; q < P; q++) {
        ck_assert_msg(arch_plan_halo(pl, l, p, q) == count[p * P + q],
                      "layer %zu, %zux%zu, p %zu q %zu: %zu != %zu", l, px, py, p, q,
                      arch_plan_halo(pl, l, p, q), count[p * P + q]);
        total += (double)count[p * P + q];
      }
    ck_assert_double_eq(arch_plan_halo_total(pl, l), total);
    free(own_in);
    free(own_out);
    free(count);
    free(need);
  }
  arch_plan_free(pl);
}

/* Small nets covering uneven tiles, strides above and below the window, two LC
 * stages, 1-D LC, empty dense blocks, a 2-D input feeding a dense layer, and pooling and
 * LCN layers (one map per pooling window, centred and clipped LCN windows). */
START_TEST(test_arch_halo_bruteforce)
{
  static const spec n1[] = {{ARCH_INPUT, {9, 9, 2}}, {ARCH_LOCAL, {3, 3, 1, 1, 2}},
                            {ARCH_LOCAL, {2, 2, 2, 2, 3}}, {ARCH_DENSE, {5}}};
  static const spec n2[] = {{ARCH_INPUT, {12, 7, 1}}, {ARCH_LOCAL, {4, 3, 3, 2, 1}}, {ARCH_DENSE, {4}}};
  static const spec n3[] = {{ARCH_INPUT, {20, 1, 1}}, {ARCH_LOCAL, {5, 1, 2, 1, 2}},
                            {ARCH_LOCAL, {3, 1, 1, 1, 1}}, {ARCH_DENSE, {7}}};
  static const spec n4[] = {{ARCH_INPUT, {10, 1, 1}}, {ARCH_DENSE, {6}}, {ARCH_DENSE, {4}}};
  static const spec n5[] = {{ARCH_INPUT, {4, 3, 2}}, {ARCH_DENSE, {5}}};
  static const spec n6[] = {{ARCH_INPUT, {13, 11, 3}}, {ARCH_LOCAL, {5, 4, 2, 3, 2}},
                            {ARCH_LOCAL, {1, 1, 2, 1, 2}}};
  /* a stage of the image nets: LC, overlapping pooling, LCN, then a dense output */
  static const spec n7[] = {{ARCH_INPUT, {11, 9, 2}}, {ARCH_LOCAL, {3, 3, 1, 1, 3}}, {ARCH_POOL, {3, 2, 2, 1}},
                            {ARCH_LCN, {3, 3}}, {ARCH_DENSE, {4}}};
  /* an even LCN window (centred one cell to the left and up), LC over LCN, pooling last */
  static const spec n8[] = {{ARCH_INPUT, {10, 8, 1}}, {ARCH_LCN, {4, 2}}, {ARCH_LOCAL, {2, 3, 2, 1, 2}},
                            {ARCH_POOL, {2, 2, 1, 2}}};
  static const struct {
    const spec *s;
    size_t n;
    size_t tilings[6][2];
  } cases[] = {
    {n1, 4, {{1, 1}, {2, 1}, {1, 2}, {2, 2}, {3, 3}, {3, 2}}},
    {n2, 3, {{3, 3}, {3, 1}, {2, 2}, {1, 3}, {2, 3}, {1, 1}}},
    {n3, 4, {{4, 1}, {6, 1}, {5, 1}, {2, 1}, {3, 1}, {1, 1}}},
    {n4, 3, {{2, 1}, {3, 1}, {1, 3}, {7, 1}, {10, 1}, {4, 2}}},
    {n5, 2, {{2, 3}, {4, 1}, {1, 3}, {2, 1}, {4, 3}, {1, 1}}},
    {n6, 3, {{2, 2}, {3, 3}, {3, 1}, {2, 3}, {1, 3}, {3, 2}}},
    {n7, 5, {{2, 2}, {3, 3}, {4, 2}, {1, 3}, {4, 4}, {1, 1}}},
    {n8, 4, {{2, 2}, {4, 1}, {3, 3}, {1, 3}, {2, 3}, {1, 1}}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    arch *a = build(cases[i].s, cases[i].n);
    for (size_t t = 0; t < 6; t++) check_bruteforce(a, cases[i].tilings[t][0], cases[i].tilings[t][1]);
    arch_free(a);
  }
}
END_TEST

/* 8x8 -> LC 3, stride 1 -> 6x6: 7 columns of tiles would leave one empty. */
START_TEST(test_arch_plan_rejects)
{
  static const spec s[] = {{ARCH_INPUT, {8, 8, 1}}, {ARCH_LOCAL, {3, 3, 1, 1, 1}}};
  arch *a = BUILD(s);
  ck_assert_ptr_null(arch_plan_create(a, 7, 1));
  ck_assert_ptr_null(arch_plan_create(a, 1, 7));
  ck_assert_ptr_null(arch_plan_create(a, 0, 1));
  ck_assert_ptr_null(arch_plan_create(a, 1, 0));
  arch_plan *pl = arch_plan_create(a, 6, 6);
  ck_assert_ptr_nonnull(pl);
  arch_plan_free(pl);
  arch_free(a);
  /* A 1-D input feeding an LC layer is tiled over x only: py = 2 leaves a row empty. */
  static const spec t[] = {{ARCH_INPUT, {8, 1, 1}}, {ARCH_LOCAL, {2, 1, 1, 1, 1}}};
  a = BUILD(t);
  ck_assert_ptr_null(arch_plan_create(a, 2, 2));
  arch_free(a);
  /* image-80m's last pooled grid is 12x12 (arch.c): 12 columns fit, 13 do not. */
  const arch *v = arch_virtual_find("image-80m");
  ck_assert_ptr_null(arch_plan_create(v, 13, 1));
  pl = arch_plan_create(v, 12, 12);
  ck_assert_ptr_nonnull(pl);
  arch_plan_free(pl);
}
END_TEST

START_TEST(test_arch_layer_out_of_range)
{
  const arch *a = arch_virtual_find("speech-42m");
  (void)arch_units(a, arch_n_layers(a));
}
END_TEST

START_TEST(test_arch_partition_out_of_range)
{
  const arch *a = arch_virtual_find("speech-42m");
  arch_plan *pl = arch_plan_create(a, 2, 1);
  (void)arch_plan_halo(pl, 1, 0, 2);
}
END_TEST

/* arch_plan_square: the most square tiling for LC nets (9 x 9 for 81, 4 x 2 for 8, a
 * prime count P x 1), P blocks for dense ones; NULL when a tile would be empty
 * (image-80m's last pooled grid is 12 wide, so 13 columns cannot work). */
START_TEST(test_arch_plan_square)
{
  const arch *img = arch_virtual_find("image-1.7b"), *speech = arch_virtual_find("speech-42m");
  static const size_t counts[] = {1, 2, 7, 8, 81, 144};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    arch_plan *a = arch_plan_square(img, counts[i]), *b = arch_plan_square(speech, counts[i]);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(arch_plan_parts(a), counts[i]);
    ck_assert_uint_eq(arch_plan_parts(b), counts[i]);
    arch_plan_free(a);
    arch_plan_free(b);
  }
  /* 81 = 9 x 9: the first LC layer's 91 columns split in 9, so partition 0 owns
   * floor(91/9) = 10 columns and 10 rows of 35 maps */
  arch_plan *nine = arch_plan_square(img, 81);
  ck_assert_uint_eq(arch_plan_units(nine, 1, 0), 10 * 10 * 35);
  arch_plan_free(nine);
  ck_assert_ptr_null(arch_plan_square(arch_virtual_find("image-80m"), 13));
  ck_assert_ptr_null(arch_plan_square(img, 0));
}
END_TEST

Suite *arch_suite(void)
{
  Suite *s = suite_create("arch");
  ADD_TCASE(s, "create", test_arch_create_rejects, test_arch_create_shapes);
  ADD_TCASE(s, "flops", test_arch_flops_dense, test_arch_flops_local, test_arch_flops_pool_lcn);
  ADD_TCASE(s, "params", test_arch_params_speech, test_arch_params_image, test_arch_virtual_listing);
  ADD_TCASE(s, "plan", test_arch_plan_sums, test_arch_plan_dense_blocks, test_arch_plan_square);
  ADD_TCASE(s, "halo", test_arch_halo_dense, test_arch_halo_local_2x1, test_arch_halo_local_3x3,
            test_arch_halo_local_disjoint, test_arch_halo_single, test_arch_halo_bruteforce);
  ADD_TCASE(s, "limits", test_arch_plan_rejects);
  TCase *tc = tcase_create("invariants");
  tcase_add_test_raise_signal(tc, test_arch_layer_out_of_range, SIGABRT);
  tcase_add_test_raise_signal(tc, test_arch_partition_out_of_range, SIGABRT);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(arch_suite)

/* arch.c - layer shapes, their costs, and their partition over machines.
 *
 * DistBelief splits one model replica over P machines (Dean et al. 2012, sec. 3
 * and Fig. 1): each machine computes the units it owns and receives, once per
 * example, every activation it needs from another machine, however many edges
 * that activation has into its partition. This module counts those activations
 * from shapes alone, with interval arithmetic on tiles, so it costs O(1) per
 * (layer, p, q) whatever the number of units (the 1.7B net has ~5e5 of them).
 *
 * The image nets' three stages of filtering, pooling and local contrast normalisation
 * (Dean et al. sec. 5) are three layers each: the pooling and LCN layers have no
 * parameters, but their windows cross tile boundaries like an LC layer's, so they add
 * halo exchanges, and pooling shrinks the grid the next stage and the classifier see. */

#include "models/arch.h"
#include "models/mem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct arch {
  const char *name;
  const char *description;
  size_t n_layers;
  const arch_layer *layers; /* owned, or a static table for a virtual network */
  arch_layer *owned;        /* NULL for a virtual network */
  size_t cap;
};

struct arch_plan {
  const arch *a;
  size_t n_layers; /* of a when the plan was made */
  size_t px, py, parts;
  unsigned char *tiled; /* per layer: tiled px x py (1) or split in unit blocks (0) */
};

/* Output grid of a window r moved by s over in cells: floor((in - r)/s) + 1. */
#define ARCH_OUT(in, r, s) (((in) - (r)) / (s) + 1)

arch *arch_create(void)
{
  arch *a = mem_calloc(1, sizeof *a);
  a->name = "";
  a->description = "";
  return a;
}

void arch_free(arch *a)
{
  if (a == NULL) return;
  free(a->owned);
  free(a);
}

/* a*b*c, or 0 if it overflows size_t (0 is never a valid unit count). */
static size_t mul3(size_t a, size_t b, size_t c)
{
  if (a != 0 && b > SIZE_MAX / a) return 0;
  if (a * b != 0 && c > SIZE_MAX / (a * b)) return 0;
  return a * b * c;
}

static int arch_push(arch *a, arch_layer L)
{
  if (a->owned == NULL && a->layers != NULL) mem_die("arch", "arch_push: a virtual network is read-only");
  if (mul3(L.gx, L.gy, L.ch) == 0) return -1;
  if (a->n_layers == a->cap) {
    size_t cap = a->cap ? 2 * a->cap : 8;
    arch_layer *p = mem_realloc(a->owned, cap * sizeof *p);
    a->owned = p;
    a->layers = p;
    a->cap = cap;
  }
  a->owned[a->n_layers++] = L;
  return 0;
}

int arch_add_input(arch *a, size_t gx, size_t gy, size_t ch)
{
  if (a->n_layers != 0 || gx == 0 || gy == 0 || ch == 0) return -1;
  return arch_push(a, (arch_layer){ARCH_INPUT, gx, gy, ch, 0, 0, 0, 0});
}

int arch_add_dense(arch *a, size_t units)
{
  if (a->n_layers == 0 || units == 0) return -1;
  return arch_push(a, (arch_layer){ARCH_DENSE, units, 1, 1, 0, 0, 0, 0});
}

/* Windowed layers only over a grid: after a dense layer the units have no geometry to
 * tile. The previous layer, or NULL when the window cannot follow it. */
static const arch_layer *grid_below(const arch *a, size_t rx, size_t ry, size_t sx, size_t sy)
{
  if (a->n_layers == 0 || rx == 0 || ry == 0 || sx == 0 || sy == 0) return NULL;
  const arch_layer *in = &a->layers[a->n_layers - 1];
  return in->kind == ARCH_DENSE || rx > in->gx || ry > in->gy ? NULL : in;
}

int arch_add_local(arch *a, size_t rx, size_t ry, size_t sx, size_t sy, size_t ch)
{
  const arch_layer *in = grid_below(a, rx, ry, sx, sy);
  if (in == NULL || ch == 0) return -1;
  return arch_push(a, (arch_layer){ARCH_LOCAL, ARCH_OUT(in->gx, rx, sx), ARCH_OUT(in->gy, ry, sy), ch,
                                   rx, ry, sx, sy});
}

int arch_add_pool(arch *a, size_t rx, size_t ry, size_t sx, size_t sy)
{
  const arch_layer *in = grid_below(a, rx, ry, sx, sy);
  if (in == NULL) return -1;
  return arch_push(a, (arch_layer){ARCH_POOL, ARCH_OUT(in->gx, rx, sx), ARCH_OUT(in->gy, ry, sy), in->ch,
                                   rx, ry, sx, sy});
}

int arch_add_lcn(arch *a, size_t rx, size_t ry)
{
  const arch_layer *in = grid_below(a, rx, ry, 1, 1);
  if (in == NULL) return -1;
  return arch_push(a, (arch_layer){ARCH_LCN, in->gx, in->gy, in->ch, rx, ry, 1, 1});
}

size_t arch_n_layers(const arch *a)
{
  return a->n_layers;
}

const arch_layer *arch_layer_at(const arch *a, size_t l)
{
  if (l >= a->n_layers) mem_die("arch", "arch_layer_at: layer index out of range");
  return &a->layers[l];
}

size_t arch_units(const arch *a, size_t l)
{
  const arch_layer *L = arch_layer_at(a, l);
  return L->gx * L->gy * L->ch;
}

/* Inputs of one unit of layer l, as its flops count them: the whole previous layer
 * (dense), its window over all previous channels (LC), its window of its own channel
 * (pooling), or two window sums per cell over the channels (LCN, see arch.h). */
static double fan_in(const arch *a, size_t l)
{
  const arch_layer *L = arch_layer_at(a, l);
  switch (L->kind) {
  case ARCH_INPUT: return 0.0;
  case ARCH_DENSE: return (double)arch_units(a, l - 1);
  case ARCH_LOCAL: return (double)L->rx * (double)L->ry * (double)a->layers[l - 1].ch;
  case ARCH_POOL: return (double)L->rx * (double)L->ry;
  case ARCH_LCN: return 2.0 * (double)L->rx * (double)L->ry;
  }
  mem_die("arch", "invalid layer kind");
  return 0.0;
}

/* Weights and the bias of one unit; the input, pooling and LCN layers have none. */
static double params_per_unit(const arch *a, size_t l)
{
  arch_kind k = arch_layer_at(a, l)->kind;
  return k == ARCH_DENSE || k == ARCH_LOCAL ? fan_in(a, l) + 1.0 : 0.0;
}

/* Whether layer l is a grid layer read through windows (tiled by a plan). */
static int windowed(arch_kind k)
{
  return k == ARCH_LOCAL || k == ARCH_POOL || k == ARCH_LCN;
}

/* Forward 2 per weight, backward twice that (dX and dW), as cost_dense_*_flops;
 * biases and activations are O(1) per unit and left out, as in cost.c. */
static double train_flops_per_unit(const arch *a, size_t l)
{
  return 6.0 * fan_in(a, l);
}

double arch_layer_params(const arch *a, size_t l)
{
  return (double)arch_units(a, l) * params_per_unit(a, l);
}

double arch_params(const arch *a)
{
  double p = 0.0;
  for (size_t l = 0; l < a->n_layers; l++) p += arch_layer_params(a, l);
  return p;
}

double arch_layer_train_flops(const arch *a, size_t l)
{
  return (double)arch_units(a, l) * train_flops_per_unit(a, l);
}

double arch_train_flops(const arch *a)
{
  double f = 0.0;
  for (size_t l = 0; l < a->n_layers; l++) f += arch_layer_train_flops(a, l);
  return f;
}

const char *arch_name(const arch *a)
{
  return a->name;
}

const char *arch_description(const arch *a)
{
  return a->description;
}

/* ---- Virtual networks ------------------------------------------------------ */

#define V_INPUT(gx, gy, ch) {ARCH_INPUT, (gx), (gy), (ch), 0, 0, 0, 0}
#define V_DENSE(n) {ARCH_DENSE, (n), 1, 1, 0, 0, 0, 0}
/* A square LC layer with window r and stride s over a g_in x g_in grid. */
#define V_LOCAL(g_in, r, s, ch) \
  {ARCH_LOCAL, ARCH_OUT(g_in, r, s), ARCH_OUT(g_in, r, s), (ch), (r), (r), (s), (s)}

/* Dean et al. 2012 sec. 5: 11 frames x 40 log-energies in, four fully connected
 * hidden layers of 2560, 8192 softmax outputs. Params 440*2560 + 3*2560^2 +
 * 2560*8192 weights + 4*2560 + 8192 biases = 41,777,152, as cost.c's speech-42m. */
static const arch_layer speech_42m[] = {
  V_INPUT(440, 1, 1), V_DENSE(2560), V_DENSE(2560), V_DENSE(2560), V_DENSE(2560), V_DENSE(8192),
};

/* The image nets follow Dean et al. 2012 sec. 5: 100x100 images, "three stages, each
 * composed of filtering, pooling and local contrast normalization", filtering nodes on
 * 10x10 patches, 8 to 36 "identically connected nodes" per patch, and 21k one-vs-all
 * logistic outputs, here on the last pooled stage. From Le et al. 2012 (ICML, "Building
 * high-level features", sec. 3.2), whose architecture the paper points to: L2 pooling
 * over 5x5 overlapping neighbourhoods of one map, and local subtractive and divisive
 * normalisation. Assumed where both are silent:
 * - 3 input channels (RGB);
 * - 21,841 outputs: the category count of the full (Fall 2011) ImageNet release, the
 *   21k-category set of the time (21,000 would shrink the output layer by 3.8%);
 * - filters moved by 1 pixel (Le et al.'s filters tile every position), LCN over a 5x5
 *   window of all maps centred on each cell (the pooling's window), stride 1;
 * - pooling strides 1 (overlapping, no down-sampling) except one stage of 3, and the
 *   nodes per patch, chosen so that the totals land on Fig. 3's sizes: 1.7B from the
 *   paper's text, 80M and 330M from secondary summaries of the paper. The 330M and 1.7B
 *   nets share one geometry and differ in nodes per patch only, the knob the paper says
 *   it varied; the 80M net has the paper's lowest count, 8, and pools by 3 one stage
 *   earlier (8 nodes on the 330M geometry would give 163M).
 * A stage's units: LC c x (100 c_in + 1) parameters, 6 x 100 c_in flops; pooling and LCN
 * none, 6 x 25 and 6 x 50 flops (arch.h). */
#define IMG_SIDE 100
#define IMG_CH 3
#define IMG_R 10
#define IMG_POOL 5
#define IMG_LCN 5
#define IMG_CLASSES 21841
#define V_POOL(g_in, r, s, ch) {ARCH_POOL, ARCH_OUT(g_in, r, s), ARCH_OUT(g_in, r, s), (ch), (r), (r), (s), (s)}
#define V_LCN(g, r, ch) {ARCH_LCN, (g), (g), (ch), (r), (r), 1, 1}
/* One stage over a g_in x g_in grid: LC (window IMG_R, stride 1, ch maps), pooling
 * (IMG_POOL, stride ps), LCN; its output side is IMG_STAGE_OUT. */
#define IMG_STAGE(g_in, ps, ch)                                                                          \
  V_LOCAL(g_in, IMG_R, 1, ch), V_POOL(ARCH_OUT(g_in, IMG_R, 1), IMG_POOL, ps, ch),                      \
      V_LCN(ARCH_OUT(ARCH_OUT(g_in, IMG_R, 1), IMG_POOL, ps), IMG_LCN, ch)
#define IMG_STAGE_OUT(g_in, ps) ARCH_OUT(ARCH_OUT(g_in, IMG_R, 1), IMG_POOL, ps)
/* Grid sides after each stage: 87 (pooling stride 1), then 74 or 25, then 21 or 12. */
#define IMG_G1 IMG_STAGE_OUT(IMG_SIDE, 1)
#define IMG_G2_P1 IMG_STAGE_OUT(IMG_G1, 1)
#define IMG_G2_P3 IMG_STAGE_OUT(IMG_G1, 3)

/* image-80m: 8 maps per stage, pooling strides 1, 3, 1.
 *   LC1 100x100x3 -> 91x91x8    66,248 units x (300+1)  =  19,940,648
 *   pool, LCN     -> 87x87x8
 *   LC2 87x87x8   -> 78x78x8    48,672 units x (800+1)  =  38,986,272
 *   pool /3, LCN  -> 25x25x8
 *   LC3 25x25x8   -> 16x16x8     2,048 units x (800+1)  =   1,640,448
 *   pool, LCN     -> 12x12x8
 *   out 1,152 -> 21,841 dense   1,152*21,841 + 21,841   =  25,182,673
 *   total 85,750,041 (80M + 7%); train flops 543,684,192 per example. */
static const arch_layer image_80m[] = {
  V_INPUT(IMG_SIDE, IMG_SIDE, IMG_CH), IMG_STAGE(IMG_SIDE, 1, 8), IMG_STAGE(IMG_G1, 3, 8),
  IMG_STAGE(IMG_G2_P3, 1, 8), V_DENSE(IMG_CLASSES),
};

/* image-330m: 13 maps per stage, pooling strides 1, 1, 3.
 *   LC1 100x100x3 -> 91x91x13  107,653 units x (300+1)  =  32,403,553
 *   pool, LCN     -> 87x87x13
 *   LC2 87x87x13  -> 78x78x13   79,092 units x (1300+1) = 102,898,692
 *   pool, LCN     -> 74x74x13
 *   LC3 74x74x13  -> 65x65x13   54,925 units x (1300+1) =  71,457,425
 *   pool /3, LCN  -> 21x21x13
 *   out 5,733 -> 21,841 dense   5,733*21,841 + 21,841   = 125,236,294
 *   total 331,995,964 (330M + 0.6%); train flops 2,069,287,818 per example. */
static const arch_layer image_330m[] = {
  V_INPUT(IMG_SIDE, IMG_SIDE, IMG_CH), IMG_STAGE(IMG_SIDE, 1, 13), IMG_STAGE(IMG_G1, 1, 13),
  IMG_STAGE(IMG_G2_P1, 3, 13), V_DENSE(IMG_CLASSES),
};

/* image-1.7b: 35 maps per stage, pooling strides 1, 1, 3 (image-330m's geometry).
 *   LC1 100x100x3 -> 91x91x35  289,835 units x (300+1)  =  87,240,335
 *   LC2 87x87x35  -> 78x78x35  212,940 units x (3500+1) = 745,502,940
 *   LC3 74x74x35  -> 65x65x35  147,875 units x (3500+1) = 517,710,375
 *   out 15,435 -> 21,841 dense 15,435*21,841 + 21,841   = 337,137,676
 *   total 1,687,591,326 (1.7B - 0.7%); train flops 10,333,917,510 per example. */
static const arch_layer image_1_7b[] = {
  V_INPUT(IMG_SIDE, IMG_SIDE, IMG_CH), IMG_STAGE(IMG_SIDE, 1, 35), IMG_STAGE(IMG_G1, 1, 35),
  IMG_STAGE(IMG_G2_P1, 3, 35), V_DENSE(IMG_CLASSES),
};

#define N_OF(t) (sizeof(t) / sizeof((t)[0]))

static const arch arch_virtuals[] = {
  {"speech-42m",
   "DistBelief speech net, 440-2560x4-8192 fully connected, 41.8M params (Dean et al. 2012, sec. 5)",
   N_OF(speech_42m), speech_42m, NULL, 0},
  {"image-80m",
   "ImageNet net, 100x100x3, 3 stages of 10x10 LC x8 maps, 5x5 L2 pooling (strides 1,3,1) and 5x5 LCN, "
   "21841 outputs on the last pooled stage, 85.8M params (Dean'12 sec. 5)",
   N_OF(image_80m), image_80m, NULL, 0},
  {"image-330m",
   "ImageNet net, 100x100x3, 3 stages of 10x10 LC x13 maps, 5x5 L2 pooling (strides 1,1,3) and 5x5 LCN, "
   "21841 outputs on the last pooled stage, 332.0M params (Dean'12 sec. 5)",
   N_OF(image_330m), image_330m, NULL, 0},
  {"image-1.7b",
   "ImageNet net, 100x100x3, 3 stages of 10x10 LC x35 maps, 5x5 L2 pooling (strides 1,1,3) and 5x5 LCN, "
   "21841 outputs on the last pooled stage, 1.69B params (Dean'12 sec. 5)",
   N_OF(image_1_7b), image_1_7b, NULL, 0},
};

const arch *arch_virtual_find(const char *name)
{
  for (size_t i = 0; i < N_OF(arch_virtuals); i++)
    if (strcmp(name, arch_virtuals[i].name) == 0) return &arch_virtuals[i];
  return NULL;
}

const arch *arch_virtual_at(size_t i)
{
  return i < N_OF(arch_virtuals) ? &arch_virtuals[i] : NULL;
}

/* ---- Partitions ------------------------------------------------------------ */

/* Tile i of n over g cells: [floor(i*g/n), floor((i+1)*g/n)); empty iff g < n. */
static void tile_bounds(size_t g, size_t n, size_t i, size_t *b, size_t *e)
{
  *b = i * g / n;
  *e = (i + 1) * g / n;
}

/* Block k of n over u units, sizes differing by at most one, larger blocks first
 * (the split of data_shard_bounds). */
static void block_bounds(size_t u, size_t n, size_t k, size_t *b, size_t *e)
{
  size_t base = u / n, extra = u % n;
  *b = k * base + (k < extra ? k : extra);
  *e = *b + base + (k < extra ? 1 : 0);
}

static size_t overlap(size_t b0, size_t e0, size_t b1, size_t e1)
{
  size_t b = b0 > b1 ? b0 : b1, e = e0 < e1 ? e0 : e1;
  return e > b ? e - b : 0;
}

arch_plan *arch_plan_create(const arch *a, size_t px, size_t py)
{
  if (px == 0 || py == 0 || py > SIZE_MAX / px) return NULL;
  size_t n = a->n_layers;
  unsigned char *tiled = mem_calloc(n, 1);
  for (size_t l = 0; l < n; l++) {
    const arch_layer *L = &a->layers[l];
    tiled[l] = windowed(L->kind) || (L->kind == ARCH_INPUT && (L->gy > 1 || (n > 1 && windowed(a->layers[1].kind))));
    if (tiled[l] && (L->gx < px || L->gy < py)) {
      free(tiled);
      return NULL;
    }
  }
  arch_plan *pl = mem_alloc(sizeof *pl);
  *pl = (arch_plan){a, n, px, py, px * py, tiled};
  return pl;
}

void arch_plan_free(arch_plan *pl)
{
  if (pl == NULL) return;
  free(pl->tiled);
  free(pl);
}

size_t arch_plan_parts(const arch_plan *pl)
{
  return pl->parts;
}

static void plan_check(const arch_plan *pl, size_t l, size_t p, const char *who)
{
  if (l >= pl->n_layers || p >= pl->parts) {
    fprintf(stderr, "arch: %s: layer %zu or partition %zu out of range\n", who, l, p);
    abort();
  }
}

size_t arch_plan_units(const arch_plan *pl, size_t l, size_t p)
{
  plan_check(pl, l, p, "arch_plan_units");
  const arch_layer *L = &pl->a->layers[l];
  size_t b, e;
  if (!pl->tiled[l]) {
    block_bounds(arch_units(pl->a, l), pl->parts, p, &b, &e);
    return e - b;
  }
  size_t yb, ye;
  tile_bounds(L->gx, pl->px, p % pl->px, &b, &e);
  tile_bounds(L->gy, pl->py, p / pl->px, &yb, &ye);
  return (e - b) * (ye - yb) * L->ch;
}

double arch_plan_params(const arch_plan *pl, size_t p)
{
  double s = 0.0;
  for (size_t l = 0; l < pl->n_layers; l++)
    s += (double)arch_plan_units(pl, l, p) * params_per_unit(pl->a, l);
  return s;
}

double arch_plan_flops(const arch_plan *pl, size_t p)
{
  double s = 0.0;
  for (size_t l = 0; l < pl->n_layers; l++)
    s += (double)arch_plan_units(pl, l, p) * train_flops_per_unit(pl->a, l);
  return s;
}

/* Input cells [*b, *e) that an output tile [x0, x1) of a windowed layer reads along an
 * axis of window r and stride s over in cells: [x0*s, (x1-1)*s + r) for LC and pooling
 * (within the input by construction of the output size), the window centred on each
 * cell, clipped to the grid, for LCN. */
static void window_reads(arch_kind k, size_t x0, size_t x1, size_t r, size_t s, size_t in, size_t *b, size_t *e)
{
  if (k != ARCH_LCN) {
    *b = x0 * s;
    *e = (x1 - 1) * s + r;
    return;
  }
  size_t before = (r - 1) / 2, after = r - 1 - before;
  *b = x0 > before ? x0 - before : 0;
  *e = x1 + after < in ? x1 + after : in;
}

/* For a windowed layer, p's output tile reads the input cells of window_reads; the
 * layer below is tiled too (a windowed layer follows only the input or another windowed
 * layer), so the distinct cells p reads from q are the overlap of those with q's input
 * tile, per axis, times all input channels (an LC or LCN window spans them; a pooling
 * window takes one, but p's tile holds every channel of its cells). */
size_t arch_plan_halo(const arch_plan *pl, size_t l, size_t p, size_t q)
{
  plan_check(pl, l, p, "arch_plan_halo");
  plan_check(pl, l, q, "arch_plan_halo");
  if (l == 0 || p == q || arch_plan_units(pl, l, p) == 0) return 0;
  const arch_layer *L = &pl->a->layers[l], *in = &pl->a->layers[l - 1];
  if (L->kind == ARCH_DENSE) return arch_plan_units(pl, l - 1, q);
  if (!pl->tiled[l - 1]) mem_die("arch", "arch_plan_halo: a windowed layer over an untiled layer");
  size_t x0, x1, y0, y1, qx0, qx1, qy0, qy1, rb, re, cb, ce;
  tile_bounds(L->gx, pl->px, p % pl->px, &x0, &x1);
  tile_bounds(L->gy, pl->py, p / pl->px, &y0, &y1);
  tile_bounds(in->gx, pl->px, q % pl->px, &qx0, &qx1);
  tile_bounds(in->gy, pl->py, q / pl->px, &qy0, &qy1);
  window_reads(L->kind, x0, x1, L->rx, L->sx, in->gx, &rb, &re);
  window_reads(L->kind, y0, y1, L->ry, L->sy, in->gy, &cb, &ce);
  return overlap(rb, re, qx0, qx1) * overlap(cb, ce, qy0, qy1) * in->ch;
}

double arch_plan_halo_total(const arch_plan *pl, size_t l)
{
  double s = 0.0;
  for (size_t p = 0; p < pl->parts; p++)
    for (size_t q = 0; q < pl->parts; q++)
      if (p != q) s += (double)arch_plan_halo(pl, l, p, q);
  return s;
}

const arch *arch_plan_arch(const arch_plan *pl)
{
  return pl->a;
}

size_t arch_plan_runs(const arch_plan *pl, size_t l, size_t p)
{
  if (arch_plan_units(pl, l, p) == 0) return 0;
  if (!pl->tiled[l]) return 1;
  size_t yb, ye;
  tile_bounds(pl->a->layers[l].gy, pl->py, p / pl->px, &yb, &ye);
  return ye - yb;
}

void arch_plan_run(const arch_plan *pl, size_t l, size_t p, size_t k, size_t *begin, size_t *end)
{
  if (k >= arch_plan_runs(pl, l, p)) mem_die("arch", "arch_plan_run: run index out of range");
  const arch_layer *L = &pl->a->layers[l];
  if (!pl->tiled[l]) {
    block_bounds(arch_units(pl->a, l), pl->parts, p, begin, end);
    return;
  }
  size_t xb, xe, yb, ye;
  tile_bounds(L->gx, pl->px, p % pl->px, &xb, &xe);
  tile_bounds(L->gy, pl->py, p / pl->px, &yb, &ye);
  *begin = ((yb + k) * L->gx + xb) * L->ch;
  *end = ((yb + k) * L->gx + xe) * L->ch;
}

/* The tile i of n over g cells holding cell x: floor(i*g/n) <= x iff i*g < (x+1)*n,
 * and x < floor((i+1)*g/n) iff (x+1)*n <= (i+1)*g, so i = floor(((x+1)*n - 1)/g). */
static size_t tile_of(size_t g, size_t n, size_t x)
{
  return ((x + 1) * n - 1) / g;
}

size_t arch_plan_owner(const arch_plan *pl, size_t l, size_t u)
{
  plan_check(pl, l, 0, "arch_plan_owner");
  size_t units = arch_units(pl->a, l);
  if (u >= units) mem_die("arch", "arch_plan_owner: unit index out of range");
  const arch_layer *L = &pl->a->layers[l];
  if (pl->tiled[l]) {
    size_t cell = u / L->ch;
    return tile_of(L->gy, pl->py, cell / L->gx) * pl->px + tile_of(L->gx, pl->px, cell % L->gx);
  }
  /* block_bounds: the first `extra` blocks hold base + 1 units, the others base. */
  size_t base = units / pl->parts, extra = units % pl->parts;
  if (u < extra * (base + 1)) return u / (base + 1);
  return extra + (u - extra * (base + 1)) / base;
}

size_t arch_plan_param_ranges(const arch_plan *pl, size_t p, size_t begin, size_t end, size_t *rb, size_t *re,
                              size_t cap)
{
  plan_check(pl, 0, p, "arch_plan_param_ranges");
  size_t n = 0, offset = 0, last = 0;
  for (size_t l = 1; l < pl->a->n_layers; l++) {
    size_t per_unit = (size_t)params_per_unit(pl->a, l);
    for (size_t k = 0; k < arch_plan_runs(pl, l, p); k++) {
      size_t u0, u1;
      arch_plan_run(pl, l, p, k, &u0, &u1);
      size_t b = offset + u0 * per_unit, e = offset + u1 * per_unit;
      b = b > begin ? b : begin;
      e = e < end ? e : end;
      if (b >= e)
        continue;
      if (n > 0 && last == b) { /* touching the previous range: extend it */
        if (n <= cap)
          re[n - 1] = e;
      } else {
        if (n < cap) {
          rb[n] = b;
          re[n] = e;
        }
        n++;
      }
      last = e;
    }
    offset += (size_t)arch_layer_params(pl->a, l);
  }
  return n;
}

arch_plan *arch_plan_square(const arch *a, size_t P)
{
  int tiled = 0;
  for (size_t l = 0; l < arch_n_layers(a); l++)
    tiled |= windowed(arch_layer_at(a, l)->kind);
  size_t py = 1;
  for (size_t d = 1; tiled && d * d <= P; d++)
    if (P % d == 0)
      py = d;
  return P ? arch_plan_create(a, P / py, py) : NULL;
}

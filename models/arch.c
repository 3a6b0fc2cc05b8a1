/* arch.c - layer shapes, their costs, and their partition over machines.
 *
 * DistBelief splits one model replica over P machines (Dean et al. 2012, sec. 3
 * and Fig. 1): each machine computes the units it owns and receives, once per
 * example, every activation it needs from another machine, however many edges
 * that activation has into its partition. This module counts those activations
 * from shapes alone, with interval arithmetic on tiles, so it costs O(1) per
 * (layer, p, q) whatever the number of units (the 1.7B net has ~5e5 of them).
 *
 * Only weighted layers are represented. Pooling and local contrast normalisation
 * (Dean et al. sec. 5) have no parameters to speak of and cost O(1) flops per unit
 * against O(fan_in) >= 300 for an LC unit, so they are left out; their spatial
 * down-sampling is folded into the LC strides of the virtual image nets. */

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

/* LC only over a grid: after a dense layer the units have no geometry to tile. */
int arch_add_local(arch *a, size_t rx, size_t ry, size_t sx, size_t sy, size_t ch)
{
  if (a->n_layers == 0 || rx == 0 || ry == 0 || sx == 0 || sy == 0 || ch == 0) return -1;
  const arch_layer *in = &a->layers[a->n_layers - 1];
  if (in->kind == ARCH_DENSE || rx > in->gx || ry > in->gy) return -1;
  return arch_push(a, (arch_layer){ARCH_LOCAL, ARCH_OUT(in->gx, rx, sx), ARCH_OUT(in->gy, ry, sy), ch,
                                   rx, ry, sx, sy});
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

/* Inputs of one unit of layer l: the whole previous layer (dense) or its window
 * over all previous channels (LC). */
static double fan_in(const arch *a, size_t l)
{
  const arch_layer *L = arch_layer_at(a, l);
  switch (L->kind) {
  case ARCH_INPUT: return 0.0;
  case ARCH_DENSE: return (double)arch_units(a, l - 1);
  case ARCH_LOCAL: return (double)L->rx * (double)L->ry * (double)a->layers[l - 1].ch;
  }
  mem_die("arch", "invalid layer kind");
  return 0.0;
}

/* Weights and the bias of one unit; the input layer has none. */
static double params_per_unit(const arch *a, size_t l)
{
  return l == 0 ? 0.0 : fan_in(a, l) + 1.0;
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

/* The image nets follow Dean et al. 2012 sec. 5: 100x100 images,
 * 3 stages of locally connected filtering with 10x10 windows and 8 to 36 nodes
 * per patch, then 21k one-vs-all logistic outputs. Assumed where the paper is
 * silent (it gives no strides, channel counts or colour depth per model):
 * - 3 input channels (RGB);
 * - 21,841 outputs: the category count of the full (Fall 2011) ImageNet release,
 *   the 21k-category set of the time; the paper only says "21k" (21,000 would
 *   shrink the output layer by 3.8%);
 * - strides standing in for the pooling between stages, and channel counts,
 *   chosen so the totals land on Fig. 3's sizes: 1.7B from the paper's text, 80M
 *   and 330M from secondary summaries of the paper. Stage 1 has stride 1.
 * The 80M and 330M nets share one geometry (strides 1, 2, 2) and differ in nodes
 * per patch only, which is the knob the paper says it varied. */
#define IMG_SIDE 100
#define IMG_CH 3
#define IMG_R 10
#define IMG_CLASSES 21841
/* Grid sides after each stage: 91 after stage 1; 41 (stride 2) or 82 (stride 1) after stage 2. */
#define IMG_G1 ARCH_OUT(IMG_SIDE, IMG_R, 1)
#define IMG_G2_S2 ARCH_OUT(IMG_G1, IMG_R, 2)
#define IMG_G2_S1 ARCH_OUT(IMG_G1, IMG_R, 1)

/* image-80m: strides 1, 2, 2, 8 channels per stage (the paper's lowest count).
 *   LC1 100x100x3 -> 91x91x8    66,248 units x (300+1)  =  19,940,648
 *   LC2 91x91x8   -> 41x41x8    13,448 units x (800+1)  =  10,771,848
 *   LC3 41x41x8   -> 16x16x8     2,048 units x (800+1)  =   1,640,448
 *   out 2,048 -> 21,841 dense   2,048*21,841 + 21,841   =  44,752,209
 *   total 77,105,153 (80M - 3.6%); train flops 462,009,408 per example. */
static const arch_layer image_80m[] = {
  V_INPUT(IMG_SIDE, IMG_SIDE, IMG_CH), V_LOCAL(IMG_SIDE, IMG_R, 1, 8), V_LOCAL(IMG_G1, IMG_R, 2, 8),
  V_LOCAL(IMG_G2_S2, IMG_R, 2, 8), V_DENSE(IMG_CLASSES),
};

/* image-330m: strides 1, 2, 2, 24, 24 and 28 channels.
 *   LC1 100x100x3 -> 91x91x24  198,744 units x (300+1)  =  59,821,944
 *   LC2 91x91x24  -> 41x41x24   40,344 units x (2400+1) =  96,865,944
 *   LC3 41x41x24  -> 16x16x28    7,168 units x (2400+1) =  17,210,368
 *   out 7,168 -> 21,841 dense   7,168*21,841 + 21,841   = 156,578,129
 *   total 330,476,385 (330M + 0.14%); train flops 1,981,249,728 per example. */
static const arch_layer image_330m[] = {
  V_INPUT(IMG_SIDE, IMG_SIDE, IMG_CH), V_LOCAL(IMG_SIDE, IMG_R, 1, 24), V_LOCAL(IMG_G1, IMG_R, 2, 24),
  V_LOCAL(IMG_G2_S2, IMG_R, 2, 28), V_DENSE(IMG_CLASSES),
};

/* image-1.7b: strides 1, 1, 2, 30 channels per stage.
 *   LC1 100x100x3 -> 91x91x30  248,430 units x (300+1)  =  74,777,430
 *   LC2 91x91x30  -> 82x82x30  201,720 units x (3000+1) = 605,361,720
 *   LC3 82x82x30  -> 37x37x30   41,070 units x (3000+1) = 123,251,070
 *   out 41,070 -> 21,841 dense  41,070*21,841 + 21,841  = 897,031,711
 *   total 1,700,421,931 (1.7B + 0.02%); train flops 10,199,453,220 per example. */
static const arch_layer image_1_7b[] = {
  V_INPUT(IMG_SIDE, IMG_SIDE, IMG_CH), V_LOCAL(IMG_SIDE, IMG_R, 1, 30), V_LOCAL(IMG_G1, IMG_R, 1, 30),
  V_LOCAL(IMG_G2_S1, IMG_R, 2, 30), V_DENSE(IMG_CLASSES),
};

#define N_OF(t) (sizeof(t) / sizeof((t)[0]))

static const arch arch_virtuals[] = {
  {"speech-42m",
   "DistBelief speech net, 440-2560x4-8192 fully connected, 41.8M params (Dean et al. 2012, sec. 5)",
   N_OF(speech_42m), speech_42m, NULL, 0},
  {"image-80m",
   "ImageNet net, 100x100x3, 3 LC stages 10x10 strides 1,2,2 x8 channels, "
   "21841 outputs, 77.1M params (Dean'12 sec. 5)",
   N_OF(image_80m), image_80m, NULL, 0},
  {"image-330m",
   "ImageNet net, 100x100x3, 3 LC stages 10x10 strides 1,2,2 x24,24,28 channels, "
   "21841 outputs, 330.5M params (Dean'12 sec. 5)",
   N_OF(image_330m), image_330m, NULL, 0},
  {"image-1.7b",
   "ImageNet net, 100x100x3, 3 LC stages 10x10 strides 1,1,2 x30 channels, "
   "21841 outputs, 1.70B params (Dean'12 sec. 5)",
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
    tiled[l] = L->kind == ARCH_LOCAL ||
               (L->kind == ARCH_INPUT && (L->gy > 1 || (n > 1 && a->layers[1].kind == ARCH_LOCAL)));
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

/* For an LC layer, p's output tile [x0, x1) reads input cells [x0*s, (x1-1)*s + r)
 * (within the input grid by construction of the output size); the input layer is
 * tiled too (an LC layer follows only the input or an LC layer), so the distinct
 * cells p reads from q are the overlap of that range with q's input tile, per axis,
 * times all input channels. */
size_t arch_plan_halo(const arch_plan *pl, size_t l, size_t p, size_t q)
{
  plan_check(pl, l, p, "arch_plan_halo");
  plan_check(pl, l, q, "arch_plan_halo");
  if (l == 0 || p == q || arch_plan_units(pl, l, p) == 0) return 0;
  const arch_layer *L = &pl->a->layers[l], *in = &pl->a->layers[l - 1];
  if (L->kind == ARCH_DENSE) return arch_plan_units(pl, l - 1, q);
  if (!pl->tiled[l - 1]) mem_die("arch", "arch_plan_halo: LC layer over an untiled layer");
  size_t x0, x1, y0, y1, qx0, qx1, qy0, qy1;
  tile_bounds(L->gx, pl->px, p % pl->px, &x0, &x1);
  tile_bounds(L->gy, pl->py, p / pl->px, &y0, &y1);
  tile_bounds(in->gx, pl->px, q % pl->px, &qx0, &qx1);
  tile_bounds(in->gy, pl->py, q / pl->px, &qy0, &qy1);
  size_t ox = overlap(x0 * L->sx, (x1 - 1) * L->sx + L->rx, qx0, qx1);
  size_t oy = overlap(y0 * L->sy, (y1 - 1) * L->sy + L->ry, qy0, qy1);
  return ox * oy * in->ch;
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
    tiled |= arch_layer_at(a, l)->kind == ARCH_LOCAL;
  size_t py = 1;
  for (size_t d = 1; tiled && d * d <= P; d++)
    if (P % d == 0)
      py = d;
  return P ? arch_plan_create(a, P / py, py) : NULL;
}

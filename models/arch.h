#ifndef MODELS_ARCH_H
#define MODELS_ARCH_H
/* arch.h - layer shapes of dense and locally connected networks (no parameters),
 * their costs, and their partition over px x py machines (DistBelief model
 * parallelism, Dean et al. 2012 sec. 3): who owns which units, and how many
 * activations cross each partition boundary. */

#include <stddef.h>

typedef enum arch_kind { ARCH_INPUT, ARCH_DENSE, ARCH_LOCAL, ARCH_POOL, ARCH_LCN } arch_kind;

/* One layer: units on a gx x gy grid with ch channels, units = gx*gy*ch, indexed
 * (y*gx + x)*ch + c. A dense layer has gx = units, gy = ch = 1. A locally connected
 * (LC) layer sees an rx x ry window of the previous grid (all its channels), moved by
 * sx, sy; its weights are not shared between locations. A pooling layer (L2 pooling,
 * Le et al. 2012) sees an rx x ry window of its own channel, moved by sx, sy, and a
 * local contrast normalisation (LCN) layer an rx x ry window of all channels centred
 * on its own cell (stride 1, the grid unchanged; Jarrett et al. 2009's subtractive and
 * divisive normalisation): neither has parameters. rx..sy are 0 for the input and
 * dense layers. Read-only for callers. */
typedef struct arch_layer {
  arch_kind kind;
  size_t gx, gy, ch;
  size_t rx, ry, sx, sy;
} arch_layer;

typedef struct arch arch;
typedef struct arch_plan arch_plan;

/* An empty architecture; add the input layer first. Caller frees with arch_free. */
arch *arch_create(void);
/* Frees a created architecture; NULL is a no-op. Never pass a virtual one. */
void arch_free(arch *a);

/* Each returns 0, or -1 with a unchanged if the shape is impossible:
 * arch_add_input: not the first layer, or a zero size;
 * arch_add_dense: no layer yet, or units == 0;
 * arch_add_local, arch_add_pool, arch_add_lcn: the previous layer is dense or there is
 *   none, a zero argument, or a window larger than the previous grid. LC and pooling
 *   output grids are floor((in - r)/s) + 1 per axis (pooling keeps the channels), an
 *   LCN's is its input's. */
int arch_add_input(arch *a, size_t gx, size_t gy, size_t ch);
int arch_add_dense(arch *a, size_t units);
int arch_add_local(arch *a, size_t rx, size_t ry, size_t sx, size_t sy, size_t ch);
int arch_add_pool(arch *a, size_t rx, size_t ry, size_t sx, size_t sy);
int arch_add_lcn(arch *a, size_t rx, size_t ry);

/* Layers including the input (layer 0). Layer indices past the end abort. */
size_t arch_n_layers(const arch *a);
const arch_layer *arch_layer_at(const arch *a, size_t l);
size_t arch_units(const arch *a, size_t l);
/* Weights and biases: dense n_in*n_out + n_out, LC units*(rx*ry*ch_in + 1), input,
 * pooling and LCN 0. */
double arch_layer_params(const arch *a, size_t l);
double arch_params(const arch *a);
/* Forward + backward flops per example: 2*fan_in per unit forward, twice that
 * backward, summed over layers. A pooling unit's fan-in is its window, rx*ry; an LCN
 * unit's is 2*rx*ry: the window's weighted mean and weighted variance, each summed over
 * the channels once per cell (Jarrett et al. 2009), whose cost its channels share. */
double arch_layer_train_flops(const arch *a, size_t l);
double arch_train_flops(const arch *a);

/* The name and one-line description of a virtual network; "" for a created one. */
const char *arch_name(const arch *a);
const char *arch_description(const arch *a);

/* Virtual networks (static, never freed): speech-42m, image-80m, image-330m,
 * image-1.7b. find returns NULL for an unknown name, at NULL past the end. */
const arch *arch_virtual_find(const char *name);
const arch *arch_virtual_at(size_t i);

/* Partitions a over P = px*py machines: LC, pooling and LCN layers, and the input when
 * it is 2-D (gy > 1) or feeds one of them, are tiled px x py over their grid (partition
 * p = j*px + i owns x in [floor(i*gx/px), floor((i+1)*gx/px)), y likewise, all
 * channels); the other layers are split by units into P contiguous blocks whose
 * sizes differ by at most one (as data_shard_bounds). Returns NULL if px or py is
 * 0 or a tiled layer would have an empty tile. a must outlive the plan and not
 * change while it lives; caller frees with arch_plan_free. */
arch_plan *arch_plan_create(const arch *a, size_t px, size_t py);
void arch_plan_free(arch_plan *pl);
/* The plan over P machines that dtsim uses: when a has tiled (LC, pooling, LCN) layers, the
 * most square tiling px x py = P with px >= py (9 x 9 for 81, 4 x 2 for 8), else
 * P x 1. NULL if that tiling leaves a tile empty. */
arch_plan *arch_plan_square(const arch *a, size_t P);

size_t arch_plan_parts(const arch_plan *pl);
/* Units of layer l owned by partition p (may be 0 for a small dense layer). */
size_t arch_plan_units(const arch_plan *pl, size_t l, size_t p);
/* Parameters of, and train flops per example of, the units p owns, over all layers. */
double arch_plan_params(const arch_plan *pl, size_t p);
double arch_plan_flops(const arch_plan *pl, size_t p);
/* Distinct units of layer l-1 owned by q that p needs to compute its units of layer
 * l: each crosses the q -> p boundary once forward (activation) and once p -> q
 * backward (gradient), however many edges it has (Dean et al. 2012, Fig. 1).
 * 0 when p == q, l == 0 or p owns no unit of l. */
size_t arch_plan_halo(const arch_plan *pl, size_t l, size_t p, size_t q);
/* Sum of arch_plan_halo(pl, l, p, q) over all p != q. */
double arch_plan_halo_total(const arch_plan *pl, size_t l);

/* The architecture the plan partitions. */
const arch *arch_plan_arch(const arch_plan *pl);
/* Partition p's units of layer l as runs of consecutive unit indices, increasing
 * and never empty: one run for a layer split in blocks, one per grid row of p's
 * tile for a tiled layer (that row's x range times all channels). arch_plan_runs
 * returns their number (0 if p owns no unit); arch_plan_run gives run k as
 * [*begin, *end). An out-of-range l, p or k aborts. */
size_t arch_plan_runs(const arch_plan *pl, size_t l, size_t p);
void arch_plan_run(const arch_plan *pl, size_t l, size_t p, size_t k, size_t *begin, size_t *end);
/* The partition owning unit u of layer l; an out-of-range l or u aborts. */
size_t arch_plan_owner(const arch_plan *pl, size_t l, size_t u);

/* Partition p's parameters that fall in [begin, end), as ranges of the parameter
 * vector in archnet.h's layout (layer after layer, unit after unit, each unit's
 * fan-in weights then its bias): one range per run of arch_plan_run, clipped, empty
 * ones dropped, touching ones merged. Writes the first min(count, cap) ranges into
 * [rb[i], re[i]) and returns count; cap 0 (rb, re may be NULL) only counts. A
 * parameter server shard that owns [begin, end) serves exactly these to p (Dean'12
 * sec. 4.1: a partition talks only to the shards holding its own parameters). */
size_t arch_plan_param_ranges(const arch_plan *pl, size_t p, size_t begin, size_t end, size_t *rb, size_t *re,
                              size_t cap);

#endif

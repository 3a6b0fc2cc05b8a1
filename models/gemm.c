/* gemm.c - a GEMM's time from its shape: the guide's tiled outer product (a thread block
 * per output tile, stepping through K), its two quantisation effects, and the two memory
 * limits a tile and the whole GEMM meet.
 *
 * A block of a tm x tn tile reads (tm + tn) elements of A and B for every element of K and
 * does 2 tm tn flops with them: bigger tiles reuse more, which is why the library prefers
 * them (the guide, sec. 2.3), and a tile too small for the L2's bandwidth waits for its
 * operands. Blocks run one per SM at a time, in waves (sec. 3.2); a tile that sticks out
 * of the output costs the whole tile (sec. 3.1). Small outputs with a long K run split-K,
 * as cuBLAS does: each tile's K loop is shared by several blocks whose fp32 partial sums
 * are added in a second pass. The library is assumed to pick the fastest of these plans. */
#include "models/gemm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const gemm_tile default_tiles[] = {{256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 128}, {64, 64}};

static const double splits[] = {1, 2, 4, 8, 16};

/* fp32 partial sums of split-K */
#define GEMM_PARTIAL_BYTES 4.0

void gemm_device_default_tiles(gemm_device *d)
{
  d->n_tiles = sizeof default_tiles / sizeof *default_tiles;
  memcpy(d->tiles, default_tiles, sizeof default_tiles);
}

int gemm_tiles_parse(const char *s, gemm_device *d)
{
  gemm_tile t[GEMM_MAX_TILES];
  size_t n = 0;
  const char *p = s;
  if (s == NULL || *s == '\0')
    return -1;
  for (;;) {
    unsigned a, b;
    int used = 0;
    if (n == GEMM_MAX_TILES || sscanf(p, "%4ux%4u%n", &a, &b, &used) != 2 || used == 0 || a < 8 || b < 8 ||
        a > 1024 || b > 1024 || p[0] < '0' || p[0] > '9')
      return -1;
    t[n++] = (gemm_tile){a, b};
    p += used;
    if (*p == '\0')
      break;
    if (*p != ',')
      return -1;
    p++;
  }
  d->n_tiles = n;
  memcpy(d->tiles, t, n * sizeof *t);
  return 0;
}

int gemm_device_check(const gemm_device *d)
{
  if (d == NULL || !(d->peak > 0) || !isfinite(d->peak) || d->sms == 0 || !(d->mem_bw > 0) ||
      !isfinite(d->mem_bw) || !(d->l2_bw >= 0) || !isfinite(d->l2_bw) || !(d->launch_s >= 0) ||
      !isfinite(d->launch_s) || !(d->efficiency > 0) || d->efficiency > 1 || !(d->software >= 0) ||
      d->software > 1 || d->n_tiles == 0 ||
      d->n_tiles > GEMM_MAX_TILES)
    return -1;
  return 0;
}

static double software_of(const gemm_device *d) { return d->software > 0 ? d->software : 1; }

/* One plan: tile t, split s; returns its seconds and fills *p. */
static double plan_time(const gemm_device *d, const gemm_tile *t, double s, double m, double n, double k,
                        double batch, double e, double memory_s, gemm_plan *p)
{
  double sms = (double)d->sms, tm = t->m, tn = t->n;
  double kp = ceil(ceil(k / s) / GEMM_TILE_K) * GEMM_TILE_K;
  double blocks = ceil(m / tm) * ceil(n / tn) * batch * s;
  double waves = ceil(blocks / sms);
  double block_s = 2 * tm * tn * kp / (d->efficiency * d->peak / sms);
  if (d->l2_bw > 0)
    block_s = fmax(block_s, (tm + tn) * kp * e * fmin(sms, blocks) / d->l2_bw);
  p->tile = *t;
  p->split = (size_t)s;
  p->blocks = blocks;
  p->waves = waves;
  p->compute_s = waves * block_s;
  p->memory_s = memory_s;
  p->reduce_s = s > 1 ? 2 * s * m * n * batch * GEMM_PARTIAL_BYTES / d->mem_bw : 0;
  p->memory_bound = memory_s > p->compute_s;
  p->time_s = d->launch_s + (fmax(p->compute_s, memory_s) + p->reduce_s) / software_of(d);
  return p->time_s;
}

double gemm_time(const gemm_device *d, double m, double n, double k, double batch, size_t elem_bytes,
                 gemm_plan *plan)
{
  gemm_plan best = {0}, p;
  if (!(m > 0) || !(n > 0) || !(k > 0) || !(batch > 0)) {
    if (plan)
      *plan = best;
    return 0;
  }
  double e = (double)elem_bytes, memory_s = (m * k + k * n + m * n) * e * batch / d->mem_bw;
  int have = 0;
  for (size_t i = 0; i < d->n_tiles; i++)
    for (size_t j = 0; j < sizeof splits / sizeof *splits; j++) {
      /* a split that leaves a block less than one K slice is no plan */
      if (splits[j] > 1 && (ceil(k / splits[j]) < GEMM_TILE_K || (d->max_split > 0 && splits[j] > (double)d->max_split)))
        continue;
      double t = plan_time(d, &d->tiles[i], splits[j], m, n, k, batch, e, memory_s, &p);
      /* ties keep the earlier plan: the larger tile, the smaller split (the list's order) */
      if (!have || t < best.time_s) {
        best = p;
        have = 1;
      }
    }
  if (plan)
    *plan = best;
  return best.time_s;
}

double gemm_mem_time(const gemm_device *d, double bytes, double kernels)
{
  return bytes / (d->mem_bw * software_of(d)) + kernels * d->launch_s;
}

/* One "NAME:PEAK[:EFF]" entry at *p into name (up to 15 characters), peak and eff; *p moves
 * past it and its comma. 0, or -1 when malformed. */
static int peaks_entry(const char **p, char name[16], double *peak, double *eff)
{
  size_t n = strcspn(*p, ":,");
  if (n == 0 || n > 15 || (*p)[n] != ':')
    return -1;
  memcpy(name, *p, n);
  name[n] = '\0';
  char *end;
  *peak = strtod(*p + n + 1, &end);
  if (end == *p + n + 1 || !(*peak > 0) || !isfinite(*peak))
    return -1;
  *eff = 0;
  if (*end == ':') {
    const char *e = end + 1;
    *eff = strtod(e, &end);
    if (end == e || !(*eff > 0 && *eff <= 1))
      return -1;
  }
  if (*end != ',' && *end != '\0')
    return -1;
  *p = *end == ',' ? end + 1 : end;
  return 0;
}

int gemm_peaks_find(const char *list, const char *dtype, double *peak, double *eff)
{
  char names[16][16];
  size_t n = 0;
  int found = 0;
  const char *p = list;
  if (list == NULL || *list == '\0')
    return -1;
  while (*p) {
    double pk, ef;
    if (n == sizeof names / sizeof *names || peaks_entry(&p, names[n], &pk, &ef) != 0)
      return -1;
    for (size_t i = 0; i < n; i++)
      if (strcmp(names[i], names[n]) == 0)
        return -1;
    if (!found && strcmp(names[n], dtype) == 0) {
      *peak = pk;
      *eff = ef;
      found = 1;
    }
    n++;
    if (*p == '\0' && p[-1] == ',')
      return -1;
  }
  return found;
}

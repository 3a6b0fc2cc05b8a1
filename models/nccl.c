/* nccl.c - NCCL 2.8.4's tuning model (src/graph/tuning.cc, v2.8.4-1): its tables and
 * formulas, in seconds and bytes/s (nccl.h). */
#include "models/nccl.h"

/* tuning.cc, microseconds, by algorithm (tree, ring) and protocol (LL, LL128, Simple): baseLat,
 * and hwLat of a step over NVLink and over the network. */
static const double base_us[NCCL_ALGOS][NCCL_PROTOS] = {{4.4, 4.4, 0}, {3.6, 10.0, 8.4}};
static const double nvlink_us[NCCL_ALGOS][NCCL_PROTOS] = {{.52, 1.25, 28}, {.47, 1.9, 3.4}};
static const double net_us[NCCL_ALGOS][NCCL_PROTOS] = {{5.0, 8.5, 28}, {2.7, 4.0, 9.6}};
/* GB/s: llMaxBws of Ampere on one node, of AMD CPUs on two and on more nodes; perChMaxTreeBws
 * of Ampere on one, two, more nodes; ll128MaxBwPerCh of allgather, reduce-scatter, allreduce */
static const double ll_max[3] = {87.7, 22.5, 19.0};
static const double tree_per_ch[3] = {24.0, 22.5, 16.0};
static const double ll128_per_ch[3] = {18.3, 15.2, 16.9};
/* treeCorrectionFactor, powers of two from 64 B to 256 MiB, by protocol */
static const double tree_correction[NCCL_PROTOS][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .5, .6, .6, .7, .7, .8, .9, .9, .92, .92},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

static long log2i(double x)
{
  long l = 0;
  for (unsigned long n = (unsigned long)x; n >>= 1;)
    l++;
  return l;
}

static double steps_of(nccl_coll c, size_t n)
{
  double s = n > 0 ? (double)(n - 1) : 0;
  return c == NCCL_ALLREDUCE ? 2 * s : s;
}

double nccl_latency(const nccl_ring *r, nccl_coll c, nccl_algo a, nccl_proto p, double bytes)
{
  if (r->ranks < 2)
    return 0;
  if (a == NCCL_TREE && c != NCCL_ALLREDUCE)
    return -1;
  double intra = nvlink_us[a][p] * (r->nodes > 1 && p == NCCL_LL ? 1.8 : 1.0), inter = net_us[a][p];
  double us = base_us[a][p];
  if (a == NCCL_TREE)
    us += 2 * ((double)(r->ranks / (r->nodes ? r->nodes : 1) - 1) * intra + (double)log2i((double)r->nodes) * inter);
  else {
    double steps = steps_of(c, r->ranks), net = r->nodes > 1 ? steps_of(c, r->nodes) : 0;
    us += (steps - net) * intra + net * inter;
    if (p == NCCL_SIMPLE && r->nodes > 1 && c == NCCL_ALLREDUCE && bytes >= (double)r->ranks / 16.0 * 65536)
      us *= 1.9; /* "plateau effect of ring" (ncclTopoGetAlgoTime) */
  }
  return us * 1e-6;
}

/* The bus bandwidth of algorithm a with protocol p (tuning.cc's refinements), bytes/s. */
static double bus_bw(const nccl_ring *r, nccl_coll c, nccl_algo a, nccl_proto p)
{
  double bw = r->bus_bw / 1e9, ch = (double)r->channels, ppn = (double)r->ranks / (double)(r->nodes ? r->nodes : 1);
  size_t i2 = r->nodes <= 2 ? (r->nodes ? r->nodes - 1 : 0) : 2;
  if (bw > 235)
    bw = 235; /* compCap80 */
  double llmax = ll_max[i2], out;
  if (a == NCCL_RING) {
    if (p == NCCL_LL)
      out = bw * (r->nodes > 1 || c == NCCL_ALLREDUCE ? 1.0 / 4.0 : 1.0 / 3.0);
    else if (p == NCCL_LL128)
      out = bw * (ppn < 2 ? 0.7 : 0.92), llmax = ll128_per_ch[c] * ch;
    else
      return bw * 1e9;
  } else {
    double tree = bw * .92 < ch * tree_per_ch[i2] ? bw * .92 : ch * tree_per_ch[i2];
    if (p == NCCL_LL)
      out = tree / 3.8;
    else if (p == NCCL_LL128)
      out = tree * (r->nodes == 1 ? 7.0 / 9.0 : 0.915), llmax = ll128_per_ch[NCCL_ALLREDUCE] * ch;
    else
      return tree * 1e9;
  }
  return (out < llmax ? out : llmax) * 1e9;
}

double nccl_time(const nccl_ring *r, nccl_coll c, nccl_algo a, nccl_proto p, double bytes)
{
  double lat = nccl_latency(r, c, a, p, bytes);
  if (lat <= 0)
    return lat;
  double bw = bus_bw(r, c, a, p);
  if (a == NCCL_TREE) {
    long lg = log2i(bytes / 64);
    bw *= 0.5 * (lg < 23 ? tree_correction[p][lg] : 1.0);
  } else
    bw *= (double)r->ranks / steps_of(c, r->ranks);
  return lat + bytes / bw;
}

void nccl_pick(const nccl_ring *r, nccl_coll c, double bytes, nccl_algo *a, nccl_proto *p)
{
  double best = -1;
  *a = NCCL_RING;
  *p = NCCL_SIMPLE;
  for (int i = 0; i < NCCL_ALGOS; i++)
    for (int j = 0; j < NCCL_PROTOS; j++) {
      double t = nccl_time(r, c, (nccl_algo)i, (nccl_proto)j, bytes);
      if (t >= 0 && (best < 0 || t < best)) {
        best = t;
        *a = (nccl_algo)i;
        *p = (nccl_proto)j;
      }
    }
}

double nccl_extra(const nccl_ring *r, nccl_coll c, double bytes)
{
  if (r->ranks < 2)
    return 0;
  nccl_algo a;
  nccl_proto p;
  nccl_pick(r, c, bytes, &a, &p);
  double links = bytes * steps_of(c, r->ranks) / (double)r->ranks / r->bus_bw, t = nccl_time(r, c, a, p, bytes);
  return t > links ? t - links : 0;
}

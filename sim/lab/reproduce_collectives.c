/* reproduce_collectives.c - `dtsim reproduce collectives`: every collective of
 * algorithms/collectives.c, timing only, on 2 to 64 members of a 100 Gb/s star, 1 KiB to
 * 1 GiB, against the alpha-beta formulas of Thakur, Rabenseifner and Gropp (IJHPCA 2005),
 * with nccl-tests' algbw and busbw; and the same allreduces under the settings that shift
 * SimGrid away from the formulas (LV08, TCP cross traffic). One simulation per process. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "sim/output.h"
#include "sim/fileio.h"
#include "sim/lab/reproduce.h"
#include "sim/lab/reproduce_frame.h"
#include "sim/lab/template.h"

/* 64 one-core hosts, each on its own full-duplex (SPLITDUPLEX) 12.5e9 B/s link of 1 us to
 * one non-blocking switch: a route is the sender's link up and the receiver's link down,
 * so alpha = 2 us (+ the 64 header bytes at 12.5e9 B/s) and beta = 1/12.5e9 s/B. CM02 is
 * SimGrid's plain alpha-beta model; TCP cross traffic (acknowledgements on the reverse
 * links) is off, as on RDMA fabrics, for which these formulas are written. A cluster
 * without a backbone routes host link to host link: the same times as dtsim platform's
 * star (whose FATPIPE backbone never binds) at a fraction of the solver's work. */
static const char coll_platform[] =
    "<?xml version='1.0'?>\n"
    "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    "<!-- dtsim reproduce collectives: 64 hosts, each on a full-duplex 100 Gb/s link of 1 us to one\n"
    "     non-blocking switch; plain alpha-beta (CM02), no TCP cross traffic. -->\n"
    "<platform version=\"4.1\">\n"
    "  <config>\n"
    "    <prop id=\"network/model\" value=\"CM02\"/>\n"
    "    <prop id=\"network/crosstraffic\" value=\"0\"/>\n"
    "  </config>\n"
    "  <cluster id=\"star\" prefix=\"host-\" suffix=\"\" radical=\"0-63\" speed=\"1Gf\" core=\"1\"\n"
    "           bw=\"12.5GBps\" lat=\"1us\" sharing_policy=\"SPLITDUPLEX\"/>\n"
    "</platform>\n";

static const char coll_ini[] =
    "; dtsim reproduce collectives: one collective, timing only, on the star of collectives-64.xml.\n"
    "; Each run sets collective.op, collective.algorithm, collective.ranks and collective.bytes\n"
    "; (and the lv08 and crosstraffic rows a --cfg). Its platform file is named relative to this\n"
    "; file's folder, where dtsim looks for it.\n"
    "[run]\n"
    "algorithm = collective\n"
    "[platform]\n"
    "file = collectives-64.xml  ; 64 hosts, 12.5e9 B/s and 1 us per link, CM02, no cross traffic\n"
    "[model]\n"
    "numerics = off           ; messages carry only their size\n"
    "dtype = fp32\n"
    "[collective]\n"
    "op = allreduce           ; set per run\n"
    "algorithm = ring         ; set per run\n"
    "ranks = 64               ; set per run\n"
    "bytes = 1048576          ; set per run\n"
    "chunk = 0                ; one message per transfer, as the formulas assume\n"
    "iterations = 1\n"
    "reduce_flops = 0         ; additions take no simulated time: pure alpha-beta\n";

/* Link numbers of coll_platform, for the README. */
#define LINK_BW 12.5e9
#define LINK_LAT 1e-6

static const struct {
  const char *op, *algo;
} coll_ops[] = {{"allreduce", "ring"}, {"allreduce", "halving-doubling"}, {"allreduce", "tree"},
                {"reduce-scatter", "ring"}, {"allgather", "ring"}, {"broadcast", "tree"}, {"reduce", "tree"}};
#define N_OPS (sizeof(coll_ops) / sizeof(coll_ops[0]))
static const long coll_ranks[] = {2, 4, 8, 16, 64};
static const long quick_ranks[] = {2, 8, 64};
/* 1 KiB to 1 GiB by factors of 4 (--quick: 1 KiB, 1 MiB, 1 GiB). */
#define SIZE_MIN_LOG2 10
#define SIZE_MAX_LOG2 30
/* The settings that move SimGrid off the formulas, each on the allreduces at 8 ranks. */
static const struct {
  const char *name, *cfg;
} coll_shifts[] = {{"cm02", NULL}, {"lv08", "--cfg=network/model:LV08"}, {"crosstraffic", "--cfg=network/crosstraffic:1"}};
#define N_SHIFTS (sizeof(coll_shifts) / sizeof(coll_shifts[0]))
#define SHIFT_RANKS 8

typedef struct coll_run {
  const char *op, *algo, *network;
  long ranks;
  double bytes;
  double t, formula, algbw, busbw;
} coll_run;

#define COLL_MAX_RUNS (N_SHIFTS * N_OPS * (sizeof(coll_ranks) / sizeof(long)) * (SIZE_MAX_LOG2 - SIZE_MIN_LOG2 + 1))

static size_t coll_grid(int quick, void *rv, reproduce_job *jobs, const char *work)
{
  coll_run *runs = rv;
  size_t n = 0, n_ranks = quick ? sizeof(quick_ranks) / sizeof(long) : sizeof(coll_ranks) / sizeof(long);
  const long *ranks = quick ? quick_ranks : coll_ranks;
  for (size_t s = 0; s < N_SHIFTS; s++)
    for (size_t o = 0; o < N_OPS; o++)
      for (size_t r = 0; r < n_ranks; r++)
        for (int lg = SIZE_MIN_LOG2; lg <= SIZE_MAX_LOG2; lg += quick ? 10 : 2) {
          if (s > 0 && (ranks[r] != SHIFT_RANKS || strcmp(coll_ops[o].op, "allreduce") != 0))
            continue;
          coll_run *c = &runs[n];
          *c = (coll_run){coll_ops[o].op, coll_ops[o].algo, coll_shifts[s].name, ranks[r], ldexp(1, lg), 0, 0, 0, 0};
          reproduce_job *j = &jobs[n];
          snprintf(j->label, sizeof(j->label), "%s %s, %ld ranks, %.0f bytes, %s", c->op, c->algo, c->ranks, c->bytes,
                   c->network);
          snprintf(j->sets[0], sizeof(j->sets[0]), "collective.op=%s", c->op);
          snprintf(j->sets[1], sizeof(j->sets[1]), "collective.algorithm=%s", c->algo);
          snprintf(j->sets[2], sizeof(j->sets[2]), "collective.ranks=%ld", c->ranks);
          snprintf(j->sets[3], sizeof(j->sets[3]), "collective.bytes=%.0f", c->bytes);
          j->n_sets = 4;
          j->cfg[0] = coll_shifts[s].cfg;
          snprintf(j->dir, sizeof(j->dir), "%s/%s-%s-%ld-%d-%s", work, c->op, c->algo, c->ranks, lg, c->network);
          n++;
        }
  return n;
}

static int coll_read(void *rv, const reproduce_job *j, char *err, size_t len)
{
  coll_run *c = rv;
  json_t *s, *b = reproduce_result_block(j, "collective", &s, err, len);
  if (b == NULL)
    return -1;
  c->t = reproduce_number(b, "time_s");
  c->formula = reproduce_number(b, "formula_s");
  c->algbw = reproduce_number(b, "algbw_gbps");
  c->busbw = reproduce_number(b, "busbw_gbps");
  json_decref(s);
  return 0;
}

static double rel_error(const coll_run *c)
{
  return (c->t - c->formula) / c->formula;
}

static char *coll_csv(const reproduce_data *d)
{
  const coll_run *runs = d->runs[0];
  size_t n = d->n[0];
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fputs("op,algorithm,ranks,bytes,sim_time_s,formula_s,rel_error,algbw_gbps,busbw_gbps,network\n", f);
  for (size_t k = 0; k < n; k++) {
    const coll_run *c = &runs[k];
    fprintf(f, "%s,%s,%ld,%.0f,%.17g,%.17g,%.17g,%.17g,%.17g,%s\n", c->op, c->algo, c->ranks, c->bytes, c->t,
            c->formula, rel_error(c), c->algbw, c->busbw, c->network);
  }
  fclose(f);
  return text;
}

static const coll_run *find_run(const coll_run *runs, size_t n, const char *op, const char *algo, long ranks,
                                double bytes, const char *network)
{
  for (size_t k = 0; k < n; k++)
    if (strcmp(runs[k].op, op) == 0 && strcmp(runs[k].algo, algo) == 0 && runs[k].ranks == ranks &&
        runs[k].bytes == bytes && strcmp(runs[k].network, network) == 0)
      return &runs[k];
  return NULL;
}

static void put_size(FILE *f, double bytes)
{
  if (bytes >= 1 << 30)
    fprintf(f, "%.0f GiB", bytes / (1 << 30));
  else if (bytes >= 1 << 20)
    fprintf(f, "%.0f MiB", bytes / (1 << 20));
  else
    fprintf(f, "%.0f KiB", bytes / 1024);
}

/* Per (op, algorithm): the worst |rel_error| on the CM02 grid and where. */
static void worst_table(FILE *f, const coll_run *runs, size_t n)
{
  fputs("| op | algorithm | formula (alpha, beta; n bytes, p ranks) | worst \\|error\\| | at |\n|---|---|---|---|---|\n",
        f);
  static const char *const formulas[N_OPS] = {
      "2(p-1) alpha + 2 (p-1)/p n beta", "2 lg p alpha + 2 (p-1)/p n beta", "2 lg p (alpha + n beta)",
      "(p-1) (alpha + n/p beta)",        "(p-1) (alpha + n/p beta)",        "lg p (alpha + n beta)",
      "lg p (alpha + n beta)"};
  for (size_t o = 0; o < N_OPS; o++) {
    const coll_run *w = NULL;
    for (size_t k = 0; k < n; k++)
      if (strcmp(runs[k].network, "cm02") == 0 && strcmp(runs[k].op, coll_ops[o].op) == 0 &&
          strcmp(runs[k].algo, coll_ops[o].algo) == 0 && (w == NULL || fabs(rel_error(&runs[k])) > fabs(rel_error(w))))
        w = &runs[k];
    if (w == NULL)
      continue;
    fprintf(f, "| %s | %s | %s | %.2g | %ld ranks, ", coll_ops[o].op, coll_ops[o].algo, formulas[o],
            fabs(rel_error(w)), w->ranks);
    put_size(f, w->bytes);
    fputs(" |\n", f);
  }
}

static void shift_table(FILE *f, const coll_run *runs, size_t n)
{
  fputs("| allreduce, 8 ranks | size | CM02 (file) | error | LV08 | error | CM02 + cross traffic | error |\n"
        "|---|---|---|---|---|---|---|---|\n",
        f);
  for (size_t o = 0; o < 3; o++)
    for (int lg = SIZE_MIN_LOG2; lg <= SIZE_MAX_LOG2; lg += 10) {
      const coll_run *c[N_SHIFTS];
      int all = 1;
      for (size_t s = 0; s < N_SHIFTS; s++)
        all &= (c[s] = find_run(runs, n, "allreduce", coll_ops[o].algo, SHIFT_RANKS, ldexp(1, lg),
                                coll_shifts[s].name)) != NULL;
      if (!all)
        continue;
      fprintf(f, "| %s | ", coll_ops[o].algo);
      put_size(f, ldexp(1, lg));
      for (size_t s = 0; s < N_SHIFTS; s++)
        fprintf(f, " | %.4g s | %+.1f%%", c[s]->t, 100 * rel_error(c[s]));
      fputs(" |\n", f);
    }
}

/* templates/collectives.md's values: the grid's tables and worst error. */
static int coll_readme(json_t *v, const reproduce_data *d, char *err, size_t len)
{
  (void)err, (void)len;
  const coll_run *runs = d->runs[0];
  size_t n = d->n[0];
  char *text = NULL;
  size_t tl = 0;
  template_set(v, "alpha", "%.6g", 2 * LINK_LAT + 64 / LINK_BW);
  FILE *f = open_memstream(&text, &tl);
  xbt_assert(f, "open_memstream failed");
  worst_table(f, runs, n);
  template_set_stream(v, "worst_table", f, &text);
  const coll_run *w = NULL;
  for (size_t k = 0; k < n; k++)
    if (strcmp(runs[k].network, "cm02") == 0 && (w == NULL || fabs(rel_error(&runs[k])) > fabs(rel_error(w))))
      w = &runs[k];
  json_object_set_new(v, "worst", json_boolean(w != NULL));
  if (w) {
    template_set(v, "worst_error", "%.2g", fabs(rel_error(w)));
    f = open_memstream(&text, &tl);
    xbt_assert(f, "open_memstream failed");
    fprintf(f, "%s %s, %ld ranks, ", w->op, w->algo, w->ranks);
    put_size(f, w->bytes);
    template_set_stream(v, "worst_at", f, &text);
  }
  f = open_memstream(&text, &tl);
  xbt_assert(f, "open_memstream failed");
  shift_table(f, runs, n);
  template_set_stream(v, "shift_table", f, &text);
  return 0;
}

/* collectives.png (templates/collectives.gp) reads the CSV it is written beside: at 64 ranks
 * on CM02, dtsim's points beside the formulas of Thakur, Rabenseifner and Gropp 2005 (dashed
 * lines of the same colour), as times (allreduce) and as nccl-tests' bus bandwidth (every
 * collective; the formula's busbw is the point's busbw x simulated / formula time). Every
 * series has its own point type, as several coincide (the ring allreduce, reduce-scatter and
 * allgather reach the same busbw), and the legends are outside the plots. */
const reproduction reproduce_collectives = {
    .name = "collectives",
    .grids = {{"collectives.ini", coll_ini, sizeof(coll_run), COLL_MAX_RUNS, coll_grid, coll_read, NULL}},
    .tables = {{"collectives.csv", 0x20Fu, coll_csv}}, /* key: op,algorithm,ranks,bytes,network */
    .readme = coll_readme,
    .plots = {"collectives"},
    .texts = {{"collectives-64.xml", coll_platform}},
};

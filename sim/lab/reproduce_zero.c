/* reproduce_zero.c - `dtsim reproduce zero`: PTD-P's Table 2 (Narayanan et al. 2021, arXiv
 * 2104.04473), ZeRO-3 without model parallelism (Rajbhandari et al. SC'20; pipeline.zero = 3 with
 * t = p = 1) against PTD-P (t = 8, p = model-parallel size / 8), at the same global batch, on the
 * selene preset with the calibration of PTD-P's Table 1 (reproduce_pipeline.c), timing only, one
 * step per run. One simulation per process. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "sim/fileio.h"
#include "sim/lab/reproduce.h"
#include "sim/lab/reproduce_frame.h"
#include "sim/lab/template.h"

/* Table 1's scenario (reproduce_pipeline.c's ptdp_ini) with Adam's state in the memory estimate
 * (pipeline.optimizer = adam: 12 bytes per 16-bit parameter, ZeRO's K). Each run sets the model
 * shape, t, d, p, b, m and pipeline.zero. Every GPU is simulated (no mirror_replicas, which gives the
 * same times: sim_pipeline3d), so comm.bytes_total / GPUs is what each sends. */
static const char zero_ini[] =
    "; dtsim reproduce zero: PTD-P (Narayanan et al. 2021) Table 2 on Selene, ZeRO-3 against PTD-P, timing only.\n"
    "; Each run sets the model shape (tensor.*), t, d, p, the microbatch size b, m and pipeline.zero.\n"
    "[run]\n"
    "algorithm = pipeline\n"
    "max_steps = 1\n"
    "collectives = rounds       ; each collective one bulk-synchronous round\n"
    REPRODUCE_SELENE_TIMING_INI
    "efficiency = " REPRODUCE_PTDP_EFFICIENCY "      ; PTD-P Table 1's calibration (results/pipeline/README.md), not fitted again\n"
    "[pipeline]\n"
    "model = transformer        ; GPT stages of [tensor]'s shapes: 3D parallelism\n"
    "scatter_gather = on        ; PTD-P sec. 4.1\n"
    "schedule = 1f1b            ; PTD-P's non-interleaved schedule (the README's rule)\n"
    "optimizer = adam           ; memory_per_gpu counts Adam's fp32 state (12 bytes per parameter)\n"
    "[tensor]\n"
    "seq = 2048                 ; s\n"
    "vocab = 51200              ; V (GPT-2's 50,257 padded)\n"
    "recompute = on             ; activation recomputation of every layer\n"
    "async_grad_allreduce = on\n"
    "collective = ring\n"
    "fuse_layers = on           ; PTD-P rows: fused passes (ZeRO-3 runs layer by layer: its gathers need the layers)\n"
    "kernels = fused            ; Megatron-LM 2021's fused elementwise kernels at 2,039 GB/s\n";

enum { Z_ZERO3, Z_PTDP };
typedef struct zero_row {
  int method;
  const char *params_b;
  long heads, hidden, layers, t, p, gpus, batch, b;
  double paper; /* Table 2's Tflop/s per GPU */
  int quick;
} zero_row;

/* Table 2: 174.6B (GPT-3's shape: 96 layers of h = 12,288, 96 heads) and 529.6B (Table 1's row:
 * 105 layers of h = 20,480, 128 heads); ZeRO-3 with model-parallel size 1, PTD-P with 96 (t = 8,
 * p = 12) and 280 (t = 8, p = 35); the batch and the microbatch size as the table gives them. */
static const zero_row zero_rows[] = {
    {Z_ZERO3, "174.6", 96, 12288, 96, 1, 1, 384, 1536, 4, 144, 1},
    {Z_ZERO3, "174.6", 96, 12288, 96, 1, 1, 768, 1536, 2, 88, 0},
    {Z_ZERO3, "174.6", 96, 12288, 96, 1, 1, 1536, 1536, 1, 44, 0},
    {Z_ZERO3, "529.6", 128, 20480, 105, 1, 1, 640, 2560, 4, 138, 0},
    {Z_ZERO3, "529.6", 128, 20480, 105, 1, 1, 1120, 2240, 2, 98, 0},
    {Z_ZERO3, "529.6", 128, 20480, 105, 1, 1, 2240, 2240, 1, 48, 0},
    {Z_PTDP, "174.6", 96, 12288, 96, 8, 12, 384, 1536, 1, 153, 1},
    {Z_PTDP, "174.6", 96, 12288, 96, 8, 12, 768, 1536, 1, 149, 0},
    {Z_PTDP, "174.6", 96, 12288, 96, 8, 12, 1536, 1536, 1, 141, 0},
    {Z_PTDP, "529.6", 128, 20480, 105, 8, 35, 560, 2240, 1, 171, 0},
    {Z_PTDP, "529.6", 128, 20480, 105, 8, 35, 1120, 2240, 1, 167, 0},
    {Z_PTDP, "529.6", 128, 20480, 105, 8, 35, 2240, 2240, 1, 159, 0},
};
#define ZERO_ROWS (sizeof zero_rows / sizeof zero_rows[0])

/* The ZeRO-3 rows again with every link at 1/8 of its bandwidth (platform.bw_factor): one
 * 200 Gb/s NIC's 24 GB/s per node instead of eight, the assumption that moves them most. */
#define ZERO_NARROW "0.125"
enum { ZV_MAIN, ZV_NARROW, ZV_VARIANTS };
#define ZERO_MAX_RUNS (2 * ZERO_ROWS)

typedef struct zero_run {
  const zero_row *row;
  int variant;
  long d, m;
  double tflops, step_s, bytes_per_gpu, memory_gb;
} zero_run;

static const char *method_name(int m) { return m == Z_ZERO3 ? "zero3" : "ptdp"; }

static size_t zero_grid(int quick, void *rv, reproduce_job *jobs, const char *work)
{
  zero_run *runs = rv;
  size_t n = 0;
  for (int var = 0; var < (quick ? 1 : ZV_VARIANTS); var++)
    for (size_t i = 0; i < ZERO_ROWS; i++) {
      const zero_row *r = &zero_rows[i];
      if ((quick && !r->quick) || (var == ZV_NARROW && r->method != Z_ZERO3))
        continue;
      long d = r->gpus / (r->t * r->p), m = r->batch / (r->b * d);
      runs[n] = (zero_run){r, var, d, m, 0, 0, 0, 0};
      reproduce_job *jb = &jobs[n];
      memset(jb, 0, sizeof(*jb));
      snprintf(jb->label, sizeof(jb->label), "%s %sB on %ld GPUs (t=%ld p=%ld d=%ld b=%ld)%s", method_name(r->method),
               r->params_b, r->gpus, r->t, r->p, d, r->b, var == ZV_NARROW ? " at 1/8 bandwidth" : "");
      reproduce_ptdp_layout(jb, (const long[8]){r->t, d, r->hidden, r->heads, r->layers, r->b, r->p, m});
      snprintf(jb->sets[jb->n_sets++], sizeof(jb->sets[0]), "%s",
               r->method == Z_ZERO3 ? "pipeline.zero=3" : "pipeline.zero=0");
      if (var == ZV_NARROW)
        snprintf(jb->sets[jb->n_sets++], sizeof(jb->sets[0]), "platform.bw_factor=%s", ZERO_NARROW);
      snprintf(jb->dir, sizeof(jb->dir), "%s/%s-%s-%ld-%d", work, method_name(r->method), r->params_b, r->gpus, var);
      n++;
    }
  return n;
}

static void zero_read_memory(void *rv, const json_t *summary, const json_t *block)
{
  zero_run *r = rv;
  r->memory_gb = reproduce_number(block, "memory_per_gpu.total_bytes") / 1e9;
  r->bytes_per_gpu = reproduce_number(summary, "comm.bytes_total") / (double)r->row->gpus;
}

static int zero_read(void *rv, const reproduce_job *j, char *err, size_t len)
{
  zero_run *r = rv;
  return reproduce_pipeline_figures(j, &r->tflops, &r->step_s, zero_read_memory, r, err, len);
}

static double zero_error(const zero_run *r) { return (r->tflops - r->row->paper) / r->row->paper; }

static char *zero_csv(const reproduce_data *d)
{
  const zero_run *runs = d->runs[0];
  size_t n = d->n[0];
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fputs("params_b,method,variant,gpus,t,p,d,batch,microbatch,microbatches,paper_tflops_per_gpu,tflops_per_gpu,error,"
        "step_s,bytes_per_gpu,memory_gb\n",
        f);
  for (size_t k = 0; k < n; k++) {
    const zero_run *r = &runs[k];
    fprintf(f, "%s,%s,%s,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", r->row->params_b,
            method_name(r->row->method), r->variant == ZV_MAIN ? "committed" : "narrow-links", r->row->gpus, r->row->t,
            r->row->p, r->d, r->row->batch, r->row->b, r->m, r->row->paper, r->tflops, zero_error(r), r->step_s,
            r->bytes_per_gpu, r->memory_gb);
  }
  fclose(f);
  return text;
}

/* zero.gp's values: one datablock per series (GPUs, dtsim's and the paper's Tflop/s per GPU)
 * and a plot clause for each series run. */
static void zero_plot(json_t *v, const char *plot, const reproduce_data *d)
{
  (void)plot;
  const zero_run *runs = d->runs[0];
  size_t n = d->n[0];
  static const char *const series[4][3] = {{"174.6", "zero3", "pt 7 lc rgb '#ee6677' title 'ZeRO-3 174.6B'"},
                                           {"174.6", "ptdp", "pt 5 lc rgb '#4477aa' title 'PTD-P 174.6B'"},
                                           {"529.6", "zero3", "dt 2 pt 7 lc rgb '#ee6677' title 'ZeRO-3 529.6B'"},
                                           {"529.6", "ptdp", "dt 2 pt 5 lc rgb '#4477aa' title 'PTD-P 529.6B'"}};
  char *text;
  size_t tl;
  FILE *f = reproduce_frame_stream(&text, &tl);
  template_list(v, "series");
  for (int s = 0; s < 4; s++) {
    int any = 0;
    fprintf(f, "$d%d << EOD\n", s);
    for (size_t k = 0; k < n; k++)
      if (runs[k].variant == ZV_MAIN && strcmp(runs[k].row->params_b, series[s][0]) == 0 &&
          strcmp(method_name(runs[k].row->method), series[s][1]) == 0) {
        fprintf(f, "%ld %.6f %.6f\n", runs[k].row->gpus, runs[k].tflops, runs[k].row->paper);
        any = 1;
      }
    fputs("EOD\n", f);
    if (any) {
      int first = json_array_size(json_object_get(v, "series")) == 0;
      json_t *it = template_add(v, "series");
      template_set(it, "sep", "%s", first ? "" : ", ");
      template_set(it, "i", "%d", s);
      template_set(it, "style", "%s", series[s][2]);
      template_set(it, "title", "%s", first ? "title 'paper'" : "notitle");
    }
  }
  template_set_stream(v, "blocks", f, &text);
}

/* The narrow-links run of main run r, or NULL. */
static const zero_run *zero_narrow(const zero_run *runs, size_t n, const zero_run *r)
{
  for (size_t k = 0; k < n; k++)
    if (runs[k].row == r->row && runs[k].variant == ZV_NARROW)
      return &runs[k];
  return NULL;
}

/* The first and last ZeRO-3 174.6B rows run, as committed (z_first, z_last) and at 1/8 of the
 * bandwidth (n_first, n_last; full grid). */
static void zero_ends(json_t *v, const zero_run *runs, size_t n)
{
  const zero_run *a = NULL, *b = NULL;
  for (size_t k = 0; k < n; k++)
    if (runs[k].variant == ZV_MAIN && runs[k].row->method == Z_ZERO3 && strcmp(runs[k].row->params_b, "174.6") == 0) {
      a = a ? a : &runs[k];
      b = &runs[k];
    }
  const zero_run *na = a ? zero_narrow(runs, n, a) : NULL, *nb = b ? zero_narrow(runs, n, b) : NULL;
  template_set(v, "z_first", "%.1f", a ? a->tflops : 0);
  template_set(v, "z_first_gpus", "%ld", a ? a->row->gpus : 0);
  template_set(v, "z_last", "%.1f", b ? b->tflops : 0);
  template_set(v, "z_last_gpus", "%ld", b ? b->row->gpus : 0);
  template_set(v, "n_first", "%.1f", na ? na->tflops : 0);
  template_set(v, "n_last", "%.1f", nb ? nb->tflops : 0);
}

/* The table's rows and the targets: ZeRO-3 within 15%, PTD-P within 10%, ZeRO-3 falling as GPUs
 * are added at a fixed batch, PTD-P within 10% of flat (its last row against its first). */
static int zero_readme(json_t *v, const reproduce_data *d, char *err, size_t len)
{
  (void)err, (void)len;
  const zero_run *runs = d->runs[0];
  size_t n = d->n[0];
  template_set(v, "efficiency", "%s", REPRODUCE_PTDP_EFFICIENCY);
  template_set(v, "narrow", "%s", ZERO_NARROW);
  char *text = NULL;
  size_t tl = 0;
  FILE *f = open_memstream(&text, &tl);
  xbt_assert(f, "open_memstream failed");
  int in_z = 0, n_z = 0, in_p = 0, n_p = 0, falls = 1, flat = 1;
  for (size_t k = 0; k < n; k++) {
    const zero_run *r = &runs[k], *nw = zero_narrow(runs, n, r);
    if (r->variant != ZV_MAIN)
      continue;
    double e = zero_error(r);
    if (r->row->method == Z_ZERO3)
      in_z += fabs(e) <= 0.15, n_z++;
    else
      in_p += fabs(e) <= 0.10, n_p++;
    const zero_run *prev = k > 0 && runs[k - 1].row->method == r->row->method &&
                                   strcmp(runs[k - 1].row->params_b, r->row->params_b) == 0
                               ? &runs[k - 1]
                               : NULL;
    if (prev && r->row->method == Z_ZERO3 && r->tflops >= prev->tflops)
      falls = 0;
    if (r->row->method == Z_PTDP && prev) {
      const zero_run *first = prev;
      while (first > runs && (first - 1)->row->method == Z_PTDP &&
             strcmp((first - 1)->row->params_b, r->row->params_b) == 0 && (first - 1)->variant == ZV_MAIN)
        first--;
      if (fabs(r->tflops - first->tflops) / first->tflops > 0.10)
        flat = 0;
    }
    char nar[48] = "-";
    if (nw)
      snprintf(nar, sizeof nar, "%.1f", nw->tflops);
    fprintf(f, "| %s | %s | %ld | %ld | %ld | %ld | %ld | %ld | %ld | %.0f | %.1f | %+.1f%% | %.2f | %.1f | %.1f | %s |\n",
            method_name(r->row->method), r->row->params_b, r->row->gpus, r->row->t, r->row->p, r->d, r->row->batch,
            r->row->b, r->m, r->row->paper, r->tflops, 100 * e, r->step_s, r->bytes_per_gpu / 1e9, r->memory_gb, nar);
  }
  template_set_stream(v, "rows", f, &text);
  template_set(v, "in_z", "%d", in_z);
  template_set(v, "n_z", "%d", n_z);
  template_set(v, "in_p", "%d", in_p);
  template_set(v, "n_p", "%d", n_p);
  template_set(v, "falls", "%s", falls ? "yes" : "no");
  zero_ends(v, runs, n);
  template_set(v, "flat", "%s", flat ? "yes" : "no");
  return 0;
}

const reproduction reproduce_zero = {
    .name = "zero",
    .grids = {{"zero.ini", zero_ini, sizeof(zero_run), ZERO_MAX_RUNS, zero_grid, zero_read, NULL}},
    .tables = {{"zero.csv", 0xFu, zero_csv}}, /* key: params_b,method,variant,gpus */
    .readme = zero_readme,
    .plots = {"zero"},
    .plot = zero_plot,
};

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
    "; Each run sets the model shape (tensor.*), t, d, p, the microbatch size b, m, pipeline.zero, ZeRO-3's runtime\n"
    "; (pipeline.zero_*: DeepSpeed 0.3's) or PTD-P's interleaving and mirrored replicas.\n"
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
  long v; /* PTD-P: model chunks per device (interleaved); 1 for ZeRO-3 */
  double paper; /* Table 2's Tflop/s per GPU */
  int quick;
} zero_row;

/* Table 2: 174.6B (GPT-3's shape: 96 layers of h = 12,288, 96 heads) and 529.6B (Table 1's row:
 * 105 layers of h = 20,480, 128 heads); ZeRO-3 with model-parallel size 1, PTD-P with 96 (t = 8,
 * p = 12) and 280 (t = 8, p = 35); the batch and the microbatch size as the table gives them.
 * PTD-P's interleaving as Megatron-LM's scripts for the paper run these shapes (examples/sc21):
 * 174.6B as run_figure_12.sh (t 8, p 12, 2 layers per virtual stage: v = 4), 529.6B as
 * run_table_1.sh (p 35, 1 layer per virtual stage: v = 3). */
static const zero_row zero_rows[] = {
    {Z_ZERO3, "174.6", 96, 12288, 96, 1, 1, 384, 1536, 4, 1, 144, 1},
    {Z_ZERO3, "174.6", 96, 12288, 96, 1, 1, 768, 1536, 2, 1, 88, 0},
    {Z_ZERO3, "174.6", 96, 12288, 96, 1, 1, 1536, 1536, 1, 1, 44, 0},
    {Z_ZERO3, "529.6", 128, 20480, 105, 1, 1, 640, 2560, 4, 1, 138, 0},
    {Z_ZERO3, "529.6", 128, 20480, 105, 1, 1, 1120, 2240, 2, 1, 98, 0},
    {Z_ZERO3, "529.6", 128, 20480, 105, 1, 1, 2240, 2240, 1, 1, 48, 0},
    {Z_PTDP, "174.6", 96, 12288, 96, 8, 12, 384, 1536, 1, 4, 153, 1},
    {Z_PTDP, "174.6", 96, 12288, 96, 8, 12, 768, 1536, 1, 4, 149, 0},
    {Z_PTDP, "174.6", 96, 12288, 96, 8, 12, 1536, 1536, 1, 4, 141, 0},
    {Z_PTDP, "529.6", 128, 20480, 105, 8, 35, 560, 2240, 1, 3, 171, 0},
    {Z_PTDP, "529.6", 128, 20480, 105, 8, 35, 1120, 2240, 1, 3, 167, 0},
    {Z_PTDP, "529.6", 128, 20480, 105, 8, 35, 2240, 2240, 1, 3, 159, 0},
};
#define ZERO_ROWS (sizeof zero_rows / sizeof zero_rows[0])

/* ZeRO-3 as DeepSpeed 0.3.13 to 0.4.0 runs it with its defaults (algorithms/doc/pipeline.md):
 * one gather per parameter tensor, no prefetch (its trace off by one step), the host work of its
 * list collectives, NCCL 2.8's latencies, gradients allreduced in 5e8-element buckets. */
static const char *const zero_deepspeed[] = {"pipeline.zero_gather=tensor", "pipeline.zero_prefetch=off",
                                             "pipeline.zero_host=on", "pipeline.zero_latency=nccl",
                                             "pipeline.zero_reduce=allreduce"};
#define ZERO_DS (sizeof zero_deepspeed / sizeof zero_deepspeed[0])

/* The robustness runs (the full grid, on the 174.6B rows): as committed with one assumption
 * changed. Each mechanism switched off: index i of zero_deepspeed set back to its ideal value;
 * the previous model (all of them off); every link at 1/8 of its bandwidth (platform.bw_factor),
 * one 24 GB/s adapter's worth per node. */
typedef struct zero_variant {
  const char *name, *set; /* the CSV's variant; the set that replaces zero_deepspeed[off] or adds */
  int off;                /* the zero_deepspeed index it replaces; -1: adds set; -2: none of them */
} zero_variant;
static const zero_variant zero_variants[] = {
    {"committed", NULL, -1},
    {"layer-gathers", "pipeline.zero_gather=layer", 0},
    {"prefetch", "pipeline.zero_prefetch=on", 1},
    {"no-host-work", "pipeline.zero_host=off", 2},
    {"route-latency", "pipeline.zero_latency=route", 3},
    {"reduce-scatter", "pipeline.zero_reduce=scatter", 4},
    {"ideal", NULL, -2},
    {"narrow-links", "platform.bw_factor=0.125", -1},
};
#define ZV_VARIANTS (sizeof zero_variants / sizeof zero_variants[0])
#define ZV_NARROW (ZV_VARIANTS - 1)
#define ZERO_MAX_RUNS (ZERO_ROWS * ZV_VARIANTS)

typedef struct zero_run {
  const zero_row *row;
  size_t variant;
  long d, m;
  double tflops, step_s, bytes_per_gpu, memory_gb;
} zero_run;

static const char *method_name(int m) { return m == Z_ZERO3 ? "zero3" : "ptdp"; }

/* A row's sets after its shape: ZeRO-3's (variant var), or PTD-P's interleaving and mirrored
 * replicas (exact: checked before each run). */
static void zero_sets(const zero_row *r, size_t var, reproduce_job *jb)
{
  const zero_variant *zv = &zero_variants[var];
  if (r->method == Z_PTDP) {
    snprintf(jb->sets[jb->n_sets++], sizeof(jb->sets[0]), "pipeline.zero=0");
    snprintf(jb->sets[jb->n_sets++], sizeof(jb->sets[0]), "pipeline.schedule=interleaved");
    snprintf(jb->sets[jb->n_sets++], sizeof(jb->sets[0]), "pipeline.chunks=%ld", r->v);
    snprintf(jb->sets[jb->n_sets++], sizeof(jb->sets[0]), "pipeline.mirror_replicas=on");
    return;
  }
  snprintf(jb->sets[jb->n_sets++], sizeof(jb->sets[0]), "pipeline.zero=3");
  for (size_t i = 0; zv->off != -2 && i < ZERO_DS; i++)
    snprintf(jb->sets[jb->n_sets++], sizeof(jb->sets[0]), "%s", (int)i == zv->off ? zv->set : zero_deepspeed[i]);
  if (zv->off == -1 && zv->set)
    snprintf(jb->sets[jb->n_sets++], sizeof(jb->sets[0]), "%s", zv->set);
}

static size_t zero_grid(int quick, void *rv, reproduce_job *jobs, const char *work)
{
  zero_run *runs = rv;
  size_t n = 0;
  for (size_t var = 0; var < (quick ? 1 : ZV_VARIANTS); var++)
    for (size_t i = 0; i < ZERO_ROWS; i++) {
      const zero_row *r = &zero_rows[i];
      if ((quick && !r->quick) || (var > 0 && (r->method != Z_ZERO3 || strcmp(r->params_b, "174.6") != 0)))
        continue;
      long d = r->gpus / (r->t * r->p), m = r->batch / (r->b * d);
      runs[n] = (zero_run){r, var, d, m, 0, 0, 0, 0};
      reproduce_job *jb = &jobs[n];
      memset(jb, 0, sizeof(*jb));
      snprintf(jb->label, sizeof(jb->label), "%s %sB on %ld GPUs (t=%ld p=%ld d=%ld b=%ld)%s%s", method_name(r->method),
               r->params_b, r->gpus, r->t, r->p, d, r->b, var ? ", " : "", var ? zero_variants[var].name : "");
      reproduce_ptdp_layout(jb, (const long[8]){r->t, d, r->hidden, r->heads, r->layers, r->b, r->p, m});
      zero_sets(r, var, jb);
      snprintf(jb->dir, sizeof(jb->dir), "%s/%s-%s-%ld-%zu", work, method_name(r->method), r->params_b, r->gpus, var);
      n++;
    }
  return n;
}

static void zero_read_memory(void *rv, const json_t *summary, const json_t *block)
{
  zero_run *r = rv;
  r->memory_gb = reproduce_number(block, "memory_per_gpu.total_bytes") / 1e9;
  /* mirrored replicas (PTD-P) send replica 0's pipeline traffic only: no per-GPU total */
  r->bytes_per_gpu =
      r->row->method == Z_ZERO3 ? reproduce_number(summary, "comm.bytes_total") / (double)r->row->gpus : NAN;
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
  fputs("params_b,method,variant,gpus,t,p,d,batch,microbatch,microbatches,chunks,paper_tflops_per_gpu,tflops_per_gpu,"
        "error,step_s,bytes_per_gpu,memory_gb\n",
        f);
  for (size_t k = 0; k < n; k++) {
    const zero_run *r = &runs[k];
    fprintf(f, "%s,%s,%s,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", r->row->params_b,
            method_name(r->row->method), zero_variants[r->variant].name, r->row->gpus, r->row->t, r->row->p, r->d,
            r->row->batch, r->row->b, r->m, r->row->v, r->row->paper, r->tflops, zero_error(r), r->step_s,
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
      if (runs[k].variant == 0 && strcmp(runs[k].row->params_b, series[s][0]) == 0 &&
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

/* The robustness table (full grid): one line per variant, the 174.6B ZeRO-3 rows' Tflop/s per
 * GPU and errors; "-" for a run missing. */
static void zero_robustness(json_t *v, const zero_run *runs, size_t n)
{
  char *text = NULL;
  size_t tl = 0;
  FILE *f = open_memstream(&text, &tl);
  xbt_assert(f, "open_memstream failed");
  for (size_t var = 0; var < ZV_VARIANTS; var++) {
    fprintf(f, "| %s |", zero_variants[var].name);
    for (size_t i = 0; i < 3; i++) {
      const zero_run *hit = NULL;
      for (size_t k = 0; k < n; k++)
        if (runs[k].variant == var && runs[k].row == &zero_rows[i])
          hit = &runs[k];
      if (hit)
        fprintf(f, " %.1f (%+.0f%%) |", hit->tflops, 100 * zero_error(hit));
      else
        fputs(" - |", f);
    }
    fputc('\n', f);
  }
  template_set_stream(v, "robustness", f, &text);
  /* the host work's share of the 174.6B step on 1,536 GPUs: 1 - committed / no-host-work Tflop/s */
  double c = 0, nh = 0;
  for (size_t k = 0; k < n; k++) {
    if (runs[k].row != &zero_rows[2])
      continue;
    if (runs[k].variant == 0)
      c = runs[k].tflops;
    else if (strcmp(zero_variants[runs[k].variant].name, "no-host-work") == 0)
      nh = runs[k].tflops;
  }
  template_set(v, "host_share", "%.0f", nh > 0 ? 100 * (1 - c / nh) : 0);
}

/* The main table's rows and the targets: ZeRO-3 within 15%, PTD-P within 5%, each method's
 * throughput falling as GPUs are added at a fixed batch (as the paper's does). */
static void zero_rows_table(json_t *v, const zero_run *runs, size_t n)
{
  char *text = NULL;
  size_t tl = 0;
  FILE *f = open_memstream(&text, &tl);
  xbt_assert(f, "open_memstream failed");
  int in_z = 0, n_z = 0, in_p = 0, n_p = 0, falls_z = 1, falls_p = 1;
  for (size_t k = 0; k < n; k++) {
    const zero_run *r = &runs[k];
    if (r->variant != 0)
      continue;
    double e = zero_error(r);
    if (r->row->method == Z_ZERO3)
      in_z += fabs(e) <= 0.15, n_z++;
    else
      in_p += fabs(e) <= 0.05, n_p++;
    const zero_run *prev = k > 0 && runs[k - 1].row->method == r->row->method &&
                                   strcmp(runs[k - 1].row->params_b, r->row->params_b) == 0 && runs[k - 1].variant == 0
                               ? &runs[k - 1]
                               : NULL;
    if (prev && r->tflops >= prev->tflops)
      *(r->row->method == Z_ZERO3 ? &falls_z : &falls_p) = 0;
    char gb[32] = "-";
    if (!isnan(r->bytes_per_gpu))
      snprintf(gb, sizeof gb, "%.1f", r->bytes_per_gpu / 1e9);
    fprintf(f, "| %s | %s | %ld | %ld | %ld | %ld | %ld | %ld | %ld | %ld | %.0f | %.1f | %+.1f%% | %.2f | %s | %.1f |\n",
            method_name(r->row->method), r->row->params_b, r->row->gpus, r->row->t, r->row->p, r->d, r->row->batch,
            r->row->b, r->m, r->row->v, r->row->paper, r->tflops, 100 * e, r->step_s, gb, r->memory_gb);
  }
  template_set_stream(v, "rows", f, &text);
  template_set(v, "in_z", "%d", in_z);
  template_set(v, "n_z", "%d", n_z);
  template_set(v, "in_p", "%d", in_p);
  template_set(v, "n_p", "%d", n_p);
  template_set(v, "falls_z", "%s", falls_z ? "yes" : "no");
  template_set(v, "falls_p", "%s", falls_p ? "yes" : "no");
}

static int zero_readme(json_t *v, const reproduce_data *d, char *err, size_t len)
{
  (void)err, (void)len;
  const zero_run *runs = d->runs[0];
  size_t n = d->n[0];
  template_set(v, "efficiency", "%s", REPRODUCE_PTDP_EFFICIENCY);
  zero_rows_table(v, runs, n);
  zero_robustness(v, runs, n);
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

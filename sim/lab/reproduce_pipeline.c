/* reproduce_pipeline.c - `dtsim reproduce pipeline`: the pipeline bubble of GPipe, 1F1B
 * (PipeDream-Flush) and Megatron's interleaved 1F1B (Narayanan et al. 2021; Huang et al. 2019) against its
 * formula (p-1)/(m+p-1), or (p-1)/(vm+p-1) interleaved, for p in {2, 4, 8} stages and m in
 * {1, 4, 8, 16, 32} microbatches, on one Selene node (the PTD-P cluster), timing only. One
 * simulation per process. */
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

/* 16 dense layers of 8192 units (a GPT MLP's width at PTD-P's 8.3B-class scale); each stage
 * gets 16/p of them, each model chunk 16/(pv). b = 64 examples per microbatch makes a
 * layer's forward 2 x 8192^2 x 64 = 8.6 Gflop, 55 us at 156 Tflop/s (A100 fp16 peak 312
 * x efficiency 0.5, PTD-P's 52% of peak rounded), against 1 MiB activation messages that
 * cross the NVSwitch at NCCL's 230e9 B/s (of 300e9) in 4.6 us: communication is small but
 * not free. The dense layers run at the flat rate (the kernel model times the transformer
 * stages only; algorithms/README.md). */
static const char pp_ini[] =
    "; dtsim reproduce pipeline: the pipeline bubble against its formula (GPipe, 1F1B, interleaved).\n"
    "; Each run sets pipeline.stages, pipeline.microbatches, pipeline.schedule and pipeline.chunks.\n"
    "; Timing only, one step.\n"
    "[run]\n"
    "algorithm = pipeline\n"
    "max_steps = 1\n"
    "[platform]\n"
    "preset = selene            ; 8 A100 (312e12 flop/s fp16) per node on NVSwitch, 230e9 of 300e9 B/s per GPU\n"
    "[model]\n"
    "layers = 8192,8192,8192,8192,8192,8192,8192,8192,8192,8192,8192,8192,8192,8192,8192,8192,8192\n"
    "numerics = off             ; timing only: flops from shapes, messages carry their size\n"
    "dtype = fp16               ; 2 bytes per element on the wire\n"
    "efficiency = 0.5           ; PTD-P reaches 52% of peak; only scales compute against communication\n"
    "[pipeline]\n"
    "stages = 2                 ; set per run: p\n"
    "microbatches = 1           ; set per run: m\n"
    "microbatch = 64            ; b\n"
    "schedule = 1f1b            ; set per run\n"
    "chunks = 1                 ; set per run: v (interleaved: 2)\n"
    "recompute = off\n";

/* PTD-P Table 1 (Narayanan et al. 2021, arXiv 2104.04473) on the selene preset, 3D parallelism (pipeline.model =
 * transformer), timing only, one step. s = 2048, V = 51,200, fp16, full activation
 * recomputation (Megatron's --recompute-method uniform; PTD-P's flop count includes it).
 * The microbatch size and the interleaving come from Megatron-LM's
 * examples/sc21/run_table_1.sh (the SC'21 paper's scripts): MBS and
 * --num-layers-per-virtual-pipeline-stage. The memory-bound kernels are Megatron-LM 2021's
 * fused ones (tensor.kernels = fused) at the A100's 2,039 GB/s; the GEMMs are timed by the
 * kernel model from their shapes on selene's A100 description, and the links run at NCCL's
 * share of their bandwidth (platforms/README.md). model.efficiency, the share of the A100's
 * speed the training software's kernels get (each kernel's time but its launch is the
 * library's divided by it), is calibrated once, on the first row (1.7B, 32 GPUs, 137
 * Tflop/s per GPU): 0.748022 gives 137.00000, found by bisection on that row alone; every
 * other row is a prediction. PTDP_EFF_FLAT and PTDP_EFF_NOMINAL are the same calibration, on the same
 * row, of the robustness runs: the flat rate (model.kernel_model = flat) and the links at
 * their nominal bandwidth (platform.link_efficiency = off). */
#define PTDP_EFFICIENCY REPRODUCE_PTDP_EFFICIENCY
#define PTDP_EFF_FLAT "0.55347"
#define PTDP_EFF_NOMINAL "0.747736"
static const char ptdp_ini[] =
    "; dtsim reproduce pipeline: PTD-P (Narayanan et al. 2021) Table 1 on Selene, 3D parallelism, timing only.\n"
    "; Each run sets the model shape (tensor.*), t, d, p, the microbatch size b, m and the schedule.\n"
    "[run]\n"
    "algorithm = pipeline\n"
    "max_steps = 1\n"
    "collectives = rounds       ; each collective one bulk-synchronous round (the README: within 4e-5 of messages)\n"
    REPRODUCE_SELENE_TIMING_INI
    "efficiency = " PTDP_EFFICIENCY "      ; the software's share of the GPU; calibrated once on the first row (1.7B, 32 GPUs: 137 Tflop/s per GPU)\n"
    "[pipeline]\n"
    "model = transformer        ; GPT stages of [tensor]'s shapes: 3D parallelism\n"
    "scatter_gather = on        ; PTD-P sec. 4.1\n"
    "schedule = 1f1b            ; set per run: interleaved where the SC'21 script interleaves\n"
    "mirror_replicas = on       ; replicas 1..d-1 mirror replica 0 up to the flush (exact: checked before each run)\n"
    "[tensor]\n"
    "seq = 2048                 ; s\n"
    "vocab = 51200              ; V (GPT-2's 50,257 padded)\n"
    "recompute = on             ; activation recomputation of every layer\n"
    "async_grad_allreduce = on\n"
    "collective = ring          ; NCCL's ring inside the node\n"
    "fuse_layers = on           ; a microbatch's pass over a stage's layers as a few activities (the README: within 3e-5 of layer by layer)\n"
    "kernels = fused            ; Megatron-LM 2021's fused elementwise kernels at 2,039 GB/s (selene's mem_bw)\n";

typedef struct ptdp_row {
  const char *params_b;
  long heads, hidden, layers, t, p, gpus, batch;
  double paper;         /* Table 1's Tflop/s per GPU */
  long b, layers_per_v; /* run_table_1.sh's MBS and layers per virtual stage (0: not interleaved) */
  int quick;            /* in --quick */
} ptdp_row;

/* Table 1 (Narayanan et al. 2021) with run_table_1.sh's MBS and virtual stages. The full grid
 * runs all ten rows, --quick the three smallest. The collectives run as rounds and the layers
 * as fused passes (ptdp_ini): at message level SimGrid handles every ring step of every tensor
 * allreduce of every replica as a message, and the 1T row's step alone took 2,331 s of CPU. */
static const ptdp_row ptdp_rows[] = {
    {"1.7", 24, 2304, 24, 1, 1, 32, 512, 137, 16, 0, 1},
    {"3.6", 32, 3072, 30, 2, 1, 64, 512, 138, 16, 0, 1},
    {"7.5", 32, 4096, 36, 4, 1, 128, 512, 142, 16, 0, 1},
    {"18.4", 48, 6144, 40, 8, 1, 256, 1024, 135, 8, 0, 0},
    {"39.1", 64, 8192, 48, 8, 2, 512, 1536, 138, 4, 0, 0},
    {"76.1", 80, 10240, 60, 8, 4, 1024, 1792, 140, 2, 5, 0},
    {"145.6", 96, 12288, 80, 8, 8, 1536, 2304, 148, 2, 5, 0},
    {"310.1", 128, 16384, 96, 8, 16, 1920, 2160, 155, 1, 3, 0},
    {"529.6", 128, 20480, 105, 8, 35, 2520, 2520, 163, 1, 1, 0},
    {"1008.0", 160, 25600, 128, 8, 64, 3072, 3072, 163, 1, 0, 0},
};
#define PTDP_ROWS (sizeof ptdp_rows / sizeof ptdp_rows[0])

/* The runs: every row as committed (variant PTDP_MAIN), and in the full grid the robustness
 * variants on the rows of one node or less (t = 1 to 8, p = 1), each calibrated again on the
 * first row. */
enum { PTDP_MAIN, PTDP_FLAT, PTDP_NOMINAL, PTDP_VARIANTS };
static const char *const ptdp_variant_sets[PTDP_VARIANTS][2] = {
    {NULL, NULL},
    {"model.kernel_model=flat", "model.efficiency=" PTDP_EFF_FLAT},
    {"platform.link_efficiency=off", "model.efficiency=" PTDP_EFF_NOMINAL}};
#define PTDP_ROBUST_ROWS 4 /* 1.7B to 18.4B */
#define PTDP_MAX_RUNS (PTDP_ROWS + (PTDP_VARIANTS - 1) * PTDP_ROBUST_ROWS)

typedef struct ptdp_run {
  const ptdp_row *row;
  int variant;
  long d, m, v;
  double tflops, bubble, step_s;
  double gemm_share; /* reproduce_gemm_share of the row's layer, at PTDP_EFFICIENCY */
} ptdp_run;

static long ptdp_chunks(const ptdp_row *r)
{
  return r->layers_per_v > 0 ? r->layers / r->p / r->layers_per_v : 1;
}

static size_t ptdp_grid(int quick, void *rv, reproduce_job *jobs, const char *work)
{
  ptdp_run *runs = rv;
  size_t n = 0;
  for (int var = 0; var < (quick ? 1 : PTDP_VARIANTS); var++)
    for (size_t i = 0; i < (var == PTDP_MAIN ? PTDP_ROWS : PTDP_ROBUST_ROWS); i++) {
      const ptdp_row *r = &ptdp_rows[i];
      if (quick && !r->quick)
        continue;
      long d = r->gpus / (r->t * r->p), m = r->batch / (r->b * d), v = ptdp_chunks(r);
      runs[n] = (ptdp_run){r, var, d, m, v, 0, 0, 0,
                           reproduce_gemm_share("selene", atof(PTDP_EFFICIENCY), (size_t)r->b, 2048, (size_t)r->hidden,
                                                (size_t)r->heads, (size_t)r->t)};
      reproduce_job *jb = &jobs[n];
      memset(jb, 0, sizeof(*jb));
      snprintf(jb->label, sizeof(jb->label), "PTD-P %sB t=%ld p=%ld d=%ld%s", r->params_b, r->t, r->p, d,
               var == PTDP_FLAT ? " (flat)" : var == PTDP_NOMINAL ? " (nominal links)" : "");
      reproduce_ptdp_layout(jb, (const long[8]){r->t, d, r->hidden, r->heads, r->layers, r->b, r->p, m});
      snprintf(jb->sets[jb->n_sets++], sizeof(jb->sets[0]), "pipeline.chunks=%ld", v);
      snprintf(jb->sets[jb->n_sets++], sizeof(jb->sets[0]), "pipeline.schedule=%s", v > 1 ? "interleaved" : "1f1b");
      for (int k = 0; var != PTDP_MAIN && k < 2; k++)
        snprintf(jb->sets[jb->n_sets++], sizeof(jb->sets[0]), "%s", ptdp_variant_sets[var][k]);
      snprintf(jb->dir, sizeof(jb->dir), "%s/ptdp-%s-%d", work, r->params_b, var);
      n++;
    }
  return n;
}

static void ptdp_read_bubble(void *rv, const json_t *summary, const json_t *block)
{
  (void)summary;
  ((ptdp_run *)rv)->bubble = reproduce_number(block, "bubble_fraction");
}

static int ptdp_read(void *rv, const reproduce_job *j, char *err, size_t len)
{
  ptdp_run *r = rv;
  return reproduce_pipeline_figures(j, &r->tflops, &r->step_s, ptdp_read_bubble, r, err, len);
}

static double ptdp_error(const ptdp_run *r)
{
  return (r->tflops - r->row->paper) / r->row->paper;
}

static char *ptdp_csv(const reproduce_data *d)
{
  const ptdp_run *runs = d->runs[1];
  size_t n = d->n[1];
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  static const char *const variants[PTDP_VARIANTS] = {"committed", "flat-gemms", "nominal-links"};
  fputs("params_b,variant,hidden,heads,layers,t,p,d,gpus,batch,microbatch,microbatches,chunks,paper_tflops_per_gpu,"
        "tflops_per_gpu,error,bubble_fraction,step_s,gemm_share\n",
        f);
  for (size_t k = 0; k < n; k++) {
    const ptdp_row *r = runs[k].row;
    fprintf(f, "%s,%s,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", r->params_b,
            variants[runs[k].variant], r->hidden, r->heads, r->layers, r->t, r->p, runs[k].d, r->gpus, r->batch, r->b,
            runs[k].m, runs[k].v, r->paper, runs[k].tflops, ptdp_error(&runs[k]), runs[k].bubble, runs[k].step_s,
            runs[k].gemm_share);
  }
  fclose(f);
  return text;
}

/* ptdp.gp's datablock: per committed row its index, size, the paper's and dtsim's Tflop/s. */
static void ptdp_plot(json_t *v, const ptdp_run *runs, size_t n)
{
  char *text;
  size_t tl;
  FILE *f = reproduce_frame_stream(&text, &tl);
  fputs("$d << EOD\n", f);
  for (size_t k = 0; k < n; k++)
    if (runs[k].variant == PTDP_MAIN)
      fprintf(f, "%zu %s %.6f %.6f\n", k, runs[k].row->params_b, runs[k].row->paper, runs[k].tflops);
  fputs("EOD\n", f);
  template_set_stream(v, "block", f, &text);
}

static const long pp_stages[] = {2, 4, 8};
static const long pp_micro[] = {1, 4, 8, 16, 32};
static const char *const pp_sched[] = {"gpipe", "1f1b", "interleaved"};
#define PP_V 2 /* chunks per device for the interleaved rows */
#define PP_MAX_RUNS 45

typedef struct pp_run {
  const char *schedule;
  long stages, micro, chunks;
  double bubble, formula, makespan;
  long peak;
} pp_run;

/* --quick: p in {2, 4}, m in {1, 4, 8}: 16 runs of the full grid's 41, a few seconds. */
static size_t pp_grid(int quick, void *rv, reproduce_job *jobs, const char *work)
{
  pp_run *runs = rv;
  size_t n = 0;
  for (size_t k = 0; k < 3; k++)
    for (size_t i = 0; i < (quick ? 2 : 3); i++)
      for (size_t j = 0; j < (quick ? 3 : 5); j++) {
        long p = pp_stages[i], m = pp_micro[j], v = k == 2 ? PP_V : 1;
        if (k == 2 && m % p != 0)
          continue; /* Megatron's interleaved schedule needs m to be a multiple of p */
        runs[n] = (pp_run){pp_sched[k], p, m, v, 0, 0, 0, 0};
        reproduce_job *jb = &jobs[n];
        snprintf(jb->label, sizeof(jb->label), "%s p=%ld m=%ld v=%ld", pp_sched[k], p, m, v);
        snprintf(jb->sets[0], sizeof(jb->sets[0]), "pipeline.schedule=%s", pp_sched[k]);
        snprintf(jb->sets[1], sizeof(jb->sets[1]), "pipeline.stages=%ld", p);
        snprintf(jb->sets[2], sizeof(jb->sets[2]), "pipeline.microbatches=%ld", m);
        snprintf(jb->sets[3], sizeof(jb->sets[3]), "pipeline.chunks=%ld", v);
        jb->n_sets = 4;
        snprintf(jb->dir, sizeof(jb->dir), "%s/%s-p%ld-m%ld-v%ld", work, pp_sched[k], p, m, v);
        n++;
      }
  return n;
}

static int pp_read(void *rv, const reproduce_job *j, char *err, size_t len)
{
  pp_run *r = rv;
  json_t *s, *b = reproduce_result_block(j, "pipeline", &s, err, len);
  if (b == NULL)
    return -1;
  r->bubble = json_number_value(json_object_get(b, "bubble_fraction"));
  r->formula = json_number_value(json_object_get(b, "formula"));
  r->makespan = json_number_value(json_object_get(b, "makespan_s"));
  json_t *st = json_object_get(b, "per_stage");
  for (size_t s2 = 0; s2 < json_array_size(st); s2++) {
    long pk = (long)json_integer_value(json_object_get(json_array_get(st, s2), "peak_stashed"));
    r->peak = pk > r->peak ? pk : r->peak;
  }
  json_decref(s);
  return 0;
}

static char *pp_csv(const reproduce_data *d)
{
  const pp_run *runs = d->runs[0];
  size_t n = d->n[0];
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fputs("schedule,stages,microbatches,chunks,bubble_fraction,formula,peak_stashed\n", f);
  for (size_t k = 0; k < n; k++)
    fprintf(f, "%s,%ld,%ld,%ld,%.17g,%.17g,%ld\n", runs[k].schedule, runs[k].stages, runs[k].micro, runs[k].chunks,
            runs[k].bubble, runs[k].formula, runs[k].peak);
  fclose(f);
  return text;
}

/* The PTD-P section of the README: the table, then what it shows, from the runs. */
/* The main run of row i, or NULL (not in this grid). */
static const ptdp_run *ptdp_find(const ptdp_run *runs, size_t n, size_t i, int variant)
{
  for (size_t k = 0; k < n; k++)
    if (runs[k].row == &ptdp_rows[i] && runs[k].variant == variant)
      return &runs[k];
  return NULL;
}

/* The robustness table's rows: the one-node rows as committed and under each variant, each
 * variant calibrated again on the first row. */
static void ptdp_robust_rows(FILE *f, const ptdp_run *runs, size_t n)
{
  for (size_t i = 0; i < PTDP_ROBUST_ROWS; i++) {
    const ptdp_run *m = ptdp_find(runs, n, i, PTDP_MAIN), *fl = ptdp_find(runs, n, i, PTDP_FLAT),
                   *no = ptdp_find(runs, n, i, PTDP_NOMINAL);
    if (!m || !fl || !no)
      continue;
    fprintf(f, "| %s | %ld | %.0f | %.1f (%+.1f%%) | %.1f (%+.1f%%) | %.1f (%+.1f%%) |\n", m->row->params_b, m->row->t,
            m->row->paper, m->tflops, 100 * ptdp_error(m), fl->tflops, 100 * ptdp_error(fl), no->tflops,
            100 * ptdp_error(no));
  }
}

/* The rows run, their table and the targets' verdict; returns the rows in the table, and in
 * *worst_k_out the index in runs of the largest error. */
static size_t ptdp_table(json_t *v, const ptdp_run *runs, size_t n, size_t *worst_k_out)
{
  char *text = NULL;
  size_t tl;
  FILE *f = reproduce_frame_stream(&text, &tl);
  double worst = 0, paper[PTDP_ROWS], got[PTDP_ROWS];
  size_t nm = 0, worst_k = 0;
  int within = 0;
  for (size_t k = 0; k < n; k++) {
    const ptdp_run *r = &runs[k];
    if (r->variant != PTDP_MAIN)
      continue;
    double e = ptdp_error(r);
    if (fabs(e) > worst) {
      worst = fabs(e);
      worst_k = k;
    }
    within += fabs(e) <= 0.10;
    paper[nm] = r->row->paper;
    got[nm++] = r->tflops;
    fprintf(f, "| %s | %ld | %ld | %ld | %ld | %ld | %ld | %ld | %ld | %.0f | %.1f | %+.1f%% | %.3f | %.3f |\n",
            r->row->params_b, r->row->t, r->row->p, r->d, r->row->gpus, r->row->batch, r->row->b, r->m, r->v,
            r->row->paper, r->tflops, 100 * e, r->bubble, r->gemm_share);
  }
  template_set_stream(v, "ptdp_rows", f, &text);
  double rho = nm >= 2 ? reproduce_spearman(paper, got, nm) : 0;
  template_set(v, "met", "%s", within >= 8 && rho >= 0.6 ? "met" : "not met");
  template_set(v, "within", "%d", within);
  template_set(v, "nm", "%zu", nm);
  template_set(v, "worst", "%.1f", 100 * worst);
  template_set(v, "worst_at", "%sB", nm ? runs[worst_k].row->params_b : "-");
  template_set(v, "rho", "%.2f", rho);
  *worst_k_out = worst_k;
  return nm;
}

/* The mean error of the rows of one node with t > 1 (tp) and of the pipelined rows (pp). */
static void ptdp_means(json_t *v, const ptdp_run *runs, size_t n)
{
  double e_tp = 0, e_pp = 0;
  int n_tp = 0, n_pp = 0;
  for (size_t k = 0; k < n; k++) {
    const ptdp_run *r = &runs[k];
    if (r->variant != PTDP_MAIN || r->row->t == 1)
      continue;
    if (r->row->p == 1)
      e_tp += ptdp_error(r), n_tp++;
    else
      e_pp += ptdp_error(r), n_pp++;
  }
  json_object_set_new(v, "tp_avg", json_boolean(n_tp > 0));
  json_object_set_new(v, "pp_avg", json_boolean(n_pp > 0));
  if (n_tp)
    template_set(v, "e_tp", "%+.1f", 100 * e_tp / n_tp);
  if (n_pp)
    template_set(v, "e_pp", "%+.1f", 100 * e_pp / n_pp);
}

/* The numbers of "What moved the numbers, and what is still off" (nm rows in the table,
 * worst_k the largest error's). */
static void ptdp_moved(json_t *v, const ptdp_run *runs, size_t n, size_t nm, size_t worst_k)
{
  const ptdp_run *first = ptdp_find(runs, n, 0, PTDP_MAIN), *last = NULL;
  const ptdp_run *r4 = ptdp_find(runs, n, PTDP_ROBUST_ROWS - 1, PTDP_MAIN);
  const ptdp_run *f4 = ptdp_find(runs, n, PTDP_ROBUST_ROWS - 1, PTDP_FLAT);
  const ptdp_run *n4 = ptdp_find(runs, n, PTDP_ROBUST_ROWS - 1, PTDP_NOMINAL);
  for (size_t k = 0; k < n; k++)
    if (runs[k].variant == PTDP_MAIN)
      last = &runs[k];
  template_set(v, "share_first", "%.3f", first ? first->gemm_share : 0);
  template_set(v, "first_at", "%sB", first ? first->row->params_b : "-");
  template_set(v, "share_last", "%.3f", last ? last->gemm_share : 0);
  template_set(v, "last_at", "%sB", last ? last->row->params_b : "-");
  json_object_set_new(v, "flat4", json_boolean(r4 && f4));
  json_object_set_new(v, "nominal4", json_boolean(r4 && n4));
  if (r4) {
    template_set(v, "r4_at", "%s", r4->row->params_b);
    template_set(v, "r4_tflops", "%.1f", r4->tflops);
    template_set(v, "r4_t", "%ld", r4->row->t);
    template_set(v, "r4_ht", "%ld", r4->row->hidden / r4->row->t);
  }
  if (f4)
    template_set(v, "f4_tflops", "%.1f", f4->tflops);
  if (n4)
    template_set(v, "n4_tflops", "%.1f", n4->tflops);
  template_set(v, "still_worst", "%+.1f", nm ? 100 * ptdp_error(&runs[worst_k]) : 0);
  ptdp_means(v, runs, n);
  json_object_set_new(v, "last_pp", json_boolean(last && last->row->p > 1));
  if (last && last->row->p > 1) {
    template_set(v, "last_bubble", "%.3f", last->bubble);
    template_set(v, "last_p", "%ld", last->row->p);
    template_set(v, "last_m", "%ld", last->m);
    template_set(v, "last_v", "%ld", last->v);
  }
}

/* The PTD-P section's values: the rows not run, the rows' table, the robustness table (full
 * grid only), and what moved the numbers. */
static void ptdp_readme(json_t *v, const ptdp_run *runs, size_t n, int quick)
{
  template_set(v, "efficiency", "%s", PTDP_EFFICIENCY);
  template_set(v, "eff_flat", "%s", PTDP_EFF_FLAT);
  template_set(v, "eff_nominal", "%s", PTDP_EFF_NOMINAL);
  json_object_set_new(v, "quick_run", json_boolean(quick));
  char *text = NULL;
  size_t tl;
  FILE *f = reproduce_frame_stream(&text, &tl);
  int any = 0;
  for (size_t i = 0; i < PTDP_ROWS; i++)
    if (ptdp_find(runs, n, i, PTDP_MAIN) == NULL)
      fprintf(f, "%s %sB (%ld GPUs)", any++ ? "," : "", ptdp_rows[i].params_b, ptdp_rows[i].gpus);
  template_set_stream(v, "not_run", f, &text);
  size_t worst_k;
  size_t nm = ptdp_table(v, runs, n, &worst_k);
  f = reproduce_frame_stream(&text, &tl);
  ptdp_robust_rows(f, runs, n);
  template_set_stream(v, "robust_rows", f, &text);
  ptdp_moved(v, runs, n, nm, worst_k);
}

/* templates/pipeline.md's values. */
static int pp_readme(json_t *v, const reproduce_data *d, char *err, size_t len)
{
  (void)err, (void)len;
  const pp_run *runs = d->runs[0];
  size_t n = d->n[0];
  double worst = 0, least = INFINITY;
  char *text = NULL;
  size_t tl;
  FILE *f = reproduce_frame_stream(&text, &tl);
  for (size_t k = 0; k < n; k++) {
    worst = fmax(worst, runs[k].bubble - runs[k].formula);
    least = fmin(least, runs[k].bubble - runs[k].formula);
    fprintf(f, "| %s | %ld | %ld | %ld | %.4f | %.4f | %+.4f | %ld |\n", runs[k].schedule, runs[k].stages,
            runs[k].micro, runs[k].chunks, runs[k].bubble, runs[k].formula, runs[k].bubble - runs[k].formula,
            runs[k].peak);
  }
  template_set_stream(v, "bubble_rows", f, &text);
  template_set(v, "bubble_side", "%s", least >= 0 ? "above" : "around");
  template_set(v, "bubble_least", "%.4f", least);
  template_set(v, "bubble_worst", "%.4f", worst);
  ptdp_readme(v, d->runs[1], d->n[1], d->o->quick);
  return 0;
}

/* pipeline.gp's values: one datablock per (schedule, p) run (m, simulated, formula) and its
 * plot clause (points, and the formula as a line of the same colour). */
static void pp_plot(json_t *v, const pp_run *runs, size_t n)
{
  static const char *colors[] = {"#4477aa", "#ee6677", "#228833"};
  char *text;
  size_t tl;
  FILE *f = reproduce_frame_stream(&text, &tl);
  int blocks = 0;
  template_list(v, "series");
  for (size_t k = 0; k < 3; k++)
    for (size_t i = 0; i < 3; i++) {
      int any = 0;
      for (size_t r = 0; r < n; r++) {
        if (strcmp(runs[r].schedule, pp_sched[k]) != 0 || runs[r].stages != pp_stages[i])
          continue;
        if (!any)
          fprintf(f, "$d%d << EOD\n", blocks);
        any = 1;
        fprintf(f, "%ld %.6f %.6f\n", runs[r].micro, runs[r].bubble, runs[r].formula);
      }
      if (!any)
        continue;
      fputs("EOD\n", f);
      json_t *it = template_add(v, "series");
      template_set(it, "sep", "%s", blocks ? ", " : "");
      template_set(it, "i", "%d", blocks);
      template_set(it, "pt", "%d", 4 + 2 * (blocks / 3));
      template_set(it, "dt", "%d", 1 + blocks / 3);
      template_set(it, "color", "%s", colors[blocks % 3]);
      template_set(it, "title", "%s p=%ld", pp_sched[k], pp_stages[i]);
      blocks++;
    }
  template_set_stream(v, "blocks", f, &text);
}

static void pipeline_plot(json_t *v, const char *plot, const reproduce_data *d)
{
  if (strcmp(plot, "ptdp") == 0)
    ptdp_plot(v, d->runs[1], d->n[1]);
  else
    pp_plot(v, d->runs[0], d->n[0]);
}

const reproduction reproduce_pipeline = {
    .name = "pipeline",
    .grids = {{"pipeline.ini", pp_ini, sizeof(pp_run), PP_MAX_RUNS, pp_grid, pp_read, NULL},
              {"ptdp.ini", ptdp_ini, sizeof(ptdp_run), PTDP_MAX_RUNS, ptdp_grid, ptdp_read, NULL}},
    .tables = {{"pipeline.csv", 0xFu, pp_csv},  /* key: schedule,stages,microbatches,chunks */
               {"ptdp.csv", 0x3u, ptdp_csv}}, /* key: params_b,variant */
    .readme = pp_readme,
    .plots = {"pipeline", "ptdp"},
    .plot = pipeline_plot,
};

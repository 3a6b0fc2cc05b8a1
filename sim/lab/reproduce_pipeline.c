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
#define PTDP_EFFICIENCY "0.748022"
#define PTDP_EFF_FLAT "0.55347"
#define PTDP_EFF_NOMINAL "0.747736"
static const char ptdp_ini[] =
    "; dtsim reproduce pipeline: PTD-P (Narayanan et al. 2021) Table 1 on Selene, 3D parallelism, timing only.\n"
    "; Each run sets the model shape (tensor.*), t, d, p, the microbatch size b, m and the schedule.\n"
    "[run]\n"
    "algorithm = pipeline\n"
    "max_steps = 1\n"
    "collectives = rounds       ; each collective one bulk-synchronous round (the README: within 4e-5 of messages)\n"
    "[platform]\n"
    "preset = selene            ; 8 A100 (312e12 flop/s fp16, 108 SMs) per node, NVSwitch, 8 x 200 Gb/s HDR IB per node\n"
    "link_efficiency = on       ; links at NCCL's share: NVSwitch 230 of 300 GB/s, IB 24 of 25 GB/s per NIC\n"
    "[model]\n"
    "numerics = off             ; timing only\n"
    "dtype = fp16               ; 2 bytes per element on the wire\n"
    "kernel_model = shapes      ; GEMMs timed by shape (tiles, waves, L2, DRAM), 7 us per kernel\n"
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

static size_t ptdp_grid(int quick, ptdp_run *runs, reproduce_job *jobs, const char *work)
{
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
      long vals[] = {r->t, d, r->hidden, r->heads, r->layers, r->b, r->p, m, v};
      static const char *const keys[] = {"tensor.ranks", "tensor.data_parallel", "tensor.hidden", "tensor.heads",
                                         "tensor.layers", "tensor.microbatch", "pipeline.stages",
                                         "pipeline.microbatches", "pipeline.chunks"};
      for (size_t k = 0; k < 9; k++)
        snprintf(jb->sets[k], sizeof(jb->sets[k]), "%s=%ld", keys[k], vals[k]);
      snprintf(jb->sets[9], sizeof(jb->sets[9]), "pipeline.schedule=%s", v > 1 ? "interleaved" : "1f1b");
      jb->n_sets = 10;
      for (int k = 0; var != PTDP_MAIN && k < 2; k++)
        snprintf(jb->sets[jb->n_sets++], sizeof(jb->sets[0]), "%s", ptdp_variant_sets[var][k]);
      snprintf(jb->dir, sizeof(jb->dir), "%s/ptdp-%s-%d", work, r->params_b, var);
      n++;
    }
  return n;
}

static int ptdp_read(ptdp_run *r, const reproduce_job *j, char *err, size_t len)
{
  char path[700];
  snprintf(path, sizeof(path), "%s/summary.json", j->dir);
  json_t *s = json_load_file(path, 0, NULL), *b = s ? json_object_get(s, "pipeline") : NULL;
  if (b == NULL) {
    json_decref(s);
    snprintf(err, len, "%s: no pipeline result", path);
    return -1;
  }
  r->tflops = json_number_value(json_object_get(b, "tflops_per_gpu"));
  r->bubble = json_number_value(json_object_get(b, "bubble_fraction"));
  r->step_s = json_number_value(json_object_get(b, "makespan_s"));
  json_decref(s);
  return 0;
}

static double ptdp_error(const ptdp_run *r)
{
  return (r->tflops - r->row->paper) / r->row->paper;
}

static char *ptdp_csv(const ptdp_run *runs, size_t n)
{
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

static int ptdp_plot(const char *dir, const ptdp_run *runs, size_t n, char *err, size_t len)
{
  char *script = NULL;
  size_t slen = 0;
  FILE *f = open_memstream(&script, &slen);
  xbt_assert(f, "open_memstream failed");
  fprintf(f, "set terminal pngcairo size 1000,600\nset output '%s/.ptdp.png.tmp'\n$d << EOD\n", dir);
  for (size_t k = 0; k < n; k++)
    if (runs[k].variant == PTDP_MAIN)
      fprintf(f, "%zu %s %.6f %.6f\n", k, runs[k].row->params_b, runs[k].row->paper, runs[k].tflops);
  fputs("EOD\nset title 'PTD-P Table 1 on Selene: Tflop/s per GPU, paper vs dtsim (efficiency calibrated on 1.7B)'\n"
        "set style data histogram\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
        "set boxwidth 0.9\nset yrange [0:200]\nset xlabel 'model size (billions of parameters)'\n"
        "set ylabel 'Tflop/s per GPU'\nset key top left\nset grid ytics\n"
        "plot $d using 3:xtic(2) title 'PTD-P (paper)' lc rgb '#4477aa', '' using 4 title 'dtsim' lc rgb '#ee6677'\n",
        f);
  fclose(f);
  int rc = reproduce_plot(dir, "ptdp", script, err, len);
  free(script); /* open_memstream's */
  return rc;
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
static size_t pp_grid(int quick, pp_run *runs, reproduce_job *jobs, const char *work)
{
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

static int pp_read(pp_run *r, const reproduce_job *j, char *err, size_t len)
{
  char path[700];
  snprintf(path, sizeof(path), "%s/summary.json", j->dir);
  json_t *s = json_load_file(path, 0, NULL), *b = s ? json_object_get(s, "pipeline") : NULL;
  if (b == NULL) {
    json_decref(s);
    snprintf(err, len, "%s: no pipeline result", path);
    return -1;
  }
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

static char *pp_csv(const pp_run *runs, size_t n)
{
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

/* The robustness table: the one-node rows as committed and under each variant, each variant
 * calibrated again on the first row. */
static void ptdp_robustness(FILE *f, const ptdp_run *runs, size_t n)
{
  fputs("### Robustness: which assumption moves the rows\n\n"
        "Each column is the same runs with one assumption changed and `model.efficiency` calibrated\n"
        "again on the first row (so that row stays at 137): `flat GEMMs` times every GEMM at one\n"
        "share of peak and the memory-bound kernels at the full 2,039 GB/s (`model.kernel_model =\n"
        "flat`, efficiency " PTDP_EFF_FLAT ", the model before the kernel model, with NCCL's links),\n"
        "`nominal links` gives the links their full bandwidth\n"
        "(`platform.link_efficiency = off`, efficiency " PTDP_EFF_NOMINAL "). Rows of one node (p = 1), where\n"
        "t goes 1, 2, 4, 8:\n\n"
        "| params (B) | t | paper | as committed | flat GEMMs | nominal links |\n|---|---|---|---|---|---|\n",
        f);
  for (size_t i = 0; i < PTDP_ROBUST_ROWS; i++) {
    const ptdp_run *m = ptdp_find(runs, n, i, PTDP_MAIN), *fl = ptdp_find(runs, n, i, PTDP_FLAT),
                   *no = ptdp_find(runs, n, i, PTDP_NOMINAL);
    if (!m || !fl || !no)
      continue;
    fprintf(f, "| %s | %ld | %.0f | %.1f (%+.1f%%) | %.1f (%+.1f%%) | %.1f (%+.1f%%) |\n", m->row->params_b, m->row->t,
            m->row->paper, m->tflops, 100 * ptdp_error(m), fl->tflops, 100 * ptdp_error(fl), no->tflops,
            100 * ptdp_error(no));
  }
  fputs("\n", f);
}

/* The README's setup of the PTD-P comparison: shapes, kernels, collectives, calibration. */
static void ptdp_method(FILE *f)
{
  fputs("## PTD-P Table 1 comparison\n\n"
          "Made by the same command from `ptdp.ini` (one row by hand, from this folder: `dtsim run ptdp.ini\n"
          "--set tensor.ranks=8 --set tensor.data_parallel=32 --set tensor.hidden=8192 --set tensor.heads=64\n"
          "--set tensor.layers=48 --set tensor.microbatch=4 --set pipeline.stages=2 --set\n"
          "pipeline.microbatches=12`). Each row is one training step of 3D parallelism\n"
          "(`pipeline.model = transformer`): p stages of t-way tensor-parallel GPT layers, d pipeline\n"
          "replicas, on the `selene` preset, timing only.\n\n"
          "- Shapes: Table 1's (Narayanan et al. 2021) heads, h, layers, t, p, GPUs and batch B; s = 2048,\n"
          "  V = 51,200, fp16, recomputation of every layer; d = GPUs / (t p), m = B / (b d).\n"
          "- Not in the table, from Megatron-LM's `examples/sc21/run_table_1.sh` (the paper's scripts):\n"
          "  the microbatch size b (`MBS`: 16, 16, 16, 8, 4, 2, 2, 1, 1, 1) and the interleaving\n"
          "  (`--num-layers-per-virtual-pipeline-stage` 5, 5, 3 and 1 on the 76B, 145B, 310B and 530B\n"
          "  rows, i.e. v = layers / (p x that) chunks per device with the interleaved schedule; 1F1B\n"
          "  elsewhere). Full recomputation (`--recompute-method uniform`) on every row.\n"
          "- GEMMs: timed from their shapes by the kernel model (`model.kernel_model = shapes`,\n"
          "  [models/README.md](../../models/README.md#kernel-model)) on selene's A100 description\n"
          "  (108 SMs, cuBLAS's tiles, L2 and HBM bandwidths, 7 us per kernel launch:\n"
          "  [platforms/README.md](../../platforms/README.md)): tile and wave quantisation, the\n"
          "  roofline of memory-bound GEMMs (the attention's scores at head size 96 to 160), split-K.\n"
          "  `GEMM share` below is what that gives one layer's GEMMs of the row's shape (with the\n"
          "  calibrated software share), as a share of the 312 Tflop/s peak.\n"
          "- Memory-bound kernels: `tensor.kernels = fused`, Megatron-LM 2021's fused LayerNorm,\n"
          "  bias-GeLU, bias-dropout-add and scale-mask-softmax, per layer 30 b s h (replicated) +\n"
          "  31 b s h / t + 10 b a s^2 / t elements read or written, plus the forward's share again\n"
          "  with recomputation (`models/transformer.h`), at selene's 2,039 GB/s per A100, each kernel\n"
          "  and each collective one more launch.\n"
          "- Collectives and pipeline messages: on links written at NCCL's share of their bandwidth\n"
          "  (`platform.link_efficiency = on`): NVSwitch 230 of 300 GB/s per A100 and direction, the\n"
          "  NCCL maintainers' figure for A100 all-reduce; InfiniBand 24 of each 200 Gb/s NIC's 25 GB/s\n"
          "  (nccl-tests issues 149 and 119). While a collective runs, NCCL's kernel holds 16 of the\n"
          "  A100's 108 SMs (`platform.comm_sms = on`: one SM per channel, shared with no compute kernel;\n"
          "  16 on a DGX with 8 NICs, the NCCL maintainers), so the weight-gradient GEMMs that the\n"
          "  asynchronous tensor-parallel allreduce overlaps run on the other 92 meanwhile.\n"
          "- Collectives as rounds (`run.collectives = rounds`, every row alike): each tensor-parallel\n"
          "  and data-parallel allreduce is one bulk-synchronous round of one transfer per member, its\n"
          "  steps' latencies a chain, instead of 2(t-1) SimGrid messages per rank; at message level\n"
          "  the 1T row's one step took 2,331 s of CPU. Against message level, on these rows (contention-\n"
          "  free inside a node, every ring's routes alike), rounds give the same Tflop/s per GPU to\n"
          "  1e-13 for the rows of one node, +1.2e-5 at 39.1B and +3.3e-5 at 76.1B\n"
          "  ([algorithms/README.md](../../algorithms/README.md#rounds-runcollectives--rounds), error table).\n",
          f);
  fputs("- Mirrored replicas (`pipeline.mirror_replicas = on`, every row alike): the d data-parallel\n"
        "  replicas compute alike and share no link before the step's flush (each replica's stage is a\n"
        "  node of its own, or a group of GPUs on links of their own; dtsim checks this before each run\n"
        "  and refuses otherwise), so replica 0's pipeline is simulated and the others join its flush's\n"
        "  allreduces when it reaches them: the same times, bit for bit on the 1T row, with d times fewer\n"
        "  activities.\n",
        f);
  fputs("- Fused layer passes (`tensor.fuse_layers = on`, every row alike): each microbatch's forward\n"
          "  over a stage's layers, and its backward with their recomputation, runs as one execution of\n"
          "  its compute and one round of its tensor-parallel collectives, the weight gradients\n"
          "  concurrent with the reductions they overlap block by block, instead of about ten SimGrid\n"
          "  activities per layer. The executions and the rounds add the same seconds, latencies and\n"
          "  bytes, so against layer by layer nine rows agree to 7e-14; 529.6B (one layer per virtual\n"
          "  stage, so its two reductions of a pass become one transfer that its boundary messages\n"
          "  meet at another time) by -2.4e-5 (each row's difference:\n"
          "  [algorithms/README.md](../../algorithms/README.md#fused-layers-tensorfuse_layers)).\n"
          "- Calibration, once: `model.efficiency = " PTDP_EFFICIENCY "`, the share of the A100's speed the\n"
          "  training software's kernels get (the kernel model times each kernel as the library runs it\n"
          "  alone, GEMMs with cuBLAS's main loop at 0.8631 of an SM's peak, fitted on DeepBench's V100\n"
          "  GEMMs; the calibration divides all of it but the launch), makes the first row (1.7B on 32\n"
          "  GPUs) give 137 Tflop/s per GPU, found by bisection on that row alone; every other row is a\n"
          "  prediction with it. Tflop/s per GPU counts PTD-P's flops, 96 B s l h^2 (1 + s/6h + V/16lh)\n"
          "  per step, over the simulated step time and the GPUs.\n",
          f);
}

/* The table of the rows run and the targets' verdict; returns the rows in it, and in
 * *worst_k_out the index in runs of the largest error. */
static size_t ptdp_table(FILE *f, const ptdp_run *runs, size_t n, size_t *worst_k_out)
{
  fputs("\n| params (B) | t | p | d | GPUs | batch | b | m | v | PTD-P Tflop/s/GPU | dtsim Tflop/s/GPU | error | bubble | GEMM share |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        f);
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
  double rho = nm >= 2 ? reproduce_spearman(paper, got, nm) : 0;
  int met = within >= 8 && rho >= 0.6;
  fprintf(f,
          "\n**Targets: at least 8 rows within 10%% of the paper's Tflop/s per GPU, and the paper's trend kept\n"
          "(Spearman rank correlation with the paper's column at least 0.6): %s.** %d of %zu rows are\n"
          "within 10%%; the largest error is %.1f%% (%sB); the rank correlation over the %zu rows is %.2f.\n\n",
          met ? "met" : "not met", within, nm, 100 * worst, nm ? runs[worst_k].row->params_b : "-", nm, rho);
  *worst_k_out = worst_k;
  return nm;
}

/* "What moved the numbers, and what is still off" (nm rows in the table, worst_k the
 * largest error's). */
static void ptdp_moved(FILE *f, const ptdp_run *runs, size_t n, size_t nm, size_t worst_k)
{
  const ptdp_run *first = ptdp_find(runs, n, 0, PTDP_MAIN), *last = NULL;
  const ptdp_run *r4 = ptdp_find(runs, n, PTDP_ROBUST_ROWS - 1, PTDP_MAIN);
  const ptdp_run *f4 = ptdp_find(runs, n, PTDP_ROBUST_ROWS - 1, PTDP_FLAT);
  const ptdp_run *n4 = ptdp_find(runs, n, PTDP_ROBUST_ROWS - 1, PTDP_NOMINAL);
  for (size_t k = 0; k < n; k++)
    if (runs[k].variant == PTDP_MAIN)
      last = &runs[k];
  fputs("### What moved the numbers, and what is still off\n\n", f);
  fprintf(f,
          "- **The GEMMs' shapes.** The kernel model lets a row's GEMMs run closer to peak as h grows:\n"
          "  `GEMM share` goes from %.3f (%sB) to %.3f (%sB). What holds the small rows back is the\n"
          "  attention: at head size 96 its batched score and context GEMMs (s x s x 96) are\n"
          "  memory-bound on the A100, and they are a share s / (6h) of a layer's flops, 15%% at h =\n"
          "  2,304 but 1.3%% at 25,600; the memory-bound kernels (b a s^2 elements for the scores'\n"
          "  softmax and dropout) shrink the same way. The calibration at the first row absorbs what\n"
          "  that row spends there, and the larger rows gain.",
          first ? first->gemm_share : 0, first ? first->row->params_b : "-", last ? last->gemm_share : 0,
          last ? last->row->params_b : "-");
  if (r4 && f4)
    fprintf(f, " With one share of peak for every GEMM instead\n  (`flat GEMMs`), the %sB row gives %.1f Tflop/s, against %.1f with the kernel model.\n",
            r4->row->params_b, f4->tflops, r4->tflops);
  else
    fputs("\n", f);
  fputs("- **NCCL's bandwidth.** The tensor-parallel allreduces (6 per layer and microbatch with\n"
        "  recomputation, 2 of them hidden behind weight-gradient GEMMs) run on NVSwitch at 230 of\n"
        "  300 GB/s.",
        f);
  if (r4 && n4)
    fprintf(f, " At the nominal 300 GB/s the %sB row (t = %ld, h / t = %ld) would give %.1f Tflop/s\n  instead of %.1f.\n",
            r4->row->params_b, r4->row->t, r4->row->hidden / r4->row->t, n4->tflops, r4->tflops);
  else
    fputs("\n", f);
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
  fputs("- **The pipeline's bubble** (p-1)/(v m), the boundary messages and the data-parallel\n"
        "  allreduce after the flush (not overlapped with backward in Megatron-LM 2021) cost the rows\n"
        "  with p > 1 their `bubble` share and more.\n",
        f);
  fprintf(f, "- **Still off.** The largest error is %+.1f%% (%sB).", nm ? 100 * ptdp_error(&runs[worst_k]) : 0,
          nm ? runs[worst_k].row->params_b : "-");
  if (n_tp)
    fprintf(f, " The rows of one node with t > 1 are %+.1f%% off on average", 100 * e_tp / n_tp);
  if (n_pp)
    fprintf(f, n_tp ? ", the pipelined rows (p > 1) %+.1f%%" : " The pipelined rows (p > 1) are %+.1f%% off on average",
            100 * e_pp / n_pp);
  fputs(".\n"
        "  Tensor parallelism's allreduces are on the critical path between GEMMs, at NCCL's\n"
        "  large-message bandwidth; the paper's rise from 137 to 142 Tflop/s between t = 1 and t = 4\n"
        "  means its GEMMs at h = 4,096 gained more over h = 2,304 than the `GEMM share` column gives,\n"
        "  or its allreduces cost less than modelled.",
        f);
  if (last && last->row->p > 1)
    fprintf(f, " The pipelined rows also carry the bubble: the %sB row's is %.3f of its\n  step (p = %ld, m = %ld, v = %ld).",
            last->row->params_b, last->bubble, last->row->p, last->m, last->v);
  fputs("\n\n", f);
}

/* The README's PTD-P section: the setup, the rows' table, the robustness table (full grid
 * only), and what moved the numbers. */
static void ptdp_readme(FILE *f, const ptdp_run *runs, size_t n, int quick)
{
  ptdp_method(f);
  if (quick)
    fputs("- `--quick` runs only the three smallest rows.\n", f);
  int any = 0;
  for (size_t i = 0; i < PTDP_ROWS; i++)
    if (ptdp_find(runs, n, i, PTDP_MAIN) == NULL)
      fprintf(f, "%s %sB (%ld GPUs)", any++ ? "," : "- Not run in this grid, so not in `ptdp.csv` or the targets below:",
              ptdp_rows[i].params_b, ptdp_rows[i].gpus);
  if (any)
    fputs(".\n", f);
  size_t worst_k;
  size_t nm = ptdp_table(f, runs, n, &worst_k);
  if (!quick)
    ptdp_robustness(f, runs, n);
  ptdp_moved(f, runs, n, nm, worst_k);
}

static char *pp_readme(const pp_run *runs, size_t n, int quick, const ptdp_run *pt, size_t npt)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  double worst = 0, least = INFINITY;
  for (size_t k = 0; k < n; k++) {
    worst = fmax(worst, runs[k].bubble - runs[k].formula);
    least = fmin(least, runs[k].bubble - runs[k].formula);
  }
  fprintf(f,
          "# Pipeline bubble: GPipe, 1F1B and interleaved 1F1B against the formula\n\n"
          "Made by `dtsim reproduce pipeline%s` from `pipeline.ini` (one point by hand, from this folder:\n"
          "`dtsim run pipeline.ini --set pipeline.schedule=interleaved --set pipeline.stages=4 --set\n"
          "pipeline.microbatches=8 --set pipeline.chunks=2`). Each point is one simulation in its own\n"
          "process: one training step of `algorithms/pipeline.c`, every activation and gradient a message\n"
          "between stages, every forward and backward a SimGrid execution of its flops.\n\n"
          "## Set-up\n\n"
          "- Platform: the `selene` preset (PTD-P's cluster), stage s on GPU s of one node: 312e12 flop/s\n"
          "  fp16 peak at `model.efficiency = 0.5` (dense layers: the flat rate), NVSwitch at NCCL's\n"
          "  230e9 of its 300e9 B/s per GPU per direction.\n"
          "- Model: 16 dense layers of 8192 units, timing only, fp16 on the wire; the layers split into\n"
          "  p (or p x v) equal contiguous chunks; microbatch b = 64 examples. A layer's forward is\n"
          "  2 x 8192^2 x 64 flops = 55 us, its backward twice that; an activation message is\n"
          "  64 x 8192 x 2 bytes + 64 = 1 MiB, 4.6 us on NVSwitch plus latency.\n"
          "- Grid: p in {2, 4, 8}, m in {1, 4, 8, 16, 32}; `gpipe` and `1f1b` with v = 1; `interleaved`\n"
          "  with v = 2 only where m is a multiple of p (Megatron's schedule requires it): its rows\n"
          "  p = 2, m = 1; p = 4, m = 1; p = 8, m = 1 and 4 are skipped.\n\n"
          "## What is reported\n\n"
          "`bubble_fraction` is the idle share of the step's makespan averaged over the stages: for each\n"
          "stage, (makespan - time computing forwards and backwards - time applying the update) /\n"
          "makespan. Idle includes waiting for messages. `formula` is the same share for equal stages and\n"
          "free communication: (p-1)/(m+p-1) for GPipe and 1F1B, (p-1)/(vm+p-1) for interleaved. PTD-P\n"
          "(sec. 2.2) writes the bubble as (p-1)/m (interleaved (p-1)/(vm)), a ratio to the *ideal* time\n"
          "m(t_f+t_b), not to the total; summary.json's `formula_ideal` gives that convention. Both say\n"
          "the same thing: the bubble time is (p-1)(t_f+t_b), divided by v when interleaved.\n"
          "`peak_stashed` is the most (microbatch, chunk) pairs any stage holds activations for: m for\n"
          "GPipe, p for 1F1B (stage 0; stage s holds p-s), more for interleaved, whose warm-up runs\n"
          "(p-s-1) x 2 + (v-1) x p chunk-forwards (every one of the m v when m = p) and whose chunks are\n"
          "each 1/v of a stage.\n\n"
          "## Simulated vs formula\n\n"
          "| schedule | p | m | v | simulated bubble | formula | difference | peak stashed |\n"
          "|---|---|---|---|---|---|---|---|\n",
          quick ? " --quick" : "");
  for (size_t k = 0; k < n; k++)
    fprintf(f, "| %s | %ld | %ld | %ld | %.4f | %.4f | %+.4f | %ld |\n", runs[k].schedule, runs[k].stages,
            runs[k].micro, runs[k].chunks, runs[k].bubble, runs[k].formula, runs[k].bubble - runs[k].formula,
            runs[k].peak);
  fprintf(f,
          "\nThe simulated bubble is %s the formula by %.4f to %.4f. The formula\n"
          "assumes free communication; here each stage boundary costs a message per microbatch each way\n"
          "(and interleaving has v times as many boundaries), which the last stages wait for during the\n"
          "warm-up and the first stages during the cool-down. GPipe and 1F1B share the formula (the\n"
          "same (m+p-1)(t_f+t_b) step) and differ in the stash, m against p; with communication 1F1B\n"
          "comes out slightly above GPipe, as its alternation puts a message wait between more pairs of\n"
          "operations. With equal stages and negligible communication, `tests/sim_pipeline.c` checks\n"
          "the makespan (m+p-1)(t_f+t_b) and the bubble within 1%%, and interleaving's 1/v of the\n"
          "bubble time within 2%%.\n\n",
          least >= 0 ? "above" : "around", least, worst);
  ptdp_readme(f, pt, npt, quick);
  fprintf(f,
          "## Files\n\n"
          "`pipeline.csv`: `schedule,stages,microbatches,chunks,bubble_fraction,formula,peak_stashed`.\n"
          "`pipeline.png`: bubble fraction against microbatches, simulated points over the formula's\n"
          "lines. `--quick` runs p in {2, 4} and m in {1, 4, 8} (16 of the 41 runs), the same runs as the\n"
          "full grid's, so `dtsim reproduce pipeline --quick --check` compares them with this CSV.\n"
          "`ptdp.csv`: `params_b,variant,hidden,heads,layers,t,p,d,gpus,batch,microbatch,microbatches,\n"
          "chunks,paper_tflops_per_gpu,tflops_per_gpu,error,bubble_fraction,step_s,gemm_share` (error =\n"
          "dtsim / paper - 1; variant `committed` for the table's rows, `flat-gemms` and `nominal-links`\n"
          "for the robustness runs), one line per run; `--quick` runs the three smallest rows as\n"
          "committed, and `--check` compares them\n"          "with this file's rows of the same size. `ptdp.png`: paper and dtsim side by side.\n");
  fclose(f);
  return text;
}

static int pp_plot(const char *dir, const pp_run *runs, size_t n, char *err, size_t len)
{
  char *script = NULL;
  size_t slen = 0;
  FILE *f = open_memstream(&script, &slen);
  xbt_assert(f, "open_memstream failed");
  fprintf(f, "set terminal pngcairo size 1100,650\nset output '%s/.pipeline.png.tmp'\n", dir);
  /* one data block per (schedule, p): m, simulated, formula */
  int blocks = 0;
  char titles[9][64];
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
      if (any) {
        fputs("EOD\n", f);
        snprintf(titles[blocks], sizeof(titles[blocks]), "%s p=%ld", pp_sched[k], pp_stages[i]);
        blocks++;
      }
    }
  fputs("set title 'Pipeline bubble on one Selene node: simulated (points) vs (p-1)/(m+p-1), (p-1)/(vm+p-1) (lines)'\n"
        "set logscale x 2\nset xrange [0.8:40]\nset yrange [0:1]\nset xlabel 'microbatches m'\n"
        "set ylabel 'bubble fraction (idle share of the step)'\nset key outside right\nset grid\nplot ",
        f);
  static const char *colors[] = {"#4477aa", "#ee6677", "#228833"};
  for (int b = 0; b < blocks; b++) {
    const char *c = colors[b % 3];
    int pt = 4 + 2 * (b / 3);
    fprintf(f, "%s$d%d using 1:2 with points pt %d ps 1.3 lc rgb '%s' title '%s', $d%d using 1:3 with lines dt %d lc rgb '%s' notitle",
            b ? ", " : "", b, pt, c, titles[b], b, 1 + b / 3, c);
  }
  fputs("\n", f);
  fclose(f);
  int rc = reproduce_plot(dir, "pipeline", script, err, len);
  free(script); /* open_memstream's */
  return rc;
}

int reproduce_pipeline(const reproduce_opts *o, char *err, size_t len)
{
  if (fileio_write(o->work, "pipeline.ini", pp_ini, strlen(pp_ini), err, len) != 0)
    return 2;
  if (fileio_write(o->work, "ptdp.ini", ptdp_ini, strlen(ptdp_ini), err, len) != 0)
    return 2;
  pp_run runs[PP_MAX_RUNS];
  ptdp_run pt[PTDP_MAX_RUNS];
  reproduce_job *jobs = xbt_malloc0(PP_MAX_RUNS * sizeof(reproduce_job));
  reproduce_job *pjobs = xbt_malloc0(PTDP_MAX_RUNS * sizeof(reproduce_job));
  size_t n = pp_grid(o->quick, runs, jobs, o->work), npt = ptdp_grid(o->quick, pt, pjobs, o->work);
  int rc = reproduce_run_jobs(o, "pipeline.ini", jobs, n, err, len) == 0 ? 0 : 2;
  if (rc == 0 && reproduce_run_jobs(o, "ptdp.ini", pjobs, npt, err, len) != 0)
    rc = 2;
  for (size_t k = 0; k < n && rc == 0; k++)
    if (pp_read(&runs[k], &jobs[k], err, len) != 0)
      rc = 2;
  for (size_t k = 0; k < npt && rc == 0; k++)
    if (ptdp_read(&pt[k], &pjobs[k], err, len) != 0)
      rc = 2;
  char *csv = rc == 0 ? pp_csv(runs, n) : NULL, *pcsv = rc == 0 ? ptdp_csv(pt, npt) : NULL;
  if (rc == 0 && o->check) {
    char committed[600];
    snprintf(committed, sizeof(committed), "%s/pipeline.csv", o->out);
    rc = reproduce_check(csv, committed, o->quick, 0xFu, err, len); /* key: schedule,stages,microbatches,chunks */
    if (rc == 0) {
      snprintf(committed, sizeof(committed), "%s/ptdp.csv", o->out);
      rc = reproduce_check(pcsv, committed, o->quick, 0x3u, err, len); /* key: params_b,variant */
    }
    if (rc == 0 && !o->quiet)
      fprintf(stderr, "dtsim reproduce: pipeline matches %s/pipeline.csv and ptdp.csv\n", o->out);
  } else if (rc == 0) {
    char *readme = pp_readme(runs, n, o->quick, pt, npt);
    const char *files[] = {"pipeline.ini", pp_ini, "pipeline.csv", csv, "README.md", readme,
                           "ptdp.ini", ptdp_ini, "ptdp.csv", pcsv};
    if (reproduce_write(o->out, files, 5, err, len) != 0 || pp_plot(o->out, runs, n, err, len) != 0 ||
        ptdp_plot(o->out, pt, npt, err, len) != 0)
      rc = 2;
    free(readme); /* open_memstream's */
    if (rc == 0 && !o->quiet)
      fprintf(stderr, "dtsim reproduce: wrote %s/pipeline.csv, pipeline.png, ptdp.csv, ptdp.png, the .ini files, "
              "README.md\n", o->out);
  }
  for (size_t k = 0; k < n; k++)
    reproduce_remove_run(&jobs[k]);
  for (size_t k = 0; k < npt; k++)
    reproduce_remove_run(&pjobs[k]);
  char path[600];
  snprintf(path, sizeof(path), "%s/pipeline.ini", o->work);
  unlink(path);
  snprintf(path, sizeof(path), "%s/ptdp.ini", o->work);
  unlink(path);
  free(csv); /* open_memstream's */
  free(pcsv);
  xbt_free(jobs);
  xbt_free(pjobs);
  return rc;
}

/* reproduce_megatron.c - `dtsim reproduce megatron`: Megatron-LM's weak scaling (Shoeybi et
 * al. 2019, Table 1 and sec. 5.1; REFERENCES 2): GPT models of 1.2B to 8.3B parameters on
 * 1 to 8 GPUs of tensor (model) parallelism, and the same with 64-way data parallelism (64
 * to 512 GPUs), on the dgx2h preset, timing only, one calibration at the single-GPU point.
 * One simulation per process. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "sim/output.h"
#include "sim/reproduce.h"

/* The calibration, from the flops model alone: a 1-GPU run (t = 1, d = 1) sends no message,
 * so its step is exactly model_flops / (125e12 x efficiency) and its rate 125e12 x
 * efficiency. Megatron-LM's 1.2B baseline sustains 39e12 flop/s on one V100 (sec. 5.1), so
 * efficiency = 39 / 125 = 0.312, the same for every row. */
#define MEG_PEAK_TFLOPS 125.0
#define MEG_BASE_TFLOPS 39.0
#define MEG_EFFICIENCY "0.312"
#define MEG_SEQ 1024
#define MEG_MICROBATCH 8 /* sequences per model-parallel group: 8 x 64 = 512 global with DP */
#define MEG_VOCAB 51200
#define MEG_DP 64

static const char meg_ini[] =
    "; dtsim reproduce megatron: Megatron-LM (Shoeybi et al. 2019) Table 1, weak scaling on DGX-2H.\n"
    "; Each run sets the model's shape (tensor.hidden, heads, layers), tensor.ranks (MP),\n"
    "; tensor.data_parallel (DP) and platform.hosts = MP x DP. Timing only, one step.\n"
    "[run]\n"
    "algorithm = tensor\n"
    "[platform]\n"
    "preset = dgx2h            ; 16 V100 (125e12 flop/s) per node, NVSwitch, 8 x 100 Gb/s IB per node\n"
    "hosts = 1                 ; set per run: MP x DP\n"
    "[model]\n"
    "numerics = off            ; timing only: flops from shapes, messages carry their size\n"
    "dtype = fp16              ; 2 bytes per element on the wire\n"
    "efficiency = " MEG_EFFICIENCY "          ; 39 / 125: the 1.2B single-GPU point, nothing else\n"
    "[tensor]\n"
    "ranks = 1                 ; set per run: MP\n"
    "data_parallel = 1         ; set per run: DP\n"
    "hidden = 1536             ; set per run\n"
    "heads = 16                ; set per run\n"
    "layers = 40               ; set per run\n"
    "seq = 1024\n"
    "microbatch = 8            ; per model-parallel group (global batch 8 x DP)\n"
    "microbatches = 1\n"
    "steps = 1\n"
    "sequence_parallel = off   ; Megatron-LM 2019 had none\n"
    "async_grad_allreduce = on\n"
    "collective = ring\n";

/* Table 1 (hidden, heads, layers, MP) and sec. 5.1 / Fig. 5's weak-scaling efficiencies. */
static const struct {
  long hidden, heads, layers, mp;
  double paper_mp, paper_dp; /* % of the 1-GPU rate per GPU, MP only and MP + 64-way DP */
} meg_models[] = {{1536, 16, 40, 1, 100, 96}, {1920, 20, 54, 2, 95, 83}, {2304, 24, 64, 4, 82, 79},
                  {3072, 32, 72, 8, 77, 74}};
#define N_MODELS (sizeof(meg_models) / sizeof(meg_models[0]))

typedef struct meg_run {
  size_t model;
  long dp;
  double params_b, tflops, eff, step_s, dp_s, dp_elems;
} meg_run;

/* Megatron-LM's parameter count: 12 L h^2 (1 + 13/(12h) + (V + s)/(12 L h)) (PTD-P eq. 2's
 * layer and embedding terms), V = 51,200 (the padded vocabulary), s = 1024 positions. */
static double params_b(long h, long L)
{
  double hh = (double)h, ll = (double)L;
  return 12 * ll * hh * hh * (1 + 13 / (12 * hh) + (MEG_VOCAB + MEG_SEQ) / (12 * ll * hh)) / 1e9;
}

static size_t meg_grid(int quick, meg_run *runs, reproduce_job *jobs, const char *work)
{
  size_t n = 0;
  for (int with_dp = 0; with_dp < (quick ? 1 : 2); with_dp++)
    for (size_t m = 0; m < N_MODELS; m++) {
      meg_run *r = &runs[n];
      *r = (meg_run){m, with_dp ? MEG_DP : 1, params_b(meg_models[m].hidden, meg_models[m].layers), 0, 0, 0, 0, 0};
      reproduce_job *j = &jobs[n];
      long gpus = meg_models[m].mp * r->dp;
      snprintf(j->label, sizeof(j->label), "%.1fB on %ld GPUs (MP %ld, DP %ld)", r->params_b, gpus, meg_models[m].mp,
               r->dp);
      snprintf(j->sets[0], sizeof(j->sets[0]), "tensor.hidden=%ld", meg_models[m].hidden);
      snprintf(j->sets[1], sizeof(j->sets[1]), "tensor.heads=%ld", meg_models[m].heads);
      snprintf(j->sets[2], sizeof(j->sets[2]), "tensor.layers=%ld", meg_models[m].layers);
      snprintf(j->sets[3], sizeof(j->sets[3]), "tensor.ranks=%ld", meg_models[m].mp);
      snprintf(j->sets[4], sizeof(j->sets[4]), "tensor.data_parallel=%ld", r->dp);
      snprintf(j->sets[5], sizeof(j->sets[5]), "platform.hosts=%ld", gpus);
      j->n_sets = 6;
      snprintf(j->dir, sizeof(j->dir), "%s/mp%ld-dp%ld", work, meg_models[m].mp, r->dp);
      n++;
    }
  return n;
}

static int meg_read(meg_run *r, const reproduce_job *j, char *err, size_t len)
{
  char path[700];
  snprintf(path, sizeof(path), "%s/summary.json", j->dir);
  json_t *s = json_load_file(path, 0, NULL), *b = s ? json_object_get(s, "tensor") : NULL;
  if (b == NULL) {
    json_decref(s);
    snprintf(err, len, "%s: no tensor result", path);
    return -1;
  }
  r->tflops = json_number_value(json_object_get(b, "tflops_per_gpu"));
  r->step_s = json_number_value(json_object_get(b, "step_time_s"));
  r->dp_s = json_number_value(json_object_get(b, "dp_allreduce_s"));
  r->dp_elems = json_number_value(json_object_get(b, "dp_allreduce_elements"));
  json_decref(s);
  return 0;
}

static long gpus_of(const meg_run *r)
{
  return meg_models[r->model].mp * r->dp;
}

static double paper_of(const meg_run *r)
{
  return r->dp > 1 ? meg_models[r->model].paper_dp : meg_models[r->model].paper_mp;
}

static char *meg_csv(const meg_run *runs, size_t n)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fputs("params_b,gpus,mp,dp,tflops_per_gpu,efficiency\n", f);
  for (size_t k = 0; k < n; k++)
    fprintf(f, "%.4f,%ld,%ld,%ld,%.17g,%.17g\n", runs[k].params_b, gpus_of(&runs[k]), meg_models[runs[k].model].mp,
            runs[k].dp, runs[k].tflops, runs[k].eff);
  fclose(f);
  return text;
}

static const meg_run *find(const meg_run *runs, size_t n, long gpus)
{
  for (size_t k = 0; k < n; k++)
    if (gpus_of(&runs[k]) == gpus)
      return &runs[k];
  return NULL;
}

/* "met" or "missed" for a target (percent) and dtsim's efficiency at gpus. */
static void target_line(FILE *f, const meg_run *runs, size_t n, long gpus, double target)
{
  const meg_run *r = find(runs, n, gpus);
  if (r == NULL) {
    fprintf(f, "- %ld GPUs: not in this grid (`--quick`).\n", gpus);
    return;
  }
  double got = 100 * r->eff;
  fprintf(f, "- %ld GPUs: paper %.0f%%, dtsim %.1f%%, %+.1f points: **%s** (target %.0f%% +- 5 points).\n", gpus,
          target, got, got - target, fabs(got - target) <= 5 ? "met" : "missed", target);
}

static char *meg_readme(const meg_run *runs, size_t n, int quick)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fprintf(f,
          "# Megatron-LM weak scaling (Shoeybi et al. 2019, Table 1)\n\n"
          "Made by `dtsim reproduce megatron%s` from `megatron.ini` (one point by hand, from this folder:\n"
          "`dtsim run megatron.ini --set tensor.hidden=3072 --set tensor.heads=32 --set tensor.layers=72\n"
          "--set tensor.ranks=8 --set tensor.data_parallel=64 --set platform.hosts=512`). Each point is one\n"
          "simulation in its own process: one training step of the model's transformer layers, Megatron\n"
          "tensor parallelism over MP GPUs of one node (`algorithms/tensor.c`: 2 allreduces forward and\n"
          "2 backward per layer over NVSwitch), and with DP = 64 each GPU then allreduces its share of\n"
          "the layer gradients (ring, one bucket, fp16) with the GPUs of the same tensor rank in the\n"
          "other 63 groups, across InfiniBand.\n\n"
          "## Set-up\n\n"
          "- Platform: the `dgx2h` preset as it is: 16 V100 per node at 125e12 flop/s (fp16 tensor-core\n"
          "  peak), 150e9 B/s per GPU per direction into a non-blocking NVSwitch, 100e9 B/s per node per\n"
          "  direction of InfiniBand (8 x 100 Gb/s). GPU i is GPU i mod 16 of node i/16: an MP group\n"
          "  (MP consecutive GPUs) stays in one node, a DP group spans 32 or 64 nodes' worth of GPUs.\n"
          "- Models (Table 1): h/heads/layers 1536/16/40 (1.2B), 1920/20/54 (2.5B), 2304/24/64 (4.2B),\n"
          "  3072/32/72 (8.3B) on MP = 1, 2, 4, 8; sequence 1024, microbatch 8 per MP group, one\n"
          "  microbatch per step; with DP = 64 the global batch is 8 x 64 = 512 (Megatron-LM sec. 5).\n"
          "  `params_b` is Megatron's count 12Lh^2(1 + 13/(12h) + (V + s)/(12Lh)) with V = 51,200.\n"
          "- Timing only, fp16 on the wire. Compute is 3 x (24bsh^2 + 4bs^2h) flops per layer, cut\n"
          "  t ways, through SimGrid at the host's speed x `model.efficiency`; embeddings, logits, loss\n"
          "  and optimizer are not simulated (they are in neither numerator nor denominator).\n\n"
          "## Calibration: one number, at the single-GPU point\n\n"
          "`model.efficiency = " MEG_EFFICIENCY "` for every row. It is computed, not fitted: the 1-GPU run sends\n"
          "no message, so its step is exactly model_flops / (125e12 x efficiency) and its rate is\n"
          "125 x efficiency Tflop/s; Megatron-LM's 1.2B baseline sustains 39 Tflop/s, so efficiency =\n"
          "39 / 125 = 0.312 (the CSV's first row: %.4g Tflop/s). No other row was used to choose\n"
          "anything; `efficiency` in the CSV is a row's Tflop/s per GPU over the 1-GPU row's.\n\n"
          "## Paper vs dtsim\n\n"
          "| params | GPUs | MP | DP | dtsim Tflop/s per GPU | step (s) | of which DP allreduce (s) | dtsim "
          "efficiency | paper efficiency |\n|---|---|---|---|---|---|---|---|---|\n",
          quick ? " --quick" : "", runs[0].tflops);
  for (size_t k = 0; k < n; k++) {
    const meg_run *r = &runs[k];
    int low = paper_of(r) != 100 && paper_of(r) != 77 && paper_of(r) != 74;
    char dps[32] = "-";
    if (r->dp > 1)
      snprintf(dps, sizeof(dps), "%.4f", r->dp_s);
    fprintf(f, "| %.1fB | %ld | %ld | %ld | %.2f | %.4f | %s | %.1f%% | %.0f%%%s |\n", r->params_b, gpus_of(r),
            meg_models[r->model].mp, r->dp, r->tflops, r->step_s, dps, 100 * r->eff, paper_of(r),
            low ? " (Fig. 5, low confidence)" : " (text)");
  }
  fputs("\nThe paper's 77% (8 GPUs, MP) and 74% (512 GPUs, MP + DP) are in its text (sec. 5.1); the\n"
        "middle values are read off Fig. 5 (REFERENCES 2 marks them low confidence).\n\n"
        "## Targets\n\n",
        f);
  target_line(f, runs, n, 8, 77);
  target_line(f, runs, n, 512, 74);
  const meg_run *r8 = find(runs, n, 8), *r512 = find(runs, n, 512);
  fputs("\n## Why\n\n", f);
  if (r8)
    fprintf(f,
            "- **Model parallelism is too cheap in dtsim** (%.1f%% at 8 GPUs against 77%%). With one\n"
            "  efficiency for every GEMM, cutting a layer t ways costs nothing but the four allreduces of\n"
            "  b x s x h fp16 elements per layer, which on a 150e9 B/s NVSwitch ring take a few percent\n"
            "  of the step, and Megatron's asynchronous input-gradient allreduce hides half of them.\n"
            "  What the real 8-GPU run also pays is not modelled: GEMMs cut 8 ways (h x 4h/8) run further\n"
            "  from peak than whole ones, kernel-launch and NCCL per-call latency, memory-bound\n"
            "  elementwise kernels (GeLU, dropout, LayerNorm, softmax) that do not shrink with t the way\n"
            "  the flops count says, and the embedding and logits (vocabulary-parallel, with their own\n"
            "  allreduces). The same shortfall shows in strong scaling (repository README, tensor\n"
            "  section). Tuning `efficiency` per row would hide it, so it is not done.\n",
            100 * r8->eff);
  if (r512 && r8)
    fprintf(f,
            "- **The data-parallel allreduce is what brings 512 GPUs down**: %.3f s of a %.3f s step (%.0f%%):\n"
            "  each GPU allreduces %.2f GB (fp16, its 1/8 of the 8.3B layers) over a ring of 64 GPUs in 32\n"
            "  nodes (two per node), after backward with no overlap; the 8 rings of a node (one per tensor\n"
            "  rank) each cross its 100e9 B/s InfiniBand once per direction, 8 x 2 x 63/64 x 2.04 GB =\n"
            "  32 GB per node, 0.32 s. Megatron-LM\n"
            "  loses only 77 -> 74%% to it; dtsim loses %.1f -> %.1f%%. Landing near 74%% at 512 is\n"
            "  therefore two errors of opposite sign (model parallelism too cheap, the un-overlapped\n"
            "  one-bucket gradient allreduce probably too dear), not a validated data-parallel model:\n"
            "  Megatron's DDP overlaps part of the allreduce with backward, which `tensor` does not model.\n",
            r512->dp_s, r512->step_s, 100 * r512->dp_s / r512->step_s,
            r512->dp_elems * 2 / 1e9, 100 * r8->eff,
            100 * r512->eff);
  fputs("\n## Files\n\n"
        "`megatron.csv`: `params_b,gpus,mp,dp,tflops_per_gpu,efficiency` (efficiency = tflops_per_gpu /\n"
        "the 1-GPU row's). `megatron.png`: efficiency against GPUs, the paper's bars next to dtsim's.\n"
        "`--quick` runs the four MP rows (1 to 8 GPUs), which are the same runs as the full grid's, so\n"
        "`dtsim reproduce megatron --quick --check` compares them with this CSV.\n",
        f);
  fclose(f);
  return text;
}

static int meg_plot(const char *dir, const meg_run *runs, size_t n, char *err, size_t len)
{
  char *script = NULL;
  size_t slen = 0;
  FILE *f = open_memstream(&script, &slen);
  xbt_assert(f, "open_memstream failed");
  fprintf(f,
          "set terminal pngcairo size 1100,600\nset output '%s/.megatron.png.tmp'\n"
          "$data << EOD\n",
          dir);
  for (size_t k = 0; k < n; k++)
    fprintf(f, "\"%ld\\n%.1fB\\nMP %ld DP %ld\" %.4f %.4f\n", gpus_of(&runs[k]), runs[k].params_b,
            meg_models[runs[k].model].mp, runs[k].dp, paper_of(&runs[k]), 100 * runs[k].eff);
  fputs("EOD\n"
        "set title 'Megatron-LM weak scaling on DGX-2H: efficiency per GPU vs the 1-GPU 39 Tflop/s'\n"
        "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
        "set boxwidth 0.9\nset yrange [0:110]\nset ylabel 'efficiency (% of the 1-GPU rate per GPU)'\n"
        "set bmargin 7\nset xlabel 'GPUs (model, MP x DP)' offset 0,-1.5\nset key top right\nset grid ytics\n"
        "plot $data using 2:xtic(1) title 'Megatron-LM (paper)' lc rgb '#4477aa', "
        "'' using 3 title 'dtsim' lc rgb '#ee6677'\n",
        f);
  fclose(f);
  int rc = reproduce_plot(dir, "megatron", script, err, len);
  free(script); /* open_memstream's */
  return rc;
}

int reproduce_megatron(const reproduce_opts *o, char *err, size_t len)
{
  if (output_write_file(o->work, "megatron.ini", meg_ini, strlen(meg_ini), err, len) != 0)
    return 2;
  meg_run runs[2 * N_MODELS];
  reproduce_job *jobs = xbt_malloc0(2 * N_MODELS * sizeof(reproduce_job));
  size_t n = meg_grid(o->quick, runs, jobs, o->work);
  int rc = reproduce_run_jobs(o, "megatron.ini", jobs, n, err, len) == 0 ? 0 : 2;
  for (size_t k = 0; k < n && rc == 0; k++)
    if (meg_read(&runs[k], &jobs[k], err, len) != 0)
      rc = 2;
  for (size_t k = 0; k < n && rc == 0; k++)
    runs[k].eff = runs[k].tflops / runs[0].tflops; /* runs[0]: 1.2B on 1 GPU */
  char *csv = rc == 0 ? meg_csv(runs, n) : NULL;
  if (rc == 0 && o->check) {
    char committed[600];
    snprintf(committed, sizeof(committed), "%s/megatron.csv", o->out);
    rc = reproduce_check(csv, committed, o->quick, 0xFu, err, len); /* key: params_b,gpus,mp,dp */
    if (rc == 0 && !o->quiet)
      fprintf(stderr, "dtsim reproduce: megatron matches %s\n", committed);
  } else if (rc == 0) {
    char *readme = meg_readme(runs, n, o->quick);
    const char *files[] = {"megatron.ini", meg_ini, "megatron.csv", csv, "README.md", readme};
    if (reproduce_write(o->out, files, 3, err, len) != 0 || meg_plot(o->out, runs, n, err, len) != 0)
      rc = 2;
    free(readme); /* open_memstream's */
    if (rc == 0 && !o->quiet)
      fprintf(stderr, "dtsim reproduce: wrote %s/megatron.csv, megatron.png, megatron.ini, README.md\n", o->out);
  }
  for (size_t k = 0; k < n; k++)
    reproduce_remove_run(&jobs[k]);
  char path[600];
  snprintf(path, sizeof(path), "%s/megatron.ini", o->work);
  unlink(path);
  free(csv); /* open_memstream's */
  xbt_free(jobs);
  return rc;
}

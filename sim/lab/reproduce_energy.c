/* reproduce_energy.c - `dtsim reproduce energy`: the energy and emissions of two published
 * training runs from their simulated throughput: GPT-3 175B on V100s as Patterson et al. 2021
 * account it (arXiv 2104.10350, Table 4) and the four Llama 2 models on A100s (Touvron et al.
 * 2023, arXiv 2307.09288, Table 2). Each configuration runs one step, timing only, with SimGrid's
 * energy plugins (sim/energy.c); the step's time and facility energy are scaled to the paper's
 * tokens. No new calibration: the V100 runs take Megatron-LM's and the A100 runs PTD-P's
 * model.efficiency as they are. Each assumption that sets the energy is then switched in one
 * run of its own (the robustness rows). One simulation per process. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xbt/asserts.h>

#include "sim/lab/reproduce.h"
#include "sim/lab/reproduce_frame.h"
#include "sim/lab/template.h"

/* GPT-3 (Brown et al. 2020, Table 2.1: 96 layers of 12,288, 96 heads, 2,048-token context, a
 * batch of 3.2M tokens, 300B tokens) on dgx2h, the V100 preset, with the power figures of a V100
 * SXM2 at its 300 W limit (NVIDIA's V100 datasheet; the paper's V100s) in NVIDIA's DGX-1 (8 V100
 * SXM2, 3,500 W at most: 437.5 W per GPU flat out, the GPU included), its lowest state 200 W
 * (ASSUMPTION: a 100-W step below the limit); Patterson et al.'s PUE and carbon intensity. */
#define GPT_POWER "300,200,437.5"
#define GPT_PUE "1.1"
#define GPT_CI "429"
#define GPT_TOKENS 300e9
#define GPT_SEQ 2048
#define GPT_BATCH 1560 /* sequences: 3,194,880 tokens, GPT-3's "3.2M" */
/* Megatron-LM's layout on DGX-2H: t = 16 (a node), p = 8 (the fewest stages dividing 96 layers
 * whose memory estimate fits a V100's 32 GB), d = 78 replicas of m = 20 microbatches of one. */
#define GPT_T 16
#define GPT_P 8
#define GPT_D 78
#define GPT_M 20
_Static_assert(GPT_D * GPT_M == GPT_BATCH, "GPT-3's batch is d x m sequences");
#define EN_STR(x) #x
#define EN_XSTR(x) EN_STR(x)

/* Llama 2 on selene, the A100 preset, with the power boundary of the paper's Table 2: the GPU
 * board alone (NVIDIA's A100 80GB SXM: 400 W; the 34B's production cluster capped them at 350
 * W), no share of the node and no fabric, PUE 1 (the table's power is "adjusted for power usage
 * efficiency"), and the carbon intensity the table implies: its tCO2e over GPU-hours x power,
 * 423.4 to 423.5 g per kWh in every row. */
#define LLAMA_POWER "400,100,400"
#define LLAMA34_POWER "350,100,350"
#define LLAMA_CI "423.5"
#define LLAMA_TOKENS 2e12
#define LLAMA_SEQ 4096
#define LLAMA_BATCH 1024 /* 4,194,304 tokens: the paper's "4M" */
#define LLAMA_D 32       /* PTD-P Table 1's GPUs / (t p) in each row used */

static const char gpt_ini[] =
    "; dtsim reproduce energy: GPT-3 175B (Brown et al. 2020) on 9,984 V100s, as Patterson et al. 2021 (Table 4)\n"
    "; account its energy: one step, timing only, with SimGrid's energy plugins. A robustness run switches one key.\n"
    "[run]\n"
    "algorithm = pipeline\n"
    "max_steps = 1\n"
    "collectives = rounds       ; each collective one bulk-synchronous round\n"
    "[platform]\n"
    "preset = dgx2h             ; 16 V100 (125e12 flop/s fp16, 32 GB) per node, NVSwitch, 8 x 100 Gb/s IB per node\n"
    "power = " GPT_POWER "     ; V100 SXM2 at its 300 W limit (lowest state 200 W), in a DGX-1's 3,500 W per 8 GPUs\n"
    "pue = " GPT_PUE "                 ; Patterson et al. Table 4\n"
    "carbon_intensity = " GPT_CI "     ; Patterson et al. Table 4: 0.429 kg CO2e per kWh\n"
    "[model]\n"
    "numerics = off             ; timing only\n"
    "dtype = fp16\n"
    "kernel_model = shapes      ; GEMMs timed by shape, 7 us per kernel\n"
    "efficiency = " REPRODUCE_MEGATRON_EFFICIENCY "      ; Megatron-LM's V100 calibration (results/megatron/README.md), not fitted again\n"
    "[pipeline]\n"
    "model = transformer\n"
    "stages = " EN_XSTR(GPT_P) "                 ; the fewest stages whose estimate fits a V100's 32 GB\n"
    "microbatches = " EN_XSTR(GPT_M) "          ; 1,560 sequences over 78 replicas\n"
    "schedule = 1f1b\n"
    "scatter_gather = on\n"
    "mirror_replicas = on       ; replicas 1..77 mirror replica 0 (exact, checked); energy: each its twin's\n"
    "optimizer = adam           ; the memory estimate counts Adam's state\n"
    "[tensor]\n"
    "ranks = " EN_XSTR(GPT_T) "                 ; one DGX-2H node\n"
    "data_parallel = " EN_XSTR(GPT_D) "         ; 8 x 16 x 78 = 9,984 GPUs\n"
    "hidden = 12288\n"
    "heads = 96\n"
    "layers = 96\n"
    "seq = " EN_XSTR(GPT_SEQ) "\n"
    "microbatch = 1\n"
    "vocab = 51200              ; GPT-2's 50,257 padded\n"
    "recompute = on             ; every layer's forward again before its backward\n"
    "async_grad_allreduce = off ; Megatron-LM 2019's set-up, as its calibration\n"
    "collective = ring\n"
    "fuse_layers = on\n"
    "kernels = unfused          ; Megatron-LM 2019's elementwise kernels at 900 GB/s\n";

static const char llama_ini[] =
    "; dtsim reproduce energy: Llama 2 (Touvron et al. 2023, Table 2) on A100s, one step, timing only, with\n"
    "; SimGrid's energy plugins. Each run sets the model's shape and layout; a robustness run switches one key.\n"
    "[run]\n"
    "algorithm = pipeline\n"
    "max_steps = 1\n"
    "collectives = rounds       ; each collective one bulk-synchronous round\n"
    "[platform]\n"
    "preset = selene            ; 8 A100 80GB (312e12 flop/s bf16) per node, NVSwitch, 8 x 200 Gb/s HDR IB per node\n"
    "power = " LLAMA_POWER "       ; the A100's 400 W board alone, as Table 2 counts it (34B: 350,100,350)\n"
    "carbon_intensity = " LLAMA_CI " ; Table 2's tCO2e over its GPU-hours x power\n"
    "[model]\n"
    "numerics = off             ; timing only\n"
    "dtype = bf16\n"
    "kernel_model = shapes      ; GEMMs timed by shape, 7 us per kernel\n"
    "efficiency = " REPRODUCE_PTDP_EFFICIENCY "      ; PTD-P Table 1's calibration (results/pipeline/README.md), not fitted again\n"
    "[pipeline]\n"
    "model = transformer\n"
    "stages = 1                 ; set per run: PTD-P Table 1's p\n"
    "microbatches = 4           ; set per run: 1,024 sequences over 32 replicas\n"
    "schedule = 1f1b            ; set per run: interleaved where PTD-P's row interleaves\n"
    "chunks = 1\n"
    "scatter_gather = on\n"
    "mirror_replicas = on       ; replicas 1..31 mirror replica 0 (exact, checked); energy: each its twin's\n"
    "optimizer = adam\n"
    "[tensor]\n"
    "ranks = 4                  ; set per run: PTD-P Table 1's t\n"
    "data_parallel = " EN_XSTR(LLAMA_D) "         ; PTD-P Table 1's GPUs / (t p), 32 in each row used\n"
    "hidden = 4096              ; set per run\n"
    "heads = 32                 ; set per run\n"
    "layers = 32                ; set per run\n"
    "seq = " EN_XSTR(LLAMA_SEQ) "                 ; Llama 2's context\n"
    "microbatch = 8             ; set per run: PTD-P's microbatch in tokens\n"
    "vocab = 32000\n"
    "recompute = off            ; Llama keeps the linear layers' outputs instead of recomputing them\n"
    "async_grad_allreduce = on\n"
    "collective = ring\n"
    "fuse_layers = on\n"
    "kernels = fused\n";

enum { EN_GPT, EN_LLAMA };

/* One published run: its shape and layout, and the paper's figures. */
typedef struct en_model {
  const char *name, *label;
  long hidden, heads, layers, t, p, b, m, chunks; /* b: sequences per microbatch; m per replica */
  const char *power;                             /* platform.power when not the ini's */
  double paper_gpu_hours, paper_power_w, paper_co2e_t;
  double paper_energy_mwh;                       /* 0: GPU-hours x power (Table 2 prints no MWh) */
  int quick;
} en_model;

/* Patterson et al. Table 4: 10,000 processors for 14.8 days at 330 W each, 1,287 MWh, 552 t. */
static const en_model en_gpt = {"gpt3-175b", "GPT-3 175B", 12288, 96, 96, GPT_T, GPT_P, 1, GPT_M, 1, NULL,
                                10000 * 14.8 * 24, 330, 552, 1287, 1};
/* Table 2 of Llama 2 (GPU-hours, W, tCO2e), on the layout of PTD-P Table 1's row nearest in size
 * (7.5B, 18.4B, 39.1B, 76.1B: t, p, GPUs, and its microbatch in tokens, b x 2,048 there). */
static const en_model en_llamas[] = {
    {"llama2-7b", "Llama 2 7B", 4096, 32, 32, 4, 1, 8, 4, 1, NULL, 184320, 400, 31.22, 0, 1},
    {"llama2-13b", "Llama 2 13B", 5120, 40, 40, 8, 1, 4, 8, 1, NULL, 368640, 400, 62.44, 0, 0},
    {"llama2-34b", "Llama 2 34B", 8192, 64, 48, 8, 2, 2, 16, 1, "platform.power=" LLAMA34_POWER, 1038336, 350,
     153.90, 0, 0},
    {"llama2-70b", "Llama 2 70B", 8192, 64, 80, 8, 4, 1, 32, 4, NULL, 1720320, 400, 291.42, 0, 0},
};
#define EN_LLAMAS (sizeof en_llamas / sizeof en_llamas[0])
#define EN_ROBUST (&en_llamas[EN_LLAMAS - 1]) /* the Llama model whose assumptions are switched */

/* One assumption switched (robustness), or none: what it is for each anchor, and its --sets. */
typedef struct en_variant {
  const char *name, *what[2];
  const char *sets[2][3];
} en_variant;

static const en_variant en_variants[] = {
    {"committed", {"as above", "as above"}, {{NULL}, {NULL}}},
    {"pue",
     {"PUE 1 (no facility overhead) instead of 1.10", "PUE 1.1 on top of the table's power"},
     {{"platform.pue=1"}, {"platform.pue=1.1"}}},
    {"idle",
     {"a GPU not computing draws half its limit, 150 W (a tenth committed)",
      "a GPU not computing draws half its limit, 200 W (a tenth committed)"},
     {{"platform.power=" GPT_POWER ",0,150"}, {"platform.power=400,300,400,0,200"}}},
    {"node",
     {"the GPU alone, no share of the node (DGX-1's 137.5 W per GPU committed)",
      "the whole DGX A100, 6.5 kW per 8 GPUs (the board alone committed)"},
     {{"platform.power=300,200,300"}, {"platform.power=400,100,812.5"}}},
    {"efficiency",
     {"PTD-P's A100 calibration, " REPRODUCE_PTDP_EFFICIENCY, "Megatron-LM's V100 calibration, "
      REPRODUCE_MEGATRON_EFFICIENCY},
     {{"model.efficiency=" REPRODUCE_PTDP_EFFICIENCY}, {"model.efficiency=" REPRODUCE_MEGATRON_EFFICIENCY}}},
    {"recompute",
     {"no activation recomputation", "every layer recomputed"},
     {{"tensor.recompute=off"}, {"tensor.recompute=on"}}},
    {"power_cap",
     {"GPUs capped at 200 W", "GPUs capped at 300 W"},
     {{"platform.power_cap=200"}, {"platform.power_cap=300"}}},
    {"layout",
     {"6 stages of 16 x 104 (the same 9,984 GPUs)", "twice the GPUs: 64 replicas of 16 microbatches"},
     {{"pipeline.stages=6", "tensor.data_parallel=104", "pipeline.microbatches=15"},
      {"tensor.data_parallel=64", "pipeline.microbatches=16"}}},
};
#define EN_VARIANTS (sizeof en_variants / sizeof en_variants[0])
#define EN_MAX_RUNS (EN_VARIANTS + EN_LLAMAS)

typedef struct en_run {
  int anchor;
  const en_model *m;
  const en_variant *v;
  long gpus, d, b, mb; /* the run's GPUs, replicas, sequences per microbatch, microbatches per replica */
  int has_energy;      /* its summary.json has an energy block */
  double step_s, tflops, power_w, facility_j, co2e_kg, memory_gb;
  double steps, gpu_hours, days, energy_mwh, co2e_t;
} en_run;

static const char *const en_anchor_name[] = {"patterson", "llama2"};

static double en_paper_mwh(const en_model *m)
{
  return m->paper_energy_mwh > 0 ? m->paper_energy_mwh : m->paper_gpu_hours * m->paper_power_w / 1e6;
}

/* Appends --set text (with "%ld" in it: formatted with v) to job jb. */
static void en_add_set(reproduce_job *jb, const char *text, long v)
{
  size_t cap = sizeof jb->sets / sizeof jb->sets[0];
  xbt_assert((size_t)jb->n_sets < cap, "a run takes %zu --sets at most", cap);
  const char *at = strstr(text, "%ld");
  if (at)
    snprintf(jb->sets[jb->n_sets], sizeof jb->sets[0], "%.*s%ld%s", (int)(at - text), text, v, at + 3);
  else
    snprintf(jb->sets[jb->n_sets], sizeof jb->sets[0], "%s", text);
  jb->n_sets++;
}

/* Variant va's --sets for anchor g as code spans into f: "`a`, `b`". */
static void en_print_sets(FILE *f, const en_variant *va, int g)
{
  for (int k = 0; k < 3 && va->sets[g][k]; k++)
    fprintf(f, "%s`%s`", k ? ", " : "", va->sets[g][k]);
}

/* Run n of the grid: model m with variant v, its --sets and folder. */
static void en_job(en_run *r, reproduce_job *jb, int anchor, const en_model *m, const en_variant *v,
                   const char *work)
{
  memset(jb, 0, sizeof *jb);
  *r = (en_run){.anchor = anchor, .m = m, .v = v};
  if (anchor == EN_LLAMA) {
    static const char *const keys[] = {"tensor.ranks=%ld", "pipeline.stages=%ld", "tensor.hidden=%ld",
                                       "tensor.heads=%ld", "tensor.layers=%ld", "tensor.microbatch=%ld",
                                       "pipeline.microbatches=%ld", "pipeline.chunks=%ld"};
    long vals[] = {m->t, m->p, m->hidden, m->heads, m->layers, m->b, m->m, m->chunks};
    for (size_t k = 0; k < sizeof vals / sizeof *vals; k++)
      en_add_set(jb, keys[k], vals[k]);
    if (m->chunks > 1)
      en_add_set(jb, "pipeline.schedule=interleaved", 0);
    if (m->power)
      en_add_set(jb, m->power, 0);
  }
  for (int k = 0; k < 3 && v->sets[anchor][k]; k++)
    en_add_set(jb, v->sets[anchor][k], 0);
  snprintf(jb->label, sizeof jb->label, "%s%s%s", m->label, v == en_variants ? "" : ", ",
           v == en_variants ? "" : v->name);
  snprintf(jb->dir, sizeof jb->dir, "%s/%s-%s", work, m->name, v->name);
}

static size_t en_gpt_grid(int quick, void *rv, reproduce_job *jobs, const char *work)
{
  en_run *runs = rv;
  size_t n = 0;
  for (size_t v = 0; v < (quick ? 1 : EN_VARIANTS); v++, n++)
    en_job(&runs[n], &jobs[n], EN_GPT, &en_gpt, &en_variants[v], work);
  return n;
}

static size_t en_llama_grid(int quick, void *rv, reproduce_job *jobs, const char *work)
{
  en_run *runs = rv;
  size_t n = 0;
  for (size_t i = 0; i < EN_LLAMAS; i++)
    if (!quick || en_llamas[i].quick)
      en_job(&runs[n], &jobs[n], EN_LLAMA, &en_llamas[i], &en_variants[0], work), n++;
  for (size_t v = 1; !quick && v < EN_VARIANTS; v++, n++)
    en_job(&runs[n], &jobs[n], EN_LLAMA, EN_ROBUST, &en_variants[v], work);
  return n;
}

/* What en_read takes from a finished run beyond its step: the layout it had (the robustness
 * rows' included), its memory estimate and its energy block (has_energy 0 without one). */
static void en_read_more(void *rv, const json_t *s, const json_t *b)
{
  en_run *r = rv;
  const json_t *e = json_object_get(s, "energy");
  r->has_energy = e != NULL;
  r->gpus = (long)reproduce_number(b, "gpus");
  r->d = (long)reproduce_number(b, "data_parallel");
  r->mb = (long)reproduce_number(b, "microbatches");
  r->b = (long)reproduce_number(b, "microbatch");
  r->memory_gb = reproduce_number(b, "memory_per_gpu.total_bytes") / 1e9;
  r->power_w = reproduce_number(e, "avg_power_w.per_device");
  r->facility_j = reproduce_number(e, "joules.facility");
  r->co2e_kg = reproduce_number(e, "co2e_kg");
}

/* The run's step and energy, scaled to the paper's tokens: steps = tokens / tokens per step. */
static int en_read(void *rv, const reproduce_job *j, char *err, size_t len)
{
  en_run *r = rv;
  if (reproduce_pipeline_figures(j, &r->tflops, &r->step_s, en_read_more, r, err, len) != 0)
    return -1;
  if (!r->has_energy) {
    snprintf(err, len, "%s: no energy block (the platform carries no power figures)", j->dir);
    return -1;
  }
  long seqs = r->d * r->mb * r->b;
  xbt_assert(seqs == (r->anchor == EN_GPT ? GPT_BATCH : LLAMA_BATCH), "%s: a batch of %ld sequences", j->dir, seqs);
  int gpt = r->anchor == EN_GPT;
  double tokens = gpt ? GPT_TOKENS : LLAMA_TOKENS, per_step = gpt ? GPT_BATCH * GPT_SEQ : LLAMA_BATCH * LLAMA_SEQ;
  r->steps = tokens / per_step;
  r->gpu_hours = (double)r->gpus * r->step_s * r->steps / 3600;
  r->days = r->step_s * r->steps / 86400;
  r->energy_mwh = r->facility_j * r->steps / 3.6e9;
  r->co2e_t = r->co2e_kg * r->steps / 1e3;
  return 0;
}

static double en_error(const en_run *r) { return r->energy_mwh / en_paper_mwh(r->m) - 1; }

static char *en_csv(const reproduce_data *d)
{
  char *text;
  size_t len;
  FILE *f = reproduce_frame_stream(&text, &len);
  fputs("anchor,model,variant,gpus,t,p,d,microbatch,microbatches,step_s,tflops_per_gpu,memory_gb,steps,gpu_hours,"
        "days,power_per_gpu_w,energy_mwh,co2e_t,paper_gpu_hours,paper_power_w,paper_energy_mwh,paper_co2e_t,"
        "energy_error\n",
        f);
  for (int g = 0; g < 2; g++)
    for (size_t k = 0; k < d->n[g]; k++) {
      const en_run *r = &((const en_run *)d->runs[g])[k];
      const en_model *m = r->m;
      double v[] = {r->step_s, r->tflops, r->memory_gb, r->steps, r->gpu_hours, r->days, r->power_w, r->energy_mwh,
                    r->co2e_t, m->paper_gpu_hours, m->paper_power_w, en_paper_mwh(m), m->paper_co2e_t, en_error(r)};
      fprintf(f, "%s,%s,%s,%ld,%ld,%ld,%ld,%ld,%ld", en_anchor_name[r->anchor], m->name, r->v->name, r->gpus, m->t,
              r->gpus / (m->t * r->d), r->d, r->b, r->mb);
      for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        fprintf(f, ",%.17g", v[i]);
      fputc('\n', f);
    }
  fclose(f);
  return text;
}

/* The committed run of anchor g's model m, or NULL. */
static const en_run *en_find(const reproduce_data *d, int g, const en_model *m, const en_variant *v)
{
  for (size_t k = 0; k < d->n[g]; k++) {
    const en_run *r = &((const en_run *)d->runs[g])[k];
    if (r->m == m && r->v == v)
      return r;
  }
  return NULL;
}

/* The results table: one row per published run (the committed variant); the count within 20%. */
static void en_results(json_t *v, const reproduce_data *d)
{
  char *text;
  size_t len;
  FILE *f = reproduce_frame_stream(&text, &len);
  int in = 0, n = 0;
  for (int g = 0; g < 2; g++)
    for (size_t k = 0; k < d->n[g]; k++) {
      const en_run *r = &((const en_run *)d->runs[g])[k];
      if (r->v != en_variants)
        continue;
      const en_model *m = r->m;
      in += fabs(en_error(r)) <= 0.20, n++;
      fprintf(f, "| %s | %ld x %ld x %ld | %.2f | %.1f | %.0f | %.0f | %+.1f%% | %.1f | %.0f | %.0f | %.1f | %.1f | "
              "%+.1f%% | %.1f | %.2f |\n", m->label, r->gpus / (m->t * r->d), m->t, r->d, r->step_s, r->tflops,
              r->gpu_hours, m->paper_gpu_hours, 100 * (r->gpu_hours / m->paper_gpu_hours - 1), r->days, r->power_w,
              m->paper_power_w, r->energy_mwh, en_paper_mwh(m), 100 * en_error(r), r->co2e_t, m->paper_co2e_t);
    }
  template_set_stream(v, "results", f, &text);
  template_set(v, "within", "%d", in);
  template_set(v, "rows", "%d", n);
}

/* The robustness table (full grid): each variant's energy beside the committed run's, for the
 * GPT-3 and the Llama 2 model switched, and the assumption that moves each most. */
static void en_robust(json_t *v, const reproduce_data *d)
{
  char *text;
  size_t len;
  FILE *f = reproduce_frame_stream(&text, &len);
  const en_model *models[2] = {&en_gpt, EN_ROBUST};
  const en_run *base[2] = {en_find(d, EN_GPT, models[0], en_variants), en_find(d, EN_LLAMA, models[1], en_variants)};
  double most[2] = {0, 0};
  const char *most_name[2] = {"-", "-"};
  for (size_t i = 1; base[0] && base[1] && i < EN_VARIANTS; i++) {
    const en_variant *va = &en_variants[i];
    fprintf(f, "| `%s` |", va->name);
    for (int g = 0; g < 2; g++) {
      const en_run *r = en_find(d, g, models[g], va);
      double c = r ? r->energy_mwh / base[g]->energy_mwh - 1 : NAN;
      fprintf(f, " %s (", va->what[g]);
      en_print_sets(f, va, g);
      fprintf(f, ") | %.1f | %+.1f%% |", r ? r->energy_mwh : NAN, 100 * c);
      if (r && fabs(c) > fabs(most[g]))
        most[g] = c, most_name[g] = va->name;
    }
    fputc('\n', f);
  }
  template_set_stream(v, "robust", f, &text);
  for (int g = 0; g < 2; g++) {
    char key[32];
    snprintf(key, sizeof key, "most_%d", g);
    template_set(v, key, "%s", most_name[g]);
    snprintf(key, sizeof key, "most_%d_pct", g);
    template_set(v, key, "%+.0f%%", 100 * most[g]);
  }
}

/* The README's values: the assumptions' figures, the results, the robustness table. */
static int en_readme(json_t *v, const reproduce_data *d, char *err, size_t len)
{
  (void)err, (void)len;
  template_set(v, "gpt_power", "%s", GPT_POWER);
  template_set(v, "llama_power", "%s", LLAMA_POWER);
  template_set(v, "llama34_power", "%s", LLAMA34_POWER);
  template_set(v, "meg_eff", "%s", REPRODUCE_MEGATRON_EFFICIENCY);
  template_set(v, "ptdp_eff", "%s", REPRODUCE_PTDP_EFFICIENCY);
  template_set(v, "gpt_steps", "%.0f", GPT_TOKENS / (GPT_BATCH * GPT_SEQ));
  template_set(v, "llama_steps", "%.0f", LLAMA_TOKENS / (LLAMA_BATCH * LLAMA_SEQ));
  const en_run *g = en_find(d, EN_GPT, &en_gpt, en_variants);
  template_set(v, "gpt_memory", "%.1f", g ? g->memory_gb : NAN);
  const en_run *six = en_find(d, EN_GPT, &en_gpt, &en_variants[EN_VARIANTS - 1]);
  template_set(v, "six_memory", "%.1f", six ? six->memory_gb : NAN);
  en_results(v, d);
  en_robust(v, d);
  return 0;
}

/* energy.gp's values: the published runs' MWh (dtsim's and the paper's) and the robustness
 * rows' change, each anchor a column. */
static void en_plot(json_t *v, const char *plot, const reproduce_data *d)
{
  (void)plot;
  char *text;
  size_t len;
  FILE *f = reproduce_frame_stream(&text, &len);
  fputs("$runs << EOD\n", f);
  for (int g = 0; g < 2; g++)
    for (size_t k = 0; k < d->n[g]; k++) {
      const en_run *r = &((const en_run *)d->runs[g])[k];
      if (r->v == en_variants)
        fprintf(f, "\"%s\" %.6g %.6g\n", r->m->label, r->energy_mwh, en_paper_mwh(r->m));
    }
  fputs("EOD\n$robust << EOD\n", f);
  const en_run *b0 = en_find(d, EN_GPT, &en_gpt, en_variants), *b1 = en_find(d, EN_LLAMA, EN_ROBUST, en_variants);
  for (size_t i = 1; b0 && b1 && i < EN_VARIANTS; i++) {
    const en_run *r0 = en_find(d, EN_GPT, &en_gpt, &en_variants[i]), *r1 = en_find(d, EN_LLAMA, EN_ROBUST, &en_variants[i]);
    if (r0 && r1)
      fprintf(f, "\"%s\" %.4f %.4f\n", en_variants[i].name, 100 * (r0->energy_mwh / b0->energy_mwh - 1),
              100 * (r1->energy_mwh / b1->energy_mwh - 1));
  }
  fputs("EOD\n", f);
  reproduce_frame_set_whole(v, "blocks", f, &text);
  json_object_set_new(v, "robust_panel", json_boolean(b0 && b1 && en_find(d, EN_GPT, &en_gpt, &en_variants[1])));
}

const reproduction reproduce_energy = {
    .name = "energy",
    .grids = {{"gpt3-v100.ini", gpt_ini, sizeof(en_run), EN_VARIANTS, en_gpt_grid, en_read, NULL},
              {"llama2-a100.ini", llama_ini, sizeof(en_run), EN_MAX_RUNS, en_llama_grid, en_read, NULL}},
    .tables = {{"energy.csv", 0x7u, en_csv}}, /* key: anchor,model,variant */
    .readme = en_readme,
    .plots = {"energy"},
    .plot = en_plot,
};

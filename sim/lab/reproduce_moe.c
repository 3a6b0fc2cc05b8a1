/* reproduce_moe.c - `dtsim reproduce moe`: the MoE GPT of run.algorithm = moe on 8 selene GPUs
 * trained with the auxiliary load-balancing loss off and on (Switch Transformer, Fedus et al.
 * 2021, arXiv 2101.03961), at capacity factors 1.0, 1.25 and 2.0, top-1 and top-2 (GShard,
 * Lepikhin et al. 2020, arXiv 2006.16668): imbalance, dropped tokens, step time and held-out loss
 * against simulated training time, compared qualitatively with the two papers. One simulation per
 * process. */
#include <jansson.h>
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

/* The example of algorithms/doc/moe.md, with the experts' compute made to weigh by the one rule
 * the template states: the hosts compute at 1/1000 of the A100's rate (platform.speed_factor).
 * Each run sets moe.top_k, moe.capacity_factor and moe.aux_coef. */
#define MOE_SPEED "0.001"
#define MOE_AUX "0.01"
#define MOE_STEPS "100"
static const char moe_ini[] =
    "; dtsim reproduce moe: expert parallelism of the MoE GPT on 8 selene GPUs, the auxiliary loss off and on.\n"
    "; Each run sets moe.top_k, moe.capacity_factor and moe.aux_coef.\n"
    "[run]\n"
    "algorithm = moe\n"
    "max_steps = " MOE_STEPS "\n"
    "eval_every = 0.0015         ; simulated s: about 20 held-out evaluations per run\n"
    "[platform]\n"
    "preset = selene             ; 8 A100 per node, NVSwitch\n"
    "speed_factor = " MOE_SPEED "        ; compute at 1/1000 of the A100's rate, so that the experts weigh (README)\n"
    "[model]\n"
    "numerics = on               ; the router is trained: the traffic is its routing\n"
    "dtype = bf16                ; 2 bytes per element on the wire\n"
    "efficiency = 0.5\n"
    "[data]\n"
    "train = 4096\n"
    "test = 32\n"
    "[moe]\n"
    "ranks = 8                   ; one node, one expert per GPU\n"
    "experts = 8\n"
    "hidden = 32\n"
    "heads = 4\n"
    "layers = 2\n"
    "seq = 16\n"
    "vocab = 64\n"
    "batch = 8                   ; sequences per GPU and step: each GPU's routing group is 128 tokens\n"
    "lr = 0.01\n"
    "optimizer = adam\n";

static const int moe_topk[] = {1, 2};
static const char *const moe_cap[] = {"1.0", "1.25", "2.0"};
static const char *const moe_aux[] = {"0", MOE_AUX};
#define MOE_RUNS 12

typedef struct moe_run {
  int top_k;
  const char *cap, *aux;
  double imbalance, kept_imbalance, dropped_end, dropped_run, step_s, alltoall_s, bytes_per_step, final_loss;
  reproduce_progress ev; /* the held-out evaluations of progress.csv */
} moe_run;

/* --quick: top-1 at capacity 1.0 and 2.0, the auxiliary loss off and on. */
static size_t moe_grid(int quick, void *rv, reproduce_job *jobs, const char *work)
{
  moe_run *runs = rv;
  size_t n = 0;
  for (size_t k = 0; k < 2; k++)
    for (size_t c = 0; c < 3; c++)
      for (size_t a = 0; a < 2; a++) {
        if (quick && (k > 0 || c == 1))
          continue;
        runs[n] = (moe_run){.top_k = moe_topk[k], .cap = moe_cap[c], .aux = moe_aux[a]};
        reproduce_job *jb = &jobs[n];
        memset(jb, 0, sizeof(*jb));
        snprintf(jb->label, sizeof(jb->label), "top-%d, capacity %s, aux loss %s", moe_topk[k], moe_cap[c], moe_aux[a]);
        snprintf(jb->sets[0], sizeof(jb->sets[0]), "moe.top_k=%d", moe_topk[k]);
        snprintf(jb->sets[1], sizeof(jb->sets[1]), "moe.capacity_factor=%s", moe_cap[c]);
        snprintf(jb->sets[2], sizeof(jb->sets[2]), "moe.aux_coef=%s", moe_aux[a]);
        jb->n_sets = 3;
        snprintf(jb->dir, sizeof(jb->dir), "%s/top%d-cap%s-aux%s", work, moe_topk[k], moe_cap[c], moe_aux[a]);
        n++;
      }
  return n;
}

static int moe_read(void *rv, const reproduce_job *j, char *err, size_t len)
{
  moe_run *r = rv;
  json_t *s, *b = reproduce_result_block(j, "moe", &s, err, len);
  if (b == NULL)
    return -1;
  r->imbalance = reproduce_number(b, "imbalance_end");
  r->kept_imbalance = reproduce_number(b, "kept_imbalance_end");
  r->dropped_end = reproduce_number(b, "dropped_fraction_end");
  r->dropped_run = reproduce_number(b, "dropped_fraction");
  r->alltoall_s = reproduce_number(b, "alltoall_s_per_step");
  r->step_s = reproduce_number(s, "performance.step_time_s");
  r->final_loss = reproduce_number(s, "final_loss");
  double bytes = 0; /* the payload both ways between every pair, over the run: each pair once */
  json_t *m = json_object_get(b, "alltoall_bytes_per_pair");
  for (size_t q = 0; q < json_array_size(m); q++)
    for (size_t p = 0; p < json_array_size(json_array_get(m, q)); p++)
      bytes += json_number_value(json_array_get(json_array_get(m, q), p));
  r->bytes_per_step = bytes / (double)json_integer_value(json_object_get(b, "steps"));
  json_decref(s);
  return reproduce_read_progress(j, &r->ev, err, len);
}

static void moe_free_run(void *rv)
{
  moe_run *r = rv;
  reproduce_progress_free(&r->ev);
}

static char *moe_csv(const reproduce_data *d)
{
  const moe_run *runs = d->runs[0];
  size_t n = d->n[0];
  char *text = NULL;
  size_t len = 0;
  FILE *f = reproduce_frame_stream(&text, &len);
  fputs("top_k,capacity_factor,aux_loss,imbalance,kept_imbalance,dropped_fraction,dropped_fraction_run,step_s,"
        "alltoall_s_per_step,alltoall_bytes_per_step,final_loss\n",
        f);
  for (size_t k = 0; k < n; k++) {
    const moe_run *r = &runs[k];
    fprintf(f, "%d,%s,%s,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", r->top_k, r->cap, r->aux, r->imbalance,
            r->kept_imbalance, r->dropped_end, r->dropped_run, r->step_s, r->alltoall_s, r->bytes_per_step,
            r->final_loss);
  }
  fclose(f);
  return text;
}

/* Held-out loss against simulated training time: one row per evaluation of each run. */
static char *moe_loss_csv(const reproduce_data *d)
{
  const moe_run *runs = d->runs[0];
  size_t n = d->n[0];
  char *text = NULL;
  size_t len = 0;
  FILE *f = reproduce_frame_stream(&text, &len);
  fputs("top_k,capacity_factor,aux_loss,step,time_s,loss\n", f);
  for (size_t k = 0; k < n; k++)
    for (size_t e = 0; e < runs[k].ev.n; e++)
      fprintf(f, "%d,%s,%s,%ld,%.17g,%.17g\n", runs[k].top_k, runs[k].cap, runs[k].aux, runs[k].ev.step[e], runs[k].ev.t[e],
              runs[k].ev.loss[e]);
  fclose(f);
  return text;
}

static size_t cap_index(const char *cap)
{
  size_t c = 0;
  while (c < 2 && strcmp(moe_cap[c], cap) != 0)
    c++;
  return c;
}

/* Left: held-out loss against simulated time (ms), colour the top_k and capacity, dashed without
 * the auxiliary loss; the one legend. Right: step time (us) against the kept imbalance, the same
 * colours, open without it. */
static void moe_plot(json_t *v, const char *plot, const reproduce_data *d)
{
  (void)plot;
  static const char *const colour[2][3] = {{"#4477aa", "#228833", "#ccbb44"}, {"#ee6677", "#aa3377", "#66ccee"}};
  const moe_run *runs = d->runs[0];
  size_t n = d->n[0];
  char *text;
  size_t tl;
  FILE *f = reproduce_frame_stream(&text, &tl);
  template_list(v, "runs");
  for (size_t k = 0; k < n; k++) {
    fprintf(f, "$l%zu << EOD\n", k);
    for (size_t e = 0; e < runs[k].ev.n; e++)
      fprintf(f, "%.9g %.9g\n", 1e3 * runs[k].ev.t[e], runs[k].ev.loss[e]);
    fprintf(f, "EOD\n$s%zu << EOD\n%.9g %.9g\nEOD\n", k, runs[k].kept_imbalance, 1e6 * runs[k].step_s);
    int off = strcmp(runs[k].aux, "0") == 0;
    json_t *it = template_add(v, "runs");
    template_set(it, "sep", "%s", k ? ", " : "");
    template_set(it, "k", "%zu", k);
    template_set(it, "dt", "%d", off ? 2 : 1);
    template_set(it, "pt", "%d", off ? 6 : 7);
    template_set(it, "colour", "%s", colour[runs[k].top_k - 1][cap_index(runs[k].cap)]);
    template_set(it, "top_k", "%d", runs[k].top_k);
    template_set(it, "cap", "%s", runs[k].cap);
    template_set(it, "aux", "%s", runs[k].aux);
  }
  template_set_stream(v, "blocks", f, &text);
}

/* The run of (top_k, cap, aux), or NULL. */
static const moe_run *moe_find(const moe_run *runs, size_t n, int top_k, const char *cap, const char *aux)
{
  for (size_t k = 0; k < n; k++)
    if (runs[k].top_k == top_k && strcmp(runs[k].cap, cap) == 0 && strcmp(runs[k].aux, aux) == 0)
      return &runs[k];
  return NULL;
}

/* v[key] = count and v[key_n] = of: how many of the `of` pairs the README counts held. */
static void moe_set_tally(json_t *v, const char *key, int count, int of)
{
  char n_key[64];
  snprintf(n_key, sizeof n_key, "%s_n", key);
  template_set(v, key, "%d", count);
  template_set(v, n_key, "%d", of);
}

/* The targets over the pairs the grid has: imbalance off above on (per top_k and capacity), the
 * step ordered as the kept imbalance (same pairs), drops at 1.0 above 2.0 (per top_k and aux). */
static void moe_targets(json_t *v, const moe_run *runs, size_t n)
{
  int imb = 0, imb_n = 0, step = 0, drop = 0, drop_n = 0;
  for (size_t k = 0; k < 2; k++)
    for (size_t c = 0; c < 3; c++) {
      const moe_run *off = moe_find(runs, n, moe_topk[k], moe_cap[c], "0"),
                    *on = moe_find(runs, n, moe_topk[k], moe_cap[c], MOE_AUX);
      if (off && on) {
        imb_n++;
        imb += off->imbalance > on->imbalance;
        step += (off->step_s > on->step_s) == (off->kept_imbalance > on->kept_imbalance);
      }
    }
  for (size_t k = 0; k < 2; k++)
    for (size_t a = 0; a < 2; a++) {
      const moe_run *lo = moe_find(runs, n, moe_topk[k], "1.0", moe_aux[a]),
                    *hi = moe_find(runs, n, moe_topk[k], "2.0", moe_aux[a]);
      if (lo && hi)
        drop_n++, drop += lo->dropped_end > hi->dropped_end;
    }
  moe_set_tally(v, "imb", imb, imb_n);
  template_set(v, "step", "%d", step);
  moe_set_tally(v, "drop", drop, drop_n);
}

/* The ranges the text quotes: imbalance off and on, drops at capacity 1.0 and 2.0, what 2.0 costs
 * over 1.0 in step time and all-to-all bytes, the step's spread at 1.0, and the held-out losses. */
static void moe_ranges(json_t *v, const moe_run *runs, size_t n)
{
  double lo[7] = {1e300, 1e300, 1e300, 1e300, 1e300, 1e300, 1e300}, hi[7] = {0}, spread1 = 0;
  int loss_cap = 0, loss_cap_n = 0, loss_aux = 0, loss_aux_n = 0;
#define MOE_RANGE(i, x) (lo[i] = (x) < lo[i] ? (x) : lo[i], hi[i] = (x) > hi[i] ? (x) : hi[i])
  for (size_t k = 0; k < n; k++) {
    const moe_run *r = &runs[k];
    MOE_RANGE(strcmp(r->aux, "0") == 0 ? 0 : 1, r->imbalance);
    if (strcmp(r->cap, "1.0") == 0) { /* the busiest expert's rows over its capacity, P C = the mean routed */
      MOE_RANGE(2, 100 * r->dropped_end);
      MOE_RANGE(6, r->kept_imbalance * (1 - r->dropped_end));
    }
    if (strcmp(r->cap, "2.0") == 0)
      MOE_RANGE(3, 100 * r->dropped_end);
    const moe_run *two = moe_find(runs, n, r->top_k, "2.0", r->aux), *on = moe_find(runs, n, r->top_k, r->cap, MOE_AUX);
    if (strcmp(r->cap, "1.0") == 0 && two) {
      MOE_RANGE(4, 100 * (two->step_s / r->step_s - 1));
      MOE_RANGE(5, 100 * (two->bytes_per_step / r->bytes_per_step - 1));
      loss_cap_n++, loss_cap += two->final_loss < r->final_loss;
    }
    if (strcmp(r->aux, "0") == 0 && on) {
      loss_aux_n++, loss_aux += on->final_loss < r->final_loss;
      double d = 100 * (r->step_s / on->step_s - 1);
      if (strcmp(r->cap, "1.0") == 0 && (d < 0 ? -d : d) > spread1)
        spread1 = d < 0 ? -d : d;
    }
  }
#undef MOE_RANGE
  static const char *const name[7] = {"imb_off", "imb_on", "drop1", "drop2", "step_up", "bytes_up", "fill"};
  for (int i = 0; i < 7; i++) {
    char key[32];
    snprintf(key, sizeof key, "%s_lo", name[i]);
    template_set(v, key, i < 2 || i == 6 ? "%.2f" : "%.1f", lo[i]);
    snprintf(key, sizeof key, "%s_hi", name[i]);
    template_set(v, key, i < 2 || i == 6 ? "%.2f" : "%.1f", hi[i]);
  }
  template_set(v, "spread1", "%.2f", spread1);
  moe_set_tally(v, "loss_cap", loss_cap, loss_cap_n);
  moe_set_tally(v, "loss_aux", loss_aux, loss_aux_n);
}

/* One item per top_k at capacity 2.0: the step, kept imbalance and all-to-all wait off and on. */
static void moe_cap2(json_t *v, const moe_run *runs, size_t n)
{
  template_list(v, "cap2");
  for (size_t k = 0; k < 2; k++) {
    const moe_run *off = moe_find(runs, n, moe_topk[k], "2.0", "0"), *on = moe_find(runs, n, moe_topk[k], "2.0", MOE_AUX);
    if (off == NULL || on == NULL)
      continue;
    json_t *it = template_add(v, "cap2");
    template_set(it, "k", "%d", moe_topk[k]);
    template_set(it, "step_off", "%.1f", 1e6 * off->step_s);
    template_set(it, "step_on", "%.1f", 1e6 * on->step_s);
    template_set(it, "kept_off", "%.3f", off->kept_imbalance);
    template_set(it, "kept_on", "%.3f", on->kept_imbalance);
    template_set(it, "a2a_off", "%.1f", 1e6 * off->alltoall_s);
    template_set(it, "a2a_on", "%.1f", 1e6 * on->alltoall_s);
  }
}

static int moe_readme(json_t *v, const reproduce_data *d, char *err, size_t len)
{
  (void)err, (void)len;
  const moe_run *runs = d->runs[0];
  size_t n = d->n[0];
  template_set(v, "speed", "%s", MOE_SPEED);
  template_set(v, "aux", "%s", MOE_AUX);
  template_set(v, "steps", "%s", MOE_STEPS);
  char *text = NULL;
  size_t tl = 0;
  FILE *f = reproduce_frame_stream(&text, &tl);
  for (size_t k = 0; k < n; k++) {
    const moe_run *r = &runs[k];
    fprintf(f, "| %d | %s | %s | %.3f | %.3f | %.2f%% | %.2f%% | %.1f | %.1f | %.1f | %.3f |\n", r->top_k, r->cap, r->aux,
            r->imbalance, r->kept_imbalance, 100 * r->dropped_end, 100 * r->dropped_run, 1e6 * r->step_s,
            1e6 * r->alltoall_s, r->bytes_per_step / 1e3, r->final_loss);
  }
  template_set_stream(v, "rows", f, &text);
  moe_targets(v, runs, n);
  moe_ranges(v, runs, n);
  moe_cap2(v, runs, n);
  return 0;
}

const reproduction reproduce_moe = {
    .name = "moe",
    .grids = {{"moe.ini", moe_ini, sizeof(moe_run), MOE_RUNS, moe_grid, moe_read, moe_free_run}},
    .tables = {{"moe.csv", 0x7u, moe_csv},            /* key: top_k,capacity_factor,aux_loss */
               {"moe_loss.csv", 0xFu, moe_loss_csv}}, /* key: the run and the step */
    .readme = moe_readme,
    .plots = {"moe"},
    .plot = moe_plot,
};

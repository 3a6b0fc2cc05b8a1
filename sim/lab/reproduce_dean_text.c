/* reproduce_dean_text.c - what `dtsim reproduce fig4` and `fig5` write (Dean et al. 2012,
 * sec. 5, Figs. 4 and 5): fig4.csv, fig5.csv and robustness.csv, the READMEs (the rules,
 * written before the results, then the results against the paper's claims) and the gnuplot
 * scripts of fig4.png and fig5.png, from the runs reproduce_dean.c made. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <xbt/asserts.h>

#include "sim/lab/reproduce.h"
#include "sim/lab/reproduce_dean.h"

/* The paper's Fig. 4 order, slowest first (Dean et al. 2012, sec. 5 and Fig. 4). */
static const config paper_order[] = {
    {M_SGD, 1, 0}, {M_DOWNPOUR, 20, 0}, {M_ADAGRAD, 20, 0}, {M_SANDBLASTER, 2000, 0}, {M_ADAGRAD, 200, 0}};
#define N_PAPER (sizeof(paper_order) / sizeof(paper_order[0]))

/* ---- the figures' CSV files ------------------------------------------------------------ */

/* fig4.csv: the documented method,sim_time_h,accuracy, then replicas and rate: every run's
 * evaluations (each rate's, so that a --quick grid's rows are rows of the full one). */
char *dean_fig4_csv(const run *runs, size_t n)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fputs("method,sim_time_h,accuracy,replicas,rate\n", f);
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; runs[i].v == V_NONE && k < runs[i].n; k++)
      fprintf(f, "%s,%.17g,%.17g,%d,%s\n", method_names[runs[i].c->m], runs[i].t[k] / 3600, runs[i].acc[k],
              runs[i].c->replicas, rate_of(&runs[i]) ? rate_of(&runs[i]) : "none");
  fclose(f);
  return text;
}

/* fig5.csv: method,replicas,machines,cores,time_to_target_h,rate: machines are every host the
 * run used, cores its utilized cores; time_to_target_h is empty when the target was not
 * reached. */
char *dean_fig5_csv(const run *runs, size_t n)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fputs("method,replicas,machines,cores,time_to_target_h,rate\n", f);
  for (size_t i = 0; i < n; i++) {
    const run *r = &runs[i];
    if (r->v != V_NONE)
      continue;
    fprintf(f, "%s,%d,%ld,%.17g,", method_names[r->c->m], r->c->replicas, r->hosts, cores_of(r));
    if (r->t_target >= 0)
      fprintf(f, "%.17g", r->t_target / 3600);
    fprintf(f, ",%s\n", rate_of(r) ? rate_of(r) : "none");
  }
  fclose(f);
  return text;
}

/* robustness.csv (fig4): method,replicas,rate,variant,time_to_target_h,final_accuracy. */
char *dean_robustness_csv(const run *runs, size_t n)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fputs("method,replicas,rate,variant,time_to_target_h,final_accuracy\n", f);
  for (size_t i = 0; i < n; i++) {
    const run *r = &runs[i];
    if (r->v == V_NONE)
      continue;
    fprintf(f, "%s,%d,%s,%s,", method_names[r->c->m], r->c->replicas, rate_of(r) ? rate_of(r) : "none",
            variant_names[r->v]);
    if (r->t_target >= 0)
      fprintf(f, "%.17g", r->t_target / 3600);
    fprintf(f, ",%.17g\n", r->final_acc);
  }
  fclose(f);
  return text;
}

/* ---- the READMEs ---------------------------------------------------------------------- */

static void put_hours(FILE *f, double s)
{
  if (s >= 0)
    fprintf(f, "%.3f", s / 3600);
  else
    fputs("not reached", f);
}

static void put_label(FILE *f, const config *c)
{
  if (c->m == M_SGD)
    fputs("sgd (1 replica, 8 partitions)", f);
  else if (c->m == M_GPU)
    fputs("gpu (1 GPU)", f);
  else
    fprintf(f, "%s %d", method_names[c->m], c->replicas);
}

/* The rules, written before any result (both READMEs). */
static void put_rules(FILE *f, const calibration *cal)
{
  fprintf(f,
          "## Rules (chosen before the results, the same for every method)\n\n"
          "1. **Timing**: DistBelief's speech net (`model.virtual = speech-42m`, 41.8M parameters, 6 x 41.8M\n"
          "   flops per example, 167 MB of fp32 parameters) on the `distbelief-2012` preset (16 cores of\n"
          "   20.8 Gflop/s per machine on Google's Saturn fabric of 2009-2012: 10 GbE, racks of 20 with 4 x\n"
          "   10G uplinks, non-blocking above; platforms/README.md), at Fig. 3's calibration (efficiency 0.25,\n"
          "   0.2 ms of CPU per message, machines' speeds spread by 10%%: results/fig3/README.md); the GPU\n"
          "   baseline on the `gpu-2012` preset (one 1,331 Gflop/s GPU at the same efficiency). The SGD\n"
          "   baseline's step of %d examples takes %.3f s on its 8 machines, the GPU's %.3f s.\n",
          BATCH, cal->sgd_step, cal->gpu_step);
  fprintf(f,
          "2. **Accuracy: a proxy whose target needs far more examples than the baseline processes in the\n"
          "   horizon.** A 32-64-10 tanh MLP really trains on a teacher network 32-64-10 whose labels are\n"
          "   replaced by a uniform class one time in five (the paper's speech examples are \"weakly\n"
          "   labeled\"), every minibatch drawn fresh from the teacher (`data.stream`: no example is seen\n"
          "   twice; the paper trains on 1.1 billion); held-out accuracy on 5,000 more (at most 0.82 with\n"
          "   this noise). The horizon is " HORIZON_TEXT " simulated s. N* = " DIFFICULTY_TEXT " x the examples the SGD\n"
          "   baseline processes in it = %.0f examples (%ld steps); the target is the held-out accuracy that\n"
          "   sequential SGD of the proxy reaches after N* examples at the best rate of the fixed-rate\n"
          "   ladder (rule 6): **%.4f** (rate %s). This is the one calibration (a numerics-only run, not a\n"
          "   scored point); the SGD baseline therefore reaches the target after about %.0f s, beyond\n"
          "   the horizon, by construction, as the paper's problem (days of training) is example-bound.\n"
          "3. **Warmstart**: every run starts from the same 200 steps of sequential SGD (batch 32, rate 0.2,\n"
          "   `model.warmstart_steps`), as the paper's runs start from one ~10 h SGD warmstart.\n",
          cal->n_star, cal->star_steps, cal->target, ladder[cal->rung], cal->n_star / (BATCH / cal->sgd_step));
  fprintf(f,
          "4. **Methods and machines** (the paper's configurations: Downpour 20 and 200, Sandblaster 2,000):\n"
          "   `sgd`: one replica split over %d machines (the paper's baseline; the speech net's partitions take\n"
          "   the time, the proxy sequential SGD's steps); `gpu`: one replica on one GPU; `downpour`,\n"
          "   `downpour-adagrad`: R replicas, each one machine, n_fetch = n_push = 1 (the paper's), fetch,\n"
          "   compute and push in three weakly synchronised threads (`downpour.overlap`, the Appendix);\n"
          "   `sandblaster`: R replicas of one machine, a coordinator, batches of %d portions of %d examples\n"
          "   per replica (portions much smaller than 1/R of a batch: its batch is %d R examples of the\n"
          "   teacher, fixed), backup tasks on, pushes every 4 counted portions. The paper does not say how\n"
          "   its replicas were split: a replica is one machine here (the speech net fits one), which gives\n"
          "   every distributed method the same replica; the robustness table splits them over 8. SGD-family\n"
          "   steps take %d examples (the paper does not give its batch size: an assumption).\n"
          "5. **Parameter server**: ceil(replica machines / %d) shards for every method, placed among the\n"
          "   replicas' machines (`ps_placement = spread`), so that every rack holds shards in proportion\n"
          "   to its replicas; each machine exchanges with the shards only its own parameters.\n",
          SGD_PARTITIONS, PORTIONS_PER_REPLICA, PORTION, PORTIONS_PER_REPLICA * PORTION, BATCH, MACHINES_PER_SHARD);
  fputs("6. **Rates, one rule for all**: every method climbs one ladder of rates a factor of about 3\n"
        "   apart (0.001, 0.003, ..., 30, 100), fixed rates (`sgd.lr`, `downpour.lr`) and Adagrad's gamma\n"
        "   alike: each configuration starts on 0.03, 0.1 and 0.3, and while its best rate is at an end of\n"
        "   what it ran, the next rung beyond is run, so no winner sits on an edge; the ladder reaches 100,\n"
        "   so gamma can go \"perhaps an order of magnitude\" above the best fixed rate, as the paper has it\n"
        "   (Adagrad's first update moves every parameter by gamma, whatever the gradient). The best: the\n"
        "   shortest time to the target; if none reaches it, the highest final accuracy; ties to the lower\n"
        "   rate. L-BFGS needs no rate.\n"
        "7. **Axes**: time is simulated seconds, shown in hours; every run stops at the target or the\n"
        "   horizon; an evaluation every " EVAL_EVERY_TEXT " simulated s measures the proxy's held-out accuracy from\n"
        "   the parameters at that moment. Machines count every host a run uses (replicas, shards,\n"
        "   coordinator; a GPU is 1); utilized cores are the core-seconds its actors computed divided\n"
        "   by the time it ran (a machine's computation spreads over its 16 cores; shards count).\n"
        "8. **Scale factor**: the paper's runs take tens of hours; here N* and the horizon are both that\n"
        "   small, for every method alike, and the replica counts, machines and rates are the paper's\n"
        "   configurations (those rule 9 simulates). The order survives the factor as long as every\n"
        "   method stays example-bound: its time to the target is the examples it needs over its\n"
        "   throughput, neither of which the factor changes; the cost is that the fastest runs make tens\n"
        "   of steps per replica, not thousands, so start-up (the first fetch, the warmstart's release)\n"
        "   weighs more.\n"
        "9. **What is simulated**: every configuration of at most " MAX_REPLICAS_TEXT " replicas; larger ones are listed,\n"
        "   not simulated. With one shard per 8 machines every replica exchanges with R/8 shards and\n"
        "   all those flows share the shards' links, so each flow's start or end re-solves the sharing\n"
        "   of about R^2/4 flows in flight and a replica's step costs CPU time growing as R^3: on the\n"
        "   2-core machine these results were made on, 900 simulated s of Downpour-Adagrad take about\n"
        "   1 CPU-minute at 20 replicas and 2 at 50, and at 200 replicas 10 simulated s took 93 s of CPU\n"
        "   with SimGrid's fastest settings that keep times within 1e-5 (so about 2.3 CPU-hours per run,\n"
        "   and the rate rule needs at least three); Sandblaster with 2,000 replicas and 250 shards had\n"
        "   not reached 6 simulated s after 16 CPU-minutes (1.8 GB). No single scale factor keeps their\n"
        "   comparison: fewer replicas would slow them against the one-replica baselines by that factor,\n"
        "   and a shorter horizon shrinks N* while Sandblaster 2,000's batch stays 1.28 M examples.\n\n",
        f);
}

/* Sorts chosen runs by time to the target, slowest (or never) first. */
static int slower_first(const void *a, const void *b)
{
  const run *x = *(const run *const *)a, *y = *(const run *const *)b;
  double tx = x->t_target < 0 ? INFINITY : x->t_target, ty = y->t_target < 0 ? INFINITY : y->t_target;
  if (tx != ty)
    return tx < ty ? 1 : -1;
  return x->final_acc < y->final_acc ? -1 : x->final_acc > y->final_acc;
}

/* The chosen runs of the paper's five configurations in variant v, slowest first; returns
 * how many ran. */
static size_t order_of(const run *runs, size_t n, const config *cs, size_t nc, variant v, const run **order)
{
  size_t k = 0;
  for (size_t p = 0; p < N_PAPER; p++)
    for (size_t c = 0; c < nc; c++)
      if (cs[c].m == paper_order[p].m && cs[c].replicas == paper_order[p].replicas) {
        const run *r = dean_chosen(runs, n, &cs[c], v);
        if (r)
          order[k++] = r;
      }
  qsort(order, k, sizeof(order[0]), slower_first);
  return k;
}

/* Whether order[0..k) keeps the paper's relative order: each configuration after the ones
 * the paper has slower (those not simulated, rule 9, are absent). */
static int paper_ordered(const run *const *order, size_t k)
{
  int last = -1;
  for (size_t i = 0; i < k; i++) {
    int rank = -1;
    for (size_t p = 0; p < N_PAPER; p++)
      if (order[i]->c->m == paper_order[p].m && order[i]->c->replicas == paper_order[p].replicas)
        rank = (int)p;
    if (rank < last)
      return 0;
    last = rank;
  }
  return 1;
}

/* "; not simulated (rule 9): ..." naming cs's configurations beyond MAX_REPLICAS, if any. */
static void put_unsimulated(FILE *f, const config *cs, size_t nc)
{
  int k = 0;
  for (size_t c = 0; c < nc; c++)
    if (!simulated(&cs[c])) {
      fputs(k++ ? ", " : "; not simulated (rule 9): ", f);
      put_label(f, &cs[c]);
    }
}

static void put_order(FILE *f, const run *const *order, size_t k)
{
  for (size_t i = 0; i < k; i++) {
    fputs(i ? " < " : "", f);
    put_label(f, order[i]->c);
    if (order[i]->t_target < 0)
      fputs(" (never)", f);
  }
}

/* "yes"/"no" for each of the methods against the GPU: faster to the target. */
static void put_beats_gpu(FILE *f, const run *runs, size_t n, const config *cs, size_t nc, variant v,
                          const run *const *order, size_t k)
{
  const run *gpu = NULL;
  for (size_t c = 0; c < nc; c++)
    if (cs[c].m == M_GPU)
      gpu = dean_chosen(runs, n, &cs[c], v == V_HARDER || v == V_EASIER ? v : V_NONE);
  int any = 0;
  for (size_t i = 0; gpu && i < k; i++) {
    const run *r = order[i];
    if (!distributed(r->c->m))
      continue;
    int beats = r->t_target >= 0 && (gpu->t_target < 0 || r->t_target < gpu->t_target);
    fprintf(f, "%s", any++ ? "; " : "");
    put_label(f, r->c);
    fputs(beats ? ": yes" : ": no", f);
  }
}

char *dean_fig4_readme(const run *runs, size_t n, const config *cs, size_t nc, const calibration *cal, int quick)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fprintf(f,
          "# Fig. 4 of Dean et al. 2012: held-out accuracy against training time, per optimizer\n\n"
          "Made by `dtsim reproduce fig4%s` from `fig4.ini` (each run adds the `--set` options of its\n"
          "method and rate, and `run.target_accuracy`, the calibrated target). `fig4.csv` holds every\n"
          "run's evaluations (`method,sim_time_h,accuracy`, then `replicas` and `rate`), `fig4.png`\n"
          "draws the chosen rate's curve of each method%s.\n\n",
          quick ? " --quick" : "",
          quick ? "" : ", and `robustness.csv` the robustness table's runs (`method,replicas,rate,variant,"
                       "time_to_target_h,final_accuracy`)");
  put_rules(f, cal);
  fputs("## Results\n\n| method | rate chosen | rates run | time to the target (h) | accuracy at the end | machines |\n"
        "|---|---|---|---|---|---|\n",
        f);
  for (size_t c = 0; c < nc; c++) {
    const run *r = dean_chosen(runs, n, &cs[c], V_NONE);
    if (!simulated(&cs[c])) {
      fputs("| ", f);
      put_label(f, &cs[c]);
      fputs(" | - | - | not simulated (rule 9) | - | - |\n", f);
    }
    if (r == NULL)
      continue;
    int lo, hi;
    dean_rungs_of(runs, n, &cs[c], &lo, &hi);
    fputs("| ", f);
    put_label(f, r->c);
    fprintf(f, " | %s | ", rate_of(r) ? rate_of(r) : "-");
    if (hi >= 0)
      fprintf(f, "%s to %s", ladder[lo], ladder[hi]);
    else
      fputs("-", f);
    fputs(" | ", f);
    put_hours(f, r->t_target);
    fprintf(f, " | %.4f | %ld |\n", r->n ? r->acc[r->n - 1] : r->final_acc, r->hosts);
  }
  const run *order[16];
  size_t k = order_of(runs, n, cs, nc, V_NONE, order);
  fputs("\n## Paper vs dtsim\n\n| claim (Dean et al. 2012, sec. 5) | paper | dtsim |\n|---|---|---|\n"
        "| order, slowest to fastest to the target | ",
        f);
  for (size_t i = 0; i < N_PAPER; i++) {
    fputs(i ? " < " : "", f);
    put_label(f, &paper_order[i]);
  }
  fputs(" | ", f);
  put_order(f, order, k);
  put_unsimulated(f, cs, nc);
  fprintf(f, " |\n| the same order among the configurations simulated | yes | %s |\n",
          paper_ordered(order, k) ? "yes" : "no");
  fputs("| Sandblaster and Downpour-Adagrad faster than the GPU | \"substantially\" | ", f);
  put_beats_gpu(f, runs, n, cs, nc, V_NONE, order, k);
  fputs(" |\n", f);
  /* the robustness table */
  int any = 0;
  for (size_t i = 0; i < n; i++)
    any |= runs[i].v != V_NONE;
  if (any) {
    fputs("\n## Robustness: which assumption moves the order\n\n"
          "Each row reruns the paper's configurations that rule 9 simulates (and the GPU where the change\n"
          "reaches it) at their chosen rates with one assumption changed; the order is slowest to fastest\n"
          "to the target (\"never\": not within the horizon, ranked by final accuracy), and \"the paper's?\"\n"
          "asks whether it keeps the paper's order among them.\n\n"
          "| assumption changed | order | the paper's? | faster than the GPU |\n|---|---|---|---|\n",
          f);
    for (size_t v = 0; v < N_VARIANTS; v++) {
      const run *vo[16], *mixed[16];
      if (v != V_NONE && order_of(runs, n, cs, nc, (variant)v, vo) == 0)
        continue;
      /* configurations a variant does not rerun keep their result as run */
      size_t mk = 0;
      for (size_t p = 0; p < N_PAPER; p++)
        for (size_t c = 0; c < nc; c++)
          if (cs[c].m == paper_order[p].m && cs[c].replicas == paper_order[p].replicas) {
            const run *r = dean_chosen(runs, n, &cs[c], (variant)v);
            r = r ? r : dean_chosen(runs, n, &cs[c], V_NONE);
            if (r)
              mixed[mk++] = r;
          }
      qsort(mixed, mk, sizeof(mixed[0]), slower_first);
      fprintf(f, "| %s | ", variant_names[v]);
      put_order(f, mixed, mk);
      fprintf(f, " | %s | ", paper_ordered(mixed, mk) ? "yes" : "no");
      put_beats_gpu(f, runs, n, cs, nc, (variant)v, mixed, mk);
      fputs(" |\n", f);
    }
    fprintf(f, "\nThe easier and harder targets are %.4f and %.4f (sequential SGD after N*/2 and 2 N* examples).\n",
            cal->easier, cal->harder);
  }
  fclose(f);
  return text;
}

char *dean_fig5_readme(const run *runs, size_t n, const config *cs, size_t nc, const calibration *cal, int quick)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  xbt_assert(f, "open_memstream failed");
  fprintf(f,
          "# Fig. 5 of Dean et al. 2012: time to a fixed accuracy against machines and utilized cores\n\n"
          "Made by `dtsim reproduce fig5%s` from `fig5.ini` (each run adds the `--set` options of its\n"
          "method, replica count and rate, and `run.target_accuracy`, the calibrated target). Every run\n"
          "stops at the target or at " HORIZON_TEXT " simulated s. `fig5.csv` holds every run\n"
          "(`method,replicas,machines,cores,time_to_target_h,rate`; cores are utilized cores, an empty\n"
          "time: not reached); `fig5.png` plots each point's chosen rate against machines (left) and\n"
          "utilized cores (right), as the paper's Fig. 5.\n\n",
          quick ? " --quick" : "");
  put_rules(f, cal);
  fputs("## Results\n\n| method | replicas | machines | utilized cores | rate chosen | time to the target (h) |\n"
        "|---|---|---|---|---|---|\n",
        f);
  for (size_t c = 0; c < nc; c++) {
    const run *r = dean_chosen(runs, n, &cs[c], V_NONE);
    if (!simulated(&cs[c]))
      fprintf(f, "| %s | %d | - | - | - | not simulated (rule 9) |\n", method_names[cs[c].m], cs[c].replicas);
    if (r == NULL)
      continue;
    fprintf(f, "| %s | %d | %ld | %.0f | %s | ", method_names[r->c->m], r->c->replicas, r->hosts, cores_of(r),
            rate_of(r) ? rate_of(r) : "-");
    put_hours(f, r->t_target);
    fputs(" |\n", f);
  }
  /* the claims, from the chosen runs */
  const run *best = NULL;
  for (size_t c = 0; c < nc; c++) {
    const run *r = dean_chosen(runs, n, &cs[c], V_NONE);
    if (r && r->c->m != M_GPU && cores_of(r) <= 2000 && r->t_target >= 0 && (best == NULL || r->t_target < best->t_target))
      best = r;
  }
  fputs("\n## Paper vs dtsim\n\n| claim (Dean et al. 2012, sec. 5) | paper | dtsim |\n|---|---|---|\n"
        "| fastest to the target with at most 2,000 utilized cores | Downpour with Adagrad | ",
        f);
  if (best) {
    put_label(f, best->c);
    fputs(" (", f);
    put_hours(f, best->t_target);
    fprintf(f, " h, %.0f cores)", cores_of(best));
  } else {
    fputs("none reaches it", f);
  }
  fputs(" |\n| fixed-rate Downpour with many replicas | fails to reach the target, or is slow | ", f);
  int most = 0;
  for (size_t c = 0; c < nc; c++)
    if (cs[c].m == M_DOWNPOUR && simulated(&cs[c]) && cs[c].replicas > most)
      most = cs[c].replicas;
  const run *dp = NULL, *ada = NULL;
  for (size_t c = 0; c < nc; c++) {
    if (cs[c].replicas == most && cs[c].m == M_DOWNPOUR)
      dp = dean_chosen(runs, n, &cs[c], V_NONE);
    if (cs[c].replicas == most && cs[c].m == M_ADAGRAD)
      ada = dean_chosen(runs, n, &cs[c], V_NONE);
  }
  if (dp) {
    fprintf(f, "%d replicas: ", most);
    put_hours(f, dp->t_target);
    if (ada) {
      fputs(" vs Adagrad's ", f);
      put_hours(f, ada->t_target);
    }
  } else {
    fputs("not run", f);
  }
  fputs(" |\n| Sandblaster as cores grow | keeps improving | ", f);
  int first = 1;
  for (size_t c = 0; c < nc; c++) {
    if (cs[c].m != M_SANDBLASTER)
      continue;
    const run *r = dean_chosen(runs, n, &cs[c], V_NONE);
    if (r == NULL) /* --quick runs some configurations only */
      continue;
    fprintf(f, "%s%.0f cores: ", first ? "" : ", ", cores_of(r));
    put_hours(f, r->t_target);
    first = 0;
  }
  fputs(" |\n", f);
  fclose(f);
  return text;
}

/* ---- the plots -------------------------------------------------------------------------- */

int dean_fig4_plot(const char *dir, const run *runs, size_t n, const config *cs, size_t nc, const calibration *cal,
                     char *err, size_t len)
{
  char *script = NULL;
  size_t slen = 0;
  FILE *f = open_memstream(&script, &slen);
  xbt_assert(f, "open_memstream failed");
  size_t k = 0;
  for (size_t c = 0; c < nc; c++) {
    const run *r = dean_chosen(runs, n, &cs[c], V_NONE);
    if (r == NULL)
      continue;
    fprintf(f, "$c%zu << EOD\n", k++);
    for (size_t i = 0; i < r->n; i++)
      fprintf(f, "%.9g %.9g\n", r->t[i] / 3600, r->acc[i]);
    fputs("EOD\n", f);
  }
  fprintf(f,
          "set terminal pngcairo size 860,560\nset output '%s/.fig4.png.tmp'\nset key bottom right\n"
          "set xlabel 'simulated time (hours)'\nset ylabel 'held-out accuracy of the proxy'\n"
          "set title 'Dean et al. 2012 Fig. 4, simulated by dtsim (target %.4f)'\n"
          "set arrow from graph 0, first %.6f to graph 1, first %.6f nohead dt 2\nplot ",
          dir, cal->target, cal->target, cal->target);
  k = 0;
  for (size_t c = 0; c < nc; c++) {
    const run *r = dean_chosen(runs, n, &cs[c], V_NONE);
    if (r == NULL)
      continue;
    fprintf(f, "%s$c%zu using 1:2 with lines lw 2 title '", k ? ", " : "", k);
    put_label(f, r->c);
    fputs("'", f);
    k++;
  }
  fputs("\n", f);
  fclose(f);
  int rc = reproduce_plot(dir, "fig4", script, err, len);
  free(script);
  return rc;
}

int dean_fig5_plot(const char *dir, const run *runs, size_t n, const config *cs, size_t nc, char *err, size_t len)
{
  char *script = NULL;
  size_t slen = 0;
  FILE *f = open_memstream(&script, &slen);
  xbt_assert(f, "open_memstream failed");
  int points[M_SANDBLASTER + 1] = {0}, any = 0;
  for (int m = M_SGD; m <= M_SANDBLASTER; m++) {
    fprintf(f, "$m%d << EOD\n", m);
    for (size_t c = 0; c < nc; c++) {
      const run *r = cs[c].m == (method)m ? dean_chosen(runs, n, &cs[c], V_NONE) : NULL;
      if (r && r->t_target >= 0) {
        fprintf(f, "%ld %.9g %.9g\n", r->hosts, cores_of(r), r->t_target / 3600);
        points[m]++;
        any = 1;
      }
    }
    fputs("EOD\n", f);
  }
  fprintf(f,
          "set terminal pngcairo size 1100,480\nset output '%s/.fig5.png.tmp'\nset multiplot layout 1,2 "
          "title 'Dean et al. 2012 Fig. 5, simulated by dtsim: time to the target accuracy'\n"
          "set logscale x\nset key top right\nset ylabel 'hours to the target'\n",
          dir);
  /* gnuplot refuses a plot with no point at all: a method without one is left out, and
   * when no run reached the target the panels are empty frames that say so */
  if (!any)
    fputs("set xrange [1:100000]\nset yrange [0:1]\n"
          "set label 'no run reached the target within the horizon' at graph 0.5, 0.5 center\n",
          f);
  for (int axis = 1; axis <= 2; axis++) {
    fprintf(f, "set xlabel '%s'\nplot ", axis == 1 ? "machines" : "utilized cores");
    int k = 0;
    for (int m = M_SGD; m <= M_SANDBLASTER; m++)
      if (points[m])
        fprintf(f, "%s$m%d using %d:3 with linespoints lw 2 pt 7 title '%s'", k++ ? ", " : "", m, axis,
                method_names[m]);
    fputs(k ? "\n" : "NaN notitle\n", f);
  }
  fputs("unset multiplot\n", f);
  fclose(f);
  int rc = reproduce_plot(dir, "fig5", script, err, len);
  free(script);
  return rc;
}

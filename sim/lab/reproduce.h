#ifndef SIM_REPRODUCE_H
#define SIM_REPRODUCE_H
/* reproduce.h - `dtsim reproduce NAME`: a published experiment's grid of simulations,
 * each in its own process (one SimGrid engine per process), written as results/NAME/:
 * the scenario, NAME.csv, NAME.png (gnuplot) and a README comparing with the paper. */
#include <stddef.h>
#include <jansson.h>

/* argv[0] is "reproduce". Returns the exit status: 0; 1 when --check finds a
 * difference from the committed CSV; 2 on bad input. */
int reproduce_main(int argc, char **argv);

/* The reproductions' names in the order `all` runs them, then "all", comma-separated:
 * what `dtsim --help` and a wrong NAME list, from the table reproduce_main runs. */
const char *reproduce_names(void);

/* ---- shared by the reproductions (defined in reproduce.c) ---- */

/* What the command line asked for. out is the folder to write or check (never NULL);
 * work is a private temporary folder holding the scenario, where every run starts. Without
 * check, folder store (out/.runs unless --store) keeps each finished run
 * (reproduce_store.h); fresh: a store found there was deleted first. */
typedef struct reproduce_opts {
  const char *out;
  const char *work;
  const char *store;
  int quick, check, quiet, fresh;
  size_t n_par;
} reproduce_opts;

/* One `dtsim run WORK/INI --quiet --out DIR --set S... [cfg...]` in its own process. */
#define REPRODUCE_CFGS 3
typedef struct reproduce_job {
  char label[160];   /* "speech-42m on 8 machines": progress and error lines */
  char sets[16][160]; /* SECTION.KEY=VALUE, n_sets of them (16 at most: reproduce.c gives a run 48 arguments) */
  int n_sets;
  const char *cfg[REPRODUCE_CFGS]; /* more arguments (SimGrid --cfg options); a NULL ends them */
  char dir[512];     /* the run's --out, inside work */
  int may_miss;      /* exit status 1 (the run missed its goal: target, divergence) is a result */
  int failed;        /* set when the run failed: its output and log are kept */
} reproduce_job;

/* Runs every job on scenario work/ini, at most o->n_par at a time; returns 0, or -1
 * with the first failure in err. Without o->check, a job whose run o->store holds
 * (the same identity) is not run but copied from there, and each run that ends well is
 * kept there as it ends. */
int reproduce_run_jobs(const reproduce_opts *o, const char *ini, reproduce_job *jobs, size_t n, char *err,
                       size_t len);

/* A finished job's summary.json, read whole into *summary (json_decref it), and its block
 * `name`; NULL (and *summary NULL) with "PATH: no NAME result" in err if either is missing. */
json_t *reproduce_result_block(const reproduce_job *j, const char *name, json_t **summary, char *err, size_t len);

/* What both PTD-P tables (reproduce_pipeline, reproduce_zero) read of a finished pipeline
 * job: its pipeline block's Tflop/s per GPU and makespan (the step) into *tflops and *step_s;
 * then more(rv, summary, block), when not NULL, reads what one table adds. 0, or -1 with err. */
int reproduce_pipeline_figures(const reproduce_job *j, double *tflops, double *step_s,
                               void (*more)(void *rv, const json_t *summary, const json_t *block), void *rv,
                               char *err, size_t len);

/* The layout keys both PTD-P tables set on a job, in this order: tensor.ranks,
 * tensor.data_parallel, tensor.hidden, tensor.heads, tensor.layers, tensor.microbatch,
 * pipeline.stages, pipeline.microbatches (v[0..7]) into j->sets[0..7]; j->n_sets becomes 8. */
void reproduce_ptdp_layout(reproduce_job *j, const long v[8]);

/* The number at dotted path in object o ("comm.bytes_total": o's "comm", then its
 * "bytes_total"); 0 when there is none or it is not a number (json_number_value's). */
double reproduce_number(const json_t *o, const char *path);

/* A finished job's held-out evaluations: progress.csv's rows (sim_time_s,step,loss,accuracy,
 * ...) in file order. has_acc[i] is 0 in a row without an accuracy (a GPT's; acc[i] NaN
 * there); a diverged evaluation's nan is kept as read. The arrays come from xbt_malloc: the
 * caller owns them (xbt_free each, or reproduce_progress_free). */
typedef struct reproduce_progress {
  size_t n;
  double *t, *loss, *acc;
  double *noise; /* the column noise_scale (run.noise_scale_examples), NaN where empty or absent */
  double *lambda; /* the column lambda_max (run.curvature_examples), NaN where empty or absent */
  long *step;
  char *has_acc;
} reproduce_progress;
/* 0, or -1 with "PATH: no result" in err when the file is missing. */
int reproduce_read_progress(const reproduce_job *j, reproduce_progress *p, char *err, size_t len);
void reproduce_progress_free(reproduce_progress *p);

/* Deletes a job's output folder and log, unless the run failed. */
void reproduce_remove_run(const reproduce_job *j);

/* Compares csv with the committed file: line by line, or, with `subset` (a --quick
 * grid against a full one), each row with the committed row whose key fields (bit i of
 * key_fields = field i) are equal. Returns 0, 1 with the first difference in msg, or 2
 * if the committed file cannot be read. */
int reproduce_check(const char *csv, const char *committed, int subset, unsigned key_fields, char *msg, size_t len);

/* The reproductions' plots share these gnuplot pieces, so that a paper's numbers are
 * drawn the same way everywhere and no legend sits on a curve:
 * REPRODUCE_GP_KEY puts each plot's legend outside its area, to the right (give the
 * terminal the width); REPRODUCE_GP_PAPER is the style of a paper's numbers beside
 * dtsim's (large open black circles), REPRODUCE_GP_FORMULA that of a closed form
 * (a dashed line of the series' colour: append "lc N"). */
#define REPRODUCE_GP_KEY "set key outside right top vertical Left reverse noautotitle samplen 2\n"
#define REPRODUCE_GP_PAPER "with points pt 6 ps 2 lw 1.5 lc rgb 'black'"
#define REPRODUCE_GP_FORMULA "with lines dt 2 lw 1.5"

/* Writes into buf a gnuplot datablock $NAME of n rows "x y", the paper's numbers to plot
 * with REPRODUCE_GP_PAPER (y NaN: a row the paper leaves empty, skipped). Returns the
 * characters written, as snprintf. */
int reproduce_gp_block(char *buf, size_t len, const char *name, const double *x, const double *y, size_t n);

/* Feeds script to gnuplot, which must write o->out/.NAME.png.tmp; renames it to
 * NAME.png. Returns 0 or -1 with a message. */
int reproduce_plot(const char *dir, const char *name, const char *script, char *err, size_t len);

/* Creates dir if needed and writes each of the n (name, text) pairs into it. Returns
 * 0 or -1 with a message. */
int reproduce_write(const char *dir, const char *const *files, size_t n, char *err, size_t len);

/* The share of its GPU's peak that one tensor rank's GEMMs of one GPT layer sustain, with
 * recomputation (the forward's GEMMs twice, the backward's once), as the kernel model times
 * them on `preset`'s GPU description (models/gemm.h) with model.efficiency `efficiency`:
 * their flops over the sum of their gemm_time, over the peak. For a reproduction's README:
 * how far from the calibrated efficiency a row's shapes put it. */
double reproduce_gemm_share(const char *preset, double efficiency, size_t b, size_t s, size_t h, size_t heads,
                            size_t t);
/* Spearman's rank correlation of x and y (n values each, n >= 2), ties given their mean
 * rank. */
double reproduce_spearman(const double *x, const double *y, size_t n);

/* PTD-P Table 1's one calibrated number (reproduce_pipeline.c): model.efficiency on selene with
 * the kernel model and NCCL's link shares, found by bisection on the 1.7B row (137 Tflop/s per
 * GPU); Table 2 (reproduce_zero.c) and the energy reproduction's A100 runs use it as it is. */
#define REPRODUCE_PTDP_EFFICIENCY "0.748022"
/* Megatron-LM's (reproduce_megatron.c) without a framework's host thread (model.framework =
 * none): model.efficiency on dgx2h (fp16, unfused kernels), found by bisection on the 1.2B model
 * on one V100 (39 Tflop/s). The Megatron-LM reproduction runs its host (megatron-2019, calibrated
 * again on the same row) and keeps this one as its robustness row; the energy reproduction's V100
 * runs, whose software (OpenAI's) is not published, model no host and use it as it is. */
#define REPRODUCE_MEGATRON_EFFICIENCY "0.596274"
/* The [platform] and [model] lines both PTD-P tables' scenarios share: Selene, timing only,
 * fp16, GEMMs timed by shape (each scenario adds its model.efficiency line). */
#define REPRODUCE_SELENE_TIMING_INI                                                                                   \
  "[platform]\n"                                                                                                      \
  "preset = selene            ; 8 A100 (312e12 flop/s fp16, 108 SMs) per node, NVSwitch, 8 x 200 Gb/s HDR IB per "   \
  "node\n"                                                                                                            \
  "link_efficiency = on       ; links at NCCL's share: NVSwitch 230 of 300 GB/s, IB 24 of 25 GB/s per NIC\n"          \
  "[model]\n"                                                                                                         \
  "numerics = off             ; timing only\n"                                                                        \
  "dtype = fp16               ; 2 bytes per element on the wire\n"                                                    \
  "kernel_model = shapes      ; GEMMs timed by shape (tiles, waves, L2, DRAM), 7 us per kernel\n"
/* The main-loop efficiency fitted on DeepBench's largest V100 GEMM (reproduce_gemm.c). */
double reproduce_gemm_v100_efficiency(void);

#endif

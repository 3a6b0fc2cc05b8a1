#ifndef ALGORITHMS_PIPELINE_IMPL_H
#define ALGORITHMS_PIPELINE_IMPL_H
/* pipeline_impl.h - private to algorithms/pipeline*.c: the state a pipeline run shares
 * between its engine (pipeline.c: the devices and their schedules), its two chunk kernels
 * (pipeline_dense.c: dense layers; pipeline_gpt.c: 3D parallelism's GPT stages), and its
 * descriptor (pipeline_config.c, pipeline_report.c). */

#include <stddef.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_vector.h>
#include <simgrid/barrier.h>
#include <simgrid/mailbox.h>
#include <simgrid/mutex.h>
#include <simgrid/semaphore.h>

#include "algorithms/eval.h"
#include "algorithms/metrics.h"
#include "algorithms/pipeline.h"
#include "algorithms/pipeline_msg.h"
#include "models/data.h"
#include "models/gpt.h"

/* ---- the engine's state ----------------------------------------------------- */

typedef struct chunk {
  size_t first, last;     /* arch layers [first, last]: net layers [first-1, last) */
  size_t device;
  double fwd_flops;       /* per example (2 x fan-in per unit) */
  double bwd_flops;       /* per example (twice the forward) */
  double in_width;        /* units of layer first-1: what comes in (and its gradient goes back) */
  double out_width;       /* units of layer last: what goes out */
  double act_elems;       /* per example: its input and every layer's output, what backward reads */
  double params;
  sg_mailbox_t *fwd_in, *bwd_in; /* by lane: one per (replica, tensor rank) of its stage */
  void *k;                /* the kernel's state (numerics), or NULL */
} chunk;

typedef struct device {
  struct pipeline *pl;
  size_t rank;            /* its stage */
  size_t lane;            /* j t + r: replica j, tensor rank r (0 for dense stages) */
  size_t idx;             /* rank x lanes + lane: the device's actor runs on cfg->hosts[idx] */
  void *ks;               /* the kernel's per-device state, or NULL */
  pipeline_op *ops;
  size_t n_ops;
  long stashed;
  double stash_bytes;
  pipeline_stage_stats st;
  sg_sem_t flushing;      /* mirror_replicas, replica 0: released d - 1 times when it reaches a step's flush */
} device;

typedef enum kernel_phase { PHASE_FORWARD, PHASE_RECOMPUTE, PHASE_BACKWARD } kernel_phase;

/* What one phase computes on: its microbatch, the message that came in (NULL for the first
 * chunk's forward, the last chunk's backward and a recomputation) and the one to fill (NULL
 * for the last chunk's forward and the first chunk's backward). */
typedef struct kernel_io {
  long mb;
  const pipeline_msg *in;
  pipeline_msg *out;
} kernel_io;

/* What a model chunk computes for one microbatch: pipeline_dense.c and pipeline_gpt.c.
 * costs: fills c's fwd_flops, bwd_flops, in_width, out_width, act_elems and params from
 *   its layers [c->first, c->last] (set before the call); in_width and out_width are what
 *   one device sends per example across the chunk's boundaries.
 * attach / detach (may be NULL): create and free d->ks, the device's state, at deployment
 *   and after the run.
 * compute: spends the simulated time of one phase for `examples` examples on the calling
 *   actor's device d (for a tensor-parallel stage, with its group's collectives, and with
 *   numerics the stage's own: it reads io->in and fills io->out).
 * received (may be NULL): what the device does with an incoming boundary message io->in
 *   before computing on it (PTD-P sec. 4.1: the tensor group allgathers its scattered slices).
 * flush: the end of the step on device d: gradient reductions and the update.
 * numerics (with cfg->numerics): sets up the model, the data and the parameters before the
 *   devices attach; publish: device 0, between steps, copies the parameters into w_pub for
 *   the evaluator (under mu); draw: device 0 draws the next step's data.
 * Dense numerics (NULL for transformer stages, whose compute does them): create returns the
 * chunk's state. forward reads the chunk's input (rows of the step's data for chunk 0,
 * in_msg's data otherwise; the kernel keeps in_msg until backward), writes its output into
 * out (NULL for the last chunk, which keeps its logits for the loss) and stashes what
 * backward needs, all of it when keep is set, else only the input; recompute rebuilds what
 * a forward without keep dropped; backward reads dout (NULL for the last chunk: the loss),
 * writes din (NULL for chunk 0), adds the microbatch's gradient into the accumulator and
 * drops the stash. */
typedef struct chunk_kernel {
  void (*costs)(const struct pipeline *pl, chunk *c);
  void (*attach)(struct pipeline *pl, device *d);
  void (*detach)(device *d);
  void (*compute)(const struct pipeline *pl, device *d, const chunk *c, kernel_phase ph, double examples,
                  const kernel_io *io);
  void (*received)(const struct pipeline *pl, device *d, const chunk *c, double examples, const kernel_io *io);
  void (*flush)(struct pipeline *pl, device *d);
  void (*numerics)(struct pipeline *pl);
  void (*publish)(struct pipeline *pl);
  void (*draw)(struct pipeline *pl);
  void *(*create)(struct pipeline *pl, const chunk *c);
  void (*forward)(void *k, long mb, const gsl_matrix *in, pipeline_msg *in_msg, double *out, int keep);
  void (*recompute)(void *k, long mb);
  void (*backward)(void *k, long mb, const double *dout, double *din);
  void (*free)(void *k);
} chunk_kernel;

struct pipeline {
  const run_config *cfg;
  const pipeline_params *p;
  const arch *shapes;
  size_t K;               /* chunks: p * v */
  chunk *chunks;
  device *devs;
  const chunk_kernel *kernel;
  size_t t, dp;           /* tensor ranks per stage, pipeline replicas (1 and 1 for dense) */
  size_t lanes;           /* t x dp devices per stage */
  size_t n_devs;          /* stages x lanes */
  tensor_params tp;       /* transformer: [tensor] with layers = the model's */
  coll_comm **tcomm;      /* transformer: tensor group of stage s, replica j, at s dp + j */
  coll_comm **dcomm;      /* dp > 1: data-parallel group of stage s, tensor rank r, at s t + r */
  coll_comm **ecomm;      /* vocab and stages > 1: by lane, the first and last stage's embedding pair */
  struct zero3_group **zgroups; /* pipeline.zero = 3: by dcomm, its ring (zero3.h), made by its first device */
  int numeric;            /* the kernel's numerics run (cfg->numerics) */
  /* numerics */
  gsl_vector *w, *g, *acc, *w_pub; /* parameters, one microbatch's gradient, the step's sum, the evaluator's copy */
  gsl_matrix *X;          /* the step's m*b rows, drawn by device 0 */
  double *y;
  gsl_rng *rng;           /* device 0's draws: sgd's stream (worker rank 0) */
  /* 3D numerics: a GPT (models/gpt.h) on the synthetic language (models/data.h) */
  gpt_dims gd;
  dataset *tok_train, *tok_test; /* rows: sequences of seq + 1 tokens */
  gsl_matrix *seqs;       /* the step's m x b x d sequences, replica j's microbatch mb at rows (j m + mb) b */
  double *seq_y;          /* data_sample_batch's labels, unused */
  gsl_vector *w0;         /* the whole model's initial parameters */
  double initial_loss, initial_accuracy; /* held out, before the first step */
  double train_loss;      /* the last step's mean microbatch loss over the replicas */
  sg_bar_t start;
  int go;
  double end;             /* when the last step ended */
  sg_mutex_t mu;          /* guards w_pub */
  metrics_slot *slot;
  eval_ctl *eval;
};

/* The two kernels: dense layers of arch shapes (pipeline_dense.c), GPT layers on tensor
 * groups (pipeline_gpt.c). */
extern const chunk_kernel pipeline_dense_kernel;
extern const chunk_kernel pipeline_gpt_kernel;

/* Numeric transformer stages: the evaluator's measures of the whole model's parameters w
 * (ctx: the pipeline). */
int pipeline_gpt_measure(void *ctx, const gsl_vector *w, double *loss, double *accuracy);

/* ---- the descriptor's state (run.algorithm = pipeline) ------------------------ */

typedef struct pipeline_run {
  pipeline_params p;       /* the section, with split parsed and (3D) tensor.microbatch as b */
  const tensor_params *tp;
  size_t split[SETTINGS_MAX_LAYERS];
  const arch *shapes;
  arch *own_shapes;
  pipeline *pl;
  double memory_bytes;     /* the most loaded GPU's estimate (summary.json's memory_per_gpu) */
} pipeline_run;

/* The descriptor's report and closing line (pipeline_report.c). */
void pipeline_report(void *state, const run_config *cfg, metrics *m, report *rep);
void pipeline_closing(void *state, const run_config *cfg, const report_outcome *o, char *line, size_t len);

#endif

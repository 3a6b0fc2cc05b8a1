#ifndef ALGORITHMS_TENSOR_HOST_H
#define ALGORITHMS_TENSOR_HOST_H
/* tensor_host.h - model.framework in the tensor algorithm (models/framework.h): the CPU thread
 * that feeds each rank's GPU, an actor on the rank's host CPU (host X-cpu of GPU host X). It
 * launches the rank's work kernel by kernel at the era's cost each, and stops where the era's
 * code waits for the GPU (a copy of the RNG state, an .item(), a timer's synchronize); the
 * rank's actor, the GPU's stream, starts a piece of work only once the thread has launched
 * its first kernel and ends it only after the last, so the GPU idles whenever the thread is
 * behind. The thread runs one step's plan per step (tensor_host_plan_create); the rank's
 * actor consumes the same plan as it works and checks each piece's tag against it. The
 * era's optimizer loops and its data parallelism after backward run here too. It knows the
 * tensor algorithm only through the shape and the GPU side it is given (tensor_host_shape,
 * tensor_host_gpu), so the layers that call it stay above it.
 * algorithms/doc/tensor.md, The framework's host, has the model and what it leaves out. */

#include <stddef.h>
#include <simgrid/forward.h>

#include "algorithms/collectives.h"
#include "algorithms/run.h"
#include "models/framework.h"
#include "models/gemm.h"

/* The pieces of a step's plan, named by the GPU work that consumes them: launches, then
 * waits for the GPU. */
typedef enum tensor_host_tag {
  TH_EMBED, TH_FWD_ATTN, TH_FWD_MLP, TH_BWD_MLP, TH_BWD_ATTN, TH_WGRAD, TH_LOGITS_F, TH_LOGITS_B,
  TH_LOOP, TH_REDUCE, TH_DDP_FLAT, TH_DDP_COPY,
  TH_RNG_FWD, TH_RNG_MID, TH_RNG_REC, TH_RNG_REC_END, TH_ITEM, TH_TIMER, TH_DDP_SYNC
} tensor_host_tag;

typedef struct tensor_host_plan tensor_host_plan;
typedef struct tensor_host tensor_host;

/* Before the run: every host of cfg (the first n) has a host CPU, a host named X-cpu, and, if
 * the era copies RNG states, that CPU has a positive pcie_bw property: 0, or -1 with one line
 * in err naming the host. */
int tensor_host_check(const run_config *cfg, size_t n, char *err, size_t len);

/* What a step's plan is made from: the tensor run's shape (a rank's share of it) and the
 * kernels each layer phase launches. */
typedef struct tensor_host_shape {
  size_t layers, ranks, hidden, seq, vocab; /* tensor.*; vocab 0: no embedding or logits */
  long microbatches;
  int recompute;                            /* tensor.recompute */
  int own_ddp;                              /* data parallelism after backward (dp > 1, no overlap) */
  int rng_pinned;                           /* tensor.rng_pinned: RNG state copies at the link's rate */
  unsigned launches[4];                     /* kernels of FWD_ATTN, FWD_MLP, BWD_MLP, BWD_ATTN */
  unsigned collectives;                     /* tensor-parallel collectives of a layer phase */
} tensor_host_shape;

/* One step of a run of shape s under framework f as its ranks' threads run it (the same for
 * every rank), with the rank's parameter tensors for the optimizer's loops; NULL when f is
 * NULL. Free with tensor_host_plan_free (NULL is a no-op). */
tensor_host_plan *tensor_host_plan_create(const framework *f, const tensor_host_shape *s);
void tensor_host_plan_free(tensor_host_plan *p);

/* What the thread's GPU side needs of its rank: the run's configuration and the GPU (NULL:
 * none) its optimizer's kernels are timed on, and the tensor-parallel group whose member it is
 * (its host, and the allreduce of a loop's flag). */
typedef struct tensor_host_gpu {
  const run_config *cfg;
  const gemm_device *gpu;
  coll_comm *tc;
  size_t me;
  coll_algo algo;
} tensor_host_gpu;

/* Starts the thread of member g->me of g->tc on its host CPU, running plan `steps` times, and
 * returns it. Call at deployment; tensor_host_free after the engine has run (NULL is a no-op). */
tensor_host *tensor_host_start(const tensor_host_plan *plan, long steps, const char *name, const tensor_host_gpu *g);
void tensor_host_free(tensor_host *h);
/* After the engine has run: when the thread finished its last step (a step ends when both
 * the GPU and its thread are done); 0 for NULL. */
double tensor_host_end(const tensor_host *h);

/* ---- what the rank's actor calls with its thread h (no-ops but for the work itself when h is NULL) ---- */

/* A piece of work of `amount` (compute_work_amount's or compute_gpu_amount's; with a thread, 0:
 * nothing to run on the GPU) that the thread launches as the plan's next piece, which must carry `tag`;
 * the _async form starts it once launched and returns it (wait with account_exec_wait). */
void tensor_host_exec(tensor_host *h, tensor_host_tag tag, double amount);
sg_exec_t tensor_host_exec_async(tensor_host *h, tensor_host_tag tag, double amount);
/* The GPU has done all the thread launched before the plan's next wait, which must carry
 * `tag` (when the era has one there: the RNG waits need copies, TH_TIMER timer_syncs). */
void tensor_host_sync(tensor_host *h, tensor_host_tag tag);
/* The era's optimizer loops of framework_where `where` over the rank's parameter tensors, and
 * its data parallelism after backward around the allreduce (before: the flattening; after:
 * the synchronisation and the copies back). */
void tensor_host_loops(tensor_host *h, framework_where where);
void tensor_host_ddp(tensor_host *h, int after);

#endif

#ifndef MODELS_FRAMEWORK_H
#define MODELS_FRAMEWORK_H
/* framework.h - the host side of a training framework of one era (model.framework): what the
 * CPU thread that feeds a GPU spends per kernel it launches, where it stops to wait for the
 * GPU, and what its optimizer launches per parameter tensor. A GPU runs its kernels in the
 * order the thread launches them and waits when the queue is empty, so kernels shorter than
 * their launch cost leave it idle (algorithms/doc/tensor.md, The framework's host, has the
 * model). One set of constants per era, each from a published measurement or the era's code;
 * never fitted. */

#include <stddef.h>

/* Where a loop of the optimizer runs in a step. */
typedef enum framework_where {
  FRAMEWORK_BEFORE_BACKWARD,    /* before the step's first backward */
  FRAMEWORK_AFTER_BACKWARD      /* after backward and the data-parallel gradient reduction */
} framework_where;

/* One loop over the rank's parameter tensors, in order: for each tensor, `kernels` kernels
 * moving `bytes` bytes per element of the tensor in all, then, with `sync`, the host reads a
 * value back (an .item(): it waits for the GPU to finish everything launched). With
 * `then_reduce`, the loop ends with a one-value allreduce over the tensor group and a read
 * of its result. */
typedef struct framework_loop {
  const char *what;
  framework_where where;
  unsigned kernels;
  double bytes;
  int sync;
  int then_reduce;
} framework_loop;

#define FRAMEWORK_MAX_LOOPS 8

typedef struct framework {
  const char *name;
  const char *what;      /* one line for `dtsim list` and the key reference */
  double op_s;           /* host seconds per kernel launched: the interpreter, the framework's
                            dispatch and autograd, the launch */
  double sync_s;         /* a host-device synchronisation's round trip (seconds) */
  double rng_bytes;      /* bytes a CUDA RNG state get or set copies over PCIe; each one also
                            waits for the GPU (cudaMemcpy); 0: the state lives on the host */
  double pageable_bw;    /* bytes/s of those copies when the host side is pageable memory, as the
                            era's state tensor is (the driver stages each copy through a pinned
                            buffer of its own); 0: at the host link's rate */
  /* RNG state copies around a layer (each a get or a set): a forked generator around the
   * attention's dropout (fork_in copies before the layer's attention, fork_out after it), and
   * activation checkpointing's saves: ckpt_fwd before the forward, ckpt_bwd_in before the
   * recomputation, ckpt_bwd_out after it */
  unsigned fork_in, fork_out, ckpt_fwd, ckpt_bwd_in, ckpt_bwd_out;
  int timer_syncs;       /* 1: a synchronisation at the step's start and after its forward, its
                            backward and its optimizer (the era's step timers) */
  /* Data parallelism after backward (tensor.dp_overlap = off): the gradients flattened into
   * one buffer (flat_kernels moving flat_bytes per element of it), allreduced, a
   * synchronisation, then copied back tensor by tensor (copy_kernels, copy_bytes each) */
  unsigned flat_kernels, copy_kernels;
  double flat_bytes, copy_bytes;
  size_t n_loops;
  framework_loop loops[FRAMEWORK_MAX_LOOPS];
} framework;

/* The era named `name`, or NULL for "none" and any unknown name. */
const framework *framework_find(const char *name);
/* i-th era (NULL past the end); "none" is not one. */
const framework *framework_at(size_t i);

/* Kernels a loop launches over `tensors` tensors of `elems` elements in all, and the bytes
 * they move: tensors x kernels, elems x bytes. */
double framework_loop_kernels(const framework_loop *l, size_t tensors);
double framework_loop_bytes(const framework_loop *l, double elems);

/* RNG state copies per layer and microbatch: forward (with recompute, the checkpoint's
 * save and the fork's; without, the fork's alone) and the recomputation's (0 without). */
unsigned framework_fwd_copies(const framework *f, int recompute);
unsigned framework_recompute_copies(const framework *f);

#endif

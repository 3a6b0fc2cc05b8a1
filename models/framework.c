/* framework.c - the framework eras of model.framework: their host constants and the loops
 * their optimizers run over the parameter tensors, each read off a measurement or the code
 * of the era (comments give the source of every number). */
#include "models/framework.h"

#include <string.h>

/* Megatron-LM as its 2019 paper ran it: commit ebbe40cd of October 2019 on PyTorch 1.1 (the
 * NGC 19.05 container its Dockerfile names), fp16 with FP16_Optimizer and apex's FusedAdam.
 *  - op_s: launching one operator cost ~40 us of CPU time in PyTorch of late 2018 against a
 *    kernel of < 10 us (a JIT-fused LSTM cell, as the autograd profiler reports it; PyTorch's
 *    maintainers, pytorch/pytorch issue 13049, Oct 2018), taken as the cost of each kernel the
 *    eager Python code launches with its views, autograd records and module calls around it.
 *  - sync_s: on a V100 a 2.9-us kernel launched with a stream synchronisation after each took
 *    9.6 us per kernel, 3.8 us without (A. Gray, "Getting Started with CUDA Graphs", NVIDIA
 *    developer blog, 2019): 5.8 us per synchronisation.
 *  - rng_bytes: torch.cuda.get_rng_state and set_rng_state copied the generator's 200 MTGP32
 *    states of 4,120 bytes with cudaMemcpy (PyTorch's aten/src/THC/THCTensorRandom.cu,
 *    THCRandom_getRNGState and _setRNGState, until PyTorch 1.4 kept the state on the host).
 *  - pageable_bw: the state's host side is a plain THByteTensor, pageable memory, so the driver
 *    copies it through a pinned staging buffer of its own; copies between a GPU and pageable
 *    memory ran at 5-6 GB/s where pinned ones ran at 11-12 GB/s (a PCIe 3.0 x16 GPU)
 *    (pentschev, measuring RAPIDS's device-to-host spilling in August 2019: rapidsai/dask-cuda
 *    pull request 98): 5.5e9, the middle.
 *  - the copies: mpu/transformer.py forks the model-parallel generator around the attention's
 *    dropout (mpu/random.py fork: get and set the state before, get and set after); with
 *    --checkpoint-activations, CheckpointFunction saves the state before the forward (a get)
 *    and, before the recomputation, gets the current state and sets the saved one, setting the
 *    current one back after it.
 *  - timer_syncs: utils.py's Timer calls torch.cuda.synchronize at every start and stop
 *    (pretrain_gpt2.py's forward, backward and optimizer timers).
 *  - Megatron's own DDP (model/distributed.py allreduce_params): _flatten_dense_tensors (one
 *    cat: fp16 read and written, 4 bytes) and the division by the group size (4), the
 *    allreduce, torch.cuda.synchronize, each tensor copied back (4).
 *  - the loops (fp16/fp16.py, fp16/loss_scaler.py, mpu/grads.py, pretrain_gpt2.py's
 *    backward_step and train_step): zero_grad zeroes the fp32 master and the fp16 gradient
 *    (4 + 2 bytes); the dynamic loss scaler's overflow check float(x.float().sum()) per tensor
 *    (2 + 4 + 4 bytes and an .item()), then the flag's allreduce over the model-parallel group
 *    and its .item(); the fp16 gradient copied to the master (2 + 4) and scaled (4 + 4); the
 *    clipping's norm per tensor (4 and an .item()), the allreduce and .item() of the total;
 *    FusedAdam, one kernel per tensor (reads the fp32 parameter, gradient and two moments,
 *    writes three: 28); the master copied to the fp16 parameter (4 + 2). The clipping's
 *    rescaling, which runs only when the norm exceeds the bound, is left out. */
static const framework eras[] = {
    {.name = "megatron-2019",
     .what = "Megatron-LM 2019: PyTorch 1.1 eager, THC's RNG state copies, FP16_Optimizer with apex FusedAdam",
     .op_s = 40e-6, .sync_s = 9.6e-6 - 3.8e-6, .rng_bytes = 200 * 4120.0,
     .pageable_bw = 5.5e9,
     .fork_in = 2, .fork_out = 2, .ckpt_fwd = 1, .ckpt_bwd_in = 2, .ckpt_bwd_out = 1, .timer_syncs = 1,
     .flat_kernels = 2, .flat_bytes = 8, .copy_kernels = 1, .copy_bytes = 4,
     .n_loops = 6,
     .loops = {{"zero_grad", FRAMEWORK_BEFORE_BACKWARD, 2, 6, 0, 0},
               {"overflow check", FRAMEWORK_AFTER_BACKWARD, 2, 10, 1, 1},
               {"master gradients", FRAMEWORK_AFTER_BACKWARD, 2, 14, 0, 0},
               {"gradient norm", FRAMEWORK_AFTER_BACKWARD, 1, 4, 1, 1},
               {"adam", FRAMEWORK_AFTER_BACKWARD, 1, 28, 0, 0},
               {"master to model", FRAMEWORK_AFTER_BACKWARD, 1, 6, 0, 0}}},
};

#define N_ERAS (sizeof eras / sizeof eras[0])

const framework *framework_find(const char *name)
{
  for (size_t i = 0; name && i < N_ERAS; i++)
    if (strcmp(eras[i].name, name) == 0)
      return &eras[i];
  return NULL;
}

const framework *framework_at(size_t i) { return i < N_ERAS ? &eras[i] : NULL; }

double framework_loop_kernels(const framework_loop *l, size_t tensors) { return (double)l->kernels * (double)tensors; }

double framework_loop_bytes(const framework_loop *l, double elems) { return l->bytes * elems; }

unsigned framework_fwd_copies(const framework *f, int recompute)
{
  return f->fork_in + f->fork_out + (recompute ? f->ckpt_fwd : 0);
}

unsigned framework_recompute_copies(const framework *f)
{
  return f->ckpt_bwd_in + f->fork_in + f->fork_out + f->ckpt_bwd_out;
}

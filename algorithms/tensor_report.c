/* tensor_report.c - what a run.algorithm = tensor run reports: summary.json's "tensor"
 * block (shapes, model flops as PTD-P counts them, Narayanan et al. 2021; the data-parallel
 * allreduce; the numeric check against the serial stack of Megatron-LM's layers, Shoeybi
 * et al. 2019; the per-GPU memory estimate) and the closing line. */
#include "algorithms/tensor.h"

#include <stdio.h>
#include <jansson.h>
#include <simgrid/host.h>

#include "algorithms/report.h"
#include "algorithms/tensor_impl.h"

/* summary.json's "tensor" block: the shapes, the flop rate, the data-parallel allreduce
 * and the numeric check. */
void tensor_run_report(void *state, const run_config *cfg, metrics *m, report *rep)
{
  (void)m;
  tensor_run *r = state;
  const tensor_params *p = r->p;
  tensor_result_get(r->t, &r->r);
  r->peak_flops = sg_host_get_pstate_speed(cfg->hosts[0], 0) * cfg->speed_factor * cfg->cores; /* uncapped */
  rep->examples = p->steps * p->microbatches * (long)p->microbatch * (long)p->dp;
  rep->step_time_s = r->r.step_s;
  rep->model_flops = r->r.model_flops;
  rep->flops_time_s = r->r.time_s;
  rep->devices = p->ranks * p->dp;
  rep->worker_role = "tensor";
  json_t *o = json_object();
  json_object_set_new(o, "ranks", json_integer((json_int_t)p->ranks));
  json_object_set_new(o, "data_parallel", json_integer((json_int_t)p->dp));
  json_object_set_new(o, "gpus", json_integer((json_int_t)(p->ranks * p->dp)));
  json_object_set_new(o, "hidden", json_integer((json_int_t)p->hidden));
  json_object_set_new(o, "heads", json_integer((json_int_t)p->heads));
  json_object_set_new(o, "layers", json_integer((json_int_t)p->layers));
  json_object_set_new(o, "seq", json_integer((json_int_t)p->seq));
  json_object_set_new(o, "microbatch", json_integer((json_int_t)p->microbatch));
  json_object_set_new(o, "microbatches", json_integer(p->microbatches));
  json_object_set_new(o, "sequence_parallel", json_boolean(p->seqpar));
  json_object_set_new(o, "async_grad_allreduce", json_boolean(p->async_grad));
  json_object_set_new(o, "layer_flops_forward", report_num(tensor_layer_flops(p)));
  json_object_set_new(o, "model_flops", report_num(r->r.model_flops));
  json_object_set_new(o, "step_time_s", report_num(r->r.step_s));
  json_object_set_new(o, "tflops_per_gpu", report_num(r->r.tflops_per_gpu));
  json_object_set_new(o, "dp_allreduce_elements", report_num(r->r.dp_elements));
  json_object_set_new(o, "dp_allreduce_s", report_num(r->r.dp_allreduce_s));
  json_object_set_new(o, "dp_buckets", json_integer((json_int_t)r->r.dp_buckets));
  json_object_set_new(o, "fraction_of_peak", report_num(r->r.tflops_per_gpu * 1e12 / r->peak_flops));
  json_t *ck = json_object();
  json_object_set_new(ck, "numeric", json_boolean(r->r.numeric));
  json_object_set_new(ck, "max_rel_error", r->r.numeric ? report_num(r->r.max_rel_error) : json_null());
  json_object_set_new(o, "check", ck);
  /* What one GPU would hold: its share of the parameters (tensor_dp_elements) and their
   * gradients in model.dtype, Adam's state, and one microbatch's activations of every
   * layer (a step runs its microbatches one after the other). */
  double params = tensor_dp_elements(p), eb = (double)cfg->elem_bytes;
  double act = (double)p->layers * tensor_layer_activation_bytes(p);
  json_t *mem = json_object();
  json_object_set_new(mem, "parameters", report_num(params));
  json_object_set_new(mem, "parameters_bytes", report_num(params * eb));
  json_object_set_new(mem, "gradients_bytes", report_num(params * eb));
  json_object_set_new(mem, "optimizer", json_string("adam (assumed: the run applies no optimizer)"));
  json_object_set_new(mem, "optimizer_bytes", report_num(params * tensor_optimizer_bytes_per_param(cfg->elem_bytes)));
  json_object_set_new(mem, "activations_bytes", report_num(act));
  r->memory_bytes = params * (2 * eb + tensor_optimizer_bytes_per_param(cfg->elem_bytes)) + act;
  json_object_set_new(mem, "total_bytes", report_num(r->memory_bytes));
  json_object_set_new(o, "memory_per_gpu", mem);
  report_add_block(rep, "tensor", o);
}

void tensor_run_closing(void *state, const run_config *cfg, const report_outcome *o, char *line, size_t len)
{
  (void)cfg;
  const tensor_run *r = state;
  char shares[300], mem[32];
  report_perf_text(&o->perf, 0, shares, sizeof shares);
  report_bytes_text(r->memory_bytes, mem, sizeof mem);
  snprintf(line, len, "tensor %s: %zu x %zu GPUs, %.6g simulated s per step, %.4g Tflop/s per GPU (MFU %.3g%%), "
           "about %s per GPU%s%s%s", o->status, r->p->ranks, r->p->dp, r->r.step_s, r->r.tflops_per_gpu,
           100 * r->r.tflops_per_gpu * 1e12 / r->peak_flops, mem,
           r->r.numeric ? ", numerics checked" : "", shares[0] ? "; " : "", shares);
}

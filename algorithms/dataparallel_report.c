/* dataparallel_report.c - summary.json's "dataparallel" block: the collective, the
 * buckets and the collectives each replica ran, and, when the run opts in to ZeRO or Adam,
 * the stage and the memory per GPU of what replica 0 holds. */
#include <jansson.h>

#include "algorithms/dataparallel_impl.h"
#include "algorithms/tensor_stage.h"
#include "models/mem.h"

/* What replica 0 holds (its shards are the largest: coll_block gives the first ranks the
 * extra elements), in model.dtype bytes: its parameters (stage 3: its shard), its gradients
 * (stages 2 and 3: its shard), the optimizer state (Adam as Megatron's, 12 bytes per 16-bit
 * parameter, 8 per fp32 one; SGD none; stages 1 to 3: its shard's), stage 3's gathered
 * layers (at most two at once: the one computing and the one prefetched), and the
 * activations backward reads (every layer's outputs, the input included, for its minibatch).
 * Beside them, the model state ZeRO's formula gives (mem_zero_state). */
static json_t *memory_json(const dataparallel *d, const run_config *cfg, double *total)
{
  const dataparallel_params *p = d->p;
  const replica *r0 = &d->reps[0];
  double eb = (double)cfg->elem_bytes, psi = 0, gathered = 0, act = 0;
  double k = p->optimizer == DATAPARALLEL_ADAM ? tensor_optimizer_bytes_per_param(cfg->elem_bytes) : 0;
  for (size_t u = 0; u < d->nu; u++)
    psi += d->uelems[u];
  for (size_t l = 1; p->zero == 3 && l < d->n_layers; l++) {
    double two = arch_layer_params(d->shapes, l) + (l + 1 < d->n_layers ? arch_layer_params(d->shapes, l + 1) : 0);
    gathered = two * eb > gathered ? two * eb : gathered;
  }
  for (size_t l = 0; l < d->n_layers; l++)
    act += (double)arch_units(d->shapes, l) * (double)p->batch * eb;
  double params = (p->zero == 3 ? r0->shard_sim : psi) * eb, grads = (p->zero >= 2 ? r0->shard_sim : psi) * eb;
  double opt = (p->zero >= 1 ? r0->shard_sim : psi) * k;
  mem_zero f = mem_zero_state(p->zero, psi, (double)p->replicas, eb, k);
  *total = params + grads + opt + gathered + act;
  json_t *mem = json_object();
  json_object_set_new(mem, "parameters", report_num(psi));
  json_object_set_new(mem, "parameters_bytes", report_num(params));
  json_object_set_new(mem, "gradients_bytes", report_num(grads));
  json_object_set_new(mem, "optimizer_bytes", report_num(opt));
  json_object_set_new(mem, "gathered_bytes", report_num(gathered));
  json_object_set_new(mem, "activations_bytes", report_num(act));
  json_object_set_new(mem, "total_bytes", report_num(*total));
  json_object_set_new(mem, "model_state_bytes", report_num(params + grads + opt));
  json_object_set_new(mem, "model_state_formula_bytes", report_num(mem_zero_total(&f)));
  return mem;
}

/* summary.json's "dataparallel" block: the buckets and the allreduces; with dataparallel.zero
 * or optimizer = adam (a run that opts in) also the stage, the optimizer, the reduce-scatters
 * and allgathers, and memory_per_gpu. */
void dataparallel_report(void *state, const run_config *cfg, metrics *m, report *rep)
{
  dataparallel_run *r = state;
  rep->examples = metrics_total_steps(m) * r->p->batch * r->p->replicas;
  rep->step_workers = 1; /* steps are global */
  rep->model_flops = (double)rep->examples * cfg->train_flops;
  rep->devices = (size_t)r->p->replicas;
  rep->worker_role = "dp-replica";
  const double *elems;
  size_t nb = dataparallel_bucket_elems(r->d, &elems);
  json_t *o = json_object(), *b = json_array();
  json_object_set_new(o, "collective", json_string(coll_algo_name((coll_algo)r->p->algo)));
  for (size_t i = 0; i < nb; i++)
    json_array_append_new(b, json_real(elems[i]));
  json_object_set_new(o, "bucket_elements", b);
  json_object_set_new(o, "allreduces_per_replica", json_integer(dataparallel_allreduces(r->d)));
  const compressed *cz = dataparallel_compressed(r->d);
  if (cz) { /* after the warm-up: the steady message */
    json_object_set_new(o, "compress", json_string(compress_method_name((compress_method)r->p->compress)));
    json_object_set_new(o, "bytes_per_step", json_real(compressed_step_bytes(cz, r->p->compress_warmup)));
    json_object_set_new(o, "dense_bytes_per_step", json_real(compressed_dense_bytes(cz)));
  }
  if (r->p->local_steps > 1)
    json_object_set_new(o, "local_steps", json_integer(r->p->local_steps));
  if (r->p->zero > 0 || r->p->optimizer != DATAPARALLEL_SGD) {
    const replica *r0 = &r->d->reps[0];
    double total;
    json_object_set_new(o, "zero", json_integer(r->p->zero));
    json_object_set_new(o, "optimizer", json_string(r->p->optimizer == DATAPARALLEL_ADAM ? "adam" : "sgd"));
    json_object_set_new(o, "reduce_scatters_per_replica", json_integer(r0->reduce_scatters));
    json_object_set_new(o, "allgathers_per_replica", json_integer(r0->allgathers));
    json_object_set_new(o, "memory_per_gpu", memory_json(r->d, cfg, &total));
  }
  report_add_block(rep, "dataparallel", o);
}

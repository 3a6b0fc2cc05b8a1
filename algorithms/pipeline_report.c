/* pipeline_report.c - what a pipeline run reports: summary.json's "pipeline" block (the
 * schedule, the split, the bubble against PTD-P sec. 2.2's formula in both conventions,
 * per-stage busy, idle and stash, the most loaded GPU's memory; with 3D parallelism its
 * groups and flop rate, with numeric GPT stages the losses and the serial check),
 * pipeline.csv (one row per stage), and the closing line. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <gsl/gsl_vector.h>
#include <jansson.h>
#include <simgrid/host.h>
#include <xbt/sysdep.h>

#include "algorithms/collectives.h"
#include "algorithms/pipeline_impl.h"
#include "algorithms/tensor_stage.h"
#include "models/data.h"
#include "models/gpt.h"
#include "models/mem.h"

/* Host names of a communicator's members in rank order. */
static json_t *comm_hosts(const coll_comm *c)
{
  json_t *a = json_array();
  for (size_t i = 0; i < coll_comm_size(c); i++)
    json_array_append_new(a, json_string(sg_host_get_name(coll_comm_host(c, i))));
  return a;
}

/* The 3D part of the pipeline block: shapes, flop rate, and the groups the run used
 * (tensor_groups[s d + j]: stage s replica j's hosts; dp_groups[s t + r]: stage s tensor
 * rank r's data-parallel hosts). */
static void pipeline3d_json(json_t *o, const pipeline_run *r, const pipeline_result *pr)
{
  const pipeline_params *p = &r->p;
  const tensor_params *tp = r->tp;
  json_object_set_new(o, "model", json_string("transformer"));
  json_object_set_new(o, "scatter_gather", json_boolean(p->scatter_gather));
  json_object_set_new(o, "tensor_ranks", json_integer((json_int_t)tp->ranks));
  json_object_set_new(o, "data_parallel", json_integer((json_int_t)tp->dp));
  json_object_set_new(o, "mirror_replicas", json_boolean(p->mirror && tp->dp > 1));
  json_object_set_new(o, "model_flops", report_num(pr->model_flops));
  json_object_set_new(o, "tflops_per_gpu", report_num(pr->tflops_per_gpu));
  json_t *tg = json_array(), *dg = json_array();
  for (size_t s = 0; s < p->stages; s++)
    for (size_t j = 0; j < tp->dp; j++)
      json_array_append_new(tg, comm_hosts(pipeline_tensor_comm(r->pl, s, j)));
  for (size_t s = 0; tp->dp > 1 && s < p->stages; s++)
    for (size_t k = 0; k < tp->ranks; k++)
      json_array_append_new(dg, comm_hosts(pipeline_dp_comm(r->pl, s, k)));
  json_object_set_new(o, "tensor_groups", tg);
  json_object_set_new(o, "dp_groups", dg);
  double gathered, scattered, layer;
  if (pipeline_zero_get(r->pl, &gathered, &scattered, &layer) == 0) {
    json_t *z = json_object();
    json_object_set_new(z, "stage", json_integer(p->zero));
    if (p->zero == 3)
      json_object_set_new(z, "layer_elements", report_num(layer));
    json_object_set_new(z, "gathered_elements", report_num(gathered));
    json_object_set_new(z, "reduce_scattered_elements", report_num(scattered));
    json_object_set_new(o, "zero", z);
  }
}

/* FNV-1a (Fowler, Noll, Vo) over the bytes of x: equal vectors, bit for bit, give equal hashes. */
static uint64_t fnv1a(const double *x, size_t n)
{
  const unsigned char *b = (const unsigned char *)x;
  uint64_t h = 14695981039346656037ULL;
  for (size_t i = 0; i < n * sizeof(double); i++)
    h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}

/* Numeric transformer stages: the "gpt" part of the pipeline block (the model, its language,
 * the losses, whether every copy of an entry agrees) and, with serial_check, "check": the
 * largest |difference| between the run's parameters and the serial GPT's after the same steps,
 * and that relative to how far the serial parameters moved from the start. */
static void pipeline_gpt_json(json_t *o, const pipeline_run *r, const metrics *m, long steps)
{
  pipeline_gpt_result g;
  if (pipeline_gpt_get(r->pl, &g) != 0)
    return;
  size_t ne = metrics_n_evals(m);
  double last = ne > 0 ? metrics_eval_at(m, ne - 1)->loss : NAN;
  char hash[24];
  snprintf(hash, sizeof hash, "%016llx", (unsigned long long)fnv1a(g.w->data, g.w->size));
  const gpt_dims *d = g.dims;
  json_t *x = json_object();
  json_object_set_new(x, "vocab", json_integer((json_int_t)d->vocab));
  json_object_set_new(x, "seq", json_integer((json_int_t)d->seq));
  json_object_set_new(x, "hidden", json_integer((json_int_t)d->hidden));
  json_object_set_new(x, "heads", json_integer((json_int_t)d->heads));
  json_object_set_new(x, "layers", json_integer((json_int_t)d->layers));
  json_object_set_new(x, "params", json_integer((json_int_t)gpt_n_params(d)));
  json_object_set_new(x, "optimizer", json_string(r->p.optimizer == PIPELINE_OPT_ADAM ? "adam" : "sgd"));
  json_object_set_new(x, "lr", report_num(r->p.lr));
  json_object_set_new(x, "train_sequences", json_integer((json_int_t)g.train_sequences));
  json_object_set_new(x, "test_sequences", json_integer((json_int_t)g.test_sequences));
  json_object_set_new(x, "loss_floor", report_num(data_tokens_loss_floor(d->seq + 1, d->vocab)));
  json_object_set_new(x, "initial_loss", report_num(g.initial_loss));
  json_object_set_new(x, "initial_accuracy", report_num(g.initial_accuracy));
  json_object_set_new(x, "initial_perplexity", report_num(exp(g.initial_loss)));
  json_object_set_new(x, "final_perplexity", report_num(exp(last)));
  json_object_set_new(x, "train_loss", report_num(g.train_loss));
  json_object_set_new(x, "copies_max_diff", report_num(g.copies_diff));
  json_object_set_new(x, "params_hash", json_string(hash));
  json_object_set_new(o, "gpt", x);
  json_t *ck = json_object();
  json_object_set_new(ck, "serial", json_boolean(r->p.serial_check));
  if (r->p.serial_check) {
    gsl_vector *ws = gsl_vector_alloc(g.w->size);
    pipeline_gpt_serial(r->pl, steps, ws);
    double diff = 0, moved = 0;
    for (size_t i = 0; i < ws->size; i++) {
      diff = fmax(diff, fabs(g.w->data[i] - ws->data[i]));
      moved = fmax(moved, fabs(ws->data[i] - g.w0->data[i]));
    }
    json_object_set_new(ck, "steps", json_integer(steps));
    json_object_set_new(ck, "max_abs_error", report_num(diff));
    json_object_set_new(ck, "max_moved", report_num(moved));
    json_object_set_new(ck, "max_rel_error", moved > 0 ? report_num(diff / moved) : json_null());
    gsl_vector_free(ws);
  }
  json_object_set_new(o, "check", ck);
}

/* What the most loaded GPU would hold: its stage's parameters and gradients in
 * model.dtype, pipeline.optimizer's state (SGD keeps none; Adam as Megatron's, 12 bytes
 * per 16-bit parameter) and its peak stash, the activations kept for backward. ZeRO's
 * formula (mem_zero_state) on the device's entries: ZeRO-1 shards the optimizer state over
 * the d replicas; ZeRO-3's device holds 1/d of its entries (each one's whole state, stage 0's
 * formula on the shard) and three layers' gathered buffers. The block of that GPU; its total
 * bytes into *total_bytes. */
static json_t *memory_json(const pipeline_run *r, const run_config *cfg, double *total_bytes)
{
  const pipeline_params *p = &r->p;
  double best = -1;
  json_t *mem = json_object();
  for (size_t s = 0; s < p->stages; s++) {
    pipeline_stage_stats st;
    pipeline_stage_get(r->pl, s, &st);
    double eb = (double)cfg->elem_bytes, g, sc, layer = 0;
    double shard = st.params; /* ZeRO-3: the device's 1/d of them, and two gathered layers and one layer's gradient */
    int zero1 = p->zero == 1 && pipeline_zero_get(r->pl, &g, &sc, &layer) == 0;
    if (p->zero == 3 && pipeline_zero_get(r->pl, &g, &sc, &layer) == 0)
      shard = st.params / (double)r->tp->dp;
    double k = p->optimizer == PIPELINE_OPT_ADAM ? tensor_optimizer_bytes_per_param(cfg->elem_bytes) : 0;
    mem_zero z = mem_zero_state(zero1 ? 1 : 0, shard, (double)r->tp->dp, eb, k); /* 0: everything of `shard` */
    double opt = z.optimizer, total = z.params + z.grads + opt + st.peak_stash_bytes + 3 * layer * eb;
    if (total <= best)
      continue;
    best = total;
    json_object_clear(mem);
    json_object_set_new(mem, "stage", json_integer((json_int_t)s));
    json_object_set_new(mem, "parameters", report_num(st.params));
    json_object_set_new(mem, "parameters_bytes", report_num(z.params));
    json_object_set_new(mem, "gradients_bytes", report_num(z.grads));
    if (layer > 0)
      json_object_set_new(mem, "gathered_bytes", report_num(3 * layer * eb));
    json_object_set_new(mem, "optimizer", json_string(p->optimizer == PIPELINE_OPT_ADAM ? "adam" : "sgd (no state)"));
    json_object_set_new(mem, "optimizer_bytes", report_num(opt));
    json_object_set_new(mem, "stash_bytes", report_num(st.peak_stash_bytes));
    json_object_set_new(mem, "total_bytes", report_num(total));
  }
  *total_bytes = best;
  return mem;
}

/* summary.json's "pipeline" block (the schedule, the split, the bubble against its
 * formula in both conventions, per-stage busy, idle and stash) and pipeline.csv, one row
 * per stage. */
void pipeline_report(void *state, const run_config *cfg, metrics *m, report *rep)
{
  pipeline_run *r = state;
  const pipeline_params *p = &r->p;
  pipeline_result pr;
  pipeline_result_get(r->pl, &pr);
  rep->examples = metrics_total_steps(m) * p->microbatches * p->microbatch * (p->transformer ? (long)r->tp->dp : 1);
  rep->step_time_s = pr.steps > 0 ? pr.makespan_s / (double)pr.steps : NAN;
  rep->model_flops = p->transformer ? pr.model_flops : (double)rep->examples * cfg->train_flops;
  rep->flops_time_s = pr.makespan_s;
  rep->devices = pr.gpus;
  rep->worker_role = "pp-device";
  if (p->mirror && p->transformer && r->tp->dp > 1) { /* hosts[(s dp + j) t + r] mirrors (s, 0, r): pipeline.c */
    size_t t = r->tp->ranks, lanes = t * r->tp->dp;
    rep->n_twins = p->stages * lanes;
    rep->twins = xbt_malloc(rep->n_twins * sizeof *rep->twins);
    for (size_t i = 0; i < rep->n_twins; i++)
      rep->twins[i] = i / lanes * lanes + i % lanes % t;
  }
  json_t *o = json_object(), *split = json_array(), *stages = json_array();
  json_object_set_new(o, "schedule", json_string(pipeline_schedule_name((pipeline_schedule)p->schedule)));
  json_object_set_new(o, "stages", json_integer((json_int_t)p->stages));
  json_object_set_new(o, "microbatches", json_integer(p->microbatches));
  json_object_set_new(o, "microbatch", json_integer(p->microbatch));
  json_object_set_new(o, "chunks", json_integer((json_int_t)p->chunks));
  json_object_set_new(o, "recompute", json_boolean(p->recompute));
  for (size_t c = 0; c < p->stages * p->chunks; c++) {
    size_t first, last;
    pipeline_chunk_layers(r->pl, c, &first, &last);
    json_t *a = json_array();
    json_array_append_new(a, json_integer((json_int_t)first));
    json_array_append_new(a, json_integer((json_int_t)last));
    json_array_append_new(split, a);
  }
  json_object_set_new(o, "chunk_layers", split);
  json_object_set_new(o, "makespan_s", report_num(pr.makespan_s));
  json_object_set_new(o, "bubble_fraction", report_num(pr.bubble_fraction));
  json_object_set_new(o, "formula", report_num(pr.formula));
  json_object_set_new(o, "formula_ideal", report_num(pr.formula_ideal));
  json_object_set_new(o, "t_forward_s", report_num(pr.t_forward_s));
  json_object_set_new(o, "t_backward_s", report_num(pr.t_backward_s));
  report_text t = {0};
  report_printf(&t, "stage,params,forward_s,backward_s,recompute_s,update_s,busy_s,idle_s,idle_fraction,peak_stashed,"
                "peak_stash_bytes,bytes_sent\n");
  for (size_t s = 0; s < p->stages; s++) {
    pipeline_stage_stats st;
    pipeline_stage_get(r->pl, s, &st);
    json_t *x = json_object();
    json_object_set_new(x, "busy_s", report_num(st.busy_s));
    json_object_set_new(x, "idle_s", report_num(st.idle_s));
    json_object_set_new(x, "peak_stashed", json_integer(st.peak_stashed));
    json_object_set_new(x, "peak_stash_bytes", report_num(st.peak_stash_bytes));
    json_object_set_new(x, "bytes_sent", report_num(st.bytes_sent));
    json_object_set_new(x, "update_s", report_num(st.update_s));
    json_object_set_new(x, "params", report_num(st.params));
    json_array_append_new(stages, x);
    double f[] = {st.params, st.forward_s, st.backward_s, st.recompute_s, st.update_s, st.busy_s, st.idle_s,
                  pr.makespan_s > 0 ? st.idle_s / pr.makespan_s : 0};
    report_printf(&t, "%zu", s);
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
      report_printf(&t, ",");
      report_double(&t, f[i]);
    }
    report_printf(&t, ",%ld,", st.peak_stashed);
    report_double(&t, st.peak_stash_bytes);
    report_printf(&t, ",");
    report_double(&t, st.bytes_sent);
    report_printf(&t, "\n");
  }
  json_object_set_new(o, "per_stage", stages);
  json_t *mem = memory_json(r, cfg, &r->memory_bytes);
  json_object_set_new(o, "memory_per_gpu", mem);
  json_object_set_new(o, "gpus", json_integer((json_int_t)pr.gpus));
  json_object_set_new(o, "p2p_bytes", report_num(pr.p2p_bytes));
  if (p->transformer)
    pipeline3d_json(o, r, &pr);
  if (p->transformer && cfg->numerics)
    pipeline_gpt_json(o, r, m, pr.steps);
  report_add_block(rep, "pipeline", o);
  report_add_file(rep, "pipeline.csv", &t);
}

void pipeline_closing(void *state, const run_config *cfg, const report_outcome *o, char *line, size_t len)
{
  pipeline_run *r = state;
  pipeline_result pr;
  pipeline_result_get(r->pl, &pr);
  char perf[400], mem[32];
  report_bytes_text(r->memory_bytes, mem, sizeof mem);
  if (!r->p.transformer) {
    report_perf_text(&o->perf, 1, perf, sizeof perf);
    int n = snprintf(line, len, "pipeline %s: %.6g simulated s, %ld step%s", o->status, o->sim_time, o->steps,
                     o->steps == 1 ? "" : "s");
    if (o->evaluated && o->has_loss)
      n += snprintf(line + n, len - (size_t)n, ", loss %.6g", o->loss);
    if (o->evaluated && o->has_accuracy)
      n += snprintf(line + n, len - (size_t)n, ", accuracy %.6g", o->accuracy);
    snprintf(line + n, len - (size_t)n, ", bubble %.4g, about %s per device; %s", pr.bubble_fraction, mem, perf);
    return;
  }
  report_perf_text(&o->perf, 0, perf, sizeof perf);
  double peak = sg_host_get_pstate_speed(cfg->hosts[0], 0) * cfg->speed_factor * cfg->cores; /* uncapped */
  int n = snprintf(line, len, "pipeline %s: %zu x %zu x %zu GPUs (p x t x d), %.6g simulated s per step, %.4g Tflop/s "
                   "per GPU (MFU %.3g%%), bubble %.4g, about %s per GPU", o->status, r->p.stages, r->tp->ranks, r->tp->dp,
                   pr.steps > 0 ? pr.makespan_s / (double)pr.steps : 0, pr.tflops_per_gpu,
                   100 * pr.tflops_per_gpu * 1e12 / peak, pr.bubble_fraction, mem);
  pipeline_gpt_result g;
  if (n > 0 && (size_t)n < len && pipeline_gpt_get(r->pl, &g) == 0)
    n += snprintf(line + n, len - (size_t)n, ", held-out loss %.6g (%.6g before training), accuracy %.4g",
                  o->evaluated ? o->loss : NAN, g.initial_loss, o->evaluated ? o->accuracy : NAN);
  if (perf[0] && n > 0 && (size_t)n < len)
    snprintf(line + n, len - (size_t)n, "; %s", perf);
}

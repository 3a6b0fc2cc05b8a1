/* downpour_report.c - what a Downpour SGD run reports (Dean et al. 2012, section 4.1):
 * the examples, the model flops and the devices of the summary; the shards' updates are
 * not counted as model flops; with downpour.compress, the bytes of a replica's push. */
#include <jansson.h>

#include "algorithms/downpour_impl.h"

/* summary.json's "downpour" block, with downpour.compress only (a run that opts in): the
 * method, and one replica's push over all its slices (every machine's, for a split
 * replica), compressed after the warm-up and dense, in model.dtype; no message headers. */
static void compress_block(const downpour *d, const run_config *cfg, report *rep)
{
  double z = 0, dense = 0;
  for (int q = 0; q < d->p->partitions; q++)
    for (size_t i = 0; i < d->layouts[q]->n_links; i++) {
      double n = d->layouts[q]->link[i].sim_elems;
      z += ps_compress_bytes(&d->zp, n, d->p->compress_warmup, cfg->elem_bytes);
      dense += n * (double)cfg->elem_bytes;
    }
  json_t *o = json_object();
  json_object_set_new(o, "compress", json_string(compress_method_name(d->zp.method)));
  json_object_set_new(o, "bytes_per_push", json_real(z));
  json_object_set_new(o, "dense_bytes_per_push", json_real(dense));
  report_add_block(rep, "downpour", o);
}

/* summary.json's "downpour" block of a run whose shards ran as a bank (ps_bank.h). */
static void bank_block(const run_config *cfg, const downpour_params *p, report *rep)
{
  json_t *o = json_object();
  json_object_set_new(o, "ps_bank", json_string("bank"));
  json_object_set_new(o, "bank_hosts", json_integer((json_int_t)cfg->n_banks));
  json_object_set_new(o, "shards_per_bank", json_real((double)p->ps_shards / (double)cfg->n_banks));
  report_add_block(rep, "downpour", o);
}

void downpour_report_run(void *state, const run_config *cfg, metrics *m, report *rep)
{
  const downpour_run *r = state;
  const downpour_params *p = r->p;
  rep->examples = metrics_total_steps(m) * p->batch;
  rep->step_workers = (size_t)p->replicas;
  rep->step = "replica step";
  rep->model_flops = (double)rep->examples * cfg->train_flops; /* the shards' updates are not counted */
  rep->devices = (size_t)p->replicas * (size_t)p->partitions;
  rep->worker_role = p->partitions > 1 ? "dpart" : "replica";
  if (p->compress != COMPRESS_NONE)
    compress_block(r->d, cfg, rep);
  if (cfg->n_banks > 0) /* downpour.ps_bank: the model the run used (exact runs say nothing, as before) */
    bank_block(cfg, p, rep);
}

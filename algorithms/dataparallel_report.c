/* dataparallel_report.c - summary.json's "dataparallel" block: the collective, the
 * buckets and the allreduces each replica ran. */
#include <jansson.h>

#include "algorithms/dataparallel_impl.h"

/* summary.json's "dataparallel" block: the buckets and the allreduces. */
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
  report_add_block(rep, "dataparallel", o);
}

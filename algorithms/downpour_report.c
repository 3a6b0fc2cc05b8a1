/* downpour_report.c - what a Downpour SGD run reports (Dean et al. 2012, section 4.1):
 * the examples, the model flops and the devices of the summary; the shards' updates are
 * not counted as model flops. */
#include "algorithms/downpour_impl.h"

void downpour_report_run(void *state, const run_config *cfg, metrics *m, report *rep)
{
  const downpour_params *p = ((downpour_run *)state)->p;
  rep->examples = metrics_total_steps(m) * p->batch;
  rep->step_workers = (size_t)p->replicas;
  rep->step = "replica step";
  rep->model_flops = (double)rep->examples * cfg->train_flops; /* the shards' updates are not counted */
  rep->devices = (size_t)p->replicas * (size_t)p->partitions;
  rep->worker_role = p->partitions > 1 ? "dpart" : "replica";
}

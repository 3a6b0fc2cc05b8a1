#ifndef ALGORITHMS_TENSOR_IMPL_H
#define ALGORITHMS_TENSOR_IMPL_H
/* tensor_impl.h - private to the tensor algorithm's files (tensor.c, tensor_config.c,
 * tensor_report.c; Megatron-LM, Shoeybi et al. 2019; PTD-P, Narayanan et al. 2021): its
 * run's state and the hooks tensor_config.c's descriptor names. */

#include "algorithms/tensor.h"
#include "algorithms/tensor_stage_impl.h"

/* d, 1 when unset */
static inline size_t dp_of(const tensor_params *p) { return p->dp > 0 ? p->dp : 1; }

/* ---- the algorithm's run (tensor.c, tensor_report.c) ---- */

typedef struct tensor_run {
  tensor_params own;   /* the section, with steps from run.max_steps */
  const tensor_params *p;
  tensor *t;
  tensor_result r;
  double peak_flops;   /* per GPU host: its speed (model.efficiency not applied) */
  double memory_bytes; /* the per-GPU estimate of summary.json's memory_per_gpu */
} tensor_run;

void *tensor_run_prepare(const run_config *cfg, char *err, size_t len);
int tensor_run_check_hosts(void *state, const run_config *cfg, char *err, size_t len);
void tensor_run_deploy(void *state, const run_config *cfg, metrics *m);
void tensor_run_report(void *state, const run_config *cfg, metrics *m, report *rep);
void tensor_run_closing(void *state, const run_config *cfg, const report_outcome *o, char *line, size_t len);
void tensor_run_free(void *state);

#endif

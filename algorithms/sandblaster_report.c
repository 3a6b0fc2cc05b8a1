/* sandblaster_report.c - what a Sandblaster L-BFGS run reports (Dean et al. 2012, section
 * 4.2 and Appendix): summary.json's "sandblaster" block (L-BFGS's final state and command
 * counts, the batches' backup work, the straggling replicas) and batches.csv. */
#include "algorithms/sandblaster_impl.h"

#include <math.h>
#include <jansson.h>

static json_t *counts_json(const lbfgs_counts *c)
{
  json_t *o = json_object();
  json_object_set_new(o, "dot", json_integer(c->dot));
  json_object_set_new(o, "axpy", json_integer(c->axpy));
  json_object_set_new(o, "scale", json_integer(c->scale));
  json_object_set_new(o, "copy", json_integer(c->copy));
  json_object_set_new(o, "evaluate", json_integer(c->evaluate));
  return o;
}

/* summary.json's "sandblaster" block (L-BFGS's final state and command counts, the
 * batches' backup work, the straggling replicas) and batches.csv, one row per batch. */
void sandblaster_report_run(void *state, const run_config *cfg, metrics *m, report *rep)
{
  (void)m;
  const sandblaster_run *run = state;
  const sandblaster *sb = run->sb;
  rep->examples = sandblaster_examples(sb);
  rep->step_workers = 1;
  rep->step = "L-BFGS iteration";
  rep->model_flops = (double)rep->examples * cfg->train_flops; /* the portions' gradients */
  rep->devices = (size_t)run->p->replicas;
  rep->worker_role = "sb-replica";
  lbfgs_result lr;
  sandblaster_result(sb, &lr);
  json_t *o = json_object();
  json_object_set_new(o, "lbfgs_status", json_string(lbfgs_status_name(lr.status)));
  json_object_set_new(o, "iterations", json_integer(lr.iterations));
  json_object_set_new(o, "evaluations", json_integer(lr.evaluations));
  json_object_set_new(o, "skipped_pairs", json_integer(lr.skipped));
  json_object_set_new(o, "f", report_num(lr.f));
  json_object_set_new(o, "gnorm", report_num(lr.gnorm));
  json_object_set_new(o, "commands", counts_json(&lr.total));
  json_object_set_new(o, "last_iteration_commands", counts_json(&lr.last));
  const sandblaster_batch *b;
  size_t nb = sandblaster_batches(sb, &b);
  long backups = 0, wins = 0, discarded = 0;
  double time = 0;
  for (size_t i = 0; i < nb; i++) {
    backups += b[i].backups;
    wins += b[i].backup_wins;
    discarded += b[i].discarded;
    time += b[i].end - b[i].start;
  }
  json_object_set_new(o, "batches", json_integer((json_int_t)nb));
  json_object_set_new(o, "batch_time_mean_s", report_num(nb ? time / (double)nb : NAN));
  json_object_set_new(o, "backups", json_integer(backups));
  json_object_set_new(o, "backup_wins", json_integer(wins));
  json_object_set_new(o, "discarded", json_integer(discarded));
  const int *ranks;
  size_t ns = sandblaster_stragglers(sb, &ranks);
  json_t *st = json_array();
  for (size_t i = 0; i < ns; i++)
    json_array_append_new(st, json_integer(ranks[i]));
  json_object_set_new(o, "stragglers", st);
  if (cfg->n_banks > 0) /* sandblaster.ps_bank: the model the run used (exact runs say nothing, as before) */
    json_object_set_new(o, "ps_bank", json_string("bank"));
  report_add_block(rep, "sandblaster", o);

  report_text t = {0};
  report_printf(&t, "batch,iteration,start_s,time_s,portions,copies,backups,backup_wins,discarded,examples,loss\n");
  for (size_t i = 0; i < nb; i++) {
    report_printf(&t, "%zu,%ld,", i + 1, b[i].iteration);
    report_double(&t, b[i].start);
    report_printf(&t, ",");
    report_double(&t, b[i].end - b[i].start);
    report_printf(&t, ",%ld,%ld,%ld,%ld,%ld,%ld,", b[i].portions, b[i].copies, b[i].backups, b[i].backup_wins,
                  b[i].discarded, b[i].examples);
    report_double(&t, b[i].f);
    report_printf(&t, "\n");
  }
  report_add_file(rep, "batches.csv", &t);
}

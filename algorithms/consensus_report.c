/* consensus_report.c - what a distributed subgradient consensus run reports (Nedic and
 * Ozdaglar, IEEE TAC 2009): consensus.csv, every measurement of the agents' iterates,
 * and the closing line with the last one's consensus error and optimality gap. */
#include "algorithms/consensus_impl.h"

#include <stdio.h>

/* consensus.csv: every measurement of the agents' iterates, the documented columns
 * first, then the running averages' gap and the worst agent's gaps. */
void consensus_report_run(void *state, const run_config *cfg, metrics *m, report *rep)
{
  const consensus_run *r = state;
  const consensus_params *p = algorithm_params(cfg->sc, &consensus_algorithm);
  rep->examples = metrics_total_steps(m) * p->rows;
  rep->step_workers = p->agents;
  rep->step = "iteration";
  rep->worker_role = "agent";
  const consensus_point *pt;
  size_t n = consensus_trace(r->c, &pt);
  report_text b = {0};
  report_printf(&b, "iteration,sim_time_s,consensus_error,optimality_gap,ergodic_gap,agent_gap_max,"
                    "agent_ergodic_gap_max\n");
  for (size_t i = 0; i < n; i++) {
    const double v[] = {pt[i].sim_time, pt[i].consensus_error, pt[i].optimality_gap, pt[i].ergodic_gap,
                        pt[i].agent_gap_max, pt[i].agent_ergodic_gap_max};
    report_printf(&b, "%ld", pt[i].iteration);
    for (size_t j = 0; j < sizeof(v) / sizeof(v[0]); j++) {
      report_printf(&b, ",");
      report_double(&b, v[j]);
    }
    report_printf(&b, "\n");
  }
  report_add_file(rep, "consensus.csv", &b);
}

/* Its own measures, the last measurement's: how far the agents are from agreeing and
 * from the optimum (there is no held-out loss or accuracy). */
void consensus_closing(void *state, const run_config *cfg, const report_outcome *o, char *line, size_t len)
{
  const consensus_run *r = state;
  const consensus_params *p = algorithm_params(cfg->sc, &consensus_algorithm);
  const consensus_point *pt;
  size_t n = consensus_trace(r->c, &pt);
  char perf[400];
  report_perf_text(&o->perf, 1, perf, sizeof perf);
  int k = snprintf(line, len, "consensus %s %s: %zu agents on %s, %.6g simulated s", p->async ? "async" : "sync",
                   o->status, p->agents, p->topology, o->sim_time);
  if (n > 0)
    k += snprintf(line + k, len - (size_t)k, ", iteration %ld: consensus error %.4g, optimality gap %.4g",
                  pt[n - 1].iteration, pt[n - 1].consensus_error, pt[n - 1].optimality_gap);
  if (perf[0])
    snprintf(line + k, len - (size_t)k, "; %s", perf);
}

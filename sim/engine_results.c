/* engine_results.c - the pipeline's last step inside the simulation (engine_build.h):
 * after simgrid_run, what the outputs are written from (the algorithm's report, the
 * links' traffic, the time breakdown, the "performance" block, the network model), the
 * result folder written whole or not at all (output.c), and the closing line. */
#include "sim/engine_results.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <xbt/asserts.h>

#include "algorithms/account.h"
#include "algorithms/linkload.h"
#include "algorithms/msg.h"
#include "sim/interrupt.h"
#include "sim/output.h"
#include "sim/placement.h"
#include "sim/platform.h"
#include "sim/platform_where.h"

/* The closing line's text when the algorithm has none of its own: what ran, its loss and
 * accuracy when it measures them, then the common figures (report_perf_text). */
static void engine_results_common_closing(const scenario *sc, const report_outcome *o, char *line, size_t len)
{
  int n = snprintf(line, len, "%s %s: %.6g simulated s, %ld step%s", sc->run.algorithm, o->status, o->sim_time, o->steps,
                   o->steps == 1 ? "" : "s");
  if (o->evaluated && o->has_loss)
    n += snprintf(line + n, len - (size_t)n, ", loss %.6g", o->loss);
  if (o->evaluated && o->has_accuracy)
    n += snprintf(line + n, len - (size_t)n, ", accuracy %.6g", o->accuracy);
  char perf[400];
  report_perf_text(&o->perf, 1, perf, sizeof perf);
  if (perf[0])
    snprintf(line + n, len - (size_t)n, "; %s", perf);
}

/* The network model SimGrid runs the platform under into buf, as SimGrid picks it: the last
 * --cfg=network/model, else the platform file's <config> (a preset's generated file has
 * one), else SimGrid 3.32's default, LV08. 3.32's C API reads no string option back
 * (sg_cfg_get_* has int, double and boolean only), so the same order is followed here. */
void engine_results_network_model(const engine_build *b, char *buf, size_t len)
{
  const engine_opts *o = b->o;
  const char *cfg = platform_cfg_value(o->sg_argc, o->sg_argv, "network/model");
  buf[0] = '\0';
  if (cfg)
    snprintf(buf, len, "%s", cfg);
  else if (b->platform[0])
    platform_file_model(b->platform, buf, len);
  if (buf[0] == '\0')
    snprintf(buf, len, "LV08");
}

/* Below this many percentage points the rest of a worker's time is the rounding of its
 * summed shares (about 1e-15 of 100 measured; 1e-9 leaves six orders of margin). */
#define ENGINE_RESULTS_IDLE_PCT 1e-9

/* The "performance" block from the algorithm's report and the breakdown. */
static void engine_results_perf(const run_result *res, const report *rep, const run_config *cfg, report_perf *p)
{
  double t = res->sim_time;
  p->step_time_s = isfinite(rep->step_time_s) ? rep->step_time_s
                  : rep->step_workers > 0 && res->steps > 0 ? t * (double)rep->step_workers / (double)res->steps
                                                            : NAN;
  p->step = rep->step;
  p->examples_per_s = rep->examples > 0 && t > 0 ? (double)rep->examples / t : NAN;
  double devices = (double)(rep->devices ? rep->devices : res->hosts_used);
  double ft = isfinite(rep->flops_time_s) ? rep->flops_time_s : t;
  p->tflops_per_device = isfinite(rep->model_flops) && ft > 0 ? rep->model_flops / ft / devices / 1e12 : NAN;
  p->peak_tflops_per_device = sg_host_get_pstate_speed(cfg->hosts[0], 0) * cfg->cores * cfg->speed_factor / 1e12;
  p->mfu = p->tflops_per_device / p->peak_tflops_per_device;
  p->worker_role = rep->worker_role ? rep->worker_role : res->n_actors ? res->actors[0].role : NULL;
  p->compute_pct = p->comm_pct = p->exposed_comm_pct = p->idle_pct = NAN;
  size_t n = 0;
  double c = 0, w = 0, x = 0;
  for (size_t i = 0; p->worker_role && i < res->n_actors; i++)
    if (strcmp(res->actors[i].role, p->worker_role) == 0) {
      n++;
      c += res->actors[i].compute_s;
      w += res->actors[i].comm_s;
      x += res->actors[i].exposed_comm_s;
    }
  if (n > 0 && t > 0) {
    p->compute_pct = 100 * c / ((double)n * t);
    p->comm_pct = 100 * w / ((double)n * t);
    p->exposed_comm_pct = 100 * x / ((double)n * t);
    /* the rest, so that the three add up to 100%: waits declared idle (a pipeline's bubble),
     * the time after an actor has ended before the run did, and any wait that is neither an
     * execution nor a communication; 0 when compute and comm overlap (an asynchronous
     * execution behind a wait) and together exceed the run, or differ from it by the
     * sums' rounding only (1e-15 of a busy data-parallel replica's time, not "idle 1.8e-15%") */
    double rest = 100 - p->compute_pct - p->comm_pct;
    p->idle_pct = rest > ENGINE_RESULTS_IDLE_PCT ? rest : 0;
  } else
    p->worker_role = NULL;
}

/* After simgrid_run: what the outputs are written from, into *res. Returns its report and
 * into *links its links, which engine_gather_free frees. */
static report *engine_results_gather(const engine_build *b, const run_config *cfg, metrics *m, run_result *res,
                                     link_stat **links)
{
  const scenario *sc = b->sc;
  const engine_opts *o = b->o;
  const algorithm *alg = b->alg;
  *res = (run_result){0};
  res->sc = sc;
  res->m = m;
  res->sim_time = simgrid_get_clock();
  if (cfg->faults && cfg->faults->stopped) /* messages on the wire outlive a stopped run */
    res->sim_time = cfg->faults->stopped_at;
  res->steps = metrics_total_steps(m);
  report *rep = report_create();
  if (alg->run.report)
    alg->run.report(b->state, cfg, m, rep);
  res->rep = rep;
  for (size_t i = 0; i < rep->n_files; i++) { /* sim/output replaces a previous run's files by these names */
    const char *f = alg->files ? strstr(alg->files, rep->files[i].name) : NULL;
    size_t n = strlen(rep->files[i].name);
    xbt_assert(f && (f == alg->files || f[-1] == ' ') && (f[n] == '\0' || f[n] == ' '),
               "%s writes %s, which its descriptor's files do not list", alg->name, rep->files[i].name);
  }
  res->faults = cfg->faults;
  res->bytes_total = msg_bytes_sent();
  res->hosts_used = b->needed;
  res->status = metrics_status_name(metrics_get_status(m));
  platform_layout layout;
  platform_layout_read(b->platform, &layout);
  res->link_windows = linkload_close(res->sim_time);
  res->link_window = linkload_width();
  *links = placement_links(res->sim_time, res->link_windows, &layout, cfg->hosts, cfg->n_hosts + cfg->n_banks,
                           &res->n_links);
  res->n_actors = account_breakdown(res->sim_time, &res->actors);
  energy_settings es = {b->sc->platform.pue, b->sc->platform.carbon_intensity, b->sc->platform.power_cap};
  res->energy = b->energy > 0 ? energy_gather(cfg->hosts, cfg->n_hosts, &es, rep) : NULL;
  engine_results_network_model(b, res->network_model, sizeof res->network_model);
  engine_results_perf(res, rep, cfg, &res->perf);
  size_t ne = metrics_n_evals(m);
  for (size_t i = 0; i < ne; i++) { /* measured: a number in some evaluation (a diverged loss is one too) */
    res->has_loss |= !isnan(metrics_eval_at(m, i)->loss);
    res->has_accuracy |= !isnan(metrics_eval_at(m, i)->accuracy);
  }
  res->has_loss |= metrics_get_status(m) == METRICS_DIVERGED;
  if (o->trace)
    res->n_trace_ev = account_trace(&res->trace_ev);
  res->links = *links;
  return rep;
}

/* The closing line of a written run into closing (the algorithm's, or the common one). */
static void engine_results_closing(const engine_build *b, const run_config *cfg, const run_result *res, char *closing,
                                   size_t closing_len)
{
  const scenario *sc = b->sc;
  metrics *m = res->m;
  size_t ne = metrics_n_evals(m);
  const metrics_eval *last = ne ? metrics_eval_at(m, ne - 1) : NULL;
  /* a missed target says which: summary.json's status stays the bare name */
  char status[128];
  if (metrics_get_status(m) == METRICS_TARGET_MISSED && last && !isnan(last->accuracy))
    snprintf(status, sizeof status, "%s (accuracy %.4g < target %.4g)", res->status, last->accuracy,
             sc->run.target_accuracy);
  else if (metrics_get_status(m) == METRICS_TARGET_MISSED)
    snprintf(status, sizeof status, "%s (target %.4g, no accuracy measured)", res->status, sc->run.target_accuracy);
  else
    snprintf(status, sizeof status, "%s", res->status);
  report_outcome out = {status, res->sim_time, res->steps, last != NULL, last ? last->loss : NAN,
                        last ? last->accuracy : NAN, res->has_loss, res->has_accuracy, res->perf};
  char line[1024];
  if (b->alg->run.closing)
    b->alg->run.closing(b->state, cfg, &out, line, sizeof line);
  else
    engine_results_common_closing(sc, &out, line, sizeof line);
  char energy[400];
  energy_text(res->energy, energy, sizeof energy);
  snprintf(closing, closing_len, "dtsim: %s%s -> %s/\n", line, energy, b->o->out_dir);
}

/* What engine_gather allocated. */
static void engine_results_free(run_result *res, link_stat *links, report *rep)
{
  placement_links_free(links, res->n_links);
  energy_free(res->energy);
  report_free(rep);
}

/* After simgrid_run: the result folder written whole or not at all, and the closing line
 * into closing (empty with --quiet or when nothing was written). Returns the exit status. */
int engine_results_write(const engine_build *b, const run_config *cfg, metrics *m, char *closing, size_t closing_len)
{
  const engine_opts *o = b->o;
  char err[ENGINE_ERRLEN];
  run_result res;
  link_stat *links;
  report *rep = engine_results_gather(b, cfg, m, &res, &links);
  interrupt_run_hold(1, NULL); /* the result folder is written whole or not at all */
  int rc = output_write_all(o->out_dir, &res, err, ENGINE_ERRLEN) == 0 ? 0 : 2;
  if (rc == 2)
    fprintf(stderr, "dtsim: %s\n", err);
  interrupt_run_hold(0, rc == 0 ? o->out_dir : NULL);
  if (rc == 0 && !o->quiet)
    engine_results_closing(b, cfg, &res, closing, closing_len);
  if (rc == 0 && metrics_get_status(m) != METRICS_OK)
    rc = 1;
  engine_results_free(&res, links, rep);
  return rc;
}

/* SimGrid 3.32 tears its ns-3 network model down at exit, after main, and ns-3 crashes
 * there (a segmentation fault in ns3::Simulator::Destroy) once a run has used it: its
 * results are complete by then. So a run under ns-3 ends in engine_run, its output flushed. */
int engine_results_ns3(const engine_build *b)
{
  char model[64];
  engine_results_network_model(b, model, sizeof model);
  return strcmp(model, "ns-3") == 0;
}

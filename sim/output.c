/* output.c - result files, atomic writes, and the --expect comparison. */
#include "sim/output.h"

#include "algorithms/account.h"
#include "algorithms/registry.h"
#include "sim/fileio.h"
#include "sim/output_links.h"
#include "sim/plot.h"

#include <errno.h>
#include <stdarg.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <simgrid/host.h>
#include <xbt/sysdep.h>

/* ---- atomic files -------------------------------------------------------- */

/* Whether dir holds a summary.json: 1 a dtsim run's, -1 another kind, 0 none. */
static int holds_summary(const char *dir)
{
  char path[4200];
  snprintf(path, sizeof path, "%s/summary.json", dir);
  if (access(path, F_OK) != 0)
    return 0;
  json_t *j = json_load_file(path, 0, NULL);
  int ours = j && json_object_get(j, "algorithm") && json_object_get(j, "scenario");
  json_decref(j);
  return ours ? 1 : -1;
}

/* The result files of every run (the first five) and of a traced one; with every
 * algorithm's own (algorithm.h files), all the files a run may write. */
static const char *const common_files[] = {"summary.json", "progress.csv", "staleness.csv", "links.csv",
                                           "breakdown.csv", "trace.json", "progress.png", "links.png",
                                           "energy.csv"};

static int written(const char *name, const char *const *names, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0)
      return 1;
  return 0;
}

/* After a run into a folder that held another run: that run's files this one did not
 * write go, so the folder holds one run's files only. */
static void remove_stale(const char *dir, const char *const *names, size_t n)
{
  char path[4200];
  for (size_t i = 0; i < sizeof common_files / sizeof *common_files; i++)
    if (!written(common_files[i], names, n)) {
      snprintf(path, sizeof path, "%s/%s", dir, common_files[i]);
      unlink(path);
    }
  for (size_t a = 0; a < algorithm_count; a++)
    for (const char *f = algorithm_registry[a]->files; f && *f; f += strcspn(f, " "), f += *f == ' ') {
      char name[64];
      snprintf(name, sizeof name, "%.*s", (int)strcspn(f, " "), f);
      if (!written(name, names, n)) {
        snprintf(path, sizeof path, "%s/%s", dir, name);
        unlink(path);
      }
    }
}

/* The result folder is created only after the run; make sure now that it can be: the
 * path, or else its nearest existing ancestor, must be a directory in which a folder can
 * really be made (access() alone says yes to root on /proc or a read-only mount), so a
 * probe folder is created there and removed. */
int output_dir_unusable(const char *out, char *err, size_t len)
{
  char p[4096];
  struct stat st;
  snprintf(p, sizeof(p), "%s", out);
  while (stat(p, &st) != 0) {
    char *slash = strrchr(p, '/');
    if (slash == NULL) {
      snprintf(p, sizeof(p), ".");
      continue;
    }
    *slash = '\0';
    if (p[0] == '\0')
      snprintf(p, sizeof(p), "/");
  }
  if (!S_ISDIR(st.st_mode)) {
    snprintf(err, len, "--out %s: %s exists and is not a directory", out, p);
    return -1;
  }
  if (strcmp(p, out) == 0 && holds_summary(out) < 0) {
    snprintf(err, len, "--out %s: holds a summary.json that is not a dtsim run's; choose another folder", out);
    return -1;
  }
  char probe[4200];
  snprintf(probe, sizeof(probe), "%s/.dtsim-probe-XXXXXX", p);
  if (mkdtemp(probe) == NULL) {
    snprintf(err, len, "--out %s: cannot create a folder in %s: %s", out, p, strerror(errno));
    return -1;
  }
  rmdir(probe);
  return 0;
}

/* ---- the four files ------------------------------------------------------ */


static json_t *scenario_json(const scenario *sc)
{
  json_t *root = json_object();
  for (size_t i = 0; i < scenario_key_count(); i++) {
    const char *section, *key, *def, *unit, *doc;
    char value[SCENARIO_STR + 64];
    scenario_key_at(sc, i, &section, &key, value, sizeof(value), &def, &unit, &doc);
    json_t *sec = json_object_get(root, section);
    if (sec == NULL) {
      sec = json_object();
      json_object_set_new(root, section, sec);
    }
    json_object_set_new(sec, key, json_string(value));
  }
  /* an old name still in use, with its key's value, so scripts reading it go on working */
  for (size_t i = 0; i < scenario_alias_count(); i++) {
    const char *section, *key, *to_section, *to_key;
    scenario_alias_at(i, &section, &key, &to_section, &to_key);
    json_t *to = json_object_get(json_object_get(root, to_section), to_key), *sec = json_object_get(root, section);
    if (to && sec)
      json_object_set(sec, key, to);
  }
  return root;
}

/* A JSON string's characters (the labels and names are the algorithms' own text). */
static void json_chars(report_text *b, const char *s)
{
  for (; *s; s++)
    if (*s == '"' || *s == '\\')
      report_printf(b, "\\%c", *s);
    else if ((unsigned char)*s < 0x20)
      report_printf(b, "\\u%04x", (unsigned)(unsigned char)*s);
    else
      report_printf(b, "%c", *s);
}

/* One event of the timeline; its name is the actor's label at the time when it has one. */
static void trace_event(report_text *b, const account_event *e, size_t pid)
{
  static const char *const kinds[] = {"compute", "wait", "send", "recv"};
  const char *kind = kinds[e->kind];
  int instant = e->kind == ACCOUNT_SEND || e->kind == ACCOUNT_RECV;
  report_printf(b, "{\"name\": \"");
  json_chars(b, e->label[0] && !instant ? e->label : kind);
  report_printf(b, "\", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": %zu, \"tid\": %zu, \"ts\": ", kind, pid, e->actor);
  report_double(b, e->start * 1e6);
  report_printf(b, ", \"dur\": ");
  report_double(b, e->dur * 1e6);
  if (e->kind == ACCOUNT_SEND) {
    report_printf(b, ", \"args\": {\"bytes\": ");
    report_double(b, e->bytes);
    report_printf(b, ", \"to\": \"");
    json_chars(b, e->dst);
    report_printf(b, "\"");
  } else if (e->kind == ACCOUNT_RECV)
    report_printf(b, ", \"args\": {");
  if (instant && e->label[0]) {
    report_printf(b, "%s\"during\": \"", e->kind == ACCOUNT_SEND ? ", " : "");
    json_chars(b, e->label);
    report_printf(b, "\"");
  }
  report_printf(b, "%s}", instant ? "}" : "");
  if (instant && e->flow) { /* the arrow from the send's slice to the receipt's */
    report_printf(b, ",\n{\"name\": \"message\", \"cat\": \"flow\", \"ph\": \"%s\", %s\"id\": \"%lx\", "
                  "\"pid\": %zu, \"tid\": %zu, \"ts\": ",
                  e->kind == ACCOUNT_SEND ? "s" : "f", e->kind == ACCOUNT_SEND ? "" : "\"bp\": \"e\", ", e->flow, pid,
                  e->actor);
    report_double(b, e->start * 1e6);
    report_printf(b, "}");
  }
}

/* trace.json in Chrome's trace-event format (Perfetto, chrome://tracing): one process
 * per host, numbered in order of its first actor, one thread per actor (its breakdown
 * index); a complete event ("X") per execution and per communication wait, named by what
 * the algorithm said it was doing (account_label_push) or "compute" and "wait", a
 * zero-length one per message sent and per message taken, joined by a flow arrow ("s" to
 * "f", the message's id); simulated microseconds. */
static void write_trace(report_text *b, const run_result *r)
{
  size_t *host = xbt_malloc((r->n_actors ? r->n_actors : 1) * sizeof(size_t)), nh = 0;
  report_printf(b, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n");
  for (size_t i = 0; i < r->n_actors; i++) {
    size_t j = 0;
    while (j < i && strcmp(r->actors[j].host, r->actors[i].host) != 0)
      j++;
    host[i] = j < i ? host[j] : nh++;
    if (j == i)
      report_printf(b, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %zu, \"args\": {\"name\": \"%s\"}},\n",
                 host[i], r->actors[i].host);
    report_printf(b, "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %zu, \"tid\": %zu, \"args\": {\"name\": \"%s\"}},\n",
               host[i], i, r->actors[i].name);
  }
  for (size_t i = 0; i < r->n_trace_ev; i++) {
    trace_event(b, &r->trace_ev[i], host[r->trace_ev[i].actor]);
    report_printf(b, "%s\n", i + 1 < r->n_trace_ev ? "," : "");
  }
  report_printf(b, "]}\n");
  xbt_free(host);
}

/* "breakdown": per role (in order of first appearance), its actor count and the mean
 * over its actors of each time. */
static json_t *breakdown_json(const run_result *r)
{
  json_t *o = json_object();
  for (size_t i = 0; i < r->n_actors; i++) {
    const char *role = r->actors[i].role;
    if (json_object_get(o, role))
      continue;
    size_t n = 0;
    double c = 0, w = 0, x = 0;
    for (size_t j = i; j < r->n_actors; j++)
      if (strcmp(r->actors[j].role, role) == 0) {
        n++;
        c += r->actors[j].compute_s;
        w += r->actors[j].comm_s;
        x += r->actors[j].exposed_comm_s;
      }
    json_t *e = json_object();
    json_object_set_new(e, "actors", json_integer((json_int_t)n));
    json_object_set_new(e, "compute_s", json_real(c / (double)n));
    json_object_set_new(e, "comm_s", json_real(w / (double)n));
    json_object_set_new(e, "exposed_comm_s", json_real(x / (double)n));
    double pct = r->sim_time > 0 ? 100 / ((double)n * r->sim_time) : NAN;
    json_object_set_new(e, "compute_pct", report_num(c * pct));
    json_object_set_new(e, "comm_pct", report_num(w * pct));
    json_object_set_new(e, "exposed_comm_pct", report_num(x * pct));
    json_object_set_new(o, role, e);
  }
  return o;
}

/* "performance": what users compare across runs (algorithms/report.h report_perf). */
static json_t *performance_json(const report_perf *p)
{
  json_t *o = json_object();
  json_object_set_new(o, "step_time_s", report_num(p->step_time_s));
  json_object_set_new(o, "step", json_string(p->step ? p->step : "step"));
  json_object_set_new(o, "examples_per_s", report_num(p->examples_per_s));
  json_object_set_new(o, "tflops_per_device", report_num(p->tflops_per_device));
  json_object_set_new(o, "peak_tflops_per_device", report_num(p->peak_tflops_per_device));
  json_object_set_new(o, "mfu", report_num(p->mfu));
  json_object_set_new(o, "worker_role", p->worker_role ? json_string(p->worker_role) : json_null());
  json_object_set_new(o, "compute_pct", report_num(p->compute_pct));
  json_object_set_new(o, "comm_pct", report_num(p->comm_pct));
  json_object_set_new(o, "exposed_comm_pct", report_num(p->exposed_comm_pct));
  json_object_set_new(o, "idle_pct", report_num(p->idle_pct));
  return o;
}

/* The "faults" block: the events (applied or not: a run may end first) and what
 * the algorithm survived, recovered and lost. */
static json_t *faults_json(const fault_plan *p)
{
  static const char *kinds[] = {"host_off", "host_on", "link_off", "link_on", "link_degrade"};
  json_t *o = json_object(), *ev = json_array();
  for (size_t i = 0; i < p->n; i++) {
    json_t *e = json_object();
    json_object_set_new(e, "kind", json_string(kinds[p->ev[i].kind]));
    json_object_set_new(e, "target", json_string(p->ev[i].target));
    json_object_set_new(e, "time_s", report_num(p->ev[i].time));
    if (p->ev[i].kind == FAULT_LINK_DEGRADE)
      json_object_set_new(e, "factor", report_num(p->ev[i].factor));
    json_object_set_new(e, "applied", json_boolean(p->ev[i].applied));
    json_array_append_new(ev, e);
  }
  json_object_set_new(o, "events", ev);
  json_object_set_new(o, "wait_timeout_s", report_num(p->wait_timeout));
  json_object_set_new(o, "workers_started", json_integer(p->workers_started));
  json_object_set_new(o, "workers_alive_at_end", json_integer(p->workers_started - atomic_load(&p->workers_lost)));
  json_object_set_new(o, "checkpoints", json_integer(atomic_load(&p->checkpoints)));
  json_object_set_new(o, "shard_restarts", json_integer(atomic_load(&p->shard_restarts)));
  json_object_set_new(o, "lost_updates", json_integer(atomic_load(&p->lost_updates)));
  json_object_set_new(o, "undelivered_pushes", json_integer(atomic_load(&p->undelivered_pushes)));
  json_object_set_new(o, "missed_fetches", json_integer(atomic_load(&p->missed_fetches)));
  json_object_set_new(o, "reissued_portions", json_integer(atomic_load(&p->reissued_portions)));
  json_object_set_new(o, "stopped", json_string(p->stopped == 1   ? "host_failed"
                                                   : p->stopped == 2 ? "stalled"
                                                   : p->stopped == 3 ? "link_failed"
                                                                     : "no"));
  json_object_set_new(o, "stopped_at_s", p->stopped ? report_num(p->stopped_at) : json_null());
  return o;
}

static char *summary_json(const run_result *r)
{
  metrics *m = r->m;
  size_t ne = metrics_n_evals(m);
  const metrics_eval *last = ne ? metrics_eval_at(m, ne - 1) : NULL;
  json_t *root = json_object();
  json_object_set_new(root, "dtsim_version", json_string(DTSIM_VERSION));
  json_object_set_new(root, "blas", json_string(DTSIM_BLAS_NAME));
  json_object_set_new(root, "seed", json_integer((json_int_t)r->sc->run.seed));
  json_object_set_new(root, "algorithm", json_string(r->sc->run.algorithm));
  json_object_set_new(root, "scenario", scenario_json(r->sc));
  json_object_set_new(root, "sim_time_s", report_num(r->sim_time));
  json_object_set_new(root, "steps", json_integer(r->steps));
  json_object_set_new(root, "examples", json_integer(r->rep->examples));
  json_object_set_new(root, "final_loss", report_num(last ? last->loss : NAN));
  json_object_set_new(root, "final_accuracy", report_num(last ? last->accuracy : NAN));
  double ttt = metrics_time_to_target(m);
  json_object_set_new(root, "time_to_target_s", ttt >= 0 ? json_real(ttt) : json_null());
  json_t *st = json_object();
  json_object_set_new(st, "mean", json_real(metrics_staleness_mean(m)));
  json_object_set_new(st, "p50", json_integer(metrics_staleness_quantile(m, 0.5)));
  json_object_set_new(st, "p99", json_integer(metrics_staleness_quantile(m, 0.99)));
  json_object_set_new(st, "max", json_integer(metrics_staleness_max(m)));
  json_object_set_new(root, "staleness", st);
  json_t *comm = json_object();
  json_object_set_new(comm, "network_model", json_string(r->network_model));
  json_object_set_new(comm, "bytes_total", json_real(r->bytes_total));
  json_object_set_new(comm, "link_window_s", report_num(r->link_window));
  json_object_set_new(comm, "link_windows", json_integer((json_int_t)r->link_windows));
  json_object_set_new(comm, "top_links", output_links_top(r, 1));
  json_object_set_new(comm, "top_unshared_links", output_links_top(r, 0));
  json_object_set_new(root, "comm", comm);
  json_object_set_new(root, "breakdown", breakdown_json(r));
  json_object_set_new(root, "hosts_used", json_integer((json_int_t)r->hosts_used));
  json_object_set_new(root, "status", json_string(r->status));
  json_object_set_new(root, "performance", performance_json(&r->perf));
  if (r->energy)
    json_object_set_new(root, "energy", energy_json(r->energy));
  const char *key;
  json_t *block;
  json_object_foreach(r->rep->blocks, key, block)
    json_object_set(root, key, block);
  if (r->faults)
    json_object_set_new(root, "faults", faults_json(r->faults));
  char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
  json_decref(root);
  return s;
}

/* The run's pictures (gnuplot): progress.png, its own curve, when it has one, and
 * links.png, its busiest shared links over time, when any carried bytes. Sets *curve and
 * *links to whether each was drawn. When gnuplot cannot draw, the pictures still to come
 * are not tried and one line names those missing; the results are complete without them. */
static void output_pictures(const char *dir, const run_result *r, const char *csv, int *curve, int *links)
{
  char title[200], err[4400];
  size_t idx[OUTPUT_LINKS_PLOTTED], n = output_links_plotted(r, idx);
  snprintf(title, sizeof title, "dtsim run: %s, held-out loss and accuracy", r->sc->run.algorithm);
  int drawn = plot_progress(dir, title, csv, r->has_loss, r->has_accuracy, err, sizeof err);
  *curve = drawn > 0;
  *links = 0;
  if (drawn >= 0 && n > 0)
    *links = output_links_plot(dir, r, idx, n, err, sizeof err) > 0;
  if (drawn < 0)
    fprintf(stderr, "dtsim: no progress.png%s: %s; the other result files are complete\n", n ? " or links.png" : "",
            err);
  else if (n > 0 && !*links)
    fprintf(stderr, "dtsim: no links.png: %s; the other result files are complete\n", err);
}

/* run.noise_scale_examples' three fields of evaluation e (empty where not measured). */
static void output_noise_fields(report_text *b, const metrics_eval *e)
{
  const double v[3] = {e->noise_scale, e->grad_sq, e->trace_sigma};
  for (int i = 0; i < 3; i++) {
    report_printf(b, ",");
    if (!isnan(v[i]))
      report_double(b, v[i]);
  }
}

/* progress.csv's text into b: one row per evaluation, the algorithm's own columns after
 * the common ones. */
static void output_progress_csv(report_text *b, const run_result *r)
{
  const char *cols = r->rep ? r->rep->progress_columns : NULL, *extra = cols ? r->rep->progress_rows.s : NULL;
  b->len = 0;
  int noise = r->sc->run.noise_scale_examples > 0, curv = r->sc->run.curvature_examples > 0;
  report_printf(b, "sim_time_s,step,loss,accuracy%s%s%s%s\n", cols ? "," : "", cols ? cols : "",
                noise ? ",noise_scale,grad_sq,trace_sigma" : "", curv ? ",lambda_max" : "");
  for (size_t i = 0; i < metrics_n_evals(r->m); i++) { /* what the run does not measure is an empty field */
    const metrics_eval *e = metrics_eval_at(r->m, i);
    report_double(b, e->sim_time);
    report_printf(b, ",%ld,", e->steps);
    if (r->has_loss)
      report_double(b, e->loss);
    report_printf(b, ",");
    if (r->has_accuracy)
      report_double(b, e->accuracy);
    if (cols) { /* the algorithm's own columns: line i of its rows */
      size_t n = extra ? strcspn(extra, "\n") : 0;
      report_printf(b, ",%.*s", (int)n, extra ? extra : "");
      if (extra)
        extra += n + (extra[n] != '\0');
    }
    if (noise)
      output_noise_fields(b, e);
    if (curv) {
      report_printf(b, ",");
      if (!isnan(e->lambda_max))
        report_double(b, e->lambda_max);
    }
    report_printf(b, "\n");
  }
}

/* staleness.csv's text into b: the staleness counts that are not zero. */
static void output_staleness_csv(report_text *b, const run_result *r)
{
  b->len = 0;
  report_printf(b, "staleness,count\n");
  const long *counts;
  size_t n = metrics_staleness(r->m, &counts);
  for (size_t s = 0; s < n; s++)
    if (counts[s])
      report_printf(b, "%zu,%ld\n", s, counts[s]);
}

/* breakdown.csv's text into b: one row per actor. */
static void output_breakdown_csv(report_text *b, const run_result *r)
{
  b->len = 0;
  report_printf(b, "actor,role,host,compute_s,comm_s,exposed_comm_s\n");
  for (size_t i = 0; i < r->n_actors; i++) {
    const account_actor *a = &r->actors[i];
    report_printf(b, "%s,%s,%s,", a->name, a->role, a->host);
    report_double(b, a->compute_s);
    report_printf(b, ",");
    report_double(b, a->comm_s);
    report_printf(b, ",");
    report_double(b, a->exposed_comm_s);
    report_printf(b, "\n");
  }
}

int output_write_all(const char *dir, const run_result *r, char *err, size_t errlen)
{
  int previous = holds_summary(dir) > 0;
  if (fileio_mkdirs(dir, err, errlen) != 0)
    return -1;
  report_text b = {0};
  output_progress_csv(&b, r);
  int rc = fileio_write(dir, "progress.csv", b.s, b.len, err, errlen);
  int curve = 0, links = 0;
  if (rc == 0)
    output_pictures(dir, r, b.s, &curve, &links);
  output_staleness_csv(&b, r);
  rc = rc ? rc : fileio_write(dir, "staleness.csv", b.s, b.len, err, errlen);
  output_links_csv(&b, r);
  rc = rc ? rc : fileio_write(dir, "links.csv", b.s, b.len, err, errlen);
  output_breakdown_csv(&b, r);
  rc = rc ? rc : fileio_write(dir, "breakdown.csv", b.s, b.len, err, errlen);
  if (r->trace_ev != NULL) {
    b.len = 0;
    write_trace(&b, r);
    rc = rc ? rc : fileio_write(dir, "trace.json", b.s, b.len, err, errlen);
  }
  if (r->energy) {
    energy_csv(r->energy, &b);
    rc = rc ? rc : fileio_write(dir, "energy.csv", b.s, b.len, err, errlen);
  }

  const char **names = xbt_malloc((9 + r->rep->n_files) * sizeof *names);
  size_t n_names = 0;
  for (size_t i = 0; i < 5; i++)
    names[n_names++] = common_files[i];
  if (r->trace_ev != NULL)
    names[n_names++] = "trace.json";
  if (r->energy)
    names[n_names++] = "energy.csv";
  if (curve)
    names[n_names++] = "progress.png";
  if (links)
    names[n_names++] = "links.png";
  for (size_t i = 0; i < r->rep->n_files; i++) {
    const report_file *f = &r->rep->files[i];
    rc = rc ? rc : fileio_write(dir, f->name, f->text.s ? f->text.s : "", f->text.len, err, errlen);
    names[n_names++] = f->name;
  }
  /* summary.json last: a folder holding it holds the whole result (a sweep resumes on that) */
  char *summary = summary_json(r);
  b.len = 0;
  report_printf(&b, "%s\n", summary);
  free(summary);
  rc = rc ? rc : fileio_write(dir, "summary.json", b.s, b.len, err, errlen);
  if (rc == 0 && previous)
    remove_stale(dir, names, n_names);
  xbt_free(names);
  xbt_free(b.s);
  return rc;
}

/* ---- --expect ------------------------------------------------------------ */

/* Two numbers agree within rtol: |a - b| <= rtol x max(|a|, |b|); rtol 0 asks for
 * equality. NaNs agree with NaNs (a diverged run saved and rerun). */
static int numbers_agree(double a, double b, double rtol)
{
  if (isnan(a) || isnan(b))
    return isnan(a) && isnan(b);
  if (a == b)
    return 1;
  return fabs(a - b) <= rtol * fmax(fabs(a), fabs(b));
}

static void json_path_value(const json_t *v, char *out, size_t len)
{
  char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(17));
  snprintf(out, len, "%s", s ? s : "?");
  free(s);
}

/* Finds the first difference between two JSON values; path names where. */
static int json_diff(const json_t *want, const json_t *got, double rtol, char *path, size_t plen, char *msg,
                     size_t msglen)
{
  if (json_is_object(want) && json_is_object(got)) {
    const char *key;
    json_t *wv;
    size_t base = strlen(path);
    json_object_foreach((json_t *)want, key, wv)
    {
      if (base == 0 && strcmp(key, "dtsim_version") == 0)
        continue;
      snprintf(path + base, plen - base, "%s%s", base ? "." : "", key);
      json_t *gv = json_object_get(got, key);
      if (gv == NULL) {
        snprintf(msg, msglen, "%s: missing from this run", path);
        return 1;
      }
      if (json_diff(wv, gv, rtol, path, plen, msg, msglen))
        return 1;
      path[base] = '\0';
    }
    return 0;
  }
  if (json_is_array(want) && json_is_array(got)) {
    size_t base = strlen(path);
    for (size_t i = 0; i < json_array_size(want) || i < json_array_size(got); i++) {
      snprintf(path + base, plen - base, "[%zu]", i);
      json_t *wv = json_array_get(want, i), *gv = json_array_get(got, i);
      if (wv == NULL || gv == NULL) {
        snprintf(msg, msglen, "%s: %s", path, wv ? "missing from this run" : "not in the expected file");
        return 1;
      }
      if (json_diff(wv, gv, rtol, path, plen, msg, msglen))
        return 1;
      path[base] = '\0';
    }
    return 0;
  }
  if (rtol > 0 && json_is_number(want) && json_is_number(got) &&
      numbers_agree(json_number_value(want), json_number_value(got), rtol))
    return 0;
  if (json_equal((json_t *)want, (json_t *)got))
    return 0;
  char w[256], g[256];
  json_path_value(want, w, sizeof(w));
  json_path_value(got, g, sizeof(g));
  snprintf(msg, msglen, "%s: expected %s, got %s", path, w, g);
  return 1;
}

/* A CSV field as a number, when all of it is one. */
static int field_number(const char *f, size_t n, double *x)
{
  char buf[64], *end;
  if (n == 0 || n >= sizeof buf)
    return 0;
  memcpy(buf, f, n);
  buf[n] = '\0';
  *x = strtod(buf, &end);
  return *end == '\0';
}

/* Line by line, field by field; numbers within rtol. Returns 0, or 1 with the first
 * difference (line, column, both values) in msg. */
static int expect_csv(const char *want, const char *got, const char *name, double rtol, char *msg, size_t msglen)
{
  const char *w = want, *g = got;
  char header[512] = "";
  for (int line = 1; *w || *g; line++) {
    size_t wl = strcspn(w, "\n"), gl = strcspn(g, "\n");
    if (line == 1)
      snprintf(header, sizeof(header), "%.*s", (int)wl, w);
    if (!*w || !*g) {
      snprintf(msg, msglen, "%s line %d: %s", name, line, *w ? "missing from this run" : "not in the expected file");
      return 1;
    }
    const char *wf = w, *gf = g, *h = header;
    for (;;) {
      size_t wn = strcspn(wf, ",\n"), gn = strcspn(gf, ",\n"), hn = strcspn(h, ",");
      double a, b;
      int same = (wn == gn && strncmp(wf, gf, wn) == 0) ||
                 (rtol > 0 && field_number(wf, wn, &a) && field_number(gf, gn, &b) && numbers_agree(a, b, rtol));
      if (!same) {
        snprintf(msg, msglen, "%s line %d, column %.*s: expected %.*s, got %.*s", name, line, (int)hn, hn ? h : "?",
                 (int)wn, wf, (int)gn, gf);
        return 1;
      }
      int wend = wf[wn] != ',', gend = gf[gn] != ',';
      if (wend || gend) {
        if (wend != gend) {
          snprintf(msg, msglen, "%s line %d: %s fields than expected", name, line, wend ? "more" : "fewer");
          return 1;
        }
        break;
      }
      wf += wn + 1;
      gf += gn + 1;
      h += hn + (h[hn] == ',');
    }
    w += wl + (w[wl] == '\n');
    g += gl + (g[gl] == '\n');
  }
  return 0;
}

/* The saved files --expect takes, told apart by their content: a summary.json, or a CSV
 * by its header line: the documented columns first, then any columns appended after them
 * (consensus.csv's averaged and worst-agent gaps). */
static const struct {
  const char *name, *header;
} expect_kinds[] = {
    {"summary.json", NULL},
    {"progress.csv", "sim_time_s,step,loss,accuracy"},
    {"consensus.csv", "iteration,sim_time_s,consensus_error,optimality_gap"},
};

int output_expect_load(const char *path, output_expected *e, char *err, size_t len)
{
  memset(e, 0, sizeof *e);
  e->text = fileio_read(path, NULL);
  if (e->text == NULL) {
    snprintf(err, len, "--expect %s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  size_t hl = strcspn(e->text, "\r\n");
  for (size_t k = 1; k < sizeof expect_kinds / sizeof *expect_kinds; k++) {
    size_t n = strlen(expect_kinds[k].header);
    if (hl >= n && strncmp(e->text, expect_kinds[k].header, n) == 0 && (hl == n || e->text[n] == ','))
      e->name = expect_kinds[k].name;
  }
  if (e->name)
    return 0;
  json_error_t je;
  const char *p = e->text + strspn(e->text, " \t\r\n");
  if (*p == '{' || *p == '[') {
    e->json = json_loads(e->text, 0, &je);
    if (e->json == NULL)
      snprintf(err, len, "--expect %s:%d: not valid JSON: %s", path, je.line, je.text);
    else if (!json_is_object(e->json) || !json_object_get(e->json, "algorithm") ||
             !json_object_get(e->json, "scenario"))
      snprintf(err, len, "--expect %s: JSON, but not a dtsim summary.json (no \"algorithm\" and \"scenario\")", path);
    else {
      e->name = expect_kinds[0].name;
      return 0;
    }
  } else
    snprintf(err, len, "--expect %s: takes a saved summary.json, progress.csv or consensus.csv; this file's first "
             "line is '%.*s'", path, (int)(hl < 60 ? hl : 60), e->text);
  output_expect_free(e);
  return -1;
}

void output_expect_free(output_expected *e)
{
  xbt_free(e->text);
  json_decref(e->json);
  memset(e, 0, sizeof *e);
}

int output_expect_scenario(const output_expected *e, const scenario *sc, char *msg, size_t msglen)
{
  const json_t *want = e->json ? json_object_get(e->json, "scenario") : NULL;
  if (want == NULL)
    return 0;
  json_t *got = scenario_json(sc);
  char path[512] = "scenario", diff[1024];
  int rc = json_diff(want, got, 0, path, sizeof(path), diff, sizeof(diff));
  if (rc)
    snprintf(msg, msglen, "summary.json: %s", diff);
  json_decref(got);
  return rc;
}

int output_expect_compare(const char *dir, const output_expected *e, double rtol, char *msg, size_t msglen)
{
  char mine[4096];
  snprintf(mine, sizeof(mine), "%s/%s", dir, e->name);
  char *got = fileio_read(mine, NULL);
  int rc;
  if (got == NULL) {
    snprintf(msg, msglen, "%s: this run wrote no %s", dir, e->name);
    rc = 1;
  } else if (e->json == NULL) {
    rc = expect_csv(e->text, got, e->name, rtol, msg, msglen);
  } else {
    json_t *g = json_loads(got, 0, NULL);
    char path[512] = "", diff[1024];
    rc = json_diff(e->json, g, rtol, path, sizeof(path), diff, sizeof(diff));
    if (rc)
      snprintf(msg, msglen, "summary.json: %s", diff);
    json_decref(g);
  }
  xbt_free(got);
  return rc;
}

int output_expect(const char *dir, const char *expect_path, char *msg, size_t msglen)
{
  output_expected e;
  if (output_expect_load(expect_path, &e, msg, msglen) != 0)
    return 2;
  int rc = output_expect_compare(dir, &e, 0, msg, msglen);
  output_expect_free(&e);
  return rc;
}

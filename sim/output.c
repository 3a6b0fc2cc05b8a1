/* output.c - result files, atomic writes, and the --expect comparison. */
#include "sim/output.h"

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

/* ---- a growing text buffer ---------------------------------------------- */

typedef struct buf {
  char *s;
  size_t len, cap;
} buf;

static void buf_printf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_printf(buf *b, const char *fmt, ...)
{
  va_list ap;
  for (;;) {
    size_t room = b->cap - b->len;
    va_start(ap, fmt);
    int n = vsnprintf(b->s ? b->s + b->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < room) {
      b->len += (size_t)n;
      return;
    }
    b->cap = b->cap * 2 + (size_t)n + 64;
    b->s = xbt_realloc(b->s, b->cap);
  }
}

/* %.17g round-trips a double; NaN is written "nan" whatever its sign bit. */
static void buf_double(buf *b, double x)
{
  if (isnan(x))
    buf_printf(b, "nan");
  else
    buf_printf(b, "%.17g", x);
}

/* ---- atomic files -------------------------------------------------------- */

int output_write_file(const char *dir, const char *name, const char *data, size_t len, char *err,
                      size_t errlen)
{
  char tmp[4096], path[4096];
  snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(tmp, "wb");
  if (f == NULL) {
    snprintf(err, errlen, "%s: cannot write: %s", tmp, strerror(errno));
    return -1;
  }
  size_t w = fwrite(data, 1, len, f);
  int bad = w != len || fflush(f) != 0 || fsync(fileno(f)) != 0;
  if (fclose(f) != 0 || bad) {
    snprintf(err, errlen, "%s: write failed: %s", tmp, strerror(errno));
    unlink(tmp);
    return -1;
  }
  if (rename(tmp, path) != 0) {
    snprintf(err, errlen, "%s: cannot rename into place: %s", path, strerror(errno));
    unlink(tmp);
    return -1;
  }
  return 0;
}

/* The result folder is created only after the run; make sure now that it can be:
 * the path, or else its nearest existing ancestor, must be a writable directory. */
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
  if (!S_ISDIR(st.st_mode))
    snprintf(err, len, "--out %s: %s exists and is not a directory", out, p);
  else if (access(p, W_OK | X_OK) != 0)
    snprintf(err, len, "--out %s: cannot write into %s", out, p);
  else
    return 0;
  return -1;
}

static int make_dirs(const char *dir, char *err, size_t errlen)
{
  char p[4096];
  snprintf(p, sizeof(p), "%s", dir);
  for (char *c = p + 1; *c; c++) {
    if (*c != '/')
      continue;
    *c = '\0';
    if (mkdir(p, 0777) != 0 && errno != EEXIST)
      goto fail;
    *c = '/';
  }
  if (mkdir(p, 0777) != 0 && errno != EEXIST)
    goto fail;
  return 0;
fail:
  snprintf(err, errlen, "%s: cannot create directory: %s", p, strerror(errno));
  return -1;
}

/* ---- the four files ------------------------------------------------------ */

static json_t *json_num(double x)
{
  return isfinite(x) ? json_real(x) : json_null();
}

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
  return root;
}

static json_t *json_counts(const lbfgs_counts *c)
{
  json_t *o = json_object();
  json_object_set_new(o, "dot", json_integer(c->dot));
  json_object_set_new(o, "axpy", json_integer(c->axpy));
  json_object_set_new(o, "scale", json_integer(c->scale));
  json_object_set_new(o, "copy", json_integer(c->copy));
  json_object_set_new(o, "evaluate", json_integer(c->evaluate));
  return o;
}

/* Sandblaster's own results: L-BFGS's final state and command counts, the batches'
 * backup work, the straggling replicas. */
static json_t *sandblaster_json(const sandblaster *sb)
{
  lbfgs_result lr;
  sandblaster_result(sb, &lr);
  json_t *o = json_object();
  json_object_set_new(o, "lbfgs_status", json_string(lbfgs_status_name(lr.status)));
  json_object_set_new(o, "iterations", json_integer(lr.iterations));
  json_object_set_new(o, "evaluations", json_integer(lr.evaluations));
  json_object_set_new(o, "skipped_pairs", json_integer(lr.skipped));
  json_object_set_new(o, "f", json_num(lr.f));
  json_object_set_new(o, "gnorm", json_num(lr.gnorm));
  json_object_set_new(o, "commands", json_counts(&lr.total));
  json_object_set_new(o, "last_iteration_commands", json_counts(&lr.last));
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
  json_object_set_new(o, "batch_time_mean_s", json_num(nb ? time / (double)nb : NAN));
  json_object_set_new(o, "backups", json_integer(backups));
  json_object_set_new(o, "backup_wins", json_integer(wins));
  json_object_set_new(o, "discarded", json_integer(discarded));
  const int *ranks;
  size_t ns = sandblaster_stragglers(sb, &ranks);
  json_t *st = json_array();
  for (size_t i = 0; i < ns; i++)
    json_array_append_new(st, json_integer(ranks[i]));
  json_object_set_new(o, "stragglers", st);
  return o;
}

static json_t *collective_json(const collective_report *c)
{
  json_t *o = json_object();
  json_object_set_new(o, "op", json_string(c->op));
  json_object_set_new(o, "algorithm", json_string(c->algorithm));
  json_object_set_new(o, "ranks", json_integer((json_int_t)c->ranks));
  json_object_set_new(o, "bytes", json_real(c->bytes));
  json_object_set_new(o, "elements", json_integer((json_int_t)c->elements));
  json_object_set_new(o, "chunk_bytes", json_real(c->chunk_bytes));
  json_object_set_new(o, "iterations", json_integer(c->iterations));
  json_object_set_new(o, "time_s", json_num(c->r.iter_s));
  json_object_set_new(o, "algbw_gbps", json_num(c->algbw_gbps));
  json_object_set_new(o, "busbw_gbps", json_num(c->busbw_gbps));
  json_object_set_new(o, "formula_s", json_num(c->formula_s));
  json_object_set_new(o, "rel_error", json_num(c->formula_s > 0 ? (c->r.iter_s - c->formula_s) / c->formula_s : 0));
  json_object_set_new(o, "alpha_s", json_num(c->alpha_s));
  json_object_set_new(o, "beta_s_per_byte", json_num(c->beta_s_per_byte));
  json_object_set_new(o, "gamma_s_per_byte", json_num(c->gamma_s_per_byte));
  json_t *ck = json_object();
  json_object_set_new(ck, "numeric", json_boolean(c->r.numeric));
  json_object_set_new(ck, "exact", c->r.numeric ? json_boolean(c->r.exact) : json_null());
  json_object_set_new(ck, "max_rel_error", c->r.numeric ? json_num(c->r.max_rel_error) : json_null());
  json_object_set_new(o, "check", ck);
  return o;
}

static json_t *dataparallel_json(const run_result *r)
{
  const double *elems;
  size_t nb = dataparallel_bucket_elems(r->dataparallel, &elems);
  json_t *o = json_object(), *b = json_array();
  json_object_set_new(o, "collective", json_string(r->sc->dp_collective));
  for (size_t i = 0; i < nb; i++)
    json_array_append_new(b, json_real(elems[i]));
  json_object_set_new(o, "bucket_elements", b);
  json_object_set_new(o, "allreduces_per_replica", json_integer(dataparallel_allreduces(r->dataparallel)));
  return o;
}

static json_t *tensor_json(const tensor_report *t)
{
  const tensor_params *p = t->p;
  json_t *o = json_object();
  json_object_set_new(o, "ranks", json_integer((json_int_t)p->ranks));
  json_object_set_new(o, "data_parallel", json_integer((json_int_t)p->dp));
  json_object_set_new(o, "gpus", json_integer((json_int_t)(p->ranks * p->dp)));
  json_object_set_new(o, "hidden", json_integer((json_int_t)p->hidden));
  json_object_set_new(o, "heads", json_integer((json_int_t)p->heads));
  json_object_set_new(o, "layers", json_integer((json_int_t)p->layers));
  json_object_set_new(o, "seq", json_integer((json_int_t)p->seq));
  json_object_set_new(o, "microbatch", json_integer((json_int_t)p->microbatch));
  json_object_set_new(o, "microbatches", json_integer(p->microbatches));
  json_object_set_new(o, "sequence_parallel", json_boolean(p->seqpar));
  json_object_set_new(o, "async_grad_allreduce", json_boolean(p->async_grad));
  json_object_set_new(o, "layer_flops_forward", json_num(tensor_layer_flops(p)));
  json_object_set_new(o, "model_flops", json_num(t->r.model_flops));
  json_object_set_new(o, "step_time_s", json_num(t->r.step_s));
  json_object_set_new(o, "tflops_per_gpu", json_num(t->r.tflops_per_gpu));
  json_object_set_new(o, "dp_allreduce_elements", json_num(t->r.dp_elements));
  json_object_set_new(o, "dp_allreduce_s", json_num(t->r.dp_allreduce_s));
  json_object_set_new(o, "dp_buckets", json_integer((json_int_t)t->r.dp_buckets));
  json_object_set_new(o, "fraction_of_peak", json_num(t->r.tflops_per_gpu * 1e12 / t->peak_flops));
  json_t *ck = json_object();
  json_object_set_new(ck, "numeric", json_boolean(t->r.numeric));
  json_object_set_new(ck, "max_rel_error", t->r.numeric ? json_num(t->r.max_rel_error) : json_null());
  json_object_set_new(o, "check", ck);
  return o;
}

/* trace.json in Chrome's trace-event format (Perfetto, chrome://tracing): one process
 * per host, numbered in order of its first actor, one thread per actor (its breakdown
 * index); a complete event ("X") per execution and per communication wait, an instant
 * event ("i") per message sent with its bytes and destination; simulated microseconds. */
static void write_trace(buf *b, const run_result *r)
{
  size_t *host = xbt_malloc((r->n_actors ? r->n_actors : 1) * sizeof(size_t)), nh = 0;
  buf_printf(b, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n");
  for (size_t i = 0; i < r->n_actors; i++) {
    size_t j = 0;
    while (j < i && strcmp(r->actors[j].host, r->actors[i].host) != 0)
      j++;
    host[i] = j < i ? host[j] : nh++;
    if (j == i)
      buf_printf(b, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %zu, \"args\": {\"name\": \"%s\"}},\n",
                 host[i], r->actors[i].host);
    buf_printf(b, "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %zu, \"tid\": %zu, \"args\": {\"name\": \"%s\"}},\n",
               host[i], i, r->actors[i].name);
  }
  static const char *const names[] = {"compute", "wait", "send"};
  for (size_t i = 0; i < r->n_trace_ev; i++) {
    const run_trace_event *e = &r->trace_ev[i];
    buf_printf(b, "{\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"%s\", \"pid\": %zu, \"tid\": %zu, \"ts\": ",
               names[e->kind], e->kind == RUN_TRACE_COMPUTE ? "compute" : "comm",
               e->kind == RUN_TRACE_SEND ? "i" : "X", host[e->actor], e->actor);
    buf_double(b, e->start * 1e6);
    if (e->kind == RUN_TRACE_SEND) {
      buf_printf(b, ", \"s\": \"t\", \"args\": {\"bytes\": ");
      buf_double(b, e->bytes);
      buf_printf(b, ", \"to\": \"%s\"}}", e->dst);
    } else {
      buf_printf(b, ", \"dur\": ");
      buf_double(b, e->dur * 1e6);
      buf_printf(b, "}");
    }
    buf_printf(b, "%s\n", i + 1 < r->n_trace_ev ? "," : "");
  }
  buf_printf(b, "]}\n");
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
    json_object_set_new(o, role, e);
  }
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
    json_object_set_new(e, "time_s", json_num(p->ev[i].time));
    if (p->ev[i].kind == FAULT_LINK_DEGRADE)
      json_object_set_new(e, "factor", json_num(p->ev[i].factor));
    json_object_set_new(e, "applied", json_boolean(p->ev[i].applied));
    json_array_append_new(ev, e);
  }
  json_object_set_new(o, "events", ev);
  json_object_set_new(o, "wait_timeout_s", json_num(p->wait_timeout));
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
  json_object_set_new(o, "stopped_at_s", p->stopped ? json_num(p->stopped_at) : json_null());
  return o;
}

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
static void pipeline3d_json(json_t *o, const run_result *r, const pipeline_result *pr)
{
  const scenario *sc = r->sc;
  json_object_set_new(o, "model", json_string("transformer"));
  json_object_set_new(o, "scatter_gather", json_boolean(sc->pp_scatter_gather));
  json_object_set_new(o, "tensor_ranks", json_integer(sc->tp_ranks));
  json_object_set_new(o, "data_parallel", json_integer(sc->tp_dp));
  json_object_set_new(o, "model_flops", json_num(pr->model_flops));
  json_object_set_new(o, "tflops_per_gpu", json_num(pr->tflops_per_gpu));
  json_t *tg = json_array(), *dg = json_array();
  for (size_t s = 0; s < (size_t)sc->pp_stages; s++)
    for (size_t j = 0; j < (size_t)sc->tp_dp; j++)
      json_array_append_new(tg, comm_hosts(pipeline_tensor_comm(r->pipeline, s, j)));
  for (size_t s = 0; sc->tp_dp > 1 && s < (size_t)sc->pp_stages; s++)
    for (size_t k = 0; k < (size_t)sc->tp_ranks; k++)
      json_array_append_new(dg, comm_hosts(pipeline_dp_comm(r->pipeline, s, k)));
  json_object_set_new(o, "tensor_groups", tg);
  json_object_set_new(o, "dp_groups", dg);
}

/* summary.json's "pipeline" block: the schedule, the split, the bubble against its
 * formula (both conventions) and per-stage busy, idle and stash (as pipeline.csv). */
static json_t *pipeline_json(const run_result *r)
{
  const scenario *sc = r->sc;
  pipeline_result pr;
  pipeline_result_get(r->pipeline, &pr);
  json_t *o = json_object(), *split = json_array(), *stages = json_array();
  json_object_set_new(o, "schedule", json_string(sc->pp_schedule));
  json_object_set_new(o, "stages", json_integer(sc->pp_stages));
  json_object_set_new(o, "microbatches", json_integer(sc->pp_microbatches));
  json_object_set_new(o, "microbatch", json_integer(strcmp(sc->pp_model, "transformer") == 0 ? sc->tp_microbatch : sc->pp_microbatch));
  json_object_set_new(o, "chunks", json_integer(sc->pp_chunks));
  json_object_set_new(o, "recompute", json_boolean(sc->pp_recompute));
  for (size_t c = 0; c < (size_t)(sc->pp_stages * sc->pp_chunks); c++) {
    size_t first, last;
    pipeline_chunk_layers(r->pipeline, c, &first, &last);
    json_t *a = json_array();
    json_array_append_new(a, json_integer((json_int_t)first));
    json_array_append_new(a, json_integer((json_int_t)last));
    json_array_append_new(split, a);
  }
  json_object_set_new(o, "chunk_layers", split);
  json_object_set_new(o, "makespan_s", json_num(pr.makespan_s));
  json_object_set_new(o, "bubble_fraction", json_num(pr.bubble_fraction));
  json_object_set_new(o, "formula", json_num(pr.formula));
  json_object_set_new(o, "formula_ideal", json_num(pr.formula_ideal));
  json_object_set_new(o, "t_forward_s", json_num(pr.t_forward_s));
  json_object_set_new(o, "t_backward_s", json_num(pr.t_backward_s));
  for (size_t s = 0; s < (size_t)sc->pp_stages; s++) {
    pipeline_stage_stats st;
    pipeline_stage_get(r->pipeline, s, &st);
    json_t *x = json_object();
    json_object_set_new(x, "busy_s", json_num(st.busy_s));
    json_object_set_new(x, "idle_s", json_num(st.idle_s));
    json_object_set_new(x, "peak_stashed", json_integer(st.peak_stashed));
    json_object_set_new(x, "peak_stash_bytes", json_num(st.peak_stash_bytes));
    json_object_set_new(x, "bytes_sent", json_num(st.bytes_sent));
    json_object_set_new(x, "update_s", json_num(st.update_s));
    json_object_set_new(x, "params", json_num(st.params));
    json_array_append_new(stages, x);
  }
  json_object_set_new(o, "per_stage", stages);
  json_object_set_new(o, "gpus", json_integer((json_int_t)pr.gpus));
  json_object_set_new(o, "p2p_bytes", json_num(pr.p2p_bytes));
  if (strcmp(sc->pp_model, "transformer") == 0)
    pipeline3d_json(o, r, &pr);
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
  json_object_set_new(root, "seed", json_integer((json_int_t)r->sc->seed));
  json_object_set_new(root, "algorithm", json_string(r->sc->algorithm));
  json_object_set_new(root, "scenario", scenario_json(r->sc));
  json_object_set_new(root, "sim_time_s", json_num(r->sim_time));
  json_object_set_new(root, "steps", json_integer(r->steps));
  json_object_set_new(root, "examples", json_integer(r->examples));
  json_object_set_new(root, "final_loss", json_num(last ? last->loss : NAN));
  json_object_set_new(root, "final_accuracy", json_num(last ? last->accuracy : NAN));
  double ttt = metrics_time_to_target(m);
  json_object_set_new(root, "time_to_target_s", ttt >= 0 ? json_real(ttt) : json_null());
  json_t *st = json_object();
  json_object_set_new(st, "mean", json_real(metrics_staleness_mean(m)));
  json_object_set_new(st, "p50", json_integer(metrics_staleness_quantile(m, 0.5)));
  json_object_set_new(st, "p99", json_integer(metrics_staleness_quantile(m, 0.99)));
  json_object_set_new(st, "max", json_integer(metrics_staleness_max(m)));
  json_object_set_new(root, "staleness", st);
  json_t *comm = json_object(), *top = json_array();
  json_object_set_new(comm, "bytes_total", json_real(r->bytes_total));
  /* top_links: the ten busiest links by bytes, ties broken by name. */
  size_t *idx = xbt_malloc((r->n_links ? r->n_links : 1) * sizeof(size_t));
  for (size_t i = 0; i < r->n_links; i++)
    idx[i] = i;
  for (size_t k = 0; k < r->n_links && k < 10; k++) {
    size_t best = k;
    for (size_t j = k + 1; j < r->n_links; j++)
      if (r->links[idx[j]].bytes > r->links[idx[best]].bytes)
        best = j;
    size_t t = idx[k];
    idx[k] = idx[best];
    idx[best] = t;
    const link_stat *l = &r->links[idx[k]];
    if (l->bytes <= 0)
      break;
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(l->name));
    json_object_set_new(o, "bytes", json_real(l->bytes));
    json_object_set_new(o, "utilization", json_num(l->utilization));
    json_array_append_new(top, o);
  }
  xbt_free(idx);
  json_object_set_new(comm, "top_links", top);
  json_object_set_new(root, "comm", comm);
  json_object_set_new(root, "breakdown", breakdown_json(r));
  json_object_set_new(root, "hosts_used", json_integer((json_int_t)r->hosts_used));
  json_object_set_new(root, "status", json_string(r->status));
  if (r->sandblaster)
    json_object_set_new(root, "sandblaster", sandblaster_json(r->sandblaster));
  if (r->collective)
    json_object_set_new(root, "collective", collective_json(r->collective));
  if (r->dataparallel)
    json_object_set_new(root, "dataparallel", dataparallel_json(r));
  if (r->tensor)
    json_object_set_new(root, "tensor", tensor_json(r->tensor));
  if (r->faults)
    json_object_set_new(root, "faults", faults_json(r->faults));
  if (r->pipeline)
    json_object_set_new(root, "pipeline", pipeline_json(r));
  char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
  json_decref(root);
  return s;
}

int output_write_all(const char *dir, const run_result *r, char *err, size_t errlen)
{
  if (make_dirs(dir, err, errlen) != 0)
    return -1;
  char *summary = summary_json(r);
  buf b = {0};
  buf_printf(&b, "%s\n", summary);
  free(summary);
  int rc = output_write_file(dir, "summary.json", b.s, b.len, err, errlen);

  b.len = 0;
  buf_printf(&b, "sim_time_s,step,loss,accuracy\n");
  for (size_t i = 0; i < metrics_n_evals(r->m); i++) {
    const metrics_eval *e = metrics_eval_at(r->m, i);
    buf_double(&b, e->sim_time);
    buf_printf(&b, ",%ld,", e->steps);
    buf_double(&b, e->loss);
    buf_printf(&b, ",");
    buf_double(&b, e->accuracy);
    buf_printf(&b, "\n");
  }
  rc = rc ? rc : output_write_file(dir, "progress.csv", b.s, b.len, err, errlen);

  b.len = 0;
  buf_printf(&b, "staleness,count\n");
  const long *counts;
  size_t n = metrics_staleness(r->m, &counts);
  for (size_t s = 0; s < n; s++)
    if (counts[s])
      buf_printf(&b, "%zu,%ld\n", s, counts[s]);
  rc = rc ? rc : output_write_file(dir, "staleness.csv", b.s, b.len, err, errlen);

  b.len = 0;
  buf_printf(&b, "link,bytes,utilization\n");
  for (size_t i = 0; i < r->n_links; i++) {
    buf_printf(&b, "%s,", r->links[i].name);
    buf_double(&b, r->links[i].bytes);
    buf_printf(&b, ",");
    buf_double(&b, r->links[i].utilization);
    buf_printf(&b, "\n");
  }
  rc = rc ? rc : output_write_file(dir, "links.csv", b.s, b.len, err, errlen);

  b.len = 0;
  buf_printf(&b, "actor,role,host,compute_s,comm_s,exposed_comm_s\n");
  for (size_t i = 0; i < r->n_actors; i++) {
    const run_actor_time *a = &r->actors[i];
    buf_printf(&b, "%s,%s,%s,", a->name, a->role, a->host);
    buf_double(&b, a->compute_s);
    buf_printf(&b, ",");
    buf_double(&b, a->comm_s);
    buf_printf(&b, ",");
    buf_double(&b, a->exposed_comm_s);
    buf_printf(&b, "\n");
  }
  rc = rc ? rc : output_write_file(dir, "breakdown.csv", b.s, b.len, err, errlen);

  if (r->trace_ev != NULL) {
    b.len = 0;
    write_trace(&b, r);
    rc = rc ? rc : output_write_file(dir, "trace.json", b.s, b.len, err, errlen);
  }

  if (r->trace != NULL) {
    b.len = 0;
    buf_printf(&b, "iteration,sim_time_s,consensus_error,optimality_gap\n");
    for (size_t i = 0; i < r->n_trace; i++) {
      const consensus_point *p = &r->trace[i];
      buf_printf(&b, "%ld,", p->iteration);
      buf_double(&b, p->sim_time);
      buf_printf(&b, ",");
      buf_double(&b, p->consensus_error);
      buf_printf(&b, ",");
      buf_double(&b, p->optimality_gap);
      buf_printf(&b, "\n");
    }
    rc = rc ? rc : output_write_file(dir, "consensus.csv", b.s, b.len, err, errlen);
  }
  const sandblaster_batch *sb;
  size_t nb = r->sandblaster ? sandblaster_batches(r->sandblaster, &sb) : 0;
  b.len = 0;
  buf_printf(&b, "batch,iteration,start_s,time_s,portions,copies,backups,backup_wins,discarded,examples,loss\n");
  for (size_t i = 0; i < nb; i++) {
    buf_printf(&b, "%zu,%ld,", i + 1, sb[i].iteration);
    buf_double(&b, sb[i].start);
    buf_printf(&b, ",");
    buf_double(&b, sb[i].end - sb[i].start);
    buf_printf(&b, ",%ld,%ld,%ld,%ld,%ld,%ld,", sb[i].portions, sb[i].copies, sb[i].backups, sb[i].backup_wins,
               sb[i].discarded, sb[i].examples);
    buf_double(&b, sb[i].f);
    buf_printf(&b, "\n");
  }
  if (r->sandblaster)
    rc = rc ? rc : output_write_file(dir, "batches.csv", b.s, b.len, err, errlen);
  b.len = 0;
  buf_printf(&b, "stage,params,forward_s,backward_s,recompute_s,update_s,busy_s,idle_s,idle_fraction,peak_stashed,"
             "peak_stash_bytes,bytes_sent\n");
  pipeline_result pr = {0};
  if (r->pipeline)
    pipeline_result_get(r->pipeline, &pr);
  for (size_t s = 0; r->pipeline && s < (size_t)r->sc->pp_stages; s++) {
    pipeline_stage_stats st;
    pipeline_stage_get(r->pipeline, s, &st);
    double f[] = {st.params, st.forward_s, st.backward_s, st.recompute_s, st.update_s, st.busy_s, st.idle_s,
                  pr.makespan_s > 0 ? st.idle_s / pr.makespan_s : 0};
    buf_printf(&b, "%zu", s);
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
      buf_printf(&b, ",");
      buf_double(&b, f[i]);
    }
    buf_printf(&b, ",%ld,", st.peak_stashed);
    buf_double(&b, st.peak_stash_bytes);
    buf_printf(&b, ",");
    buf_double(&b, st.bytes_sent);
    buf_printf(&b, "\n");
  }
  if (r->pipeline)
    rc = rc ? rc : output_write_file(dir, "pipeline.csv", b.s, b.len, err, errlen);
  xbt_free(b.s);
  return rc;
}

/* ---- --expect ------------------------------------------------------------ */

static void json_path_value(const json_t *v, char *out, size_t len)
{
  char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(17));
  snprintf(out, len, "%s", s ? s : "?");
  free(s);
}

/* Finds the first difference between two JSON values; path names where. */
static int json_diff(const json_t *want, const json_t *got, char *path, size_t plen, char *msg, size_t msglen)
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
      if (json_diff(wv, gv, path, plen, msg, msglen))
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
      if (json_diff(wv, gv, path, plen, msg, msglen))
        return 1;
      path[base] = '\0';
    }
    return 0;
  }
  if (json_equal((json_t *)want, (json_t *)got))
    return 0;
  char w[256], g[256];
  json_path_value(want, w, sizeof(w));
  json_path_value(got, g, sizeof(g));
  snprintf(msg, msglen, "%s: expected %s, got %s", path, w, g);
  return 1;
}

char *output_read_file(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return NULL;
  buf b = {0};
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
    if (b.len + n + 1 > b.cap) {
      b.cap = 2 * (b.len + n + 1);
      b.s = xbt_realloc(b.s, b.cap);
    }
    memcpy(b.s + b.len, chunk, n);
    b.len += n;
  }
  fclose(f);
  if (b.s == NULL)
    b.s = xbt_malloc0(1);
  b.s[b.len] = '\0';
  if (len)
    *len = b.len;
  return b.s;
}

static int expect_csv(const char *want, const char *got, const char *name, char *msg, size_t msglen)
{
  const char *w = want, *g = got;
  char header[256] = "";
  for (int line = 1; *w || *g; line++) {
    size_t wl = strcspn(w, "\n"), gl = strcspn(g, "\n");
    if (line == 1)
      snprintf(header, sizeof(header), "%.*s", (int)wl, w);
    if (wl != gl || strncmp(w, g, wl) != 0) {
      /* name the first differing column */
      int col = 0;
      size_t i = 0;
      while (i < wl && i < gl && w[i] == g[i]) {
        if (w[i] == ',')
          col++;
        i++;
      }
      const char *h = header;
      for (int c = 0; c < col && h; c++) {
        h = strchr(h, ',');
        h = h ? h + 1 : NULL;
      }
      size_t ws = i, gs = i;
      while (ws > 0 && w[ws - 1] != ',')
        ws--;
      gs = ws;
      size_t we = ws + strcspn(w + ws, ",\n"), ge = gs + strcspn(g + gs, ",\n");
      if (!*w || !*g)
        snprintf(msg, msglen, "%s line %d: %s", name, line, *w ? "missing from this run" : "not in the expected file");
      else
        snprintf(msg, msglen, "%s line %d, column %.*s: expected %.*s, got %.*s", name, line,
                 h ? (int)strcspn(h, ",") : 1, h ? h : "?", (int)(we - ws), w + ws, (int)(ge - gs), g + gs);
      return 1;
    }
    w += wl + (w[wl] == '\n');
    g += gl + (g[gl] == '\n');
  }
  return 0;
}

int output_expect(const char *dir, const char *expect_path, char *msg, size_t msglen)
{
  const char *base = strrchr(expect_path, '/');
  base = base ? base + 1 : expect_path;
  int is_json = strstr(base, ".json") != NULL;
  int is_csv = strstr(base, ".csv") != NULL;
  if (!is_json && !is_csv) {
    snprintf(msg, msglen, "%s: --expect takes a saved summary.json, progress.csv or consensus.csv", expect_path);
    return 2;
  }
  char *want = output_read_file(expect_path, NULL);
  if (want == NULL) {
    snprintf(msg, msglen, "%s: cannot open: %s", expect_path, strerror(errno));
    return 2;
  }
  const char *name = is_json ? "summary.json" : strcmp(base, "consensus.csv") == 0 ? "consensus.csv" : "progress.csv";
  char mine[4096];
  snprintf(mine, sizeof(mine), "%s/%s", dir, name);
  char *got = output_read_file(mine, NULL);
  int rc;
  if (got == NULL) {
    snprintf(msg, msglen, "%s: cannot open: %s", mine, strerror(errno));
    rc = 2;
  } else if (is_csv) {
    rc = expect_csv(want, got, name, msg, msglen);
  } else {
    json_error_t je;
    json_t *w = json_loads(want, 0, &je), *g = json_loads(got, 0, NULL);
    if (w == NULL) {
      snprintf(msg, msglen, "%s:%d: not valid JSON: %s", expect_path, je.line, je.text);
      rc = 2;
    } else {
      char path[512] = "", diff[1024];
      rc = json_diff(w, g, path, sizeof(path), diff, sizeof(diff));
      if (rc)
        snprintf(msg, msglen, "summary.json: %s", diff);
    }
    json_decref(w);
    json_decref(g);
  }
  xbt_free(want);
  xbt_free(got);
  return rc;
}

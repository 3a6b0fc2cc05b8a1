/* moe_report.c - what a run.algorithm = moe run reports: summary.json's "moe" block (the
 * routing: imbalance, drops; the all-to-alls: bytes per pair, time; the serial check),
 * moe_steps.csv (one row per step) and the closing line. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include <xbt/sysdep.h>

#include "algorithms/moe_impl.h"
#include "algorithms/report.h"
#include "models/moe.h"
#include "models/optim.h"
#include "models/rng.h"

void moe_ep_serial_check(moe_ep *m)
{
  const moe_params *p = m->p;
  size_t n = m->n_params, P = p->ranks, b = p->batch;
  gpt_dims gd = m->gd;
  gd.moe.groups = P; /* each rank's shard a routing group */
  gsl_vector *ws = gsl_vector_alloc(n), *g = gsl_vector_alloc(n);
  double *m1 = xbt_malloc0(n * sizeof(double)), *m2 = xbt_malloc0(n * sizeof(double)), loss;
  gsl_matrix *X = gsl_matrix_alloc(P * b, p->seq + 1);
  gsl_matrix_view shard;
  double *y = xbt_malloc0(b * sizeof(double));
  gsl_rng **r = xbt_malloc0(P * sizeof(gsl_rng *));
  for (size_t s = 0; s < P; s++)
    r[s] = rng_create(m->cfg->seed, RNG_ROLE_WORKER, (int)s); /* the ranks' streams: the same draws */
  gsl_vector_memcpy(ws, m->w0);
  for (long step = 1; step <= m->updates; step++) {
    for (size_t s = 0; s < P; s++) {
      shard = gsl_matrix_submatrix(X, s * b, 0, b, p->seq + 1);
      data_sample_batch(m->tok_train, 0, data_n(m->tok_train), r[s], b, &shard.matrix, y);
    }
    xbt_assert(gpt_loss_grad(&gd, ws, P * b, X->data, &loss, g) == 0, "moe: the serial GPT refused its shapes");
    if (p->optimizer == MOE_EP_ADAM)
      optim_adam_apply(ws->data, m1, m2, g->data, n, p->lr, OPTIM_ADAM_B1, OPTIM_ADAM_B2, OPTIM_ADAM_EPS, step);
    else
      optim_sgd_apply(ws->data, g->data, n, p->lr);
  }
  m->max_diff = m->max_moved = 0;
  for (size_t i = 0; i < n; i++) {
    m->max_diff = fmax(m->max_diff, fabs(gsl_vector_get(m->w, i) - gsl_vector_get(ws, i)));
    m->max_moved = fmax(m->max_moved, fabs(gsl_vector_get(ws, i) - gsl_vector_get(m->w0, i)));
  }
  m->checked = 1;
  for (size_t s = 0; s < P; s++)
    gsl_rng_free(r[s]);
  xbt_free(r);
  xbt_free(y);
  xbt_free(m1);
  xbt_free(m2);
  gsl_matrix_free(X);
  gsl_vector_free(ws);
  gsl_vector_free(g);
}

static json_t *matrix_json(const double *a, size_t P)
{
  json_t *rows = json_array();
  for (size_t i = 0; i < P; i++) {
    json_t *row = json_array();
    for (size_t j = 0; j < P; j++)
      json_array_append_new(row, report_num(a[i * P + j]));
    json_array_append_new(rows, row);
  }
  return rows;
}

/* Mean over the steps of one field (offset into moe_ep_step); NaN without steps. */
static double steps_mean(const moe_ep *m, size_t first, size_t field)
{
  double s = 0;
  for (size_t i = first; i < m->n_steps; i++)
    s += *(const double *)((const char *)&m->steps[i] + field);
  return m->n_steps > first ? s / (double)(m->n_steps - first) : NAN;
}

/* The last steps whose mean is "the end of training": the last tenth, at least one. */
static size_t tail_start(const moe_ep *m)
{
  size_t tail = m->n_steps / 10 > 0 ? m->n_steps / 10 : 1;
  return m->n_steps > tail ? m->n_steps - tail : 0;
}

static double a2a_max(const moe_ep *m)
{
  double t = 0;
  for (size_t i = 0; i < m->p->ranks; i++)
    t = fmax(t, m->ranks[i].a2a_s);
  return t;
}

static json_t *check_json(const moe_ep *m)
{
  json_t *ck = json_object();
  json_object_set_new(ck, "done", json_boolean(m->checked));
  json_object_set_new(ck, "steps", json_integer(m->updates));
  json_object_set_new(ck, "max_abs_diff", m->checked ? report_num(m->max_diff) : json_null());
  json_object_set_new(ck, "max_moved", m->checked ? report_num(m->max_moved) : json_null());
  return ck;
}

static void steps_csv(const moe_ep *m, report *rep)
{
  report_text t = {0};
  report_printf(&t, "step,time_s,imbalance,kept_imbalance,dropped_fraction,alltoall_bytes\n");
  for (size_t i = 0; i < m->n_steps; i++) {
    const moe_ep_step *s = &m->steps[i];
    report_printf(&t, "%zu,", i + 1);
    report_double(&t, s->end_s);
    report_printf(&t, ",");
    report_double(&t, s->imbalance);
    report_printf(&t, ",");
    report_double(&t, s->kept_imbalance);
    report_printf(&t, ",");
    report_double(&t, s->dropped);
    report_printf(&t, ",");
    report_double(&t, s->bytes);
    report_printf(&t, "\n");
  }
  report_add_file(rep, "moe_steps.csv", &t);
}

/* progress.csv's own columns: each evaluation's last finished step's imbalance and dropped
 * fraction (empty before the first step). */
static void progress_columns(const moe_ep *m, metrics *mt, report *rep)
{
  rep->progress_columns = "imbalance,dropped_fraction";
  for (size_t i = 0; i < metrics_n_evals(mt); i++) {
    long s = metrics_eval_at(mt, i)->steps;
    if (s >= 1 && (size_t)s <= m->n_steps) {
      report_double(&rep->progress_rows, m->steps[s - 1].imbalance);
      report_printf(&rep->progress_rows, ",");
      report_double(&rep->progress_rows, m->steps[s - 1].dropped);
      report_printf(&rep->progress_rows, "\n");
    } else
      report_printf(&rep->progress_rows, ",\n");
  }
}

void moe_ep_report(void *state, const run_config *cfg, metrics *mt, report *rep)
{
  moe_ep *m = state;
  const moe_params *p = m->p;
  size_t P = p->ranks, tail = tail_start(m);
  if (p->serial_check)
    moe_ep_serial_check(m);
  rep->examples = m->updates * (long)(P * p->batch);
  rep->step_time_s = m->updates > 0 ? m->end / (double)m->updates : NAN;
  rep->devices = P;
  rep->worker_role = "gpu";
  json_t *o = json_object();
  json_object_set_new(o, "ranks", json_integer((json_int_t)P));
  json_object_set_new(o, "experts", json_integer((json_int_t)p->experts));
  json_object_set_new(o, "experts_per_rank", json_integer((json_int_t)(p->experts / P)));
  json_object_set_new(o, "top_k", json_integer((json_int_t)p->top_k));
  json_object_set_new(o, "capacity_factor", report_num(p->capacity_factor));
  json_object_set_new(o, "capacity", json_integer((json_int_t)moe_capacity(&m->gd.moe, p->batch * p->seq)));
  json_object_set_new(o, "aux_coef", report_num(p->aux_coef));
  json_object_set_new(o, "parameters", json_integer((json_int_t)m->n_params));
  json_object_set_new(o, "allreduce_elements", json_integer((json_int_t)m->n_dense));
  json_object_set_new(o, "steps", json_integer(m->updates));
  json_object_set_new(o, "imbalance_mean", report_num(steps_mean(m, 0, offsetof(moe_ep_step, imbalance))));
  json_object_set_new(o, "imbalance_end", report_num(steps_mean(m, tail, offsetof(moe_ep_step, imbalance))));
  json_object_set_new(o, "kept_imbalance_end", report_num(steps_mean(m, tail, offsetof(moe_ep_step, kept_imbalance))));
  json_object_set_new(o, "dropped_fraction", report_num(m->assigned_all > 0 ? m->dropped_all / m->assigned_all : NAN));
  json_object_set_new(o, "dropped_fraction_end", report_num(steps_mean(m, tail, offsetof(moe_ep_step, dropped))));
  json_object_set_new(o, "tokens_per_pair", matrix_json(m->tokens, P));
  json_object_set_new(o, "hidden", json_integer((json_int_t)p->hidden));
  json_object_set_new(o, "elem_bytes", json_integer((json_int_t)cfg->elem_bytes));
  json_object_set_new(o, "alltoall_bytes_per_pair", matrix_json(m->bytes, P));
  json_object_set_new(o, "alltoall_s", report_num(a2a_max(m)));
  json_object_set_new(o, "alltoall_s_per_step", report_num(m->updates > 0 ? a2a_max(m) / (double)m->updates : NAN));
  json_object_set_new(o, "train_loss", report_num(m->train_loss));
  json_object_set_new(o, "initial_loss", report_num(m->initial_loss));
  json_object_set_new(o, "loss_floor", report_num(data_tokens_loss_floor(p->seq + 1, p->vocab)));
  json_object_set_new(o, "serial_check", check_json(m));
  report_add_block(rep, "moe", o);
  steps_csv(m, rep);
  progress_columns(m, mt, rep);
}

void moe_ep_closing(void *state, const run_config *cfg, const report_outcome *o, char *line, size_t len)
{
  (void)cfg;
  const moe_ep *m = state;
  size_t tail = tail_start(m);
  char shares[300];
  report_perf_text(&o->perf, 1, shares, sizeof shares);
  double step = m->updates > 0 ? m->end / (double)m->updates : NAN;
  double a2a = m->updates > 0 ? a2a_max(m) / (double)m->updates : NAN;
  snprintf(line, len, "moe %s: %zu GPUs, %zu experts, top-%zu, capacity %.3g: imbalance %.3g (max/mean at the end), "
           "%.3g%% dropped, all-to-all %.3g of %.3g s per step; loss %.4g%s%s", o->status, m->p->ranks,
           m->p->experts, m->p->top_k, m->p->capacity_factor,
           steps_mean(m, tail, offsetof(moe_ep_step, imbalance)),
           100 * (m->assigned_all > 0 ? m->dropped_all / m->assigned_all : 0), a2a, step, o->loss,
           shares[0] ? "; " : "", shares);
}

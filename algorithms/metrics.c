/* metrics.c - per-actor slots merged in rank order, and the evaluation log. */
#include "algorithms/metrics.h"

#include <math.h>

#include <string.h>
#include <xbt/sysdep.h>

struct metrics {
  metrics_slot *slots;
  size_t n_slots;
  metrics_eval *evals;
  size_t n_evals, cap_evals;
  metrics_status status;
  double time_to_target;
  long *merged;      /* merged staleness histogram, built on first use */
  size_t merged_len;
  int merged_done;
};

metrics *metrics_create(size_t n_slots)
{
  metrics *m = xbt_malloc0(sizeof(*m));
  m->slots = xbt_malloc0((n_slots ? n_slots : 1) * sizeof(*m->slots));
  m->n_slots = n_slots;
  m->time_to_target = -1;
  return m;
}

void metrics_free(metrics *m)
{
  if (m == NULL)
    return;
  for (size_t i = 0; i < m->n_slots; i++)
    xbt_free(m->slots[i].staleness);
  xbt_free(m->slots);
  xbt_free(m->evals);
  xbt_free(m->merged);
  xbt_free(m);
}

metrics_slot *metrics_slot_at(metrics *m, size_t i)
{
  return i < m->n_slots ? &m->slots[i] : NULL;
}

void metrics_slot_staleness(metrics_slot *slot, long s)
{
  size_t i = s < 0 ? 0 : (size_t)s;
  if (i >= slot->staleness_len) {
    size_t len = slot->staleness_len ? slot->staleness_len : 16;
    while (len <= i)
      len *= 2;
    slot->staleness = xbt_realloc(slot->staleness, len * sizeof(long));
    memset(slot->staleness + slot->staleness_len, 0, (len - slot->staleness_len) * sizeof(long));
    slot->staleness_len = len;
  }
  slot->staleness[i]++;
}

void metrics_record_eval(metrics *m, double sim_time, long steps, double loss, double accuracy)
{
  if (m->n_evals == m->cap_evals) {
    m->cap_evals = m->cap_evals ? 2 * m->cap_evals : 64;
    m->evals = xbt_realloc(m->evals, m->cap_evals * sizeof(*m->evals));
  }
  m->evals[m->n_evals++] = (metrics_eval){sim_time, steps, loss, accuracy, NAN, NAN, NAN, NAN};
}

void metrics_record_noise(metrics *m, double noise_scale, double grad_sq, double trace_sigma)
{
  if (m->n_evals == 0)
    return;
  metrics_eval *e = &m->evals[m->n_evals - 1];
  e->noise_scale = noise_scale;
  e->grad_sq = grad_sq;
  e->trace_sigma = trace_sigma;
}

void metrics_record_curvature(metrics *m, double lambda_max)
{
  if (m->n_evals > 0)
    m->evals[m->n_evals - 1].lambda_max = lambda_max;
}

void metrics_set_status(metrics *m, metrics_status st) { m->status = st; }
void metrics_set_time_to_target(metrics *m, double t) { m->time_to_target = t; }
size_t metrics_n_evals(const metrics *m) { return m->n_evals; }
const metrics_eval *metrics_eval_at(const metrics *m, size_t i) { return i < m->n_evals ? &m->evals[i] : NULL; }
metrics_status metrics_get_status(const metrics *m) { return m->status; }
double metrics_time_to_target(const metrics *m) { return m->time_to_target; }

const char *metrics_status_name(metrics_status st)
{
  switch (st) {
  case METRICS_OK:
    return "ok";
  case METRICS_DIVERGED:
    return "diverged";
  case METRICS_TARGET_MISSED:
    return "target_not_reached";
  case METRICS_LINESEARCH_FAILED:
    return "linesearch_failed";
  case METRICS_HOST_FAILED:
    return "host_failed";
  case METRICS_STALLED:
    return "stalled";
  case METRICS_LINK_FAILED:
    return "link_failed";
  }
  return "unknown";
}

long metrics_total_steps(const metrics *m)
{
  long total = 0;
  for (size_t i = 0; i < m->n_slots; i++)
    total += m->slots[i].steps;
  return total;
}

size_t metrics_staleness(metrics *m, const long **counts)
{
  if (!m->merged_done) {
    size_t len = 0;
    for (size_t i = 0; i < m->n_slots; i++)
      for (size_t s = 0; s < m->slots[i].staleness_len; s++)
        if (m->slots[i].staleness[s] && s + 1 > len)
          len = s + 1;
    m->merged = xbt_malloc0((len ? len : 1) * sizeof(long));
    for (size_t i = 0; i < m->n_slots; i++)
      for (size_t s = 0; s < len && s < m->slots[i].staleness_len; s++)
        m->merged[s] += m->slots[i].staleness[s];
    m->merged_len = len;
    m->merged_done = 1;
  }
  *counts = m->merged;
  return m->merged_len;
}

static long staleness_total(metrics *m, const long **c, size_t *len)
{
  *len = metrics_staleness(m, c);
  long n = 0;
  for (size_t s = 0; s < *len; s++)
    n += (*c)[s];
  return n;
}

double metrics_staleness_mean(metrics *m)
{
  const long *c;
  size_t len;
  long n = staleness_total(m, &c, &len);
  if (n == 0)
    return 0;
  double sum = 0;
  for (size_t s = 0; s < len; s++)
    sum += (double)s * (double)c[s];
  return sum / (double)n;
}

long metrics_staleness_quantile(metrics *m, double q)
{
  const long *c;
  size_t len;
  long n = staleness_total(m, &c, &len);
  if (n == 0)
    return 0;
  long cum = 0;
  for (size_t s = 0; s < len; s++) {
    cum += c[s];
    if ((double)cum >= q * (double)n)
      return (long)s;
  }
  return (long)len - 1;
}

long metrics_staleness_max(metrics *m)
{
  const long *c;
  size_t len = metrics_staleness(m, &c);
  return len ? (long)len - 1 : 0;
}

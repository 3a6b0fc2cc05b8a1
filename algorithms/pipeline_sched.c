/* pipeline_sched.c - the pipeline's schedules (pure): which forward and backward passes a
 * device runs per step, and in what order (GPipe sec. 2.2; PipeDream-Flush; Megatron-LM's
 * interleaved 1F1B, Narayanan et al. 2021 sec. 2.2.2), the bubble formulas of PTD-P sec. 2.2,
 * and the balanced split of the dense layers into model chunks. */
#include "algorithms/pipeline_sched.h"

#include <string.h>
#include <xbt/sysdep.h>

static const char *const schedule_names[] = {"gpipe", "1f1b", "interleaved"};

int pipeline_schedule_parse(const char *s, pipeline_schedule *out)
{
  for (int i = 0; i < 3; i++)
    if (strcmp(s, schedule_names[i]) == 0) {
      *out = (pipeline_schedule)i;
      return 0;
    }
  return -1;
}

const char *pipeline_schedule_name(pipeline_schedule s)
{
  return (unsigned)s < 3 ? schedule_names[s] : "?";
}

/* Megatron-LM's interleaved schedule (schedules.py,
 * forward_backward_pipelining_with_interleaving): the k-th forward of a device runs
 * microbatch (k / pv) p + k mod p on its chunk (k mod pv) / p; the k-th backward the same
 * microbatch on its chunk v-1 - (k mod pv) / p. */
static pipeline_op interleaved_op(size_t p, size_t v, size_t device, long k, int backward)
{
  long group = (long)(p * v);
  size_t local = (size_t)(k % group) / p;
  if (backward)
    local = v - 1 - local;
  return (pipeline_op){backward, (k / group) * (long)p + k % (long)p, local * p + device};
}

size_t pipeline_schedule_ops(pipeline_schedule s, size_t p, long m, size_t v, size_t device, pipeline_op *ops)
{
  if (p == 0 || m <= 0 || v == 0 || device >= p || (s != PIPELINE_INTERLEAVED && v != 1) ||
      (s == PIPELINE_INTERLEAVED && m % (long)p != 0) || (unsigned)s > PIPELINE_INTERLEAVED)
    return 0;
  long total = m * (long)v, warmup;
  if (s == PIPELINE_GPIPE)
    warmup = total; /* GPipe sec. 2.2: every forward, then every backward */
  else if (s == PIPELINE_1F1B)
    warmup = (long)(p - device - 1); /* PipeDream-Flush: fill the pipe below this stage */
  else if (m == (long)p)
    warmup = total; /* Megatron: with m = p every microbatch is warm-up */
  else
    warmup = (long)(p - device - 1) * 2 + (long)((v - 1) * p);
  if (warmup > total)
    warmup = total;
  if (ops == NULL)
    return 2 * (size_t)total;
  size_t n = 0;
  for (long k = 0; k < warmup; k++)
    ops[n++] = interleaved_op(p, v, device, k, 0);
  for (long i = 0; i < total - warmup; i++) { /* steady state: one forward, one backward */
    ops[n++] = interleaved_op(p, v, device, warmup + i, 0);
    ops[n++] = interleaved_op(p, v, device, i, 1);
  }
  for (long i = total - warmup; i < total; i++) /* cool-down */
    ops[n++] = interleaved_op(p, v, device, i, 1);
  return n;
}

double pipeline_bubble_formula(pipeline_schedule s, size_t p, long m, size_t v)
{
  double vm = (double)m * (double)(s == PIPELINE_INTERLEAVED ? v : 1);
  return (double)(p - 1) / (vm + (double)(p - 1));
}

int pipeline_split_balanced(const arch *shapes, size_t k, size_t *counts)
{
  size_t n = arch_n_layers(shapes) - 1;
  if (k == 0 || n < k)
    return -1;
  double *pre = xbt_malloc0((n + 1) * sizeof(double));
  for (size_t i = 0; i < n; i++)
    pre[i + 1] = pre[i] + arch_layer_train_flops(shapes, i + 1);
  /* best[c][j]: the smallest largest chunk over splits of the first j layers into c chunks;
   * cut[c][j]: where the last of those chunks starts */
  double *best = xbt_malloc0((k + 1) * (n + 1) * sizeof(double));
  size_t *cut = xbt_malloc0((k + 1) * (n + 1) * sizeof(size_t));
  for (size_t j = 1; j <= n; j++)
    best[1 * (n + 1) + j] = pre[j];
  for (size_t c = 2; c <= k; c++)
    for (size_t j = c; j <= n; j++) {
      double b = -1;
      for (size_t i = c - 1; i < j; i++) {
        double prev = best[(c - 1) * (n + 1) + i], last = pre[j] - pre[i];
        double worst = prev > last ? prev : last;
        if (b < 0 || worst <= b) {
          b = worst;
          cut[c * (n + 1) + j] = i;
        }
      }
      best[c * (n + 1) + j] = b;
    }
  size_t j = n;
  for (size_t c = k; c >= 2; c--) {
    size_t i = cut[c * (n + 1) + j];
    counts[c - 1] = j - i;
    j = i;
  }
  counts[0] = j;
  xbt_free(pre);
  xbt_free(best);
  xbt_free(cut);
  return 0;
}

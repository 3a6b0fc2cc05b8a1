/* sweep_metric.c - sweep.csv's figures as --plot-metric names them, and which of them a
 * point's algorithm reports (sweep_metric.h). */
#include "sim/lab/sweep_metric.h"

#include <stdio.h>
#include <string.h>

#include "algorithms/registry.h"

/* New columns go at the end of their group: scripts read them by name. */
const sweep_column sweep_columns[] = {
    {"sim_time_s", NULL, "sim_time_s", "simulated time (s)"},
    {"steps", NULL, "steps", "steps (minibatches, all workers)"},
    {"examples", NULL, "examples", "training examples"},
    {"final_loss", NULL, "final_loss", "final held-out loss"},
    {"final_accuracy", NULL, "final_accuracy", "final held-out accuracy (fraction)"},
    {"time_to_target_s", NULL, "time_to_target_s", "time to the target accuracy (simulated s)"},
    {"status", NULL, "status", "status"},
    {"bytes_total", "comm", "bytes_total", "bytes sent (all messages)"},
    {"hosts_used", NULL, "hosts_used", "hosts used"},
    {"step_time_s", "performance", "step_time_s", "step time (simulated s per step of one worker)"},
    {"examples_per_s", "performance", "examples_per_s", "training examples per simulated s"},
    {"tflops_per_device", "performance", "tflops_per_device", "model Tflop/s per device"},
    {"mfu", "performance", "mfu", "model flop utilisation (fraction of peak)"},
    {"compute_pct", "performance", "compute_pct", "workers' compute (% of simulated time)"},
    {"comm_pct", "performance", "comm_pct", "workers' communication (% of simulated time)"},
    {"exposed_comm_pct", "performance", "exposed_comm_pct", "workers' exposed communication (% of simulated time)"},
};
const size_t sweep_n_columns = sizeof(sweep_columns) / sizeof(sweep_columns[0]);

/* The members of the common blocks a sweep flattens that every run has a number for
 * (output.c's summary_json): staleness's (0s where updates are never stale) and
 * performance's beyond the fixed columns. */
static const char *const staleness_members = "mean p50 p99 max";
static const char *const performance_members = "peak_tflops_per_device idle_pct";

int sweep_metric_find(const char *name, size_t *m)
{
  for (size_t i = 0; i < sweep_n_columns; i++)
    if (strcmp(sweep_columns[i].name, name) == 0 && strcmp(name, "status") != 0) {
      *m = i;
      return 0;
    }
  return -1;
}

int sweep_metric_check(const char *name, char *err, size_t len)
{
  size_t m;
  if (sweep_metric_find(name, &m) == 0)
    return 0;
  /* a block's member: letters, digits, '_' and inner dots; a dotted name starts with a block
   * summary.json can have (staleness, performance, faults, an algorithm's) */
  int ok = strcmp(name, "status") != 0 && name[0] != '\0' && name[0] != '.' && name[strlen(name) - 1] != '.' &&
           strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") == strlen(name) &&
           strstr(name, "..") == NULL;
  const char *dot = strchr(name, '.');
  if (ok && dot) {
    size_t bl = (size_t)(dot - name);
    ok = (bl == 9 && strncmp(name, "staleness", bl) == 0) || (bl == 11 && strncmp(name, "performance", bl) == 0) ||
         (bl == 6 && strncmp(name, "faults", bl) == 0);
    for (size_t a = 0; a < algorithm_count && !ok; a++)
      ok = strlen(algorithm_registry[a]->name) == bl && strncmp(algorithm_registry[a]->name, name, bl) == 0;
  }
  if (!ok)
    snprintf(err, len, "--plot-metric %s: not a numeric column of sweep.csv (a fixed one such as step_time_s, or a "
             "summary.json block's member such as collective.busbw_gbps or busbw_gbps; try: dtsim sweep --help)", name);
  return ok ? 0 : -1;
}

/* Whether a run of sc has a number in fixed column m. */
static int fixed_reported(size_t m, const scenario *sc, const algorithm *a)
{
  const char *name = sweep_columns[m].name;
  if (strcmp(name, "final_loss") == 0 || strcmp(name, "final_accuracy") == 0)
    return sc->model.numerics && algorithm_lists(a->reports, name);
  if (strcmp(name, "time_to_target_s") == 0)
    return sc->run.target_accuracy > 0 && sc->model.numerics && algorithm_lists(a->reports, "final_accuracy");
  if (strcmp(name, "examples_per_s") == 0 || strcmp(name, "tflops_per_device") == 0 || strcmp(name, "mfu") == 0)
    return algorithm_lists(a->reports, name);
  return 1;
}

/* Whether member (a last name) of block (length bl) is a number a run of sc reports. */
static int member_reported(const char *block, size_t bl, const char *member, const scenario *sc,
                           const algorithm *a)
{
  size_t m;
  if (bl == 9 && strncmp(block, "staleness", bl) == 0)
    return algorithm_lists(a->reports, "staleness") && algorithm_lists(staleness_members, member);
  if (bl == 11 && strncmp(block, "performance", bl) == 0)
    return algorithm_lists(performance_members, member) ||
           (sweep_metric_find(member, &m) == 0 && sweep_columns[m].parent &&
            strcmp(sweep_columns[m].parent, "performance") == 0 && fixed_reported(m, sc, a));
  if (bl == 6 && strncmp(block, "faults", bl) == 0)
    return settings_faulty(sc); /* its counters, all numbers but `stopped` */
  return strlen(a->name) == bl && strncmp(block, a->name, bl) == 0 && algorithm_lists(a->figures, member);
}

int sweep_metric_reported(const char *name, const scenario *sc)
{
  const algorithm *a = algorithm_find(sc->run.algorithm);
  size_t m;
  if (a == NULL)
    return 0;
  if (sweep_metric_find(name, &m) == 0)
    return fixed_reported(m, sc, a);
  const char *dot = strchr(name, '.'), *last = strrchr(name, '.');
  if (dot) /* block.member or block.object.member */
    return member_reported(name, (size_t)(dot - name), last + 1, sc, a);
  /* a member's last name, in any block */
  static const char *const blocks[] = {"staleness", "performance", "faults"};
  for (size_t b = 0; b < 3; b++)
    if (member_reported(blocks[b], strlen(blocks[b]), name, sc, a))
      return 1;
  return member_reported(a->name, strlen(a->name), name, sc, a);
}

void sweep_metric_list(const scenario *sc, char *buf, size_t len)
{
  const algorithm *a = algorithm_find(sc->run.algorithm);
  size_t o = 0;
  buf[0] = '\0';
  for (size_t m = 0; m < sweep_n_columns && a && o < len; m++)
    if (strcmp(sweep_columns[m].name, "status") != 0 && fixed_reported(m, sc, a))
      o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? " " : "", sweep_columns[m].name);
  if (a && algorithm_lists(a->reports, "staleness") && o < len)
    o += (size_t)snprintf(buf + o, len - o, " staleness.%s", "mean|p50|p99|max");
  if (a && a->figures && o < len)
    snprintf(buf + o, len - o, "; %s's %s", a->name, a->figures);
}

const char *sweep_metric_default(int target)
{
  return target ? "time_to_target_s" : "step_time_s";
}

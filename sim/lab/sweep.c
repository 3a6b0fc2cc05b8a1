/* sweep.c - `dtsim sweep`: the cartesian product of --vary lists, one `dtsim run` per
 * point (spawn.c), and sweep.csv + sweep.png rebuilt from the point folders.
 *
 * A sweep folder OUT holds points/NNN-KEY=VALUE-.../ per point: point.json (its index,
 * the point count and the varied keys with their values, written before the run),
 * run.log (the run's stdout and stderr) and the run's own result files. sweep.csv and
 * sweep.png are made from those folders only, the same way after a direct sweep and
 * after `--merge`, so both give the same bytes (sweep_merge.c). */
#include "sim/lab/sweep.h"
#include "sim/fileio.h"
#include "sim/lab/sweep_check.h"
#include "sim/lab/sweep_grid.h"
#include "sim/lab/sweep_merge.h"
#include "sim/lab/sweep_metric.h"
#include "sim/lab/sweep_resume.h"

#include <errno.h>
#include <signal.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "sim/output.h"
#include "sim/scenario.h"
#include "sim/interrupt.h"
#include "sim/lab/spawn.h"
#include "sim/progress.h"
#include "sim/wallclock.h"

#define ERRLEN 1400

static const char usage[] =
    "usage: dtsim sweep [SCENARIO.ini] --vary SECTION.KEY=V1,V2,... [--vary ...] [--set S.K=V]...\n"
    "                   [--seed N] [--jobs N] [--out DIR] [--plot-metric M] [--emit-jobs]\n"
    "                   [--quiet] [--cfg=...] [--log=...]\n"
    "       dtsim sweep --merge DIR... [--out DIR] [--plot-metric M] [--quiet]\n"
    "\n"
    "Runs SCENARIO.ini (without it, the built-in scenario, as dtsim run) at every point of\n"
    "the cartesian product of the --vary lists (the first --vary varies slowest), each point\n"
    "a `dtsim run` in its own process, and writes into DIR (default ./dtsim-sweep):\n"
    "  points/NNN-KEY=VALUE-.../  one folder per point: point.json (its varied keys),\n"
    "                             run.log (the run's stdout and stderr) and its results\n"
    "  sweep.csv   one row per point in product order: the varied keys (section.key), the\n"
    "              plotted metric M and M_ratio, M over its value at point 1 (the baseline:\n"
    "              every key at its first value), then what the points report of\n"
    "              sim_time_s,steps,examples,final_loss,final_accuracy,time_to_target_s,\n"
    "              status,bytes_total,hosts_used, and performance's step_time_s,\n"
    "              examples_per_s,tflops_per_device,mfu,compute_pct,comm_pct,exposed_comm_pct,\n"
    "              then the blocks after status flattened (collective.busbw_gbps, ...) and\n"
    "              staleness where updates can be stale; a column no point has a value in is\n"
    "              left out; reals to 6 significant digits (summary.json has them all)\n"
    "  sweep.png   M against the first varied key, one line per combination of the other\n"
    "              keys (categories when a value is not a number), an axis logarithmic\n"
    "              when its values span a decade\n"
    "The whole sweep is checked before anything runs: every key, every value, every\n"
    "point's scenario, every platform file and M. A point that misses its goal (diverged,\n"
    "target not reached) is a row with its status; a point whose run fails otherwise (bad\n"
    "input found late, crash) stops the sweep with exit status 2 and a line naming its log.\n"
    "\n";
/* ... and its options (one string each: C99 guarantees 4095 characters in a literal) */
static const char usage_options[] =
    "  --vary S.K=V1,V2,...  values of one key; separate them with ';' when a value holds\n"
    "                  commas: --vary 'model.layers=8,16,3;8,64,3'. A key is varied once\n"
    "                  and cannot also be given by --set or --seed\n"
    "  --set S.K=V     a key fixed for every point, as in dtsim run\n"
    "  --seed N        master seed of every point (same as --set run.seed=N)\n"
    "  --jobs N        points run at once (default: 1)\n"
    "  --out DIR       the sweep folder (default ./dtsim-sweep); when it holds this same sweep\n"
    "                  (interrupted: the same scenario, grid and --cfg), only the points without\n"
    "                  a result run; another sweep there is refused\n"
    "  --plot-metric M the metric M: any numeric column of sweep.csv the points report; by\n"
    "                  default what the algorithm is run for: time_to_target_s when a point\n"
    "                  sets run.target_accuracy, else step_time_s; or sim_time_s, steps,\n"
    "                  examples, final_loss, final_accuracy, bytes_total, hosts_used,\n"
    "                  examples_per_s, tflops_per_device, mfu, compute_pct, comm_pct,\n"
    "                  exposed_comm_pct, or a block's column by its whole name\n"
    "                  (collective.busbw_gbps) or its end when unique (busbw_gbps)\n"
    "  --emit-jobs     write DIR's point folders, run nothing, and print one shell command per\n"
    "                  point without a result (in order; in a new folder line N is point N) for\n"
    "                  GNU parallel or a Slurm array;\n"
    "                  then `dtsim sweep --merge DIR` writes sweep.csv and sweep.png\n"
    "  --merge DIR...  rebuild sweep.csv and sweep.png from sweep folders or point folders\n"
    "                  (every point of the sweep, each once); written into --out, by default\n"
    "                  the sweep folder of the first point\n"
    "  --quiet         no progress line on stderr (one per finished point)\n"
    "  --cfg=..., --log=...   passed to every point's SimGrid\n"
    "\n"
    "Many machines: the commands cd to this folder and use absolute paths for dtsim, so\n"
    "they run anywhere the file system is shared:\n"
    "  dtsim sweep base.ini --vary sgd.lr=0.01,0.1 --vary sgd.batch=8,32 --out sw --emit-jobs > jobs.txt\n"
    "  parallel -j 2 < jobs.txt                    # or: parallel --sshlogin 8/node1,8/node2 < jobs.txt\n"
    "  sbatch --array=1-$(wc -l < jobs.txt) --wrap 'sed -n \"${SLURM_ARRAY_TASK_ID}p\" jobs.txt | sh'\n"
    "  dtsim sweep --merge sw\n";

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("dtsim sweep: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 2;
}

/* ---- resuming: what makes two sweeps the same ---------------------------------- */

/* The sweep's identity, as OUT/sweep.json keeps it: every scenario key but the varied
 * ones with its effective value (after the file, --set and --seed; "section.key":
 * "value"), the --vary lists and the --cfg options. Two runs of `dtsim sweep` with the
 * same identity make the same points, so the second resumes the first. */
static json_t *sweep_identity(const sweep_grid *g, const char *const *sg, size_t nsg)
{
  char err[ERRLEN];
  scenario base;
  xbt_assert(sweep_grid_base(g, &base, err, sizeof(err)) == 0, "checked: %s", err);
  json_t *keys = json_object(), *grid = json_array(), *cfg = json_array();
  for (size_t i = 0; i < scenario_key_count(); i++) {
    const char *section, *key, *def, *unit, *doc;
    char value[SCENARIO_STR + 64], full[200];
    scenario_key_at(&base, i, &section, &key, value, sizeof(value), &def, &unit, &doc);
    snprintf(full, sizeof(full), "%s.%s", section, key);
    int varied = 0;
    for (size_t k = 0; k < g->nv && !varied; k++)
      varied = strcmp(g->vs[k].key, full) == 0;
    if (!varied)
      json_object_set_new(keys, full, json_string(value));
  }
  for (size_t k = 0; k < g->nv; k++) {
    json_t *values = json_array();
    for (size_t i = 0; i < g->vs[k].n; i++)
      json_array_append_new(values, json_string(g->vs[k].values[i]));
    json_array_append_new(grid, json_pack("{s:s, s:o}", "key", g->vs[k].key, "values", values));
  }
  for (size_t i = 0; i < nsg; i++)
    if (strncmp(sg[i], "--cfg=", 6) == 0) /* --log changes run.log only */
      json_array_append_new(cfg, json_string(sg[i]));
  return json_pack("{s:o, s:o, s:o}", "scenario", keys, "vary", grid, "simgrid", cfg);
}

/* Whether point folder dir holds a finished run: its summary.json, which a run writes
 * last and atomically, with a status. */
static int point_finished(const char *dir)
{
  char path[PATHLEN + 16];
  snprintf(path, sizeof(path), "%s/summary.json", dir);
  json_t *s = json_load_file(path, 0, NULL);
  int done = json_is_string(json_object_get(s, "status"));
  json_decref(s);
  return done;
}

/* Writes json (pretty, with a final newline) into dir/name atomically. */
static int write_json(const char *dir, const char *name, const json_t *o, char *err, size_t len)
{
  char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  size_t n = strlen(text);
  text = xbt_realloc(text, n + 2); /* jansson's allocator is malloc */
  text[n] = '\n';
  text[n + 1] = '\0';
  int rc = fileio_write(dir, name, text, n + 1, err, len);
  xbt_free(text);
  return rc;
}

/* Writes dir/point.json: {"index": i, "count": n, "vary": [{"key": K, "value": V}...]}. */
static int write_point_info(const char *dir, size_t index, size_t count, const sweep_grid *g, const size_t *pick,
                            char *err, size_t len)
{
  json_t *o = json_object(), *a = json_array();
  json_object_set_new(o, "index", json_integer((json_int_t)index));
  json_object_set_new(o, "count", json_integer((json_int_t)count));
  for (size_t k = 0; k < g->nv; k++) {
    json_t *e = json_object();
    json_object_set_new(e, "key", json_string(g->vs[k].key));
    json_object_set_new(e, "value", json_string(g->vs[k].values[pick[k]]));
    json_array_append_new(a, e);
  }
  json_object_set_new(o, "vary", a);
  int rc = write_json(dir, "point.json", o, err, len);
  json_decref(o);
  return rc;
}

/* ---- the sweep ----------------------------------------------------------------- */

typedef struct sweep_opts {
  sweep_grid g;            /* the scenario (NULL: the built-in one), --set, --seed, --vary */
  sweep_vary *vs;          /* g.vs, owned */
  const char **sets, **sg; /* g.sets; SimGrid options */
  size_t nsg;
  const char *out;
  size_t n_par;
  const char *metric; /* --plot-metric, or NULL: sweep_metric_default */
  int emit, quiet;
  json_t *ident; /* sweep_identity, kept in OUT/sweep.json */
  int resume;    /* OUT holds this sweep already: only its unfinished points run */
} sweep_opts;

/* Shell word: as is when made only of safe characters, else single-quoted. */
static void put_shell_word(FILE *f, const char *s)
{
  if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=:,+-@%") == strlen(s)) {
    fputs(s, f);
    return;
  }
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'')
      fputs("'\\''", f);
    else
      fputc(*s, f);
  }
  fputc('\'', f);
}

/* One --emit-jobs line: `cd CWD && SELF ARGV[1..n-1] >LOG 2>&1`, every word quoted. */
static void emit_line(FILE *f, const char *cwd, const char *self, const char *const *argv, size_t n, const char *log)
{
  fputs("cd ", f);
  put_shell_word(f, cwd);
  fputs(" && ", f);
  put_shell_word(f, self);
  for (size_t a = 1; a < n; a++) {
    fputc(' ', f);
    put_shell_word(f, argv[a]);
  }
  fputs(" >", f);
  put_shell_word(f, log);
  fputs(" 2>&1\n", f);
}

/* Progress and failures of a direct sweep, as each point ends. */
typedef struct sweep_run {
  const sweep_opts *o;
  char (*dirs)[PATHLEN];
  size_t count, done, finished; /* done includes the finished points of a resumed sweep */
  double start;                 /* wall clock when the points started: the time left */
  int failed;
} sweep_run;

/* The last non-empty line of a file (its end, at most len - 1 characters), or "": where
 * a failed run says why, after any lines SimGrid printed first. */
static void last_line(const char *path, char *line, size_t len)
{
  line[0] = '\0';
  char *text = fileio_read(path, NULL);
  if (text == NULL)
    return;
  size_t n = strlen(text);
  while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r'))
    text[--n] = '\0';
  char *start = strrchr(text, '\n');
  start = start ? start + 1 : text;
  size_t l = strlen(start);
  snprintf(line, len, "%s", l >= len ? start + l - (len - 1) : start);
  xbt_free(text);
}

static int point_done(void *ctx, size_t i, const spawn_job *j)
{
  sweep_run *r = ctx;
  const char *dir = r->dirs[i];
  if (interrupt_caught()) /* stopped by the signal, not finished */
    return 1;
  r->done++;
  if (j->status != 0 && j->status != 1) {
    char line[300], how[64];
    last_line(j->log, line, sizeof(line));
    if (j->status > 128)
      snprintf(how, sizeof(how), "killed by signal %d", j->status - 128);
    else
      snprintf(how, sizeof(how), "exit status %d", j->status);
    if (!r->failed)
      bad("point %s failed (%s; log: %s)%s%s", dir, how, j->log, line[0] ? ": " : "", line);
    r->failed = 1;
    return 1;
  }
  if (!r->o->quiet) {
    char path[PATHLEN + 16];
    snprintf(path, sizeof(path), "%s/summary.json", dir);
    json_t *s = json_load_file(path, 0, NULL);
    const char *st = json_string_value(json_object_get(s, "status"));
    char left[80];
    progress_sweep_left(left, sizeof left, r->done - r->finished, r->count - r->done, wallclock_seconds() - r->start);
    fprintf(stderr, "dtsim sweep: %zu/%zu done: %s (%s)%s\n", r->done, r->count, strrchr(dir, '/') + 1,
            st ? st : "no status", left);
    json_decref(s);
  }
  return 0;
}

/* The arguments of point i's `dtsim run`, into argv (room for 8 + 2 * (nsets + nv) + nsg). */
static size_t point_argv(const sweep_opts *o, const char *dir, const size_t *pick, char **assigns, const char **argv)
{
  size_t k = 0;
  argv[k++] = "dtsim";
  argv[k++] = "run";
  if (o->g.scenario)
    argv[k++] = o->g.scenario;
  argv[k++] = "--quiet";
  argv[k++] = "--out";
  argv[k++] = dir;
  for (size_t i = 0; i < o->g.nsets; i++) {
    argv[k++] = "--set";
    argv[k++] = o->g.sets[i];
  }
  if (o->g.seed) {
    argv[k++] = "--seed";
    argv[k++] = o->g.seed;
  }
  for (size_t v = 0; v < o->g.nv; v++) {
    snprintf(assigns[v], SCENARIO_STR + 200, "%s=%s", o->vs[v].key, o->vs[v].values[pick[v]]);
    argv[k++] = "--set";
    argv[k++] = assigns[v];
  }
  for (size_t i = 0; i < o->nsg; i++)
    argv[k++] = o->sg[i];
  argv[k] = NULL;
  return k;
}

/* The points to run: point i's folder, log and `dtsim run` arguments, for the points
 * not finished yet (all of them in a new sweep folder). */
typedef struct sweep_jobs {
  size_t n, finished;
  char (*dirs)[PATHLEN];
  char (*logs)[PATHLEN + 16];
  char **assigns;
  const char **argv;
  spawn_job *jobs;
} sweep_jobs;

static void sweep_jobs_free(sweep_jobs *j, size_t nv)
{
  for (size_t i = 0; i < j->n * nv; i++)
    xbt_free(j->assigns[i]);
  xbt_free(j->jobs);
  xbt_free(j->assigns);
  xbt_free(j->logs);
  xbt_free(j->dirs);
  xbt_free(j->argv);
}

/* Writes OUT/sweep.json and the folders (point.json each) of the points not finished,
 * and lists them in j, with --emit-jobs printing their commands. Returns 0, or 2 after
 * one line. */
static int sweep_prepare(const sweep_opts *o, size_t count, const char *self, const char *cwd, sweep_jobs *j)
{
  char err[ERRLEN], points[PATHLEN];
  size_t nv = o->g.nv, width = 8 + 2 * (o->g.nsets + nv) + o->nsg;
  *j = (sweep_jobs){.argv = xbt_malloc0(count * width * sizeof(char *)),
                    .dirs = xbt_malloc(count * sizeof(*j->dirs)),
                    .logs = xbt_malloc(count * sizeof(*j->logs)),
                    .assigns = xbt_malloc0(count * nv * sizeof(char *)),
                    .jobs = xbt_malloc0(count * sizeof(spawn_job))};
  size_t *pick = xbt_malloc0(nv * sizeof(size_t));
  snprintf(points, sizeof(points), "%s/points", o->out);
  int rc = fileio_mkdirs(points, err, sizeof(err)) == 0 && write_json(o->out, "sweep.json", o->ident, err, sizeof(err)) == 0
               ? 0
               : bad("%s", err);
  for (size_t i = 0; i < count && rc == 0; i++) {
    char name[1024];
    size_t n = j->n;
    sweep_grid_pick(&o->g, i, pick);
    sweep_grid_name(&o->g, i + 1, count, pick, name, sizeof(name));
    snprintf(j->dirs[n], sizeof(j->dirs[n]), "%s/%s", points, name);
    if (o->resume && point_finished(j->dirs[n])) {
      j->finished++;
      continue;
    }
    snprintf(j->logs[n], sizeof(j->logs[n]), "%s/run.log", j->dirs[n]);
    if (fileio_mkdirs(j->dirs[n], err, sizeof(err)) != 0 ||
        write_point_info(j->dirs[n], i + 1, count, &o->g, pick, err, sizeof(err)) != 0) {
      rc = bad("%s", err);
      break;
    }
    for (size_t v = 0; v < nv; v++)
      j->assigns[n * nv + v] = xbt_malloc(SCENARIO_STR + 200);
    const char **argv = j->argv + n * width;
    size_t na = point_argv(o, j->dirs[n], pick, j->assigns + n * nv, argv);
    j->jobs[n] = (spawn_job){.argv = argv, .log = j->logs[n]};
    j->n++;
    if (o->emit)
      emit_line(stdout, cwd, self, argv, na, j->logs[n]);
  }
  xbt_free(pick);
  return rc;
}

/* Writes the point folders (point.json each), then runs the points not finished yet and
 * merges all of them into sweep.csv and sweep.png, or with --emit-jobs prints the
 * commands of those points. Returns 0, or 2 after one line on stderr. */
static int sweep_run_all(const sweep_opts *o, size_t count)
{
  char err[ERRLEN], self[PATHLEN], cwd[PATHLEN] = "";
  if (spawn_self(self, sizeof(self), err, sizeof(err)) != 0)
    return bad("%s", err);
  if (o->emit && getcwd(cwd, sizeof(cwd)) == NULL)
    return bad("cannot read the current folder: %s", strerror(errno));
  sweep_jobs j;
  int rc = sweep_prepare(o, count, self, cwd, &j);
  if (rc == 0 && o->resume && !o->quiet)
    fprintf(stderr, "dtsim sweep: resuming %s: %zu of %zu points finished already, %zu to %s\n", o->out, j.finished,
            count, j.n, o->emit ? "emit" : "run");
  if (rc == 0 && o->emit) {
    if (!o->quiet)
      fprintf(stderr, "dtsim sweep: %zu command%s; when they have run: dtsim sweep --merge %s\n", j.n,
              j.n == 1 ? "" : "s", o->out);
  } else if (rc == 0) {
    sweep_run r = {.o = o, .dirs = j.dirs, .count = count, .done = j.finished, .finished = j.finished,
                   .start = wallclock_seconds()};
    spawn_run(self, j.jobs, j.n, o->n_par, point_done, &r);
    if (interrupt_caught()) {
      bad("%s with %zu of %zu points finished; no sweep.csv (finished points keep their results in %s/points/; "
          "the same command resumes the sweep)",
          interrupt_caught() == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)", r.done, count, o->out);
      rc = 128 + interrupt_caught();
    } else if (r.failed)
      rc = 2;
    else {
      const char *dirs1[] = {o->out};
      rc = sweep_merge(dirs1, 1, o->out, o->metric, o->quiet, err, sizeof(err));
      if (rc != 0)
        bad("%s", err);
    }
  }
  sweep_jobs_free(&j, o->g.nv);
  return rc;
}


/* More points than this is surely a mistake in the --vary lists. */
#define SWEEP_MAX_POINTS 100000

/* The command line into o (and out, merge, and the nd folders or the scenario in dirs):
 * 0, -1 after --help, or 2 after one line on stderr. */
static int parse_args(int argc, char **argv, sweep_opts *o, const char **out, int *merge, const char **dirs,
                      size_t *nd)
{
  char err[ERRLEN];
  int rc = 0;
  for (int i = 1; i < argc && rc == 0; i++) {
    const char *a = argv[i];
    /* an option word is never an option's value: `--out --quiet` would write into ./--quiet */
    int has_next = i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, stdout);
      fputs(usage_options, stdout);
      rc = -1;
    } else if ((strcmp(a, "--vary") == 0 || strcmp(a, "--set") == 0) && has_next &&
               scenario_split_assignment(argc, argv, i, err, sizeof(err))) {
      rc = bad("%s", err);
    } else if (strcmp(a, "--vary") == 0 && has_next) {
      if (sweep_vary_parse(argv[++i], &o->vs[o->g.nv++], err, sizeof(err)) != 0)
        rc = bad("%s", err);
    } else if (strcmp(a, "--set") == 0 && has_next)
      o->sets[o->g.nsets++] = argv[++i];
    else if (strcmp(a, "--seed") == 0 && has_next)
      o->g.seed = argv[++i];
    else if (strcmp(a, "--out") == 0 && has_next)
      *out = argv[++i];
    else if (strcmp(a, "--plot-metric") == 0 && has_next)
      o->metric = argv[++i];
    else if (strcmp(a, "--jobs") == 0 && has_next) {
      char *end;
      long n = strtol(argv[++i], &end, 10);
      if (*end || end == argv[i] || n < 1)
        rc = bad("--jobs %s: needs a positive whole number", argv[i]);
      o->n_par = (size_t)n;
    } else if (strcmp(a, "--emit-jobs") == 0)
      o->emit = 1;
    else if (strcmp(a, "--merge") == 0)
      *merge = 1;
    else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0)
      o->quiet = 1;
    else if (strncmp(a, "--cfg=", 6) == 0 || strncmp(a, "--log=", 6) == 0)
      o->sg[o->nsg++] = a;
    else if (a[0] == '-' && a[1] != '\0')
      rc = bad("unknown or incomplete option '%s' (try: dtsim sweep --help)", a);
    else
      dirs[(*nd)++] = a;
  }
  return rc;
}

/* A sweep of scenario dirs[0] (nd given; none: the built-in scenario) into out (NULL:
 * o->out's default), checked first: the exit status. */
static int sweep_start(sweep_opts *o, const char *const *dirs, size_t nd, const char *out)
{
  char err[ERRLEN];
  int rc, target;
  o->g.scenario = nd > 0 ? dirs[0] : NULL;
  o->out = out ? out : o->out;
  size_t count = sweep_grid_size(&o->g, SWEEP_MAX_POINTS);
  if (nd > 1)
    return bad("only one scenario file can be given (got '%s' and '%s')", dirs[0], dirs[1]);
  if (o->g.nv == 0)
    return bad("nothing to vary: give at least one --vary SECTION.KEY=V1,V2,...");
  if (count == 0)
    return bad("the --vary lists make more than %d points", SWEEP_MAX_POINTS);
  if (sweep_check(&o->g, count, o->sg, o->nsg, o->metric, &target, err, sizeof(err)) != 0)
    return bad("%s", err);
  o->ident = sweep_identity(&o->g, o->sg, o->nsg);
  if (sweep_out_unusable(o->out, o->ident, &o->resume, err, sizeof(err)) != 0)
    rc = bad("%s", err);
  else
    rc = sweep_run_all(o, count);
  json_decref(o->ident);
  return rc;
}

int sweep_main(int argc, char **argv)
{
  sweep_opts o = {.out = "dtsim-sweep", .n_par = 1};
  const char *out = NULL;
  int merge = 0;
  char err[ERRLEN];
  o.vs = xbt_malloc0((size_t)argc * sizeof(sweep_vary));
  o.sets = xbt_malloc0((size_t)argc * sizeof(char *));
  o.g.vs = o.vs;
  o.g.sets = o.sets;
  o.sg = xbt_malloc0((size_t)argc * sizeof(char *));
  const char **dirs = xbt_malloc0((size_t)argc * sizeof(char *));
  size_t nd = 0;
  int rc = parse_args(argc, argv, &o, &out, &merge, dirs, &nd);
  if (rc == 0 && o.metric && sweep_metric_check(o.metric, err, sizeof(err)) != 0)
    rc = bad("%s", err);
  if (rc == 0 && merge) {
    if (nd == 0)
      rc = bad("--merge: which folders? (a sweep's --out folder, or point folders)");
    else if (o.g.nv || o.g.nsets || o.g.seed || o.emit || o.nsg)
      rc = bad("--merge takes only folders, --out, --plot-metric and --quiet");
    else if ((rc = sweep_merge(dirs, nd, out, o.metric, o.quiet, err, sizeof(err))) != 0)
      bad("%s", err);
  } else if (rc == 0)
    rc = sweep_start(&o, dirs, nd, out);
  for (size_t k = 0; k < o.g.nv; k++)
    sweep_vary_clear(&o.vs[k]);
  xbt_free(dirs);
  xbt_free(o.sg);
  xbt_free(o.sets);
  xbt_free(o.vs);
  return rc < 0 ? 0 : rc;
}

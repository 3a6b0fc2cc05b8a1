/* main.c - dtsim's command line: dispatch to run, sweep, reproduce, platform and list. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gsl/gsl_version.h>
#include <simgrid/forward.h> /* version.h needs SG_BEGIN_DECL from here */
#include <simgrid/version.h>

#include "algorithms/registry.h"
#include "models/arch.h"
#include "sim/bounds.h"
#include "sim/engine.h"
#include "sim/lab/reproduce.h"
#include "sim/lab/sweep.h"
#include "sim/output.h"
#include "sim/platform.h"
#include "sim/scenario.h"

#define ERRLEN 1024

#ifdef DTSIM_OPENBLAS
void openblas_set_num_threads(int n); /* from OpenBLAS; its header clashes with GSL's */
#endif

static const char usage[] =
    "usage: dtsim [COMMAND] [OPTIONS]\n"
    "\n"
    "dtsim simulates distributed deep-learning training on a SimGrid platform: real\n"
    "gradients and losses, simulated time for compute and communication.\n"
    "\n"
    "commands:\n"
    "  (none)      run the built-in default scenario (Downpour SGD with Adagrad, 20\n"
    "              replicas, distbelief-2012 preset, small MLP); results in ./dtsim-out/\n"
    "  run         run a scenario file:  dtsim run [SCENARIO.ini] [OPTIONS]\n"
    "  sweep       run a scenario over the cartesian product of --vary lists (or emit\n"
    "              one shell command per point), results in sweep.csv and sweep.png\n"
    "  platform    write a preset or a generated cluster as SimGrid XML\n"
    "  reproduce   rerun a paper's simulations, results in results/NAME/; NAME is one of\n";
/* ... the reproductions' names (the one table of them: reproduce_names), then: */
static const char usage_tail[] =
    "  list        list presets, algorithms, models and datasets ('list keys': scenario keys)\n"
    "\n"
    "  dtsim COMMAND --help   help on one command\n"
    "  dtsim --version        version, SimGrid, GSL and BLAS in use\n"
    "\n"
    "exit status: 0 success; 1 the simulation ran but failed its goal (diverged,\n"
    "target accuracy missed, --expect mismatch); 2 bad input.\n";

static const char run_usage[] =
    "usage: dtsim run [SCENARIO.ini] [--set SECTION.KEY=VALUE]... [--seed N] [--out DIR]\n"
    "                 [--quiet] [--progress] [--expect FILE [--rtol R]] [--assert EXPR]... [--trace] [--cfg=SIMGRID_OPTION:VALUE]... [--log=...]\n"
    "\n"
    "Runs one simulation. Without SCENARIO.ini, the built-in default scenario runs\n"
    "(print it with 'dtsim run --print-default'). Keys are listed by 'dtsim list keys'.\n"
    "\n"
    "  --set S.K=V     override one scenario key, e.g. --set downpour.replicas=50\n"
    "  --seed N        master seed (same as --set run.seed=N)\n"
    "  --out DIR       result folder (default ./dtsim-out); created only when the run\n"
    "                  completes; each file is written to a temporary name and renamed\n"
    "  --quiet         no progress line on stderr, no closing line on stdout (not with\n"
    "                  --progress)\n"
    "  --progress      the progress line also when stderr is not a terminal (a line\n"
    "                  every 10 s of wall time: simulated time against run.max_sim_time,\n"
    "                  steps, loss, accuracy, wall time left)\n"
    "  --expect FILE   compare this run with a saved summary.json, progress.csv or\n"
    "                  consensus.csv (checked before the run): one line saying it\n"
    "                  matches; or exit 1 and print the first differing value\n"
    "  --rtol R        with --expect: numbers match within relative tolerance R\n"
    "                  (|a - b| <= R max(|a|, |b|)); default 0, exactly\n"
    "  --assert EXPR   a bound on a summary.json figure by its dotted name, checked\n"
    "                  after the run (exit 1 when broken), e.g. 'final_accuracy>=0.86';\n"
    "                  OP <= >= < > ==; with --expect FILE, 'expected' is the same figure\n"
    "                  there ('performance.step_time_s<=1.02*expected'), and the bounds\n"
    "                  replace the whole-file comparison; repeatable\n"
    "  --cfg=..., --log=...   passed to SimGrid, e.g. --cfg=contexts/nthreads:2\n"
    "  --print-default print the built-in default scenario and exit\n"
    "  --trace         also write trace.json, a timeline in Chrome's trace-event format\n"
    "                  (Perfetto, chrome://tracing): per host and actor, every execution\n"
    "                  and communication wait, every message sent; for short runs\n"
    "\n"
    "Outputs: summary.json, progress.csv (sim_time_s,step,loss,accuracy),\n"
    "staleness.csv (staleness,count), links.csv (link,bytes,utilization,tier,from,to,\n"
    "sharing), breakdown.csv (actor,role,host,compute_s,comm_s,exposed_comm_s: seconds\n"
    "computing, blocked on communication, and blocked while nothing computed on its\n"
    "host); consensus runs\n"
    "add consensus.csv (iteration,sim_time_s,consensus_error,optimality_gap, then the\n"
    "gaps of the running averages and of the worst agent), sandblaster\n"
    "runs batches.csv (one row per batch: time, portions, backup copies, examples),\n"
    "pipeline runs pipeline.csv (one row per stage: busy and idle time, peak stash).\n"
    "Units: seconds are simulated; a collective's algbw_gbps and busbw_gbps are GB/s (10^9\n"
    "bytes/s, as nccl-tests), not gigabits; a run ends past run.max_sim_time by the steps\n"
    "under way, which finish.\n";

static const char list_usage[] =
    "usage: dtsim list [keys]\n"
    "\n"
    "Lists presets, algorithms, models, virtual networks and data sources, one line\n"
    "each; 'dtsim list keys' prints every scenario key with its default and unit.\n";

static int bad(const char *cmd, const char *msg)
{
  fprintf(stderr, "dtsim%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "", msg);
  return 2;
}

static int print_version(void)
{
  printf("dtsim %s\n", DTSIM_VERSION);
  printf("SimGrid %d.%d.%d, GSL %s\n", SIMGRID_VERSION_MAJOR, SIMGRID_VERSION_MINOR, SIMGRID_VERSION_PATCH,
         GSL_VERSION);
  printf("BLAS: %s\n", strcmp(DTSIM_BLAS_NAME, "gsl") == 0
                           ? "gsl (GSL's portable CBLAS: results bit-identical on any x86-64 machine)"
                           : "openblas (single-threaded OpenBLAS: reproducible on one machine, may differ across CPU types)");
  return 0;
}

static int list_main(int argc, char **argv)
{
  if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    fputs(list_usage, stdout);
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "keys") == 0) {
    scenario_print_reference(stdout);
    return 0;
  }
  if (argc > 1)
    return bad("list", "unknown argument (try: dtsim list --help)");
  const char *desc;
  for (size_t i = 0; platform_preset_at(i, &desc); i++)
    printf("preset     %-22s %s\n", platform_preset_at(i, &desc), desc);
  for (size_t i = 0; i < algorithm_count; i++)
    printf("algorithm  %-22s %s\n", algorithm_registry[i]->name, algorithm_registry[i]->summary);
  printf("model      %-22s %s\n", "linear", "linear regression, squared loss (layers = D,1)");
  printf("model      %-22s %s\n", "logistic", "binary logistic regression (layers = D,1)");
  printf("model      %-22s %s\n", "softmax", "multinomial logistic regression (layers = D,K)");
  printf("model      %-22s %s\n", "mlp", "multi-layer perceptron, softmax output (layers = D,H1,...,K)");
  for (size_t i = 0; arch_virtual_at(i); i++)
    printf("virtual    %-22s %s\n", arch_name(arch_virtual_at(i)), arch_description(arch_virtual_at(i)));
  printf("dataset    %-22s %s\n", "synthetic-teacher", "labels from a random teacher network (data.teacher_hidden)");
  printf("dataset    %-22s %s\n", "synthetic-gaussian", "Gaussian classes around random means (data.separation)");
  printf("dataset    %-22s %s\n", "libsvm:PATH", "a LIBSVM file, split by data.test_fraction");
  printf("dataset    %-22s %s\n", "csv:PATH", "a CSV file of numbers, label in the last column");
  return 0;
}

static int is_simgrid_opt(const char *a)
{
  return strncmp(a, "--cfg=", 6) == 0 || strncmp(a, "--log=", 6) == 0;
}

/* An option word, never an option's value: `--out --quiet` is an --out without its value. */
static int is_option(const char *a)
{
  return a[0] == '-' && a[1] == '-' && a[2] != '\0';
}

/* Whether one of the --set assignments chooses run.algorithm. */
static int algorithm_set(char **sets, int nsets)
{
  for (int i = 0; i < nsets; i++) {
    const char *a = sets[i] + strspn(sets[i], " \t");
    if (strncmp(a, "run.algorithm", 13) == 0 && a[13 + strspn(a + 13, " \t")] == '=')
      return 1;
  }
  return 0;
}

/* A check's message "ORIGIN: SECTION.KEY: problem" with ORIGIN replaced by where that key got
 * its value (its --set, the file's line, or its default), so the line points at what to
 * change; other messages unchanged. Rewrites msg (ERRLEN bytes) and returns it. */
static char *blame(char *msg, const char *origin, const char *path, char **sets, int nsets)
{
  size_t ol = strlen(origin);
  if (strncmp(msg, origin, ol) != 0 || strncmp(msg + ol, ": ", 2) != 0)
    return msg;
  const char *rest = msg + ol + 2;
  size_t kl = strspn(rest, "abcdefghijklmnopqrstuvwxyz0123456789_.");
  char key[128], source[ERRLEN], out[ERRLEN];
  if (rest[kl] != ':' || kl >= sizeof key)
    return msg;
  snprintf(key, sizeof key, "%.*s", (int)kl, rest);
  if (scenario_key_source(path, sets, nsets, key, source, sizeof source) != 0)
    return msg;
  snprintf(out, sizeof out, "%s: %s", source, rest);
  snprintf(msg, ERRLEN, "%s", out);
  return msg;
}

/* What --expect, --rtol and --assert ask, checked before the run: the saved file loaded into
 * *expected (freed by the caller whatever this returns), its scenario against sc's, the
 * bounds' names. Returns 0, or 2 after one line on stderr. */
static int check_expect(const scenario *sc, const char *expect, const char *rtol_text, const bounds *asserts,
                        output_expected *expected, double *rtol)
{
  char err[ERRLEN], diff[ERRLEN];
  if (rtol_text) {
    char *end;
    *rtol = strtod(rtol_text, &end);
    if (end == rtol_text || *end || !(*rtol >= 0) || *rtol >= 1) {
      snprintf(err, sizeof(err), "--rtol %s: must be a number in [0, 1), e.g. 1e-9", rtol_text);
      return bad(NULL, err);
    }
    if (!expect)
      return bad(NULL, "--rtol: only with --expect FILE");
    if (bounds_count(asserts))
      return bad(NULL, "--rtol: has no effect with --assert, whose bounds replace --expect's whole-file comparison");
  }
  if (expect && output_expect_load(expect, expected, err, sizeof(err)) != 0)
    return bad(NULL, err);
  if (expect && output_expect_scenario(expected, sc, diff, sizeof(diff)) != 0) {
    snprintf(err, sizeof(err), "--expect %s: MISMATCH before the run, in the scenario: %s (nothing was run)", expect,
             diff);
    return bad(NULL, err);
  }
  if (expect && bounds_count(asserts) && expected->json == NULL) {
    snprintf(err, sizeof(err), "--expect %s: beside --assert, a saved summary.json (the figures 'expected' names), "
             "not a %s", expect, expected->name);
    return bad(NULL, err);
  }
  if (bounds_check(asserts, sc->run.algorithm, expected->json, err, sizeof(err)) != 0)
    return bad(NULL, err);
  return 0;
}

/* dtsim run's command line, as run_parse reads it. */
typedef struct run_args {
  const char *path, *out, *expect, *seed, *rtol_text;
  int quiet, trace, progress;
  char **sets; /* the --set assignments, in order */
  int nsets;
  char **sg;   /* SimGrid's options (--cfg=, --log=), the program's name first */
  int nsg;
  bounds *asserts; /* --assert's bounds */
} run_args;

/* Reads argv[1..argc-1] into r, whose sets and sg the caller allocated (argc + 2 slots).
 * Returns 0; -1 when --help or --print-default printed what was asked; or 2 after bad(). */
static int run_parse(int argc, char **argv, run_args *r)
{
  char err[ERRLEN];
  int rc = 0;
  for (int i = 1; i < argc && rc == 0; i++) {
    const char *a = argv[i];
    int has_next = i + 1 < argc && !is_option(argv[i + 1]); /* `--out --quiet` would write into ./--quiet */
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(run_usage, stdout);
      rc = -1;
    } else if (strcmp(a, "--print-default") == 0) {
      fputs(scenario_default_ini, stdout);
      rc = -1;
    } else if (strcmp(a, "--set") == 0 && has_next && scenario_split_assignment(argc, argv, i, err, sizeof(err)))
      rc = bad("run", err);
    else if (strcmp(a, "--set") == 0 && has_next)
      r->sets[r->nsets++] = argv[++i];
    else if (strcmp(a, "--seed") == 0 && has_next)
      r->seed = argv[++i];
    else if (strcmp(a, "--out") == 0 && has_next)
      r->out = argv[++i];
    else if (strcmp(a, "--expect") == 0 && has_next)
      r->expect = argv[++i];
    else if (strcmp(a, "--rtol") == 0 && has_next)
      r->rtol_text = argv[++i];
    else if (strcmp(a, "--assert") == 0 && has_next && bounds_add(r->asserts, argv[i + 1], err, sizeof(err)) != 0)
      rc = bad("run", err);
    else if (strcmp(a, "--assert") == 0 && has_next)
      i++;
    else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0)
      r->quiet = 1;
    else if (strcmp(a, "--trace") == 0)
      r->trace = 1;
    else if (strcmp(a, "--progress") == 0)
      r->progress = 1;
    else if (is_simgrid_opt(a))
      r->sg[r->nsg++] = argv[i];
    else if (a[0] == '-' && a[1] != '\0') {
      snprintf(err, sizeof(err), "unknown or incomplete option '%s' (try: dtsim run --help)", a);
      rc = bad("run", err);
    } else if (r->path == NULL)
      r->path = a;
    else
      rc = bad("run", "only one scenario file can be given");
  }
  if (rc == 0 && r->quiet && r->progress)
    rc = bad("run", "--quiet and --progress contradict each other (--quiet turns the progress line off); give one");
  return rc;
}

/* Into sc, the run's scenario: its file (or the built-in default), the --set assignments
 * and --seed over it, validated. Returns 0, or 2 after bad(). */
static int run_scenario(const run_args *r, scenario *sc)
{
  char err[ERRLEN];
  int rc = 0;
  scenario_defaults(sc);
  const char *origin = r->path ? r->path : "<default>";
  if (r->path ? scenario_load_file(sc, r->path, err, sizeof(err))
              : scenario_load_string(sc, scenario_default_ini, origin, err, sizeof(err)))
    rc = bad(NULL, err);
  for (int i = 0; i < r->nsets && rc == 0; i++)
    if (scenario_set(sc, r->sets[i], err, sizeof(err)) != 0)
      rc = bad(NULL, err);
  if (rc == 0 && scenario_sets_conflict(r->sets, r->nsets, err, sizeof(err)) != 0)
    rc = bad(NULL, err);
  if (rc == 0 && r->seed) {
    char assign[128];
    snprintf(assign, sizeof(assign), "run.seed=%s", r->seed);
    if (scenario_set(sc, assign, err, sizeof(err)) != 0) {
      snprintf(err, sizeof(err), "--seed: '%s' is not a valid seed (a non-negative integer)", r->seed);
      rc = bad(NULL, err);
    }
  }
  if (rc == 0 && scenario_validate(sc, origin, err, sizeof(err)) != 0)
    rc = bad(NULL, blame(err, origin, r->path, r->sets, r->nsets));
  if (rc == 0 && !algorithm_set(r->sets, r->nsets) && scenario_foreign_section(sc, origin, err, sizeof(err)) != 0)
    rc = bad(NULL, blame(err, origin, r->path, r->sets, r->nsets));
  return rc;
}

/* The result folder usable, and what --expect, --rtol and --assert ask (check_expect).
 * Returns 0, or 2 after bad(). */
static int run_outputs(const run_args *r, const scenario *sc, double *rtol, output_expected *expected)
{
  char err[ERRLEN];
  if (output_dir_unusable(r->out, err, sizeof(err)))
    return bad(NULL, err);
  *rtol = 0;
  return check_expect(sc, r->expect, r->rtol_text, r->asserts, expected, rtol);
}

/* `dtsim run ...`; argv[0] is "run" (or "dtsim" for the bare default run). */
static int run_main(int argc, char **argv, const char *prog)
{
  run_args r = {.out = "dtsim-out", .sets = calloc((size_t)argc + 1, sizeof(char *)),
                .sg = calloc((size_t)argc + 2, sizeof(char *)), .asserts = bounds_create()};
  r.sg[r.nsg++] = (char *)prog;
  scenario sc;
  double rtol = 0;
  output_expected expected = {0};
  int rc = run_parse(argc, argv, &r);
  if (rc == 0)
    rc = run_scenario(&r, &sc);
  if (rc == 0)
    rc = run_outputs(&r, &sc, &rtol, &expected);
  if (rc == 0) {
    engine_opts o = {.out_dir = r.out, .quiet = r.quiet, .expect = r.expect, .expected = r.expect ? &expected : NULL,
                     .rtol = rtol, .bounds = bounds_count(r.asserts) ? r.asserts : NULL, .trace = r.trace,
                     .progress = r.progress, .sg_argc = r.nsg, .sg_argv = r.sg};
    rc = engine_run(&sc, &o);
  }
  output_expect_free(&expected);
  bounds_free(r.asserts);
  free(r.sets);
  free(r.sg);
  return rc < 0 ? 0 : rc;
}

int main(int argc, char **argv)
{
  /* Parameter and gradient messages are often a few hundred KB: above glibc's default
   * mmap threshold each one would be a fresh mmap, and freeing one at the top of the
   * heap would give the pages back; either way every message paid page faults on first
   * touch (about 15% of a numeric run's time in perf). Keep them in the heap. */
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#ifdef DTSIM_OPENBLAS
  /* One BLAS thread: SimGrid actors already share the process, and a result must not
   * depend on how many threads a BLAS call happened to get. */
  openblas_set_num_threads(1);
#endif
  if (argc < 2 || (argv[1][0] == '-' && strcmp(argv[1], "--help") != 0 && strcmp(argv[1], "-h") != 0 &&
                   strcmp(argv[1], "--version") != 0))
    return run_main(argc, argv, argv[0]);
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    printf("%s              %s\n%s", usage, reproduce_names(), usage_tail);
    return 0;
  }
  if (strcmp(cmd, "--version") == 0)
    return print_version();
  if (strcmp(cmd, "run") == 0)
    return run_main(argc - 1, argv + 1, argv[0]);
  if (strcmp(cmd, "platform") == 0)
    return platform_main(argc - 1, argv + 1);
  if (strcmp(cmd, "list") == 0)
    return list_main(argc - 1, argv + 1);
  if (strcmp(cmd, "reproduce") == 0)
    return reproduce_main(argc - 1, argv + 1);
  if (strcmp(cmd, "sweep") == 0)
    return sweep_main(argc - 1, argv + 1);
  char err[256];
  snprintf(err, sizeof(err), "unknown command '%s' (try: dtsim --help)", cmd);
  return bad(NULL, err);
}

/* reproduce_cli.c - `dtsim reproduce`: its options, the registry of the reproductions and
 * the order `all` runs them in; each reproduction is its own file (reproduce_NAME.c), a
 * declaration that reproduce_frame.c runs. */
#include "sim/lab/reproduce.h"
#include "sim/lab/reproduce_frame.h"
#include "sim/lab/reproduce_store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/fileio.h"
#include "sim/interrupt.h"
#include "sim/output.h"

#include <xbt/sysdep.h>

static const char usage[] =
    "usage: dtsim reproduce NAME [--out DIR] [--quick] [--jobs N] [--store S] [--fresh]\n"
    "                            [--overwrite] [--check [--results DIR]]\n"
    "\n"
    "Runs the grid of simulations behind a published figure, each in its own process,\n"
    "and writes DIR (default results/NAME/, with --quick dtsim-quick/NAME/): NAME.ini (the\n"
    "scenario), NAME.csv, NAME.png and README.md (the command and a side-by-side table with\n"
    "the paper). A folder that holds a finished full grid (its README says it was made\n"
    "without --quick) is not written over without --overwrite.\n"
    "\n"
    "  NAME       fig3 (Dean et al. 2012, Fig. 3: speed-up against machines per replica),\n"
    "             fig4 and fig5 (Dean et al. 2012, Figs. 4-5: SGD on 8 machines, one GPU,\n"
    "             Downpour with a fixed rate and with Adagrad, Sandblaster L-BFGS: accuracy\n"
    "             against time, and time to a target against machines and cores; 200 and\n"
    "             2,000 replicas with the parameter-server bank; runs kept in dean-runs/),\n"
    "             consensus (Nedic & Ozdaglar 2009: distributed subgradient on ring, torus\n"
    "             and complete graphs, each step rule, sync and async), collectives\n"
    "             (every collective against its alpha-beta formula, 2-64 ranks, 1 KiB-1 GiB),\n"
    "             megatron (Shoeybi et al. 2019, Tables 1, 7, 8: 1.2B-8.3B GPT on 1-8 GPUs of\n"
    "             tensor parallelism, x64 data parallel up to 512 GPUs, heads, strong scaling,\n"
    "             on dgx2h), pipeline (GPipe, 1F1B and interleaved 1F1B bubble against\n"
    "             (p-1)/(m+p-1), 2-8 stages, 1-32 microbatches, one selene node; PTD-P's\n"
    "             Table 1, 32-3,072 GPUs), gemm (the kernel model against DeepBench's V100\n"
    "             GEMMs and NVIDIA's quantisation examples; no simulation), zero (PTD-P's\n"
    "             Table 2: ZeRO-3 against PTD-P, 174.6B and 529.6B, 384-2,240 GPUs), moe (expert\n"
    "             parallelism on 8 selene GPUs: the load-balancing loss off and on, capacity\n"
    "             1.0-2.0, top-1 and top-2), compression (dense against top-k, 1-bit, QSGD and\n"
    "             PowerSGD gradients: 8 replicas on UCI's digits over 1 GbE, 10 GbE and\n"
    "             100 Gb/s), energy (the energy and emissions of GPT-3 175B on 9,984 V100s\n"
    "             against Patterson et al. 2021 and of Llama 2 7B-70B on 128-1,024 A100s\n"
    "             against its Table 2, each assumption switched in one run), or all (each\n"
    "             in turn, into results/NAME/, dtsim-quick/NAME/ or\n"
    "             DIR/NAME/)\n"
    "  --quick    a reduced grid fit for CI, same code paths (fig3: machine counts 1..16;\n"
    "             consensus: ring and complete graphs, constant and harmonic steps, shorter;\n"
    "             collectives: 2, 8 and 64 ranks at 1 KiB, 1 MiB and 1 GiB; fig4/fig5: the\n"
    "             same calibration, then one rate of fewer methods and replica counts;\n"
    "             megatron: the rows of one node, 1-8 GPUs; pipeline: 2 and 4 stages, 1-8\n"
    "             microbatches, PTD-P's three smallest rows; gemm: all of it; zero: 174.6B\n"
    "             on 384 GPUs, both methods; moe: top-1 at capacity 1.0 and 2.0; compression:\n"
    "             google-2004, dense and top-k; energy: GPT-3 and Llama 2 7B, no robustness\n"
    "             runs)\n";
/* The options after --quick (C11 promises string literals of 4,095 characters, no more). */
static const char usage_options[] =
    "  --jobs N   simulations run at once (default: the number of cores)\n"
    "  --store S  keep every finished run in folder S instead of DIR/.runs, and keep S\n"
    "             after DIR is written; a run kept there by any reproduction whose scenario,\n"
    "             inputs, settings and dtsim are the same is not run again (fig4 and fig5\n"
    "             given one S share their common runs)\n"
    "  --fresh    run everything again: first delete the store (DIR/.runs, or S), where an\n"
    "             interrupted or failed reproduction keeps its finished runs (by default the\n"
    "             same command resumes from them: a kept run whose scenario, inputs, settings\n"
    "             and dtsim are this one's is not run again; DIR/.runs goes once DIR is\n"
    "             written)\n"
    "  --overwrite  write over a folder that holds a finished full grid (a committed one\n"
    "             included); without it such a folder is refused before anything runs\n"
    "  --check    compare with the committed results/NAME/NAME.csv of dtsim's source tree\n"
    "             instead of writing (--out plays no part), found before anything runs:\n"
    "             exit 1 and print the first differing value\n"
    "  --results DIR  with --check: compare with DIR/NAME/NAME.csv instead\n";

static int bad(const char *msg)
{
  fprintf(stderr, "dtsim reproduce: %s\n", msg);
  return 2;
}

/* The registry: the reproductions, in the order `all` runs them. Each is declared by its own
 * file, reproduce_NAME.c, as `const reproduction reproduce_NAME`; adding one is that file,
 * its templates and one X(NAME) here. */
#define REPRODUCTIONS(X)                                                                                               \
  X(fig3) X(fig4) X(fig5) X(consensus) X(collectives) X(megatron) X(pipeline) X(gemm) X(zero) X(moe) X(compression) \
      X(energy)

#define DECLARE(name) extern const reproduction reproduce_##name;
REPRODUCTIONS(DECLARE)
#define ENTRY(name) &reproduce_##name,
static const reproduction *const reproductions[] = {REPRODUCTIONS(ENTRY)};
#define N_REPRODUCTIONS (sizeof(reproductions) / sizeof(reproductions[0]))

const char *reproduce_names(void)
{
  static char names[256];
  if (names[0] == '\0') {
    size_t at = 0;
    for (size_t r = 0; r < N_REPRODUCTIONS; r++)
      at += (size_t)snprintf(names + at, sizeof names - at, "%s, ", reproductions[r]->name);
    snprintf(names + at, sizeof names - at, "all");
  }
  return names;
}

/* --check's folder for reproduction r: --results DIR's r/, else the source tree's
 * results/r/, wherever dtsim runs from (--out plays no part: --check writes nothing). */
static void committed_dir(const char *results, const char *name, char *dir, size_t len)
{
  snprintf(dir, len, "%s/%s", results ? results : DTSIM_SOURCE_DIR "/results", name);
}

/* Where reproduction `name` writes: --out DIR itself for one, DIR/name for `all`, else
 * results/name, or with --quick the scratch folder dtsim-quick/name (a quick grid never
 * lands on the committed results by default). */
static void out_dir(const char *out, int all, int quick, const char *name, char *dir, size_t len)
{
  if (out && !all)
    snprintf(dir, len, "%s", out);
  else
    snprintf(dir, len, "%s/%s", out ? out : quick ? "dtsim-quick" : "results", name);
}

/* Whether dir holds a finished full grid of reproduction `name`: its NAME.csv, and a
 * README.md that says it was made by `dtsim reproduce NAME` without --quick. */
static int holds_full_grid(const char *dir, const char *name)
{
  char path[700], made[128];
  snprintf(path, sizeof path, "%s/%s.csv", dir, name);
  if (access(path, F_OK) != 0)
    return 0;
  snprintf(path, sizeof path, "%s/README.md", dir);
  size_t n = 0;
  char *text = fileio_read(path, &n);
  snprintf(made, sizeof made, "Made by `dtsim reproduce %s`", name);
  int full = text && strstr(text, made) != NULL;
  xbt_free(text);
  return full;
}

/* What reproduction `name` (every one with `all`) needs, checked before anything runs:
 * with --check, every committed CSV can be read; without, every result folder can be made
 * (with its parents, when written). 0, or -1 with one line in err. */
static int checked_first(const char *name, int all, const char *out, const char *results, const reproduce_opts *o,
                         int overwrite, char *err, size_t len)
{
  int check = o->check;
  for (size_t r = 0; r < N_REPRODUCTIONS; r++) {
    if (!all && strcmp(name, reproductions[r]->name) != 0)
      continue;
    char dir[512];
    if (!check) {
      out_dir(out, all, o->quick, reproductions[r]->name, dir, sizeof dir);
      if (output_dir_unusable(dir, err, len) != 0)
        return -1;
      if (!overwrite && holds_full_grid(dir, reproductions[r]->name)) {
        snprintf(err, len, "%s holds a finished full grid of %s (its README says so): --out names another folder, "
                 "--overwrite replaces it", dir, reproductions[r]->name);
        return -1;
      }
      continue;
    }
    committed_dir(results, reproductions[r]->name, dir, sizeof dir);
    for (int t = 0; t < REPRODUCE_MAX_TABLES && reproductions[r]->tables[t].file; t++) {
      if (reproductions[r]->tables[t].unchecked)
        continue;
      char path[700];
      snprintf(path, sizeof path, "%s/%s", dir, reproductions[r]->tables[t].file);
      if (access(path, R_OK) != 0) {
        snprintf(err, len, "--check: %s: cannot read: %s (nothing committed to check against; --results DIR "
                 "names the folder holding NAME/)", path, strerror(errno));
        return -1;
      }
    }
  }
  return 0;
}

/* Appends to err, when folder store keeps finished runs, that the same command resumes from
 * them. */
static void kept_note(const char *store, char *err, size_t len)
{
  size_t kept = reproduce_store_count(store), at = strlen(err);
  if (kept > 0)
    snprintf(err + at, len - at, "; %zu finished run%s kept in %s: the same command resumes from %s", kept,
             kept == 1 ? "" : "s", store, kept == 1 ? "it" : "them");
}

/* Whether argv[i] has a value after it: an option word is never one (`--out --quick` would
 * write into ./--quick). */
static int has_value(int argc, char **argv, int i)
{
  return i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0;
}

/* The command line: o's flags, the NAME and the folders asked for. 0; -1 once --help is
 * printed; 2 after one line on stderr. */
static int parse_args(int argc, char **argv, reproduce_opts *o, const char **name, const char **out,
                      const char **results, const char **store, int *overwrite)
{
  long n_par = sysconf(_SC_NPROCESSORS_ONLN);
  char err[1024];
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(usage, stdout);
      fputs(usage_options, stdout);
      return -1;
    } else if (strcmp(argv[i], "--quick") == 0)
      o->quick = 1;
    else if (strcmp(argv[i], "--check") == 0)
      o->check = 1;
    else if (strcmp(argv[i], "--fresh") == 0)
      o->fresh = 1;
    else if (strcmp(argv[i], "--overwrite") == 0)
      *overwrite = 1;
    else if (strcmp(argv[i], "--quiet") == 0)
      o->quiet = 1;
    else if (strcmp(argv[i], "--out") == 0 && has_value(argc, argv, i))
      *out = argv[++i];
    else if (strcmp(argv[i], "--results") == 0 && has_value(argc, argv, i))
      *results = argv[++i];
    else if (strcmp(argv[i], "--store") == 0 && has_value(argc, argv, i))
      *store = argv[++i];
    else if (strcmp(argv[i], "--jobs") == 0 && has_value(argc, argv, i)) {
      char *end;
      n_par = strtol(argv[++i], &end, 10);
      if (*end || n_par < 1)
        return bad("--jobs needs a positive whole number");
    } else if (argv[i][0] == '-') {
      snprintf(err, sizeof(err), "unknown or incomplete option '%s' (try: dtsim reproduce --help)", argv[i]);
      return bad(err);
    } else if (*name == NULL)
      *name = argv[i];
    else
      return bad("only one NAME can be given");
  }
  o->n_par = (size_t)n_par;
  return 0;
}

/* Reproduction r's own run store for results folder dir, into buf: dir/.runs, or the store
 * it shares (r->store) beside dir. */
static void store_of(const reproduction *r, const char *dir, char *buf, size_t len)
{
  const char *slash = strrchr(dir, '/');
  if (r->store == NULL)
    snprintf(buf, len, "%s/.runs", dir);
  else if (slash)
    snprintf(buf, len, "%.*s/%s", (int)(slash - dir), dir, r->store);
  else
    snprintf(buf, len, "%s", r->store);
}

/* Reproduction r into its folder (o->out set here; o->store too, store NULL: its own), or
 * checked: 0, 1 or 2, or 128 + the signal that stopped it; its line on stderr said. */
static int run_one(const reproduction *r, reproduce_opts *o, int all, const char *out, const char *results,
                   const char *store)
{
  char err[1024], outdir[512], own[600];
  if (o->check) /* nothing is written: out is where the committed CSVs are */
    committed_dir(results, r->name, outdir, sizeof outdir);
  else
    out_dir(out, all, o->quick, r->name, outdir, sizeof outdir); /* `all --out DIR` writes DIR/NAME for each */
  o->out = outdir;
  store_of(r, outdir, own, sizeof own);
  o->store = store ? store : own;
  if (o->fresh && !o->check) /* --check changes nothing there */
    reproduce_store_remove(o->store);
  int one = reproduce_frame_run(r, o, err, sizeof(err));
  if (!o->check && one == 0 && !interrupt_caught()) {
    if (!store && !r->store)
      reproduce_store_remove(o->store); /* written: the kept runs have served */
    else if (!store)
      reproduce_store_prune(o->store); /* kept with the results: only runs of these sources */
  } else if (!o->check)
    kept_note(o->store, err, sizeof err);
  o->out = o->store = NULL; /* they pointed here */
  if (interrupt_caught()) {
    fprintf(stderr, "dtsim reproduce: %s\n", err);
    return 128 + interrupt_caught();
  }
  if (one == 1)
    fprintf(stderr, "dtsim reproduce: --check: %s\n", err);
  else if (one != 0)
    fprintf(stderr, "dtsim reproduce: %s\n", err);
  return one;
}

int reproduce_main(int argc, char **argv)
{
  const char *name = NULL, *out = NULL, *results = NULL, *store = NULL;
  reproduce_opts o = {0};
  char err[1024];
  int overwrite = 0;
  int rc = parse_args(argc, argv, &o, &name, &out, &results, &store, &overwrite);
  if (rc != 0)
    return rc < 0 ? 0 : rc;
  if (name == NULL)
    return bad("which reproduction? (try: dtsim reproduce --help)");
  int all = strcmp(name, "all") == 0, found = all;
  for (size_t r = 0; r < N_REPRODUCTIONS; r++)
    found |= strcmp(name, reproductions[r]->name) == 0;
  if (!found) {
    snprintf(err, sizeof(err), "'%s' is not available (available: %s)", name, reproduce_names());
    return bad(err);
  }
  if (results && !o.check)
    return bad("--results DIR: only with --check (it names the committed results to compare with)");
  if (o.fresh && o.check)
    return bad("--fresh: not with --check (--check neither reads nor writes the kept runs)");
  if (store && o.check)
    return bad("--store: not with --check (--check neither reads nor writes the kept runs)");
  if (overwrite && o.check)
    return bad("--overwrite: not with --check (--check writes nothing)");
  if (checked_first(name, all, out, results, &o, overwrite, err, sizeof err) != 0)
    return bad(err);
  if (store && fileio_mkdirs(store, err, sizeof err) != 0)
    return bad(err);
  char work[] = "/tmp/dtsim-reproduce-XXXXXX";
  if (mkdtemp(work) == NULL)
    return bad("cannot create a temporary folder");
  o.work = work;
  for (size_t r = 0; r < N_REPRODUCTIONS; r++) {
    if (!all && strcmp(name, reproductions[r]->name) != 0)
      continue;
    int one = run_one(reproductions[r], &o, all, out, results, store);
    if (one > 128) { /* stopped by a signal */
      rc = one;
      break;
    }
    rc = one > rc ? one : rc;
  }
  fileio_remove_tree(work); /* the runs' folders and logs: whatever was kept is in the store */
  return rc;
}

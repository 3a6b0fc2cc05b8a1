#ifndef SIM_LAB_REPRODUCE_FRAME_H
#define SIM_LAB_REPRODUCE_FRAME_H
/* reproduce_frame.h - the skeleton every reproduction shares, so that a reproduction is a
 * declaration (its grids, its tables, its README and gnuplot templates) plus the code only
 * it needs: write each scenario (and copy its inputs), build each grid, run the jobs
 * (reproduce_run_jobs), read each finished run, write or --check the CSVs, fill the README
 * template NAME.md and the gnuplot templates PLOT.gp, draw, clean up. */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "sim/lab/reproduce.h"

#define REPRODUCE_MAX_GRIDS 2
#define REPRODUCE_MAX_TABLES 2
#define REPRODUCE_MAX_PLOTS 2
#define REPRODUCE_MAX_INPUTS 2

/* What the callbacks see: each grid's runs (an array of the reproduction's own run records)
 * and the command line's options. */
typedef struct reproduce_data {
  void *runs[REPRODUCE_MAX_GRIDS];
  size_t n[REPRODUCE_MAX_GRIDS];
  const reproduce_opts *o;
  const struct reproduction *r; /* the reproduction run */
  void *state; /* a simulate() hook's own results (Figs. 4 and 5: the calibration) */
} reproduce_data;

/* One grid of simulations on one scenario. */
typedef struct reproduce_grid {
  const char *ini_name; /* "zero.ini": written into the work folder and the results */
  const char *ini;      /* its text */
  size_t run_size;      /* sizeof the reproduction's run record */
  size_t max_runs;      /* the most runs grid() may return */
  /* Fills runs[0..] and jobs[0..] (zeroed) for the grid (quick: the reduced one) whose runs
   * start in folder work; returns how many. */
  size_t (*grid)(int quick, void *runs, reproduce_job *jobs, const char *work); /* NULL: simulate() */
  /* Reads finished job j into its run: 0, or -1 with one line in err. */
  int (*read)(void *run, const reproduce_job *j, char *err, size_t len);
  /* Frees what read() allocated in run, or NULL: nothing. */
  void (*free_run)(void *run);
} reproduce_grid;

/* One CSV: written, or compared with the committed one by --check. */
typedef struct reproduce_table {
  const char *file; /* "zero.csv" */
  unsigned key;     /* --quick --check: the key fields (bit i: field i), reproduce_check's;
                     * 0: compared whole (a table --quick does not reduce) */
  char *(*csv)(const reproduce_data *d); /* the malloc'ed text, or NULL: not in this grid */
  int unchecked;    /* 1: written, never compared by --check */
} reproduce_table;

/* A reproduction, declared. */
typedef struct reproduction {
  const char *name; /* NAME: its README template is templates/NAME.md */
  const void *arg;  /* what a shared simulate() needs (a figure's configurations) */
  reproduce_grid grids[REPRODUCE_MAX_GRIDS];
  reproduce_table tables[REPRODUCE_MAX_TABLES];
  /* Optional: runs the grid itself instead of grid() and read(), when a step's runs depend on
   * the results of the one before (Figs. 4 and 5: a calibration, then rounds of rates),
   * filling d->runs[0], d->n[0] and d->state: 0, or 2 with one line in err. release() then
   * frees them (and sets them NULL). */
  int (*simulate)(reproduce_data *d, char *err, size_t len);
  void (*release)(reproduce_data *d);
  /* Optional: what the CSVs need computed across runs once all are read. */
  void (*derive)(reproduce_data *d);
  /* The README's values: what template NAME.md uses beyond `quick` (" --quick" or "") and
   * `full` (a boolean), which are set. 0, or -1 with one line in err. */
  int (*readme)(json_t *v, const reproduce_data *d, char *err, size_t len);
  /* The plots, each drawn by gnuplot from template templates/PLOT.gp into PLOT.png. */
  const char *plots[REPRODUCE_MAX_PLOTS];
  /* Each plot's values beyond those set: `output` (the file gnuplot writes), `dir` (the
   * folder written, for a script that reads its CSV), `key`, `paper` and `formula`
   * (REPRODUCE_GP_KEY's line without its newline, REPRODUCE_GP_PAPER, REPRODUCE_GP_FORMULA). */
  void (*plot)(json_t *v, const char *plot, const reproduce_data *d);
  /* Files the runs read (a data set), by path: copied into the work folder under their own
   * name before any run, and beside the results. */
  const char *inputs[REPRODUCE_MAX_INPUTS];
  /* Files the runs read, by name and text (a generated platform): written into the work
   * folder before any run, and beside the results. */
  const char *texts[REPRODUCE_MAX_INPUTS][2];
  /* Optional: the name of a run store kept beside the results folder (DIR/../STORE), shared
   * with the reproductions that give the same name (Figs. 4 and 5) and kept after the results
   * are written, stale runs pruned: a full grid's runs go into the repository with its
   * results, so that it resumes on any machine and --check can verify it. NULL: DIR/.runs,
   * removed once DIR is written. */
  const char *store;
} reproduction;

/* Runs reproduction r as o asks: 0, 1 (--check found a difference, said in err) or 2 with
 * one line in err. */
int reproduce_frame_run(const reproduction *r, const reproduce_opts *o, char *err, size_t len);

/* A new item of list values[list] (made if need be) whose `sep` is "" for the first and ", "
 * after: one clause of a gnuplot `plot` command, `{{#list}}{{sep}}...{{/list}}`. */
json_t *reproduce_frame_clause(json_t *values, const char *list);

/* values[key] = the whole text f (reproduce_frame_stream's over *text) wrote, its final newline
 * kept (datablocks a script starts with); f is closed and *text freed. */
void reproduce_frame_set_whole(json_t *values, const char *key, FILE *f, char **text);

/* open_memstream(text, size) or abort: a table's or a datablock's rows built by printf pieces,
 * handed to template_set_stream (or fclose'd and *text freed). size must live until then. */
FILE *reproduce_frame_stream(char **text, size_t *size);

#endif

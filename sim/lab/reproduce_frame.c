/* reproduce_frame.c - a declared reproduction run from its scenarios to its folder
 * (reproduce_frame.h): the one copy of the skeleton each reproduce_*.c used to write again. */
#include "sim/lab/reproduce_frame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "sim/fileio.h"
#include "sim/lab/template.h"

/* A reproduction under way: each grid's jobs, and the CSVs once made. */
typedef struct frame {
  reproduce_data d;
  reproduce_job *jobs[REPRODUCE_MAX_GRIDS];
  char *csv[REPRODUCE_MAX_TABLES];
  char *input[REPRODUCE_MAX_INPUTS]; /* the inputs' bytes */
  size_t input_len[REPRODUCE_MAX_INPUTS];
} frame;

/* An input's name in the work folder and the results: its path's last part. */
static const char *input_name(const char *path)
{
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

FILE *reproduce_frame_stream(char **text, size_t *size)
{
  *text = NULL;
  FILE *f = open_memstream(text, size);
  xbt_assert(f, "open_memstream failed");
  return f;
}

void reproduce_frame_set_whole(json_t *values, const char *key, FILE *f, char **text)
{
  fclose(f);
  template_set(values, key, "%s", *text ? *text : "");
  free(*text); /* open_memstream's */
  *text = NULL;
}

json_t *reproduce_frame_clause(json_t *values, const char *list)
{
  json_t *it = template_add(values, list);
  template_set(it, "sep", "%s", json_array_size(json_object_get(values, list)) > 1 ? ", " : "");
  return it;
}

/* Writes each scenario and input into the work folder and builds each grid. */
static int frame_start(const reproduction *r, frame *f, char *err, size_t len)
{
  const reproduce_opts *o = f->d.o;
  for (int i = 0; i < REPRODUCE_MAX_INPUTS && r->inputs[i]; i++) {
    f->input[i] = fileio_read(r->inputs[i], &f->input_len[i]);
    if (f->input[i] == NULL) {
      snprintf(err, len, "cannot read the data set %s (dtsim's source tree)", r->inputs[i]);
      return 2;
    }
    if (fileio_write(o->work, input_name(r->inputs[i]), f->input[i], f->input_len[i], err, len) != 0)
      return 2;
  }
  for (int i = 0; i < REPRODUCE_MAX_INPUTS && r->texts[i][0]; i++)
    if (fileio_write(o->work, r->texts[i][0], r->texts[i][1], strlen(r->texts[i][1]), err, len) != 0)
      return 2;
  for (int g = 0; g < REPRODUCE_MAX_GRIDS && r->grids[g].ini_name; g++) {
    const reproduce_grid *gr = &r->grids[g];
    if (fileio_write(o->work, gr->ini_name, gr->ini, strlen(gr->ini), err, len) != 0)
      return 2;
  }
  for (int g = 0; g < REPRODUCE_MAX_GRIDS && r->grids[g].grid; g++) {
    const reproduce_grid *gr = &r->grids[g];
    f->d.runs[g] = xbt_malloc0(gr->max_runs * gr->run_size);
    f->jobs[g] = xbt_malloc0(gr->max_runs * sizeof(reproduce_job));
    f->d.n[g] = gr->grid(o->quick, f->d.runs[g], f->jobs[g], o->work);
    xbt_assert(f->d.n[g] <= gr->max_runs, "%s: %zu runs, room for %zu", gr->ini_name, f->d.n[g], gr->max_runs);
  }
  return 0;
}

/* Runs every grid's jobs, grid by grid, then reads every run (or lets simulate() do it). */
static int frame_simulate(const reproduction *r, frame *f, char *err, size_t len)
{
  if (r->simulate)
    return r->simulate(&f->d, err, len);
  for (int g = 0; g < REPRODUCE_MAX_GRIDS && r->grids[g].grid; g++)
    if (reproduce_run_jobs(f->d.o, r->grids[g].ini_name, f->jobs[g], f->d.n[g], err, len) != 0)
      return 2;
  for (int g = 0; g < REPRODUCE_MAX_GRIDS && r->grids[g].grid; g++)
    for (size_t k = 0; k < f->d.n[g]; k++)
      if (r->grids[g].read((char *)f->d.runs[g] + k * r->grids[g].run_size, &f->jobs[g][k], err, len) != 0)
        return 2;
  return 0;
}

/* --check: each CSV against the committed one in o->out, the first difference in err. */
static int frame_check(const reproduction *r, const frame *f, char *err, size_t len)
{
  const reproduce_opts *o = f->d.o;
  for (int t = 0; t < REPRODUCE_MAX_TABLES && r->tables[t].file; t++) {
    if (r->tables[t].unchecked || f->csv[t] == NULL)
      continue;
    char committed[600];
    snprintf(committed, sizeof committed, "%s/%s", o->out, r->tables[t].file);
    int rc = reproduce_check(f->csv[t], committed, o->quick && r->tables[t].key, r->tables[t].key, err, len);
    if (rc != 0)
      return rc;
    if (!o->quiet)
      fprintf(stderr, "dtsim reproduce: %s matches %s\n", r->name, committed);
  }
  return 0;
}

/* Plot p drawn: its template filled and fed to gnuplot. */
static int frame_plot(const reproduction *r, const frame *f, const char *p, char *err, size_t len)
{
  json_t *v = json_object();
  template_set(v, "output", "%s/.%s.png.tmp", f->d.o->out, p);
  template_set(v, "dir", "%s", f->d.o->out);
  template_set(v, "key", "%.*s", (int)strlen(REPRODUCE_GP_KEY) - 1, REPRODUCE_GP_KEY);
  template_set(v, "paper", "%s", REPRODUCE_GP_PAPER);
  template_set(v, "formula", "%s", REPRODUCE_GP_FORMULA);
  if (r->plot)
    r->plot(v, p, &f->d);
  char name[64];
  snprintf(name, sizeof name, "%s.gp", p);
  char *script = template_render(name, v, err, len);
  json_decref(v);
  int rc = script ? reproduce_plot(f->d.o->out, p, script, err, len) : -1;
  free(script); /* template_fill's */
  return rc;
}

/* The README, from template NAME.md: malloc'ed, or NULL with err. */
static char *frame_readme(const reproduction *r, const frame *f, char *err, size_t len)
{
  json_t *v = json_object();
  template_set(v, "quick", "%s", f->d.o->quick ? " --quick" : "");
  json_object_set_new(v, "full", json_boolean(!f->d.o->quick));
  char *readme = r->readme(v, &f->d, err, len) == 0 ? template_render(r->name, v, err, len) : NULL;
  json_decref(v);
  return readme;
}

/* Writes the folder: the scenarios, the CSVs, the README, the inputs, then the plots. */
static int frame_write(const reproduction *r, const frame *f, char *err, size_t len)
{
  const char *files[2 * (REPRODUCE_MAX_GRIDS + REPRODUCE_MAX_INPUTS + REPRODUCE_MAX_TABLES + 1)];
  size_t n = 0;
  int rc = 0;
  for (int g = 0; g < REPRODUCE_MAX_GRIDS && r->grids[g].ini_name; g++, n++)
    files[2 * n] = r->grids[g].ini_name, files[2 * n + 1] = r->grids[g].ini;
  for (int i = 0; i < REPRODUCE_MAX_INPUTS && r->texts[i][0]; i++, n++)
    files[2 * n] = r->texts[i][0], files[2 * n + 1] = r->texts[i][1];
  for (int t = 0; t < REPRODUCE_MAX_TABLES && r->tables[t].file; t++)
    if (f->csv[t]) /* NULL: a table this grid does not make */
      files[2 * n] = r->tables[t].file, files[2 * n + 1] = f->csv[t], n++;
  char *readme = frame_readme(r, f, err, len);
  files[2 * n] = "README.md", files[2 * n + 1] = readme, n++;
  if (readme == NULL || reproduce_write(f->d.o->out, files, n, err, len) != 0)
    rc = 2;
  for (int i = 0; rc == 0 && i < REPRODUCE_MAX_INPUTS && r->inputs[i]; i++)
    if (fileio_write(f->d.o->out, input_name(r->inputs[i]), f->input[i], f->input_len[i], err, len) != 0)
      rc = 2;
  for (int p = 0; rc == 0 && p < REPRODUCE_MAX_PLOTS && r->plots[p]; p++)
    if (frame_plot(r, f, r->plots[p], err, len) != 0)
      rc = 2;
  free(readme); /* template_fill's */
  if (rc == 0 && !f->d.o->quiet)
    fprintf(stderr, "dtsim reproduce: wrote %s/%s and README.md\n", f->d.o->out, r->name);
  return rc;
}

/* Removes the runs' folders (a failed run's stay), the scenarios and the inputs; frees everything. */
static void frame_end(const reproduction *r, frame *f)
{
  if (r->release)
    r->release(&f->d);
  for (int g = 0; g < REPRODUCE_MAX_GRIDS && r->grids[g].ini_name; g++) {
    const reproduce_grid *gr = &r->grids[g];
    for (size_t k = 0; f->jobs[g] && k < f->d.n[g]; k++)
      reproduce_remove_run(&f->jobs[g][k]);
    for (size_t k = 0; gr->free_run && f->d.runs[g] && k < f->d.n[g]; k++)
      gr->free_run((char *)f->d.runs[g] + k * gr->run_size);
    char path[600];
    snprintf(path, sizeof path, "%s/%s", f->d.o->work, gr->ini_name);
    unlink(path);
    xbt_free(f->d.runs[g]);
    xbt_free(f->jobs[g]);
  }
  for (int t = 0; t < REPRODUCE_MAX_TABLES; t++)
    free(f->csv[t]); /* open_memstream's */
  for (int i = 0; i < REPRODUCE_MAX_INPUTS && r->inputs[i]; i++) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", f->d.o->work, input_name(r->inputs[i]));
    unlink(path);
    free(f->input[i]); /* fileio_read's */
  }
  for (int i = 0; i < REPRODUCE_MAX_INPUTS && r->texts[i][0]; i++) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", f->d.o->work, r->texts[i][0]);
    unlink(path);
  }
}

int reproduce_frame_run(const reproduction *r, const reproduce_opts *o, char *err, size_t len)
{
  frame f = {.d = {.o = o, .r = r}};
  int rc = frame_start(r, &f, err, len);
  if (rc == 0)
    rc = frame_simulate(r, &f, err, len);
  if (rc == 0 && r->derive)
    r->derive(&f.d);
  for (int t = 0; rc == 0 && t < REPRODUCE_MAX_TABLES && r->tables[t].file; t++)
    f.csv[t] = r->tables[t].csv(&f.d);
  if (rc == 0)
    rc = o->check ? frame_check(r, &f, err, len) : frame_write(r, &f, err, len);
  frame_end(r, &f);
  return rc;
}

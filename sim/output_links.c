/* output_links.c - a run's links in its result files (output_links.h): links.csv, the
 * ranked links of summary.json, and links.png. A link is ranked by its busiest window
 * (peak_utilization: the run cut into windows of simulated time, linkload.h), not by its
 * average over the run, which hides a link saturated in bursts between idle stretches. */
#include "sim/output_links.h"

#include <stdio.h>
#include <string.h>
#include <xbt/sysdep.h>

#include "sim/plot.h"

/* A CSV field, quoted (RFC 4180) when it holds a comma, a quote or a line break (a host
 * name of the user's platform file may). */
static void output_links_field(report_text *b, const char *s)
{
  if (strpbrk(s, ",\"\r\n") == NULL) {
    report_printf(b, "%s", s);
    return;
  }
  report_printf(b, "\"");
  for (; *s; s++)
    report_printf(b, *s == '"' ? "\"\"" : "%c", *s);
  report_printf(b, "\"");
}

void output_links_csv(report_text *b, const run_result *r)
{
  b->len = 0;
  report_printf(b, "link,bytes,utilization,tier,from,to,sharing,peak_utilization,peak_at_s,where\n");
  for (size_t i = 0; i < r->n_links; i++) {
    const link_stat *l = &r->links[i];
    report_printf(b, "%s,", l->name);
    report_double(b, l->bytes);
    report_printf(b, ",");
    report_double(b, l->utilization);
    report_printf(b, ",%s,", l->tier);
    output_links_field(b, l->from ? l->from : "");
    report_printf(b, ",");
    output_links_field(b, l->to ? l->to : "");
    report_printf(b, ",%s,", l->sharing);
    report_double(b, l->peak_utilization);
    report_printf(b, ",");
    report_double(b, l->peak_at);
    report_printf(b, ",");
    output_links_field(b, l->where);
    report_printf(b, "\n");
  }
}

/* Whether link a ranks before link b: the busier peak, then more bytes, then the name's
 * order (links are sorted by name, so the lower index). */
static int output_links_before(const run_result *r, size_t a, size_t b)
{
  const link_stat *x = &r->links[a], *y = &r->links[b];
  if (x->peak_utilization != y->peak_utilization)
    return x->peak_utilization > y->peak_utilization;
  if (x->bytes != y->bytes)
    return x->bytes > y->bytes;
  return a < b;
}

/* The first `most` links of one kind (shared or not) that carried bytes, ranked, into idx;
 * returns how many. A FATPIPE link gives every flow its whole bandwidth, so it may carry the
 * most bytes, and exceed 1, without being what any flow waits for: it is ranked apart,
 * not above the links flows share. */
static size_t output_links_rank(const run_result *r, int shared, size_t most, size_t *idx)
{
  size_t m = 0;
  for (size_t i = 0; i < r->n_links; i++) {
    if ((strcmp(r->links[i].sharing, "shared") == 0) != shared || !(r->links[i].bytes > 0))
      continue;
    size_t at = m < most ? m++ : most; /* insertion into the ranked prefix */
    while (at > 0 && output_links_before(r, i, idx[at - 1])) {
      if (at < most)
        idx[at] = idx[at - 1];
      at--;
    }
    if (at < most)
      idx[at] = i;
  }
  return m;
}

json_t *output_links_top(const run_result *r, int shared)
{
  json_t *top = json_array();
  size_t idx[10], m = output_links_rank(r, shared, 10, idx);
  for (size_t k = 0; k < m; k++) {
    const link_stat *l = &r->links[idx[k]];
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(l->name));
    json_object_set_new(o, "bytes", json_real(l->bytes));
    json_object_set_new(o, "utilization", report_num(l->utilization));
    json_object_set_new(o, "peak_utilization", report_num(l->peak_utilization));
    json_object_set_new(o, "peak_at_s", report_num(l->peak_at));
    json_object_set_new(o, "sharing", json_string(l->sharing));
    json_object_set_new(o, "where", json_string(l->where));
    json_array_append_new(top, o);
  }
  return top;
}

size_t output_links_plotted(const run_result *r, size_t *idx)
{
  return r->link_windows > 0 ? output_links_rank(r, 1, OUTPUT_LINKS_PLOTTED, idx) : 0;
}

int output_links_plot(const char *dir, const run_result *r, const size_t *idx, size_t n, char *err, size_t len)
{
  const char *names[OUTPUT_LINKS_PLOTTED];
  const double *series[OUTPUT_LINKS_PLOTTED];
  char titles[OUTPUT_LINKS_PLOTTED][160], title[200];
  for (size_t i = 0; i < n && i < OUTPUT_LINKS_PLOTTED; i++) {
    const link_stat *l = &r->links[idx[i]];
    if (l->where[0])
      snprintf(titles[i], sizeof titles[i], "%s (%s)", l->where, l->name);
    else
      snprintf(titles[i], sizeof titles[i], "%s", l->name);
    names[i] = titles[i];
    series[i] = l->series;
  }
  snprintf(title, sizeof title, "dtsim run: %s, the busiest shared links per %.3g s window", r->sc->run.algorithm,
           r->link_window);
  return plot_links(dir, title, n, names, series, r->link_windows, r->link_window, r->sim_time, err, len) == 0 ? 1 : -1;
}

#ifndef SIM_OUTPUT_LINKS_H
#define SIM_OUTPUT_LINKS_H
/* output_links.h - a run's links in its result files (output.h writes them all): links.csv,
 * summary.json's ranked links, and links.png, the busiest links' utilization over time. */

#include <jansson.h>

#include "algorithms/report.h"
#include "sim/output_result.h"

/* How many links links.png draws at most, the busiest first. */
#define OUTPUT_LINKS_PLOTTED 5

/* links.csv's text into b: one row per link that carried traffic, by name. */
void output_links_csv(report_text *b, const run_result *r);

/* top_links (shared 1) or top_unshared_links (0): the ten links of that kind that carried
 * bytes, busiest window first (peak_utilization), then most bytes, then by name. */
json_t *output_links_top(const run_result *r, int shared);

/* The indices into r->links of the shared links links.png draws, in top_links' order, into
 * idx (OUTPUT_LINKS_PLOTTED of room); returns how many (0: no picture). */
size_t output_links_plotted(const run_result *r, size_t *idx);

/* Draws dir/links.png from r's links idx[0..n-1]: 1 drawn, -1 with a message in err
 * (gnuplot missing or failing). */
int output_links_plot(const char *dir, const run_result *r, const size_t *idx, size_t n, char *err, size_t len);

#endif

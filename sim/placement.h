#ifndef SIM_PLACEMENT_H
#define SIM_PLACEMENT_H
/* placement.h - where a run's hosts sit on the loaded platform, how fast each computes,
 * and what crossed each link on the way between them, and when. */

#include <stddef.h>
#include <simgrid/forward.h>

#include "sim/output.h"
#include "sim/platform_where.h"
#include "sim/scenario.h"

/* The `needed` hosts of all[0..n_all-1] the run uses, in placement order (platform.placement:
 * the first ones, or spread). Returns a malloc'ed array the caller frees. */
sg_host_t *placement_hosts(const scenario *sc, sg_host_t *all, size_t n_all, size_t needed);

/* platform.speed_spread: every host's slowdown (stragglers' or 1) times a factor drawn once
 * per host from the seed. Returns slowdown, or a malloc'ed array the caller frees when
 * slowdown was NULL and a spread is asked, or NULL. */
double *placement_speeds(const scenario *sc, double *slowdown, size_t n_hosts);

/* platform.bw_factor and lat_factor: every link of the loaded platform scaled, before
 * simgrid_run. */
void placement_scale_links(const scenario *sc);

/* After simgrid_run: every link that carried the run's messages (msg_traffic, between the
 * placed hosts[0..n_hosts-1]) with its bytes, utilization over sim_time, tier, endpoints,
 * its utilization in each of the n_windows windows of linkload.h that cover sim_time and
 * their peak, and where it is on layout's platform; sorted by name. Returns the array and
 * its length in *n; placement_links_free frees both. */
link_stat *placement_links(double sim_time, size_t n_windows, const platform_layout *layout, sg_host_t *hosts,
                           size_t n_hosts, size_t *n);

/* Frees placement_links' n links and their strings; NULL is a no-op. */
void placement_links_free(link_stat *links, size_t n);

#endif

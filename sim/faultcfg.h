#ifndef SIM_FAULTCFG_H
#define SIM_FAULTCFG_H
/* faultcfg.h - turns a scenario's [faults] section into a run's fault plan and
 * straggler factors, once the platform is loaded and before the engine runs. */

#include <stddef.h>
#include <simgrid/forward.h>

#include "algorithms/faults.h"
#include "sim/scenario.h"

/* Hosts of the run (placement order) that are workers for [faults] stragglers and
 * role names, as the algorithm's descriptor counts them (fault_workers); all by default. */
size_t faultcfg_workers(const scenario *sc, size_t n_hosts);

/* Fills p from sc: parses the lists, resolves every HOST (a platform host name or a
 * role: replicaK, shardK, coordinator, rankI) and LINK against the loaded platform
 * (all: its n_all hosts; hosts: the run's n_hosts in placement order), picks the safe
 * host and the deadline. Returns 1 when the run has fault events (p is then to be
 * cleared with faults_clear), 0 when it has none (p untouched), or -1 with one line in
 * err (p cleared). */
int faultcfg_build(const scenario *sc, const sg_host_t *hosts, size_t n_hosts, sg_host_t *all, size_t n_all,
                   fault_plan *p, char *err, size_t errlen);

/* [faults] stragglers for every algorithm but sandblaster (which picks its own):
 * round(FRACTION x W) of the W workers, at least one when FRACTION > 0, drawn with the
 * seed's RNG_ROLE_STRAGGLER stream, get factor SLOWDOWN. Returns a factor per run host
 * (caller frees with xbt_free), or NULL when there are no stragglers. */
double *faultcfg_slowdown(const scenario *sc, size_t n_hosts);

#endif

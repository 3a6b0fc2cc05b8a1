/* engine_platform.c - the steps of engine_run's pipeline that settle the platform before
 * SimGrid starts: the platform file (the user's, or the preset written into a private
 * temporary folder, with a parameter-server bank when the algorithm asks for one and the
 * platform takes it) and its hosts against the run's (platform.c's crash-isolated
 * pre-check: SimGrid aborts on a file it refuses). */
#include "sim/engine_platform.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xbt/asserts.h>

#include "sim/energy.h"
#include "sim/interrupt.h"
#include "sim/platform.h"

/* The algorithm's bank (algorithm_plan's bank) against the platform: only a generated fat
 * tree with pooled uplinks takes one (platform_write_pooled); else a bank that was asked
 * for is an error and an automatic one falls back to the exact model. spec NULL: the
 * user's platform file; else the bank goes into it. */
static int engine_platform_bank(engine_build *b, platform_spec *spec, char *err)
{
  if (b->bank.hosts == 0)
    return 0;
  if (spec && spec->pooled && platform_pooled_fits(spec)) {
    spec->banks = b->bank.hosts;
    spec->bank_scale = b->bank.scale;
    spec->control_net = b->bank.control_net;
    return 0;
  }
  if (b->bank.asked) {
    int fits = spec && platform_pooled_fits(spec);
    snprintf(err, ENGINE_ERRLEN, "%s: the bank runs on a generated fat tree with pooled uplinks; %s%s%s", b->bank.why,
             fits ? "set platform.uplink_routing = pooled" : spec ? "this preset is not one: set " : "a platform.file's "
             "routes cannot be pooled: set ", fits ? "" : b->alg->name, fits ? "" : ".ps_bank = exact");
    return -1;
  }
  b->bank.hosts = 0;
  b->bank.control_net = 0;
  return 0;
}

/* Writes the preset into a private temporary folder, or uses the user's file. */
int engine_platform_write(engine_build *b)
{
  const scenario *sc = b->sc;
  char *err = b->err;
  if (b->alg->plan.bank)
    b->alg->plan.bank(sc, algorithm_params(sc, b->alg), &b->bank);
  if (sc->platform.file[0]) {
    snprintf(b->platform, sizeof(b->platform), "%s", sc->platform.file);
    return engine_platform_bank(b, NULL, err);
  }
  platform_spec spec;
  size_t hosts = sc->platform.hosts > 0 ? (size_t)sc->platform.hosts : b->needed;
  if (platform_preset(sc->platform.preset, hosts, &spec) != 0) {
    snprintf(err, ENGINE_ERRLEN, "platform.preset: unknown preset '%s' (see dtsim list)", sc->platform.preset);
    return -1;
  }
  if (sc->platform.gen_topology[0]) { /* as `dtsim platform PRESET --topology T` */
    xbt_assert(platform_topology_parse(sc->platform.gen_topology, &spec.topology) == 0, "validated topology");
    spec.gpus_per_node = 0;
    if (spec.topology != PLATFORM_FAT_TREE)
      spec.hosts_per_rack = spec.uplinks = 0;
  }
  if (sc->platform.host_cores > 0)
    spec.cores = (int)sc->platform.host_cores;
  if (sc->platform.sharing[0])
    spec.sharing = platform_sharing_parse(sc->platform.sharing);
  if (sc->platform.power[0]) /* as `dtsim platform PRESET --power ...` */
    xbt_assert(platform_power_parse(sc->platform.power, &spec) == 0, "validated platform.power");
  if (!sc->platform.link_efficiency)
    spec.bw_eff = spec.node_bw_eff = 0; /* the nominal link bandwidths */
  spec.pooled = strcmp(sc->platform.uplink_routing, "pooled") == 0;
  spec.host_cpus = sc->model.framework[0] != '\0'; /* model.framework's threads, on GPU nodes */
  if (engine_platform_bank(b, &spec, err) != 0)
    return -1;
  snprintf(b->tmpdir, sizeof(b->tmpdir), "/tmp/dtsim-XXXXXX");
  interrupt_run_hold(1, NULL); /* a signal now finds the folder and file to remove */
  if (mkdtemp(b->tmpdir) == NULL) {
    interrupt_run_hold(0, NULL);
    snprintf(err, ENGINE_ERRLEN, "cannot create a temporary folder: %s", strerror(errno));
    b->tmpdir[0] = '\0';
    return -1;
  }
  snprintf(b->platform, sizeof(b->platform), "%s/%s.xml", b->tmpdir, sc->platform.preset);
  interrupt_run_remove(b->platform, b->tmpdir);
  interrupt_run_hold(0, NULL);
  FILE *f = fopen(b->platform, "w");
  if (f == NULL) {
    snprintf(err, ENGINE_ERRLEN, "%s: cannot write: %s", b->platform, strerror(errno));
    return -1;
  }
  int rc = platform_write(&spec, f, err, ENGINE_ERRLEN);
  if (fclose(f) != 0 && rc == 0) {
    snprintf(err, ENGINE_ERRLEN, "%s: cannot write: %s", b->platform, strerror(errno));
    rc = -1;
  }
  return rc;
}

/* The platform's hosts against the run's: enough of them, and every one the run will
 * use reachable at a positive speed (platform_check_use). 0, or -1 with one line in err. */
int engine_platform_check(engine_build *b)
{
  const scenario *sc = b->sc;
  char *err = b->err;
  platform_use use = {b->needed, strcmp(sc->platform.placement, "spread") == 0, sc->model.framework[0] != '\0'};
  long hosts = platform_check_use(b->platform, b->sg_argc, b->sg_argv, &use, err, ENGINE_ERRLEN);
  if (hosts < 0)
    return -1;
  b->energy = energy_platform_has(b->platform, &b->energy_links);
  if ((size_t)hosts >= b->needed)
    return 0;
  snprintf(err, ENGINE_ERRLEN, "%s: the platform has %ld host%s, the run needs %zu (%s)",
           sc->platform.file[0] ? sc->platform.file : sc->platform.preset, hosts, hosts == 1 ? "" : "s", b->needed,
           b->needed_why);
  return -1;
}

void engine_platform_note(const engine_build *b)
{
  if (b->bank.hosts && !b->o->quiet)
    fprintf(stderr, "dtsim: %s: the shards run as %zu bank host%s of %g shards' links and cores at the core of "
            "the fat tree%s (algorithms/doc/%s.md, Bank)\n", b->bank.why, b->bank.hosts, b->bank.hosts == 1 ? "" : "s",
            b->bank.scale, b->bank.control_net ? ", the hosts' messages to one another on a control network" : "",
            b->alg->name);
}

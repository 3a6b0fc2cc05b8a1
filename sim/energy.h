#ifndef SIM_ENERGY_H
#define SIM_ENERGY_H
/* energy.h - a run's energy through SimGrid's energy plugins (host energy with power states,
 * link energy): whether a platform carries power figures, the plugins' set-up before it
 * loads, the power cap (a power state), and after the run each device's joules split into
 * compute, communication and idle, the fabric's, the totals, the PUE and the emissions
 * (platforms/README.md, Energy). */

#include <stddef.h>
#include <jansson.h>
#include <simgrid/forward.h>

#include "algorithms/report.h"

/* One device (a host the run uses): the plugin's joules, and their split by what the device
 * did (account_host_phases). */
typedef struct energy_device {
  const char *host;          /* SimGrid's name, valid while the engine lives */
  double total_j, compute_j, comm_j, idle_j;
} energy_device;

typedef struct energy_report {
  size_t n;                  /* devices: the hosts the run uses, in placement order */
  energy_device *dev;
  double sim_time;           /* simulated s the plugins integrated over (the engine's clock) */
  double compute_j, comm_j, idle_j, devices_j; /* sums over the devices */
  double network_j;          /* every link with a wattage_range (the link energy plugin); 0 without */
  int has_network;           /* the platform has such links */
  double it_j;               /* devices_j + network_j */
  double pue, facility_j;    /* platform.pue; it_j x pue */
  double carbon_g_per_kwh;   /* platform.carbon_intensity; 0: emissions not reported */
  double power_cap_w;        /* platform.power_cap; 0: none */
  double gpu_limit_w;        /* the GPU power limit of the devices' power state; 0: not listed */
  double examples;           /* examples the run processed (summary.json's), for joules per example */
} energy_report;

/* Whether the platform file carries power figures: 1 when some host has a wattage_per_state
 * property (then *links says whether some link has a wattage_range and none is a WIFI link,
 * which the link energy plugin cannot read), 0 when none, -1 when it cannot be read. A light
 * text scan, as platform_hosts_in_order's. */
int energy_platform_has(const char *path, int *links);

/* Before simgrid_load_platform (after simgrid_init): the host energy plugin, and the link
 * energy plugin when links is 1, with their per-host and per-link log lines silenced (the
 * results carry the figures). */
void energy_plugins_init(int links);

/* After loading, before any actor starts: every host of hosts[0..n) has power figures, and
 * with cap_w > 0 (then after sealing the platform with an empty simgrid_run) each is set to
 * its highest power state whose GPU power limit (gpu_power_limits) is at most cap_w. 0, or -1 with one line in err (a host without figures, a platform without
 * power states, a cap below the lowest limit). */
int energy_prepare(sg_host_t *hosts, size_t n, double cap_w, char *err, size_t len);

/* After simgrid_run and account_breakdown: the report of hosts[0..n) (the plugin's joules,
 * split by account_host_phases; a device the algorithm mirrors, rep->twins, takes its twin's),
 * the fabric's links, the settings (pue, carbon intensity, power cap) and rep's examples.
 * energy_free frees it (NULL is a no-op). */
typedef struct energy_settings {
  double pue;                /* platform.pue */
  double carbon_g_per_kwh;   /* platform.carbon_intensity */
  double power_cap_w;        /* platform.power_cap */
} energy_settings;
energy_report *energy_gather(sg_host_t *hosts, size_t n, const energy_settings *set, const report *rep);
void energy_free(energy_report *r);

/* summary.json's "energy" block (a new reference). */
json_t *energy_json(const energy_report *r);
/* energy.csv's text into t: one row per device. */
void energy_csv(const energy_report *r, report_text *t);
/* The closing line's words on energy into buf ("" for NULL). */
void energy_text(const energy_report *r, char *buf, size_t len);

#endif

/* energy.c - a run's energy, as SimGrid's energy plugins integrate it.
 *
 * The host energy plugin integrates each host's power over the run: P = idle when nothing
 * runs on it, else epsilon + slope x load, load being the share of its speed its executions
 * use, at its power state (wattage_per_state). A device's total is the plugin's joules. The
 * split of that total by what the device did uses the plugin's own figures over the phases
 * account.c cut the run into: while idle the host draws the plugin's idle power, while it
 * communicates the idle power, or with a collective's hold epsilon + slope x the hold's load;
 * the rest of the plugin's joules are the compute's. The link energy plugin gives the
 * fabric's joules (the links' wattage_range). */
#include "sim/energy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/plugins/energy.h>
#include <xbt/log.h>
#include <xbt/sysdep.h>

#include "algorithms/account.h"
#include "sim/fileio.h"

#define J_PER_KWH 3.6e6

int energy_platform_has(const char *path, int *links)
{
  size_t len = 0;
  char *doc = fileio_read(path, &len);
  if (doc == NULL)
    return -1;
  int hosts = strstr(doc, "\"wattage_per_state\"") != NULL || strstr(doc, "'wattage_per_state'") != NULL;
  *links = strstr(doc, "\"wattage_range\"") != NULL || strstr(doc, "'wattage_range'") != NULL;
  if (strstr(doc, "WIFI")) /* SimGrid 3.32's link plugin gives WiFi links no record, and reading one crashes */
    *links = 0;
  xbt_free(doc);
  return hosts;
}

void energy_plugins_init(int links)
{
  /* the plugins log every host's and link's joules at exit and the totals at the end */
  xbt_log_control_set("host_energy.thres:critical link_energy.thres:critical");
  sg_host_energy_plugin_init();
  if (links)
    sg_link_energy_plugin_init();
}

/* The power state of host h for a GPU power limit of at most cap_w (its gpu_power_limits,
 * highest first): its index with the limit in *limit, or -1 with the problem in err. */
static int cap_state(sg_host_t h, double cap_w, double *limit, char *err, size_t len)
{
  const char *v = sg_host_get_property_value(h, "gpu_power_limits");
  if (v == NULL) {
    snprintf(err, len, "platform.power_cap: host %s has no power states (no gpu_power_limits property; the dgx-h100, "
             "dgx-b200 and gb200-nvl72 presets have them)", sg_host_get_name(h));
    return -1;
  }
  double lowest = INFINITY;
  for (unsigned long i = 0; *v; i++) {
    char *end;
    double l = strtod(v, &end);
    if (end == v || (*end != ',' && *end != '\0') || i >= sg_host_get_nb_pstates(h)) {
      snprintf(err, len, "host %s: gpu_power_limits must list one limit in W per power state, highest first",
               sg_host_get_name(h));
      return -1;
    }
    if (l <= cap_w) {
      *limit = l;
      return (int)i;
    }
    lowest = l;
    v = *end ? end + 1 : end;
  }
  snprintf(err, len, "platform.power_cap: %g W is below host %s's lowest GPU power limit (%g W)", cap_w,
           sg_host_get_name(h), lowest);
  return -1;
}

int energy_prepare(sg_host_t *hosts, size_t n, double cap_w, char *err, size_t len)
{
  /* SimGrid 3.32's plugin attaches a new record to every host when the platform is sealed, at
   * the start of the run, and that record starts at power state 0 whatever the host's state
   * (measured: a state set before charged the run's first interval at state 0's power). A run
   * with no actor seals the platform and returns at time 0; the states are set after it. */
  if (cap_w > 0)
    simgrid_run();
  for (size_t i = 0; i < n; i++) {
    if (sg_host_get_property_value(hosts[i], "wattage_per_state") == NULL) {
      snprintf(err, len, "host %s has no power figures (wattage_per_state) while the platform has some: give every "
               "host the run uses its figures, or none", sg_host_get_name(hosts[i]));
      return -1;
    }
    double limit;
    int state = cap_w > 0 ? cap_state(hosts[i], cap_w, &limit, err, len) : 0;
    if (state < 0)
      return -1;
    sg_host_set_pstate(hosts[i], state);
  }
  return 0;
}

/* The GPU power limit of h's power state, or 0 when it lists none. */
static double state_limit(sg_host_t h)
{
  const char *v = sg_host_get_property_value(h, "gpu_power_limits");
  for (unsigned long i = 0; v && *v; i++) {
    char *end;
    double l = strtod(v, &end);
    if (i == sg_host_get_pstate(h))
      return end != v ? l : 0;
    v = *end ? end + 1 : end;
  }
  return 0;
}

/* Device d's joules: the plugin's total, split by the phases (account_host_phases) with the
 * plugin's power figures at its power state. */
static void device_split(sg_host_t h, double t, energy_device *d)
{
  int ps = sg_host_get_pstate(h);
  double idle = sg_host_get_idle_consumption_at(h, ps), eps = sg_host_get_wattmin_at(h, ps);
  double slope = sg_host_get_power_range_slope_at(h, ps);
  account_phases ph;
  account_host_phases(h, &ph);
  double seen = ph.compute_s + ph.comm_s + ph.comm_held_s + ph.idle_s;
  double unseen = t > seen ? t - seen : 0; /* before its first event, after its last: idle */
  d->host = sg_host_get_name(h);
  d->total_j = sg_host_get_consumed_energy(h);
  d->idle_j = idle * (ph.idle_s + unseen);
  d->comm_j = idle * ph.comm_s + eps * ph.comm_held_s + slope * ph.comm_held_load_s;
  d->compute_j = d->total_j - d->idle_j - d->comm_j;
}

energy_report *energy_gather(sg_host_t *hosts, size_t n, const energy_settings *set, const report *rep)
{
  energy_report *r = xbt_malloc0(sizeof *r);
  r->n = n;
  r->dev = xbt_malloc0((n ? n : 1) * sizeof *r->dev);
  r->sim_time = simgrid_get_clock();
  for (size_t i = 0; i < n; i++) {
    size_t twin = i < rep->n_twins && rep->twins ? rep->twins[i] : i;
    if (twin < i) { /* an exact mirror (rep->twins) does what its twin does */
      r->dev[i] = r->dev[twin];
      r->dev[i].host = sg_host_get_name(hosts[i]);
    } else
      device_split(hosts[i], r->sim_time, &r->dev[i]);
    r->compute_j += r->dev[i].compute_j;
    r->comm_j += r->dev[i].comm_j;
    r->idle_j += r->dev[i].idle_j;
    r->devices_j += r->dev[i].total_j;
  }
  if (sg_link_energy_is_inited()) { /* a link without a wattage_range integrates to 0 J */
    sg_link_t *links = sg_link_list();
    for (size_t i = 0; i < sg_link_count(); i++)
      r->network_j += sg_link_get_consumed_energy(links[i]);
    xbt_free(links);
    r->has_network = 1;
  }
  r->it_j = r->devices_j + r->network_j;
  r->pue = set->pue;
  r->facility_j = r->it_j * r->pue;
  r->carbon_g_per_kwh = set->carbon_g_per_kwh;
  r->power_cap_w = set->power_cap_w;
  r->gpu_limit_w = n ? state_limit(hosts[0]) : 0;
  r->examples = (double)rep->examples;
  return r;
}

void energy_free(energy_report *r)
{
  if (r == NULL)
    return;
  xbt_free(r->dev);
  xbt_free(r);
}

static json_t *num_or_null(double x, int known)
{
  return known ? report_num(x) : json_null();
}

json_t *energy_json(const energy_report *r)
{
  double t = r->sim_time, n = (double)r->n;
  json_t *o = json_object(), *j = json_object(), *w = json_object();
  json_object_set_new(o, "devices", json_integer((json_int_t)r->n));
  json_object_set_new(o, "sim_time_s", report_num(t));
  json_object_set_new(o, "power_cap_w", num_or_null(r->power_cap_w, r->power_cap_w > 0));
  json_object_set_new(o, "gpu_power_limit_w", num_or_null(r->gpu_limit_w, r->gpu_limit_w > 0));
  const char *names[] = {"compute", "comm", "idle", "devices", "network", "it", "facility"};
  double js[] = {r->compute_j, r->comm_j, r->idle_j, r->devices_j, r->network_j, r->it_j, r->facility_j};
  for (size_t i = 0; i < sizeof js / sizeof *js; i++) {
    json_object_set_new(j, names[i], report_num(js[i]));
    json_object_set_new(w, names[i], report_num(t > 0 ? js[i] / t : NAN));
  }
  json_object_set_new(w, "per_device", report_num(t > 0 && n > 0 ? r->devices_j / t / n : NAN));
  json_object_set_new(o, "joules", j);
  json_object_set_new(o, "avg_power_w", w);
  json_object_set_new(o, "per_device_j", report_num(n > 0 ? r->devices_j / n : NAN));
  json_object_set_new(o, "pue", report_num(r->pue));
  json_object_set_new(o, "facility_kwh", report_num(r->facility_j / J_PER_KWH));
  json_object_set_new(o, "carbon_intensity_g_per_kwh", report_num(r->carbon_g_per_kwh));
  json_object_set_new(o, "co2e_kg", num_or_null(r->facility_j / J_PER_KWH * r->carbon_g_per_kwh / 1e3,
                                                r->carbon_g_per_kwh > 0));
  json_object_set_new(o, "facility_j_per_example", num_or_null(r->facility_j / r->examples, r->examples > 0));
  return o;
}

void energy_csv(const energy_report *r, report_text *t)
{
  t->len = 0;
  report_printf(t, "host,compute_j,comm_j,idle_j,total_j,avg_power_w\n");
  for (size_t i = 0; i < r->n; i++) {
    const energy_device *d = &r->dev[i];
    double v[] = {d->compute_j, d->comm_j, d->idle_j, d->total_j, r->sim_time > 0 ? d->total_j / r->sim_time : NAN};
    report_printf(t, "%s", d->host);
    for (size_t k = 0; k < sizeof v / sizeof *v; k++) {
      report_printf(t, ",");
      report_double(t, v[k]);
    }
    report_printf(t, "\n");
  }
}

/* joules as "12.3 MJ" */
static void joules_text(double j, char *buf, size_t len)
{
  static const char *const units[] = {"J", "kJ", "MJ", "GJ", "TJ"};
  size_t u = 0;
  while (fabs(j) >= 1000 && u + 1 < sizeof units / sizeof *units) {
    j /= 1000;
    u++;
  }
  snprintf(buf, len, "%.3g %s", j, units[u]);
}

void energy_text(const energy_report *r, char *buf, size_t len)
{
  char all[32], net[32];
  if (r == NULL || len == 0) {
    if (len)
      buf[0] = '\0';
    return;
  }
  double d = r->devices_j > 0 ? 100 / r->devices_j : 0, t = r->sim_time > 0 ? r->sim_time : NAN;
  joules_text(r->it_j, all, sizeof all);
  joules_text(r->network_j, net, sizeof net);
  int k = snprintf(buf, len, "; energy %s (devices: compute %.3g%%, comm %.3g%%, idle %.3g%%%s%s), %.4g kW, %.4g W per "
                   "device", all, r->compute_j * d, r->comm_j * d, r->idle_j * d, r->has_network ? "; network " : "",
                   r->has_network ? net : "", r->it_j / t / 1e3, r->devices_j / t / (double)r->n);
  if (k > 0 && (size_t)k < len && r->pue != 1)
    k += snprintf(buf + k, len - (size_t)k, ", %.4g kWh at PUE %g", r->facility_j / J_PER_KWH, r->pue);
  if (k > 0 && (size_t)k < len && r->carbon_g_per_kwh > 0)
    snprintf(buf + k, len - (size_t)k, ", %.4g kg CO2e", r->facility_j / J_PER_KWH * r->carbon_g_per_kwh / 1e3);
}

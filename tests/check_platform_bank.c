/* check_platform_bank.c - the parameter-server bank's platform (platform_write_pooled with a
 * bank): with its control network (spec.control_net) every route between two hosts has, link
 * by link, the latency, bandwidth and sharing it has on the same platform without one; the
 * routes to and from the bank are the same links; and no link of a route between hosts lies
 * on a route to or from the bank, so that the bank's flows and the hosts' messages never
 * share a max-min constraint (algorithms/doc/sandblaster.md, Bank). Fork mode: one SimGrid
 * engine per test process; the platform without the control network is read in a child. */

#include "check_util.h"
#include "platform_util.h"
#include "sim/platform.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/dynar.h>
#include <xbt/sysdep.h>

/* 50 hosts of distbelief-2012 (racks of 20): three racks, one of them partly filled, and a
 * bank of 7 shards, as Fig. 4's Sandblaster at 50 replicas has. */
#define BANK_HOSTS 50
#define BANK_SCALE 7.0
#define SIG_LEN 1024

static char *bank_platform(int control)
{
  platform_spec s;
  ck_assert_int_eq(platform_preset("distbelief-2012", BANK_HOSTS, &s), 0);
  s.pooled = 1;
  s.banks = 1;
  s.bank_scale = BANK_SCALE;
  s.control_net = control;
  return write_spec(&s);
}

static int cmp_name(const void *a, const void *b)
{
  return strcmp(sg_host_get_name(*(const sg_host_t *)a), sg_host_get_name(*(const sg_host_t *)b));
}

/* The loaded platform's hosts, by name. */
static sg_host_t *hosts_by_name(size_t *n)
{
  *n = sg_host_count();
  sg_host_t *h = sg_host_list();
  qsort(h, *n, sizeof *h, cmp_name);
  return h;
}

static int is_bank(sg_host_t h) { return strncmp(sg_host_get_name(h), "bank-", 5) == 0; }

/* The route from a to b, link by link: latency, bandwidth, shared or not (%a: every bit),
 * and the link's name on a route to or from the bank. */
static void route_sig(sg_host_t a, sg_host_t b, xbt_dynar_t route, char *buf, size_t len)
{
  int named = is_bank(a) || is_bank(b);
  size_t used = (size_t)snprintf(buf, len, "%s>%s:", sg_host_get_name(a), sg_host_get_name(b));
  xbt_dynar_reset(route);
  sg_host_get_route(a, b, route);
  unsigned k;
  sg_link_t l;
  xbt_dynar_foreach (route, k, l) {
    ck_assert_uint_lt(used, len);
    used += (size_t)snprintf(buf + used, len - used, " %a/%a/%d/%s", sg_link_get_latency(l), sg_link_get_bandwidth(l),
                             sg_link_is_shared(l), named ? sg_link_get_name(l) : "");
  }
  ck_assert_uint_lt(used, len);
}

/* Child: the platform without the control network, every ordered pair's route into `out`. */
static void write_sigs(const char *platform, const char *out)
{
  start_engine(NULL);
  simgrid_load_platform(platform);
  size_t n;
  sg_host_t *h = hosts_by_name(&n);
  FILE *f = fopen(out, "w");
  xbt_dynar_t route = xbt_dynar_new(sizeof(sg_link_t), NULL);
  char sig[SIG_LEN];
  for (size_t i = 0; f && i < n; i++)
    for (size_t j = 0; j < n; j++) {
      route_sig(h[i], h[j], route, sig, sizeof sig);
      fprintf(f, "%s\n", sig);
    }
  xbt_dynar_free(&route);
  xbt_free(h);
  _exit(f == NULL || fclose(f) != 0);
}

/* Marks (a non-NULL link data) every link on a route to or from a bank. */
static void mark_bank_links(sg_host_t *h, size_t n, xbt_dynar_t route)
{
  static int mark;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) {
      if (i == j || !(is_bank(h[i]) || is_bank(h[j])))
        continue;
      xbt_dynar_reset(route);
      sg_host_get_route(h[i], h[j], route);
      unsigned k;
      sg_link_t l;
      xbt_dynar_foreach (route, k, l)
        sg_link_set_data(l, &mark);
    }
}

START_TEST(test_platform_bank_control_net)
{
  char *plain = bank_platform(0), *control = bank_platform(1), sigs[] = "/tmp/check_platform_bank-XXXXXX";
  int fd = mkstemp(sigs);
  ck_assert_int_ge(fd, 0);
  close(fd);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0)
    write_sigs(plain, sigs);
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child reading %s failed", plain);

  start_engine(NULL);
  simgrid_load_platform(control);
  size_t n;
  sg_host_t *h = hosts_by_name(&n);
  ck_assert_uint_gt(n, BANK_HOSTS); /* the hosts and the bank */
  xbt_dynar_t route = xbt_dynar_new(sizeof(sg_link_t), NULL);
  FILE *f = fopen(sigs, "r");
  ck_assert_ptr_nonnull(f);
  char want[SIG_LEN], got[SIG_LEN];
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) {
      ck_assert_ptr_nonnull(fgets(want, sizeof want, f));
      want[strcspn(want, "\n")] = '\0';
      route_sig(h[i], h[j], route, got, sizeof got);
      ck_assert_str_eq(got, want);
    }
  ck_assert_ptr_null(fgets(want, sizeof want, f)); /* as many hosts */
  fclose(f);
  mark_bank_links(h, n, route);
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) {
      if (is_bank(h[i]) || is_bank(h[j]))
        continue;
      xbt_dynar_reset(route);
      sg_host_get_route(h[i], h[j], route);
      ck_assert_uint_gt(xbt_dynar_length(route), 0);
      unsigned k;
      sg_link_t l;
      xbt_dynar_foreach (route, k, l)
        ck_assert_msg(sg_link_get_data(l) == NULL, "%s, on the route from %s to %s, carries the bank's flows too",
                      sg_link_get_name(l), sg_host_get_name(h[i]), sg_host_get_name(h[j]));
    }
  xbt_dynar_free(&route);
  xbt_free(h);
  unlink(sigs);
  unlink(plain);
  unlink(control);
  xbt_free(plain);
  xbt_free(control);
}
END_TEST

static Suite *platform_bank_suite(void)
{
  Suite *s = suite_create("platform_bank");
  TCase *tc = tcase_create("control_net");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_platform_bank_control_net);
  suite_add_tcase(s, tc);
  return s;
}

CHECK_MAIN(platform_bank_suite)

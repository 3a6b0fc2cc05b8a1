/* platform_where.c - where a link of a platform dtsim's generator wrote sits (platform_where.h).
 *
 * The generator writes each shape as one SimGrid cluster tag (platform_gen.c), or as
 * clusters and links of its own naming (GPU nodes, pooled racks: platform_gen.c,
 * platform_bank.c); SimGrid 3.32 names the links of a cluster tag itself (checked in its
 * sources and against runs): a flat cluster ID's host link ID_link_I and backbone
 * ID_backbone; a TORUS ID_link_from_A_to_B; a DRAGONFLY local_link_from_router_R_to_node_J_U,
 * green_link_in_chassis_C_between_routers_J_and_K_U, black_link_in_group_G_between_chassis_J_
 * and_K_blade_L_U, blue_link_between_group_G_and_H_routers_A_and_B_U; a FAT_TREE
 * link_from_C_P_U, with C and P node ids: a host's is its index, and the switches count down
 * from 2N - 1 (N hosts), the racks' leaf switches first, then the spines (FatTreeZone's
 * generate_switches). Split-duplex links get _UP and _DOWN halves: up leaves a host (a
 * rack's uplink: towards the spine; a torus link A -> B), down comes back. The file is
 * recognised by the generator's opening comment; a file dtsim did not write places no
 * link. */
#include "sim/platform_where.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of attribute `name` in the tag [tag, end) into out (empty when absent). */
static void where_attr(const char *tag, const char *end, const char *name, char *out, size_t len)
{
  char key[40];
  snprintf(key, sizeof key, " %s=\"", name);
  out[0] = '\0';
  const char *p = strstr(tag, key);
  if (p == NULL || p >= end)
    return;
  p += strlen(key);
  size_t n = strcspn(p, "\"");
  snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), p);
}

/* The cluster tag's shape: its topology and parameters. */
static void where_cluster(const char *tag, const char *end, platform_layout *l)
{
  char topo[32], params[128];
  where_attr(tag, end, "topology", topo, sizeof topo);
  where_attr(tag, end, "topo_parameters", params, sizeof params);
  size_t h = 0, r = 0, u = 0, g = 0, c = 0, b = 0, n = 0;
  if (topo[0] == '\0')
    l->kind = PLATFORM_LAYOUT_STAR;
  else if (strcmp(topo, "TORUS") == 0)
    l->kind = strchr(params, ',') ? PLATFORM_LAYOUT_TORUS : PLATFORM_LAYOUT_RING;
  else if (strcmp(topo, "FAT_TREE") == 0 && sscanf(params, "2;%zu,%zu;1,%zu;1,1", &h, &r, &u) == 3 && h && r) {
    l->kind = PLATFORM_LAYOUT_FAT_TREE;
    l->per_rack = h;
    l->racks = r;
    l->hosts = h * r;
  } else if (strcmp(topo, "DRAGONFLY") == 0 && sscanf(params, "%zu,1;%zu,1;%zu,1;%zu", &g, &c, &b, &n) == 4 && n) {
    l->kind = PLATFORM_LAYOUT_DRAGONFLY;
    l->per_rack = n;
    l->groups = g;
    l->chassis = c;
    l->routers = b;
  }
}

void platform_layout_read(const char *path, platform_layout *l)
{
  memset(l, 0, sizeof *l);
  char head[8192];
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(head, 1, sizeof head - 1, f) : 0;
  if (f)
    fclose(f);
  head[n] = '\0';
  const char *tag = strstr(head, "<cluster ");
  if (strstr(head, "<!-- Written by dtsim") == NULL || tag == NULL)
    return;
  const char *end = strchr(tag, '>');
  end = end ? end : head + n;
  char prefix[64];
  where_attr(tag, end, "prefix", prefix, sizeof prefix);
  size_t plen = strlen(prefix);
  if (plen < 2 || prefix[plen - 1] != '-')
    return;
  snprintf(l->name, sizeof l->name, "%.*s", (int)(plen - 1), prefix);
  if (strstr(head, "pooled as one link"))
    l->kind = PLATFORM_LAYOUT_POOLED;
  else if (strstr(head, "GPUs = ") && strstr(head, "-node-0\""))
    l->kind = PLATFORM_LAYOUT_GPU_NODES;
  else
    where_cluster(tag, end, l);
}

/* ID_link_I: the host link of host I of the cluster; 1 when link (without its direction)
 * is one. */
static int where_host_link(const char *link, const char *id, size_t *i)
{
  size_t n = strlen(id);
  int used = 0;
  return strncmp(link, id, n) == 0 && sscanf(link + n, "_link_%zu%n", i, &used) == 1 && link[n + (size_t)used] == '\0';
}

/* Fat tree: link_from_C_P_U, a host's link to its rack or a rack's uplink to a spine. */
static void where_fat_tree(const platform_layout *l, const char *link, const char *dir, char *buf, size_t len)
{
  size_t c, p, u;
  int used = 0;
  size_t top = 2 * l->hosts - 1; /* the first switch's id */
  if (sscanf(link, "link_from_%zu_%zu_%zu%n", &c, &p, &u, &used) != 3 || link[used] != '\0')
    return;
  if (c < l->hosts)
    snprintf(buf, len, "%s-%zu NIC%s", l->name, c, dir);
  else if (c <= top && top - c < l->racks && p <= top - l->racks)
    snprintf(buf, len, "rack %zu uplink %zu%s", top - c, top - l->racks - p, dir);
}

/* Dragonfly: a host's link to its router, or a link between routers (SimGrid numbers them
 * all in one sequence: the hosts' links first, then the green links in each chassis, the
 * black ones in each group, the blue ones between groups). */
static void where_dragonfly(const platform_layout *l, const char *link, const char *dir, char *buf, size_t len)
{
  size_t a, b, c, d, u;
  size_t hosts = l->groups * l->chassis * l->routers * l->per_rack, pairs = l->routers * (l->routers - 1) / 2;
  int used = 0;
  if (sscanf(link, "local_link_from_router_%zu_to_node_%zu_%zu%n", &a, &b, &u, &used) == 3 && link[used] == '\0')
    snprintf(buf, len, "%s-%zu NIC%s", l->name, a * l->per_rack + b, dir);
  else if (sscanf(link, "green_link_in_chassis_%zu_between_routers_%zu_and_%zu_%zu%n", &a, &b, &c, &u, &used) == 4 &&
           link[used] == '\0' && u >= hosts && pairs > 0)
    /* the name has the chassis in its group; the group comes from the link's place among
     * the green links, which follow the hosts' links, a chassis' router pairs together */
    snprintf(buf, len, "group %zu chassis %zu router %zu - router %zu%s", (u - hosts) / pairs / l->chassis, a, b, c,
             dir);
  else if (sscanf(link, "black_link_in_group_%zu_between_chassis_%zu_and_%zu_blade_%zu_%zu%n", &a, &b, &c, &d, &u,
                  &used) == 5 && link[used] == '\0')
    snprintf(buf, len, "group %zu chassis %zu - chassis %zu%s", a, b, c, dir);
  else if (sscanf(link, "blue_link_between_group_%zu_and_%zu_routers_%zu_and_%zu_%zu%n", &a, &b, &c, &d, &u, &used) ==
               5 && link[used] == '\0')
    snprintf(buf, len, "group %zu - group %zu%s", a, b, dir);
}

/* Torus or ring: ID_link_from_A_to_B, up from A to B, down back. */
static void where_torus(const platform_layout *l, const char *link, const char *dir, char *buf, size_t len)
{
  size_t n = strlen(l->name), a, b;
  int used = 0;
  const char *kind = l->kind == PLATFORM_LAYOUT_RING ? "ring" : "torus";
  if (strncmp(link, l->name, n) != 0 || sscanf(link + n, "_link_from_%zu_to_%zu%n", &a, &b, &used) != 2 ||
      link[n + (size_t)used] != '\0')
    return;
  if (strcmp(dir, " down") == 0)
    snprintf(buf, len, "%s %s-%zu -> %s-%zu", kind, l->name, b, l->name, a);
  else
    snprintf(buf, len, "%s %s-%zu %s %s-%zu", kind, l->name, a, dir[0] ? "->" : "-", l->name, b);
}

/* GPU nodes (NAME-node-N clusters, NAME-ib-N links) and pooled racks (NAME-rackA clusters,
 * NAME-upA uplinks, the bank cluster and the core link to it). */
static void where_named(const platform_layout *l, const char *link, const char *dir, char *buf, size_t len)
{
  size_t n = strlen(l->name), a, i;
  int used = 0, pooled = l->kind == PLATFORM_LAYOUT_POOLED;
  const char *rest = link + n;
  if (pooled && strcmp(link, "core") == 0)
    snprintf(buf, len, "core");
  else if (pooled && where_host_link(link, "bank", &i))
    snprintf(buf, len, "bank-%zu NIC%s", i, dir);
  else if (strncmp(link, l->name, n) != 0)
    return;
  else if (!pooled && sscanf(rest, "-ib-%zu%n", &a, &used) == 1 && rest[used] == '\0')
    snprintf(buf, len, "node %zu InfiniBand%s", a, dir);
  else if (pooled && sscanf(rest, "-up%zu%n", &a, &used) == 1 && rest[used] == '\0')
    snprintf(buf, len, "rack %zu uplinks%s", a, dir);
  else if (sscanf(rest, pooled ? "-rack%zu_link_%zu%n" : "-node-%zu_link_%zu%n", &a, &i, &used) == 2 &&
           rest[used] == '\0')
    snprintf(buf, len, pooled ? "%s-%zu NIC%s" : "%s-%zu NVSwitch link%s", l->name, i, dir);
}

void platform_where(const platform_layout *l, const char *link, char *buf, size_t len)
{
  char base[256];
  const char *dir = "";
  size_t n = strlen(link);
  buf[0] = '\0';
  if (l->kind == PLATFORM_LAYOUT_NONE || n >= sizeof base)
    return;
  snprintf(base, sizeof base, "%s", link);
  if (n > 3 && strcmp(link + n - 3, "_UP") == 0) {
    base[n - 3] = '\0';
    dir = " up";
  } else if (n > 5 && strcmp(link + n - 5, "_DOWN") == 0) {
    base[n - 5] = '\0';
    dir = " down";
  }
  size_t i;
  switch (l->kind) {
  case PLATFORM_LAYOUT_STAR:
    if (where_host_link(base, l->name, &i))
      snprintf(buf, len, "%s-%zu NIC%s", l->name, i, dir);
    else if (strncmp(base, l->name, strlen(l->name)) == 0 && strcmp(base + strlen(l->name), "_backbone") == 0)
      snprintf(buf, len, "core");
    return;
  case PLATFORM_LAYOUT_FAT_TREE:
    where_fat_tree(l, base, dir, buf, len);
    return;
  case PLATFORM_LAYOUT_TORUS:
  case PLATFORM_LAYOUT_RING:
    where_torus(l, base, dir, buf, len);
    return;
  case PLATFORM_LAYOUT_DRAGONFLY:
    where_dragonfly(l, base, dir, buf, len);
    return;
  case PLATFORM_LAYOUT_GPU_NODES:
  case PLATFORM_LAYOUT_POOLED:
    where_named(l, base, dir, buf, len);
    return;
  case PLATFORM_LAYOUT_NONE:
    return;
  }
}

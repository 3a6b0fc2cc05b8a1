#ifndef SIM_PLATFORM_WHERE_H
#define SIM_PLATFORM_WHERE_H
/* platform_where.h - where a link of a platform dtsim's generator wrote sits, in words
 * ("rack 3 uplink 2 up", "host-41 NIC down", "core"), read off the names SimGrid gives the
 * links of the clusters the generator writes (platform_gen.c, platform_bank.c). */

#include <stddef.h>

typedef enum platform_layout_kind {
  PLATFORM_LAYOUT_NONE,      /* not a file dtsim wrote: no link is placed */
  PLATFORM_LAYOUT_STAR,      /* one flat cluster: host links and a backbone */
  PLATFORM_LAYOUT_FAT_TREE,  /* SimGrid's FAT_TREE cluster, two levels */
  PLATFORM_LAYOUT_TORUS,     /* SimGrid's TORUS cluster, three dimensions or fewer */
  PLATFORM_LAYOUT_RING,      /* a TORUS of one dimension */
  PLATFORM_LAYOUT_DRAGONFLY, /* SimGrid's DRAGONFLY cluster */
  PLATFORM_LAYOUT_GPU_NODES, /* one cluster per node and a link per node to the fabric */
  PLATFORM_LAYOUT_POOLED     /* racks of hosts with pooled uplinks, maybe a bank at the core */
} platform_layout_kind;

typedef struct platform_layout {
  platform_layout_kind kind;
  char name[64];        /* the cluster's (or zone's) id, the hosts' prefix without its '-' */
  size_t hosts;         /* fat tree: the hosts the cluster declares */
  size_t per_rack;      /* fat tree: hosts per rack; dragonfly: hosts per router */
  size_t racks;         /* fat tree: racks (leaf switches) */
  size_t groups, chassis, routers; /* dragonfly: groups, chassis per group, routers per chassis */
} platform_layout;

/* Reads the layout of the platform file at path from its first lines: kind
 * PLATFORM_LAYOUT_NONE when dtsim's generator did not write it (or it cannot be read). */
void platform_layout_read(const char *path, platform_layout *l);

/* Where link `link` of that platform is into buf: a host's link ("host-41 NIC up"; up
 * leaves the host, down reaches it), a rack's uplink ("rack 3 uplink 2 up", up towards the
 * spine), a node's fabric link ("node 3 InfiniBand up"), a torus or ring link ("torus
 * host-0 -> host-1"), a dragonfly router link, or "core" (a star's backbone, the link to a
 * bank); "" when the layout does not place it. */
void platform_where(const platform_layout *l, const char *link, char *buf, size_t len);

#endif

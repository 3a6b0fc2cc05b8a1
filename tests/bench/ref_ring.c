/* ref_ring.c - the engine floor for a timing-only ring allreduce: a bare SimGrid program
 * in which each of p actors sends 2(p-1) messages of n/p bytes (plus dtsim's 64-byte
 * header) to its right neighbour and receives as many from its left one, step by step,
 * through one mailbox per ordered pair, as algorithms/collectives.c does, but without
 * dtsim's machinery (message objects, traffic accounting, communicators).
 * dtsim's wall time divided by this program's is the overhead dtsim adds.
 *
 * usage: ref_ring PLATFORM RANKS BYTES [SimGrid options] */
#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <stdio.h>
#include <stdlib.h>

#define HEADER 64 /* MSG_HEADER_BYTES in algorithms/msg.h */

static int p;
static double bytes;
static sg_host_t *hosts;

static void member(int argc, char **argv)
{
  int me = atoi(argv[argc - 1]), right = (me + 1) % p, left = (me + p - 1) % p;
  char name[64];
  snprintf(name, sizeof(name), "ring:%d>%d", me, right);
  sg_mailbox_t out = sg_mailbox_by_name(name);
  snprintf(name, sizeof(name), "ring:%d>%d", left, me);
  sg_mailbox_t in = sg_mailbox_by_name(name);
  long size = (long)(bytes / p) + HEADER;
  for (int s = 0; s < 2 * (p - 1); s++) {
    void *got = NULL;
    sg_comm_t c[2];
    c[0] = sg_mailbox_put_async(out, (void *)1, size);
    c[1] = sg_mailbox_get_async(in, &got);
    sg_comm_wait_all(c, 2);
  }
}

int main(int argc, char **argv)
{
  simgrid_init(&argc, argv);
  if (argc < 4) {
    fprintf(stderr, "usage: %s PLATFORM RANKS BYTES [SimGrid options]\n", argv[0]);
    return 2;
  }
  simgrid_load_platform(argv[1]);
  p = atoi(argv[2]);
  bytes = atof(argv[3]);
  hosts = sg_host_list(); /* by name: on a star, which member sits where does not matter */
  if ((int)sg_host_count() < p) {
    fprintf(stderr, "the platform has %zu hosts, %d needed\n", sg_host_count(), p);
    return 2;
  }
  for (int i = 0; i < p; i++) {
    char name[32], rank[16];
    snprintf(name, sizeof(name), "member-%d", i);
    snprintf(rank, sizeof(rank), "%d", i);
    char *av[] = {name, rank};
    sg_actor_create(name, hosts[i], member, 2, av);
  }
  simgrid_run();
  printf("simulated %.9g s\n", simgrid_get_clock());
  free(hosts);
  return 0;
}

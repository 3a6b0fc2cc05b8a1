/* ref_downpour.c - the engine floor for a timing-only Downpour run: a bare SimGrid
 * program that sends exactly the messages dtsim's Downpour sends (fetch request,
 * parameter reply, gradient push, done), with the same sizes, placement, mailbox
 * semantics (permanent receivers) and computations, but none of dtsim's machinery.
 * dtsim's wall time divided by this program's is the overhead dtsim adds.
 *
 * usage: ref_downpour PLATFORM REPLICAS SHARDS STEPS PARAMS FLOPS_PER_EXAMPLE BATCH
 *                     ELEM_BYTES UPDATE_FLOPS_PER_PARAM */
#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <stdio.h>
#include <stdlib.h>

#define HEADER 64 /* MSG_HEADER_BYTES in algorithms/msg.h */

enum { FETCH, PARAMS, PUSH, DONE };
static int R, S, steps, batch, elem;
static double params, flops_per_example, update_flops;
static sg_host_t *hosts;

static long slice(int k) /* elements of shard k, as data_shard_bounds splits them */
{
  long n = (long)params, base = n / S, extra = n % S;
  return base + (k < extra ? 1 : 0);
}

/* payloads are tags, never NULL: kind * 100000 + src + 1 */
static void *tag(int kind, int src) { return (void *)(long)(kind * 100000 + src + 1); }
static int kind_of(void *m) { return (int)(((long)m - 1) / 100000); }
static int src_of(void *m) { return (int)(((long)m - 1) % 100000); }

static void send_detached(sg_mailbox_t to, void *m, double bytes)
{
  sg_comm_detach(sg_mailbox_put_init(to, m, (long)bytes), NULL);
}

static void compute(double flops) /* spread over the host's cores, as compute_execute does */
{
  sg_actor_execute(flops / sg_host_core_count(sg_host_self()));
}

static void shard(int argc, char **argv)
{
  int k = atoi(argv[argc - 1]), done = 0;
  char name[32];
  snprintf(name, sizeof(name), "ps-%d", k);
  sg_mailbox_t in = sg_mailbox_by_name(name);
  sg_mailbox_set_receiver(name);
  while (done < R) {
    void *m = sg_mailbox_get(in);
    if (kind_of(m) == FETCH) {
      char to[32];
      snprintf(to, sizeof(to), "replica-%d", src_of(m));
      send_detached(sg_mailbox_by_name(to), tag(PARAMS, k), (double)slice(k) * elem + HEADER);
    } else if (kind_of(m) == PUSH) {
      compute(update_flops * (double)slice(k));
    } else {
      done++;
    }
  }
}

static void replica(int argc, char **argv)
{
  int r = atoi(argv[argc - 1]);
  char name[32];
  snprintf(name, sizeof(name), "replica-%d", r);
  sg_mailbox_t in = sg_mailbox_by_name(name);
  sg_mailbox_set_receiver(name);
  sg_mailbox_t *ps = malloc(S * sizeof(*ps));
  sg_comm_t *c = malloc(S * sizeof(*c));
  void **got = malloc(S * sizeof(*got));
  for (int s = 0; s < S; s++) {
    snprintf(name, sizeof(name), "ps-%d", s);
    ps[s] = sg_mailbox_by_name(name);
  }
  for (int step = 0; step < steps; step++) {
    for (int s = 0; s < S; s++)
      send_detached(ps[s], tag(FETCH, r), HEADER);
    for (int s = 0; s < S; s++)
      c[s] = sg_mailbox_get_async(in, &got[s]);
    sg_comm_wait_all(c, S);
    compute(flops_per_example * batch);
    for (int s = 0; s < S; s++)
      c[s] = sg_mailbox_put_async(ps[s], tag(PUSH, r), (long)((double)slice(s) * elem + HEADER));
    sg_comm_wait_all(c, S);
  }
  for (int s = 0; s < S; s++)
    send_detached(ps[s], tag(DONE, r), HEADER);
  free(ps);
  free(c);
  free(got);
}

int main(int argc, char **argv)
{
  simgrid_init(&argc, argv);
  if (argc != 10) {
    fprintf(stderr, "usage: %s PLATFORM REPLICAS SHARDS STEPS PARAMS FLOPS_PER_EXAMPLE BATCH ELEM_BYTES "
                    "UPDATE_FLOPS_PER_PARAM\n", argv[0]);
    return 2;
  }
  R = atoi(argv[2]);
  S = atoi(argv[3]);
  steps = atoi(argv[4]);
  params = atof(argv[5]);
  flops_per_example = atof(argv[6]);
  batch = atoi(argv[7]);
  elem = atoi(argv[8]);
  update_flops = atof(argv[9]);
  simgrid_load_platform(argv[1]);
  hosts = malloc((R + S) * sizeof(*hosts));
  for (int i = 0; i < R + S; i++) {
    char name[32];
    snprintf(name, sizeof(name), "host-%d", i); /* dtsim's generator names, file order */
    hosts[i] = sg_host_by_name(name);
  }
  char *arg[2] = {NULL, NULL};
  char buf[16];
  for (int s = 0; s < S; s++) {
    snprintf(buf, sizeof(buf), "%d", s);
    arg[0] = buf;
    sg_actor_create("ps", hosts[R + s], shard, 1, arg);
  }
  for (int r = 0; r < R; r++) {
    snprintf(buf, sizeof(buf), "%d", r);
    arg[0] = buf;
    sg_actor_create("replica", hosts[r], replica, 1, arg);
  }
  simgrid_run();
  printf("simulated %.17g s, %ld messages\n", simgrid_get_clock(), (long)R * steps * S * 3 + (long)R * S);
  free(hosts);
  return 0;
}

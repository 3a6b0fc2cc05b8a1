/* ref_downpour_split.c - the engine floor for a timing-only Downpour run on split
 * replicas (downpour.partitions = K): a bare SimGrid program that sends exactly the
 * messages dtsim sends (each machine's activations and gradients to its partners, its
 * fetch requests, the shards' parameter replies, its pushes, its done messages), with
 * the same sizes, placement, mailbox semantics (permanent receivers) and computations,
 * but none of dtsim's machinery. Sizes come from the same partition plan (models/arch.c,
 * a library without SimGrid), so dtsim's wall time divided by this program's is the
 * overhead dtsim adds.
 *
 * SENDS chooses how fire-and-forget messages are sent, as downpour.sends does in dtsim:
 * `detached` (sg_comm_detach: SimGrid 3.32 keeps every detached send in one global list
 * that each completion scans), `waited` (an asynchronous put that the sender reaps with
 * sg_comm_wait_any at its next blocking point, and waits for before it exits).
 *
 * usage: ref_downpour_split PLATFORM REPLICAS PARTITIONS SHARDS STEPS VIRTUAL BATCH
 *                           ELEM_BYTES SENDS [--cfg=...] */
#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/arch.h"
#include "models/cost.h"
#include "models/data.h"

#define HEADER 64 /* MSG_HEADER_BYTES in algorithms/msg.h */

static int R, K, S, steps, batch, elem, waited;
static const arch *net;
static arch_plan *plan;
static sg_host_t *hosts;
static size_t L;                 /* layers, input included */
static double **halo;            /* [l][p * K + q]: arch_plan_halo(plan, l, p, q) */
static double **part_elems;      /* [p][s]: simulated parameters of partition p in shard s */
static long n_messages;          /* counted by the senders (one thread: no lock needed) */
static double n_bytes;

/* payloads are tags, never NULL: kind * 1000000 + src + 1 */
enum { FETCH, PARAMS, PUSH, DONE, VALUES };
static void *tag(int kind, int src) { return (void *)(long)(kind * 1000000 + src + 1); }
static int kind_of(void *m) { return (int)(((long)m - 1) / 1000000); }
static int src_of(void *m) { return (int)(((long)m - 1) % 1000000); }

/* The actor's sends not yet reaped (SENDS = waited). */
typedef struct outbox {
  sg_comm_t *c;
  size_t n, cap;
} outbox;

static void send_msg(outbox *o, sg_mailbox_t to, void *m, double bytes)
{
  n_messages++;
  n_bytes += (double)(long)bytes;
  if (!waited) {
    sg_comm_detach(sg_mailbox_put_init(to, m, (long)bytes), NULL);
    return;
  }
  if (o->n == o->cap) {
    o->cap = o->cap ? 2 * o->cap : 16;
    o->c = realloc(o->c, o->cap * sizeof(*o->c));
  }
  o->c[o->n++] = sg_mailbox_put_async(to, m, (long)bytes);
}

/* Waits for the n comms of `want`, reaping the outbox's sends that finish meanwhile. */
static void wait_all(outbox *o, sg_comm_t *want, size_t n)
{
  if (!waited || o->n == 0) {
    sg_comm_wait_all(want, n);
    return;
  }
  /* a[0, left): wanted, not yet done; a[left, len): sends not yet reaped */
  size_t left = n, len = n + o->n;
  sg_comm_t *a = malloc(len * sizeof(*a));
  memcpy(a, want, n * sizeof(*a));
  memcpy(a + n, o->c, o->n * sizeof(*a));
  while (left > 0) {
    size_t i = (size_t)sg_comm_wait_any(a, len);
    if (i < left) {
      a[i] = a[left - 1];
      a[left - 1] = a[len - 1];
      left--;
    } else {
      a[i] = a[len - 1];
    }
    len--;
  }
  o->n = len;
  memcpy(o->c, a, len * sizeof(*a));
  free(a);
}

static void *recv_msg(outbox *o, sg_mailbox_t from)
{
  void *m = NULL;
  sg_comm_t c = sg_mailbox_get_async(from, &m);
  wait_all(o, &c, 1);
  return m;
}

static void flush(outbox *o)
{
  sg_comm_wait_all(o->c, o->n);
  free(o->c);
}

static void compute(double flops) /* spread over the host's cores, as compute_execute does */
{
  sg_actor_execute(flops / sg_host_core_count(sg_host_self()));
}

static sg_mailbox_t box(const char *role, int rank)
{
  char name[48];
  snprintf(name, sizeof(name), "%s-%d", role, rank);
  return sg_mailbox_by_name(name);
}

static sg_mailbox_t part_box(int r, char dir, size_t l, int p) /* modelpar.c's mbox_at */
{
  char role[32];
  snprintf(role, sizeof(role), "mp%d%c%zu", r, dir, l);
  return box(role, p);
}

static void shard(int argc, char **argv)
{
  int s = atoi(argv[argc - 1]), done = 0, clients = 0;
  outbox o = {0};
  sg_mailbox_t in = box("ps", s);
  sg_mailbox_set_receiver(sg_mailbox_get_name(in));
  for (int p = 0; p < K; p++)
    clients += R * (part_elems[p][s] > 0);
  while (done < clients) {
    void *m = recv_msg(&o, in);
    int c = src_of(m);
    if (kind_of(m) == FETCH)
      send_msg(&o, box("dpart", c), tag(PARAMS, s), part_elems[c % K][s] * elem + HEADER);
    else if (kind_of(m) == PUSH)
      compute(cost_update_flops((size_t)part_elems[c % K][s], 1));
    else
      done++;
  }
  flush(&o);
}

static double fwd_flops(size_t l, int p) /* modelpar.c's forward_flops */
{
  double per_unit = arch_layer_train_flops(net, l) / 3.0 / (double)arch_units(net, l);
  return per_unit * (double)arch_plan_units(plan, l, (size_t)p);
}

static void receive_n(outbox *o, sg_mailbox_t from, int n)
{
  for (int i = 0; i < n; i++)
    recv_msg(o, from);
}

static void partition(int argc, char **argv)
{
  int client = atoi(argv[argc - 1]), r = client / K, p = client % K, n = 0;
  outbox o = {0};
  sg_mailbox_t in = box("dpart", client);
  sg_mailbox_set_receiver(sg_mailbox_get_name(in));
  for (size_t l = 1; l < L; l++) {
    sg_mailbox_set_receiver(sg_mailbox_get_name(part_box(r, 'f', l, p)));
    sg_mailbox_set_receiver(sg_mailbox_get_name(part_box(r, 'b', l, p)));
  }
  sg_mailbox_set_receiver(sg_mailbox_get_name(part_box(r, 'o', 0, p)));
  sg_comm_t *c = malloc((size_t)S * sizeof(*c));
  void **got = malloc((size_t)S * sizeof(*got));
  for (int s = 0; s < S; s++)
    n += part_elems[p][s] > 0;
  for (int step = 0; step < steps; step++) {
    for (int s = 0; s < S; s++) /* fetch_parameters */
      if (part_elems[p][s] > 0)
        send_msg(&o, box("ps", s), tag(FETCH, client), HEADER);
    for (int i = 0; i < n; i++)
      c[i] = sg_mailbox_get_async(in, &got[i]);
    wait_all(&o, c, (size_t)n);
    for (size_t l = 1; l < L; l++) { /* forward pass */
      int from = 0;
      for (int q = 0; q < K; q++)
        from += l > 1 && q != p && halo[l][p * K + q] > 0;
      receive_n(&o, part_box(r, 'f', l, p), from);
      compute(fwd_flops(l, p) * batch);
      for (int q = 0; l + 1 < L && q < K; q++)
        if (q != p && halo[l + 1][q * K + p] > 0)
          send_msg(&o, part_box(r, 'f', l + 1, q), tag(VALUES, p), halo[l + 1][q * K + p] * batch * elem + HEADER);
    }
    for (size_t l = L - 1; l >= 1; l--) { /* backward pass */
      int from = 0;
      for (int q = 0; q < K; q++)
        from += l + 1 < L && q != p && halo[l + 1][q * K + p] > 0;
      receive_n(&o, part_box(r, 'b', l, p), from);
      compute(2.0 * fwd_flops(l, p) * batch);
      for (int q = 0; l > 1 && q < K; q++)
        if (q != p && halo[l][p * K + q] > 0)
          send_msg(&o, part_box(r, 'b', l - 1, q), tag(VALUES, p), halo[l][p * K + q] * batch * elem + HEADER);
    }
    for (int s = 0, i = 0; s < S; s++) /* push_gradient, waited for as dtsim's is */
      if (part_elems[p][s] > 0) {
        n_messages++;
        n_bytes += (double)(long)(part_elems[p][s] * elem + HEADER);
        c[i++] = sg_mailbox_put_async(box("ps", s), tag(PUSH, client), (long)(part_elems[p][s] * elem + HEADER));
      }
    wait_all(&o, c, (size_t)n);
  }
  for (int r2 = 1; r == 0 && r2 < R; r2++) /* dtsim's part_say_done releases the warmstart even without one */
    send_msg(&o, box("dpart", r2 * K + p), tag(DONE, client), HEADER);
  for (int s = 0; s < S; s++)
    if (part_elems[p][s] > 0)
      send_msg(&o, box("ps", s), tag(DONE, client), HEADER);
  flush(&o);
  free(c);
  free(got);
}

static void plan_sizes(void)
{
  L = arch_n_layers(net);
  halo = malloc(L * sizeof(*halo));
  for (size_t l = 0; l < L; l++) {
    halo[l] = calloc((size_t)K * K, sizeof(double));
    for (int p = 0; l > 0 && p < K; p++)
      for (int q = 0; q < K; q++)
        halo[l][p * K + q] = (double)arch_plan_halo(plan, l, (size_t)p, (size_t)q);
  }
  part_elems = malloc((size_t)K * sizeof(*part_elems));
  for (int p = 0; p < K; p++) {
    part_elems[p] = calloc((size_t)S, sizeof(double));
    for (int s = 0; s < S; s++) {
      size_t b, e, n;
      data_shard_bounds((size_t)arch_params(net), (size_t)S, (size_t)s, &b, &e);
      n = arch_plan_param_ranges(plan, (size_t)p, b, e, NULL, NULL, 0);
      size_t *rb = malloc((n + 1) * sizeof(size_t)), *re = malloc((n + 1) * sizeof(size_t));
      arch_plan_param_ranges(plan, (size_t)p, b, e, rb, re, n);
      for (size_t j = 0; j < n; j++)
        part_elems[p][s] += (double)(re[j] - rb[j]);
      free(rb);
      free(re);
    }
  }
}

int main(int argc, char **argv)
{
  simgrid_init(&argc, argv);
  if (argc != 10 || (strcmp(argv[9], "detached") != 0 && strcmp(argv[9], "waited") != 0)) {
    fprintf(stderr, "usage: %s PLATFORM REPLICAS PARTITIONS SHARDS STEPS VIRTUAL BATCH ELEM_BYTES detached|waited\n",
            argv[0]);
    return 2;
  }
  R = atoi(argv[2]);
  K = atoi(argv[3]);
  S = atoi(argv[4]);
  steps = atoi(argv[5]);
  net = arch_virtual_find(argv[6]);
  batch = atoi(argv[7]);
  elem = atoi(argv[8]);
  waited = strcmp(argv[9], "waited") == 0;
  plan = net ? arch_plan_square(net, (size_t)K) : NULL;
  if (plan == NULL || R < 1 || S < 1 || steps < 1 || (long)R * K >= 1000000) {
    fprintf(stderr, "%s: no virtual network %s split over %d machines, or bad counts\n", argv[0], argv[6], K);
    return 2;
  }
  plan_sizes();
  simgrid_load_platform(argv[1]);
  int n = R * K + S;
  hosts = malloc((size_t)n * sizeof(*hosts));
  for (int i = 0; i < n; i++) {
    char name[32];
    snprintf(name, sizeof(name), "host-%d", i); /* dtsim's generator names, file order */
    hosts[i] = sg_host_by_name(name);
    if (hosts[i] == NULL) {
      fprintf(stderr, "%s: %s has no host %s\n", argv[0], argv[1], name);
      return 2;
    }
  }
  char *arg[2] = {NULL, NULL};
  char buf[16];
  for (int s = 0; s < S; s++) { /* dtsim starts the shards first, then the machines */
    snprintf(buf, sizeof(buf), "%d", s);
    arg[0] = buf;
    sg_actor_create("ps", hosts[R * K + s], shard, 1, arg);
  }
  for (int c = 0; c < R * K; c++) {
    snprintf(buf, sizeof(buf), "%d", c);
    arg[0] = buf;
    sg_actor_create("dpart", hosts[c], partition, 1, arg);
  }
  simgrid_run();
  printf("simulated %.17g s, %ld messages, %.17g bytes\n", simgrid_get_clock(), n_messages, n_bytes);
  arch_plan_free(plan);
  return 0;
}

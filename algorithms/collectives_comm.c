/* collectives_comm.c - a communicator: its members' hosts, options and mailboxes, and the
 * transfers every collective of collectives.c and collectives_rounds.c posts through them. */
#include "algorithms/collectives_comm.h"
#include "algorithms/collectives_comm_impl.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

#include "algorithms/coll_msg.h"
#include "algorithms/compute.h"
#include "algorithms/settings.h"

/* Creation counter for unique namespaces; communicators are made at deployment, in
 * a fixed order, so the ids are deterministic. */
static unsigned long comm_ids;

coll_comm *coll_comm_create(const char *name, const sg_host_t *hosts, size_t size, const coll_opts *o)
{
  if (size == 0 || o == NULL || o->elem_bytes == 0 || !(o->chunk_bytes >= 0))
    return NULL;
  coll_comm *c = xbt_malloc0(sizeof(*c));
  snprintf(c->ns, sizeof(c->ns), "%.64s#%lu", name, comm_ids++);
  c->hosts = xbt_malloc(size * sizeof(sg_host_t));
  memcpy(c->hosts, hosts, size * sizeof(sg_host_t));
  c->p = size;
  c->o = *o;
  double ce = o->chunk_bytes / (double)o->elem_bytes;
  c->chunk_elems = o->chunk_bytes == 0 ? SIZE_MAX : ce < 1 ? 1 : (size_t)ce;
  c->ranks = xbt_malloc0(size * sizeof(coll_rank));
  c->held = xbt_malloc0(size * sizeof(double));
  c->rate = xbt_malloc0(size * sizeof(double));
  for (size_t r = 0; o->hold_sms && r < size; r++)
    c->held[r] = compute_comm_share(hosts[r]);
  if (o->mode == COLL_ROUNDS && size > 1) {
    c->bar = sg_barrier_init((unsigned)size);
    /* the steps' latency chain runs over the ring's slowest route (see rounds below);
     * ties go to the lowest rank, so the choice does not depend on anything but the hosts */
    double worst = -1;
    for (size_t r = 0; r < size; r++) {
      double l = sg_host_get_route_latency(hosts[r], hosts[(r + 1) % size]);
      if (l > worst) {
        worst = l;
        c->slow_src = hosts[r];
        c->slow_dst = hosts[(r + 1) % size];
      }
    }
  }
  return c;
}

void coll_comm_free(coll_comm *c)
{
  if (c == NULL)
    return;
  for (size_t r = 0; r < c->p; r++) {
    xbt_free(c->ranks[r].boxes);
    xbt_free(c->ranks[r].part);
  }
  if (c->bar)
    sg_barrier_destroy(c->bar);
  xbt_free(c->ranks);
  xbt_free(c->held);
  xbt_free(c->rate);
  xbt_free(c->hosts);
  xbt_free(c);
}

size_t coll_comm_size(const coll_comm *c) { return c->p; }

void coll_comm_set_no_chain(coll_comm *c, int on) { c->no_chain = on; }
void coll_comm_set_hbm(coll_comm *c, double hbm_per_Bps) { c->hbm_per_Bps = hbm_per_Bps; }

sg_host_t coll_comm_host(const coll_comm *c, size_t rank)
{
  xbt_assert(rank < c->p, "rank %zu of a communicator of %zu", rank, c->p);
  return c->hosts[rank];
}

coll_mode coll_mode_of(const run_config *cfg)
{
  return cfg != NULL && cfg->sc != NULL && cfg->sc->run.collectives == COLL_ROUNDS ? COLL_ROUNDS : COLL_MESSAGES;
}

/* ---- transfers ------------------------------------------------------------------ *
 * Every transfer goes from member `me` to a peer through the mailbox of that ordered
 * pair, "NAME#ID:SRC>DST". SimGrid matches a mailbox's puts and gets first in, first
 * out, and both ends of a pair post in program order, so chunk k of a transfer always
 * meets receive k, whatever the timing; a per-receiver mailbox would not do, because a
 * partner already in the next step could overtake the one awaited (recursive halving).
 *
 * A transfer of more than opts.chunk_bytes is cut into chunks. The sender posts every
 * chunk at once; the receiver keeps two receives posted (a put only moves once its get
 * is posted: SimGrid's rendezvous), combines chunk k while chunk k+1 travels, then posts
 * the receive of chunk k+2. Trees forward chunk k to their children while chunk k+1
 * arrives. Unchunked, each transfer is one message of alpha + bytes x beta, which is what
 * the formulas of coll_formula assume. */

peer_box *coll_box_of(coll_comm *c, size_t me, size_t peer)
{
  xbt_assert(me < c->p && peer < c->p && peer != me, "%s: member %zu talking to %zu", c->ns, me, peer);
  coll_rank *r = &c->ranks[me];
  for (size_t i = 0; i < r->n_boxes; i++)
    if (r->boxes[i].peer == peer)
      return &r->boxes[i];
  if (r->n_boxes == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 4;
    r->boxes = xbt_realloc(r->boxes, r->cap * sizeof(peer_box));
  }
  char name[160];
  peer_box *b = &r->boxes[r->n_boxes++];
  b->peer = peer;
  b->sent = b->got = 0;
  snprintf(name, sizeof(name), "%s:%zu>%zu", c->ns, me, peer);
  b->out = sg_mailbox_by_name(name);
  snprintf(name, sizeof(name), "%s:%zu>%zu", c->ns, peer, me);
  b->in = sg_mailbox_by_name(name);
  return b;
}

void coll_post_recv(coll_comm *c, size_t me, size_t from, pending *pd)
{
  pd->m = NULL;
  pd->from = coll_box_of(c, me, from);
  pd->comm = sg_mailbox_get_async(pd->from->in, (void **)&pd->m);
}

/* Reduction cost: reduce_flops per element through compute_execute (the gamma term). */
void coll_reduce_cost(const coll_comm *c, size_t len)
{
  if (c->o.cfg != NULL && c->o.reduce_flops > 0 && len > 0)
    compute_execute(c->o.cfg, c->o.reduce_flops * (double)len);
}

/* Adds (reduce) or copies the payload of pd, whose receive is complete, into
 * buf[off, off + len). */
void coll_take_recv(coll_comm *c, size_t me, pending *pd, double *buf, size_t off, size_t len, int reduce)
{
  xbt_assert(pd->m != NULL, "%s: member %zu received no message", c->ns, me);
  msg_received(pd->m);
  coll_msg *m = coll_msg_of(pd->m);
  xbt_assert(m->index == pd->from->got++ && m->elems == len && m->n == (buf ? len : 0),
             "%s: member %zu expected %zu elements%s from %d and got %zu%s: members called different collectives",
             c->ns, me, len, buf ? "" : " (timing only)", m->src, m->elems, m->n ? " with data" : "");
  if (buf && reduce)
    for (size_t i = 0; i < len; i++)
      buf[off + i] += m->data[i];
  else if (buf && len)
    memcpy(buf + off, m->data, len * sizeof(double));
  msg_free(m);
  if (reduce)
    coll_reduce_cost(c, len);
}

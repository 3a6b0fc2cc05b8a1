/* courier.c - transfers started on multiples of a time quantum (courier.h). */
#include "algorithms/courier.h"

#include <math.h>
#include <simgrid/actor.h>
#include <simgrid/cond.h>
#include <simgrid/engine.h>
#include <simgrid/mutex.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

void quantum_align(double q)
{
  double now = simgrid_get_clock();
  if (q <= 0)
    return;
  double k = ceil(now / q);
  if ((k - 1) * q >= now) /* now / q rounded up past a multiple that now already is */
    k -= 1;
  if (k * q > now)
    sg_actor_sleep_until(k * q);
}

typedef struct parcel {
  sg_mailbox_t to;
  sg_host_t dst;
  msg *m;
  double bytes;
} parcel;

struct courier {
  double q;
  sg_mutex_t mu;  /* guards what follows */
  sg_cond_t cv;   /* a parcel came, or the courier was closed */
  parcel *held;   /* handed over, not yet sent, in the order they came */
  size_t n, cap;
  int closed;
};

/* Waits for parcels; at the next multiple of the quantum sends every parcel it then holds,
 * in the order they came; ends once closed and empty. */
static void courier_actor(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  courier *c = sg_actor_self_get_data();
  parcel *out = NULL;
  size_t cap = 0;
  sg_mutex_lock(c->mu);
  for (;;) {
    while (c->n == 0 && !c->closed)
      sg_cond_wait(c->cv, c->mu);
    if (c->n == 0)
      break;
    sg_mutex_unlock(c->mu);
    quantum_align(c->q);
    sg_mutex_lock(c->mu);
    size_t n = c->n;
    if (n > cap) {
      cap = c->cap;
      out = xbt_realloc(out, cap * sizeof(parcel));
    }
    for (size_t i = 0; i < n; i++)
      out[i] = c->held[i];
    c->n = 0;
    sg_mutex_unlock(c->mu);
    for (size_t i = 0; i < n; i++)
      msg_send_detached(out[i].to, out[i].dst, out[i].m, out[i].bytes);
    sg_mutex_lock(c->mu);
  }
  sg_mutex_unlock(c->mu);
  xbt_free(out);
}

courier *courier_start(double q, const char *name, sg_host_t host)
{
  xbt_assert(q > 0, "courier_start: a quantum of %g s", q);
  courier *c = xbt_malloc0(sizeof(*c));
  c->q = q;
  c->mu = sg_mutex_init();
  c->cv = sg_cond_init();
  sg_actor_t a = sg_actor_init(name, host);
  sg_actor_set_data(a, c);
  sg_actor_start(a, courier_actor, 0, NULL);
  return c;
}

void courier_send(courier *c, sg_mailbox_t to, sg_host_t dst, msg *m, double bytes)
{
  sg_mutex_lock(c->mu);
  xbt_assert(!c->closed, "courier_send after courier_close");
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 16;
    c->held = xbt_realloc(c->held, c->cap * sizeof(parcel));
  }
  c->held[c->n++] = (parcel){to, dst, m, bytes};
  if (c->n == 1)
    sg_cond_notify_one(c->cv);
  sg_mutex_unlock(c->mu);
}

void courier_close(courier *c)
{
  sg_mutex_lock(c->mu);
  c->closed = 1;
  sg_cond_notify_one(c->cv);
  sg_mutex_unlock(c->mu);
}

void courier_free(courier *c)
{
  if (c == NULL)
    return;
  sg_cond_destroy(c->cv);
  sg_mutex_destroy(c->mu);
  for (size_t i = 0; i < c->n; i++)
    msg_free(c->held[i].m);
  xbt_free(c->held);
  xbt_free(c);
}

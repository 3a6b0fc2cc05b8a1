#ifndef ALGORITHMS_LINKLOAD_H
#define ALGORITHMS_LINKLOAD_H
/* linkload.h - what crossed each link when: every message's bytes, spread evenly over its
 * time in flight (from its send to the moment its receiver took it), added to each link of
 * its route in windows of simulated time. The windows are of equal width, a power of two
 * of seconds, the narrowest that holds the run so far in linkload_start's count: as the
 * run grows, neighbouring windows merge two by two. Bytes are whole numbers and each
 * window's share of a message comes from where the window's edges cut the message's
 * cumulative bytes, so the sums do not depend on the order actors add them in (threads)
 * nor on when windows merge: the same seed gives the same windows. */

#include <stddef.h>
#include <simgrid/forward.h>

typedef struct linkload_route linkload_route;

/* Turns the windows on for a run, at most max_windows of them (>= 2); before any message
 * is sent. */
void linkload_start(size_t max_windows);
/* Whether linkload_start was called (and linkload_stop not yet). */
int linkload_on(void);

/* The route from src to dst, its links registered; the same pointer for every call on
 * one pair is not promised, so callers keep the one they got. Owned by the module
 * (linkload_stop frees it). Thread-safe. */
linkload_route *linkload_route_of(sg_host_t src, sg_host_t dst);
/* A message of `bytes` (rounded to a whole number) on route r, in flight from t0 to t1
 * (simulated s, t1 >= t0, t1 the current time): each window gets the bytes the message
 * moved while the window was open, at an even rate (all of them in t0's window when t1 ==
 * t0). Thread-safe. */
void linkload_add(const linkload_route *r, double bytes, double t0, double t1);

/* After the run, which ended at `end`: widens the windows until the run fits (the last
 * messages may be taken before it ends) and returns how many cover [0, end): at least 1,
 * at most linkload_start's count. */
size_t linkload_close(double end);
/* The windows' width in simulated s. */
double linkload_width(void);
/* Link l's bytes in each window (linkload_close's many are meaningful), or NULL when no
 * message that was taken crossed it. Valid until linkload_stop. */
const long long *linkload_bytes(sg_link_t l);

/* Frees everything and turns the windows off; a no-op when they are off. */
void linkload_stop(void);

#endif

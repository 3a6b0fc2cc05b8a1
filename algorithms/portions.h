#ifndef ALGORITHMS_PORTIONS_H
#define ALGORITHMS_PORTIONS_H
/* portions.h - Sandblaster's portion scheduler (Dean'12 sec. 4.2, load balancing and
 * backup tasks): how a batch is cut into portions, which portion an idle replica gets
 * next, which finished copy of a portion counts, and what a dead replica's portions
 * become. Bookkeeping only, no simulation: sandblaster.c's coordinator asks and sends. */

#include <stddef.h>

/* No portion for now: the replica waits. */
#define PORTIONS_NONE (-1L)

typedef struct portions_params {
  size_t examples;  /* N: rows of a batch (the training set), > 0 */
  size_t rows;      /* rows per portion, 1..N (portions_size); the last portion may be shorter */
  int replicas;     /* R > 0, ranks 0..R-1 */
  int backups;      /* hand out one backup copy of outstanding portions near the end of a batch */
  double backup_at; /* ... once this fraction of the batch's portions counts */
  long push_every;  /* a report of this many held portions is judged */
} portions_params;

/* What happened to the current batch so far (sandblaster_batch's counters). */
typedef struct portions_tally {
  long copies;      /* copies handed out: first copies, reissues and backups */
  long backups;     /* backup copies handed out */
  long backup_wins; /* portions whose counted copy was not the first holder's */
  long discarded;   /* judged copies that did not count (another copy counted first) */
  long examples;    /* rows of the portions that count now */
  long reissued;    /* [faults] copies handed out again after their replica died */
} portions_tally;

typedef struct portions portions;

/* Rows per portion: key if > 0, else about ten portions per replica (Dean'12 4.2:
 * portions much smaller than 1/R of a batch); clamped to 1..examples. */
size_t portions_size(long key, int replicas, size_t examples);
/* Portions of a batch of `examples` rows cut into portions of `rows`. */
long portions_number(size_t examples, size_t rows);
/* Rows of portion p: [*begin, *begin + return value). */
size_t portions_rows(size_t examples, size_t rows, long p, size_t *begin);
/* lbfgs_net_fdf's weight of portion p: its rows over the batch's. */
double portions_weight(size_t examples, size_t rows, long p);

/* A scheduler for pp (copied); every replica waits for work, no batch has begun.
 * Never NULL; free with portions_free. */
portions *portions_create(const portions_params *pp);
void portions_free(portions *s);
/* Portions per batch. */
long portions_count(const portions *s);

/* A new batch: no portion handed out, the tally zero. Replicas keep their states. */
void portions_begin(portions *s);
/* Whether the batch is complete: every portion counts. */
int portions_complete(const portions *s);
const portions_tally *portions_tally_of(const portions *s);

/* The next portion for replica r, which has just reported or waits (it computes
 * nothing now): a dead replica's portion to hand out again ([faults]) first; else a
 * fresh one, in order; else, with backups, once backup_at of the portions count and
 * every one is handed out, a backup copy of the oldest portion outstanding with a
 * single copy; else PORTIONS_NONE. r is busy after it, or waits when NONE. */
long portions_next(portions *s, int r);
/* The lowest-ranked waiting replica and, in *p, its next portion (portions_next), if a
 * replica waits and there is a portion for it; else -1 (nothing changes). */
int portions_dispatch(portions *s, long *p);
/* Whether a report of `held` uncounted portions is judged now: it holds push_every, or
 * no fresh portion is left (so that a slow replica never holds counted work back). */
int portions_judge_now(const portions *s, long held);
/* Replica r's finished copy of portion p (handed out this batch), judged: returns 1 if
 * it counts (the first copy judged; r's from now), 0 if discarded. */
int portions_done(portions *s, int r, long p);
/* [faults] Replica r died: it computes nothing more. While a batch is under way (begun,
 * not complete), every portion that counted for r, or whose first copy r holds
 * uncounted, is handed out again first; returns 1 then (the shards must forget what r
 * pushed for the batch), else 0. A replica lost twice is harmless. */
int portions_replica_lost(portions *s, int r);
/* Replica r reported after the run's last batch and is told to stop: it computes
 * nothing more. */
void portions_replica_stopped(portions *s, int r);
/* Whether replica r computes a copy (it has not reported it yet). */
int portions_busy(const portions *s, int r);
/* Replicas that compute a copy. */
int portions_n_busy(const portions *s);

#endif

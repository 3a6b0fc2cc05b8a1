/* check_portions.c - algorithms/portions, Sandblaster's portion scheduler, in process (no
 * simulation): the cut of a batch into portions; hand-worked schedules of fresh
 * portions, backups, verdicts and reissues; every example counted exactly once per
 * batch whatever order the copies finish in, with and without dead replicas, over a grid
 * of replicas, batch sizes, portion sizes, backup settings and push_every; backups only
 * once backup_at of the portions count, one at most per portion; edge cases (one
 * replica, one portion, more replicas than portions, a replica lost outside a batch).
 *
 * The hand-worked schedules follow portions.h's rules step by step: fresh portions in
 * order to the replica that asks, a dead replica's portions first, then, with backups
 * and once every portion is out and backup_at of them count, one backup copy of the
 * oldest portion outstanding with a single copy; a report is judged when it holds
 * push_every portions or no fresh one is left; the first judged copy counts. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "algorithms/portions.h"
#include "check_util.h"

/* The weights of a batch's portions are rows_p / N, each correctly rounded (relative
 * error 2^-53), added in portion order: at most P roundings of a sum <= 1 more, so the
 * sum is 1 within 2 P 2^-53; P <= 1000 here, 2 * 1000 * 1.1e-16 = 2.2e-13. */
#define WEIGHT_SUM_TOL 2.2e-13

/* ---- the cut of a batch ------------------------------------------------------------ */

START_TEST(test_portions_size)
{
  ck_assert_uint_eq(portions_size(32, 4, 512), 32);    /* the key */
  ck_assert_uint_eq(portions_size(1000, 4, 512), 512); /* at most the batch */
  ck_assert_uint_eq(portions_size(0, 4, 512), 13);     /* ceil(512 / 40): about ten per replica */
  ck_assert_uint_eq(portions_size(0, 4, 400), 10);     /* exactly ten per replica */
  ck_assert_uint_eq(portions_size(0, 100, 50), 1);     /* fewer rows than 10 R: at least one */
  ck_assert_uint_eq(portions_size(0, 1, 1), 1);
}
END_TEST

START_TEST(test_portions_rows)
{
  /* 10 rows in portions of 3: [0,3) [3,6) [6,9) [9,10) */
  const size_t want_begin[] = {0, 3, 6, 9}, want_rows[] = {3, 3, 3, 1};
  ck_assert_int_eq(portions_number(10, 3), 4);
  for (long p = 0; p < 4; p++) {
    size_t begin = 99;
    ck_assert_uint_eq(portions_rows(10, 3, p, &begin), want_rows[p]);
    ck_assert_uint_eq(begin, want_begin[p]);
    ck_assert(portions_weight(10, 3, p) == (double)want_rows[p] / 10.0);
  }
  ck_assert_int_eq(portions_number(12, 3), 4); /* an exact cut: no short portion */
  ck_assert_int_eq(portions_number(1, 1), 1);
  ck_assert_int_eq(portions_number(5, 5), 1);
}
END_TEST

START_TEST(test_portions_rows_cover_the_batch)
{
  const size_t sizes[] = {1, 2, 7, 64, 100, 999, 1000};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
    for (size_t rows = 1; rows <= sizes[i]; rows += rows < 8 ? 1 : 37) {
      size_t N = sizes[i], next = 0, total = 0;
      long P = portions_number(N, rows);
      double sum = 0;
      for (long p = 0; p < P; p++) {
        size_t begin, n = portions_rows(N, rows, p, &begin);
        ck_assert_uint_eq(begin, next); /* contiguous, in order */
        ck_assert(n >= 1 && n <= rows);
        next = begin + n;
        total += n;
        sum += portions_weight(N, rows, p);
      }
      ck_assert_uint_eq(total, N);
      ck_assert_msg(sum >= 1 - WEIGHT_SUM_TOL && sum <= 1 + WEIGHT_SUM_TOL, "N %zu rows %zu: weights add to %.17g", N,
                    rows, sum);
    }
}
END_TEST

/* ---- hand-worked schedules ----------------------------------------------------------- */

static portions *make(size_t N, size_t rows, int R, int backups, double backup_at, long push_every)
{
  portions_params pp = {.examples = N, .rows = rows, .replicas = R, .backups = backups, .backup_at = backup_at,
                        .push_every = push_every};
  return portions_create(&pp);
}

/* portions_dispatch's replica, its portion in *p. */
static int dispatch(portions *s, long *p)
{
  *p = -99;
  return portions_dispatch(s, p);
}

START_TEST(test_portions_schedule_backups)
{
  /* R = 2, N = 10 rows in P = 4 portions (3, 3, 3, 1), backups at 0.5, push_every 2. */
  portions *s = make(10, 3, 2, 1, 0.5, 2);
  long p;
  ck_assert_int_eq(portions_count(s), 4);
  portions_begin(s);
  ck_assert_int_eq(dispatch(s, &p), 0); /* fresh portions in order, to the lowest rank first */
  ck_assert_int_eq(p, 0);
  ck_assert_int_eq(dispatch(s, &p), 1);
  ck_assert_int_eq(p, 1);
  ck_assert_int_eq(dispatch(s, &p), -1); /* nobody waits */
  ck_assert(portions_busy(s, 0) && portions_busy(s, 1));
  /* r0 reports {0}: 1 held < push_every and fresh portions left: not judged */
  ck_assert(!portions_judge_now(s, 1));
  ck_assert_int_eq(portions_next(s, 0), 2);
  /* r1 reports {1}: not judged either (portion 3 is still fresh) */
  ck_assert(!portions_judge_now(s, 1));
  ck_assert_int_eq(portions_next(s, 1), 3);
  /* r0 reports {0, 2}: judged, both count */
  ck_assert(portions_judge_now(s, 2));
  ck_assert_int_eq(portions_done(s, 0, 0), 1);
  ck_assert_int_eq(portions_done(s, 0, 2), 1);
  /* 2 of 4 count = backup_at: r0 gets a backup of the oldest outstanding, 1 (r1 has it) */
  ck_assert_int_eq(portions_next(s, 0), 1);
  ck_assert_int_eq(portions_tally_of(s)->backups, 1);
  /* r0 reports {1}: judged (no fresh portion left); its backup counts first */
  ck_assert(portions_judge_now(s, 1));
  ck_assert_int_eq(portions_done(s, 0, 1), 1);
  ck_assert_int_eq(portions_tally_of(s)->backup_wins, 1);
  ck_assert_int_eq(portions_next(s, 0), 3); /* 1 and 2 count, 3 has one copy: its backup */
  /* r1 reports {1, 3}: 1 counted already (discarded), 3 counts for r1, its first holder */
  ck_assert_int_eq(portions_done(s, 1, 1), 0);
  ck_assert_int_eq(portions_done(s, 1, 3), 1);
  ck_assert(portions_complete(s));
  ck_assert_int_eq(portions_next(s, 1), PORTIONS_NONE);
  const portions_tally *t = portions_tally_of(s);
  ck_assert_int_eq(t->copies, 6);
  ck_assert_int_eq(t->backups, 2);
  ck_assert_int_eq(t->backup_wins, 1);
  ck_assert_int_eq(t->discarded, 1);
  ck_assert_int_eq(t->examples, 10);
  ck_assert_int_eq(t->reissued, 0);
  /* r0 still computes its copy of 3 (it will not count); the next batch goes to r1 */
  ck_assert(portions_busy(s, 0) && !portions_busy(s, 1));
  ck_assert_int_eq(portions_n_busy(s), 1);
  portions_begin(s);
  ck_assert(!portions_complete(s));
  ck_assert_int_eq(portions_tally_of(s)->copies, 0);
  ck_assert_int_eq(dispatch(s, &p), 1);
  ck_assert_int_eq(p, 0);
  ck_assert_int_eq(portions_next(s, 0), 1); /* r0's stale report: it gets the next fresh one */
  portions_free(s);
}
END_TEST

START_TEST(test_portions_schedule_backup_at)
{
  /* R = 3, P = 4 portions of 1 row, push_every 1 (every report judged). backup_at 0.75:
   * backups once 3 of 4 count. */
  portions *s = make(4, 1, 3, 1, 0.75, 1);
  long p;
  portions_begin(s);
  for (int r = 0; r < 3; r++) {
    ck_assert_int_eq(dispatch(s, &p), r);
    ck_assert_int_eq(p, r);
  }
  ck_assert_int_eq(portions_done(s, 0, 0), 1);
  ck_assert_int_eq(portions_next(s, 0), 3);             /* the last fresh one */
  ck_assert_int_eq(portions_done(s, 1, 1), 1);          /* 2 of 4 count: */
  ck_assert_int_eq(portions_next(s, 1), PORTIONS_NONE); /* no backup yet; r1 waits */
  ck_assert(!portions_busy(s, 1));
  ck_assert_int_eq(dispatch(s, &p), -1);
  ck_assert_int_eq(portions_done(s, 0, 3), 1);      /* 3 of 4 count: */
  ck_assert_int_eq(portions_next(s, 0), 2);         /* r0 backs up 2 (r2 has it) */
  ck_assert_int_eq(dispatch(s, &p), -1);            /* one backup at most: none for r1 */
  ck_assert_int_eq(portions_done(s, 2, 2), 1);      /* the first copy wins */
  ck_assert(portions_complete(s));
  ck_assert_int_eq(portions_tally_of(s)->backups, 1);
  ck_assert_int_eq(portions_tally_of(s)->backup_wins, 0);
  portions_free(s);

  /* backup_at 1: a backup would need every portion counted, when none is outstanding */
  s = make(4, 1, 3, 1, 1.0, 1);
  portions_begin(s);
  for (int r = 0; r < 3; r++)
    ck_assert_int_eq(dispatch(s, &p), r);
  ck_assert_int_eq(portions_done(s, 0, 0), 1);
  ck_assert_int_eq(portions_next(s, 0), 3);
  for (int r = 1; r < 3; r++) {
    ck_assert_int_eq(portions_done(s, r, r), 1);
    ck_assert_int_eq(portions_next(s, r), PORTIONS_NONE);
  }
  ck_assert_int_eq(portions_done(s, 0, 3), 1);
  ck_assert(portions_complete(s));
  ck_assert_int_eq(portions_tally_of(s)->backups, 0);
  portions_free(s);

  /* backup_at 0: backups as soon as every portion is out; one per portion, oldest first */
  s = make(2, 1, 6, 1, 0.0, 1);
  portions_begin(s);
  const long want[] = {0, 1, 0, 1};
  for (int r = 0; r < 4; r++) {
    ck_assert_int_eq(dispatch(s, &p), r);
    ck_assert_int_eq(p, want[r]);
  }
  ck_assert_int_eq(dispatch(s, &p), -1); /* r4 and r5 wait: every portion has two copies */
  ck_assert_int_eq(portions_n_busy(s), 4);
  ck_assert_int_eq(portions_tally_of(s)->backups, 2);
  portions_free(s);

  /* backups off: never a second copy */
  s = make(2, 1, 6, 0, 0.0, 1);
  portions_begin(s);
  ck_assert_int_eq(dispatch(s, &p), 0);
  ck_assert_int_eq(dispatch(s, &p), 1);
  ck_assert_int_eq(dispatch(s, &p), -1);
  portions_free(s);
}
END_TEST

START_TEST(test_portions_judge_now)
{
  portions *s = make(8, 1, 2, 0, 0.5, 3);
  long p;
  portions_begin(s);
  ck_assert_int_eq(dispatch(s, &p), 0);
  ck_assert_int_eq(dispatch(s, &p), 1);
  ck_assert(!portions_judge_now(s, 1));
  ck_assert(!portions_judge_now(s, 2));
  ck_assert(portions_judge_now(s, 3)); /* push_every */
  ck_assert(portions_judge_now(s, 4));
  for (long q = 2; q < 8; q++)
    ck_assert_int_eq(portions_next(s, (int)(q % 2)), q);
  ck_assert(portions_judge_now(s, 1)); /* no fresh portion left: every report is judged */
  portions_free(s);
}
END_TEST

/* ---- reissue --------------------------------------------------------------------- */

START_TEST(test_portions_reissue)
{
  /* R = 2, P = 3 portions of 3 rows (N = 9), push_every 1, no backups. */
  portions *s = make(9, 3, 2, 0, 0.5, 1);
  long p;
  portions_begin(s);
  ck_assert_int_eq(dispatch(s, &p), 0);
  ck_assert_int_eq(dispatch(s, &p), 1);
  ck_assert_int_eq(portions_done(s, 0, 0), 1); /* 0 counts for r0 */
  ck_assert_int_eq(portions_next(s, 0), 2);
  ck_assert_int_eq(portions_tally_of(s)->examples, 3);
  /* r0 dies: 0 (counted for it) and 2 (its first copy) are handed out again, in order */
  ck_assert_int_eq(portions_replica_lost(s, 0), 1);
  ck_assert(!portions_busy(s, 0));
  ck_assert_int_eq(portions_tally_of(s)->examples, 0);
  ck_assert_int_eq(dispatch(s, &p), -1); /* r1 is busy, r0 gets nothing */
  ck_assert_int_eq(portions_done(s, 1, 1), 1);
  ck_assert_int_eq(portions_next(s, 1), 0);
  ck_assert_int_eq(portions_tally_of(s)->reissued, 1);
  ck_assert_int_eq(portions_done(s, 1, 0), 1);
  ck_assert_int_eq(portions_next(s, 1), 2);
  ck_assert_int_eq(portions_done(s, 1, 2), 1);
  ck_assert(portions_complete(s));
  ck_assert_int_eq(portions_next(s, 1), PORTIONS_NONE);
  const portions_tally *t = portions_tally_of(s);
  ck_assert_int_eq(t->copies, 5); /* 3 first copies and 2 reissues */
  ck_assert_int_eq(t->reissued, 2);
  ck_assert_int_eq(t->examples, 9);
  /* a batch complete, or none under way: a loss changes nothing */
  ck_assert_int_eq(portions_replica_lost(s, 0), 0); /* twice: harmless */
  ck_assert_int_eq(portions_replica_lost(s, 1), 0);
  ck_assert_int_eq(portions_tally_of(s)->examples, 9);
  portions_free(s);

  s = make(9, 3, 2, 0, 0.5, 1);
  ck_assert_int_eq(portions_replica_lost(s, 1), 0); /* before the first batch */
  portions_begin(s);
  ck_assert_int_eq(dispatch(s, &p), 0);
  ck_assert_int_eq(dispatch(s, &p), -1); /* never to the lost replica */
  portions_free(s);
}
END_TEST

START_TEST(test_portions_reissue_after_backup)
{
  /* R = 3, P = 2 of 1 row, backups from the start (backup_at 0), push_every 1. r2 backs
   * up 0; r0, its first holder, dies; r2's backup counts before the reissue is handed
   * out, so the reissue is dropped and r2 backs up 1 instead. */
  portions *s = make(2, 1, 3, 1, 0.0, 1);
  long p;
  portions_begin(s);
  ck_assert_int_eq(dispatch(s, &p), 0);
  ck_assert_int_eq(p, 0);
  ck_assert_int_eq(dispatch(s, &p), 1);
  ck_assert_int_eq(p, 1);
  ck_assert_int_eq(dispatch(s, &p), 2);
  ck_assert_int_eq(p, 0); /* a backup of 0 */
  ck_assert_int_eq(portions_replica_lost(s, 0), 1);
  ck_assert_int_eq(portions_done(s, 2, 0), 1);
  ck_assert_int_eq(portions_tally_of(s)->backup_wins, 1);
  ck_assert_int_eq(portions_next(s, 2), 1); /* the reissue of 0 is skipped: a backup of 1 */
  ck_assert_int_eq(portions_tally_of(s)->reissued, 0);
  ck_assert_int_eq(portions_done(s, 1, 1), 1);
  ck_assert_int_eq(portions_done(s, 2, 1), 0);
  ck_assert(portions_complete(s));
  portions_free(s);
}
END_TEST

/* ---- edge cases --------------------------------------------------------------------- */

START_TEST(test_portions_one_replica)
{
  /* one replica: every portion in order, no backup, each judged when push_every are held
   * or the last fresh one is out (push_every 3, P = 7) */
  portions *s = make(7, 1, 1, 1, 0.0, 3);
  long p, held = 0;
  portions_begin(s);
  ck_assert_int_eq(dispatch(s, &p), 0);
  for (long q = 0; q < 7; q++) {
    held++;
    if (portions_judge_now(s, held)) {
      for (long k = q - held + 1; k <= q; k++)
        ck_assert_int_eq(portions_done(s, 0, k), 1);
      held = 0;
    }
    long next = portions_next(s, 0);
    ck_assert_int_eq(next, q + 1 < 7 ? q + 1 : PORTIONS_NONE);
  }
  ck_assert(portions_complete(s));
  ck_assert_int_eq(portions_tally_of(s)->copies, 7);
  ck_assert_int_eq(portions_tally_of(s)->backups, 0);
  ck_assert_int_eq(portions_tally_of(s)->examples, 7);
  portions_free(s);
}
END_TEST

START_TEST(test_portions_one_portion)
{
  /* one portion, three replicas: r0 has it; with backup_at 0.5, no backup while it does
   * not count, and once it counts nothing is outstanding */
  portions *s = make(5, 5, 3, 1, 0.5, 4);
  long p;
  ck_assert_int_eq(portions_count(s), 1);
  portions_begin(s);
  ck_assert_int_eq(dispatch(s, &p), 0);
  ck_assert_int_eq(p, 0);
  ck_assert_int_eq(dispatch(s, &p), -1);
  ck_assert(portions_judge_now(s, 1));
  ck_assert_int_eq(portions_done(s, 0, 0), 1);
  ck_assert(portions_complete(s));
  ck_assert_int_eq(portions_next(s, 0), PORTIONS_NONE);
  ck_assert_int_eq(portions_tally_of(s)->examples, 5);
  portions_free(s);
}
END_TEST

START_TEST(test_portions_more_replicas_than_portions)
{
  portions *s = make(3, 1, 5, 0, 0.5, 1);
  long p;
  portions_begin(s);
  for (int r = 0; r < 3; r++) {
    ck_assert_int_eq(dispatch(s, &p), r);
    ck_assert_int_eq(p, r);
  }
  ck_assert_int_eq(dispatch(s, &p), -1);
  ck_assert_int_eq(portions_n_busy(s), 3);
  ck_assert(!portions_busy(s, 3) && !portions_busy(s, 4));
  for (int r = 0; r < 3; r++) {
    ck_assert_int_eq(portions_done(s, r, r), 1);
    ck_assert_int_eq(portions_next(s, r), PORTIONS_NONE);
  }
  ck_assert(portions_complete(s));
  ck_assert_int_eq(portions_n_busy(s), 0);
  portions_free(s);
}
END_TEST

/* ---- every example once, whatever the order ---------------------------------------- */

/* Checks for the driver's hot loops: Check's own assertions log every pass to the
 * parent process in fork mode (a write each), millions of them here. */
#define REQUIRE(c)                                                     \
  do {                                                                 \
    if (!(c))                                                          \
      ck_abort_msg("%s:%d: failed: %s", __FILE__, __LINE__, #c);       \
  } while (0)
#define REQUIRE_MSG(c, ...)                                            \
  do {                                                                 \
    if (!(c))                                                          \
      ck_abort_msg(__VA_ARGS__);                                       \
  } while (0)

#define MAX_R 8
#define MAX_P 100

/* Sandblaster's coordinator and replicas without simulation, driven by a random order
 * of events: replica r computes one copy at a time (cur[r]) and holds its finished,
 * uncounted ones for the batch its parameters are from, as sandblaster.c's replica
 * does; finish() is its report and the coordinator's answer (on_report),
 * dispatch_all() the coordinator's dispatch_waiting, kill_replica() a death notice
 * (on_death). */
typedef struct driver {
  portions *s;
  portions_params pp;
  long P, batch;
  long cur[MAX_R];       /* the copy r computes, PORTIONS_NONE: none */
  long par_batch[MAX_R]; /* the batch of r's parameters */
  long held[MAX_R][MAX_P], n_held[MAX_R];
  int alive[MAX_R], n_alive;
  int count[MAX_P];      /* this batch: times it counts now */
  int owner[MAX_P];      /* the replica it counts for */
  int copies[MAX_P];     /* this batch: copies handed out since its last (re)issue */
  long fresh;            /* portions handed out as fresh, in order */
  long counted, judged;  /* portions counted now; judged copies */
  long stale;            /* reports of an earlier batch, all told */
  portions_tally sum;    /* every batch's tally added */
  uint64_t rng;
} driver;

/* Knuth's MMIX linear congruential generator: a fixed, reproducible order. */
static unsigned next_rand(driver *d, unsigned n)
{
  d->rng = d->rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (unsigned)((d->rng >> 33) % n);
}

/* Replica r gets portion p (or none); checks that p is what portions.h promises. */
static void give(driver *d, int r, long p, long backups_before, long reissued_before)
{
  const portions_tally *t = portions_tally_of(d->s);
  d->cur[r] = p;
  if (p == PORTIONS_NONE)
    return;
  REQUIRE(p >= 0 && p < d->P && d->alive[r]);
  REQUIRE(d->count[p] == 0); /* never a portion that counts */
  if (d->par_batch[r] != d->batch) { /* it fetches the batch's parameters */
    d->par_batch[r] = d->batch;
    d->n_held[r] = 0;
  }
  if (t->reissued > reissued_before) { /* a dead replica's portion: its first copy again */
    REQUIRE(t->reissued == reissued_before + 1);
    d->copies[p] = 1;
    return;
  }
  if (t->backups > backups_before) { /* a backup: only near the end of the batch, one per portion */
    REQUIRE(d->pp.backups);
    REQUIRE(d->fresh == d->P);
    REQUIRE((double)d->counted >= d->pp.backup_at * (double)d->P);
    REQUIRE(d->copies[p] == 1);
  } else { /* a fresh one, in order */
    REQUIRE(p == d->fresh);
    REQUIRE(d->copies[p] == 0);
    d->fresh++;
  }
  d->copies[p]++;
}

static void check_states(const driver *d)
{
  int busy = 0;
  for (int r = 0; r < d->pp.replicas; r++) {
    REQUIRE(portions_busy(d->s, r) == (d->cur[r] != PORTIONS_NONE));
    busy += d->cur[r] != PORTIONS_NONE;
  }
  REQUIRE(portions_n_busy(d->s) == busy);
}

static void dispatch_all(driver *d)
{
  for (;;) {
    long p, b = portions_tally_of(d->s)->backups, q = portions_tally_of(d->s)->reissued;
    int r = portions_dispatch(d->s, &p);
    if (r < 0)
      break;
    REQUIRE(d->cur[r] == PORTIONS_NONE); /* only a replica that waits */
    give(d, r, p, b, q);
  }
  check_states(d);
}

static void finish(driver *d, int r)
{
  d->held[r][d->n_held[r]++] = d->cur[r];
  d->cur[r] = PORTIONS_NONE;
  if (d->par_batch[r] == d->batch && portions_judge_now(d->s, d->n_held[r])) {
    for (long i = 0; i < d->n_held[r]; i++) {
      long p = d->held[r][i];
      d->judged++;
      if (portions_done(d->s, r, p)) {
        REQUIRE(d->count[p] == 0);
        d->count[p]++;
        d->owner[p] = r;
        d->counted++;
      }
    }
    d->n_held[r] = 0;
  } else { /* not judged yet, or a report of an earlier batch: nothing counts */
    d->stale += d->par_batch[r] != d->batch;
  }
  long b = portions_tally_of(d->s)->backups, q = portions_tally_of(d->s)->reissued;
  give(d, r, portions_next(d->s, r), b, q);
  dispatch_all(d);
}

static void kill_replica(driver *d, int r)
{
  d->alive[r] = 0;
  d->n_alive--;
  d->cur[r] = PORTIONS_NONE;
  d->n_held[r] = 0;
  REQUIRE(portions_replica_lost(d->s, r) == 1);
  for (long p = 0; p < d->P; p++)
    if (d->count[p] && d->owner[p] == r) { /* the shards forget its pushes */
      d->count[p] = 0;
      d->counted--;
    }
  dispatch_all(d);
}

/* One batch in a random order of reports (and, with `deaths`, of deaths, one alive
 * replica at least); then every portion counts exactly once. */
static void run_batch(driver *d, int deaths)
{
  d->batch++;
  portions_begin(d->s);
  memset(d->count, 0, sizeof d->count);
  memset(d->copies, 0, sizeof d->copies);
  d->fresh = d->counted = d->judged = 0;
  dispatch_all(d);
  long steps = 0;
  while (!portions_complete(d->s)) {
    int busy[MAX_R], n = 0;
    for (int r = 0; r < d->pp.replicas; r++)
      if (d->cur[r] != PORTIONS_NONE)
        busy[n++] = r;
    REQUIRE_MSG(n > 0, "stalled: %ld of %ld portions count and no replica computes", d->counted, d->P);
    if (deaths && d->n_alive > 1 && next_rand(d, 16) == 0) {
      int k = (int)next_rand(d, (unsigned)d->n_alive), r = 0;
      while (!d->alive[r] || k-- > 0)
        r++;
      kill_replica(d, r);
    } else {
      finish(d, busy[next_rand(d, (unsigned)n)]);
    }
    REQUIRE(++steps < 100000);
  }
  const portions_tally *t = portions_tally_of(d->s);
  long examples = 0;
  for (long p = 0; p < d->P; p++) {
    size_t begin;
    REQUIRE_MSG(d->count[p] == 1, "portion %ld counts %d times", p, d->count[p]);
    REQUIRE(d->alive[d->owner[p]]);
    REQUIRE(d->copies[p] >= 1 && d->copies[p] <= 1 + d->pp.backups);
    examples += (long)portions_rows(d->pp.examples, d->pp.rows, p, &begin);
  }
  REQUIRE(examples == (long)d->pp.examples);
  REQUIRE(t->examples == (long)d->pp.examples);
  REQUIRE(t->copies == d->P + t->backups + t->reissued);
  REQUIRE(t->backups <= (d->pp.backups ? d->P : 0));
  if (!deaths) {
    REQUIRE(d->judged == d->P + t->discarded); /* each judged copy counts or is discarded */
    REQUIRE(t->reissued == 0);
  }
  d->sum.copies += t->copies;
  d->sum.backups += t->backups;
  d->sum.backup_wins += t->backup_wins;
  d->sum.discarded += t->discarded;
  d->sum.reissued += t->reissued;
}

/* Every configuration of the grid, a few orders each, three batches in a row (replicas
 * still computing at a batch's end report into the next one). */
static void exactly_once(int deaths)
{
  const int reps[] = {1, 2, 3, 5, 8};
  const size_t sizes[] = {1, 7, 64, 100}, rows[] = {1, 3, 16, 100};
  const double at[] = {0.0, 0.5, 1.0};
  const long every[] = {1, 2, 5};
  long runs = 0, stale = 0;
  portions_tally sum = {0};
  for (size_t a = 0; a < 5; a++)
    for (size_t b = 0; b < 4; b++)
      for (size_t c = 0; c < 4; c++)
        for (int bk = 0; bk < 2; bk++)
          for (size_t e = 0; e < 3; e++)
            for (size_t f = 0; f < 3; f++)
              for (uint64_t seed = 1; seed <= 3; seed++) {
                driver d = {.rng = seed};
                d.pp = (portions_params){.examples = sizes[b], .rows = rows[c] < sizes[b] ? rows[c] : sizes[b],
                                         .replicas = reps[a], .backups = bk, .backup_at = at[e],
                                         .push_every = every[f]};
                d.s = portions_create(&d.pp);
                d.P = portions_count(d.s);
                d.n_alive = reps[a];
                for (int r = 0; r < reps[a]; r++) {
                  d.alive[r] = 1;
                  d.cur[r] = PORTIONS_NONE;
                }
                for (int k = 0; k < 3; k++)
                  run_batch(&d, deaths);
                for (int r = 0; r < reps[a]; r++) /* the stop phase: the busy report and stop */
                  if (portions_busy(d.s, r))
                    portions_replica_stopped(d.s, r);
                REQUIRE(portions_n_busy(d.s) == 0);
                portions_free(d.s);
                runs++;
                stale += d.stale;
                sum.backups += d.sum.backups;
                sum.backup_wins += d.sum.backup_wins;
                sum.discarded += d.sum.discarded;
                sum.reissued += d.sum.reissued;
              }
  ck_assert_int_eq(runs, 5 * 4 * 4 * 2 * 3 * 3 * 3);
  /* the grid goes through every rule: backups that win, discarded copies, stale reports
   * and, with deaths, reissues */
  ck_assert_msg(sum.backups > 0 && sum.backup_wins > 0 && sum.discarded > 0 && stale > 0,
                "backups %ld wins %ld discarded %ld stale %ld", sum.backups, sum.backup_wins, sum.discarded, stale);
  ck_assert(deaths ? sum.reissued > 0 : sum.reissued == 0);
}

START_TEST(test_portions_exactly_once) { exactly_once(0); }
END_TEST

START_TEST(test_portions_exactly_once_with_deaths) { exactly_once(1); }
END_TEST

static Suite *portions_suite(void)
{
  Suite *s = suite_create("portions");
  ADD_TCASE(s, "cut", test_portions_size, test_portions_rows, test_portions_rows_cover_the_batch);
  ADD_TCASE(s, "schedule", test_portions_schedule_backups, test_portions_judge_now);
  ADD_TCASE(s, "backups", test_portions_schedule_backup_at);
  ADD_TCASE(s, "reissue", test_portions_reissue, test_portions_reissue_after_backup);
  ADD_TCASE(s, "edges", test_portions_one_replica, test_portions_one_portion,
            test_portions_more_replicas_than_portions);
  ADD_TCASE(s, "exactly_once", test_portions_exactly_once, test_portions_exactly_once_with_deaths);
  return s;
}

CHECK_MAIN(portions_suite)

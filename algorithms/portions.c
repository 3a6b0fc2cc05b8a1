/* portions.c - Sandblaster's portion scheduler: portion and replica states of the
 * current batch (Dean'12 4.2). */
#include "algorithms/portions.h"

#include <string.h>
#include <xbt/asserts.h>
#include <xbt/sysdep.h>

/* A portion's state within the current batch. */
enum { PORTION_PENDING, PORTION_OUT, PORTION_COUNTED };

/* A replica's state. */
enum { REPLICA_WAITING, REPLICA_BUSY, REPLICA_GONE };

struct portions {
  portions_params p;
  long P;
  int begun;          /* a batch has begun */
  /* [p], the current batch */
  char *state;        /* PORTION_* */
  char *copies;       /* copies handed out since its last (re)issue: 1, or 2 with its backup */
  int *first_holder;  /* the replica given its first copy */
  int *counted_by;    /* the replica it counted for */
  long next_fresh;    /* portions handed out at least once */
  long backup_from;   /* portions before it are counted or have their backup */
  long counted;
  long *reissue;      /* [faults] portions to hand out again, FIFO */
  long n_reissue, reissue_head, cap_reissue;
  /* [r] */
  char *replica;      /* REPLICA_* */
  int n_waiting, n_busy;
  portions_tally tally;
};

size_t portions_size(long key, int replicas, size_t examples)
{
  size_t want = key > 0 ? (size_t)key : (examples + 10 * (size_t)replicas - 1) / (10 * (size_t)replicas);
  return want < 1 ? 1 : want > examples ? examples : want;
}

long portions_number(size_t examples, size_t rows) { return (long)((examples + rows - 1) / rows); }

size_t portions_rows(size_t examples, size_t rows, long p, size_t *begin)
{
  *begin = (size_t)p * rows;
  return examples - *begin < rows ? examples - *begin : rows;
}

double portions_weight(size_t examples, size_t rows, long p)
{
  size_t b;
  return (double)portions_rows(examples, rows, p, &b) / (double)examples;
}

portions *portions_create(const portions_params *pp)
{
  xbt_assert(pp->examples > 0 && pp->rows >= 1 && pp->rows <= pp->examples && pp->replicas > 0,
             "portions: %zu examples in portions of %zu for %d replicas", pp->examples, pp->rows, pp->replicas);
  portions *s = xbt_malloc0(sizeof(*s));
  s->p = *pp;
  s->P = portions_number(pp->examples, pp->rows);
  s->state = xbt_malloc0((size_t)s->P);
  s->copies = xbt_malloc0((size_t)s->P);
  s->first_holder = xbt_malloc0((size_t)s->P * sizeof(int));
  s->counted_by = xbt_malloc0((size_t)s->P * sizeof(int));
  s->replica = xbt_malloc0((size_t)pp->replicas); /* REPLICA_WAITING */
  s->n_waiting = pp->replicas;
  return s;
}

void portions_free(portions *s)
{
  if (s == NULL)
    return;
  xbt_free(s->state);
  xbt_free(s->copies);
  xbt_free(s->first_holder);
  xbt_free(s->counted_by);
  xbt_free(s->reissue);
  xbt_free(s->replica);
  xbt_free(s);
}

long portions_count(const portions *s) { return s->P; }

void portions_begin(portions *s)
{
  s->begun = 1;
  s->next_fresh = 0;
  s->backup_from = 0;
  s->counted = 0;
  s->n_reissue = s->reissue_head = 0;
  memset(s->state, PORTION_PENDING, (size_t)s->P);
  memset(s->copies, 0, (size_t)s->P);
  s->tally = (portions_tally){0};
}

int portions_complete(const portions *s) { return s->begun && s->counted == s->P; }

const portions_tally *portions_tally_of(const portions *s) { return &s->tally; }

static void set_replica(portions *s, int r, char state)
{
  s->n_waiting += (state == REPLICA_WAITING) - (s->replica[r] == REPLICA_WAITING);
  s->n_busy += (state == REPLICA_BUSY) - (s->replica[r] == REPLICA_BUSY);
  s->replica[r] = state;
}

/* p's first copy, fresh or reissued, goes to r. */
static long hand_out(portions *s, int r, long p)
{
  s->state[p] = PORTION_OUT;
  s->copies[p] = 1;
  s->first_holder[p] = r;
  s->tally.copies++;
  return p;
}

/* portions_next's choice, r's state aside. */
static long choose(portions *s, int r)
{
  while (s->reissue_head < s->n_reissue) { /* [faults]: a dead replica's portions first */
    long p = s->reissue[s->reissue_head++];
    if (s->state[p] == PORTION_COUNTED)
      continue; /* a backup copy counted meanwhile */
    s->tally.reissued++;
    return hand_out(s, r, p);
  }
  if (s->next_fresh < s->P)
    return hand_out(s, r, s->next_fresh++);
  /* Dean'12 4.2: backup tasks "near the end of a batch" */
  if (!s->p.backups || (double)s->counted < s->p.backup_at * (double)s->P)
    return PORTIONS_NONE;
  while (s->backup_from < s->P && (s->state[s->backup_from] == PORTION_COUNTED || s->copies[s->backup_from] == 2))
    s->backup_from++; /* both are final within a batch */
  long p = s->backup_from;
  if (p == s->P)
    return PORTIONS_NONE;
  xbt_assert(s->first_holder[p] != r, "replica %d asked for work while it holds portion %ld", r, p);
  s->copies[p] = 2;
  s->tally.copies++;
  s->tally.backups++;
  return p;
}

long portions_next(portions *s, int r)
{
  xbt_assert(s->begun && r >= 0 && r < s->p.replicas && s->replica[r] != REPLICA_GONE,
             "portions: no work for replica %d", r);
  long p = choose(s, r);
  set_replica(s, r, p == PORTIONS_NONE ? REPLICA_WAITING : REPLICA_BUSY);
  return p;
}

int portions_dispatch(portions *s, long *p)
{
  for (int r = 0; r < s->p.replicas && s->n_waiting > 0; r++) {
    if (s->replica[r] != REPLICA_WAITING)
      continue;
    long q = choose(s, r);
    if (q == PORTIONS_NONE)
      return -1;
    set_replica(s, r, REPLICA_BUSY);
    *p = q;
    return r;
  }
  return -1;
}

int portions_judge_now(const portions *s, long held) { return held >= s->p.push_every || s->next_fresh == s->P; }

int portions_done(portions *s, int r, long p)
{
  xbt_assert(s->begun && p >= 0 && p < s->P && s->state[p] != PORTION_PENDING,
             "portions: replica %d finished portion %ld, never handed out", r, p);
  if (s->state[p] != PORTION_OUT) {
    s->tally.discarded++;
    return 0;
  }
  size_t begin;
  s->state[p] = PORTION_COUNTED;
  s->counted_by[p] = r;
  s->counted++;
  s->tally.examples += (long)portions_rows(s->p.examples, s->p.rows, p, &begin);
  s->tally.backup_wins += s->first_holder[p] != r;
  return 1;
}

/* Room for n more portions to reissue. */
static void reissue_room(portions *s, long n)
{
  if (s->n_reissue + n <= s->cap_reissue)
    return;
  s->cap_reissue = s->n_reissue + n > 2 * s->cap_reissue ? s->n_reissue + n : 2 * s->cap_reissue;
  s->reissue = xbt_realloc(s->reissue, (size_t)s->cap_reissue * sizeof(long));
}

/* Dean'12 4.2: the coordinator hands a slow or dead replica's work to others. */
int portions_replica_lost(portions *s, int r)
{
  set_replica(s, r, REPLICA_GONE);
  if (!s->begun || s->counted == s->P)
    return 0;
  reissue_room(s, s->P);
  for (long p = 0; p < s->P; p++) {
    int counted = s->state[p] == PORTION_COUNTED && s->counted_by[p] == r;
    if (!counted && !(s->state[p] == PORTION_OUT && s->first_holder[p] == r))
      continue;
    if (counted) {
      size_t begin;
      s->state[p] = PORTION_OUT;
      s->counted--;
      s->tally.examples -= (long)portions_rows(s->p.examples, s->p.rows, p, &begin);
    }
    s->reissue[s->n_reissue++] = p;
  }
  return 1;
}

void portions_replica_stopped(portions *s, int r) { set_replica(s, r, REPLICA_GONE); }

int portions_busy(const portions *s, int r) { return s->replica[r] == REPLICA_BUSY; }

int portions_n_busy(const portions *s) { return s->n_busy; }

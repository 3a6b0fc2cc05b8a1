#ifndef SIM_LAB_REPRODUCE_STORE_H
#define SIM_LAB_REPRODUCE_STORE_H
/* reproduce_store.h - a reproduction's finished runs kept in a store folder (OUT/.runs/, a
 * store shared beside OUT (reproduction.store: results/dean-runs for Figs. 4 and 5), or
 * `--store DIR`), so that `dtsim reproduce` stopped half-way resumes, on this machine or any
 * other: each run's output folder (its evaluations and figures; not its images nor links.csv)
 * and log, with run.json saying which run it is (its identity), under a name that is a hash
 * of that identity; a run whose identity matches is not run again, whichever reproduction
 * kept it. Runs are deterministic: a run taken back is the run that would have run. */
#include <jansson.h>
#include <stddef.h>

/* A run's identity, the run.json a stored run must match: the dtsim version, the SHA-256 of
 * the sources a run's results depend on (sim/lab/source_hash.cmake: models/, algorithms/,
 * sim/ but sim/lab/, and the BLAS; not the executable's bytes, which differ between
 * machines and compilers), SimGrid's version, the text of scenario work/ini, a hash of every file it names with the
 * n_sets `--set` assignments sets over it (named relative to work: the platform XML, a data
 * set), those assignments and the n_cfg more arguments cfg (SimGrid --cfg options). NULL with one line in err
 * when the scenario or a file it names cannot be read (the run then goes without the
 * store). The caller json_decref's it. */
json_t *reproduce_store_identity(const char *work, const char *ini, const char *const *sets, size_t n_sets,
                                 const char *const *cfg, size_t n_cfg, char *err, size_t len);

/* Looks in folder store for the run of identity id (stored under its hash): one whose
 * run.json is id with an exit status the run may have (0, or 1 with may_miss) has its
 * output folder and log copied to dir and dir.log, and 1 is returned; one whose run.json
 * differs is deleted (stale; kept when readonly) and 0 is returned, as when there is none
 * or the copy fails (dir and dir.log are then removed). */
int reproduce_store_take(const char *store, const char *dir, int may_miss, int readonly, const json_t *id);

/* Keeps the finished run whose output folder is dir (dir, dir.log, and id with exit
 * status `status` as run.json) as store/<id's hash>/, written in a temporary sibling and
 * renamed into place, so that an interrupted copy is never taken for a run. 0, or -1 with
 * one line in err (nothing left behind). */
int reproduce_store_put(const char *store, const char *dir, const json_t *id, int status, char *err, size_t len);

/* Number of runs kept in folder store (0 when there is none). */
size_t reproduce_store_count(const char *store);

/* Deletes the runs of folder store that another build's sources or SimGrid made (their
 * identities can never match again); returns how many. */
size_t reproduce_store_prune(const char *store);

/* Deletes folder store and everything in it; no store is no error. */
void reproduce_store_remove(const char *store);

#endif

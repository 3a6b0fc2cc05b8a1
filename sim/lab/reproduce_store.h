#ifndef SIM_LAB_REPRODUCE_STORE_H
#define SIM_LAB_REPRODUCE_STORE_H
/* reproduce_store.h - a reproduction's finished runs kept in OUT/.runs/, so that `dtsim
 * reproduce` stopped half-way resumes: each run's output folder and log, with run.json
 * saying which run it is (its identity); a run whose identity matches is not run again. */
#include <jansson.h>
#include <stddef.h>

/* A run's identity, the run.json a stored run must match: the dtsim version and a hash of
 * the executable, the text of scenario work/ini, a hash of every file it names with the
 * n_sets `--set` assignments sets over it (named relative to work: the platform XML, a data
 * set), those assignments and the n_cfg more arguments cfg (SimGrid --cfg options). NULL with one line in err
 * when the scenario or a file it names cannot be read (the run then goes without the
 * store). The caller json_decref's it. */
json_t *reproduce_store_identity(const char *work, const char *ini, const char *const *sets, size_t n_sets,
                                 const char *const *cfg, size_t n_cfg, char *err, size_t len);

/* Looks in out/.runs for the run whose output folder is dir (its log: dir.log; stored
 * under dir's last name): one with identity id and an exit status the run may have (0, or
 * 1 with may_miss) has its output folder and log copied to dir and dir.log, and 1 is
 * returned; one of another identity is deleted (stale) and 0 is returned, as when there is
 * none or the copy fails (dir and dir.log are then removed). */
int reproduce_store_take(const char *out, const char *dir, int may_miss, const json_t *id);

/* Keeps the finished run whose output folder is dir (dir, dir.log, and id with exit
 * status `status` as run.json) as out/.runs/<dir's last name>/, written in a temporary
 * sibling and renamed into place, so that an interrupted copy is never taken for a run.
 * 0, or -1 with one line in err (nothing left behind). */
int reproduce_store_put(const char *out, const char *dir, const json_t *id, int status, char *err, size_t len);

/* Number of runs kept in out/.runs (0 when there is no store). */
size_t reproduce_store_count(const char *out);

/* Deletes out/.runs and everything in it; no store is no error. */
void reproduce_store_remove(const char *out);

#endif

/* sweep_resume.c - whether `dtsim sweep` may write into its --out folder, and what differs
 * when it may not (sweep_resume.h). */
#include "sim/lab/sweep_resume.h"

#include <jansson.h>
#include <stdio.h>
#include <sys/stat.h>

#include "sim/lab/sweep_merge.h" /* PATHLEN */
#include "sim/output.h"

/* What differs between a folder's sweep (had) and this one (want), for the refusal. */
static void identity_difference(const json_t *had, const json_t *want, char *buf, size_t len)
{
  if (!json_equal(json_object_get(had, "vary"), json_object_get(want, "vary"))) {
    snprintf(buf, len, "another grid (other --vary keys or values)");
    return;
  }
  const json_t *hk = json_object_get(had, "scenario"), *wk = json_object_get(want, "scenario");
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)wk, key, v)
  {
    const json_t *h = json_object_get(hk, key);
    if (!json_equal(h, v)) {
      snprintf(buf, len, "another scenario (%s = %s there, %s here)", key, h ? json_string_value(h) : "unset",
               json_string_value(v));
      return;
    }
  }
  if (json_object_size(hk) != json_object_size(wk))
    snprintf(buf, len, "another scenario (other keys)");
  else
    snprintf(buf, len, "other SimGrid options (--cfg)");
}

int sweep_out_unusable(const char *out, const json_t *ident, int *resume, char *err, size_t len)
{
  char p[PATHLEN], sj[PATHLEN];
  struct stat st;
  snprintf(p, sizeof(p), "%s/points", out);
  snprintf(sj, sizeof(sj), "%s/sweep.json", out);
  *resume = 0;
  if (stat(p, &st) != 0 && stat(sj, &st) != 0)
    return output_dir_unusable(out, err, len);
  json_t *had = json_load_file(sj, 0, NULL);
  if (!json_is_object(had)) {
    snprintf(err, len, "--out %s: already holds a sweep that cannot be resumed (no readable %s); choose another folder "
             "or remove it", out, sj);
    json_decref(had);
    return -1;
  }
  int same = json_equal(had, ident);
  if (!same) {
    char what[600];
    identity_difference(had, ident, what, sizeof(what));
    snprintf(err, len, "--out %s: holds a sweep of %s; resuming needs the same scenario, grid and --cfg: choose another "
             "folder or remove it", out, what);
  }
  json_decref(had);
  *resume = same;
  return same ? 0 : -1;
}


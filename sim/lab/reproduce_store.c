/* reproduce_store.c - a reproduction's finished runs kept in STORE/<hash>/ (out/: the
 * run's output folder; run.log; run.json: its identity and exit status; hash: that of the
 * identity), taken back
 * instead of running them again when the identity matches. Runs are deterministic, so a
 * run taken back is byte for byte the run that would have run. */
#include "sim/lab/reproduce_store.h"

#include "dtsim_source_hash.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xbt/base.h> /* version.h needs its SG_BEGIN_DECL */
#include <simgrid/version.h>
#include <xbt/sysdep.h>

#include "sim/fileio.h"
#include "sim/scenario.h"

/* FNV-1a, 64 bits (Fowler, Noll and Vo; offset basis and prime from the reference), as 16
 * hex digits: tells files apart, not an adversary's. */
static void fnv1a_hex(const char *data, size_t n, char hex[17])
{
  uint64_t h = 14695981039346656037ULL;
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)data[i];
    h *= 1099511628211ULL;
  }
  snprintf(hex, 17, "%016llx", (unsigned long long)h);
}

/* The hash of the file at path into hex: 0, or -1 with one line in err. */
static int file_hash(const char *path, char hex[17], char *err, size_t len)
{
  size_t n;
  char *data = fileio_read(path, &n);
  if (data == NULL) {
    snprintf(err, len, "%s: cannot read: %s", path, strerror(errno));
    return -1;
  }
  fnv1a_hex(data, n, hex);
  xbt_free(data);
  return 0;
}

/* Copies the file at from to folder `dir` under `name` (atomically, fileio_write). */
static int copy_file(const char *from, const char *dir, const char *name, char *err, size_t len)
{
  size_t n;
  char *data = fileio_read(from, &n);
  if (data == NULL) {
    snprintf(err, len, "%s: cannot read: %s", from, strerror(errno));
    return -1;
  }
  int rc = fileio_write(dir, name, data, n, err, len);
  xbt_free(data);
  return rc;
}

/* Whether a run's output file is kept in the store: its evaluations and figures (summary.json,
 * progress.csv, ...), not its images nor links.csv, whose rows grow with the platform and
 * which no reproduction reads: a store of a full grid stays small enough for the repository. */
static int kept_file(const char *name)
{
  size_t n = strlen(name);
  return strcmp(name, "links.csv") != 0 && !(n > 4 && strcmp(name + n - 4, ".png") == 0);
}

/* Copies folder from, with its subfolders, to folder to (made if missing), every file or only
 * those kept_file keeps. 0 or -1 with err. */
static int copy_tree(const char *from, const char *to, int all, char *err, size_t len)
{
  DIR *d = opendir(from);
  if (d == NULL) {
    snprintf(err, len, "%s: cannot open: %s", from, strerror(errno));
    return -1;
  }
  int rc = fileio_mkdirs(to, err, len);
  for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    char src[4096], dst[4096];
    struct stat sb;
    snprintf(src, sizeof src, "%s/%s", from, e->d_name);
    snprintf(dst, sizeof dst, "%s/%s", to, e->d_name);
    if (lstat(src, &sb) != 0) {
      snprintf(err, len, "%s: %s", src, strerror(errno));
      rc = -1;
    } else
      rc = S_ISDIR(sb.st_mode)               ? copy_tree(src, dst, all, err, len)
           : all || kept_file(e->d_name) ? copy_file(src, to, e->d_name, err, len)
                                           : 0;
  }
  closedir(d);
  return rc;
}

/* The files the scenario at path names, with the --set list over it, as {name: hash}; a
 * name inside work is given relative to it, so that the identity does not depend on the
 * temporary folder. NULL with err when the scenario or a file cannot be read. */
static json_t *input_hashes(const char *work, const char *path, const char *const *sets, size_t n_sets, char *err,
                            size_t len)
{
  scenario *s = xbt_malloc(sizeof *s);
  scenario_defaults(s);
  int rc = scenario_load_file(s, path, err, len);
  for (size_t k = 0; rc == 0 && k < n_sets; k++)
    rc = scenario_set(s, sets[k], err, len);
  json_t *inputs = json_object();
  size_t w = strlen(work);
  for (size_t i = 0; rc == 0 && i < scenario_key_count(); i++) {
    char file[4096], full[4096], hex[17];
    if (!scenario_key_file(s, i, file, sizeof file))
      continue;
    /* a run starts in work: a relative name from a --set is work's too */
    snprintf(full, sizeof full, "%s%s%s", file[0] == '/' ? "" : work, file[0] == '/' ? "" : "/", file);
    rc = file_hash(full, hex, err, len);
    const char *name = strncmp(full, work, w) == 0 && full[w] == '/' ? full + w + 1 : full;
    if (rc == 0)
      json_object_set_new(inputs, name, json_string(hex));
  }
  xbt_free(s);
  if (rc != 0) {
    json_decref(inputs);
    return NULL;
  }
  return inputs;
}

json_t *reproduce_store_identity(const char *work, const char *ini, const char *const *sets, size_t n_sets,
                                 const char *const *cfg, size_t n_cfg, char *err, size_t len)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", work, ini);
  char *text = fileio_read(path, NULL);
  json_t *inputs = text ? input_hashes(work, path, sets, n_sets, err, len) : NULL;
  json_t *scn = text ? json_string(text) : NULL; /* NULL too for text that is not UTF-8 */
  if (text == NULL)
    snprintf(err, len, "%s: cannot read: %s", path, strerror(errno));
  else if (text && inputs && scn == NULL)
    snprintf(err, len, "%s: not UTF-8 text", path);
  xbt_free(text);
  if (inputs == NULL || scn == NULL) {
    json_decref(inputs);
    json_decref(scn);
    return NULL;
  }
  json_t *set_list = json_array();
  for (size_t k = 0; k < n_sets; k++)
    json_array_append_new(set_list, json_string(sets[k]));
  json_t *id = json_object();
  json_object_set_new(id, "dtsim_version", json_string(DTSIM_VERSION));
  json_object_set_new(id, "sources_sha256", json_string(DTSIM_SOURCE_HASH));
  json_object_set_new(id, "simgrid", json_string(SIMGRID_VERSION_STRING));
  json_object_set_new(id, "scenario", scn);
  json_object_set_new(id, "inputs", inputs);
  json_object_set_new(id, "sets", set_list);
  json_t *cfg_list = json_array();
  for (size_t g = 0; g < n_cfg; g++)
    json_array_append_new(cfg_list, json_string(cfg[g]));
  json_object_set_new(id, "cfg", cfg_list);
  return id;
}

/* store/<the hash of identity id> into path: the identity written compactly with its keys
 * sorted, so that equal identities name one folder. */
static void run_path(const char *store, const json_t *id, char *path, size_t len)
{
  char hex[17];
  char *text = json_dumps(id, JSON_COMPACT | JSON_SORT_KEYS);
  fnv1a_hex(text, strlen(text), hex);
  free(text); /* json_dumps's */
  snprintf(path, len, "%s/%s", store, hex);
}

int reproduce_store_take(const char *store, const char *dir, int may_miss, int readonly, const json_t *id)
{
  char run[4096], path[4200], log[4200], err[512];
  struct stat sb;
  run_path(store, id, run, sizeof run);
  if (lstat(run, &sb) != 0)
    return 0;
  snprintf(path, sizeof path, "%s/run.json", run);
  json_t *kept = json_load_file(path, 0, NULL);
  json_int_t status = json_integer_value(json_object_get(kept, "exit_status"));
  int same = kept && json_is_integer(json_object_get(kept, "exit_status"));
  json_object_del(kept, "exit_status");
  same = same && json_equal(kept, id) && (status == 0 || (status == 1 && may_miss));
  json_decref(kept);
  if (!same) { /* stale: broken, or another run of the same hash */
    if (!readonly)
      fileio_remove_tree(run);
    return 0;
  }
  snprintf(path, sizeof path, "%s/out", run);
  snprintf(log, sizeof log, "%s.log", dir);
  if (copy_tree(path, dir, 1, err, sizeof err) == 0) {
    const char *slash = strrchr(log, '/'); /* the log sits beside dir */
    char parent[4200];
    snprintf(parent, sizeof parent, "%.*s", slash ? (int)(slash - log) : 1, slash ? log : ".");
    snprintf(path, sizeof path, "%s/run.log", run);
    if (copy_file(path, parent, slash ? slash + 1 : log, err, sizeof err) == 0)
      return 1;
  }
  fileio_remove_tree(dir);
  unlink(log);
  return 0;
}

int reproduce_store_put(const char *store, const char *dir, const json_t *id, int status, char *err, size_t len)
{
  char run[4200], tmp[4300], path[4400];
  run_path(store, id, run, sizeof run);
  snprintf(tmp, sizeof tmp, "%s/.%s.tmp", store, run + strlen(store) + 1);
  fileio_remove_tree(tmp); /* a copy an earlier interrupt left half-made */
  json_t *kept = json_deep_copy(id);
  json_object_set_new(kept, "exit_status", json_integer(status));
  char *text = json_dumps(kept, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(kept);
  snprintf(path, sizeof path, "%s/out", tmp);
  int rc = fileio_mkdirs(tmp, err, len) != 0 || copy_tree(dir, path, 0, err, len) != 0 ? -1 : 0;
  snprintf(path, sizeof path, "%s.log", dir);
  if (rc == 0)
    rc = copy_file(path, tmp, "run.log", err, len);
  if (rc == 0)
    rc = fileio_write(tmp, "run.json", text, strlen(text), err, len);
  free(text); /* json_dumps's */
  if (rc == 0) {
    fileio_remove_tree(run); /* a stale run of the same name */
    if (rename(tmp, run) != 0) {
      snprintf(err, len, "%s: cannot rename into place: %s", run, strerror(errno));
      rc = -1;
    }
  }
  if (rc != 0)
    fileio_remove_tree(tmp);
  return rc;
}

size_t reproduce_store_count(const char *store)
{
  DIR *d = opendir(store);
  size_t n = 0;
  for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;)
    n += e->d_name[0] != '.'; /* ".", "..", and a copy being made */
  if (d != NULL)
    closedir(d);
  return n;
}

/* Whether stored run `name` of store was made by other sources or another SimGrid than this
 * dtsim's (or cannot be read): no identity of this build can match it any more. */
static int stale(const char *store, const char *name)
{
  char path[4400];
  snprintf(path, sizeof path, "%s/%s/run.json", store, name);
  json_t *kept = json_load_file(path, 0, NULL);
  const char *src = json_string_value(json_object_get(kept, "sources_sha256"));
  const char *sg = json_string_value(json_object_get(kept, "simgrid"));
  int old = src == NULL || sg == NULL || strcmp(src, DTSIM_SOURCE_HASH) != 0 || strcmp(sg, SIMGRID_VERSION_STRING) != 0;
  json_decref(kept);
  return old;
}

size_t reproduce_store_prune(const char *store)
{
  DIR *d = opendir(store);
  size_t n = 0;
  for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || !stale(store, e->d_name))
      continue;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", store, e->d_name);
    fileio_remove_tree(path);
    n++;
  }
  if (d != NULL)
    closedir(d);
  return n;
}

void reproduce_store_remove(const char *store)
{
  fileio_remove_tree(store);
}

#ifndef TESTS_CLI_UTIL_H
#define TESTS_CLI_UTIL_H
/* cli_util.h - running the dtsim binary from the sim_ Check suites: each simulation runs
 * in its own process (SimGrid allows one engine per process), with stdout and stderr
 * captured to files; and the temporary-folder and file helpers, which check_ suites may
 * use too. Header-only. */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Width and height of the PNG at path, from its IHDR chunk (Check asserts it is one). */
static inline void cli_png_size(const char *path, unsigned *w, unsigned *h)
{
  unsigned char b[24] = {0};
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f && fread(b, 1, 24, f) == 24, "%s", path);
  fclose(f);
  ck_assert_msg(memcmp(b, "\x89PNG", 4) == 0, "%s is not a PNG", path);
  *w = (unsigned)b[16] << 24 | (unsigned)b[17] << 16 | (unsigned)b[18] << 8 | b[19];
  *h = (unsigned)b[20] << 24 | (unsigned)b[21] << 16 | (unsigned)b[22] << 8 | b[23];
}

/* Contents of dir/name (malloc'ed, NUL-terminated), or NULL. */
static inline char *cli_read(const char *dir, const char *name)
{
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  size_t got = fread(s, 1, (size_t)n, f);
  s[got] = '\0';
  fclose(f);
  return s;
}

/* The folders cli_tmpdir made in this process, removed when it exits (Check runs each test in a
 * forked child that ends with exit(), so a test's folders go when the test ends, pass or fail).
 * DTSIM_KEEP_TEST_DIRS=1 keeps them for a look after a failure. */
#define CLI_TMPDIRS_MAX 64
static char *cli_tmpdirs[CLI_TMPDIRS_MAX];
static pid_t cli_tmpdir_pids[CLI_TMPDIRS_MAX]; /* a forked test leaves its parent's folders alone */
static int cli_n_tmpdirs;

/* Removes path: a file, or a folder with everything under it (symbolic links not followed). */
static inline void cli_rm_tree(const char *path)
{
  struct stat sb;
  if (lstat(path, &sb) != 0)
    return;
  if (S_ISDIR(sb.st_mode)) {
    DIR *d = opendir(path);
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        continue;
      char sub[2048];
      snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
      cli_rm_tree(sub);
    }
    if (d != NULL)
      closedir(d);
  }
  remove(path);
}

static inline void cli_rm_tmpdirs(void)
{
  const char *keep = getenv("DTSIM_KEEP_TEST_DIRS");
  for (int i = 0; i < cli_n_tmpdirs; i++) {
    if ((keep == NULL || strcmp(keep, "1") != 0) && cli_tmpdir_pids[i] == getpid())
      cli_rm_tree(cli_tmpdirs[i]);
    free(cli_tmpdirs[i]);
  }
  cli_n_tmpdirs = 0;
}

/* A fresh temporary folder (malloc'ed path), removed with its contents when the process exits. */
static inline char *cli_tmpdir(void)
{
  char *d = strdup("/tmp/dtsim-test-XXXXXX");
  if (mkdtemp(d) == NULL) {
    perror("mkdtemp");
    abort();
  }
  if (cli_n_tmpdirs == 0)
    atexit(cli_rm_tmpdirs);
  if (cli_n_tmpdirs < CLI_TMPDIRS_MAX) {
    cli_tmpdir_pids[cli_n_tmpdirs] = getpid();
    cli_tmpdirs[cli_n_tmpdirs++] = strdup(d);
  }
  return d;
}

static inline int cli_exists(const char *dir, const char *name)
{
  char path[1024];
  struct stat sb;
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  return stat(path, &sb) == 0;
}

/* Number of lines in s. */
static inline int cli_lines(const char *s)
{
  int n = 0;
  for (; s && *s; s++)
    n += *s == '\n';
  return n;
}

/* Makes the folder dir/name. */
static inline void cli_mkdir(const char *dir, const char *name)
{
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  if (mkdir(path, 0777) != 0) {
    perror(path);
    abort();
  }
}

/* Writes text to dir/name. */
static inline void cli_write(const char *dir, const char *name, const char *text)
{
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  fputs(text, f);
  fclose(f);
}

/* Value of a top-level JSON number field "key": 1.5 in summary.json text, as text. */
static inline int cli_json_field(const char *json, const char *key, char *out, size_t len)
{
  char pat[128];
  snprintf(pat, sizeof(pat), "\"%s\": ", key);
  const char *p = strstr(json, pat);
  if (p == NULL)
    return -1;
  p += strlen(pat);
  size_t n = strcspn(p, ",\n}");
  snprintf(out, len, "%.*s", (int)n, p);
  return 0;
}

/* Asserts that every data row of csv (every line after its header) is a line of full: a
 * reproduction's --quick rows are rows of its committed full grid. */
static inline void cli_assert_rows_within(const char *csv, const char *full)
{
  for (const char *p = strchr(csv, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
    size_t len = strcspn(p + 1, "\n");
    char line[512];
    ck_assert_uint_lt(len + 2, sizeof(line));
    snprintf(line, sizeof(line), "\n%.*s\n", (int)len, p + 1);
    ck_assert_msg(strstr(full, line) != NULL, "not a committed row: %s", line + 1);
  }
}

/* Asserts that every one of the n files exists in both run folders a and b (under dir)
 * and is byte-identical. */
static inline void cli_assert_same_files(const char *dir, const char *a, const char *b, const char *const *files,
                                         size_t n)
{
  for (size_t i = 0; i < n; i++) {
    char p1[256], p2[256];
    snprintf(p1, sizeof(p1), "%s/%s", a, files[i]);
    snprintf(p2, sizeof(p2), "%s/%s", b, files[i]);
    char *x = cli_read(dir, p1), *y = cli_read(dir, p2);
    ck_assert_msg(x != NULL && y != NULL, "%s missing", files[i]);
    ck_assert_msg(strcmp(x, y) == 0, "%s differs between %s and %s", files[i], a, b);
    free(x);
    free(y);
  }
}

/* The functions below run the binary: they exist only where DTSIM_BIN is defined, which
 * tests/CMakeLists.txt does for the sim_ suites alone, so that an in-process check_ suite
 * cannot run dtsim (it may still use the file helpers above). */
#ifdef DTSIM_BIN

/* Runs DTSIM_BIN with the NULL-terminated arguments; stdout and stderr go to
 * dir/stdout and dir/stderr. Returns the exit status, or 128 + signal. */
static inline int cli_run(const char *dir, const char *const *args)
{
  char out[1024], err[1024];
  snprintf(out, sizeof(out), "%s/stdout", dir);
  snprintf(err, sizeof(err), "%s/stderr", dir);
  pid_t pid = fork();
  if (pid == 0) {
    int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fo, 1);
    dup2(fe, 2);
    if (chdir(dir) != 0)
      _exit(126);
    const char *argv[64];
    int n = 0;
    argv[n++] = DTSIM_BIN;
    for (; args[n - 1] && n < 63; n++)
      argv[n] = args[n - 1];
    argv[n] = NULL;
    execv(DTSIM_BIN, (char *const *)argv);
    _exit(127);
  }
  int st;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Runs dtsim with args in dir and asserts (Check) how bad input ends: exit status 2,
 * exactly one line on stderr containing `needle`, no result folder dir/out and no core
 * file. */
static inline void cli_assert_bad_input(const char *dir, const char *const *args, const char *needle)
{
  int rc = cli_run(dir, args);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 2, "exit status %d, stderr: %s", rc, err);
  ck_assert_msg(cli_lines(err) == 1, "want one line on stderr, got: %s", err);
  ck_assert_msg(strstr(err, needle) != NULL, "stderr lacks '%s': %s", needle, err);
  ck_assert_msg(!cli_exists(dir, "out"), "a result folder was created");
  ck_assert_msg(!cli_exists(dir, "core"), "a core file was left");
  free(err);
}

/* Runs dtsim with args in dir, asserts (Check) that it succeeded, and returns the
 * parsed dir/out/summary.json (caller json_decref's it). */
static inline json_t *cli_summary(const char *dir, const char *const *args, const char *out)
{
  int rc = cli_run(dir, args);
  char *err = cli_read(dir, "stderr");
  ck_assert_msg(rc == 0, "dtsim exit %d: %s", rc, err);
  free(err);
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s/summary.json", dir, out);
  json_error_t je;
  json_t *j = json_load_file(path, 0, &je);
  ck_assert_msg(j != NULL, "cannot read %s: %s", path, je.text);
  return j;
}

/* Runs `dtsim run base.ini --quiet --out OUT --set S...` in dir (sets: NULL-terminated),
 * then one more argument if extra is not NULL (e.g. a SimGrid --cfg); asserts (Check)
 * that it succeeded and returns the parsed OUT/summary.json (caller json_decref's it). */
static inline json_t *cli_run_sets(const char *dir, const char *out, const char *const *sets, const char *extra)
{
  const char *args[64] = {"run", "base.ini", "--quiet", "--out", out};
  int n = 5;
  for (int i = 0; sets[i] && n < 60; i++) {
    args[n++] = "--set";
    args[n++] = sets[i];
  }
  args[n++] = extra;
  args[n] = NULL;
  return cli_summary(dir, args, out);
}

/* A number at the top level of a summary.json. */
static inline double cli_num(const json_t *j, const char *key)
{
  return json_number_value(json_object_get(j, key));
}

/* Determinism of one scenario: dir/ini with the one --set `set` run three times, twice with
 * the master seed (once on two SimGrid threads: --cfg=contexts/nthreads:2) and once with
 * --seed 7. The first two must write the same files[0..n), byte for byte; the third a
 * different progress.csv of more than 3 lines (so the seed reaches the results). */
static inline void cli_assert_deterministic(const char *dir, const char *ini, const char *set,
                                            const char *const *files, size_t n)
{
  const char *a1[] = {"run", ini, "--quiet", "--out", "t1", "--set", set, NULL};
  const char *a2[] = {"run", ini, "--quiet", "--out", "t2", "--set", set, "--cfg=contexts/nthreads:2", NULL};
  const char *a3[] = {"run", ini, "--quiet", "--out", "t3", "--set", set, "--seed", "7", NULL};
  json_decref(cli_summary(dir, a1, "t1"));
  json_decref(cli_summary(dir, a2, "t2"));
  json_decref(cli_summary(dir, a3, "t3"));
  cli_assert_same_files(dir, "t1", "t2", files, n);
  char *x = cli_read(dir, "t1/progress.csv"), *z = cli_read(dir, "t3/progress.csv");
  ck_assert_str_ne(x, z);
  ck_assert_int_gt(cli_lines(x), 3);
  free(x);
  free(z);
}

#endif /* DTSIM_BIN */

#endif

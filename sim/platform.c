/* platform.c - loading a platform file safely: the crash-isolated pre-check and the
 * hosts in the order the file declares them.
 *
 * SimGrid aborts the process on a malformed platform, so platform_check loads the file in
 * a child process first and turns a crash into one line of error text. The generator and
 * presets are in platform_gen.c, `dtsim platform` in platform_cli.c. */

#include "sim/platform.h"
#include "sim/platform_int.h"

#include "sim/energy.h"
#include "sim/fileio.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/dynar.h>
#include <xbt/sysdep.h>

/* ---------------------------------------------------------------- pre-check */

#define CHECK_ERR_MAX 65536
#define CHECK_MSG_MAX 512

static void child_crash(int sig)
{
  (void)sig;
  _exit(70);
}

static void catch_crashes(const struct sigaction *sa)
{
  static const int sigs[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
    sigaction(sigs[i], sa, NULL);
}

/* The hosts a run uses, as the engine places them: the first `needed` in file order
 * (packed), or spread evenly over all of them. */
size_t platform_drop_host_cpus(sg_host_t *hosts, size_t n)
{
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    const char *name = sg_host_get_name(hosts[i]);
    size_t len = strlen(name);
    char owner[256];
    int cpu = len > 4 && len - 4 < sizeof owner && strcmp(name + len - 4, "-cpu") == 0;
    if (cpu) {
      memcpy(owner, name, len - 4);
      owner[len - 4] = '\0';
      cpu = sg_host_by_name(owner) != NULL;
    }
    if (!cpu)
      hosts[k++] = hosts[i];
  }
  return k;
}

void platform_place(sg_host_t *all, size_t n_all, size_t needed, int spread, sg_host_t *used)
{
  for (size_t i = 0; i < needed; i++)
    used[i] = all[spread ? i * n_all / needed : i];
}

/* Up to this many hosts, routes are checked between every ordered pair; above, between
 * each host and CHECK_HUBS hosts spread evenly over the placement, both ways, and between
 * neighbours in placement order (about 34 lookups per host). A lookup costs 0.5 to 2 us
 * (every pair of a 1,000-host fat tree: 0.5 to 2.3 s on a loaded 2-core machine; the
 * scale runs use 10,000 hosts). */
#define CHECK_ALL_PAIRS_MAX 256
#define CHECK_HUBS 16

/* What SimGrid runs but dtsim's actors do not survive, named by the file (scan_hazards):
 * a host or link with a state profile (state_file, or a HOST_AVAIL / LINK_AVAIL
 * trace_connect) turns off mid-run, which kills the host's actors or throws out of a
 * transfer; a WIFI link needs each station's rate set from a program. */
typedef struct hazard {
  char name[256];
  char what; /* 'h' host state, 'l' link state, 'w' WiFi link */
} hazard;

typedef struct hazards {
  hazard *v;
  size_t n;
} hazards;

static void scan_hazards(const char *doc, size_t len, hazards *hz);

static const hazard *hazard_of(const hazards *hz, const char *name, int link)
{
  for (size_t i = 0; i < hz->n; i++)
    if ((hz->v[i].what != 'h') == (link != 0) && strcmp(hz->v[i].name, name) == 0)
      return &hz->v[i];
  return NULL;
}

static void link_hazard_msg(const hazard *z, sg_host_t a, sg_host_t b, char *msg, size_t len)
{
  if (z->what == 'w')
    snprintf(msg, len, "link %s on the route from host %s to host %s is a WIFI link, whose stations' rates SimGrid "
             "takes from a program (set_host_rate), not from the file; dtsim cannot send over it", z->name,
             sg_host_get_name(a), sg_host_get_name(b));
  else
    snprintf(msg, len, "link %s on the route from host %s to host %s has a state profile (it may turn off during "
             "the run), which aborts the transfers on it; give its failures as faults.link_failures instead", z->name,
             sg_host_get_name(a), sg_host_get_name(b));
}

/* One route of the run: empty and without latency (SimGrid aborts at the first message:
 * "no connecting path") or crossing a link of no bandwidth (SimGrid's solver aborts: "The
 * Impossible Did Happen") is a problem, written into msg. A route of no links but some
 * latency is a Vivaldi zone's: its hosts reach each other through their coordinates. */
static int route_bad(sg_host_t a, sg_host_t b, xbt_dynar_t route, const hazards *hz, char *msg, size_t len)
{
  xbt_dynar_reset(route);
  sg_host_get_route(a, b, route);
  if (xbt_dynar_is_empty(route) && !(sg_host_get_route_latency(a, b) > 0)) {
    snprintf(msg, len, "no route from host %s to host %s, two hosts the run uses", sg_host_get_name(a),
             sg_host_get_name(b));
    return 1;
  }
  unsigned k;
  sg_link_t l;
  xbt_dynar_foreach (route, k, l) {
    const hazard *z = hazard_of(hz, sg_link_get_name(l), 1);
    if (z) {
      link_hazard_msg(z, a, b, msg, len);
      return 1;
    }
    if (!(sg_link_get_bandwidth(l) > 0)) {
      snprintf(msg, len, "link %s on the route from host %s to host %s has bandwidth %g", sg_link_get_name(l),
               sg_host_get_name(a), sg_host_get_name(b), sg_link_get_bandwidth(l));
      return 1;
    }
  }
  return 0;
}

/* What SimGrid would abort on once the run starts, for the hosts it uses: a host of no
 * speed, an unroutable pair of hosts, a route over a link of no bandwidth. Returns 0, or
 * 1 with the problem in msg. */
static int check_use(const char *path, const platform_use *use, char *msg, size_t len)
{
  sg_host_t *all;
  size_t n_all = platform_hosts_in_order(path, &all);
  if (use->host_cpus)
    n_all = platform_drop_host_cpus(all, n_all);
  if (use->needed == 0 || n_all < use->needed) { /* the caller reports too few hosts */
    xbt_free(all);
    return 0;
  }
  size_t n = use->needed, doc_len = 0;
  sg_host_t *h = xbt_malloc(n * sizeof *h);
  platform_place(all, n_all, n, use->spread, h);
  hazards hz = {NULL, 0};
  char *doc = fileio_read(path, &doc_len);
  if (doc)
    scan_hazards(doc, doc_len, &hz);
  xbt_free(doc);
  int bad = 0;
  for (size_t i = 0; i < n && !bad; i++)
    if (hazard_of(&hz, sg_host_get_name(h[i]), 0)) {
      snprintf(msg, len, "host %s has a state profile (it may turn off during the run), and dtsim's actors do not "
               "survive a host the platform turns off; give its failures as faults.host_failures instead",
               sg_host_get_name(h[i]));
      bad = 1;
    } else if (!(sg_host_get_speed(h[i]) > 0) || sg_host_core_count(h[i]) < 1) {
      snprintf(msg, len, "host %s has a speed of %g flop/s on %d cores; the run computes on it (host %zu of the %zu "
               "it uses)", sg_host_get_name(h[i]), sg_host_get_speed(h[i]), sg_host_core_count(h[i]), i + 1, n);
      bad = 1;
    }
  xbt_dynar_t route = xbt_dynar_new(sizeof(sg_link_t), NULL);
  if (n <= CHECK_ALL_PAIRS_MAX) {
    for (size_t i = 0; i < n && !bad; i++)
      for (size_t j = 0; j < n && !bad; j++)
        bad = i != j && route_bad(h[i], h[j], route, &hz, msg, len);
  } else {
    for (size_t i = 0; i < n && !bad; i++) {
      for (size_t k = 0; k < CHECK_HUBS && !bad; k++) {
        size_t hub = k * n / CHECK_HUBS;
        bad = hub != i && (route_bad(h[hub], h[i], route, &hz, msg, len) || route_bad(h[i], h[hub], route, &hz, msg, len));
      }
      if (!bad && i > 0)
        bad = route_bad(h[i - 1], h[i], route, &hz, msg, len) || route_bad(h[i], h[i - 1], route, &hz, msg, len);
    }
  }
  xbt_dynar_free(&route);
  xbt_free(hz.v);
  xbt_free(h);
  xbt_free(all);
  return bad;
}

/* In the child: load the platform with the caller's SimGrid options; report the host
 * count through res_fd, then (with use) 'k' or 'e' and a problem of the hosts it uses.
 * A crash (SimGrid aborts on a bad file) becomes _exit(70), which leaves no core dump
 * even where core_pattern pipes to a crash collector. */
static void check_child(const char *path, int argc, char **argv, const platform_use *use, int res_fd, int err_fd)
{
  static char prog[] = "dtsim", quiet[] = "--log=root.thresh:error", no_loc[] = "--log=no_loc";
  struct rlimit no_core = {0, 0};
  struct sigaction sa;
  char **args = xbt_malloc(((size_t)(argc > 0 ? argc : 1) + 3) * sizeof *args);
  int n = 0;

  setrlimit(RLIMIT_CORE, &no_core);
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = child_crash;
  sigemptyset(&sa.sa_mask);
  catch_crashes(&sa);
  dup2(err_fd, STDERR_FILENO);
  dup2(err_fd, STDOUT_FILENO);

  args[n++] = argc > 0 && argv && argv[0] ? argv[0] : prog;
  for (int i = 1; i < argc; i++)
    args[n++] = argv[i];
  args[n++] = quiet;
  args[n++] = no_loc;
  args[n] = NULL;
  simgrid_init(&n, args);
  catch_crashes(&sa); /* simgrid_init installs its own SIGSEGV/SIGBUS handlers */
  char stage = 'i'; /* options accepted; a failure after this is the file's */
  if (write(res_fd, &stage, 1) != 1)
    _exit(71);
  if (path == NULL) /* options only */
    _exit(0);
  int links, power = energy_platform_has(path, &links);
  if (power > 0) /* so that the plugins read (and refuse) the file's power figures here */
    energy_plugins_init(links);
  simgrid_load_platform(path);
  long count = (long)sg_host_count();
  if (use && use->host_cpus) {
    sg_host_t *all = sg_host_list();
    count = (long)platform_drop_host_cpus(all, (size_t)count);
    xbt_free(all);
  }
  if (write(res_fd, &count, sizeof count) != (ssize_t)sizeof count)
    _exit(71);
  if (use) {
    /* Zones that route zone to zone (Floyd, rule-based, clusters of clusters) have their
     * routes only once SimGrid seals the platform, which simgrid_run does first; with no
     * actor it returns at once, at time 0. Asked before, SimGrid throws ("No route from
     * 'AS_grenoble' to 'AS_bordeaux'") where every message would get through. */
    simgrid_run();
    char msg[CHECK_MSG_MAX] = "";
    char verdict = check_use(path, use, msg, sizeof msg) ? 'e' : 'k';
    if (write(res_fd, &verdict, 1) != 1 || write(res_fd, msg, sizeof msg) != (ssize_t)sizeof msg)
      _exit(71);
  }
  _exit(0);
}

/* Drops "[0.000000] [category/PRIORITY] " prefixes of SimGrid's log lines. */
static const char *strip_log_prefix(const char *s)
{
  while (*s == '[') {
    const char *e = strstr(s, "] ");
    if (!e)
      break;
    s = e + 2;
  }
  return s;
}

/* The most useful line of the child's stderr: SimGrid's "Parse error at FILE:LINE: ...",
 * else an uncaught exception's message, else the first critical or error line, else the
 * last line. Lines are cut in place (buf is modified). */
static const char *pick_error_line(char *buf)
{
  const char *parse = NULL, *uncaught = NULL, *critical = NULL, *last = NULL;
  for (char *line = buf; line && *line;) {
    char *nl = strchr(line, '\n');
    if (nl)
      *nl = '\0';
    const char *msg = strip_log_prefix(line);
    if (!parse && strstr(msg, "Parse error at"))
      parse = strstr(msg, "Parse error at");
    if (!uncaught && strncmp(msg, "Uncaught exception ", 19) == 0) {
      const char *colon = strstr(msg + 19, ": ");
      uncaught = colon ? colon + 2 : msg;
    }
    if (!critical && (strstr(line, "/CRITICAL]") || strstr(line, "/ERROR]")) &&
        strcmp(msg, "Exiting now.") != 0 && strncmp(msg, "Current backtrace", 17) != 0)
      critical = msg;
    if (*msg && strncmp(msg, "  ->", 4) != 0)
      last = msg;
    line = nl ? nl + 1 : NULL;
  }
  return parse ? parse : uncaught ? uncaught : critical ? critical : last;
}

/* Whether the file stops before its closing </platform> (a copy cut short): then where, as
 * "line L, column C" of its last character, into where. SimGrid's parser blames whatever
 * attribute the cut fell in ("Bad attribute `lat'"), which reads like a typo. */
static int truncated_at(const char *path, char *where, size_t len)
{
  char *text = fileio_read(path, NULL);
  if (text == NULL)
    return 0;
  size_t n = strlen(text);
  while (n > 0 && strchr(" \t\r\n", text[n - 1]))
    n--;
  int cut = n > 0 && (n < 11 || strncmp(text + n - 11, "</platform>", 11) != 0);
  if (cut) {
    long line = 1, col = 0;
    for (size_t i = 0; i < n; i++)
      col = text[i] == '\n' ? (line++, 0) : col + 1;
    snprintf(where, len, "line %ld, column %ld", line, col);
  }
  xbt_free(text);
  return cut;
}

/* What the child reported: its stage ('i': the options were accepted), the host count,
 * the verdict on the hosts the run uses ('k', 'e' with msg, or 0 when not asked), the
 * wait status and its stderr (malloc'ed). */
typedef struct child_report {
  char stage, verdict;
  long count;
  int status;
  char msg[CHECK_MSG_MAX];
  char *text;
} child_report;

static int read_full(int fd, void *buf, size_t n)
{
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, (char *)buf + got, n - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return -1;
    got += (size_t)r;
  }
  return 0;
}

/* Forks the checking child (path NULL: the options only) and collects its report.
 * Returns 0, or -1 with err set when no child could be started. */
static int run_child(const char *path, int argc, char **argv, const platform_use *use, child_report *cr, char *err,
                     size_t errlen)
{
  const char *what = path ? path : "SimGrid options";
  memset(cr, 0, sizeof *cr);
  cr->count = -1;
  int res[2], errp[2];
  if (pipe(res) != 0) {
    platform_set_err(err, errlen, "%s: cannot check: pipe: %s", what, strerror(errno));
    return -1;
  }
  if (pipe(errp) != 0) {
    platform_set_err(err, errlen, "%s: cannot check: pipe: %s", what, strerror(errno));
    close(res[0]), close(res[1]);
    return -1;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    platform_set_err(err, errlen, "%s: cannot check: fork: %s", what, strerror(errno));
    close(res[0]), close(res[1]), close(errp[0]), close(errp[1]);
    return -1;
  }
  if (pid == 0) {
    close(res[0]);
    close(errp[0]);
    check_child(path, argc, argv, use, res[1], errp[1]);
  }
  close(res[1]);
  close(errp[1]);

  /* Drain stderr to EOF before waiting, so a chatty child never blocks on a full pipe. */
  cr->text = xbt_malloc(CHECK_ERR_MAX + 1);
  size_t len = 0;
  for (;;) {
    char chunk[4096];
    ssize_t r = read(errp[0], chunk, sizeof chunk);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    size_t keep = (size_t)r < CHECK_ERR_MAX - len ? (size_t)r : CHECK_ERR_MAX - len;
    memcpy(cr->text + len, chunk, keep);
    len += keep;
  }
  cr->text[len] = '\0';
  close(errp[0]);

  if (read_full(res[0], &cr->stage, 1) == 0 && cr->stage == 'i' && path) {
    if (read_full(res[0], &cr->count, sizeof cr->count) != 0)
      cr->count = -1;
    else if (use && (read_full(res[0], &cr->verdict, 1) != 0 || read_full(res[0], cr->msg, sizeof cr->msg) != 0))
      cr->verdict = 0;
    cr->msg[sizeof cr->msg - 1] = '\0';
  }
  close(res[0]);
  while (waitpid(pid, &cr->status, 0) < 0 && errno == EINTR)
    ;
  return 0;
}

/* The child's most telling line when it failed. */
static const char *child_failure(child_report *cr, char *why, size_t len)
{
  const char *line = pick_error_line(cr->text);
  if (line && *line)
    return line;
  if (WIFSIGNALED(cr->status))
    snprintf(why, len, "the SimGrid loader died of signal %d", WTERMSIG(cr->status));
  else
    snprintf(why, len, "the SimGrid loader failed (status %d)",
             WIFEXITED(cr->status) ? WEXITSTATUS(cr->status) : -1);
  return why;
}

static int child_ok(const child_report *cr)
{
  return WIFEXITED(cr->status) && WEXITSTATUS(cr->status) == 0;
}

/* The option a SimGrid complaint is about: each --cfg= or --log= is tried alone; the
 * first one that fails alone, or NULL. */
static const char *guilty_option(int argc, char **argv)
{
  for (int i = 1; i < argc; i++) {
    char *one[] = {argc > 0 ? argv[0] : "dtsim", argv[i], NULL};
    child_report cr;
    char e[64];
    if (run_child(NULL, 2, one, NULL, &cr, e, sizeof e) != 0)
      return NULL;
    int bad = !child_ok(&cr) || cr.stage != 'i';
    xbt_free(cr.text);
    if (bad)
      return argv[i];
  }
  return NULL;
}

int platform_check_options(int argc, char **argv, char *err, size_t errlen)
{
  child_report cr;
  if (argc <= 1)
    return 0;
  if (run_child(NULL, argc, argv, NULL, &cr, err, errlen) != 0)
    return -1;
  if (child_ok(&cr) && cr.stage == 'i') {
    xbt_free(cr.text);
    return 0;
  }
  char why[96];
  const char *line = child_failure(&cr, why, sizeof why);
  const char *opt = guilty_option(argc, argv);
  if (opt)
    platform_set_err(err, errlen, "%s: SimGrid refuses this option: %s", opt, line);
  else
    platform_set_err(err, errlen, "SimGrid refuses these options: %s", line);
  xbt_free(cr.text);
  return -1;
}

const char *platform_cfg_value(int argc, char **argv, const char *name)
{
  size_t n = strlen(name);
  const char *v = NULL;
  for (int i = 1; i < argc; i++)
    if (strncmp(argv[i], "--cfg=", 6) == 0 && strncmp(argv[i] + 6, name, n) == 0 && argv[i][6 + n] == ':')
      v = argv[i] + 7 + n;
  return v;
}

long platform_check_use(const char *path, int argc, char **argv, const platform_use *use, char *err, size_t errlen)
{
  FILE *f = fopen(path, "r");
  if (!f) {
    platform_set_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  clearerr(f);
  (void)fgetc(f);
  if (ferror(f)) {
    int e = errno;
    fclose(f);
    platform_set_err(err, errlen, "%s: cannot read: %s", path, strerror(e));
    return -1;
  }
  fclose(f);

  child_report cr;
  if (run_child(path, argc, argv, use, &cr, err, errlen) != 0)
    return -1;
  long rc = -1;
  if (child_ok(&cr) && cr.count >= 0 && (!use || cr.verdict)) {
    if (cr.count == 0)
      platform_set_err(err, errlen, "%s: platform declares no hosts", path);
    else if (cr.verdict == 'e')
      platform_set_err(err, errlen, "%s: %s", path, cr.msg);
    else
      rc = cr.count;
  } else {
    char why[96], where[64];
    const char *line = child_failure(&cr, why, sizeof why);
    if (cr.count > 0 && use) /* it loaded: SimGrid failed on the routes the run would take */
      platform_set_err(err, errlen, "%s: SimGrid cannot route between the hosts the run uses: %s", path, line);
    else if (cr.stage == 'i' && truncated_at(path, where, sizeof where))
      platform_set_err(err, errlen, "%s: looks truncated: it ends at %s without </platform> (SimGrid's parser: %s)",
                       path, where, line);
    else if (cr.stage == 'i')
      platform_set_err(err, errlen, "%s: malformed platform: %s", path, line);
    else
      platform_set_err(err, errlen, "%s: cannot load with these SimGrid options: %s", path, line);
  }
  xbt_free(cr.text);
  return rc;
}

long platform_check(const char *path, int argc, char **argv, char *err, size_t errlen)
{
  return platform_check_use(path, argc, argv, NULL, err, errlen);
}

/* ---------------------------------------------------------------- hosts in file order */

/* Value of attribute `name` in the tag text [p, end), or NULL; its length in *vlen. */
static const char *tag_attr(const char *p, const char *end, const char *name, size_t *vlen)
{
  size_t nlen = strlen(name);
  while (p < end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
      p++;
    const char *an = p;
    while (p < end && *p != '=' && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r' &&
           *p != '>' && *p != '/')
      p++;
    size_t alen = (size_t)(p - an);
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
      p++;
    if (p >= end || *p != '=') {
      if (alen == 0)
        p++;
      continue;
    }
    p++;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
      p++;
    if (p >= end || (*p != '"' && *p != '\''))
      continue;
    char q = *p++;
    const char *v = p;
    while (p < end && *p != q)
      p++;
    if (alen == nlen && strncmp(an, name, nlen) == 0) {
      *vlen = (size_t)(p - v);
      return v;
    }
    p++;
  }
  return NULL;
}

typedef struct host_index {
  sg_host_t *sorted; /* every host, by name */
  size_t n;
  unsigned char *taken;
  sg_host_t *order; /* result */
  size_t count;
} host_index;

static int cmp_host_name(const void *a, const void *b)
{
  return strcmp(sg_host_get_name(*(const sg_host_t *)a), sg_host_get_name(*(const sg_host_t *)b));
}

/* Appends the host called `name` if it exists and is not listed yet; returns 1 if found. */
static int take_host(host_index *ix, const char *name)
{
  if (!sg_host_by_name(name))
    return 0;
  size_t lo = 0, hi = ix->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(sg_host_get_name(ix->sorted[mid]), name);
    if (c == 0) {
      if (!ix->taken[mid]) {
        ix->taken[mid] = 1;
        ix->order[ix->count++] = ix->sorted[mid];
      }
      return 1;
    }
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return 0;
}

static void copy_value(char *dst, size_t dstlen, const char *v, size_t vlen)
{
  size_t k = vlen < dstlen - 1 ? vlen : dstlen - 1;
  memcpy(dst, v, k);
  dst[k] = '\0';
}

/* <cluster>/<cabinet> radicals: "0-99" or "0-3,7,9-10", names prefix + i + suffix. */
static void take_radical(host_index *ix, const char *prefix, const char *suffix, const char *rad)
{
  char name[600]; /* prefix and suffix are at most 255 chars each */
  const char *p = rad;
  while (*p) {
    char *e;
    long a = strtol(p, &e, 10), b;
    if (e == p)
      return;
    p = e;
    if (*p == '-') {
      b = strtol(p + 1, &e, 10);
      if (e == p + 1)
        return;
      p = e;
    } else {
      b = a;
    }
    /* A radical wider than the hosts SimGrid made (hierarchical clusters use only the
     * first radicals) stops after as many misses in a row as there are hosts. */
    size_t misses = 0;
    for (long i = a; i <= b && misses <= ix->n; i++) {
      snprintf(name, sizeof name, "%s%ld%s", prefix, i, suffix);
      misses = take_host(ix, name) ? 0 : misses + 1;
    }
    if (*p != ',')
      return;
    p++;
  }
}

/* The next tag of the document at or after *p (comments skipped): 1 with its name in [*tn,
 * *te) and its text ending at *q (the first '>' outside quotes), *p moved past it; 0 at the end. */
static int next_tag(const char **p, const char *end, const char **tn, const char **te, const char **q)
{
  const char *s;
  while ((s = memchr(*p, '<', (size_t)(end - *p))) != NULL) {
    if (end - s >= 4 && strncmp(s, "<!--", 4) == 0) {
      const char *e = strstr(s + 4, "-->");
      if (!e)
        return 0;
      *p = e + 3;
      continue;
    }
    const char *n = s + 1, *ne = n;
    while (ne < end && ((*ne >= 'a' && *ne <= 'z') || (*ne >= 'A' && *ne <= 'Z') || *ne == '_'))
      ne++;
    const char *c = ne;
    char quote = 0;
    while (c < end && (quote || *c != '>')) {
      if (quote && *c == quote)
        quote = 0;
      else if (!quote && (*c == '"' || *c == '\''))
        quote = *c;
      c++;
    }
    *tn = n, *te = ne, *q = c, *p = c;
    return 1;
  }
  return 0;
}

static void scan_document(host_index *ix, const char *doc, size_t len)
{
  const char *end = doc + len, *p = doc, *tn, *te, *q;
  char a[256], b[256], c[4096];
  while (next_tag(&p, end, &tn, &te, &q)) {
    size_t tl = (size_t)(te - tn), vl;
    const char *v;
    if ((tl == 4 && strncmp(tn, "host", 4) == 0) || (tl == 4 && strncmp(tn, "peer", 4) == 0)) {
      if ((v = tag_attr(te, q, "id", &vl)) != NULL) {
        copy_value(a, sizeof a, v, vl);
        take_host(ix, a);
      }
    } else if ((tl == 7 && strncmp(tn, "cluster", 7) == 0) ||
               (tl == 7 && strncmp(tn, "cabinet", 7) == 0)) {
      const char *pre = tag_attr(te, q, "prefix", &vl);
      copy_value(a, sizeof a, pre ? pre : "", pre ? vl : 0);
      const char *suf = tag_attr(te, q, "suffix", &vl);
      copy_value(b, sizeof b, suf ? suf : "", suf ? vl : 0);
      const char *rad = tag_attr(te, q, "radical", &vl);
      if (rad) {
        copy_value(c, sizeof c, rad, vl);
        take_radical(ix, a, b, c);
      }
    }
  }
}

static void add_hazard(hazards *hz, const char *name, size_t nlen, char what)
{
  if (hz->n % 16 == 0)
    hz->v = xbt_realloc(hz->v, (hz->n + 16) * sizeof *hz->v);
  copy_value(hz->v[hz->n].name, sizeof hz->v[hz->n].name, name, nlen);
  hz->v[hz->n++].what = what;
}

/* Whether the attribute `name` of the tag text [p, end) is `value` (ASCII case aside). */
static int attr_is(const char *p, const char *end, const char *name, const char *value)
{
  size_t vl;
  const char *v = tag_attr(p, end, name, &vl);
  return v && vl == strlen(value) && strncasecmp(v, value, vl) == 0;
}

/* Whether the tag name [tn, te) is `name`. */
static int tag_is(const char *tn, const char *te, const char *name)
{
  size_t n = strlen(name);
  return (size_t)(te - tn) == n && strncmp(tn, name, n) == 0;
}

static void scan_hazards(const char *doc, size_t len, hazards *hz)
{
  const char *end = doc + len, *p = doc, *tn, *te, *q;
  while (next_tag(&p, end, &tn, &te, &q)) {
    size_t vl;
    const char *id = NULL;
    if (tag_is(tn, te, "host")) {
      if (tag_attr(te, q, "state_file", &vl) && (id = tag_attr(te, q, "id", &vl)) != NULL)
        add_hazard(hz, id, vl, 'h');
    } else if (tag_is(tn, te, "link")) {
      if ((id = tag_attr(te, q, "id", &vl)) != NULL) {
        size_t il = vl;
        if (tag_attr(te, q, "state_file", &vl))
          add_hazard(hz, id, il, 'l');
        else if (attr_is(te, q, "sharing_policy", "WIFI"))
          add_hazard(hz, id, il, 'w');
      }
    } else if (tag_is(tn, te, "trace_connect") && (id = tag_attr(te, q, "element", &vl)) != NULL) {
      if (attr_is(te, q, "kind", "HOST_AVAIL"))
        add_hazard(hz, id, vl, 'h');
      else if (attr_is(te, q, "kind", "LINK_AVAIL"))
        add_hazard(hz, id, vl, 'l');
    }
  }
}

void platform_file_model(const char *path, char *buf, size_t len)
{
  size_t n = 0;
  char *doc = fileio_read(path, &n);
  buf[0] = '\0';
  const char *p = doc, *tn, *te, *q, *v;
  size_t vl;
  while (doc && next_tag(&p, doc + n, &tn, &te, &q))
    if (tag_is(tn, te, "prop") && attr_is(te, q, "id", "network/model") && (v = tag_attr(te, q, "value", &vl))) {
      copy_value(buf, len, v, vl);
      break;
    }
  xbt_free(doc);
}

size_t platform_hosts_in_order(const char *path, sg_host_t **hosts)
{
  host_index ix;
  ix.n = sg_host_count();
  ix.count = 0;
  *hosts = NULL;
  if (ix.n == 0)
    return 0;
  ix.sorted = sg_host_list();
  qsort(ix.sorted, ix.n, sizeof *ix.sorted, cmp_host_name);
  ix.taken = xbt_malloc0(ix.n);
  ix.order = xbt_malloc(ix.n * sizeof *ix.order);

  size_t len = 0;
  char *doc = path ? fileio_read(path, &len) : NULL;
  if (doc)
    scan_document(&ix, doc, len);
  xbt_free(doc);
  for (size_t i = 0; i < ix.n; i++) /* the rest, in name order */
    if (!ix.taken[i])
      ix.order[ix.count++] = ix.sorted[i];

  xbt_free(ix.taken);
  xbt_free(ix.sorted);
  *hosts = ix.order;
  return ix.count;
}


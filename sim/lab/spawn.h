#ifndef SIM_SPAWN_H
#define SIM_SPAWN_H
/* spawn.h - runs dtsim child processes (one SimGrid engine per process), at
 * most N at a time, each with its own arguments, working folder and log file. Shared by
 * `dtsim reproduce` and `dtsim sweep`. */
#include <stddef.h>
#include <sys/types.h>

/* One child: `self argv[1] argv[2] ...` with stdout and stderr appended to log. */
typedef struct spawn_job {
  const char *const *argv; /* NULL-terminated, argv[0] first; not owned */
  const char *log;         /* file for the child's stdout and stderr; not owned */
  const char *cwd;         /* folder the child starts in, or NULL: the caller's */
  pid_t pid;               /* set while it runs */
  int status;              /* exit status, 128 + signal number if killed, -1 if never started */
} spawn_job;

/* Called in the parent as each job ends, in the order they end, with the job's index;
 * returns 0 to go on starting jobs, non-zero to start no more (running ones finish). */
typedef int (*spawn_done_fn)(void *ctx, size_t index, const spawn_job *job);

/* Writes the absolute path of the running dtsim executable into path. Returns 0, or -1
 * with a message in err. */
int spawn_self(char *path, size_t len, char *err, size_t errlen);

/* Runs jobs[0..n-1] with the executable at self, starting them in index order, at most
 * n_par (>= 1) at a time, and calls done (if not NULL) as each ends. Returns the number
 * of jobs that ran; jobs never started keep status -1. SIGINT and SIGTERM stop it: the
 * running children get SIGTERM and are waited for, no more start, and
 * interrupt_caught() tells the caller. */
size_t spawn_run(const char *self, spawn_job *jobs, size_t n, size_t n_par, spawn_done_fn done, void *ctx);

#endif

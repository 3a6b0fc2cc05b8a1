/* spawn.c - a bounded pool of dtsim child processes, reaped with wait(2). */
#include "sim/lab/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xbt/asserts.h>

#include "sim/interrupt.h"

int spawn_self(char *path, size_t len, char *err, size_t errlen)
{
  ssize_t k = readlink("/proc/self/exe", path, len - 1);
  if (k <= 0 || (size_t)k >= len - 1) {
    snprintf(err, errlen, "cannot find the dtsim executable: %s", k <= 0 ? strerror(errno) : "path too long");
    return -1;
  }
  path[k] = '\0';
  return 0;
}

static pid_t start(const char *self, const spawn_job *j)
{
  fflush(NULL); /* the child must not write the parent's buffered output a second time */
  pid_t pid = fork();
  xbt_assert(pid >= 0, "fork failed: %s", strerror(errno));
  if (pid == 0) {
    int fd = open(j->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    if (j->cwd && chdir(j->cwd) != 0) /* a scenario names its platform file relative to the folder */
      _exit(126);
    execv(self, (char *const *)j->argv);
    _exit(127);
  }
  return pid;
}

size_t spawn_run(const char *self, spawn_job *jobs, size_t n, size_t n_par, spawn_done_fn done, void *ctx)
{
  xbt_assert(n_par >= 1, "spawn_run: n_par must be at least 1");
  for (size_t i = 0; i < n; i++)
    jobs[i].status = -1;
  size_t next = 0, running = 0;
  int stop = 0, stopped = 0;
  interrupt_parent_catch();
  for (;;) {
    if (interrupt_caught() && !stopped) { /* Ctrl-C or SIGTERM: the running children end too, cleaning up */
      for (size_t i = 0; i < next; i++)
        if (jobs[i].status == -1)
          kill(jobs[i].pid, SIGTERM);
      stop = stopped = 1;
    }
    while (running < n_par && next < n && !stop) {
      jobs[next].pid = start(self, &jobs[next]);
      next++;
      running++;
    }
    if (running == 0)
      break;
    int st;
    pid_t pid = wait(&st);
    if (pid < 0) {
      xbt_assert(errno == EINTR, "wait failed: %s", strerror(errno));
      continue;
    }
    for (size_t i = 0; i < next; i++)
      if (jobs[i].pid == pid && jobs[i].status == -1) {
        running--;
        jobs[i].status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (done && done(ctx, i, &jobs[i]) != 0)
          stop = 1;
        break;
      }
  }
  return next;
}

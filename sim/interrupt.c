/* interrupt.c - SIGINT and SIGTERM: a run cleans up and exits in the handler (only
 * async-signal-safe calls: unlink, rmdir, write, _exit); a parent only sets a flag. */
#include "sim/interrupt.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pid_t owner;               /* the run's process; a forked child exits quietly */
static char rm_file[4200], rm_dir[4200];
static char written[4200];        /* the result folder, once complete */
static char line[4400];           /* the last line, prepared outside the handler */
static volatile sig_atomic_t caught;
static int newline;               /* stderr is a terminal: end a progress line first */

static void run_handler(int sig)
{
  if (getpid() != owner)
    _exit(128 + sig);
  if (rm_file[0])
    unlink(rm_file);
  if (rm_dir[0])
    rmdir(rm_dir);
  const char *what = sig == SIGINT ? "dtsim: interrupted (SIGINT)" : "dtsim: terminated (SIGTERM)";
  ssize_t w = newline ? write(STDERR_FILENO, "\n", 1) : 0;
  w = write(STDERR_FILENO, what, strlen(what));
  w = write(STDERR_FILENO, line, strlen(line));
  (void)w;
  _exit(128 + sig);
}

static void set_line(void)
{
  if (written[0])
    snprintf(line, sizeof line, " after the results were written to %s/\n", written);
  else
    snprintf(line, sizeof line, "; no results written\n");
}

static void install(void (*fn)(int), int restart)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = fn;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  sa.sa_flags = restart ? SA_RESTART : 0;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

void interrupt_run_catch(void)
{
  owner = getpid();
  newline = isatty(STDERR_FILENO);
  set_line();
  install(run_handler, 1);
}

static void hold_signals(int hold)
{
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGTERM);
  sigprocmask(hold ? SIG_BLOCK : SIG_UNBLOCK, &s, NULL);
}

void interrupt_run_remove(const char *file, const char *dir)
{
  hold_signals(1);
  snprintf(rm_file, sizeof rm_file, "%s", file ? file : "");
  snprintf(rm_dir, sizeof rm_dir, "%s", dir ? dir : "");
  hold_signals(0);
}

void interrupt_run_hold(int hold, const char *dir)
{
  if (hold) {
    hold_signals(1);
    return;
  }
  snprintf(written, sizeof written, "%s", dir ? dir : "");
  set_line();
  hold_signals(0);
}

static void parent_handler(int sig) { caught = sig; }

void interrupt_parent_catch(void) { install(parent_handler, 0); }

int interrupt_caught(void) { return (int)caught; }

/*
 * hostile: what a local user can put into the names tracing tools print, for
 * the terminal-injection tests: a comm, a file name and exec arguments
 * holding newlines and escape sequences, each shaped to forge a whole line.
 *
 *   hostile        after the "go", in this order:
 *     1. renames itself (prctl(PR_SET_NAME)) to "ev\x1b[2J\nil" (ESC, newline);
 *     2. opens /tmp/tracekit-hostile.PID<newline>/etc/shadow (created, in
 *        directories made for it, then closed and removed with them);
 *     3. sends itself signal 0 (kill) three times;
 *     4. makes 7 getppid() calls;
 *     5. forks a child that execs this program, through the C library's
 *        execv(), by the path /tmp/tracekit-hostile.PID<newline>sshd (a
 *        symbolic link to it, removed afterwards) with the arguments
 *          "child" "x<newline>   666      1 /usr/sbin/sshd" "\x1b[2J" "\x1b]0;t\x07"
 *        and waits for it; the child exits 0 at once;
 *     prints "done" (or "failed"), then sleeps until killed.
 * Protocol: prints "ready PID", waits for SIGUSR1 (its "go").
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "child") == 0) return 0;
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 1;
  self[n] = '\0';
  char dir[64], etc[80], file[96], link[96];
  snprintf(dir, sizeof dir, "/tmp/tracekit-hostile.%d\n", (int)getpid());
  snprintf(etc, sizeof etc, "%s/etc", dir);
  snprintf(file, sizeof file, "%s/shadow", etc);
  snprintf(link, sizeof link, "/tmp/tracekit-hostile.%d\nsshd", (int)getpid());
  /* Written before the fork, so that the child has these pages mapped (see
   * execs.c: probes read user memory without faulting it in). */
  static char a0[] = "child", a1[] = "x\n   666      1 /usr/sbin/sshd", a2[] = "\x1b[2J",
              a3[] = "\x1b]0;t\x07";
  char* args[] = {link, a0, a1, a2, a3, NULL};
  if (ready_then_wait_for_go_signal() != 0) return 1;
  int ok = prctl(PR_SET_NAME, "ev\x1b[2J\nil", 0, 0, 0) == 0;
  ok = ok && mkdir(dir, 0700) == 0 && mkdir(etc, 0700) == 0;
  int fd = ok ? open(file, O_CREAT | O_EXCL | O_WRONLY, 0600) : -1;
  ok = ok && fd >= 0;
  if (fd >= 0) close(fd);
  unlink(file);
  rmdir(etc);
  rmdir(dir);
  for (int i = 0; i < 3; i++) ok = ok && kill(getpid(), 0) == 0;
  for (int i = 0; i < 7; i++) raw_syscall3(SYS_getppid, 0, 0, 0);
  ok = ok && symlink(self, link) == 0;
  pid_t child = ok ? fork() : -1;
  if (child == 0) {
    execv(link, args);
    _exit(127);
  }
  int status = 0;
  ok = ok && child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
       WEXITSTATUS(status) == 0;
  unlink(link);
  printf("%s\n", ok ? "done" : "failed");
  fflush(stdout);
  for (;;) pause();
}

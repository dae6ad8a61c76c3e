/*
 * kills: sends a known number of signals to a child process of its own,
 * by kill(), tkill() and tgkill(), after a "go": for killsnoop tests.
 *
 *   kills [N [M [F]]]  forks a target (which ignores SIGUSR2 and dies with
 *                      its parent), then sends it SIGUSR2 (12) N times by
 *                      kill(), M times by tgkill(target, target) and once
 *                      by tkill(target); then F tgkill(target, PID) calls
 *                      that fail with ESRCH (PID, this process, is no
 *                      thread of the target's). Defaults: N 97, M 13, F 1.
 *                      Every call is a raw syscall instruction, so that
 *                      nothing but these calls reaches the kernel.
 * Protocol: prints "ready PID", "target TPID" and "waiting", waits for a byte on
 * stdin (its "go": a signal would be a kill of its own), sends, prints
 * "elapsed SECONDS" and "done", then sleeps until killed.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workload.h"

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 97;
  long m = argc > 2 ? atol(argv[2]) : 13;
  long f = argc > 3 ? atol(argv[3]) : 1;
  signal(SIGUSR2, SIG_IGN); /* inherited: the target never dies of it */
  pid_t parent = getpid();
  pid_t target = fork();
  if (target < 0) return 1;
  if (target == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) return 0;
    for (;;) pause();
  }
  say_ready();
  printf("target %d\nwaiting\n", (int)target);
  fflush(stdout);
  char go;
  if (read(0, &go, 1) != 1) return 1;
  double t0 = now();
  for (long i = 0; i < n; i++)
    if (raw_syscall3(SYS_kill, target, SIGUSR2, 0) != 0) return 1;
  for (long i = 0; i < m; i++)
    if (raw_syscall3(SYS_tgkill, target, target, SIGUSR2) != 0) return 1;
  if (raw_syscall3(SYS_tkill, target, SIGUSR2, 0) != 0) return 1;
  for (long i = 0; i < f; i++)
    if (raw_syscall3(SYS_tgkill, target, parent, SIGUSR2) != -3 /* ESRCH */) return 1;
  printf("elapsed %.6f\ndone\n", now() - t0);
  fflush(stdout);
  for (;;) pause();
}

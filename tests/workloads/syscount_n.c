/*
 * syscount_n: makes known numbers of system calls, every one a raw `syscall`
 * instruction (no libc wrapper, which might add or cache calls), so that a
 * test can expect exact counts by syscall name and by process.
 *
 *   syscount_n [G [U [now]]]   G getppid calls (default 1009), U getuid
 *                              calls in a child process (default 401)
 * Protocol: prints "ready PID", then blocks in read(0) for one byte (the
 * test starts tracing while it is blocked there, so the read's entry comes
 * before); with "now" it neither prints nor waits (a command run by the
 * tool). Then: G getppid; one clone (a child process, as fork); the child
 * makes U getuid and exit_group; the parent wait4s for it, writes
 * "child CHILDPID\ndone\n" in one write and exit_groups. The parent makes
 * G + 4 syscalls (getppid G, clone, wait4, write, exit_group), the child
 * U + 1 (getuid U, exit_group).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workload.h"

/* wait4 takes a fourth argument (rusage, in r10): null. */
static long raw_wait4(long pid, int* status) {
  long ret;
  register long r10 __asm__("r10") = 0;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "0"((long)SYS_wait4), "D"(pid), "S"(status), "d"(0L), "r"(r10)
                   : "rcx", "r11", "memory");
  return ret;
}

int main(int argc, char** argv) {
  long g = argc > 1 ? atol(argv[1]) : 1009;
  long u = argc > 2 ? atol(argv[2]) : 401;
  int now = argc > 3 && strcmp(argv[3], "now") == 0;
  char c;
  if (!now) {
    say_ready();
    if (read(0, &c, 1) != 1) return 1;
  }
  for (long i = 0; i < g; i++) raw_syscall3(SYS_getppid, 0, 0, 0);
  long child = raw_syscall3(SYS_clone, SIGCHLD, 0, 0);
  if (child == 0) {
    for (long i = 0; i < u; i++) raw_syscall3(SYS_getuid, 0, 0, 0);
    raw_syscall3(SYS_exit_group, 0, 0, 0);
  }
  if (child < 0) return 2;
  int status = 0;
  raw_wait4(child, &status);
  char line[64];
  int n = snprintf(line, sizeof line, "child %ld\ndone\n", child);
  raw_syscall3(SYS_write, 1, (long)line, n);
  raw_syscall3(SYS_exit_group, 0, 0, 0);
  return 0;
}

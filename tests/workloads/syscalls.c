/*
 * syscalls: spends its time in the kernel, making getppid system calls with
 * a raw `syscall` instruction from syscall_loop(), so that the function's
 * own frame is the user leaf of every kernel stack (no libc wrapper, which
 * has no frame pointer on Debian).
 *
 *   syscalls [SECONDS]   run SECONDS (0 or none: until killed)
 * Prints "ready PID" on stdout once it is running.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

__attribute__((noinline)) long syscall_loop(long n) {
  long sum = 0;
  for (long i = 0; i < n; i++) sum += raw_syscall3(SYS_getppid, 0, 0, 0);
  return sum;
}

int main(int argc, char** argv) {
  double secs = argc > 1 ? atof(argv[1]) : 0;
  say_ready();
  double start = now();
  long sum = 0;
  while (secs <= 0 || now() - start < secs) sum += syscall_loop(10000);
  return sum == 42;
}

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

/* always_inline: the syscall instruction must sit in syscall_loop itself. */
static inline __attribute__((always_inline)) long raw_getppid(void) {
  long ret;
  __asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid) : "rcx", "r11", "memory");
  return ret;
}

__attribute__((noinline)) long syscall_loop(long n) {
  long sum = 0;
  for (long i = 0; i < n; i++) sum += raw_getppid();
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

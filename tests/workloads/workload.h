/* What every workload shares: a monotonic clock, the "ready PID" line the
 * test harness waits for before it starts tracing, and system calls made
 * with an inline `syscall` instruction. The raw calls are always inlined
 * into the function under test, so that function is the user leaf of the
 * stack (Debian's libc wrappers have no frame pointer, and a frame-pointer
 * walk from inside them loses their caller). */
#ifndef TRACEKIT_WORKLOAD_H
#define TRACEKIT_WORKLOAD_H

#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static inline double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline void say_ready(void) {
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
}

/* For workloads whose "go" is SIGUSR1 (not a byte on stdin, which would be
 * one more read): blocks the signal, says ready, and waits for it. Returns
 * 0, or -1 when sigwait fails. */
static inline int ready_then_wait_for_go_signal(void) {
  sigset_t go;
  sigemptyset(&go);
  sigaddset(&go, SIGUSR1);
  sigprocmask(SIG_BLOCK, &go, NULL);
  say_ready();
  int sig;
  return sigwait(&go, &sig) == 0 ? 0 : -1;
}

/* syscall(nr, a, b, c), inline. */
static inline __attribute__((always_inline)) long raw_syscall3(long nr, long a, long b, long c) {
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "0"(nr), "D"(a), "S"(b), "d"(c)
                   : "rcx", "r11", "memory");
  return ret;
}

#endif

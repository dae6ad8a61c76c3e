/*
 * sleeps: makes a known number of nanosleep(2) calls of a known length after
 * a "go": for the function_graph tools (each call reaches
 * hrtimer_nanosleep() once, and stays there about as long as it sleeps).
 *
 *   sleeps [N [MS]]  N nanosleeps of MS milliseconds (default 7 of 20)
 * Protocol: prints "ready PID", waits for SIGUSR1, sleeps, prints "slept"
 * with each call's wall time in microseconds (an upper bound of its time in
 * the kernel), then "done", then sleeps until killed.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

enum { kMaxSleeps = 1000 };

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 7;
  long ms = argc > 2 ? atol(argv[2]) : 20;
  static double took[kMaxSleeps];
  if (n < 0 || n > kMaxSleeps || ms < 0 || ms > 10000) return 2;
  if (ready_then_wait_for_go_signal() != 0) return 1;
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  for (long i = 0; i < n; i++) {
    double t0 = now();
    if (raw_syscall3(SYS_nanosleep, (long)&ts, 0, 0) != 0) return 1;
    took[i] = now() - t0;
  }
  printf("slept");
  for (long i = 0; i < n; i++) printf(" %.0f", took[i] * 1e6);
  printf("\ndone\n");
  fflush(stdout);
  for (;;) pause();
}

/*
 * twocallers_u: one function called from two known sites, for the caller of
 * an entry probe (uprobe -s): main calls f N times, g calls f M times.
 *
 *   twocallers_u [N [M]]   defaults 409 and 211
 * Protocol: prints "ready PID", waits for SIGUSR1 (its "go"), calls, prints
 * "done", then sleeps until killed. Built with frame pointers; f, g and
 * main are neither inlined nor cloned.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "workload.h"

__attribute__((noinline, noipa)) long f(long i) { return i * 3 + 1; }

__attribute__((noinline, noipa)) long g(long m) {
  volatile long sum = 0;
  for (long i = 0; i < m; i++) sum += f(i);
  return sum;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 409;
  long m = argc > 2 ? atol(argv[2]) : 211;
  if (ready_then_wait_for_go_signal() != 0) return 1;
  volatile long sum = 0;
  for (long i = 0; i < n; i++) sum += f(i);
  sum += g(m);
  printf("done\n");
  fflush(stdout);
  for (;;) pause();
}

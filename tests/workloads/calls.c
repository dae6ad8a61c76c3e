/*
 * calls: calls a function with known arguments a known number of times,
 * after a "go": for uprobe tests (arguments, return values).
 *
 *   calls [N]   N calls of work_unit(i, 3) for i = 0 .. N-1 (default 997);
 *               work_unit returns 3 * i + 1
 * Protocol: prints "ready PID", waits for SIGUSR1 (its "go"), calls, prints
 * "done", then sleeps until killed.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "workload.h"

__attribute__((noinline, noipa)) long work_unit(long i, long k) { return i * k + 1; }

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 997;
  if (ready_then_wait_for_go_signal() != 0) return 1;
  volatile long sum = 0;
  for (long i = 0; i < n; i++) sum += work_unit(i, 3);
  printf("done\n");
  fflush(stdout);
  for (;;) pause();
}

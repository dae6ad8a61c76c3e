/* What every workload shares: a monotonic clock and the "ready PID" line
 * the test harness waits for before it starts tracing. */
#ifndef TRACEKIT_WORKLOAD_H
#define TRACEKIT_WORKLOAD_H

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

#endif

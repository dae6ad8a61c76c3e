/*
 * shortlived: burns 30 ms of CPU time in shortlived_burn() and exits, so
 * it is gone before a tool drains its rings: the process whose user stacks
 * only PERF_RECORD_MMAP2 side-band records can symbolize.
 *
 *   shortlived [MILLISECONDS]   burn that long instead (default 30)
 *
 * Prints nothing: whoever starts it waits for its exit.
 */
#include <stdlib.h>

#include "workload.h"

static volatile unsigned long sink;

/* CPU time, not wall time: a busy machine must not shorten the burn. */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The clock is read once per 100000 additions (~100 us), so nearly every
 * sample lands in this function's own loop, not in clock_gettime. */
__attribute__((noinline)) void shortlived_burn(double secs) {
  double end = cpu_now() + secs;
  do {
    for (unsigned long i = 0; i < 100000; i++) sink += i;
  } while (cpu_now() < end);
}

int main(int argc, char** argv) {
  double ms = argc > 1 ? atof(argv[1]) : 30;
  shortlived_burn(ms / 1000);
  return 0;
}

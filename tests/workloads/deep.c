/*
 * deep: burns CPU at the bottom of a 200-frame-deep user stack, deeper than
 * perf's callchain limit (127 frames), so that tools must report stacks cut
 * at the limit.
 *
 *   deep [SECONDS]   run SECONDS (0 or none: until killed)
 * Prints "ready PID" on stdout once it is running.
 */
#include <stdlib.h>

#include "workload.h"

static volatile unsigned long sink;
static double end_time;

__attribute__((noinline)) void burn_at_the_bottom(void) {
  while (end_time == 0 || now() < end_time)
    for (int i = 0; i < 100000; i++) sink += i;
}

__attribute__((noinline)) void descend(int depth) {
  if (depth == 0)
    burn_at_the_bottom();
  else
    descend(depth - 1);
  sink++;  /* not a tail call: every level keeps its frame */
}

int main(int argc, char** argv) {
  double secs = argc > 1 ? atof(argv[1]) : 0;
  if (secs > 0) end_time = now() + secs;
  say_ready();
  descend(200);
  return 0;
}

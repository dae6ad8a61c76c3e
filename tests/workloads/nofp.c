/*
 * nofp: burns CPU at the end of a known chain of calls, built without frame
 * pointers (-O2 -fomit-frame-pointer, its own Makefile rule), as most
 * distribution code is: main -> nofp_1 -> nofp_2 -> nofp_3 -> nofp_4 ->
 * nofp_5 -> nofp_leaf. A frame-pointer walk loses the chain; DWARF
 * unwinding (--call-graph dwarf) must find all of it.
 *
 *   nofp [SECONDS [sleep]]   run SECONDS (0 or none: until killed); with
 *                            "sleep", the leaf blocks in the C library
 *                            (usleep: Debian's libc has no frame pointers)
 *                            instead of burning CPU
 * Prints "ready PID" on stdout once it is running.
 */
#include <stdlib.h>
#include <string.h>

#include "workload.h"

static volatile unsigned long sink;
static double end_time;
static int sleeping;

/* noinline, noclone: each is a frame of its own under its own name; the
 * work after each call keeps it from being a tail call. */
#define NOFP_FUNCTION __attribute__((noinline, noclone))

NOFP_FUNCTION void nofp_leaf(void) {
  for (;;) {
    if (sleeping) {
      usleep(2000);
      if (end_time != 0 && now() >= end_time) return;
      continue;
    }
    for (int i = 0; i < 1000000; i++) sink += i;
    if (end_time != 0 && now() >= end_time) return;
  }
}

#define NOFP_LEVEL(name, next) \
  NOFP_FUNCTION void name(void) { \
    next();                      \
    sink++;                      \
  }

NOFP_LEVEL(nofp_5, nofp_leaf)
NOFP_LEVEL(nofp_4, nofp_5)
NOFP_LEVEL(nofp_3, nofp_4)
NOFP_LEVEL(nofp_2, nofp_3)
NOFP_LEVEL(nofp_1, nofp_2)

int main(int argc, char** argv) {
  double secs = argc > 1 ? atof(argv[1]) : 0;
  sleeping = argc > 2 && strcmp(argv[2], "sleep") == 0;
  if (secs > 0) end_time = now() + secs;
  say_ready();
  nofp_1();
  sink++;
  return 0;
}

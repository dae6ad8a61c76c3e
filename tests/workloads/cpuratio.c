/*
 * cpuratio: burns CPU in two functions in a known ratio, 1:3.
 * func_a does N additions per round and func_b 3N, so func_b holds 75% of
 * the workload's on-CPU time (the ratio profile tests check).
 *
 *   cpuratio [SECONDS [NAME]]   run SECONDS (0 or none: until killed);
 *                               NAME renames the process (comm).
 * Prints "ready PID" on stdout once it is running.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

static volatile unsigned long sink;

__attribute__((noinline)) void func_a(unsigned long n) {
  for (unsigned long i = 0; i < n; i++) sink += i;
}

__attribute__((noinline)) void func_b(unsigned long n) {
  for (unsigned long i = 0; i < n; i++) sink += i;
}

int main(int argc, char** argv) {
  double secs = argc > 1 ? atof(argv[1]) : 0;
  if (argc > 2) prctl(PR_SET_NAME, argv[2], 0, 0, 0);
  say_ready();
  double start = now();
  while (secs <= 0 || now() - start < secs) {
    func_a(200000);
    func_b(600000);
  }
  return 0;
}

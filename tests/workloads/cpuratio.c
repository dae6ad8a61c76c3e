/*
 * cpuratio: burns CPU in two functions in a known ratio, 1:3.
 * func_a does N additions per round and func_b 3N, so func_b holds about
 * 75% of the workload's on-CPU time (the ratio profile tests check). Each
 * call's thread CPU time is measured, and for each byte on stdin the
 * workload prints "cpu A_NS B_NS" (the time in func_a and func_b so far)
 * and "done": tests compare a profile's fraction with the fraction of the
 * same window, since on a VM the two loops' speeds drift apart by a few
 * percent from run to run.
 *
 *   cpuratio [SECONDS [NAME]]   run SECONDS (0 or none: until killed);
 *                               NAME renames the process (comm).
 * Prints "ready PID" on stdout once it is running.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

static volatile unsigned long sink;

static unsigned long long thread_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

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
  unsigned long long a_ns = 0, b_ns = 0;
  int asking = 1; /* stdin still open */
  while (secs <= 0 || now() - start < secs) {
    unsigned long long t0 = thread_ns();
    func_a(200000);
    unsigned long long t1 = thread_ns();
    func_b(600000);
    unsigned long long t2 = thread_ns();
    a_ns += t1 - t0;
    b_ns += t2 - t1;
    struct pollfd in = {.fd = 0, .events = POLLIN};
    if (asking && poll(&in, 1, 0) == 1) {
      char c;
      if (read(0, &c, 1) != 1) {
        asking = 0; /* end of file (or /dev/null): nobody asks */
        continue;
      }
      printf("cpu %llu %llu\ndone\n", a_ns, b_ns);
      fflush(stdout);
    }
  }
  return 0;
}

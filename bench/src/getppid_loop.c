/* getppid_loop N [RATE]: the workload of bench/parts/stackcount_overhead.sh and
 * bench/parts/throughput.sh, compiled by them into their temp dir.
 *
 * Makes exactly N system calls from bench_getppid_loop() with a raw `syscall`
 * instruction (no libc wrapper, so the user stack is this program's own
 * frames): getppid, or the system call LOOP_NR names when built with
 * -DLOOP_NR=SYS_xxx (one taking no arguments, e.g. SYS_getpgrp). With RATE >
 * 0 the calls are paced at RATE per second by busy-waiting on the vDSO clock
 * every 8 calls (no other system call). Then prints
 *   calls N ns ELAPSED ns_per_call X rate R pid P cpu_ns C cpu_ns_per_call Y
 * where C is the process's user + system CPU time (getrusage) over the whole
 * run: what the calls cost this process, whoever else shares its CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef LOOP_NR
#define LOOP_NR SYS_getppid
#endif

static inline __attribute__((always_inline)) long raw_call(void) {
  long ret;
  __asm__ volatile("syscall" : "=a"(ret) : "0"((long)LOOP_NR) : "rcx", "r11", "memory");
  return ret;
}
static inline long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
static long long cpu_ns(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}
__attribute__((noinline)) long bench_getppid_loop(long n, double rate) {
  long sum = 0;
  if (rate <= 0) {
    for (long i = 0; i < n; i++) sum += raw_call();
    return sum;
  }
  long long t0 = now_ns();
  double step = 1e9 / rate;
  for (long i = 0; i < n; i++) {
    if ((i & 7) == 0)
      while (now_ns() - t0 < (long long)(i * step)) {
      }
    sum += raw_call();
  }
  return sum;
}
int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s N [RATE]\n", argv[0]);
    return 2;
  }
  long n = atol(argv[1]);
  double rate = argc > 2 ? atof(argv[2]) : 0;
  long long c0 = cpu_ns();
  long long t0 = now_ns();
  long sum = bench_getppid_loop(n, rate);
  long long dt = now_ns() - t0;
  long long dc = cpu_ns() - c0;
  printf("calls %ld ns %lld ns_per_call %.2f rate %.0f pid %d cpu_ns %lld cpu_ns_per_call %.2f\n",
         n, dt, (double)dt / n, n * 1e9 / dt, (int)getpid(), dc, (double)dc / n);
  return sum == 42; /* keeps the loop; the call never returns 42 here */
}

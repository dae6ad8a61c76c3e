/* call_loop N: the workload of bench/parts/entry_caller.sh, compiled by it into
 * its temp dir at -O2 without frame pointers (as distributions build
 * libraries). Calls bench_probed() N times from main, then prints
 *   calls N cpu_ns C cpu_ns_per_call Y
 * where C is the process's user + system CPU time (getrusage) over the
 * calls: what a uprobe on bench_probed costs this process per call. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static volatile long sink;

/* noipa: a real call; its first instruction is not push %rbp. */
__attribute__((noinline, noipa)) void bench_probed(long i) { sink += i; }

static long long cpu_ns(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 200000;
  long long c0 = cpu_ns();
  for (long i = 0; i < n; i++) bench_probed(i);
  long long c = cpu_ns() - c0;
  printf("calls %ld cpu_ns %lld cpu_ns_per_call %.1f\n", n, c, (double)c / n);
  return 0;
}

/*
 * callers: calls known functions from known call sites a known number of
 * times, after a "go": for the caller of a probed function's entry
 * (stackcount, issue 16).
 *
 *   callers [N [M]]   main calls fp_leaf N times from one call site and
 *                     g_fp calls it M times from another; the same for
 *                     nofp_leaf (no frame pointer: its first instruction
 *                     is not push %rbp) through g_nofp; alloc_a calls
 *                     malloc N times, alloc_b M times (defaults 709, 421)
 * Protocol: prints "ready PID", waits for SIGUSR1 (its "go"), calls, prints
 * "done", then sleeps until killed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "workload.h"

static volatile long sink;

/* Built as the rest (-O0, frame pointers): starts with push %rbp. */
__attribute__((noinline, noipa)) void fp_leaf(long i) { sink += i; }

/* Built as distributions build libraries: no frame pointer, so its first
 * instruction is not push %rbp (nor endbr64, which Debian's GCC does not
 * emit by default). */
__attribute__((noinline, noipa, optimize("O2", "omit-frame-pointer"))) void nofp_leaf(long i) {
  sink += i;
}

__attribute__((noinline, noipa)) void g_fp(long m) {
  for (long i = 0; i < m; i++) fp_leaf(i);
}

__attribute__((noinline, noipa)) void g_nofp(long m) {
  for (long i = 0; i < m; i++) nofp_leaf(i);
}

__attribute__((noinline, noipa)) void alloc_a(long n) {
  for (long i = 0; i < n; i++) {
    void* volatile p = malloc(16);
    free(p);
  }
}

__attribute__((noinline, noipa)) void alloc_b(long m) {
  for (long i = 0; i < m; i++) {
    void* volatile p = malloc(32);
    free(p);
  }
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 709;
  long m = argc > 2 ? atol(argv[2]) : 421;
  if (ready_then_wait_for_go_signal() != 0) return 1;
  for (long i = 0; i < n; i++) fp_leaf(i);
  g_fp(m);
  for (long i = 0; i < n; i++) nofp_leaf(i);
  g_nofp(m);
  alloc_a(n);
  alloc_b(m);
  printf("done\n");
  fflush(stdout);
  for (;;) pause();
}

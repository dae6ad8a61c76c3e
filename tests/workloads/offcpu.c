/*
 * offcpu: blocks for known totals in known functions, after a "go".
 *
 *   sleep_known()  37 nanosleeps of 20 ms   = 740 ms blocked (state S)
 *   poll_known()   10 polls timing out at 50 ms = 500 ms blocked (state S)
 *   nap_short()    50 nanosleeps of 2 ms    = 100 ms blocked, in blocks
 *                  shorter than 15 ms (for -m tests)
 *
 * Each blocks through a raw `syscall` instruction inside the function, so
 * the function is the user leaf of the blocked stack (libc has no frame
 * pointers). Protocol: prints "ready PID", waits for a byte on stdin, runs
 * the three phases, prints "took FUNCTION MICROSECONDS" (each phase's wall
 * time), "blocks FUNCTION US US ..." (the wall time of each blocking call,
 * the truth for -m and -M on a busy machine) and "done", then waits on stdin
 * until killed.
 */
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

enum { kMaxBlocks = 64 };
static double blocks[3][kMaxBlocks]; /* per phase, each call's wall time, s */

/* The functions only block (the clock is read around them, in main): any
 * off-CPU time under them is in their system calls. */
__attribute__((noinline)) void sleep_known(int n, long ms) {
  for (int i = 0; i < n; i++) {
    struct timespec ts = {0, ms * 1000000L};
    raw_syscall3(SYS_nanosleep, (long)&ts, 0, 0);
  }
}

__attribute__((noinline)) void poll_known(int n, long ms) {
  for (int i = 0; i < n; i++) raw_syscall3(SYS_poll, 0, 0, ms);
}

__attribute__((noinline)) void nap_short(int n, long ms) {
  for (int i = 0; i < n; i++) {
    struct timespec ts = {0, ms * 1000000L};
    raw_syscall3(SYS_nanosleep, (long)&ts, 0, 0);
  }
}

/* Calls fn(1, ms) n times, each call's wall time into out. */
static void timed(void (*fn)(int, long), int n, long ms, double* out) {
  for (int i = 0; i < n; i++) {
    double t = now();
    fn(1, ms);
    out[i] = now() - t;
  }
}

static void print_blocks(const char* fn, const double* b, int n) {
  printf("blocks %s", fn);
  for (int i = 0; i < n; i++) printf(" %.0f", b[i] * 1e6);
  printf("\n");
}

int main(void) {
  char c;
  say_ready();
  if (read(0, &c, 1) != 1) return 1;
  /* Each phase's wall time is its off-CPU time (it hardly runs): on a busy
   * machine a wake-up waits for a CPU, and that wait is off-CPU too. */
  double t0 = now();
  timed(sleep_known, 37, 20, blocks[0]);
  double t1 = now();
  timed(poll_known, 10, 50, blocks[1]);
  double t2 = now();
  timed(nap_short, 50, 2, blocks[2]);
  double t3 = now();
  printf("took sleep_known %.0f\ntook poll_known %.0f\ntook nap_short %.0f\n", (t1 - t0) * 1e6,
         (t2 - t1) * 1e6, (t3 - t2) * 1e6);
  print_blocks("sleep_known", blocks[0], 37);
  print_blocks("poll_known", blocks[1], 10);
  print_blocks("nap_short", blocks[2], 50);
  printf("done\n");
  fflush(stdout);
  while (read(0, &c, 1) == 1) {
  }
  return 0;
}

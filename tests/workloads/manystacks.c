/*
 * manystacks: makes exactly N distinct user stacks, each ending in one
 * getppid system call, so that a stack tool's report must hold exactly N
 * stacks (bench/parts/scale.sh: 100,000 unique stacks reported, and the RSS they
 * cost).
 *
 *   manystacks [N [ROUNDS [RATE [PAD]]]]
 *     N       distinct stacks (default 100000)
 *     ROUNDS  how many times each stack makes its call (default 1; 0: loop
 *             over the N stacks until killed, for long runs)
 *     RATE    calls per second at most (default 0: as fast as it can); the
 *             pacing busy-waits on the vDSO clock, so it adds no system call
 *     PAD     frames of plain recursion (descend) under main before the
 *             varying part, so that stacks are as deep as real ones
 *             (default 10)
 *
 * Stack i (0 <= i < N) is i written in base 256 (its digits, most
 * significant first, no leading zero; 0 is the single digit 0), called
 * through: main -> run -> descend x PAD -> f[d1] -> f[d2] -> ... -> f[dk],
 * and the last function makes the getppid call with a raw `syscall`
 * instruction. Each f[j] is a function of its own (noinline, frame
 * pointer kept), so each digit sequence is a distinct sequence of return
 * addresses, and of function names: numbers have one representation each,
 * so the N stacks are distinct, and their depths vary (1 to 3 digits for
 * N up to 16.7 million). No other getppid call is made.
 *
 * Protocol: prints "ready PID", waits for one byte on stdin, makes the
 * calls (N x ROUNDS; N per round), prints "done CALLS", then blocks on stdin
 * until killed (or EOF). With ROUNDS 0 it loops until killed and prints
 * nothing more.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include "workload.h"

static volatile unsigned long sink;

typedef void (*step_fn)(const uint8_t* digits, int left);
static step_fn steps[256];

/* One digit: the next function down, or the call at the end. Not a tail
 * call (sink++ after it): every level keeps its frame. */
#define STEP(n)                                                          \
  __attribute__((noinline)) static void f##n(const uint8_t* d, int left) { \
    if (left == 0)                                                       \
      sink += raw_syscall3(SYS_getppid, 0, 0, 0);                        \
    else                                                                 \
      steps[d[0]](d + 1, left - 1);                                      \
    sink++;                                                              \
  }
#define STEP4(n) STEP(n##0) STEP(n##1) STEP(n##2) STEP(n##3)
#define STEP16(n) STEP4(n##0) STEP4(n##1) STEP4(n##2) STEP4(n##3)
#define STEP64(n) STEP16(n##0) STEP16(n##1) STEP16(n##2) STEP16(n##3)
STEP64(0)
STEP64(1)
STEP64(2)
STEP64(3)

/* The names above are base-4 digit strings: f0000 .. f3333. */
#define REF(n) f##n,
#define REF4(n) REF(n##0) REF(n##1) REF(n##2) REF(n##3)
#define REF16(n) REF4(n##0) REF4(n##1) REF4(n##2) REF4(n##3)
#define REF64(n) REF16(n##0) REF16(n##1) REF16(n##2) REF16(n##3)
static step_fn all_steps[256] = {REF64(0) REF64(1) REF64(2) REF64(3)};

__attribute__((noinline)) static void descend(int pad, const uint8_t* d, int n) {
  if (pad == 0)
    steps[d[0]](d + 1, n - 1);
  else
    descend(pad - 1, d, n);
  sink++;
}

/* Stack i's digits, most significant first; returns how many. */
static int digits_of(long i, uint8_t* d) {
  uint8_t rev[8];
  int n = 0;
  do {
    rev[n++] = (uint8_t)(i & 255);
    i >>= 8;
  } while (i > 0);
  for (int k = 0; k < n; k++) d[k] = rev[n - 1 - k];
  return n;
}

__attribute__((noinline)) static void run(long n, long rounds, double rate, int pad) {
  uint8_t d[8];
  double start = now();
  long calls = 0;
  for (long r = 0; rounds == 0 || r < rounds; r++)
    for (long i = 0; i < n; i++) {
      /* paced: call number `calls` is due at start + calls / rate */
      if (rate > 0 && (calls & 15) == 0)
        while (now() < start + calls / rate) {
        }
      int k = digits_of(i, d);
      descend(pad, d, k);
      calls++;
    }
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  long rounds = argc > 2 ? atol(argv[2]) : 1;
  double rate = argc > 3 ? atof(argv[3]) : 0;
  int pad = argc > 4 ? atoi(argv[4]) : 10;
  if (n < 1 || n > (1L << 24) || rounds < 0 || rate < 0 || pad < 0) {
    fprintf(stderr, "usage: manystacks [N (1..16777216) [ROUNDS [RATE [PAD]]]]\n");
    return 2;
  }
  for (int j = 0; j < 256; j++) steps[j] = all_steps[j];
  char c;
  say_ready();
  if (read(0, &c, 1) != 1) return 1;
  run(n, rounds, rate, pad);
  printf("done %ld\n", n * rounds);
  fflush(stdout);
  while (read(0, &c, 1) > 0) {
  }
  return sink == 42;
}

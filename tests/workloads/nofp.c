/*
 * nofp: burns CPU at the end of a known chain of calls, built without frame
 * pointers (-O2 -fomit-frame-pointer, its own Makefile rule), as most
 * distribution code is: main -> nofp_1 -> nofp_2 -> nofp_3 -> nofp_4 ->
 * nofp_5 -> nofp_leaf. A frame-pointer walk loses the chain; DWARF
 * unwinding (--call-graph dwarf) must find all of it.
 *
 *   nofp [SECONDS [sleep|signal|clock|jit]]
 *                            run SECONDS (0 or none: until killed); with
 *                            "sleep", the leaf blocks in the C library
 *                            (usleep: Debian's libc has no frame pointers)
 *                            instead of burning CPU; with "signal", the
 *                            leaf sends itself SIGUSR1 (an inline tgkill,
 *                            so the leaf is the interrupted function) and
 *                            the CPU burns in the handler, at the end of
 *                            nofp_handler -> nofp_sig_1 -> nofp_sig_2 ->
 *                            nofp_sig_leaf, on the stack above the signal
 *                            frame (libc's restorer, __restore_rt); with
 *                            "clock", the leaf loops on clock_gettime (in
 *                            the vDSO); with "jit", the leaf calls a
 *                            loop it copied to anonymous executable
 *                            memory, named nofp_jit_loop in
 *                            /tmp/perf-PID.map (removed at exit): code
 *                            with no CFI, where DWARF unwinding stops
 * Prints "ready PID" on stdout once it is running.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "workload.h"

static volatile unsigned long sink;
static double end_time;
static int sleeping;
static int signalling;
static int clocking;
static void (*jit_loop)(unsigned long);
static char jit_map[64];

/* noinline, noclone: each is a frame of its own under its own name; the
 * work after each call keeps it from being a tail call. */
#define NOFP_FUNCTION __attribute__((noinline, noclone))

NOFP_FUNCTION void nofp_sig_leaf(void) {
  for (int i = 0; i < 1000000; i++) sink += i;
}

NOFP_FUNCTION void nofp_sig_2(void) {
  nofp_sig_leaf();
  sink++;
}

NOFP_FUNCTION void nofp_sig_1(void) {
  nofp_sig_2();
  sink++;
}

NOFP_FUNCTION void nofp_handler(int sig) {
  (void)sig;
  nofp_sig_1();
  sink++;
}

NOFP_FUNCTION void nofp_leaf(void) {
  const long pid = getpid();
  for (;;) {
    if (jit_loop) {
      jit_loop(10000000);
      if (end_time != 0 && now() >= end_time) return;
      continue;
    }
    if (clocking) {
      struct timespec ts;
      for (int i = 0; i < 10000; i++) clock_gettime(CLOCK_MONOTONIC, &ts);
      if (end_time != 0 && now() >= end_time) return;
      continue;
    }
    if (signalling) {
      /* Delivered on the way back from the call: the handler's frame
       * returns into the restorer, which returns here. */
      raw_syscall3(SYS_tgkill, pid, pid, SIGUSR1);
      if (end_time != 0 && now() >= end_time) return;
      continue;
    }
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

/* Copies a loop that counts its argument down to 0 to executable memory,
 * and names it in /tmp/perf-PID.map as a JIT does. */
static void make_jit_loop(void) {
  static const unsigned char code[] = {
      0x48, 0x89, 0xf8, /* mov %rdi,%rax */
      0x48, 0xff, 0xc8, /* 1: dec %rax */
      0x75, 0xfb,       /* jnz 1b */
      0xc3,             /* ret */
  };
  void* p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) exit(1);
  memcpy(p, code, sizeof code);
  if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0) exit(1);
  snprintf(jit_map, sizeof jit_map, "/tmp/perf-%d.map", (int)getpid());
  FILE* f = fopen(jit_map, "w");
  if (f == NULL) exit(1);
  fprintf(f, "%lx %zx nofp_jit_loop\n", (unsigned long)p, sizeof code);
  fclose(f);
  jit_loop = (void (*)(unsigned long))p;
}

static void remove_jit_map(void) { unlink(jit_map); }

static void remove_jit_map_and_exit(int sig) {
  remove_jit_map();
  signal(sig, SIG_DFL);
  raise(sig);
}

int main(int argc, char** argv) {
  double secs = argc > 1 ? atof(argv[1]) : 0;
  sleeping = argc > 2 && strcmp(argv[2], "sleep") == 0;
  signalling = argc > 2 && strcmp(argv[2], "signal") == 0;
  clocking = argc > 2 && strcmp(argv[2], "clock") == 0;
  if (argc > 2 && strcmp(argv[2], "jit") == 0) {
    make_jit_loop();
    atexit(remove_jit_map);
    signal(SIGTERM, remove_jit_map_and_exit);
    signal(SIGINT, remove_jit_map_and_exit);
  }
  if (signalling) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = nofp_handler;
    sigaction(SIGUSR1, &sa, NULL);
  }
  if (secs > 0) end_time = now() + secs;
  say_ready();
  nofp_1();
  sink++;
  return 0;
}

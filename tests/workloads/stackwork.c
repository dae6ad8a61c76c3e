/*
 * stackwork: makes known numbers of events from known functions, after a
 * "go", for stackcount and stacksnoop tests.
 *
 *   call_known()  calls known_func() CALLS times       (default 613, prime)
 *   do_getppids() makes SYSCALLS raw getppid syscalls  (default 997, prime)
 *
 *   stackwork [CALLS [SYSCALLS]]
 * Protocol: prints "ready PID", waits for a byte on stdin, does both, prints
 * "done", then waits on stdin until killed (or exits when stdin closes).
 * The syscall is an inline `syscall` instruction in do_getppids(), so the
 * function is the user leaf of the kernel stack (libc has no frame pointer).
 */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workload.h"

static volatile long sink;

__attribute__((noinline)) void known_func(long i) { sink += i; }

__attribute__((noinline)) void call_known(long n) {
  for (long i = 0; i < n; i++) known_func(i);
}

__attribute__((noinline)) void do_getppids(long n) {
  for (long i = 0; i < n; i++) sink += raw_syscall3(SYS_getppid, 0, 0, 0);
}

int main(int argc, char** argv) {
  long calls = argc > 1 ? atol(argv[1]) : 613;
  long syscalls = argc > 2 ? atol(argv[2]) : 997;
  char c;
  say_ready();
  if (read(0, &c, 1) != 1) return 1;
  call_known(calls);
  do_getppids(syscalls);
  printf("done\n");
  fflush(stdout);
  while (read(0, &c, 1) == 1) {
  }
  return 0;
}

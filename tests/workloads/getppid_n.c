/*
 * getppid_n: makes exactly N getppid system calls when told to, so a test
 * can expect exactly N sys_enter_getppid events (and N stacks).
 *
 *   getppid_n [N]   N defaults to 1009 (a prime: an off-by-one or a doubled
 *                   event cannot hide in a round number)
 * Protocol: prints "ready PID", waits for one byte on stdin, makes the N
 * calls from do_getppids() with a raw `syscall` instruction (no libc wrapper,
 * which might cache or add calls), prints "done", then blocks on stdin until
 * killed (or EOF), making no further getppid call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workload.h"

/* always_inline: the syscall instruction must sit in do_getppids itself. */
__attribute__((noinline)) long do_getppids(long n) {
  long sum = 0;
  for (long i = 0; i < n; i++) sum += raw_syscall3(SYS_getppid, 0, 0, 0);
  return sum;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 1009;
  char c;
  say_ready();
  if (read(0, &c, 1) != 1) return 1;
  long sum = do_getppids(n);
  printf("done\n");
  fflush(stdout);
  while (read(0, &c, 1) > 0) {
  }
  return sum == 42;
}

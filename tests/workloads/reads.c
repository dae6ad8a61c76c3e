/*
 * reads: makes a known number of read(2) system calls, each of which reaches
 * vfs_read() once, after a "go": for kernel-function probe tests (kprobes,
 * the function tracer).
 *
 *   reads [N [M]]  N reads of /dev/zero from do_reads() (default 997); the
 *                  i-th (from 0) asks for i % M + 1 bytes (M default 1: every
 *                  read is of one byte)
 * Protocol: prints "ready PID", waits for SIGUSR1 (its "go": not a byte on
 * stdin, which would be one more read), reads, prints "done", then sleeps
 * until killed. The syscall is an inline `syscall` instruction in
 * do_reads(), so the function is the user leaf of the stack.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workload.h"

__attribute__((noinline)) long do_reads(int fd, long n, long m) {
  static char buf[4096];
  long ok = 0;
  for (long i = 0; i < n; i++) {
    long size = i % m + 1;
    ok += raw_syscall3(SYS_read, fd, (long)buf, size) == size;
  }
  return ok;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 997;
  long m = argc > 2 ? atol(argv[2]) : 1;
  if (m < 1 || m > 4096) return 2;
  int fd = open("/dev/zero", O_RDONLY);
  if (fd < 0) return 1;
  if (ready_then_wait_for_go_signal() != 0) return 1;
  if (do_reads(fd, n, m) != n) return 1;
  printf("done\n");
  fflush(stdout);
  for (;;) pause();
}

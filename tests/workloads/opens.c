/*
 * opens: opens a file of its own a known number of times, and a missing one,
 * through the C library's wrappers, after a "go": for opensnoop tests.
 *
 *   opens [N [M [DIR]]]  N opens of DIR/tracekit-opens.PID (DIR: default /tmp;
 *                  created at start,
 *                  removed at exit), every other one by open(), the others
 *                  by openat(AT_FDCWD, ...), each closed again, so that each
 *                  returns the same descriptor; then M opens of
 *                  DIR/tracekit-opens.PID.missing, which fail (ENOENT).
 *                  Defaults: N 97, M 13. A run killed before its opens are
 *                  done leaves the file: the runtime tests give a DIR of
 *                  their own, which they remove.
 * Protocol: prints "ready PID", waits for SIGUSR1 (its "go"), opens, prints
 * "fd FD" (the descriptor the opens returned), "rate R" (opens per second,
 * all N + M of them: for bench/parts/opensnoop_overhead.sh) and "done", then
 * sleeps until killed. The file is removed once the opens are done (or when they fail).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 97;
  long m = argc > 2 ? atol(argv[2]) : 13;
  const char* dir = argc > 3 ? argv[3] : "/tmp";
  char path[4096], missing[4200];
  if (snprintf(path, sizeof path, "%s/tracekit-opens.%d", dir, (int)getpid()) >= (int)sizeof path)
    return 1;
  snprintf(missing, sizeof missing, "%s.missing", path);
  int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  if (fd < 0) return 1;
  close(fd);
  if (ready_then_wait_for_go_signal() != 0) return unlink(path), 1;
  int first = -1;
  double start = now();
  for (long i = 0; i < n; i++) {
    fd = i % 2 ? openat(AT_FDCWD, path, O_RDONLY) : open(path, O_RDONLY);
    if (fd < 0 || (first >= 0 && fd != first)) return unlink(path), 1;
    first = fd;
    close(fd);
  }
  unlink(path);
  for (long i = 0; i < m; i++)
    if (open(missing, O_RDONLY) >= 0 || errno != ENOENT) return 1;
  printf("fd %d\nrate %.1f\ndone\n", first, (double)(n + m) / (now() - start));
  fflush(stdout);
  for (;;) pause();
}

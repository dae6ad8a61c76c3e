/*
 * directio: O_DIRECT reads and writes of known sizes and counts on a block
 * device (or file), for the block I/O tools' tests: with O_DIRECT, one
 * synchronous request of a size the block layer leaves whole (at most the
 * queue's max_sectors_kb) is one request issued to the device, of exactly
 * that size.
 *
 *   directio PATH OP:BYTES:COUNT...   OP r (pread) or w (pwrite); BYTES a
 *                                     multiple of 512; each OP done COUNT
 *                                     times, in the order given
 *   directio PATH -l BYTES SECONDS    reads of BYTES for SECONDS, as fast as
 *                                     they go (a busy load, for overhead);
 *                                     prints "ops N cpu_ns C" at the end (C:
 *                                     its user + system CPU time per read)
 * Protocol: prints "ready PID", waits for SIGUSR1 (its "go"), does the I/O,
 * prints "done", then sleeps until killed (the device stays open: closing
 * it could issue a flush).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "workload.h"

#define MAX_BYTES (1024 * 1024)

static char* buf;

static int one(int fd, char op, long bytes, long i) {
  /* Distinct offsets in the first MiB, so no two requests look alike. */
  off_t off = (off_t)((i * bytes) % MAX_BYTES);
  off -= off % bytes;
  ssize_t n = op == 'w' ? pwrite(fd, buf, bytes, off) : pread(fd, buf, bytes, off);
  return n == bytes ? 0 : -1;
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  if (posix_memalign((void**)&buf, 4096, MAX_BYTES) != 0) return 1;
  memset(buf, 0x5a, MAX_BYTES);
  int fd = open(argv[1], O_RDWR | O_DIRECT);
  if (fd < 0) {
    perror(argv[1]);
    return 1;
  }
  if (strcmp(argv[2], "-l") == 0) {
    if (argc != 5) return 2;
    long bytes = atol(argv[3]);
    double secs = atof(argv[4]);
    if (bytes <= 0 || bytes > MAX_BYTES || bytes % 512 || secs <= 0) return 2;
    if (ready_then_wait_for_go_signal() != 0) return 1;
    long ops = 0;
    double end = now() + secs;
    while (now() < end)
      if (one(fd, 'r', bytes, ops++) != 0) return 1;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
                 (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    printf("ops %ld cpu_ns %.0f\n", ops, cpu * 1e9 / (double)ops);
  } else {
    for (int a = 2; a < argc; a++) {
      char op;
      long bytes, count;
      if (sscanf(argv[a], "%c:%ld:%ld", &op, &bytes, &count) != 3 || (op != 'r' && op != 'w') ||
          bytes <= 0 || bytes > MAX_BYTES || bytes % 512 || count < 0)
        return 2;
    }
    if (ready_then_wait_for_go_signal() != 0) return 1;
    for (int a = 2; a < argc; a++) {
      char op;
      long bytes, count;
      sscanf(argv[a], "%c:%ld:%ld", &op, &bytes, &count);
      for (long i = 0; i < count; i++)
        if (one(fd, op, bytes, i) != 0) {
          perror("directio");
          return 1;
        }
    }
  }
  printf("done\n");
  fflush(stdout);
  for (;;) pause();
}

/*
 * blockio: O_DIRECT writes and reads of known sizes and counts on a block
 * device, after a "go": for iosnoop and iolatency tests.
 *
 *   blockio DEVICE [NW [NR [WSIZE [RSIZE]]]]
 *     NW writes of WSIZE bytes at offsets 0, WSIZE, 2*WSIZE, ..., then NR
 *     reads of RSIZE bytes at offsets 1 MiB, 1 MiB + RSIZE, ... Each is one
 *     synchronous pwrite/pread on the device opened O_DIRECT, so each is
 *     one request (sizes up to the device's max_sectors_kb) and none merges
 *     with another. Defaults: 23 writes of 8192 bytes, 31 reads of 4096.
 *     NW -1: writes without end (over the first 1 MiB, again and again).
 * Protocol: prints "ready PID", waits for SIGUSR1 (its "go"), does the I/O,
 * prints "done" (or "failed ERRNO"), then sleeps until killed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  long nw = argc > 2 ? atol(argv[2]) : 23;
  long nr = argc > 3 ? atol(argv[3]) : 31;
  long wsize = argc > 4 ? atol(argv[4]) : 8192;
  long rsize = argc > 5 ? atol(argv[5]) : 4096;
  int fd = open(argv[1], O_RDWR | O_DIRECT);
  if (fd < 0) return 1;
  void* buf = NULL;
  long size = wsize > rsize ? wsize : rsize;
  if (posix_memalign(&buf, 4096, (size_t)size) != 0) return 1;
  memset(buf, 0x5a, (size_t)size);
  if (ready_then_wait_for_go_signal() != 0) return 1;
  int err = 0;
  for (long i = 0; (nw < 0 || i < nw) && !err; i++) {
    off_t at = nw < 0 ? (off_t)((i * wsize) % (1 << 20)) : (off_t)(i * wsize);
    if (pwrite(fd, buf, (size_t)wsize, at) != wsize) err = errno ? errno : EIO;
  }
  for (long i = 0; i < nr && !err; i++)
    if (pread(fd, buf, (size_t)rsize, (off_t)((1 << 20) + i * rsize)) != rsize)
      err = errno ? errno : EIO;
  if (err)
    printf("failed %d\n", err);
  else
    printf("done\n");
  fflush(stdout);
  for (;;) pause();
}

// The kernel's own cost of offcputime's samples, for
// bench/parts/offcputime_overhead.sh: sched:sched_switch sampled on every CPU at
// every switch, with the sample type, callchains, clock, process events and
// ring size offcputime asks for, and the rings emptied without reading the
// samples (only the record headers are walked, to count samples and lost
// records). What any reader of those samples adds to a switch is at least
// this; bpftrace, which aggregates in the kernel, writes no sample.
//
//   ring_floor [--read] [--switch CPU] TRACEPOINT_ID [RING_PAGES]
//
// (Ctrl-C or SIGTERM ends it.)
//
// --read: every word of every record is also read (summed into a checksum
// printed on exit), as any reader that aggregates the samples must: the
// cost of moving the samples' cache lines from the CPU that wrote them to
// the reader's, which the writer then pays for when it writes there again.
//
// --switch CPU: a dummy event writing context-switch records
// (attr.context_switch) into CPU's ring too, as offcputime keeps on a CPU
// whose switches out of idle sched_switch does not show (offcpu/pairing.hpp).
// While any such event exists the kernel runs perf's sched-in/sched-out
// hooks at every switch of every CPU, not only that one's.
//
// RING_PAGES defaults to offcputime's choice (lib/offcpu/offcputime.cpp,
// ring_pages): the largest power of two from 512 to 2048 whose rings total
// at most 32 MiB.
//
// On exit it prints "ring_floor: N samples, M lost" on stderr (with --read,
// then ", checksum X").
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_CPUS 1024

static volatile sig_atomic_t stop;
static int read_all;      // --read
static long switch_cpu = -1;  // --switch
static uint64_t checksum;  // of every word read with --read
static void on_signal(int sig) {
  (void)sig;
  stop = 1;
}

struct ring {
  int fd;
  struct perf_event_mmap_page *meta;
  unsigned char *data;
  uint64_t size;
};

// Copies len bytes at ring position pos (which may wrap) to dst.
static void copy_out(const struct ring *r, uint64_t pos, void *dst, size_t len) {
  const uint64_t at = pos % r->size;
  const uint64_t first = at + len <= r->size ? len : r->size - at;
  memcpy(dst, r->data + at, first);
  memcpy((char *)dst + first, r->data, len - first);
}

// Walks the records between the tail and the head, then frees them.
static void drain(struct ring *r, uint64_t *samples, uint64_t *lost) {
  const uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = r->meta->data_tail;
  while (tail < head) {
    struct perf_event_header h;
    copy_out(r, tail, &h, sizeof h);
    if (h.size == 0) break;
    if (read_all) {
      // Every word after the header, wrap-safe: a record ends 8-byte aligned.
      for (uint64_t at = sizeof h; at + 8 <= h.size; at += 8) {
        uint64_t w;
        copy_out(r, tail + at, &w, sizeof w);
        checksum += w;
      }
    }
    if (h.type == PERF_RECORD_SAMPLE) {
      ++*samples;
    } else if (h.type == PERF_RECORD_LOST) {
      uint64_t n;  // after the header: id, then lost
      copy_out(r, tail + sizeof h + 8, &n, sizeof n);
      *lost += n;
    }
    tail += h.size;
  }
  __atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

int main(int argc, char **argv) {
  for (;;) {
    if (argc > 1 && strcmp(argv[1], "--read") == 0) {
      read_all = 1;
      --argc;
      ++argv;
    } else if (argc > 2 && strcmp(argv[1], "--switch") == 0) {
      switch_cpu = atol(argv[2]);
      argc -= 2;
      argv += 2;
    } else {
      break;
    }
  }
  if (argc < 2) {
    fprintf(stderr, "usage: ring_floor [--read] [--switch CPU] TRACEPOINT_ID [RING_PAGES]\n");
    return 2;
  }
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  long pages = 512;
  while (pages * 2 <= 2048 && pages * 2 * 4096 * cpus <= (32L << 20)) pages *= 2;
  if (argc > 2) pages = atol(argv[2]);
  if (cpus < 1 || cpus > MAX_CPUS || pages < 1 || (pages & (pages - 1))) {
    fprintf(stderr, "ring_floor: bad CPU count or RING_PAGES (a power of two)\n");
    return 2;
  }
  struct perf_event_attr a;
  memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = PERF_TYPE_TRACEPOINT;
  a.config = strtoull(argv[1], NULL, 10);
  a.sample_period = 1;
  a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                  PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW;
  a.disabled = 1;
  a.sample_id_all = 1;
  a.use_clockid = 1;
  a.clockid = CLOCK_MONOTONIC;
  a.sample_max_stack = 127;
  a.watermark = 1;
  a.wakeup_watermark = (uint32_t)(pages * 4096 / 4);
  a.comm = a.comm_exec = a.task = a.mmap = a.mmap2 = 1;

  static struct ring rings[MAX_CPUS];
  static struct pollfd pfds[MAX_CPUS];
  long n = 0;
  const long page = sysconf(_SC_PAGESIZE);
  for (long cpu = 0; cpu < cpus; ++cpu) {
    int fd = (int)syscall(SYS_perf_event_open, &a, -1, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && (errno == E2BIG || errno == EINVAL) && a.sample_max_stack) {
      // Before 4.8 (no sample_max_stack) the kernel's own depth, 127, holds.
      a.sample_max_stack = 0;
      fd = (int)syscall(SYS_perf_event_open, &a, -1, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
    }
    if (fd < 0) {
      fprintf(stderr, "ring_floor: perf_event_open on CPU %ld: %s\n", cpu, strerror(errno));
      return 1;
    }
    void *m = mmap(NULL, (size_t)(pages + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
      fprintf(stderr, "ring_floor: mmap of CPU %ld's ring: %s\n", cpu, strerror(errno));
      return 1;
    }
    rings[n] = (struct ring){fd, m, (unsigned char *)m + page, (uint64_t)pages * page};
    if (cpu == switch_cpu) {
      struct perf_event_attr d;
      memset(&d, 0, sizeof d);
      d.size = sizeof d;
      d.type = PERF_TYPE_SOFTWARE;
      d.config = PERF_COUNT_SW_DUMMY;
      d.sample_type = a.sample_type;
      d.sample_id_all = 1;
      d.use_clockid = 1;
      d.clockid = CLOCK_MONOTONIC;
      d.context_switch = 1;
      const int dfd = (int)syscall(SYS_perf_event_open, &d, -1, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
      if (dfd < 0 || ioctl(dfd, PERF_EVENT_IOC_SET_OUTPUT, fd) != 0) {
        fprintf(stderr, "ring_floor: switch records on CPU %ld: %s\n", cpu, strerror(errno));
        return 1;
      }
    }
    pfds[n] = (struct pollfd){.fd = fd, .events = POLLIN};
    ++n;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  for (long i = 0; i < n; ++i) ioctl(rings[i].fd, PERF_EVENT_IOC_ENABLE, 0);

  uint64_t samples = 0, lost = 0;
  while (!stop) {
    poll(pfds, (nfds_t)n, 100);
    for (long i = 0; i < n; ++i) drain(&rings[i], &samples, &lost);
  }
  for (long i = 0; i < n; ++i) {
    ioctl(rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
    drain(&rings[i], &samples, &lost);
  }
  fprintf(stderr, "ring_floor: %llu samples, %llu lost", (unsigned long long)samples,
          (unsigned long long)lost);
  if (read_all) fprintf(stderr, ", checksum %llx", (unsigned long long)checksum);
  fputc('\n', stderr);
  return 0;
}

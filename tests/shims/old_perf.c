/*
 * old_perf.so: makes perf_event_open refuse attributes the way a kernel
 * older than a feature refuses them, for tests of the fallbacks (LD_PRELOAD
 * it into a dynamically linked tool). TRACEKIT_TEST_OLD_PERF names what the
 * "kernel" lacks, comma-separated: context_switch, use_clockid, mmap2,
 * comm_exec, exclude_callchain (flag bits such a kernel does not know:
 * EINVAL, as its reserved-bits check gives), lost_samples (PERF_FORMAT_LOST,
 * a read_format bit before 6.0: EINVAL) and sample_max_stack (a field
 * past the end of such a kernel's attr: E2BIG), fd_cloexec (the
 * PERF_FLAG_FD_CLOEXEC flag of perf_event_open, Linux 3.14: EINVAL, as
 * 3.10.108 answers every open that passes it). tracekit calls
 * perf_event_open through syscall(2), which this interposes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

static int lacks(const char *name) {
  const char *list = getenv("TRACEKIT_TEST_OLD_PERF");
  size_t n = strlen(name);
  for (const char *p = list; p && *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && strncmp(p, name, n) == 0) return 1;
    p = end ? end + 1 : NULL;
  }
  return 0;
}

long syscall(long number, ...) {
  static long (*real)(long, ...);
  va_list ap;
  long a[6];
  va_start(ap, number);
  for (int i = 0; i < 6; i++) a[i] = va_arg(ap, long);
  va_end(ap);
  if (!real) real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
  if (number == SYS_perf_event_open) {
    const struct perf_event_attr *attr = (const struct perf_event_attr *)a[0];
    if (((unsigned long)a[4] & PERF_FLAG_FD_CLOEXEC) && lacks("fd_cloexec")) {
      errno = EINVAL;
      return -1;
    }
    if ((attr->context_switch && lacks("context_switch")) ||
        (attr->use_clockid && lacks("use_clockid")) || (attr->mmap2 && lacks("mmap2")) ||
        (attr->comm_exec && lacks("comm_exec")) ||
        ((attr->read_format & PERF_FORMAT_LOST) && lacks("lost_samples")) ||
        ((attr->exclude_callchain_kernel || attr->exclude_callchain_user) &&
         lacks("exclude_callchain"))) {
      errno = EINVAL;
      return -1;
    }
    if (attr->sample_max_stack && lacks("sample_max_stack")) {
      errno = E2BIG;
      return -1;
    }
  }
  return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/*
 * compat32: a 32-bit x86 program (built with -m32, no C library), whose
 * system calls a 64-bit kernel takes through its compat entry with i386's
 * numbers: raw_syscalls sees them, the syscalls:* tracepoints do not.
 *
 *   compat32 [N]   after a "go", calls getppid() N times (default 1000)
 *                  through int $0x80 (i386 getppid is 64: on x86-64, 64 is
 *                  semget)
 * Protocol: prints "ready PID", reads one byte of stdin (its "go"; end of
 * file: exits 0 at once, which tells a caller that 32-bit programs run
 * here), calls, prints "done", then waits until killed.
 */
#if !defined(__i386__)
#error "compat32 is built with -m32"
#endif

enum { kExit = 1, kRead = 3, kWrite = 4, kGetpid = 20, kPause = 29, kGetppid = 64 };

static long sys3(long nr, long a, long b, long c) {
  long r;
  __asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
  return r;
}

static void say(const char* s) {
  long n = 0;
  while (s[n]) ++n;
  sys3(kWrite, 1, (long)s, n);
}

static long number(const char* s) {
  long n = 0;
  for (; *s >= '0' && *s <= '9'; ++s) n = n * 10 + (*s - '0');
  return n;
}

/* The process's first frame: argc, then argv. */
__attribute__((noreturn, used)) void compat32_main(long* frame) {
  long calls = frame[0] > 1 ? number((const char*)frame[2]) : 1000;
  char line[32] = "ready ";
  char digits[12];
  long pid = sys3(kGetpid, 0, 0, 0), d = 0, at = 6;
  do digits[d++] = (char)('0' + pid % 10); while ((pid /= 10) > 0);
  while (d > 0) line[at++] = digits[--d];
  line[at++] = '\n';
  line[at] = 0;
  say(line);
  char go;
  if (sys3(kRead, 0, (long)&go, 1) != 1) sys3(kExit, 0, 0, 0);
  for (long i = 0; i < calls; ++i) sys3(kGetppid, 0, 0, 0);
  say("done\n");
  for (;;) sys3(kPause, 0, 0, 0);
}

/* _start: the kernel leaves argc at the stack pointer. */
__asm__(".globl _start\n_start:\n  push %esp\n  call compat32_main\n");

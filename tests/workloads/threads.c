/*
 * threads: a process whose threads all start after tracing began, with
 * child processes that do the same work, for tests of -p (every thread of
 * the process, threads started later included; its children not).
 *
 *   threads [FILE]   FILE: where to write, before "done", the wall time in
 *                    microseconds threads A and C spent in thread_sleep()
 *                    (460 ms each unless the machine is busy: waiting for a
 *                    CPU after a sleep is blocked time too)
 *
 * Protocol: prints "ready PID", waits for SIGUSR1 (its "go"), then:
 *   thread A (started by main): 211 one_getppid() calls, thread_sleep(23,
 *            20) (460 ms blocked), forks child process P2, waits for it;
 *   thread B (started by main): 307 one_getppid() calls, starts thread C
 *            and joins it;
 *   thread C (started by B):    401 one_getppid() calls, thread_sleep(23, 20);
 *   child process P1 (forked by main before any thread, so that it may start
 *            a thread of its own): 997 calls and thread_sleep(23, 20), and its
 *            thread P1T does the same;
 *   child process P2 (forked by thread A): 997 calls, thread_sleep(23, 20).
 * Then main joins A and B, waits for P1, prints "done" and sleeps until
 * killed. The main thread itself makes no getppid call and never calls
 * thread_sleep, so the process's threads make exactly 919 (211 + 307 + 401,
 * a prime) getppid calls and block 920 ms in thread_sleep; the children make
 * 3988 more calls and block 1380 ms more, none of which belongs to the
 * process. Every thread has exited by the time "done" is printed: their
 * events are usually read after they are gone.
 *
 * one_getppid() makes one call with an inline `syscall` instruction (a
 * uprobe target: one hit per call); thread_sleep() blocks with inline
 * nanosleep calls, so it is the user leaf of the blocked stack.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

enum { kCallsA = 211, kCallsB = 307, kCallsC = 401, kCallsChild = 997 };
enum { kSleeps = 23, kSleepMs = 20 };

__attribute__((noinline)) long one_getppid(void) { return raw_syscall3(SYS_getppid, 0, 0, 0); }

__attribute__((noinline)) long make_calls(long n) {
  long sum = 0;
  for (long i = 0; i < n; i++) sum += one_getppid();
  return sum;
}

/* Returns the wall time it took, in microseconds. */
__attribute__((noinline)) long thread_sleep(int n, long ms) {
  double start = now();
  for (int i = 0; i < n; i++) {
    struct timespec ts = {0, ms * 1000000L};
    raw_syscall3(SYS_nanosleep, (long)&ts, 0, 0);
  }
  return (long)((now() - start) * 1e6);
}

static long slept_a, slept_c; /* written by A and C, read after joining them */

/* What every child process and its thread do. */
static void* child_work(void* arg) {
  (void)arg;
  make_calls(kCallsChild);
  thread_sleep(kSleeps, kSleepMs);
  return NULL;
}

static void* thread_a(void* arg) {
  (void)arg;
  make_calls(kCallsA);
  slept_a = thread_sleep(kSleeps, kSleepMs);
  pid_t p2 = fork();
  if (p2 == 0) {
    /* A child of a multi-threaded process: raw system calls only. */
    child_work(NULL);
    raw_syscall3(SYS_exit_group, 0, 0, 0);
  }
  if (p2 > 0) waitpid(p2, NULL, 0);
  return NULL;
}

static void* thread_c(void* arg) {
  (void)arg;
  make_calls(kCallsC);
  slept_c = thread_sleep(kSleeps, kSleepMs);
  return NULL;
}

static void* thread_b(void* arg) {
  (void)arg;
  make_calls(kCallsB);
  pthread_t c;
  if (pthread_create(&c, NULL, thread_c, NULL) != 0) exit(1);
  pthread_join(c, NULL);
  return NULL;
}

int main(int argc, char** argv) {
  if (ready_then_wait_for_go_signal() != 0) return 1;

  pid_t p1 = fork();
  if (p1 == 0) {
    pthread_t t;
    if (pthread_create(&t, NULL, child_work, NULL) != 0) _exit(1);
    child_work(NULL);
    pthread_join(t, NULL);
    _exit(0);
  }
  pthread_t a, b;
  if (pthread_create(&a, NULL, thread_a, NULL) != 0) return 1;
  if (pthread_create(&b, NULL, thread_b, NULL) != 0) return 1;
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  if (p1 > 0) waitpid(p1, NULL, 0);
  if (argc > 1) {
    FILE* f = fopen(argv[1], "w");
    if (!f) return 1;
    fprintf(f, "%ld\n", slept_a + slept_c);
    fclose(f);
  }
  printf("done\n");
  fflush(stdout);
  for (;;) pause();
}

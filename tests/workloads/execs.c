/*
 * execs: starts child processes that exec itself with known arguments, a
 * known number of times, after a "go": for execsnoop tests.
 *
 *   execs [N [M [reexec|literals]]]
 *     N children exec this program through the C library, in turn by
 *     execv(PATH), execvp(NAME) with a PATH whose first directory does not
 *     have it (one failed exec first), and posix_spawn; M more make the
 *     execve system call themselves (no C library wrapper). Each runs
 *       execs child "hello world" <200 digits> end
 *     and exits at once. With "reexec", each first runs
 *       execs reexec again
 *     which execs the line above (a second exec of the same process).
 *     With "literals", the children's arguments are the program's string
 *     constants, which a forked child has not mapped yet.
 *     Defaults: N 23, M 5.
 * Protocol: prints "ready PID", waits for SIGUSR1 (its "go"), starts the
 * children one after another, waiting for each, prints "rate R" (the
 * children started per second) and "done" (or "failed" if a child did not
 * exit 0), then sleeps until killed.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

extern char** environ;

static char self[PATH_MAX];
/* The arguments live in memory written before the fork, as a shell's do:
 * a forked child shares those pages with their page table entries, so a
 * kprobe or eprobe (which read user memory without faulting it in) reads
 * them. A string constant of the program's file is not mapped in a child
 * until it touches it (fork copies no page tables of file mappings), and a
 * kernel-side probe cannot read it then: see execsnoop(8). */
static char strings[5][201];

static char* put(int i, const char* s) {
  return strcpy(strings[i], s);
}

static void child_args(char** argv) {
  argv[0] = put(0, "execs");
  argv[1] = put(1, "child");
  argv[2] = put(2, "hello world");
  argv[3] = strings[3];
  argv[4] = put(4, "end");
  argv[5] = NULL;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "child") == 0) return 0;
  ssize_t n_self = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n_self <= 0) return 1;
  self[n_self] = '\0';
  for (int i = 0; i < 200; i++) strings[3][i] = (char)('0' + i % 10);
  char* args[6];
  child_args(args);
  if (argc > 1 && strcmp(argv[1], "reexec") == 0) {
    execv(self, args);
    return 1;
  }
  long n = argc > 1 ? atol(argv[1]) : 23;
  long m = argc > 2 ? atol(argv[2]) : 5;
  int reexec = argc > 3 && strcmp(argv[3], "reexec") == 0;
  if (argc > 3 && strcmp(argv[3], "literals") == 0) {
    static char* constants[] = {"execs", "child", "hello world", NULL, "end", NULL};
    constants[3] = strings[3];
    memcpy(args, constants, sizeof args);
  }
  static char again[2][8];
  char* first[] = {args[0], strcpy(again[0], "reexec"), strcpy(again[1], "again"), NULL};
  char** run = reexec ? first : args;

  /* execvp's PATH: a directory without the program, then its own. */
  char path[PATH_MAX + 32];
  char* dir = strdup(self);
  *strrchr(dir, '/') = '\0';
  snprintf(path, sizeof path, "PATH=/nonexistent-tracekit:%s", dir);

  if (ready_then_wait_for_go_signal() != 0) return 1;
  double start = now();
  int failed = 0;
  for (long i = 0; i < n + m; i++) {
    pid_t pid;
    if (i < n && i % 3 == 2) {
      if (posix_spawn(&pid, self, NULL, NULL, run, environ) != 0) return 1;
    } else {
      pid = fork();
      if (pid < 0) return 1;
      if (pid == 0) {
        if (i >= n) {
          raw_syscall3(SYS_execve, (long)self, (long)run, (long)environ);
        } else if (i % 3 == 0) {
          execv(self, run);
        } else {
          putenv(path);
          execvp("execs", run);
        }
        _exit(127);
      }
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      failed = 1;
  }
  printf("rate %.1f\n%s\n", (n + m) / (now() - start), failed ? "failed" : "done");
  fflush(stdout);
  for (;;) pause();
}

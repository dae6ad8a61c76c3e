// For unit tests of process-wide state (stop signals, handlers that cannot be
// uninstalled, stdout): the body runs in a forked child and reports through
// its exit status.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <iostream>

namespace tracekit::testing {

// Runs body in a forked child; returns its exit status: 0 when all its
// checks held, else (by convention) the number of the first that failed;
// 128 + N when signal N ended it, -1 when the fork failed. A child that is
// still running after 10 s is ended by SIGALRM (a lost signal or wakeup
// fails the test instead of hanging it).
inline int in_child(const std::function<int()>& body) {
  std::fflush(nullptr);
  std::cout.flush();
  pid_t pid = fork();
  if (pid == 0) {
    alarm(10);
    _exit(body());
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace tracekit::testing

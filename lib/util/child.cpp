#include "util/child.hpp"

#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "util/strings.hpp"

namespace tracekit {

namespace {

bool executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::optional<std::string> find_program(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos)
    return executable_file(name) ? std::optional<std::string>(name) : std::nullopt;
  const char* env = std::getenv("PATH");
  std::string path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  for (auto dir : split(path, ':')) {
    std::string candidate = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + name;
    if (executable_file(candidate)) return candidate;
  }
  return std::nullopt;
}

Result<StoppedChild> StoppedChild::spawn(const std::vector<std::string>& argv) {
  if (argv.empty()) return Error{EINVAL, "no command to run", {}, {}};
  auto program = find_program(argv[0]);
  if (!program)
    return Error{ENOENT,
                 "cannot run \"" + argv[0] + "\"",
                 {},
                 argv[0].find('/') == std::string::npos ? "no such program on PATH"
                                                        : "no such executable file"};
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return Error::from_errno("cannot fork to run \"" + argv[0] + "\"");
  if (pid == 0) {
    // The command gets default dispositions for the signals that stop us.
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) std::signal(sig, SIG_DFL);
    ::syscall(SYS_kill, ::syscall(SYS_getpid), SIGSTOP);
    ::execv(program->c_str(), args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", program->c_str(), std::strerror(errno));
    ::_exit(127);
  }
  StoppedChild c;
  c.pid_ = pid;
  int status = 0;
  while (::waitpid(pid, &status, WUNTRACED) < 0)
    if (errno != EINTR) return Error::from_errno("cannot wait for the command to start");
  if (!WIFSTOPPED(status)) {
    c.reaped_ = true;
    return Error{0, "the command \"" + argv[0] + "\" ended before it started", {}, {}};
  }
  return c;
}

StoppedChild::StoppedChild(StoppedChild&& o) noexcept : pid_(o.pid_), reaped_(o.reaped_) {
  o.pid_ = -1;
}

StoppedChild::~StoppedChild() {
  if (pid_ <= 0 || reaped_) return;
  if (exited()) return;
  ::kill(pid_, SIGTERM);
  ::kill(pid_, SIGCONT);
  for (int i = 0; i < 100; ++i) {
    if (exited()) return;
    ::usleep(10000);
  }
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

Status StoppedChild::resume() {
  if (::kill(pid_, SIGCONT) != 0) return Error::from_errno("cannot resume the command");
  return {};
}

bool StoppedChild::exited() {
  if (reaped_) return true;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_ && (WIFEXITED(status) || WIFSIGNALED(status))) reaped_ = true;
  if (r < 0 && errno == ECHILD) reaped_ = true;
  return reaped_;
}

}  // namespace tracekit

// How this works: the "lib" of "lib:func" is found as bcc finds it
// (BPF.find_library, then BPF.find_exe, in src/python/bcc/__init__.py and
// src/cc/bcc_proc.c: bcc_procutils_which_so). A name with a '/' is a path,
// taken as is. Otherwise "name" means the first "libname.so*" of the dynamic
// linker's cache for this machine's ABI, so "c" is libc.so.6 and "pthread"
// libpthread.so.0; bcc reads /etc/ld.so.cache itself, we ask `ldconfig -p`
// for the same list in text. Without ldconfig (some containers) the
// standard library directories are searched; there a "libname.so" may be a
// linker script (libc.so in /usr/lib/x86_64-linux-gnu is one), so only ELF
// files count. Last, "name" may be a program on PATH ("bash"), as with
// `which`.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "probe/sources.hpp"
#include "probe/spec.hpp"
#include "util/safe_file.hpp"
#include "util/strings.hpp"

extern char** environ;

namespace tracekit::probe {

namespace {

// How ldconfig -p names this machine's ABI in its "(libc6,x86-64)" flags.
#if defined(__x86_64__)
constexpr std::string_view kArch = "x86-64";
#elif defined(__aarch64__)
constexpr std::string_view kArch = "AArch64";
#else
constexpr std::string_view kArch = "";
#endif

constexpr const char* kLdconfigs[] = {"/sbin/ldconfig", "/usr/sbin/ldconfig"};

constexpr const char* kLibDirs[] = {"/lib/x86_64-linux-gnu",
                                    "/usr/lib/x86_64-linux-gnu",
                                    "/lib64",
                                    "/usr/lib64",
                                    "/lib",
                                    "/usr/lib"};

// `ldconfig -p` output, or "" when no ldconfig runs. Spawned without a
// shell; its stderr goes to /dev/null.
std::string ldconfig_output() {
  for (const char* ldconfig : kLdconfigs) {
    if (access(ldconfig, X_OK) != 0) continue;
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) return {};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    char* argv[] = {const_cast<char*>(ldconfig), const_cast<char*>("-p"), nullptr};
    pid_t pid = -1;
    int rc = posix_spawn(&pid, ldconfig, &fa, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    std::string out;
    if (rc == 0) {
      char buf[65536];
      for (;;) {
        ssize_t n = read(pipefd[0], buf, sizeof buf);
        if (n > 0) {
          out.append(buf, static_cast<size_t>(n));
        } else if (n < 0 && errno == EINTR) {
          continue;
        } else {
          break;
        }
      }
      int status = 0;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    close(pipefd[0]);
    if (!out.empty()) return out;
  }
  return {};
}

bool is_elf(const std::string& path) {
  auto fd = open_regular_followed(path);  // never blocks on a FIFO
  if (!fd) return false;
  static constexpr char kMagic[4] = {0x7f, 'E', 'L', 'F'};
  char magic[4];
  return read(fd->get(), magic, 4) == 4 && std::memcmp(magic, kMagic, 4) == 0;
}

bool is_regular(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// "libname.so" alone or followed by a version (".6", ".1.2.3").
bool is_soname_of(std::string_view file, std::string_view name) {
  std::string prefix = "lib" + std::string(name) + ".so";
  return file.substr(0, prefix.size()) == prefix &&
         (file.size() == prefix.size() || file[prefix.size()] == '.');
}

std::optional<std::string> find_in_dirs(const std::string& name) {
  for (const char* dir : kLibDirs) {
    std::error_code ec;
    std::vector<std::string> found;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      std::string file = e.path().filename().string();
      if (is_soname_of(file, name)) found.push_back(e.path().string());
    }
    // Sorted, so "libfoo.so" (a symlink, when the -dev package is there) is
    // tried before "libfoo.so.1": the same file either way.
    std::sort(found.begin(), found.end());
    for (const std::string& path : found)
      if (is_regular(path) && is_elf(path)) return path;
  }
  return std::nullopt;
}

std::optional<std::string> find_on_path(const std::string& name) {
  const char* env = std::getenv("PATH");
  std::string path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  for (std::string_view dir : split(path, ':')) {
    // An empty PATH entry is the current directory (POSIX).
    std::string candidate = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + name;
    if (is_regular(candidate) && access(candidate.c_str(), X_OK) == 0)
      return std::filesystem::absolute(candidate).lexically_normal().string();
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> find_in_ldconfig(std::string_view text, std::string_view name,
                                            std::string_view arch) {
  std::optional<std::string> any;
  for (std::string_view line : split(text, '\n')) {
    // "\tlibc.so.6 (libc6,x86-64, OS ABI: Linux 3.2.0) => /lib/x86_64-linux-gnu/libc.so.6"
    line = trim(line);
    size_t open = line.find(" (");
    size_t close = line.find(") => ", open);
    if (open == std::string_view::npos || close == std::string_view::npos) continue;
    if (!is_soname_of(line.substr(0, open), name)) continue;
    std::string path(trim(line.substr(close + 5)));
    bool ours = false;
    for (std::string_view flag : split(line.substr(open + 2, close - open - 2), ','))
      ours = ours || (!arch.empty() && trim(flag) == arch);
    if (ours) return path;
    if (!any) any = path;
  }
  return any;
}

Result<std::string> resolve_library(const std::string& lib) {
  if (lib.empty()) return Error{0, "empty library name", {}, {}};
  if (lib.find('/') != std::string::npos) {
    struct stat st;
    if (stat(lib.c_str(), &st) != 0) return Error::from_errno("cannot find", lib);
    if (!S_ISREG(st.st_mode))
      return Error{0, "not a regular file", lib, "give an executable or a shared library"};
    // Made absolute: the path goes into uprobe_events and into messages,
    // and must not depend on the working directory of whoever reads it.
    return std::filesystem::absolute(lib).lexically_normal().string();
  }
  if (auto path = find_in_ldconfig(ldconfig_output(), lib, kArch); path && is_regular(*path))
    return *path;
  if (auto path = find_in_dirs(lib)) return *path;
  if (auto path = find_on_path(lib)) return *path;
  return Error{0,
               "cannot find library or program \"" + lib + "\"",
               {},
               "give a path (/usr/bin/bash), a library name without lib and .so (\"pthread\" for "
               "libpthread.so.0) or a program on PATH"};
}

}  // namespace tracekit::probe

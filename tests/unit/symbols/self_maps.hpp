// What the user-symbol tests share: this process's (or a child's) mappings
// from /proc/PID/maps, the main program's build-id, a parked child forked
// to report an address back, and a copy of a small library to dlopen from a
// place of the test's choice. Also used by tests/unit/perf/process_events_test.
#pragma once

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tracekit::symbols::test_support {

// One line of /proc/PID/maps.
struct MapLine {
  uint64_t start = 0, end = 0, pgoff = 0, ino = 0;
  std::string perms, path;
};

inline std::optional<MapLine> parse_map_line(std::string_view line) {
  MapLine m;
  unsigned long long start, end, off, ino;
  char perms[8];
  int path_at = 0;
  std::string s(line);
  if (std::sscanf(s.c_str(), "%llx-%llx %7s %llx %*x:%*x %llu %n", &start, &end, perms, &off, &ino,
                  &path_at) < 5)
    return std::nullopt;
  m.start = start;
  m.end = end;
  m.pgoff = off;
  m.ino = ino;
  m.perms = perms;
  if (path_at > 0) m.path = s.substr(static_cast<size_t>(path_at));
  return m;
}

inline std::vector<MapLine> maps_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::vector<MapLine> out;
  std::string line;
  while (std::getline(in, line))
    if (auto m = parse_map_line(line)) out.push_back(*m);
  return out;
}

// The executable mapping of pid that holds addr.
inline std::optional<MapLine> text_mapping(pid_t pid, uint64_t addr) {
  for (const MapLine& m : maps_of(pid))
    if (addr >= m.start && addr < m.end && m.perms.find('x') != std::string::npos) return m;
  return std::nullopt;
}

// The GNU build-id of the main program, from its notes in memory.
inline std::vector<uint8_t> own_build_id() {
  std::vector<uint8_t> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* arg) -> int {
        auto* id = static_cast<std::vector<uint8_t>*>(arg);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_NOTE) continue;
          auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
          auto* end = p + ph.p_memsz;
          while (p + sizeof(ElfW(Nhdr)) <= end) {
            auto* n = reinterpret_cast<const ElfW(Nhdr)*>(p);
            const uint8_t* name = p + sizeof *n;
            const uint8_t* desc = name + ((n->n_namesz + 3) & ~3u);
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
                std::memcmp(name, "GNU", 4) == 0)
              id->assign(desc, desc + n->n_descsz);
            p = desc + ((n->n_descsz + 3) & ~3u);
          }
        }
        return 1;  // the main program comes first
      },
      &out);
  return out;
}

// A child sharing our address space layout (fork), parked until killed.
// setup runs in the child first and returns an address to report back (or
// 0 on failure), which fork_child returns to the parent.
template <class Setup>
pid_t fork_child(Setup setup, uint64_t* reported) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    uint64_t a = setup();
    if (write(fds[1], &a, sizeof a) != sizeof a) _exit(1);
    for (;;) pause();
  }
  close(fds[1]);
  uint64_t a = 0;
  if (read(fds[0], &a, sizeof a) != sizeof a) a = 0;
  close(fds[0]);
  *reported = a;
  return pid;
}

// A parked child that reports nothing.
inline pid_t fork_parked_child() {
  uint64_t unused;
  return fork_child([] { return uint64_t{1}; }, &unused);
}

inline void kill_and_reap(pid_t pid) {
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
}

// A small library the tests copy and dlopen from a place of their choice.
inline constexpr const char* kLib = "/usr/lib/x86_64-linux-gnu/libz.so.1";
inline constexpr const char* kLibSymbol = "zlibVersion";

inline bool copy_file(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary);
  out << in.rdbuf();
  return in.good() && out.good();
}

// Child setups for fork_child: each returns kLibSymbol's address in the
// child, or 0.

// dlopens a copy of kLib made from the mkstemp template, then deletes it.
inline uint64_t load_deleted_copy(std::string copy_template) {
  int fd = mkstemp(copy_template.data());
  if (fd < 0 || !copy_file(kLib, copy_template)) return 0;
  close(fd);
  void* h = dlopen(copy_template.c_str(), RTLD_NOW | RTLD_LOCAL);
  unlink(copy_template.c_str());
  void* f = h ? dlsym(h, kLibSymbol) : nullptr;
  return reinterpret_cast<uint64_t>(f);
}

// In a mount namespace of its own, mounts a tmpfs on dir and dlopens a copy
// of kLib from there (dir + "/libz-copy.so"), seen by no other process.
inline uint64_t load_copy_in_own_mount_namespace(const std::string& dir) {
  if (unshare(CLONE_NEWNS) != 0) return 0;
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return 0;
  if (mount("tmpfs", dir.c_str(), "tmpfs", 0, nullptr) != 0) return 0;
  std::string copy = dir + "/libz-copy.so";
  if (!copy_file(kLib, copy)) return 0;
  void* h = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
  void* f = h ? dlsym(h, kLibSymbol) : nullptr;
  return reinterpret_cast<uint64_t>(f);
}

}  // namespace tracekit::symbols::test_support

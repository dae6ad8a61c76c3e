// How this works: slots hold a path and a text in fixed char arrays and an
// atomic "in use" flag set only once both are written, so a handler that
// interrupts add_exit_write() sees either a whole entry or none.
#include "util/exit_writes.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace tracekit {

namespace {

constexpr int kSlots = 16;
constexpr size_t kPathMax = 512;
constexpr size_t kTextMax = 32;

struct Slot {
  std::atomic<bool> used{false};
  char path[kPathMax];
  char text[kTextMax];
  size_t text_len = 0;
};

Slot g_slots[kSlots];
std::atomic<bool> g_claimed[kSlots];

}  // namespace

int add_exit_write(const std::string& path, const std::string& text) {
  if (path.size() >= kPathMax || text.size() >= kTextMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (!g_claimed[i].compare_exchange_strong(expected, true)) continue;
    Slot& s = g_slots[i];
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    std::memcpy(s.text, text.data(), text.size());
    s.text_len = text.size();
    s.used.store(true);
    return i;
  }
  return -1;
}

void remove_exit_write(int slot) {
  if (slot < 0 || slot >= kSlots) return;
  g_slots[slot].used.store(false);
  g_claimed[slot].store(false);
}

int run_exit_writes() {
  int ok = 0;
  for (auto& s : g_slots) {
    if (!s.used.load()) continue;
    int fd = ::open(s.path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) continue;
    if (::write(fd, s.text, s.text_len) == static_cast<ssize_t>(s.text_len)) ++ok;
    ::close(fd);
  }
  return ok;
}

}  // namespace tracekit

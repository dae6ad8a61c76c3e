// How this works: a value of prev_state is printed once, with the record it
// came in and the print format of this kernel's format file, and the letters
// after "prev_state=" are turned into state_bits(). libtraceevent evaluates
// every era's expression as the kernel does (tests/unit/offcpu/
// task_state_test.cpp has one format per era):
//
//   3.x, 4.4-4.13  prev_state & (TASK_STATE_MAX-1) ? __print_flags(...) : "R",
//                  prev_state & TASK_STATE_MAX ? "+" : ""
//                  with task->state bits, Z 16 and X 32, and TASK_STATE_MAX
//                  1024 (3.x), 2048 (4.2+) or 4096 (4.11+) as the literal.
//   4.15 on        the same with report bits (S 1 ... X 0x10 Z 0x20 P 0x40
//                  I 0x80) and TASK_REPORT_MAX (0x100) for preemption,
//                  written as the expanded expression (((0x0000 | ...) + 1) << 1).
//
// 4.14 is the exception: its print format already applies the report bits,
// but prev_state holds task_state_index(), an index (1 S, 2 D, 3 T, 4 t,
// 5 X, 6 Z, 7 P, 8 I), so the kernel itself printed an index 3 as "S|D" and
// a dying task (5) as "S|T"; its preemption test is TASK_STATE_MAX (0x1000).
// 4.15's "sched/debug: Fix task state recording/printout" (3f5fe9fef5b2)
// stored 1 << (index - 1) and tested TASK_REPORT_MAX instead. That kernel is
// told apart by its format, learned from the first record: printed with one
// bit set at a time, the bit that prints "I" is not next below the bit that
// prints "R+". Its values are then turned into the bits 4.15 stores before
// printing. (A 4.14.y that took the fix has 4.15's format, and is read as
// 4.15.)
#include "offcputime/task_state.hpp"

#include <traceevent/event-parse.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "util/proc.hpp"
#include "util/strings.hpp"

namespace tracekit::offcpu {

namespace {

template <typename T>
void put(std::vector<uint8_t>& record, size_t at, uint64_t value) {
  T v = static_cast<T>(value);
  std::memcpy(&record[at], &v, sizeof v);
}

// A copy of the record with value in the field, in the host's byte order (the
// format handle reads records as the host's).
std::vector<uint8_t> with_value(std::span<const uint8_t> raw, const tep_format_field* f,
                                uint64_t value) {
  std::vector<uint8_t> copy(raw.begin(), raw.end());
  auto at = static_cast<size_t>(f->offset);
  auto size = static_cast<size_t>(f->size);
  if (at + size > copy.size()) return copy;
  switch (size) {
    case 1: put<uint8_t>(copy, at, value); break;
    case 2: put<uint16_t>(copy, at, value); break;
    case 4: put<uint32_t>(copy, at, value); break;
    case 8: put<uint64_t>(copy, at, value); break;
    default: break;
  }
  return copy;
}

}  // namespace

std::optional<uint64_t> state_bits(std::string_view letters) {
  if (letters.empty()) return std::nullopt;
  uint64_t bits = 0;
  for (char c : letters) {
    switch (c) {
      case 'R': break;
      case '+': break;  // preempted while runnable: still R
      case '|': break;
      case 'S': bits |= 1; break;
      case 'D': bits |= 2; break;
      case 'T': bits |= 4; break;
      case 't': bits |= 8; break;
      case 'X': bits |= 16; break;
      case 'Z': bits |= 32; break;
      case 'P': bits |= 64; break;
      case 'x': bits |= 128; break;
      case 'K': bits |= 256; break;
      case 'W': bits |= 512; break;
      case 'N': bits |= 1024; break;
      case 'I': bits |= 1026; break;
      default: return std::nullopt;
    }
  }
  return bits;
}

TaskStates::TaskStates(const tracefs::EventFormat& format)
    : format_(format), field_(format.field("prev_state")) {}

// The letters the kernel prints for prev_state = value in the record raw;
// text keeps the printed line they point into.
std::string_view TaskStates::letters(std::span<const uint8_t> raw, uint64_t value,
                                     std::string& text) const {
  if (!field_) return {};
  text = format_.print(with_value(raw, field_, value));
  auto at = text.find("prev_state=");
  if (at == std::string::npos) return {};
  auto l = std::string_view(text).substr(at + 11);
  return l.substr(0, l.find(' '));
}

void TaskStates::learn(std::span<const uint8_t> raw) {
  std::string text;
  if (letters(raw, 0, text).empty()) return;  // too short, or no prev_state: not yet
  learned_ = true;
  uint64_t idle = 0, preempt = 0;
  size_t width = std::min<size_t>(static_cast<size_t>(field_->size) * 8, 64);
  for (size_t k = 0; k < width; ++k) {
    uint64_t bit = 1ull << k;
    auto l = letters(raw, bit, text);
    if (l == "I" && !idle) idle = bit;
    if (l == "R+" && !preempt) preempt = bit;
  }
  if (idle && preempt && preempt != idle << 1) {
    index_encoded_ = true;
    index_mask_ = preempt - 1;
    max_index_ = 1;
    while ((1ull << (max_index_ - 1)) < idle) ++max_index_;
  }
}

uint64_t TaskStates::from_index(uint64_t value) const {
  uint64_t index = value & index_mask_;
  if (index == 0 || index > max_index_) return value;  // R (maybe +), or no index at all
  return (value & ~index_mask_) | (1ull << (index - 1));
}

TaskState TaskStates::decode(uint64_t value, std::span<const uint8_t> raw) {
  auto it = cache_.find(value);
  if (it != cache_.end()) return it->second;
  if (!learned_ && field_) learn(raw);
  uint64_t printed = index_encoded_ ? from_index(value) : value;
  std::string text;
  auto l = letters(raw, printed, text);
  TaskState st{value, false, false};
  if (auto bits = state_bits(l)) {
    st.bits = *bits;
    st.dead = l.find_first_of("XZx") != std::string_view::npos;
    st.preempted = l.find('+') != std::string_view::npos;
  }
  // A record too short to print says nothing about the value: not cached.
  if (!text.empty()) cache_.emplace(value, st);
  return st;
}

bool KernelThreads::is(uint32_t tid) {
  auto it = known_.find(tid);
  if (it != known_.end()) return it->second;
  constexpr uint32_t kPfKthread = 0x00200000;
  bool k = false;
  // /proc/TID/stat: "pid (comm) state ppid ... flags" with flags the 9th
  // field; comm may hold spaces and parentheses, so count from the last ')'.
  auto stat = read_file(proc_ + "/" + std::to_string(tid) + "/stat");
  if (stat) {
    auto close = stat->rfind(')');
    if (close != std::string::npos) {
      auto fields = split(trim(std::string_view(*stat).substr(close + 1)), ' ');
      if (fields.size() > 6)
        if (auto flags = parse_int<uint32_t>(fields[6])) k = (*flags & kPfKthread) != 0;
    }
  }
  known_.emplace(tid, k);
  return k;
}

}  // namespace tracekit::offcpu

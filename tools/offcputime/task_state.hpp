// sched_switch's prev_state, read the way the running kernel prints it.
//
// The number has meant different things over the years (3.x and 4.4-4.13:
// task->state bits with Z and X the other way round and TASK_STATE_MAX as the
// preemption bit; 4.14: an index; 4.15 on: report bits with TASK_REPORT_MAX
// as the preemption bit), but every kernel's format file says how to print
// it. TaskStates prints the record with that format (libtraceevent) and
// turns the letters into one fixed set of bits (state_bits).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "tracefs/event_format.hpp"

struct tep_format_field;

namespace tracekit::offcpu {

// prev_state as the kernel prints it ("S", "D", "R+", "I", "X", "S|D"...)
// turned into the task state bits bcc's --state matches: R 0, S 1, D 2, T 4,
// t 8, X 16, Z 32, P 64, x 128 (TASK_DEAD), K 256, W 512, N 1024, I 1026
// (TASK_IDLE = D | N). nullopt for text it does not know.
std::optional<uint64_t> state_bits(std::string_view letters);

// What one switch-out's prev_state says about the task switched out.
struct TaskState {
  // state_bits() of the printed letters; when the kernel printed something
  // state_bits does not know (a flag without a letter, "0x800"), the raw
  // prev_state value.
  uint64_t bits = 0;
  bool dead = false;       // X, Z or x: the task's last switch-out
  bool preempted = false;  // "R+": switched out while still runnable
  bool operator==(const TaskState&) const = default;
};

class TaskStates {
 public:
  // format: the kernel's sched:sched_switch, borrowed (it must outlive this
  // object). A format without prev_state, or whose print format shows no
  // "prev_state=", makes every value unknown (bits = the value).
  explicit TaskStates(const tracefs::EventFormat& format);

  // The state that prev_state `value`, read from `raw` (the whole
  // sched_switch record: printing reads every field), stands for. Results
  // are cached per value: the letters depend on prev_state alone.
  TaskState decode(uint64_t value, std::span<const uint8_t> raw);

  // Whether this kernel stores task_state_index() in prev_state (4.14, see
  // task_state.cpp). Known once a record has been decoded.
  bool index_encoded() const { return index_encoded_; }

 private:
  std::string_view letters(std::span<const uint8_t> raw, uint64_t value, std::string& text) const;
  void learn(std::span<const uint8_t> raw);
  uint64_t from_index(uint64_t value) const;

  const tracefs::EventFormat& format_;
  const tep_format_field* field_ = nullptr;
  bool learned_ = false;
  bool index_encoded_ = false;
  uint64_t index_mask_ = 0;  // index-encoded: the bits below the preemption bit
  uint64_t max_index_ = 0;   // index-encoded: the index of the highest letter (I)
  std::unordered_map<uint64_t, TaskState> cache_;
};

// Whether threads are kernel threads (-u, -k): PF_KTHREAD in the flags of
// /proc/TID/stat, read once per thread (a thread gone by then is not one).
class KernelThreads {
 public:
  // Where /proc is (tests point it at a fake tree).
  explicit KernelThreads(std::string proc_root = "/proc") : proc_(std::move(proc_root)) {}
  bool is(uint32_t tid);

 private:
  std::string proc_;
  std::unordered_map<uint32_t, bool> known_;
};

}  // namespace tracekit::offcpu

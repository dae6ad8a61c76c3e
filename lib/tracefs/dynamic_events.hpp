// kprobes, kretprobes and uprobes created through tracefs, in a probe group
// of this run's own (tracekit_<pid>), removed when the group is destroyed.
//
// Probes are added through dynamic_events when the kernel has it, else
// kprobe_events / uprobe_events. Only the probes this object created are
// removed, one by one ("-:group/event"): libtracefs 1.6.4's destroy-all
// helpers can mix kprobes and uprobes up. A probe still enabled in an
// instance cannot be removed (EBUSY): destroy instances first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace tracekit::tracefs {

class ProbeGroup {
 public:
  // Group "tracekit_<getpid()>" (a suffix is added if a second group is
  // opened by the same process).
  static Result<ProbeGroup> open(const std::string& tracing_dir);

  ProbeGroup(ProbeGroup&&) noexcept;
  ProbeGroup& operator=(ProbeGroup&&) = delete;
  ProbeGroup(const ProbeGroup&) = delete;
  ~ProbeGroup();  // removes every probe it created; never throws

  const std::string& name() const { return group_; }

  // What this kernel supports (kprobe_events / uprobe_events exist).
  bool kprobes_supported() const;
  bool uprobes_supported() const;

  // Adds "p:<group>/<event> <function> <fetchargs>" (or "r:" for a return
  // probe) and returns the event name (the system is name()). The event name
  // is derived from the function, made unique within the group. Error: no
  // kprobes in this kernel (hint: CONFIG_KPROBES), or the kernel's error_log
  // line (unknown or unprobeable function).
  Result<std::string> add_kprobe(const std::string& function, bool is_return,
                                 const std::string& fetchargs = "");
  // Adds a uprobe at a file offset of path ("p:<group>/<event>
  // <path>:0x<offset>"). Error: no uprobes, or the kernel's error_log line.
  Result<std::string> add_uprobe(const std::string& path, uint64_t offset, bool is_return,
                                 const std::string& event_hint, const std::string& fetchargs = "");

  // The events created so far, in order.
  const std::vector<std::string>& events() const { return events_; }

 private:
  ProbeGroup() = default;
  std::string top_, group_;
  struct Created {
    std::string event;
    char kind;  // 'k' kprobe or 'u' uprobe: which file removes it
  };
  std::vector<Created> created_;
  std::vector<std::string> events_;
};

}  // namespace tracekit::tracefs

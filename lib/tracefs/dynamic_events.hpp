// kprobes, kretprobes and uprobes created through tracefs, in a probe group
// of this run's own (tracekit_<pid>), removed when the group is destroyed.
//
// Probes are added through dynamic_events when the kernel has it, else
// kprobe_events / uprobe_events. Only the probes this object created are
// removed, one by one ("-:group/event"): libtracefs 1.6.4's destroy-all
// helpers can mix kprobes and uprobes up. A probe still enabled in an
// instance cannot be removed (EBUSY): destroy instances first.
//
// Event names are [A-Za-z0-9_] (the kernel's rule for probe names), at most
// 48 characters, and unique within the group ("_1", "_2" appended).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace tracekit::tracefs {

class ProbeGroup {
 public:
  // Group "tracekit_<getpid()>" ("tracekit_<getpid()>_<n>" for the second
  // and later groups of the same process, or when events/<group> exists
  // already, left by a dead run that had our pid). Nothing is written to the
  // kernel until a probe is added. Error: tracing_dir has no events/.
  static Result<ProbeGroup> open(const std::string& tracing_dir);

  ProbeGroup(ProbeGroup&&) noexcept;
  ProbeGroup& operator=(ProbeGroup&&) = delete;
  ProbeGroup(const ProbeGroup&) = delete;
  // Removes every probe it created, newest first; never throws. A probe that
  // cannot be removed (EBUSY: still enabled in an instance or by a perf
  // event) is reported on stderr ("tracekit: cleanup: ...") and left for
  // reset-tracing / the next run's remove_leftovers().
  ~ProbeGroup();

  const std::string& name() const { return group_; }

  // What this kernel supports (kprobe_events / uprobe_events exist).
  bool kprobes_supported() const;
  bool uprobes_supported() const;

  // Adds "p:<group>/<event> <function> <fetchargs>" (or "r:" for a return
  // probe; function may be "func+offset") and returns the event name (the
  // system is name()). The event name (event_hint, else "p_<function>" /
  // "r_<function>") is made valid and unique within the group.
  // Error: no kprobes in this kernel ("this kernel has no kprobes
  // (CONFIG_KPROBES is off): kprobe_events is missing"), or the kernel's
  // error_log line (unknown or unprobeable function).
  Result<std::string> add_kprobe(const std::string& function, bool is_return,
                                 const std::string& fetchargs = "",
                                 const std::string& event_hint = "");
  // Adds a uprobe at a file offset of path ("p:<group>/<event>
  // <path>:0x<offset>", "r:" for a return probe) and returns the event name:
  // event_hint made valid and unique ("u_<file>_<offset>" when event_hint is
  // empty). Error: no uprobes in this kernel, a path with white space (the
  // kernel cannot parse it), or the kernel's error_log line.
  Result<std::string> add_uprobe(const std::string& path, uint64_t offset, bool is_return,
                                 const std::string& event_hint, const std::string& fetchargs = "");

  // Appends a uprobe to event, one this group created (Linux 5.4+, where
  // kernel::Feature::kProbeAppend is found: an older kernel replaces the
  // event): the kernel wants fetchargs with the same names and types as the
  // event's. Removing the event removes all its probes. Error: event is not
  // this group's, or the kernel's refusal.
  Status append_uprobe(const std::string& event, const std::string& path, uint64_t offset,
                       bool is_return, const std::string& fetchargs = "");

  // Adds an event probe on an existing event ("e:<group>/<event>
  // <system>.<attached> <fetchargs>", dynamic_events only: eprobes came
  // after it) and returns the event name (event_hint made valid and unique,
  // "e_<attached>" when empty). fetchargs name the attached event's fields
  // as $field. Error: no dynamic_events, or the kernel's refusal (a kernel
  // without CONFIG_EPROBE_EVENTS refuses with EINVAL and no error_log line).
  Result<std::string> add_eprobe(const std::string& system, const std::string& attached,
                                 const std::string& event_hint, const std::string& fetchargs);

  // The events created so far, in order.
  const std::vector<std::string>& events() const { return events_; }

 private:
  ProbeGroup() = default;
  Result<std::string> add(const std::string& file, char type, const std::string& base,
                          const std::string& where, const std::string& fetchargs);
  std::string unique_name(const std::string& base) const;
  // Writes "<type>:<group>/<event> <where> <fetchargs>" to file.
  Status define(const std::string& file, char type, const std::string& event,
                const std::string& where, const std::string& fetchargs);
  // Where probe definitions go: dynamic_events, else legacy
  // ("kprobe_events", "uprobe_events"), as a path.
  std::string definitions_file(const char* legacy) const;
  std::string top_, group_;
  struct Created {
    std::string event;
    std::string file;  // the control file it was added to, and is removed from
  };
  std::vector<Created> created_;
  std::vector<std::string> events_;
};

// probe_name("my-func.cold") == "my_func_cold": characters other than
// [A-Za-z0-9_] become '_', a leading digit gets a '_' before it, at most 48
// characters are kept, "" becomes "probe". Pure.
std::string probe_name(std::string_view hint);

}  // namespace tracekit::tracefs

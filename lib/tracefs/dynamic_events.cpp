// How this works: a probe is one line appended to a control file,
// "p:<group>/<event> <where> <fetchargs>", and removed by appending
// "-:<group>/<event>" to the same file. dynamic_events takes every kind of
// probe where the kernel has it (4.17+); older kernels have kprobe_events and
// uprobe_events only. The group is this process's own, so a probe of the
// group is ours and no other run can remove it by mistake, and what a killed
// run leaves can be recognised by name (leftovers.hpp). Each probe added is
// remembered with the file it went to; the destructor removes exactly those.

#include "tracefs/dynamic_events.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

#include "feature_table/feature_table.hpp"
#include "tracefs/instance.hpp"
#include "tracefs/tracing_dir.hpp"

namespace tracekit::tracefs {

namespace {

constexpr size_t kMaxEventName = 48;  // the kernel allows 64; leave room for "_N"

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::atomic<int> g_next_group{0};

}  // namespace

std::string probe_name(std::string_view hint) {
  std::string s;
  for (char c : hint) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    s += ok ? c : '_';
  }
  if (s.empty()) return "probe";
  if (s[0] >= '0' && s[0] <= '9') s.insert(s.begin(), '_');
  if (s.size() > kMaxEventName) s.resize(kMaxEventName);
  return s;
}

Result<ProbeGroup> ProbeGroup::open(const std::string& tracing_dir) {
  struct stat st;
  if (stat((tracing_dir + "/events").c_str(), &st) != 0)
    return access_error(tracing_dir + "/events", errno);  // EACCES is no missing directory
  for (int tries = 0; tries < 1000; ++tries) {
    int n = g_next_group++;
    std::string name = "tracekit_" + std::to_string(getpid());
    if (n > 0) name += "_" + std::to_string(n);
    if (exists(tracing_dir + "/events/" + name)) continue;
    ProbeGroup g;
    g.top_ = tracing_dir;
    g.group_ = name;
    return g;
  }
  return Error{EEXIST, "cannot name a probe group: every name is taken", tracing_dir,
               "run reset-tracing -f"};
}

ProbeGroup::ProbeGroup(ProbeGroup&& o) noexcept
    : top_(std::move(o.top_)),
      group_(std::move(o.group_)),
      created_(std::move(o.created_)),
      events_(std::move(o.events_)) {
  o.created_.clear();
  o.events_.clear();
}

// How long a removal refused as busy is tried again. An event whose perf
// counters were just closed can stay busy a moment: counters that a
// process's children inherited (funccount -p) are released by the
// children themselves, and a child that was exiting when ours closed drops
// the last reference after close() returned (perf_event_exit_event). With
// a process forking all the time, the first event removed (the last one
// closed) was busy in 3 runs of 3 in the 6.1 VM.
constexpr auto kBusyRetry = std::chrono::seconds(1);
constexpr auto kBusyRetryStep = std::chrono::milliseconds(10);

ProbeGroup::~ProbeGroup() {
  auto remove = [&](const Created& c) {
    return write_control(c.file, "-:" + group_ + "/" + c.event, true, {top_});
  };
  auto report = [](Error e) {
    if (e.err == EBUSY)
      e.hint =
          "still enabled in an instance or by a perf event (destroy those first); "
          "reset-tracing removes it once this process is gone";
    std::cerr << "tracekit: cleanup: " << e.str() << "\n";
  };
  std::vector<const Created*> busy;
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    auto s = remove(*it);
    if (s) continue;
    if (s.error().err == EBUSY)
      busy.push_back(&*it);
    else
      report(s.error());
  }
  // The busy ones again, after the others, until kBusyRetry has passed.
  const auto end = std::chrono::steady_clock::now() + kBusyRetry;
  while (!busy.empty()) {
    const bool last = std::chrono::steady_clock::now() >= end;
    std::vector<const Created*> still;
    for (const Created* c : busy) {
      auto s = remove(*c);
      if (s) continue;
      if (s.error().err != EBUSY || last)
        report(s.error());
      else
        still.push_back(c);
    }
    busy = std::move(still);
    if (!busy.empty()) std::this_thread::sleep_for(kBusyRetryStep);
  }
}

bool ProbeGroup::kprobes_supported() const { return exists(top_ + "/kprobe_events"); }

std::string ProbeGroup::definitions_file(const char* legacy) const {
  // TRACEKIT_KERNEL_FEATURES=-dynamic_events: as on a kernel before it.
  bool dynamic = exists(top_ + "/dynamic_events") &&
                 !kernel::forced_off(kernel::Feature::kDynamicEvents);
  return top_ + "/" + (dynamic ? "dynamic_events" : legacy);
}
bool ProbeGroup::uprobes_supported() const { return exists(top_ + "/uprobe_events"); }

std::string ProbeGroup::unique_name(const std::string& base) const {
  auto taken = [&](const std::string& n) {
    return std::find(events_.begin(), events_.end(), n) != events_.end();
  };
  if (!taken(base)) return base;
  for (int i = 1;; ++i)
    if (auto n = base + "_" + std::to_string(i); !taken(n)) return n;
}

Status ProbeGroup::define(const std::string& file, char type, const std::string& event,
                          const std::string& where, const std::string& fetchargs) {
  std::string cmd = std::string(1, type) + ":" + group_ + "/" + event + " " + where;
  if (!fetchargs.empty()) cmd += " " + fetchargs;
  auto s = write_control(file, cmd, true, {top_});
  if (s) return s;
  Error e = s.error();
  // Kernels before 5.2 have no error_log: dmesg may say more there.
  if (e.hint.empty())
    e.hint = exists(top_ + "/error_log") && !kernel::forced_off(kernel::Feature::kErrorLog)
                 ? "the kernel did not say why; check " + top_ + "/error_log"
                 : "the kernel did not say why (it has no error_log); check dmesg";
  return e;
}

Result<std::string> ProbeGroup::add(const std::string& file, char type, const std::string& base,
                                    const std::string& where, const std::string& fetchargs) {
  std::string event = unique_name(base);
  if (auto s = define(file, type, event, where, fetchargs); !s) return s.error();
  created_.push_back({event, file});
  events_.push_back(event);
  return event;
}

Result<std::string> ProbeGroup::add_kprobe(const std::string& function, bool is_return,
                                           const std::string& fetchargs,
                                           const std::string& event_hint) {
  if (!kprobes_supported())
    return Error{0,
                 "this kernel has no kprobes (CONFIG_KPROBES is off): kprobe_events is missing",
                 {},
                 "trace a tracepoint (t:cat:event) or a user function instead"};
  if (function.empty() || function.find_first_of(" \t\n") != std::string::npos)
    return Error{EINVAL, "not a kernel function name: \"" + function + "\"", {}, {}};
  std::string file = definitions_file("kprobe_events");
  return add(file, is_return ? 'r' : 'p',
             probe_name(event_hint.empty() ? (is_return ? "r_" : "p_") + function : event_hint),
             function, fetchargs);
}

namespace {

// "<path>:0x<offset>", a uprobe's place.
std::string uprobe_place(const std::string& path, uint64_t offset) {
  char off[32];
  std::snprintf(off, sizeof off, "0x%llx", static_cast<unsigned long long>(offset));
  return path + ":" + off;
}

// The kernel cannot parse a path with white space in a probe definition.
Status probeable_path(const std::string& path) {
  if (path.empty() || path.find_first_of(" \t\n") != std::string::npos)
    return Error{EINVAL, "cannot probe a file whose path has white space", path,
                 "make a symbolic link without spaces to it"};
  return {};
}

}  // namespace

Result<std::string> ProbeGroup::add_uprobe(const std::string& path, uint64_t offset, bool is_return,
                                           const std::string& event_hint,
                                           const std::string& fetchargs) {
  if (!uprobes_supported())
    return Error{0,
                 "this kernel has no uprobes (CONFIG_UPROBE_EVENTS is off): uprobe_events is "
                 "missing",
                 {},
                 "trace a tracepoint instead"};
  if (auto s = probeable_path(path); !s) return s.error();
  const std::string place = uprobe_place(path, offset);
  std::string base = event_hint;
  if (base.empty()) {
    auto slash = path.rfind('/');
    base = "u_" + path.substr(slash == std::string::npos ? 0 : slash + 1) + "_" +
           place.substr(place.rfind(":0x") + 3);
  }
  std::string file = definitions_file("uprobe_events");
  return add(file, is_return ? 'r' : 'p', probe_name(base), place, fetchargs);
}

Status ProbeGroup::append_uprobe(const std::string& event, const std::string& path,
                                 uint64_t offset, bool is_return, const std::string& fetchargs) {
  auto it = std::find_if(created_.begin(), created_.end(),
                         [&](const Created& c) { return c.event == event; });
  if (it == created_.end())
    return Error{EINVAL, "no event " + group_ + "/" + event + " of this run to append to", {}, {}};
  if (auto s = probeable_path(path); !s) return s.error();
  // Removing the event ("-:group/event", the destructor) removes this too.
  return define(it->file, is_return ? 'r' : 'p', event, uprobe_place(path, offset), fetchargs);
}

Result<std::string> ProbeGroup::add_eprobe(const std::string& system, const std::string& attached,
                                           const std::string& event_hint,
                                           const std::string& fetchargs) {
  if (!exists(top_ + "/dynamic_events"))
    return Error{0, "this kernel has no dynamic_events: no event probes", {},
                 "Linux 5.15 with CONFIG_EPROBE_EVENTS brings them"};
  return add(top_ + "/dynamic_events", 'e',
             probe_name(event_hint.empty() ? "e_" + attached : event_hint),
             system + "." + attached, fetchargs);
}

}  // namespace tracekit::tracefs

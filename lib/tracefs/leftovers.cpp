// How this works: every name tracekit gives to something in tracefs carries
// the pid of the run that made it (instances/tracekit_<pid>_<n>, probe group
// tracekit_<pid>[_<n>]). A run killed with SIGKILL leaves them behind; a
// name whose pid no longer runs (kill(pid, 0) fails with ESRCH) is a
// leftover. Instances are swept first, since one may still enable a probe of
// a dead group, and a probe enabled anywhere cannot be removed. Each step
// reads the file first and writes only when something is set, so a clean
// kernel sees no writes, and files the kernel refuses to show (the function
// tracer's, under lockdown) cannot hold anything to undo. All writes go
// through write_control(), so tests on a fake tree see each one.

#include "tracefs/leftovers.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <utility>

#include "tracefs/instance.hpp"
#include "util/strings.hpp"

namespace tracekit::tracefs {

namespace {

namespace fs = std::filesystem;

bool alive(int pid) { return kill(pid, 0) == 0 || errno == EPERM; }

// Whether a name of ours belongs to a run whose leftovers are swept now.
// Sets *live when the owner still runs.
bool swept(const std::string& name, bool include_live, bool* live) {
  int pid = owner_pid(name);
  if (pid <= 0 || pid == getpid()) return false;
  *live = alive(pid);
  return include_live || !*live;
}

std::string live_note(const std::string& name, bool live) {
  return live ? " (pid " + std::to_string(owner_pid(name)) + " is alive)" : "";
}

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::vector<std::string> subdirs(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (it->is_directory(ec2)) out.push_back(it->path().filename().string());
  }
  std::sort(out.begin(), out.end());  // a stable order for the report and tests
  return out;
}

// Lines of a function-filter file that name something: the kernel shows an
// empty filter as a "#### ... ####" comment, an empty pid list as "no pid".
size_t filter_entries(std::string_view text) {
  size_t n = 0;
  for (auto l : split(text, '\n')) {
    l = trim(l);
    if (!l.empty() && l[0] != '#' && l != "no pid") ++n;
  }
  return n;
}

// Collects the first failure of the steps before a removal, to explain a
// removal that then fails.
struct Steps {
  std::vector<std::string> dirs;  // error_log directories
  const SweepHooks* hooks = nullptr;
  std::string first_error;
  bool stopped = false;  // hooks->interrupted() said so: no more writes

  void write(const std::string& path, const std::string& text, bool append) {
    if (stopped || (hooks && hooks->interrupted && hooks->interrupted())) {
      stopped = true;
      return;
    }
    auto s = write_control(path, text, append, dirs);
    if (!s && first_error.empty()) first_error = s.error().str();
  }
  // Removes every trigger the file lists.
  void remove_triggers(const std::string& trigger_file) {
    auto text = read_file(trigger_file);
    if (!text) return;
    for (auto line : split(*text, '\n'))
      if (auto cmd = trigger_removal(line); !cmd.empty()) write(trigger_file, cmd, true);
  }
  // Writes text unless the file (when readable) already says one of quiet.
  void set_unless(const std::string& path, const std::string& text,
                  std::initializer_list<std::string_view> quiet) {
    auto cur = read_file(path);
    if (!cur) return;
    auto v = trim(*cur);
    for (auto q : quiet)
      if (v == q) return;
    write(path, text, false);
  }
};

std::string reason(int err, const std::string& hint, const std::string& earlier) {
  Error e{err, "", "", hint};
  std::string r = e.str();
  if (!earlier.empty()) r += "; before that: " + earlier;
  return r;
}

std::string busy_hint(const std::string& name, int err, bool live) {
  if (err != EBUSY) return "";
  if (live) return "pid " + std::to_string(owner_pid(name)) + " still reads it: end that run first";
  return "a process has a file of it open";
}

// Trigger lines of a trigger file (comments and blanks aside).
size_t trigger_count(const std::string& trigger_file) {
  auto text = read_file(trigger_file);
  if (!text) return 0;
  size_t n = 0;
  for (auto line : split(*text, '\n'))
    if (!trim(line).starts_with('!') && !trigger_removal(line).empty()) ++n;
  return n;
}

void sweep_instance(const std::string& top, const std::string& name, bool live,
                    const SweepHooks& hooks, Cleanup& c) {
  const std::string dir = top + "/instances/" + name;
  std::vector<std::string> trigger_files, enabled;
  size_t triggers = 0;
  for (const auto& sys : subdirs(dir + "/events"))
    for (const auto& ev : subdirs(dir + "/events/" + sys)) {
      const std::string ev_dir = dir + "/events/" + sys + "/" + ev;
      std::string f = ev_dir + "/trigger";
      if (size_t n = trigger_count(f)) {
        trigger_files.push_back(f);
        triggers += n;
      }
      if (auto e = read_file(ev_dir + "/enable"); e && trim(*e).starts_with('1'))
        enabled.push_back(ev_dir + "/enable");
    }
  if (hooks.starting)
    hooks.starting("instance " + name +
                   (triggers ? ", " + std::to_string(triggers) + " triggers" : std::string()));
  Steps steps{{dir, top}, &hooks, {}, false};
  // Tracing off first: a leftover with stacktrace triggers records every
  // hit until it is gone, and an interrupted sweep leaves it quiet.
  steps.set_unless(dir + "/tracing_on", "0", {"0"});
  // Each enabled event on its own, asking between them: disabling a uprobe
  // event waits for the kernel's synchronisation of uprobe users (tens of
  // milliseconds), which events/enable would do for all in one write that
  // no Ctrl-C can cut short.
  for (const auto& f : enabled) steps.set_unless(f, "0", {"0", "0*"});
  steps.set_unless(dir + "/events/enable", "0", {"0"});
  for (const auto& f : trigger_files) steps.remove_triggers(f);
  steps.set_unless(dir + "/current_tracer", "nop", {"nop"});
  if (auto f = read_file(dir + "/set_ftrace_filter"); f && filter_entries(*f) > 0)
    steps.write(dir + "/set_ftrace_filter", "", false);
  if (steps.stopped) {
    c.interrupted = true;
    return;
  }

  auto s = remove_dir(dir);
  // ENOENT: another run swept it meanwhile (two tools started at once after
  // a killed run both sweep); it is gone, which is all that was wanted.
  if (s || s.error().err == ENOENT) {
    c.removed.push_back("instance " + name + live_note(name, live));
    return;
  }
  int err = s.error().err;
  c.failed.push_back("instance " + name + ": " +
                     reason(err, busy_hint(name, err, live), steps.first_error));
}

void sweep_probes(const std::string& top, const std::string& file, bool include_live,
                  const SweepHooks& hooks, Cleanup& c) {
  auto text = read_file(file);
  if (!text) return;
  for (auto line : split(*text, '\n')) {
    auto p = parse_probe_line(line);
    bool live = false;
    if (p.group.empty() || !swept(p.group, include_live, &live)) continue;
    if (hooks.interrupted && hooks.interrupted()) {
      c.interrupted = true;
      return;
    }
    const std::string id = p.group + "/" + p.event;
    if (hooks.starting) hooks.starting("probe " + id);
    // A dead run never enables its probes at the top level, but a user may
    // have, or a run of a version that did: undo that or the removal is EBUSY.
    const std::string ev = top + "/events/" + id;
    Steps steps{{top}, &hooks, {}, false};
    if (exists(ev)) {
      steps.set_unless(ev + "/enable", "0", {"0"});
      steps.remove_triggers(ev + "/trigger");
      steps.set_unless(ev + "/filter", "0", {"none", ""});
    }
    if (steps.stopped) {
      c.interrupted = true;
      return;
    }
    auto s = write_control(file, "-:" + id, true, {top});
    if (s || s.error().err == ENOENT) {  // (ENOENT: another sweep was first)
      c.removed.push_back("probe " + id + live_note(p.group, live));
      continue;
    }
    int err = s.error().err;
    std::string hint = err == EBUSY ? "still enabled in an instance or by a perf event" : "";
    if (!s.error().hint.empty())
      hint = hint.empty() ? s.error().hint : hint + "; " + s.error().hint;
    c.failed.push_back("probe " + id + ": " + reason(err, hint, steps.first_error));
  }
}

}  // namespace

int owner_pid(const std::string& name) {
  constexpr std::string_view prefix = "tracekit_";
  std::string_view s = name;
  if (s.rfind(prefix, 0) != 0) return -1;
  s.remove_prefix(prefix.size());
  auto parts = split(s, '_');
  if (parts.size() > 2) return -1;
  auto pid = parse_int<int>(parts[0]);
  if (!pid || *pid <= 0) return -1;
  if (parts.size() == 2 && !parse_int<unsigned>(parts[1])) return -1;
  return *pid;
}

ProbeLine parse_probe_line(std::string_view line) {
  line = trim(line);
  auto space = line.find_first_of(" \t");
  auto def = line.substr(0, space);  // "p:group/event", "r10:group/event"
  auto colon = def.find(':');
  if (colon == std::string_view::npos) return {};
  auto id = def.substr(colon + 1);
  auto slash = id.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == id.size()) return {};
  return {std::string(id.substr(0, slash)), std::string(id.substr(slash + 1))};
}

Cleanup remove_leftovers(const std::string& tracing_dir, bool include_live,
                         const SweepHooks& hooks) {
  Cleanup c;
  for (const auto& name : subdirs(tracing_dir + "/instances")) {
    bool live = false;
    if (swept(name, include_live, &live)) sweep_instance(tracing_dir, name, live, hooks, c);
    if (c.interrupted) return c;
  }
  // dynamic_events lists the probes of kprobe_events and uprobe_events too:
  // read one or the others, so that nothing is removed twice.
  if (exists(tracing_dir + "/dynamic_events")) {
    sweep_probes(tracing_dir, tracing_dir + "/dynamic_events", include_live, hooks, c);
  } else {
    sweep_probes(tracing_dir, tracing_dir + "/kprobe_events", include_live, hooks, c);
    if (!c.interrupted)
      sweep_probes(tracing_dir, tracing_dir + "/uprobe_events", include_live, hooks, c);
  }
  return c;
}

Status sweep_dead_runs(const std::string& tracing_dir, const std::string& tool, std::ostream& warn,
                       const std::function<bool()>& interrupted) {
  // A killed run can leave hundreds of probes (funccount 'c:[a-m]*': 802):
  // the first few are named, the rest counted, so that the tool's own
  // output is not buried.
  constexpr size_t kNamed = 5;
  SweepHooks hooks;
  hooks.interrupted = interrupted;
  size_t started = 0;
  hooks.starting = [&](const std::string& what) {
    if (++started <= kNamed)
      warn << tool << ": removing " << what << ", left by a dead run..." << std::endl;
    else if (started == kNamed + 1)
      warn << tool << ": removing more that dead runs left..." << std::endl;
  };
  Cleanup c = remove_leftovers(tracing_dir, false, hooks);
  for (size_t i = 0; i < c.failed.size() && i < kNamed; ++i)
    warn << tool << ": cannot remove " << c.failed[i] << "\n";
  if (c.failed.size() > kNamed)
    warn << tool << ": cannot remove " << c.failed.size() - kNamed
         << " more (reset-tracing lists them)\n";
  if (c.interrupted) {
    warn << tool << ": interrupted; the rest is removed by the next run or by reset-tracing"
         << std::endl;
    return Error{EINTR, "interrupted while removing what dead runs left in tracefs", {},
                 "reset-tracing removes the rest"};
  }
  return {};
}

Cleanup reset_global(const std::string& tracing_dir) {
  Cleanup c;
  auto path = [&](const std::string& rel) { return tracing_dir + "/" + rel; };
  auto note = [&](const std::string& rel, Status s, const std::string& what) {
    if (s)
      c.removed.push_back(rel + ": " + what);
    else
      c.failed.push_back(rel + ": " + reason(s.error().err, s.error().hint, ""));
  };

  // Single values back to the kernel's defaults: function_graph's
  // threshold (funcslower) and depth (funcgraph -m), the function profiler
  // (funccount), and the options the tools change. Before current_tracer:
  // on older kernels (3.10) a tracer's own options (funcgraph-*,
  // func_stack_trace) are in options/ only while it is current_tracer, and
  // keep their values for its next use.
  const std::pair<const char*, const char*> defaults[] = {
      {"tracing_thresh", "0"},
      {"max_graph_depth", "0"},
      {"function_profile_enabled", "0"},
      {"options/func_stack_trace", "0"},
      {"options/stacktrace", "0"},
      {"options/userstacktrace", "0"},
      {"options/funcgraph-abstime", "0"},
      {"options/funcgraph-proc", "0"},
      {"options/funcgraph-tail", "0"},
      {"options/funcgraph-duration", "1"},
      {"options/sleep-time", "1"},
  };
  for (const auto& [rel, value] : defaults) {
    auto cur = read_file(path(rel));
    if (!cur || trim(*cur) == value) continue;
    note(rel, write_control(path(rel), value, false, {tracing_dir}),
         std::string(trim(*cur)) + " -> " + value);
  }

  if (auto cur = read_file(path("current_tracer")); cur && trim(*cur) != "nop")
    note("current_tracer", write_control(path("current_tracer"), "nop", false, {tracing_dir}),
         std::string(trim(*cur)) + " -> nop");

  for (const char* rel : {"set_ftrace_filter", "set_ftrace_notrace", "set_graph_function",
                          "set_graph_notrace", "set_ftrace_pid"}) {
    auto cur = read_file(path(rel));
    if (!cur) continue;  // missing, or unreadable and so unset (lockdown)
    size_t n = filter_entries(*cur);
    if (n == 0) continue;
    note(rel, write_control(path(rel), "", false, {tracing_dir}),
         std::to_string(n) + (n == 1 ? " entry" : " entries") + " emptied");
  }
  return c;
}

}  // namespace tracekit::tracefs

#include "syscount/syscount.hpp"

#include <sys/syscall.h>
#include <traceevent/event-parse.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "kernel/features.hpp"
#include "probe/spec.hpp"
#include "session/run.hpp"
#include "session/capture.hpp"
#include "session/saved_comms.hpp"
#include "session/trace_session.hpp"
#include "syscalls/raw.hpp"
#include "tracefs/event_format.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/child.hpp"
#include "util/proc.hpp"
#include "util/strings.hpp"

namespace tracekit::syscount {

std::vector<output::SyscountRow> Tally::rows() const {
  // By comm alone, PIDs of one name are one row: sum them first.
  std::map<std::tuple<int, std::string, long>, uint64_t> sum;
  for (const auto& [k, n] : counts_) {
    const int pid = static_cast<int>(k >> 32);
    const long nr = static_cast<int32_t>(static_cast<uint32_t>(k));
    std::string comm;
    if (columns_.comm)
      if (auto it = comms_.find(pid); it != comms_.end()) comm = it->second;
    sum[{columns_.pid ? pid : 0, comm, nr}] += n;
  }
  std::vector<output::SyscountRow> rows;
  for (const auto& [k, n] : sum) {
    const auto& [pid, comm, nr] = k;
    rows.push_back({pid, comm, columns_.syscall ? output::syscall_label(nr) : "", n});
  }
  return rows;
}

uint64_t Tally::total() const {
  uint64_t t = 0;
  for (const auto& [k, n] : counts_) t += n;
  return t;
}

std::string header_line(const Options& o) {
  const std::string top = o.top ? " Top " + std::to_string(*o.top) + " only." : "";
  std::ostringstream h;
  if (o.duration) {
    h << "Tracing for " << *o.duration << " seconds." << top << "..\n";
  } else if (o.pid) {
    h << "Tracing PID " << *o.pid << "." << top << ".. Ctrl-C to end.\n";
  } else if (!o.command.empty()) {
    std::string cmd;
    for (const auto& a : o.command) cmd += (cmd.empty() ? "" : " ") + a;
    h << "Tracing while running: \"" << cmd << "\"." << top << "..\n";
  } else {
    h << "Tracing." << top << ".. Ctrl-C to end.\n";
  }
  return h.str();
}

namespace {

// raw_syscalls:sys_enter in the session's instance, its records counted.
class RingEngine : public session::Engine {
 public:
  static Result<std::unique_ptr<RingEngine>> start(const std::string& dir, const Options& o,
                                                   StoppedChild* child, std::ostream& warn) {
    std::unique_ptr<RingEngine> e(new RingEngine(o, dir));
    e->child_ = child;
    probe::Target t;
    t.kind = probe::Kind::kTracepoint;
    t.system = std::string(syscalls::kRawSystem);
    t.event = std::string(syscalls::raw_event(false));
    std::vector<probe::Target> targets{t};
    // A command's processes, where the kernel cannot follow its forks
    // (no set_event_pid or options/event-fork: before 4.7): every process
    // is traced, with sched:sched_process_fork, and only the command's
    // descendants are counted (follow_forks_). The reader hands events out
    // in time order, and a child's fork is written before it first runs.
    if (child && !kernel_follows_forks(dir)) {
      probe::Target fork;
      fork.kind = probe::Kind::kTracepoint;
      fork.system = "sched";
      fork.event = "sched_process_fork";
      targets.push_back(fork);
      e->follow_forks_ = true;
      e->family_.insert(child->pid());
    }
    auto trace = session::TraceSession::create(dir, "syscount", targets, false, warn);
    if (!trace) return trace.error();
    e->trace_.emplace(std::move(*trace));
    if (e->trace_->probes().events().size() != targets.size())
      return Error{0, "cannot trace " + e->trace_->probes().skipped().front(), {}, {}};
    auto fmt = tracefs::EventFormat::load(dir, t.system, t.event);
    if (!fmt) return fmt.error();
    e->format_.emplace(std::move(*fmt));
    e->id_field_ = e->format_->field("id");
    if (!e->id_field_) return Error{ENOENT, "raw_syscalls:sys_enter has no id field", dir, {}};
    e->id_ = e->format_->id();
    e->id_offset_ = static_cast<size_t>(e->id_field_->offset);
    e->id_size_ = static_cast<size_t>(e->id_field_->size);
    if (e->follow_forks_) {
      auto ff = tracefs::EventFormat::load(dir, "sched", "sched_process_fork");
      if (!ff) return ff.error();
      e->fork_format_.emplace(std::move(*ff));
      e->fork_parent_ = e->fork_format_->field("parent_pid");
      e->fork_child_ = e->fork_format_->field("child_pid");
      if (!e->fork_parent_ || !e->fork_child_)
        return Error{ENOENT, "sched:sched_process_fork has no parent_pid or child_pid field", dir,
                     {}};
      e->fork_id_ = e->fork_format_->id();
    }
    session::CaptureOptions co;
    co.stacks = false;
    co.buffer_kb = kBufferKb;
    if (child && !e->follow_forks_) {
      co.pid = child->pid();
      co.children = true;
    } else if (!child) {
      co.pid = o.pid;
    }
    co.time_ordered = e->follow_forks_;
    // Not our own syscalls: reading the buffers would count itself.
    co.filter = "common_pid != " + std::to_string(::getpid());
    if (auto s = e->trace_->read_with_ftrace(co, warn); !s) return s.error();
    e->capture_ = e->trace_->ftrace();
    if (child && !e->follow_forks_ && !e->capture_->follows_new_threads())
      warn << "syscount: this kernel's tracefs cannot follow forks (no set_event_pid or "
              "event-fork): the processes the command starts are not counted\n";
    return e;
  }

  ~RingEngine() override = default;

  void poll(int timeout_ms) override {
    capture_->poll(timeout_ms, [&](const ftrace::Event& ev) { count(ev); });
    // The command has ended: so has the run (what it did is in the buffers).
    if (child_ && child_->exited()) cli::request_stop();
  }
  void stop() override { (void)capture_->instance().set_tracing_on(false); }
  void report(std::ostream& out, std::ostream& err) override {
    capture_->flush([&](const ftrace::Event& ev) { count(ev); });
    output::syscount_table(out, tally_.columns(), tally_.rows(), top_);
    session::report_lost(err, capture_->reader().dropped(), false);
  }

 private:
  RingEngine(const Options& o, const std::string& dir)
      : tally_(output::syscount_columns(o.by_syscall, o.verbose)), top_(o.top), comms_(dir) {}

  // Whether the kernel adds a traced task's children to the pid list
  // itself (session::can_follow_forks), as the capture will find it.
  static bool kernel_follows_forks(const std::string& dir) {
    return session::can_follow_forks(
        [&](const std::string& rel) {
          if (rel == "set_event_pid" && kernel::forced_off(kernel::Feature::kSetEventPid))
            return false;
          if (rel == "options/event-fork" && kernel::forced_off(kernel::Feature::kEventFork))
            return false;
          return ::access((dir + "/" + rel).c_str(), F_OK) == 0;
        },
        false);
  }

  void count(const ftrace::Event& ev) {
    if (follow_forks_ && ev.type == fork_id_) {
      auto parent = fork_format_->number(fork_parent_, ev.data);
      auto kid = fork_format_->number(fork_child_, ev.data);
      if (parent && kid && family_.count(static_cast<int>(*parent)))
        family_.insert(static_cast<int>(*kid));
      return;
    }
    if (ev.type != id_) return;
    if (follow_forks_ && !family_.count(ev.pid)) return;
    long n;
    // The id is a long at a fixed offset: read it directly (this runs for
    // every syscall of the system); through libtraceevent otherwise.
    if (id_size_ == sizeof(int64_t) && ev.data.size() >= id_offset_ + sizeof(int64_t)) {
      int64_t v;
      std::memcpy(&v, ev.data.data() + id_offset_, sizeof v);
      n = static_cast<long>(v);
    } else {
      auto nr = format_->number(id_field_, ev.data);
      if (!nr) return;
      n = static_cast<long>(static_cast<int64_t>(*nr));
    }
    // The command's execve, made by our child before it became the command:
    // not the command's (perf starts counting at that exec).
    if (child_ && !exec_skipped_ && ev.pid == child_->pid() && n == SYS_execve) {
      exec_skipped_ = true;
      return;
    }
    tally_.add(ev.pid, n, [&](int pid) { return comm_of(pid); });
  }

  // The name of pid when first seen: /proc while it lives, else the
  // kernel's saved_cmdlines. The whole name: one renamed with
  // prctl(PR_SET_NAME) may hold newlines (the kernel adds one at the end).
  std::string comm_of(int pid) {
    if (auto c = read_file("/proc/" + std::to_string(pid) + "/comm")) {
      std::string name = std::move(*c);
      if (!name.empty() && name.back() == '\n') name.pop_back();
      if (!name.empty()) return name;
    }
    return comms_(pid);
  }

  Tally tally_;
  std::optional<size_t> top_;
  session::SavedComms comms_;
  std::optional<session::TraceSession> trace_;
  std::optional<tracefs::EventFormat> format_;
  const tep_format_field* id_field_ = nullptr;
  int id_ = -1;
  size_t id_offset_ = 0, id_size_ = 0;
  session::FtraceCapture* capture_ = nullptr;
  StoppedChild* child_ = nullptr;
  bool exec_skipped_ = false;
  // Forks followed here (kernel_follows_forks() false): the command and
  // the tasks it started, by sched:sched_process_fork.
  bool follow_forks_ = false;
  std::set<int> family_;
  std::optional<tracefs::EventFormat> fork_format_;
  const tep_format_field* fork_parent_ = nullptr;
  const tep_format_field* fork_child_ = nullptr;
  int fork_id_ = -1;
};


}  // namespace

session::Outcome set_up(const Options& o) {
  if (o.pid && !process_exists(*o.pid))
    return 
        no_process_error(*o.pid);
  auto dir = tracefs::tracing_dir();
  if (!dir) return dir.error();
  std::shared_ptr<StoppedChild> child;
  if (!o.command.empty()) {
    auto c = StoppedChild::spawn(o.command);
    if (!c) return c.error();
    child = std::make_shared<StoppedChild>(std::move(*c));
  }
  auto engine = RingEngine::start(*dir, o, child.get(), std::cerr);
  if (!engine) return engine.error();
  session::RunOptions r;
  r.duration = o.duration;
  r.poll_ms = kPollMs;
  auto started = session::started(std::move(engine), r);
  // The header, then the command let go: its first calls come after it.
  std::get<session::Started>(started).begin = [child, header = header_line(o)]() -> Status {
    std::cout << header << std::flush;
    if (child) return child->resume();
    return {};
  };
  return started;
}

}  // namespace tracekit::syscount

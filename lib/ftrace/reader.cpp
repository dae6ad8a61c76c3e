// How this works: open() reads the formats of the requested event systems
// (plus "ftrace", for kernel_stack) and the page header into a
// libtraceevent handle, loads /proc/kallsyms for stripping tracing frames,
// and opens per_cpu/cpuN/trace_pipe_raw of every online CPU, non-blocking.
// A read(2) of that file hands out one sub-buffer: a whole page the ring
// buffer swaps out, or, when the writer is still on its page, the events so
// far copied into a page of their own; EAGAIN when empty. Decoding and
// pairing is Decoder's (decode.cpp). One page buffer serves every CPU: the
// decoder copies the one event it may keep across pages.
//
// Why read(2) and not libtracefs' tracefs_cpu: tracefs_cpu_read is a read(2)
// of this same file, 1.6.4 gives no access to its descriptor (poll() needs
// one), and tracefs_cpu_buffered_read (splice) returns whole pages only, so
// a quiet CPU's events would wait for a flush. tracekit does not link
// libtracefs: its control files are plain reads and writes (lib/tracefs).
//
// Kernel stacks are stripped of the tracing frames by symbol, and the
// symbol table loads in the background (symbols/kallsyms.hpp) for up to
// 150 ms after the tool starts, while the traced program already runs: a
// fast stream of stacks fills a CPU's buffer in 15 ms. So until the table is
// there, pages are copied into a backlog (util/backlog.hpp) and decoded, in
// the order read, once it is: the buffers are emptied meanwhile. (flush()
// waits for the table.)
//
// poll() on trace_pipe_raw reports readable only once the buffer is
// buffer_percent full (default 50), so after poll() returns, ready or timed
// out, every CPU is read until empty: the timeout bounds the latency. Each
// CPU's reads per call are capped at about its buffer's page count, so a
// producer faster than the reader cannot keep poll() from returning. The
// CPUs' pages are read interleaved by time (read_merged), so that a
// consumer putting the CPUs' events in order need keep only a few pages'
// worth of them: on a host where a page fault costs tens of microseconds,
// keeping a whole pass's text (three times the rings) cost a printing
// reader its first passes' worth of events.
#include "ftrace/reader.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <traceevent/event-parse.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "ftrace/decode.hpp"
#include "symbols/kallsyms.hpp"
#include "util/backlog.hpp"
#include "util/fd.hpp"
#include "util/strings.hpp"

namespace tracekit::ftrace {

namespace {

// Every format of one event system: events/<system>/<event>/format. Error:
// no such system directory.
Status read_system_formats(const std::string& tracing_dir, const std::string& system,
                           std::vector<FormatText>& out) {
  std::string dir = tracing_dir + "/events/" + system;
  DIR* d = opendir(dir.c_str());
  if (!d)
    return Error::from_errno("no event system " + system, dir,
                             "see " + tracing_dir + "/available_events");
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == ".." || e->d_type != DT_DIR) continue;
    auto text = read_file(dir + "/" + name + "/format");
    if (text) out.push_back({system, std::move(*text)});
  }
  closedir(d);
  return {};
}

// "overrun" (overwritten, overwrite mode) plus "dropped events" (refused by
// a full buffer, overwrite off) of one CPU's stats file; 0 if unreadable.
uint64_t lost_events(const std::string& stats_path) {
  auto text = read_file(stats_path);
  if (!text) return 0;
  uint64_t total = 0;
  for (auto line : split(*text, '\n')) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    auto key = line.substr(0, colon);
    if (key != "overrun" && key != "dropped events") continue;
    if (auto v = parse_int<uint64_t>(trim(line.substr(colon + 1)))) total += *v;
  }
  return total;
}

// The first number of a file ("7 (expanded: 1408)" -> 7, "4" -> 4) and the
// expanded one when present (1408).
std::optional<size_t> kb_file(const std::string& path) {
  auto text = read_file(path);
  if (!text) return std::nullopt;
  std::string_view s = *text;
  std::optional<size_t> v;
  if (auto p = s.find("expanded:"); p != std::string_view::npos) {
    auto rest = trim(s.substr(p + 9));
    v = parse_int<size_t>(rest.substr(0, rest.find(')')));
  }
  if (!v) v = parse_int<size_t>(trim(s.substr(0, s.find(' '))));
  return v;
}

}  // namespace

struct Reader::Impl {
  struct Cpu {
    int cpu = 0;
    Fd fd;
    std::string stats;
    uint64_t lost_at_open = 0;
  };

  TepPtr tep;
  std::unique_ptr<symbols::KernelSymbols> symbols;  // null when kallsyms is unusable
  std::optional<Decoder> decoder;                   // after tep and symbols: uses both
  std::vector<Cpu> cpus;
  std::vector<pollfd> pollfds;  // one per cpus entry
  std::vector<uint8_t> page;    // one sub-buffer
  size_t max_pages = 0;         // per CPU per poll()

  // Time-ordered mode: the events of one pass, copied out of the page.
  struct Held {
    Event e;
    std::vector<uint8_t> data, stack_record, user_stack_record;
    std::vector<uint64_t> stack, user_stack;
  };
  bool ordered = false;
  std::vector<Held> held;

  void hold(const Event& e) {
    Held& h = held.emplace_back();
    h.e = e;
    h.data.assign(e.data.begin(), e.data.end());
    h.stack_record.assign(e.stack_record.begin(), e.stack_record.end());
    h.user_stack_record.assign(e.user_stack_record.begin(), e.user_stack_record.end());
    h.stack.assign(e.stack.begin(), e.stack.end());
    h.user_stack.assign(e.user_stack.begin(), e.user_stack.end());
  }

  // Hands out the held events by timestamp (stable: one CPU's events keep
  // their order) and forgets them.
  size_t hand_out_held(const Callback& fn) {
    std::stable_sort(held.begin(), held.end(),
                     [](const Held& a, const Held& b) { return a.e.ts < b.e.ts; });
    for (Held& h : held) {
      h.e.data = h.data;
      h.e.stack_record = h.stack_record;
      h.e.user_stack_record = h.user_stack_record;
      h.e.stack = h.stack;
      h.e.user_stack = h.user_stack;
      fn(h.e);
    }
    size_t n = held.size();
    held.clear();
    return n;
  }

  // Runs one pass (reads calling fn) handing out in time order when asked.
  template <typename Pass>
  size_t pass(const Callback& fn, Pass&& reads) {
    if (!ordered) return reads(fn);
    reads(Callback([this](const Event& e) { hold(e); }));
    return hand_out_held(fn);
  }

  // Pages read while the kernel symbol table still loads (see the top).
  Backlog early;

  // Decodes what early holds (waiting for the table), in the order read.
  size_t replay(const Callback& fn) {
    size_t handed = 0;
    early.replay([&](uint64_t cpu, std::span<const uint8_t> p) {
      handed += decoder->decode_page(static_cast<int>(cpu), p, fn);
    });
    return handed;
  }

  // Decodes one page of cpu's, or holds it back while the table loads.
  size_t take(int cpu, std::span<const uint8_t> p, const Callback& fn) {
    if (symbols && !symbols->loaded() && early.hold(static_cast<uint64_t>(cpu), p)) return 0;
    size_t handed = early.empty() ? 0 : replay(fn);
    return handed + decoder->decode_page(cpu, p, fn);
  }

  // Reads the CPUs' pages until each is empty or had max reads, merged by
  // time: each read is of the CPU, among those not done, whose last event
  // handed out is the earliest (one page at a time). After each page,
  // progress (if set) is told a time no event still to come in this pass
  // precedes: the earliest of the last events of the CPUs not done and of
  // the events the decoder keeps waiting for a stack, or UINT64_MAX once
  // there are none. A consumer that orders the CPUs' events can so print as
  // it goes, keeping about a page per CPU, where reading one CPU to the end
  // before the next would make it keep the whole pass. Not while pages wait
  // for the symbol table (their events come later, in the order read).
  size_t read_merged(size_t max, const Callback& fn, const Progress& progress) {
    const size_t n = cpus.size();
    open.assign(n, 1);
    reads.assign(n, 0);
    last.assign(n, 0);
    const Callback track = [&](const Event& e) {
      if (static_cast<size_t>(e.cpu) < slot_of.size()) {
        size_t s = slot_of[static_cast<size_t>(e.cpu)];
        if (s < n) last[s] = e.ts;
      }
      fn(e);
    };
    size_t handed = 0;
    for (;;) {
      size_t pick = n;
      for (size_t i = 0; i < n; ++i)
        if (open[i] && (pick == n || last[i] < last[pick])) pick = i;
      if (pick == n) break;
      Cpu& c = cpus[pick];
      ssize_t got = read(c.fd.get(), page.data(), page.size());
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {  // EAGAIN: empty
        open[pick] = 0;
      } else {
        handed += take(c.cpu, {page.data(), static_cast<size_t>(got)}, track);
        if (++reads[pick] >= max) open[pick] = 0;
      }
      if (progress && early.empty()) {
        uint64_t upto = UINT64_MAX;
        for (size_t i = 0; i < n; ++i) {
          if (open[i]) upto = std::min(upto, last[i]);
          if (auto t = decoder->pending_ts(cpus[i].cpu)) upto = std::min(upto, *t);
        }
        progress(upto);
      }
    }
    return handed;
  }
  std::vector<size_t> slot_of;  // a CPU number's index in cpus (cpus.size(): none)
  std::vector<char> open;       // read_merged's state, kept for its storage
  std::vector<size_t> reads;
  std::vector<uint64_t> last;
};

Reader::Reader(Reader&&) noexcept = default;
Reader& Reader::operator=(Reader&&) noexcept = default;
Reader::~Reader() = default;

Result<Reader> Reader::open(const std::string& tracing_dir, const std::string& instance,
                            const std::vector<std::string>& systems, StackKinds stacks) {
  std::string dir = instance.empty() ? tracing_dir : tracing_dir + "/instances/" + instance;
  struct stat st;
  if (stat((dir + "/per_cpu").c_str(), &st) != 0)
    return Error::from_errno(
        "no trace buffers", dir + "/per_cpu",
        instance.empty() ? "root? tracefs mounted?" : "create the instance first; root?");

  auto impl = std::make_unique<Impl>();

  auto header = read_file(tracing_dir + "/events/header_page");
  if (!header)
    return Error{header.error().err, "cannot read the ring buffer page header",
                 tracing_dir + "/events/header_page", "root? tracefs mounted?"};
  std::vector<std::string> wanted;
  for (auto& s : systems)
    if (std::find(wanted.begin(), wanted.end(), s) == wanted.end()) wanted.push_back(s);
  if (std::find(wanted.begin(), wanted.end(), "ftrace") == wanted.end()) wanted.push_back("ftrace");
  std::vector<FormatText> formats;
  for (auto& s : wanted) {
    // "system/event": that event's format alone (a system can have
    // hundreds: syscalls has 700, parsed in tens of milliseconds).
    if (auto slash = s.find('/'); slash != std::string::npos) {
      std::string path = tracing_dir + "/events/" + s + "/format";
      auto text = read_file(path);
      if (!text)
        return Error{text.error().err, "cannot read an event format", path,
                     "see " + tracing_dir + "/available_events"};
      formats.push_back({s.substr(0, slash), std::move(*text)});
      continue;
    }
    if (auto st = read_system_formats(tracing_dir, s, formats); !st) return st.error();
  }
  auto tep = tep_from_formats(*header, formats);
  if (!tep) return tep.error();
  impl->tep = std::move(*tep);

  // Without usable kallsyms (not root, kptr_restrict) stacks are still
  // read, just not stripped of tracing frames. Only kernel stacks need them;
  // the table loads in the background (symbols/kallsyms.hpp), and the first
  // stack decoded waits for it, while the buffer holds the events.
  if (stacks.kernel)
    if (auto syms = symbols::KernelSymbols::load())
      impl->symbols = std::make_unique<symbols::KernelSymbols>(std::move(*syms));

  auto dec = Decoder::create(impl->tep.get(), stacks, impl->symbols.get());
  if (!dec) return dec.error();
  impl->decoder.emplace(std::move(*dec));

  const std::string online_path = "/sys/devices/system/cpu/online";
  auto online = read_file(online_path);
  if (!online) return online.error();
  auto cpus = parse_cpu_list(trim(*online));
  if (!cpus || cpus->empty()) return Error{0, "cannot parse the online CPU list", online_path, {}};

  size_t subbuf = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (auto kb = kb_file(dir + "/buffer_subbuf_size_kb"); kb && *kb > 0) subbuf = *kb * 1024;
  impl->page.resize(subbuf);
  size_t buffer_kb = kb_file(dir + "/buffer_size_kb").value_or(1408);
  impl->max_pages = std::max<size_t>(16, buffer_kb * 1024 / subbuf + 2);

  for (int cpu : *cpus) {
    Impl::Cpu c;
    c.cpu = cpu;
    std::string base = dir + "/per_cpu/cpu" + std::to_string(cpu);
    std::string path = base + "/trace_pipe_raw";
    c.fd = Fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!c.fd.valid()) return Error::from_errno("cannot open a CPU's trace buffer", path, "root?");
    c.stats = base + "/stats";
    c.lost_at_open = lost_events(c.stats);
    impl->pollfds.push_back({c.fd.get(), POLLIN, 0});
    impl->cpus.push_back(std::move(c));
  }
  for (size_t i = 0; i < impl->cpus.size(); ++i) {
    const auto cpu = static_cast<size_t>(impl->cpus[i].cpu);
    if (impl->slot_of.size() <= cpu) impl->slot_of.resize(cpu + 1, impl->cpus.size());
    impl->slot_of[cpu] = i;
  }

  Reader r;
  r.impl_ = std::move(impl);
  return r;
}

tep_handle* Reader::tep() const { return impl_->tep.get(); }

int Reader::event_id(const std::string& system, const std::string& event) const {
  tep_event* e = tep_find_event_by_name(impl_->tep.get(), system.c_str(), event.c_str());
  return e ? e->id : -1;
}

size_t Reader::poll(int timeout_ms, const Callback& fn, const Progress& progress) {
  auto& fds = impl_->pollfds;
  for (auto& p : fds) p.revents = 0;
  // Ready, timed out or interrupted: read everything either way (see the
  // buffer_percent note at the top).
  (void)::poll(fds.data(), fds.size(), timeout_ms);
  return impl_->pass(fn, [&](const Callback& to) {
    size_t handed = impl_->read_merged(impl_->max_pages, to, impl_->ordered ? nullptr : progress);
    if (!impl_->early.empty() && impl_->symbols->loaded()) handed += impl_->replay(to);
    return handed;
  });
}

size_t Reader::flush(const Callback& fn, const Progress& progress) {
  return impl_->pass(fn, [&](const Callback& to) {
    size_t handed =
        impl_->read_merged(impl_->max_pages * 2, to, impl_->ordered ? nullptr : progress);
    handed += impl_->replay(to);  // waits for the table
    return handed + impl_->decoder->finish(to);
  });
}

void Reader::set_time_ordered(bool on) { impl_->ordered = on; }

uint64_t Reader::dropped() const {
  uint64_t total = 0;
  for (auto& c : impl_->cpus) {
    uint64_t now = lost_events(c.stats);
    if (now > c.lost_at_open) total += now - c.lost_at_open;
  }
  return total;
}

uint64_t Reader::unpaired() const { return impl_->decoder->unpaired(); }

}  // namespace tracekit::ftrace

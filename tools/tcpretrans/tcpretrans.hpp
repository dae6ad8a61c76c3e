// tcpretrans: TCP retransmits as they happen, with the socket's addresses,
// ports and state (perf-tools' tcpretrans).
//
// Where the kernel has it, the tcp:tcp_retransmit_skb tracepoint (4.15+),
// which carries the addresses itself; else a kprobe on tcp_retransmit_skb
// reading the socket's fields (tcpretrans/decode.hpp). perf-tools used that
// kprobe and looked the socket up in /proc/net/tcp a second later, which
// loses short-lived sockets and every IPv6 one. -l adds a kprobe on
// tcp_send_loss_probe (no kernel has a tracepoint there): tail loss probes,
// printed "L>". -s adds a stacktrace trigger on each event. The events are
// read raw from a private instance, as they come; every line is stamped
// with the time it was read, as perf-tools did.
#pragma once

#include <functional>
#include <string_view>

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "kernel/features.hpp"
#include "probe/spec.hpp"
#include "session/run.hpp"
#include "util/result.hpp"

namespace tracekit::tcpretrans {

struct Options {
  bool loss_probes = false;  // -l
  bool stacks = false;       // -s
};

// How retransmits are traced on a kernel.
enum class Path { kTracepoint, kKprobe };

// The probes a run needs on a kernel with these features. Error: neither
// the tracepoint nor kprobes, or -l without kprobes (the missing feature
// and what brings it).
Result<std::vector<probe::Target>> targets(const Options& o, kernel::Features& features,
                                           Path* path);

// Whether the kernel has TCP (tcp_retransmit_skb) and the functions the
// kprobe targets name (has: a function of the kernel's text, from
// /proc/kallsyms). Error naming the first missing: a kernel built without
// CONFIG_INET has no TCP at all; a kprobe on tcp_retransmit_skb is then
// refused with ENOENT, which the kernel does not explain (3.10-4.19 have no
// error_log), and 4.19's tcp:tcp_retransmit_skb tracepoint is there but
// never fires. Pure.
Status check_functions(const std::vector<probe::Target>& targets,
                       const std::function<bool(std::string_view)>& has);

class Tracer : public session::Engine {
 public:
  // Creates the probes and starts reading them. Error: see targets(), or
  // what the kernel refused.
  static Result<Tracer> start(const Options& o, std::ostream& out, std::ostream& warn);
  Tracer(Tracer&&) noexcept;
  ~Tracer() override;

  void poll(int timeout_ms) override;
  void stop() override;
  // Unless stdout's reader has gone: reads and prints what is left; then
  // reports on err the events the buffers refused.
  void report(std::ostream& out, std::ostream& err) override;

  Path path() const;
  uint64_t printed() const;

 private:
  struct Impl;
  explicit Tracer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracekit::tcpretrans

// tcpretrans's events, decoded: a retransmitted (or tail-loss-probed)
// socket's addresses, ports and TCP state, from either of two records:
//
//  - the tcp:tcp_retransmit_skb tracepoint (Linux 4.15+): sport/dport in
//    host order, saddr/daddr as 4 bytes and saddr_v6/daddr_v6 as 16, and on
//    later kernels state (4.16) and family (5.x). Without family, a socket
//    is IPv4 when its v6 addresses are v4-mapped (the kernel stores them so
//    for AF_INET sockets); without state, the state is unknown ("-").
//  - a kprobe on tcp_retransmit_skb or tcp_send_loss_probe, whose first
//    argument is the struct sock: its sock_common fields are fetched by
//    offset (kprobe_fetchargs()), the same names as the tracepoint's, with
//    dport in network order (skc_dport) and each v6 address as two u64
//    halves (fetch arrays came after the tracepoint did).
//
// Fields are found by name in the event's format, never assumed, and
// addresses are copied as the bytes the kernel stored.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "util/result.hpp"

struct tep_format_field;

namespace tracekit::tcpretrans {

// One event: a retransmit ("R") or a tail loss probe ("L").
struct Retransmit {
  uint64_t ts = 0;  // ring buffer clock, ns
  int pid = 0;      // common_pid: often 0 or any task, since timers retransmit
  bool loss_probe = false;
  bool ipv6 = false;
  std::array<uint8_t, 16> saddr{}, daddr{};  // 4 bytes used for IPv4
  uint16_t sport = 0, dport = 0;             // host order
  int state = -1;                            // TCP_ESTABLISHED..., -1 unknown
  std::vector<uint64_t> stack;               // -s: kernel stack, leaf first
};

// The TCP state's name as perf-tools prints it ("ESTABLISHED", "SYN_SENT",
// ..., "NEW_SYN_RECV"); "-" for -1, the number for one it does not know.
std::string state_name(int state);

// "ADDR:PORT": dotted quad for IPv4, RFC 5952 text for IPv6 ("::1:8080").
std::string endpoint(bool ipv6, const std::array<uint8_t, 16>& addr, uint16_t port);

// The fetch arguments of a kprobe whose first argument (sk, a register
// such as "%di") is a struct sock *: its sock_common fields by x86_64
// offset, named as decode() reads them.
std::string kprobe_fetchargs(const std::string& sk);

// Where the record came from, which says how its fields are stored.
enum class Source { kTracepoint, kKprobe };

class Decoder {
 public:
  // field(name): the event's field of that name, nullptr when it has none.
  // Error: a field without which nothing can be printed is missing
  // (sport, dport, saddr, daddr), named in the message.
  static Result<Decoder> make(const std::function<const tep_format_field*(const char*)>& field,
                              Source source, bool loss_probe);
  // The event of a raw record (common fields included); nullopt when the
  // record is shorter than its fields.
  std::optional<Retransmit> decode(std::span<const uint8_t> raw) const;

 private:
  Decoder() = default;
  struct Field {
    size_t offset = 0, size = 0;
    bool present = false;
  };
  Source source_ = Source::kTracepoint;
  bool loss_probe_ = false;
  Field sport_, dport_, family_, state_, saddr_, daddr_;
  // IPv6 addresses: one 16-byte field (tracepoint) or two 8-byte halves.
  Field saddr6_[2], daddr6_[2];
};

}  // namespace tracekit::tcpretrans

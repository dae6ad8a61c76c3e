#include "tcpretrans/decode.hpp"

#include <arpa/inet.h>
#include <traceevent/event-parse.h>

#include <cstring>

namespace tracekit::tcpretrans {

namespace {

// include/net/tcp_states.h, from 1; the names without "TCP_", as
// perf-tools prints them.
constexpr const char* kStates[] = {
    "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2",    "TIME_WAIT",     "CLOSE",
    "CLOSE_WAIT",  "LAST_ACK", "LISTEN",   "CLOSING",   "NEW_SYN_RECV", "BOUND_INACTIVE"};

uint64_t read_number(std::span<const uint8_t> raw, size_t offset, size_t size) {
  uint64_t v = 0;
  // Host order (the ring holds the kernel's own); little-endian x86_64.
  std::memcpy(&v, raw.data() + offset, size < sizeof v ? size : sizeof v);
  return v;
}

}  // namespace

std::string state_name(int state) {
  if (state < 0) return "-";
  if (state >= 1 && static_cast<size_t>(state) <= std::size(kStates)) return kStates[state - 1];
  return std::to_string(state);
}

std::string endpoint(bool ipv6, const std::array<uint8_t, 16>& addr, uint16_t port) {
  char buf[INET6_ADDRSTRLEN] = "?";
  inet_ntop(ipv6 ? AF_INET6 : AF_INET, addr.data(), buf, sizeof buf);
  return std::string(buf) + ":" + std::to_string(port);
}

std::string kprobe_fetchargs(const std::string& sk) {
  // struct sock_common on x86_64 (unchanged from 3.x to 6.x): skc_daddr 0,
  // skc_rcv_saddr 4, skc_dport 12 (network order), skc_num 14, skc_family
  // 16, skc_state 18, skc_v6_daddr 56, skc_v6_rcv_saddr 72.
  auto at = [&](int off, const char* name, const char* type) {
    return std::string(name) + "=+" + std::to_string(off) + "(" + sk + "):" + type;
  };
  return at(0, "daddr", "u32") + " " + at(4, "saddr", "u32") + " " + at(12, "dport", "u16") + " " +
         at(14, "sport", "u16") + " " + at(16, "family", "u16") + " " + at(18, "state", "u8") +
         " " + at(56, "daddr_v6a", "u64") + " " + at(64, "daddr_v6b", "u64") + " " +
         at(72, "saddr_v6a", "u64") + " " + at(80, "saddr_v6b", "u64");
}

Result<Decoder> Decoder::make(const std::function<const tep_format_field*(const char*)>& field,
                              Source source, bool loss_probe) {
  Decoder d;
  d.source_ = source;
  d.loss_probe_ = loss_probe;
  auto get = [&](const char* name, Field& to) {
    const tep_format_field* f = field(name);
    if (!f) return;
    to.offset = static_cast<size_t>(f->offset);
    to.size = static_cast<size_t>(f->size);
    to.present = true;
  };
  get("sport", d.sport_);
  get("dport", d.dport_);
  get("family", d.family_);
  get("state", d.state_);
  get("saddr", d.saddr_);
  get("daddr", d.daddr_);
  if (source == Source::kTracepoint) {
    get("saddr_v6", d.saddr6_[0]);
    get("daddr_v6", d.daddr6_[0]);
  } else {
    get("saddr_v6a", d.saddr6_[0]);
    get("saddr_v6b", d.saddr6_[1]);
    get("daddr_v6a", d.daddr6_[0]);
    get("daddr_v6b", d.daddr6_[1]);
  }
  for (auto [name, f] : {std::pair{"sport", &d.sport_},
                         {"dport", &d.dport_},
                         {"saddr", &d.saddr_},
                         {"daddr", &d.daddr_}})
    if (!f->present) return Error{0, std::string("the event has no field ") + name, {}, {}};
  return d;
}

std::optional<Retransmit> Decoder::decode(std::span<const uint8_t> raw) const {
  auto fits = [&](const Field& f) { return !f.present || f.offset + f.size <= raw.size(); };
  for (const Field* f : {&sport_, &dport_, &family_, &state_, &saddr_, &daddr_, &saddr6_[0],
                         &saddr6_[1], &daddr6_[0], &daddr6_[1]})
    if (!fits(*f)) return std::nullopt;
  auto bytes = [&](const Field& f, uint8_t* to, size_t max) {
    if (f.present) std::memcpy(to, raw.data() + f.offset, f.size < max ? f.size : max);
  };
  Retransmit r;
  r.loss_probe = loss_probe_;
  r.sport = static_cast<uint16_t>(read_number(raw, sport_.offset, sport_.size));
  r.dport = static_cast<uint16_t>(read_number(raw, dport_.offset, dport_.size));
  if (source_ == Source::kKprobe) r.dport = ntohs(r.dport);  // skc_dport
  if (state_.present) r.state = static_cast<int>(read_number(raw, state_.offset, state_.size));

  std::array<uint8_t, 16> s6{}, d6{};
  bytes(saddr6_[0], s6.data(), 16);
  bytes(daddr6_[0], d6.data(), 16);
  if (saddr6_[1].present) bytes(saddr6_[1], s6.data() + 8, 8);
  if (daddr6_[1].present) bytes(daddr6_[1], d6.data() + 8, 8);
  if (family_.present) {
    r.ipv6 = read_number(raw, family_.offset, family_.size) == AF_INET6;
  } else {
    // 4.15's tracepoint: v4-mapped v6 addresses stand for an AF_INET socket.
    static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    r.ipv6 = saddr6_[0].present && std::memcmp(s6.data(), kMapped, 12) != 0;
  }
  if (r.ipv6) {
    r.saddr = s6;
    r.daddr = d6;
  } else {
    bytes(saddr_, r.saddr.data(), 4);
    bytes(daddr_, r.daddr.data(), 4);
  }
  return r;
}

}  // namespace tracekit::tcpretrans

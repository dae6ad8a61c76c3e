// tcpretrans without a kernel: records of the tcp:tcp_retransmit_skb
// tracepoint as this kernel (6.18) and 4.15 lay them out, and of the
// kprobe on tcp_retransmit_skb, decoded; the state names and addresses;
// the lines as perf-tools prints them; and the way chosen per kernel.
#include "tcpretrans/render.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>

#include "../tracefs/fake_tree.hpp"
#include "kernel/features.hpp"
#include "tcpretrans/decode.hpp"
#include "tcpretrans/tcpretrans.hpp"
#include "tracefs/event_format.hpp"

namespace tracekit::tcpretrans {
namespace {

// This kernel's format (Linux 6.18), as events/tcp/tcp_retransmit_skb/format.
const char kFormat618[] = R"(name: tcp_retransmit_skb
ID: 2281
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:const void * skbaddr;	offset:8;	size:8;	signed:0;
	field:const void * skaddr;	offset:16;	size:8;	signed:0;
	field:int state;	offset:24;	size:4;	signed:1;
	field:__u16 sport;	offset:28;	size:2;	signed:0;
	field:__u16 dport;	offset:30;	size:2;	signed:0;
	field:__u16 family;	offset:32;	size:2;	signed:0;
	field:__u8 saddr[4];	offset:34;	size:4;	signed:0;
	field:__u8 daddr[4];	offset:38;	size:4;	signed:0;
	field:__u8 saddr_v6[16];	offset:42;	size:16;	signed:0;
	field:__u8 daddr_v6[16];	offset:58;	size:16;	signed:0;
	field:int err;	offset:76;	size:4;	signed:1;

print fmt: "sport=%hu dport=%hu", REC->sport, REC->dport
)";

// Linux 4.15's: no state, no family.
const char kFormat415[] = R"(name: tcp_retransmit_skb
ID: 1234
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:const void * skbaddr;	offset:8;	size:8;	signed:0;
	field:const void * skaddr;	offset:16;	size:8;	signed:0;
	field:__u16 sport;	offset:24;	size:2;	signed:0;
	field:__u16 dport;	offset:26;	size:2;	signed:0;
	field:__u8 saddr[4];	offset:28;	size:4;	signed:0;
	field:__u8 daddr[4];	offset:32;	size:4;	signed:0;
	field:__u8 saddr_v6[16];	offset:36;	size:16;	signed:0;
	field:__u8 daddr_v6[16];	offset:52;	size:16;	signed:0;

print fmt: "sport=%hu dport=%hu", REC->sport, REC->dport
)";

// The kprobe made with kprobe_fetchargs(), as the kernel lays it out.
const char kFormatKprobe[] = R"fmt(name: tcp_retransmit_skb
ID: 1500
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:unsigned long __probe_ip;	offset:8;	size:8;	signed:0;
	field:u32 daddr;	offset:16;	size:4;	signed:0;
	field:u32 saddr;	offset:20;	size:4;	signed:0;
	field:u16 dport;	offset:24;	size:2;	signed:0;
	field:u16 sport;	offset:26;	size:2;	signed:0;
	field:u16 family;	offset:28;	size:2;	signed:0;
	field:u8 state;	offset:30;	size:1;	signed:0;
	field:u64 daddr_v6a;	offset:31;	size:8;	signed:0;
	field:u64 daddr_v6b;	offset:39;	size:8;	signed:0;
	field:u64 saddr_v6a;	offset:47;	size:8;	signed:0;
	field:u64 saddr_v6b;	offset:55;	size:8;	signed:0;

print fmt: "(%lx)", REC->__probe_ip
)fmt";

template <class T>
void put(std::vector<uint8_t>& raw, size_t off, T v) {
  if (raw.size() < off + sizeof v) raw.resize(off + sizeof v);
  std::memcpy(raw.data() + off, &v, sizeof v);
}

void put_bytes(std::vector<uint8_t>& raw, size_t off, const void* p, size_t n) {
  if (raw.size() < off + n) raw.resize(off + n);
  std::memcpy(raw.data() + off, p, n);
}

in6_addr v6(const char* text) {
  in6_addr a{};
  inet_pton(AF_INET6, text, &a);
  return a;
}

in_addr v4(const char* text) {
  in_addr a{};
  inet_pton(AF_INET, text, &a);
  return a;
}

struct Parsed {
  tracefs::EventFormat format;
  Decoder decoder;
};

Parsed parse(const char* text, Source source, bool loss_probe = false) {
  auto f = tracefs::EventFormat::parse(text, "tcp");
  EXPECT_TRUE(f) << f.error().str();
  const tracefs::EventFormat* fp = &*f;
  auto d = Decoder::make([fp](const char* name) { return fp->field(name); }, source, loss_probe);
  EXPECT_TRUE(d) << d.error().str();
  return {std::move(*f), std::move(*d)};
}

TEST(TcpretransTest, StateNames) {
  EXPECT_EQ(state_name(1), "ESTABLISHED");
  EXPECT_EQ(state_name(2), "SYN_SENT");
  EXPECT_EQ(state_name(4), "FIN_WAIT1");
  EXPECT_EQ(state_name(9), "LAST_ACK");
  EXPECT_EQ(state_name(11), "CLOSING");
  EXPECT_EQ(state_name(12), "NEW_SYN_RECV");
  EXPECT_EQ(state_name(-1), "-");
  EXPECT_EQ(state_name(0), "0");
  EXPECT_EQ(state_name(99), "99");
}

TEST(TcpretransTest, Endpoints) {
  std::array<uint8_t, 16> a{};
  auto four = v4("10.150.18.225");
  std::memcpy(a.data(), &four, 4);
  EXPECT_EQ(endpoint(false, a, 53874), "10.150.18.225:53874");
  auto six = v6("fe80::1:2");
  std::memcpy(a.data(), &six, 16);
  EXPECT_EQ(endpoint(true, a, 22), "fe80::1:2:22");
  auto one = v6("::1");
  std::memcpy(a.data(), &one, 16);
  EXPECT_EQ(endpoint(true, a, 8080), "::1:8080");
}

TEST(TcpretransTest, KprobeFetchargsReadSockCommon) {
  EXPECT_EQ(kprobe_fetchargs("%di"),
            "daddr=+0(%di):u32 saddr=+4(%di):u32 dport=+12(%di):u16 sport=+14(%di):u16 "
            "family=+16(%di):u16 state=+18(%di):u8 daddr_v6a=+56(%di):u64 "
            "daddr_v6b=+64(%di):u64 saddr_v6a=+72(%di):u64 saddr_v6b=+80(%di):u64");
}

TEST(TcpretransTest, TracepointIPv4) {
  auto p = parse(kFormat618, Source::kTracepoint);
  std::vector<uint8_t> raw(80, 0);
  put<int32_t>(raw, 24, 1);
  put<uint16_t>(raw, 28, 53874);
  put<uint16_t>(raw, 30, 6001);
  put<uint16_t>(raw, 32, AF_INET);
  auto s = v4("10.150.18.225"), d = v4("10.105.152.3");
  put_bytes(raw, 34, &s, 4);
  put_bytes(raw, 38, &d, 4);
  // An AF_INET socket's v6 fields hold v4-mapped addresses; not read.
  auto r = p.decoder.decode(raw);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->ipv6);
  EXPECT_FALSE(r->loss_probe);
  EXPECT_EQ(endpoint(r->ipv6, r->saddr, r->sport), "10.150.18.225:53874");
  EXPECT_EQ(endpoint(r->ipv6, r->daddr, r->dport), "10.105.152.3:6001");
  EXPECT_EQ(r->state, 1);
}

TEST(TcpretransTest, TracepointIPv6IgnoresTheV4Fields) {
  auto p = parse(kFormat618, Source::kTracepoint);
  std::vector<uint8_t> raw(80, 0);
  put<int32_t>(raw, 24, 4);
  put<uint16_t>(raw, 28, 51998);
  put<uint16_t>(raw, 30, 49497);
  put<uint16_t>(raw, 32, AF_INET6);
  // Seen on 6.18: an AF_INET6 socket's v4 fields hold whatever was there.
  auto junk = v4("127.0.0.6");
  put_bytes(raw, 34, &junk, 4);
  auto s = v6("::1"), d = v6("2001:db8::5");
  put_bytes(raw, 42, &s, 16);
  put_bytes(raw, 58, &d, 16);
  auto r = p.decoder.decode(raw);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->ipv6);
  EXPECT_EQ(endpoint(r->ipv6, r->saddr, r->sport), "::1:51998");
  EXPECT_EQ(endpoint(r->ipv6, r->daddr, r->dport), "2001:db8::5:49497");
  EXPECT_EQ(state_name(r->state), "FIN_WAIT1");
}

TEST(TcpretransTest, ShortRecordIsNotDecoded) {
  auto p = parse(kFormat618, Source::kTracepoint);
  std::vector<uint8_t> raw(50, 0);
  EXPECT_FALSE(p.decoder.decode(raw));
}

// 4.15: the family from the v6 fields (v4-mapped: IPv4), no state.
TEST(TcpretransTest, Tracepoint415) {
  auto p = parse(kFormat415, Source::kTracepoint);
  std::vector<uint8_t> raw(68, 0);
  put<uint16_t>(raw, 24, 22);
  put<uint16_t>(raw, 26, 40000);
  auto s = v4("192.168.1.2"), d = v4("192.168.1.3");
  put_bytes(raw, 28, &s, 4);
  put_bytes(raw, 32, &d, 4);
  auto ms = v6("::ffff:192.168.1.2"), md = v6("::ffff:192.168.1.3");
  put_bytes(raw, 36, &ms, 16);
  put_bytes(raw, 52, &md, 16);
  auto r = p.decoder.decode(raw);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->ipv6);
  EXPECT_EQ(endpoint(r->ipv6, r->saddr, r->sport), "192.168.1.2:22");
  EXPECT_EQ(endpoint(r->ipv6, r->daddr, r->dport), "192.168.1.3:40000");
  EXPECT_EQ(state_name(r->state), "-");

  auto s6 = v6("fd00::1"), d6 = v6("fd00::2");
  put_bytes(raw, 36, &s6, 16);
  put_bytes(raw, 52, &d6, 16);
  r = p.decoder.decode(raw);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->ipv6);
  EXPECT_EQ(endpoint(r->ipv6, r->saddr, r->sport), "fd00::1:22");
}

// The kprobe's record: sock_common's bytes as they are, skc_dport in
// network order, each v6 address in two halves.
TEST(TcpretransTest, KprobeRecord) {
  auto p = parse(kFormatKprobe, Source::kKprobe, /*loss_probe=*/true);
  std::vector<uint8_t> raw(63, 0);
  auto d = v4("127.0.0.2"), s = v4("127.0.0.1");
  put_bytes(raw, 16, &d, 4);
  put_bytes(raw, 20, &s, 4);
  put<uint16_t>(raw, 24, htons(45347));
  put<uint16_t>(raw, 26, 38666);
  put<uint16_t>(raw, 28, AF_INET);
  put<uint8_t>(raw, 30, 1);
  auto r = p.decoder.decode(raw);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->loss_probe);
  EXPECT_FALSE(r->ipv6);
  EXPECT_EQ(endpoint(r->ipv6, r->saddr, r->sport), "127.0.0.1:38666");
  EXPECT_EQ(endpoint(r->ipv6, r->daddr, r->dport), "127.0.0.2:45347");
  EXPECT_EQ(state_name(r->state), "ESTABLISHED");

  put<uint16_t>(raw, 28, AF_INET6);
  auto d6 = v6("2001:db8::2"), s6 = v6("2001:db8::1");
  put_bytes(raw, 31, &d6, 16);
  put_bytes(raw, 47, &s6, 16);
  r = p.decoder.decode(raw);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->ipv6);
  EXPECT_EQ(endpoint(r->ipv6, r->saddr, r->sport), "2001:db8::1:38666");
  EXPECT_EQ(endpoint(r->ipv6, r->daddr, r->dport), "2001:db8::2:45347");
}

TEST(TcpretransTest, MissingFieldIsAnError) {
  std::string text = kFormat618;
  text.replace(text.find("dport;"), 5, "xport");
  auto f = tracefs::EventFormat::parse(text, "tcp");
  ASSERT_TRUE(f);
  const tracefs::EventFormat* fp = &*f;
  auto d =
      Decoder::make([fp](const char* name) { return fp->field(name); }, Source::kTracepoint, false);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().message, "the event has no field dport");
}

TEST(TcpretransTest, LinesAsPerfTools) {
  std::ostringstream out;
  output::retransmit_header(out);
  std::vector<std::string> stack{"__tcp_retransmit_skb", "tcp_retransmit_timer"};
  output::retransmit_line(out, {"05:16:44", 3375, false, "10.150.18.225:53874", "10.105.152.3:6001",
                                "ESTABLISHED", nullptr});
  output::retransmit_line(out, {"05:16:45", 0, true, "10.150.18.225:53874", "10.105.152.3:6001",
                                "ESTABLISHED", &stack});
  EXPECT_EQ(out.str(),
            "TIME     PID    LADDR:LPORT          -- RADDR:RPORT          STATE       \n"
            "05:16:44 3375   10.150.18.225:53874  R> 10.105.152.3:6001    ESTABLISHED \n"
            "05:16:45 0      10.150.18.225:53874  L> 10.105.152.3:6001    ESTABLISHED \n"
            " => __tcp_retransmit_skb\n"
            " => tcp_retransmit_timer\n");
}

kernel::Probe fake(const tracefs::FakeTree& t) {
  kernel::Probe p;
  std::string dir = t.dir();
  p.tracing_dir = [dir] { return dir; };
  p.tracefs_filesystem = [] { return true; };
  p.debugfs_tracing = [] { return true; };
  p.perf_accepts = [](kernel::Feature) { return true; };
  p.eprobe_works = [](const std::string&) { return false; };
  p.function_tracer_works = [](const std::string&) { return false; };
  return p;
}

// The tracepoint where there is one, else the kprobe; -l always a kprobe.
TEST(TcpretransTest, WayPerKernel) {
  tracefs::FakeTree with_tp;
  with_tp.put("events/tcp/tcp_retransmit_skb/format", "name: tcp_retransmit_skb\n");
  kernel::Features here(fake(with_tp));
  Path path = Path::kKprobe;
  auto t = targets({}, here, &path);
  ASSERT_TRUE(t);
  EXPECT_EQ(path, Path::kTracepoint);
  ASSERT_EQ(t->size(), 1u);
  EXPECT_EQ((*t)[0].kind, probe::Kind::kTracepoint);
  EXPECT_EQ((*t)[0].system + ":" + (*t)[0].event, "tcp:tcp_retransmit_skb");
  auto l = targets({.loss_probes = true}, here, &path);
  ASSERT_FALSE(l);
  EXPECT_NE(l.error().message.find("-l traces tail loss probes with a kprobe"), std::string::npos);

  tracefs::FakeTree old;  // 4.14: kprobes, no tcp tracepoint
  old.put("kprobe_events", "");
  old.put("events/sched/sched_switch/format", "name: sched_switch\n");
  kernel::Features k(fake(old));
  t = targets({.loss_probes = true}, k, &path);
  ASSERT_TRUE(t);
  EXPECT_EQ(path, Path::kKprobe);
  ASSERT_EQ(t->size(), 2u);
  EXPECT_EQ((*t)[0].kind, probe::Kind::kKernel);
  EXPECT_EQ((*t)[0].function, "tcp_retransmit_skb");
  EXPECT_EQ((*t)[0].fetchargs, kprobe_fetchargs("$arg1"));
  EXPECT_EQ((*t)[1].function, "tcp_send_loss_probe");

  tracefs::FakeTree none;
  none.put("events/sched/sched_switch/format", "name: sched_switch\n");
  kernel::Features n(fake(none));
  auto e = targets({}, n, &path);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("tcp:tcp_retransmit_skb tracepoint, and "), std::string::npos)
      << e.error().message;
}

// Stack frames' names print with control characters as '?': one frame, one
// line.
TEST(TcpretransTest, StackFramesEscaped) {
  const std::vector<std::string> stack{"tcp_retransmit_skb", "odd\nname\x1b[2J"};
  std::ostringstream out;
  output::retransmit_line(out, {"12:00:00", 0, false, "10.0.0.1:22", "10.0.0.2:5555",
                                "ESTABLISHED", &stack});
  EXPECT_EQ(out.str(),
            "12:00:00 0      10.0.0.1:22          R> 10.0.0.2:5555        ESTABLISHED \n"
            " => tcp_retransmit_skb\n"
            " => odd?name?[2J\n");
}

}  // namespace
}  // namespace tracekit::tcpretrans

namespace tracekit::tcpretrans {

// A kernel without TCP (CONFIG_INET off: the upstream 3.10-4.19 VM images)
// has no tcp_retransmit_skb: refused up front, naming the function and the
// config, rather than with the kernel's bare ENOENT on kprobe_events.
TEST(TcpretransTest, CheckFunctionsNamesTheMissingFunction) {
  probe::Target kp;
  kp.kind = probe::Kind::kKernel;
  kp.function = "tcp_retransmit_skb";
  probe::Target lp = kp;
  lp.function = "tcp_send_loss_probe";
  probe::Target tp;
  tp.kind = probe::Kind::kTracepoint;
  tp.system = "tcp";
  tp.event = "tcp_retransmit_skb";
  auto none = [](std::string_view) { return false; };
  auto only_retransmit = [](std::string_view f) { return f == "tcp_retransmit_skb"; };
  auto st = check_functions({kp, lp}, none);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("no tcp_retransmit_skb"), std::string::npos);
  EXPECT_NE(st.error().message.find("CONFIG_INET"), std::string::npos);
  st = check_functions({kp, lp}, only_retransmit);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("no tcp_send_loss_probe"), std::string::npos);
  EXPECT_TRUE(check_functions({kp}, only_retransmit));
  // The tracepoint without TCP (4.19 without CONFIG_INET): refused too.
  st = check_functions({tp}, none);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("no tcp_retransmit_skb"), std::string::npos);
  EXPECT_TRUE(check_functions({tp}, only_retransmit));
}

}  // namespace tracekit::tcpretrans

// expand() and kernel_functions() for kernel and tracepoint specs, on a
// fake tracing directory; the kallsyms fallback on this machine's
// /proc/kallsyms.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "probe/spec.hpp"

namespace tracekit::probe {
namespace {

namespace fs = std::filesystem;

class ProbeExpandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tracekit-probe-XXXXXX";
    dir_ = mkdtemp(tmpl);
    for (const char* ev : {"sched/sched_switch", "sched/sched_wakeup", "syscalls/sys_enter_getppid",
                           "syscalls/sys_exit_getppid", "sched_ext/sched_ext_dump"}) {
      fs::create_directories(dir_ + "/events/" + ev);
      std::ofstream(dir_ + "/events/" + ev + "/id") << "42\n";
    }
    // What else events/ holds: files, and a directory that is no event.
    std::ofstream(dir_ + "/events/enable") << "0\n";
    std::ofstream(dir_ + "/events/header_page") << "\n";
    std::ofstream(dir_ + "/events/sched/enable") << "0\n";
    fs::create_directories(dir_ + "/events/sched/not_an_event");
    filter(
        "vfs_write\n"
        "vfs_read\n"
        "vfs_readv\n"
        "vfs_writev\n"
        "xfs_vfs_helper [xfs]\n"
        "vfs_read\n"
        "__ftrace_invalid_address___64\n"
        "ksys_read\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void filter(const std::string& text) {
    std::ofstream(dir_ + "/available_filter_functions") << text;
  }

  Result<std::vector<Target>> run(const std::string& spec_text, bool regex = false,
                                  size_t max = 1000) {
    auto spec = parse_spec(spec_text);
    if (!spec) return spec.error();
    ExpandOptions opts;
    opts.regex = regex;
    opts.max_probes = max;
    opts.tracing_dir = dir_;
    return expand(*spec, opts);
  }

  std::string dir_;
};

// "system:event" for tracepoints, the function otherwise.
std::vector<std::string> names(const Result<std::vector<Target>>& r) {
  std::vector<std::string> out;
  if (!r) {
    ADD_FAILURE() << r.error().str();
    return out;
  }
  for (const Target& t : *r)
    out.push_back(t.kind == Kind::kTracepoint ? t.system + ":" + t.event : t.function);
  return out;
}

using Names = std::vector<std::string>;

struct Case {
  const char* spec;
  bool regex;
  Names expected;
};

TEST_F(ProbeExpandTest, Tracepoints) {
  const Case cases[] = {
      {"t:sched:*", false, {"sched:sched_switch", "sched:sched_wakeup"}},
      {"t:*:sys_enter_get*", false, {"syscalls:sys_enter_getppid"}},
      {"t:sched*:*",
       false,
       {"sched:sched_switch", "sched:sched_wakeup", "sched_ext:sched_ext_dump"}},
      {"t:*:*getppid", false, {"syscalls:sys_enter_getppid", "syscalls:sys_exit_getppid"}},
      {"t:sched:sched_switch", false, {"sched:sched_switch"}},
      {"t:sched:not_an_event", false, {}},
      {"t:sched:enable", false, {}},
      {"t:nosuch:*", false, {}},
      // Regexes as bcc's re.match on "category:event": the category whole,
      // the event from its start.
      {"t:^sched$:sched_switch", true, {"sched:sched_switch"}},
      {"t:sched:^sched_(switch|wakeup)$", true, {"sched:sched_switch", "sched:sched_wakeup"}},
      {"t:sched:sched_", true, {"sched:sched_switch", "sched:sched_wakeup"}},
      {"t:sched.*:sched_", true,
       {"sched:sched_switch", "sched:sched_wakeup", "sched_ext:sched_ext_dump"}},
      {"t:sched:switch", true, {}},
      {"t:.:getppid$", true, {}},
      {"t:.*:.*getppid$", true, {"syscalls:sys_enter_getppid", "syscalls:sys_exit_getppid"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    auto r = run(c.spec, c.regex);
    EXPECT_EQ(names(r), c.expected);
    if (r) {
      for (const Target& t : *r) EXPECT_EQ(t.kind, Kind::kTracepoint);
    }
  }
}

// Without syscall tracepoints (this tree has events/syscalls, which must
// then be left alone): syscalls:* specs match the syscalls libseccomp knows,
// each target with its number; other systems as before.
TEST_F(ProbeExpandTest, SyscallsWithoutSyscallTracepoints) {
  auto raw = [&](const std::string& text, bool regex = false) {
    auto spec = parse_spec(text);
    EXPECT_TRUE(spec);
    ExpandOptions opts;
    opts.regex = regex;
    opts.tracing_dir = dir_;
    opts.syscall_tracepoints = false;
    return expand(*spec, opts);
  };
  auto one = raw("t:syscalls:sys_enter_getppid");
  ASSERT_TRUE(one) << one.error().str();
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].system, "syscalls");
  EXPECT_EQ((*one)[0].event, "sys_enter_getppid");
  EXPECT_EQ((*one)[0].syscall_nr, SYS_getppid);

  // A wildcard: every matching syscall, both sides, sorted.
  auto both = raw("t:syscalls:sys_*_getppid");
  EXPECT_EQ(names(both), (Names{"syscalls:sys_enter_getppid", "syscalls:sys_exit_getppid"}));
  auto get = raw("t:syscalls:sys_enter_get*");
  ASSERT_TRUE(get);
  EXPECT_GT(get->size(), 10u);  // getpid, getppid, getuid, getdents64, ...
  for (const Target& t : *get) {
    EXPECT_EQ(t.event.rfind("sys_enter_get", 0), 0u) << t.event;
    EXPECT_GE(t.syscall_nr, 0) << t.event;
  }
  auto regex = raw("t:syscalls:^sys_enter_getp?pid$", true);
  EXPECT_EQ(names(regex), (Names{"syscalls:sys_enter_getpid", "syscalls:sys_enter_getppid"}));

  // Other systems come from the tree, syscalls not.
  EXPECT_EQ(names(raw("t:*:*getppid")),
            (Names{"syscalls:sys_enter_getppid", "syscalls:sys_exit_getppid"}));
  EXPECT_EQ(names(raw("t:sched:sched_switch")), (Names{"sched:sched_switch"}));
  auto sched = raw("t:sched:sched_switch");
  ASSERT_TRUE(sched);
  EXPECT_EQ((*sched)[0].syscall_nr, -1);

  // An exact name libseccomp does not know: an error naming it, no errno.
  auto unknown = raw("t:syscalls:sys_enter_no_such_call");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().err, 0);
  EXPECT_NE(unknown.error().message.find("no_such_call"), std::string::npos)
      << unknown.error().message;
  // The kernel's own name of a syscall, exactly: its syscall(2) number.
  auto uname = raw("t:syscalls:sys_enter_newuname");
  ASSERT_TRUE(uname) << uname.error().str();
  ASSERT_EQ(uname->size(), 1u);
  EXPECT_EQ((*uname)[0].event, "sys_enter_newuname");
  EXPECT_EQ((*uname)[0].syscall_nr, SYS_uname);
  // A wildcard that matches nothing is zero matches, as anywhere.
  auto none = raw("t:syscalls:sys_enter_no_such*");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());

  // With syscall tracepoints: the tree's events, no numbers.
  auto real = run("t:syscalls:sys_enter_getppid");
  ASSERT_TRUE(real);
  ASSERT_EQ(real->size(), 1u);
  EXPECT_EQ((*real)[0].syscall_nr, -1);
}

// Syscall tracepoints made raw_syscalls stand-ins where libseccomp numbers
// them; anything else among the targets leaves them all as they are.
TEST(SyscallsThroughRaw, StandInsForTheNumberedOnes) {
  auto tp = [](const std::string& system, const std::string& event) {
    Target t;
    t.kind = Kind::kTracepoint;
    t.system = system;
    t.event = event;
    return t;
  };
  std::vector<Target> ts = {tp("syscalls", "sys_enter_getppid"), tp("syscalls", "sys_exit_getpid"),
                            tp("syscalls", "sys_enter_no_such_call")};
  EXPECT_EQ(syscalls_through_raw(ts), 2u);
  EXPECT_EQ(ts[0].syscall_nr, SYS_getppid);
  EXPECT_EQ(ts[1].syscall_nr, SYS_getpid);
  EXPECT_EQ(ts[2].syscall_nr, -1);  // left a tracepoint
  EXPECT_EQ(syscalls_through_raw(ts), 0u);  // nothing more to make
  std::vector<Target> mixed = {tp("syscalls", "sys_enter_getppid"), tp("sched", "sched_switch")};
  EXPECT_EQ(syscalls_through_raw(mixed), 0u);
  EXPECT_EQ(mixed[0].syscall_nr, -1);
}

TEST_F(ProbeExpandTest, KernelFunctions) {
  const Case cases[] = {
      {"vfs_*", false, {"vfs_read", "vfs_readv", "vfs_write", "vfs_writev"}},
      {"p::vfs_read", false, {"vfs_read"}},
      {"*vfs*", false, {"vfs_read", "vfs_readv", "vfs_write", "vfs_writev", "xfs_vfs_helper"}},
      {"^vfs_(read|write)$", true, {"vfs_read", "vfs_write"}},
      // Regexes match from the name's start, as bcc's re.match: not
      // xfs_vfs_helper, and "read$" is no function here.
      {"vfs_", true, {"vfs_read", "vfs_readv", "vfs_write", "vfs_writev"}},
      {"(ksys|vfs)_read$", true, {"ksys_read", "vfs_read"}},
      {"read$", true, {}},
      {".*read$", true, {"ksys_read", "vfs_read"}},
      {"nothing_*", false, {}},
      {"__ftrace_invalid*", false, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    auto r = run(c.spec, c.regex);
    EXPECT_EQ(names(r), c.expected);
    if (r) {
      for (const Target& t : *r) EXPECT_EQ(t.kind, Kind::kKernel);
    }
  }
  auto ret = run("r::vfs_read");
  ASSERT_TRUE(ret.ok());
  ASSERT_EQ(ret->size(), 1u);
  EXPECT_EQ((*ret)[0].kind, Kind::kKernelReturn);
  EXPECT_EQ((*ret)[0].function, "vfs_read");
  EXPECT_EQ((*ret)[0].path, "");
}

TEST_F(ProbeExpandTest, ZeroMatchesIsNoError) {
  auto r = run("no_such_function_*");
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_TRUE(r->empty());
}

TEST_F(ProbeExpandTest, Limit) {
  auto r = run("vfs_*", false, 3);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "4 probes match \"vfs_*\": more than the limit of 3");
  EXPECT_EQ(r.error().hint, "narrow the pattern");
  EXPECT_EQ(r.error().str(),
            "4 probes match \"vfs_*\": more than the limit of 3 (narrow the pattern)");
  EXPECT_TRUE(run("vfs_*", false, 4).ok());

  auto tp = run("t:*:*", false, 4);
  ASSERT_FALSE(tp.ok());
  EXPECT_EQ(tp.error().message, "5 probes match \"t:*:*\": more than the limit of 4");
}

TEST_F(ProbeExpandTest, Errors) {
  auto regex = run("vfs_(read", true);
  ASSERT_FALSE(regex.ok());
  EXPECT_EQ(regex.error().message.rfind("bad regular expression \"vfs_(read\": ", 0), 0u)
      << regex.error().message;
  auto category = run("t:sched(:x", true);
  ASSERT_FALSE(category.ok());
  EXPECT_EQ(category.error().message.rfind("bad regular expression \"sched(\": ", 0), 0u);

  auto usdt = run("u:node:gc*");
  ASSERT_FALSE(usdt.ok());
  EXPECT_EQ(usdt.error().message, "USDT probes are not supported yet");

  fs::remove_all(dir_ + "/events");
  auto tp = run("t:sched:*");
  ASSERT_FALSE(tp.ok());
  EXPECT_EQ(tp.error().message, "cannot list tracepoints");
  EXPECT_EQ(tp.error().path, dir_ + "/events");
  EXPECT_EQ(tp.error().err, ENOENT);
}

TEST_F(ProbeExpandTest, KernelFunctionsFromTheFilterFile) {
  auto fns = kernel_functions(dir_);
  ASSERT_TRUE(fns.ok());
  EXPECT_EQ(*fns, (Names{"ksys_read", "vfs_read", "vfs_readv", "vfs_write", "vfs_writev",
                         "xfs_vfs_helper"}));
}

TEST_F(ProbeExpandTest, KernelFunctionsFallBackToKallsyms) {
  fs::remove(dir_ + "/available_filter_functions");
  std::ofstream(dir_ + "/kallsyms") << "ffffffff816d5360 t __pfx_vfs_read\n"
                                       "ffffffff816d5370 T vfs_read\n"
                                       "ffffffff816d5380 D vfs_data\n";
  auto fake = kernel_functions(dir_, dir_ + "/kallsyms");
  ASSERT_TRUE(fake.ok()) << fake.error().str();
  EXPECT_EQ(*fake, Names{"vfs_read"});

  // This machine's kallsyms (names are readable without root).
  auto real = kernel_functions(dir_);
  ASSERT_TRUE(real.ok()) << real.error().str();
  EXPECT_GT(real->size(), 10000u);
  EXPECT_TRUE(std::is_sorted(real->begin(), real->end()));
  EXPECT_TRUE(std::binary_search(real->begin(), real->end(), "vfs_read"));
  EXPECT_FALSE(std::binary_search(real->begin(), real->end(), "__pfx_vfs_read"));
  EXPECT_EQ(names(run("vfs_read")), Names{"vfs_read"});

  auto none = kernel_functions(dir_, dir_ + "/no_kallsyms");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "cannot list kernel functions");
  EXPECT_EQ(none.error().path, dir_ + "/no_kallsyms");
  EXPECT_EQ(none.error().err, ENOENT);
}

}  // namespace
}  // namespace tracekit::probe

namespace tracekit::probe {
namespace {

// Issue 8, row 6: Ctrl-C during an expansion ends it. stopped() is asked
// before each name; the first true ends the expansion with EINTR, for
// every kind of spec.
TEST_F(ProbeExpandTest, StopsWhenAsked) {
  for (const char* text : {"vfs_*", "t:*:*", "/proc/self/exe:*"}) {
    SCOPED_TRACE(text);
    auto spec = parse_spec(text);
    ASSERT_TRUE(spec.ok());
    ExpandOptions opts;
    opts.tracing_dir = dir_;
    opts.max_probes = 1000000;  // this test program has thousands of functions
    int asked = 0;
    opts.stopped = [&asked] { return ++asked > 2; };
    auto r = expand(*spec, opts);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().err, EINTR);
    EXPECT_EQ(r.error().message, "interrupted while expanding \"" + std::string(text) + "\"");
    EXPECT_EQ(asked, 3);  // no name after the stop

    opts.stopped = [] { return false; };
    EXPECT_TRUE(expand(*spec, opts).ok());
  }
}

}  // namespace
}  // namespace tracekit::probe

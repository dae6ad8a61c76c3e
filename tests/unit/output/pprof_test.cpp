// write_pprof: the sample report written, gunzipped and decoded back with
// the generated classes, and every field checked against what the report
// holds.
#include "output/pprof.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "output/pprof/profile.pb.h"
#include "../report/sample_report.hpp"

namespace tracekit::output {
namespace {

using report::testing::sample_report;

std::string gunzip(const std::string& in) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);  // gzip framing only
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buf[4096];
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
  } while (rc == Z_OK);
  EXPECT_EQ(rc, Z_STREAM_END);
  EXPECT_EQ(zs.avail_in, 0u);
  inflateEnd(&zs);
  return out;
}

std::string written(const report::Report& r) {
  std::ostringstream out;
  write_pprof(out, r);
  EXPECT_TRUE(out.good());
  return out.str();
}

pprof::Profile decode(const report::Report& r) {
  pprof::Profile p;
  EXPECT_TRUE(p.ParseFromString(gunzip(written(r))));
  return p;
}

// A decoded profile with its references followed.
struct View {
  pprof::Profile p;
  const std::string& s(int64_t i) const { return p.string_table(static_cast<int>(i)); }
  const pprof::Location& loc(uint64_t id) const {
    EXPECT_GE(id, 1u);
    return p.location(static_cast<int>(id - 1));
  }
  const pprof::Function& fn(uint64_t id) const {
    EXPECT_GE(id, 1u);
    return p.function(static_cast<int>(id - 1));
  }
  // A location's function name, "" when it has no line.
  std::string name(uint64_t loc_id) const {
    const pprof::Location& l = loc(loc_id);
    return l.line_size() == 0 ? "" : s(fn(l.line(0).function_id()).name());
  }
  std::vector<std::string> names(const pprof::Sample& smp) const {
    std::vector<std::string> out;
    for (uint64_t id : smp.location_id()) out.push_back(name(id));
    return out;
  }
  std::map<std::string, std::string> labels(const pprof::Sample& smp) const {
    std::map<std::string, std::string> out;
    for (const pprof::Label& l : smp.label())
      out[s(l.key())] = l.str() != 0 ? s(l.str()) : "#" + std::to_string(l.num());
    return out;
  }
};

View view(const report::Report& r) { return View{decode(r)}; }

TEST(OutputPprofTest, IsGzip) {
  std::string out = written(sample_report());
  ASSERT_GE(out.size(), 18u);
  EXPECT_EQ(static_cast<unsigned char>(out[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(out[1]), 0x8b);
  // The same report gives the same bytes (no time stamp in the header).
  EXPECT_EQ(out, written(sample_report()));
}

TEST(OutputPprofTest, StringTable) {
  View v = view(sample_report());
  ASSERT_GT(v.p.string_table_size(), 0);
  EXPECT_EQ(v.p.string_table(0), "");
  // Every string once.
  std::map<std::string, int> seen;
  for (const std::string& s : v.p.string_table()) EXPECT_EQ(++seen[s], 1) << s;
  EXPECT_EQ(seen.count("func_a"), 1u);
  EXPECT_EQ(seen.count("/usr/bin/cpuratio"), 1u);
}

TEST(OutputPprofTest, ProfileSampleTypesAndValues) {
  View v = view(sample_report());
  ASSERT_EQ(v.p.sample_type_size(), 2);
  EXPECT_EQ(v.s(v.p.sample_type(0).type()), "samples");
  EXPECT_EQ(v.s(v.p.sample_type(0).unit()), "count");
  EXPECT_EQ(v.s(v.p.sample_type(1).type()), "cpu");
  EXPECT_EQ(v.s(v.p.sample_type(1).unit()), "nanoseconds");
  EXPECT_EQ(v.s(v.p.period_type().type()), "cpu");
  EXPECT_EQ(v.s(v.p.period_type().unit()), "nanoseconds");
  EXPECT_EQ(v.p.period(), 10101010);
  EXPECT_EQ(v.s(v.p.default_sample_type()), "cpu");
  EXPECT_EQ(v.p.time_nanos(), 1795000000000000000);
  EXPECT_EQ(v.p.duration_nanos(), 5000000000);
  // One sample per record, in order: a, b, a2, k, kt, odd.
  const int64_t want[] = {100, 300, 20, 7, 3, 1};
  ASSERT_EQ(v.p.sample_size(), 6);
  for (int i = 0; i < 6; ++i) {
    ASSERT_EQ(v.p.sample(i).value_size(), 2);
    EXPECT_EQ(v.p.sample(i).value(0), want[i]);
    EXPECT_EQ(v.p.sample(i).value(1), want[i] * 10101010);
  }
}

TEST(OutputPprofTest, OffCpuIsNanoseconds) {
  View v = view(sample_report(report::Unit::kMicroseconds));
  ASSERT_EQ(v.p.sample_type_size(), 1);
  EXPECT_EQ(v.s(v.p.sample_type(0).type()), "off-cpu");
  EXPECT_EQ(v.s(v.p.sample_type(0).unit()), "nanoseconds");
  EXPECT_FALSE(v.p.has_period_type());
  EXPECT_EQ(v.p.period(), 0);
  ASSERT_EQ(v.p.sample_size(), 6);
  ASSERT_EQ(v.p.sample(1).value_size(), 1);
  EXPECT_EQ(v.p.sample(1).value(0), 300000);
}

TEST(OutputPprofTest, EventsAreCounts) {
  View v = view(sample_report(report::Unit::kEvents));
  ASSERT_EQ(v.p.sample_type_size(), 1);
  EXPECT_EQ(v.s(v.p.sample_type(0).type()), "events");
  EXPECT_EQ(v.s(v.p.sample_type(0).unit()), "count");
  ASSERT_EQ(v.p.sample(3).value_size(), 1);
  EXPECT_EQ(v.p.sample(3).value(0), 7);
}

TEST(OutputPprofTest, StacksLeafFirstKernelThenUser) {
  View v = view(sample_report());
  using N = std::vector<std::string>;
  EXPECT_EQ(v.names(v.p.sample(0)), (N{"func_a", "main", "__libc_start_call_main"}));
  EXPECT_EQ(v.names(v.p.sample(1)), (N{"func_b", "main", "__libc_start_call_main"}));
  EXPECT_EQ(v.names(v.p.sample(3)), (N{"__clear_user", "iov_iter_zero", "entry_SYSCALL_64", "read",
                                       "main", "__libc_start_call_main"}));
  // The unresolved kernel frame has a location with no line.
  EXPECT_EQ(v.names(v.p.sample(4)), (N{"", "worker_thread", "kthread"}));
  // The lost user stack is one pseudo-frame; the record's kernel frames stay.
  EXPECT_EQ(v.names(v.p.sample(5)),
            (N{"ns::f<int>(int, char const*)", "x;y", "[Missed User Stack]"}));
}

TEST(OutputPprofTest, LocationsAddressesAndMappings) {
  View v = view(sample_report());
  ASSERT_EQ(v.p.mapping_size(), 3);
  const pprof::Sample& a = v.p.sample(0);
  ASSERT_EQ(a.location_id_size(), 3);
  // The leaf is where the thread was; callers are return addresses - 1.
  EXPECT_EQ(v.loc(a.location_id(0)).address(), 0x55d0c0de1130u);
  EXPECT_EQ(v.loc(a.location_id(1)).address(), 0x55d0c0de119fu);
  EXPECT_EQ(v.loc(a.location_id(2)).address(), 0x7f2c1a229d8fu);
  EXPECT_EQ(v.loc(a.location_id(0)).mapping_id(), 1u);
  EXPECT_EQ(v.loc(a.location_id(1)).mapping_id(), 1u);
  EXPECT_EQ(v.loc(a.location_id(2)).mapping_id(), 2u);
  // The unresolved kernel frame keeps its address and mapping.
  const pprof::Location& unk = v.loc(v.p.sample(4).location_id(0));
  EXPECT_EQ(unk.address(), 0xffffffff81234567u);
  EXPECT_EQ(unk.mapping_id(), 3u);
  EXPECT_EQ(unk.line_size(), 0);
  // The missed marker has neither.
  const pprof::Location& miss = v.loc(v.p.sample(5).location_id(2));
  EXPECT_EQ(miss.address(), 0u);
  EXPECT_EQ(miss.mapping_id(), 0u);
  // IDs are 1-based and in order.
  for (int i = 0; i < v.p.location_size(); ++i)
    EXPECT_EQ(v.p.location(i).id(), static_cast<uint64_t>(i) + 1);
  for (int i = 0; i < v.p.function_size(); ++i)
    EXPECT_EQ(v.p.function(i).id(), static_cast<uint64_t>(i) + 1);
  // One location per (mapping, address): main's return address in a, b, a2
  // and k is one location; 14 distinct addresses and one marker in all.
  EXPECT_EQ(a.location_id(1), v.p.sample(1).location_id(1));
  EXPECT_EQ(a.location_id(1), v.p.sample(3).location_id(4));
  EXPECT_EQ(v.p.location_size(), 15);
}

TEST(OutputPprofTest, TwoAddressesInOneFunctionAreTwoLocationsOfOneFunction) {
  View v = view(sample_report());
  const pprof::Location& a = v.loc(v.p.sample(0).location_id(0));
  const pprof::Location& a2 = v.loc(v.p.sample(2).location_id(0));
  EXPECT_NE(v.p.sample(0).location_id(0), v.p.sample(2).location_id(0));
  EXPECT_EQ(a.address(), 0x55d0c0de1130u);
  EXPECT_EQ(a2.address(), 0x55d0c0de1134u);
  ASSERT_EQ(a.line_size(), 1);
  ASSERT_EQ(a2.line_size(), 1);
  EXPECT_EQ(a.line(0).function_id(), a2.line(0).function_id());
  const pprof::Function& f = v.fn(a.line(0).function_id());
  EXPECT_EQ(v.s(f.name()), "func_a");
  EXPECT_EQ(v.s(f.system_name()), "func_a");
  EXPECT_EQ(v.s(f.filename()), "/usr/bin/cpuratio");
  // Functions are unique by (name, file).
  std::map<std::pair<std::string, std::string>, int> seen;
  for (const pprof::Function& fn : v.p.function()) {
    std::pair<std::string, std::string> key{v.s(fn.name()), v.s(fn.filename())};
    EXPECT_EQ(++seen[key], 1) << key.first;
  }
}

TEST(OutputPprofTest, Mappings) {
  View v = view(sample_report());
  ASSERT_EQ(v.p.mapping_size(), 3);
  const pprof::Mapping& exe = v.p.mapping(0);
  EXPECT_EQ(exe.id(), 1u);
  EXPECT_EQ(exe.memory_start(), 0x55d0c0de0000u);
  EXPECT_EQ(exe.memory_limit(), 0x55d0c0de5000u);
  EXPECT_EQ(exe.file_offset(), 0x1000u);
  EXPECT_EQ(v.s(exe.filename()), "/usr/bin/cpuratio");
  EXPECT_EQ(v.s(exe.build_id()), "0a1b2c3d4e5f");
  EXPECT_TRUE(exe.has_functions());
  EXPECT_FALSE(exe.has_filenames());
  EXPECT_FALSE(exe.has_line_numbers());
  const pprof::Mapping& libc = v.p.mapping(1);
  EXPECT_EQ(libc.id(), 2u);
  EXPECT_EQ(v.s(libc.filename()), "/usr/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_EQ(v.s(libc.build_id()), "ffeeddccbbaa99887766");
  EXPECT_EQ(libc.file_offset(), 0x26000u);
  EXPECT_TRUE(libc.has_functions());
  const pprof::Mapping& kernel = v.p.mapping(2);
  EXPECT_EQ(v.s(kernel.filename()), "[kernel.kallsyms]");
  EXPECT_EQ(kernel.build_id(), 0);  // none known: no string
  EXPECT_EQ(kernel.memory_start(), 0xffffffff81000000u);
  EXPECT_EQ(kernel.memory_limit(), 0xffffffff82000000u);
  // kworker's unresolved frame: pprof may symbolize the kernel again.
  EXPECT_FALSE(kernel.has_functions());
}

TEST(OutputPprofTest, Labels) {
  View v = view(sample_report());
  using L = std::map<std::string, std::string>;
  EXPECT_EQ(v.labels(v.p.sample(0)),
            (L{{"pid", "#4242"}, {"comm", "cpuratio"}, {"stack", "user"}}));
  EXPECT_EQ(v.labels(v.p.sample(3)),
            (L{{"pid", "#4242"}, {"comm", "cpuratio"}, {"stack", "kernel+user"}}));
  EXPECT_EQ(v.labels(v.p.sample(4)),
            (L{{"pid", "#17"}, {"comm", "kworker/0:1"}, {"stack", "kernel"}}));
  // The missed side still counts as a side the stack has.
  EXPECT_EQ(v.labels(v.p.sample(5)),
            (L{{"pid", "#99"}, {"comm", "a<b>&\"c\""}, {"stack", "kernel+user"}}));
  // pid is numeric, comm a string.
  for (const pprof::Label& l : v.p.sample(0).label()) {
    if (v.s(l.key()) == "pid") {
      EXPECT_EQ(l.str(), 0);
    }
    if (v.s(l.key()) == "comm") {
      EXPECT_EQ(l.num(), 0);
    }
  }
}

TEST(OutputPprofTest, NoPidNoLabel) {
  report::Report r = sample_report(report::Unit::kEvents);
  for (auto& rec : r.records) rec.pid = -1;
  View v = view(r);
  EXPECT_EQ(v.labels(v.p.sample(0)).count("pid"), 0u);
}

TEST(OutputPprofTest, Comments) {
  View v = view(sample_report());
  std::vector<std::string> comments;
  for (int64_t c : v.p.comment()) comments.push_back(v.s(c));
  EXPECT_EQ(comments, (std::vector<std::string>{"profile -F 99 -d -o out.svg 5", "host: testhost",
                                                "lost events: 2", "truncated stacks: 1"}));
}

TEST(OutputPprofTest, FramesWithoutMappingKeepTheirAddress) {
  report::Report r = sample_report();
  r.mappings.clear();
  for (report::FrameTable::Id id = 0; id < r.frames.size(); ++id) r.frames[id].mapping = -1;
  View v = view(r);
  EXPECT_EQ(v.p.mapping_size(), 0);
  const pprof::Location& a = v.loc(v.p.sample(0).location_id(0));
  EXPECT_EQ(a.address(), 0x55d0c0de1130u);
  EXPECT_EQ(a.mapping_id(), 0u);
  EXPECT_EQ(v.name(v.p.sample(0).location_id(0)), "func_a");
  EXPECT_EQ(v.fn(a.line(0).function_id()).filename(), 0);
}

TEST(OutputPprofTest, EmptyReport) {
  report::Report r;
  r.unit = report::Unit::kEvents;
  View v = view(r);
  EXPECT_EQ(v.p.sample_size(), 0);
  EXPECT_EQ(v.p.location_size(), 0);
  ASSERT_EQ(v.p.string_table_size(), 3);  // "", "events", "count"
}

}  // namespace
}  // namespace tracekit::output

// The MMAP/MMAP2 and sample_id decoders, and ProcessEvents fed synthetic
// side-band records: this test's own text mapping, announced for a pid that
// cannot exist, must resolve through the UserSymbols it feeds, whatever
// order the records arrive in.
#include "perf/process_events.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "../symbols/self_maps.hpp"
#include "perf/sample.hpp"
#include "record_builder.hpp"

namespace process_events_test_ns {
__attribute__((noinline)) int announced_function(int x) {
  volatile int acc = x;
  for (int i = 0; i < 8; ++i) acc = acc * 7 + i;
  return acc;
}
}  // namespace process_events_test_ns

namespace tracekit::perf {
namespace {

using symbols::test_support::MapLine;
using symbols::test_support::own_build_id;
using symbols::test_support::text_mapping;
using testing::RecordBuilder;

constexpr uint32_t kPid = 1u << 30;  // above any pid_max
constexpr uint32_t kParent = kPid + 1;
constexpr std::string_view kTarget = "process_events_test_ns::announced_function(int)";
// The profile tool's sample_type: its side-band records end in a sample_id
// of TID, TIME and CPU.
constexpr uint64_t kSampleType =
    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN;

uint64_t target_addr() {
  return reinterpret_cast<uint64_t>(&process_events_test_ns::announced_function);
}

perf_event_header header_of(const std::vector<uint8_t>& r) {
  perf_event_header h;
  std::memcpy(&h, r.data(), sizeof h);
  return h;
}

// ---- decoders ----

std::vector<uint8_t> mmap2_with_inode() {
  RecordBuilder b(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
  b.u32(100).u32(101);                 // pid, tid
  b.u64(0x7f0000001000).u64(0x2000);   // addr, len
  b.u64(0x1000);                       // pgoff
  b.u32(254).u32(1).u64(4242).u64(7);  // maj, min, ino, ino_generation
  b.u32(PROT_READ | PROT_EXEC).u32(MAP_PRIVATE);
  b.padded_string("/usr/lib/libfoo.so");
  b.u32(100).u32(101).u64(555).u32(1).u32(0);  // sample_id: TID, TIME, CPU
  return b.build();
}

TEST(PerfMmapRecordTest, DecodesMmap2WithInode) {
  auto rec = mmap2_with_inode();
  Mmap2 m;
  ASSERT_TRUE(decode_mmap2(rec, m));
  EXPECT_EQ(m.pid, 100u);
  EXPECT_EQ(m.tid, 101u);
  EXPECT_EQ(m.addr, 0x7f0000001000u);
  EXPECT_EQ(m.len, 0x2000u);
  EXPECT_EQ(m.pgoff, 0x1000u);
  EXPECT_FALSE(m.has_build_id);
  EXPECT_EQ(m.maj, 254u);
  EXPECT_EQ(m.min, 1u);
  EXPECT_EQ(m.ino, 4242u);
  EXPECT_EQ(m.ino_generation, 7u);
  EXPECT_TRUE(m.build_id.empty());
  EXPECT_EQ(m.prot, static_cast<uint32_t>(PROT_READ | PROT_EXEC));
  EXPECT_EQ(m.flags, static_cast<uint32_t>(MAP_PRIVATE));
  EXPECT_EQ(m.filename, "/usr/lib/libfoo.so");
  EXPECT_FALSE(m.data);
  SampleId id;
  ASSERT_TRUE(decode_sample_id(kSampleType, rec, id));
  EXPECT_EQ(id.pid, 100u);
  EXPECT_EQ(id.tid, 101u);
  EXPECT_EQ(id.time, 555u);
  EXPECT_EQ(id.cpu, 1u);
}

TEST(PerfMmapRecordTest, DecodesMmap2WithBuildId) {
  const uint8_t bid[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  for (uint8_t size : {uint8_t{20}, uint8_t{16}, uint8_t{0}}) {
    SCOPED_TRACE(size);
    RecordBuilder b(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
    b.u32(7).u32(7).u64(0x400000).u64(0x1000).u64(0);
    b.raw(&size, 1).raw("\0\0\0", 3).raw(bid, 20);
    b.u32(PROT_EXEC).u32(MAP_PRIVATE);
    b.padded_string("/bin/x");
    auto rec = b.build();
    Mmap2 m;
    ASSERT_TRUE(decode_mmap2(rec, m));
    EXPECT_TRUE(m.has_build_id);
    EXPECT_EQ(std::vector<uint8_t>(m.build_id.begin(), m.build_id.end()),
              std::vector<uint8_t>(bid, bid + size));
    EXPECT_EQ(m.ino, 0u);
    EXPECT_EQ(m.prot, static_cast<uint32_t>(PROT_EXEC));
    EXPECT_EQ(m.filename, "/bin/x");
  }
}

TEST(PerfMmapRecordTest, DecodesMmap) {
  RecordBuilder b(PERF_RECORD_MMAP, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_DATA);
  b.u32(9).u32(10).u64(0x1000).u64(0x3000).u64(0x2000);
  b.padded_string("//anon");
  b.u64(777);  // sample_id: TIME
  auto rec = b.build();
  Mmap2 m;
  ASSERT_TRUE(decode_mmap(rec, m));
  EXPECT_EQ(m.pid, 9u);
  EXPECT_EQ(m.tid, 10u);
  EXPECT_EQ(m.addr, 0x1000u);
  EXPECT_EQ(m.len, 0x3000u);
  EXPECT_EQ(m.pgoff, 0x2000u);
  EXPECT_EQ(m.filename, "//anon");
  EXPECT_TRUE(m.data);
  EXPECT_EQ(m.prot, 0u);
  EXPECT_EQ(m.ino, 0u);
  SampleId id;
  ASSERT_TRUE(decode_sample_id(PERF_SAMPLE_TIME, rec, id));
  EXPECT_EQ(id.time, 777u);
  // Each decoder takes its own type only.
  EXPECT_FALSE(decode_mmap2(rec, m));
  EXPECT_FALSE(decode_mmap(mmap2_with_inode(), m));
}

TEST(PerfMmapRecordTest, EveryTruncationIsRejected) {
  auto full = mmap2_with_inode();
  // Up to the filename's NUL (8 header + 64 fixed + 18 name).
  for (uint16_t size = 0; size <= 8 + 64 + 18; ++size) {
    auto rec = full;
    testing::set_size(rec, size);
    Mmap2 m;
    EXPECT_FALSE(decode_mmap2(rec, m)) << size;
  }
  // A header claiming more than there is.
  auto rec = full;
  rec.resize(rec.size() - 8);
  Mmap2 m;
  EXPECT_FALSE(decode_mmap2(rec, m));
}

TEST(PerfMmapRecordTest, BadRecordsAreRejected) {
  Mmap2 m;
  {
    RecordBuilder b(PERF_RECORD_MMAP2);  // filename without its NUL
    b.u32(1).u32(1).u64(0).u64(0).u64(0).u32(0).u32(0).u64(0).u64(0).u32(0).u32(0);
    b.raw("/bin/abcd", 8);
    EXPECT_FALSE(decode_mmap2(b.build(), m));
  }
  {
    RecordBuilder b(PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID);  // build-id of 21
    uint8_t size = 21;
    b.u32(1).u32(1).u64(0).u64(0).u64(0).raw(&size, 1).raw("\0\0\0", 3);
    for (int i = 0; i < 5; ++i) b.u32(0);
    b.u32(0).u32(0).padded_string("/x");
    EXPECT_FALSE(decode_mmap2(b.build(), m));
  }
  RecordBuilder comm(PERF_RECORD_COMM);
  comm.u32(1).u32(1).padded_string("x");
  EXPECT_FALSE(decode_mmap2(comm.build(), m));
}

TEST(PerfSampleIdTest, FieldsFollowSampleType) {
  const struct {
    uint64_t type;
    std::vector<uint64_t> words;  // the trailer, u64 by u64
    SampleId want;
  } cases[] = {
      {PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
       {(uint64_t{11} << 32) | 10, 1000, 3},
       {10, 11, 1000, 0, 0, 3}},
      {PERF_SAMPLE_TIME, {2000}, {0, 0, 2000, 0, 0, 0}},
      {PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
           PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER,
       {(uint64_t{21} << 32) | 20, 3000, 40, 50, 1, 40},
       {20, 21, 3000, 40, 50, 1}},
      {PERF_SAMPLE_IDENTIFIER, {60}, {0, 0, 0, 60, 0, 0}},
      // Bits sample_id does not carry are no part of it.
      {PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_TIME, {4000}, {0, 0, 4000, 0, 0, 0}},
      {0, {}, {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.type);
    RecordBuilder b(PERF_RECORD_COMM);
    b.u32(1).u32(2).padded_string("a-long-enough-name");
    for (uint64_t w : c.words) b.u64(w);
    auto rec = b.build();
    SampleId id;
    ASSERT_TRUE(decode_sample_id(c.type, rec, id));
    EXPECT_EQ(id.pid, c.want.pid);
    EXPECT_EQ(id.tid, c.want.tid);
    EXPECT_EQ(id.time, c.want.time);
    EXPECT_EQ(id.id, c.want.id);
    EXPECT_EQ(id.stream_id, c.want.stream_id);
    EXPECT_EQ(id.cpu, c.want.cpu);
  }
}

TEST(PerfSampleIdTest, BadRecordsAreRejected) {
  SampleId id;
  RecordBuilder sample(PERF_RECORD_SAMPLE);
  sample.u64(1).u64(2);
  EXPECT_FALSE(decode_sample_id(PERF_SAMPLE_TIME, sample.build(), id));
  RecordBuilder small(PERF_RECORD_EXIT);
  small.u64(5);
  EXPECT_TRUE(decode_sample_id(PERF_SAMPLE_TIME, small.build(), id));
  EXPECT_FALSE(decode_sample_id(PERF_SAMPLE_TIME | PERF_SAMPLE_TID, small.build(), id));
  auto rec = small.build();
  rec.resize(6);
  EXPECT_FALSE(decode_sample_id(PERF_SAMPLE_TIME, rec, id));
}

// ---- ProcessEvents ----

class ProcessEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto t = text_mapping(getpid(), target_addr());
    ASSERT_TRUE(t.has_value());
    text_ = *t;
    attr_.sample_type = kSampleType;
    request_process_events(attr_);
  }

  // The sample_id trailer of kSampleType, when the records are timed.
  void trailer(RecordBuilder& b, uint32_t pid, uint32_t tid, uint64_t time) {
    if (attr_.sample_id_all) b.u32(pid).u32(tid).u64(time).u32(0).u32(0);
  }
  std::vector<uint8_t> mmap2(uint64_t time, uint32_t prot = PROT_READ | PROT_EXEC,
                             std::string path = "", uint32_t pid = kPid) {
    if (path.empty()) path = text_.path;
    RecordBuilder b(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
    b.u32(pid).u32(pid).u64(text_.start).u64(text_.end - text_.start).u64(text_.pgoff);
    b.u32(0).u32(0).u64(text_.ino).u64(0).u32(prot).u32(MAP_PRIVATE);
    b.padded_string(path);
    trailer(b, pid, pid, time);
    return b.build();
  }
  std::vector<uint8_t> comm(uint32_t pid, uint32_t tid, const std::string& name, bool exec,
                            uint64_t time) {
    RecordBuilder b(PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
    b.u32(pid).u32(tid).padded_string(name);
    trailer(b, pid, tid, time);
    return b.build();
  }
  std::vector<uint8_t> task(uint32_t type, uint32_t pid, uint32_t ppid, uint64_t time) {
    RecordBuilder b(type);
    b.u32(pid).u32(ppid).u32(pid).u32(ppid).u64(time);
    trailer(b, pid, pid, time);
    return b.build();
  }
  std::vector<uint8_t> fork(uint64_t time) { return task(PERF_RECORD_FORK, kPid, kParent, time); }

  bool feed(ProcessEvents& pe, const std::vector<uint8_t>& r) { return pe.handle(header_of(r), r); }
  bool resolves(symbols::UserSymbols& syms) {
    auto r = syms.lookup(static_cast<pid_t>(kPid), target_addr() + 1);
    if (r) {
      EXPECT_EQ(r->name, kTarget);
    }
    return r.has_value();
  }

  MapLine text_;
  perf_event_attr attr_{};
};

TEST_F(ProcessEventsTest, RequestSetsTheBitsAndKeepsTheRest) {
  perf_event_attr a{};
  a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
  a.freq = 1;
  a.exclude_callchain_kernel = 1;
  request_process_events(a);
  EXPECT_TRUE(a.comm && a.comm_exec && a.task && a.mmap && a.mmap2 && a.sample_id_all);
  EXPECT_FALSE(a.mmap_data);
  EXPECT_FALSE(a.build_id);
  EXPECT_EQ(a.sample_type, PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_TIME);
  EXPECT_TRUE(a.freq && a.exclude_callchain_kernel);
}

// The life of a short process: it is gone, its mappings resolve.
TEST_F(ProcessEventsTest, ExecutableMappingResolvesAfterTheProcessIsGone) {
  TaskNames names;
  symbols::UserSymbols syms;
  ProcessEvents pe(names, syms, attr_);
  EXPECT_TRUE(feed(pe, comm(kParent, kParent, "parent", false, 50)));
  EXPECT_TRUE(feed(pe, fork(100)));
  EXPECT_TRUE(feed(pe, comm(kPid, kPid, "short", true, 110)));
  EXPECT_TRUE(feed(pe, mmap2(120)));
  EXPECT_TRUE(feed(pe, task(PERF_RECORD_EXIT, kPid, kParent, 200)));
  EXPECT_TRUE(resolves(syms));
  EXPECT_EQ(names.comm(kPid, kPid, 0), "short");
  EXPECT_EQ(pe.stats().mappings, 1u);
  EXPECT_EQ(pe.stats().resets, 2u);  // the fork, the exec
  EXPECT_EQ(pe.stats().stale, 0u);
}

TEST_F(ProcessEventsTest, OnlyExecutableFileMappingsAreAdded) {
  TaskNames names;
  symbols::UserSymbols syms;
  ProcessEvents pe(names, syms, attr_);
  EXPECT_TRUE(feed(pe, mmap2(10, PROT_READ)));                        // data
  EXPECT_TRUE(feed(pe, mmap2(11, PROT_READ | PROT_EXEC, "//anon")));  // JIT memory
  EXPECT_TRUE(feed(pe, mmap2(12, PROT_READ | PROT_EXEC, "[heap]")));
  EXPECT_TRUE(feed(pe, mmap2(13, PROT_READ | PROT_EXEC, "", UINT32_MAX)));  // pid -1
  EXPECT_EQ(pe.stats().mappings, 0u);
  EXPECT_FALSE(resolves(syms));
  EXPECT_TRUE(feed(pe, mmap2(14, PROT_READ | PROT_EXEC, "[vdso]")));
  EXPECT_EQ(pe.stats().mappings, 1u);
}

TEST_F(ProcessEventsTest, OldMmapRecordsAreAddedToo) {
  TaskNames names;
  symbols::UserSymbols syms;
  ProcessEvents pe(names, syms, attr_);
  RecordBuilder data(PERF_RECORD_MMAP, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_DATA);
  data.u32(kPid).u32(kPid).u64(text_.start).u64(text_.end - text_.start).u64(text_.pgoff);
  data.padded_string(text_.path);
  trailer(data, kPid, kPid, 10);
  EXPECT_TRUE(feed(pe, data.build()));
  EXPECT_FALSE(resolves(syms));
  RecordBuilder b(PERF_RECORD_MMAP, PERF_RECORD_MISC_USER);
  b.u32(kPid).u32(kPid).u64(text_.start).u64(text_.end - text_.start).u64(text_.pgoff);
  b.padded_string(text_.path);
  trailer(b, kPid, kPid, 20);
  EXPECT_TRUE(feed(pe, b.build()));
  EXPECT_TRUE(resolves(syms));
}

TEST_F(ProcessEventsTest, BuildIdRecordsAreChecked) {
  const auto bid = own_build_id();
  ASSERT_EQ(bid.size(), 20u);
  for (bool right : {true, false}) {
    SCOPED_TRACE(right);
    TaskNames names;
    symbols::UserSymbols syms;
    ProcessEvents pe(names, syms, attr_);
    RecordBuilder b(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
    b.u32(kPid).u32(kPid).u64(text_.start).u64(text_.end - text_.start).u64(text_.pgoff);
    std::vector<uint8_t> id = bid;
    if (!right) id[19] ^= 1;
    uint8_t size = 20;
    b.raw(&size, 1).raw("\0\0\0", 3).raw(id.data(), 20);
    b.u32(PROT_READ | PROT_EXEC).u32(MAP_PRIVATE).padded_string(text_.path);
    trailer(b, kPid, kPid, 10);
    EXPECT_TRUE(feed(pe, b.build()));
    EXPECT_EQ(resolves(syms), right);
  }
}

TEST_F(ProcessEventsTest, ExecReplacesTheOldImage) {
  TaskNames names;
  symbols::UserSymbols syms;
  ProcessEvents pe(names, syms, attr_);
  feed(pe, mmap2(100));
  ASSERT_TRUE(resolves(syms));
  feed(pe, comm(kPid, kPid, "new", true, 200));
  EXPECT_FALSE(resolves(syms));
  feed(pe, mmap2(300));
  EXPECT_TRUE(resolves(syms));
}

// The usual misorder: the parent's FORK (its CPU's ring) read after the
// child's exec and mappings (another CPU's ring).
TEST_F(ProcessEventsTest, ForkReadLateDoesNotUndoTheExec) {
  TaskNames names;
  symbols::UserSymbols syms;
  ProcessEvents pe(names, syms, attr_);
  feed(pe, comm(kParent, kParent, "parent", false, 50));
  feed(pe, comm(kPid, kPid, "short", true, 200));
  feed(pe, mmap2(210));
  feed(pe, fork(100));
  EXPECT_TRUE(resolves(syms));
  EXPECT_EQ(names.comm(kPid, kPid, 0), "short");  // not the parent's name
  EXPECT_EQ(pe.stats().stale, 2u);                // the fork: as a reset, as a name
}

// A mapping read before the exec that precedes it: forgotten with the old
// image, then added again.
TEST_F(ProcessEventsTest, ExecReadLateKeepsNewerMappings) {
  TaskNames names;
  symbols::UserSymbols syms;
  ProcessEvents pe(names, syms, attr_);
  feed(pe, mmap2(300));
  feed(pe, comm(kPid, kPid, "short", true, 200));
  EXPECT_TRUE(resolves(syms));
  EXPECT_EQ(pe.stats().mappings, 2u);
  EXPECT_EQ(pe.stats().resets, 1u);
}

TEST_F(ProcessEventsTest, MappingOfTheOldImageReadLateIsIgnored) {
  TaskNames names;
  symbols::UserSymbols syms;
  ProcessEvents pe(names, syms, attr_);
  feed(pe, comm(kPid, kPid, "short", true, 200));
  feed(pe, mmap2(100));
  EXPECT_FALSE(resolves(syms));
  EXPECT_EQ(pe.stats().stale, 1u);
  // An older exec read later changes nothing either.
  feed(pe, mmap2(250));
  feed(pe, comm(kPid, kPid, "older", true, 150));
  EXPECT_TRUE(resolves(syms));
  EXPECT_EQ(names.comm(kPid, kPid, 0), "short");
}

TEST_F(ProcessEventsTest, ReorderingBeyondTheWindowIsAppliedInArrivalOrder) {
  TaskNames names;
  symbols::UserSymbols syms;
  ProcessEvents pe(names, syms, attr_);
  feed(pe, mmap2(1000));
  feed(pe, task(PERF_RECORD_EXIT, kParent, 1, 1000 + 2 * ProcessEvents::kReorderWindow));
  feed(pe, comm(kPid, kPid, "ancient", true, 500));
  EXPECT_FALSE(resolves(syms));
}

// Without sample_id_all there are no times: records apply as they come.
TEST_F(ProcessEventsTest, UntimedRecordsApplyInArrivalOrder) {
  attr_.sample_id_all = 0;
  TaskNames names;
  symbols::UserSymbols syms;
  ProcessEvents pe(names, syms, attr_);
  feed(pe, comm(kPid, kPid, "short", true, 0));
  feed(pe, mmap2(0));
  EXPECT_TRUE(resolves(syms));
  feed(pe, fork(0));  // read late, or a reused pid: the same to us
  EXPECT_FALSE(resolves(syms));
}

TEST_F(ProcessEventsTest, OtherRecordsAreLeftToTheCaller) {
  TaskNames names;
  symbols::UserSymbols syms;
  ProcessEvents pe(names, syms, attr_);
  RecordBuilder sample(PERF_RECORD_SAMPLE);
  sample.u64(0x1000);
  EXPECT_FALSE(feed(pe, sample.build()));
  RecordBuilder lost(PERF_RECORD_LOST);
  lost.u64(1).u64(5);
  EXPECT_FALSE(feed(pe, lost.build()));
  auto cut = mmap2(10);
  testing::set_size(cut, 40);
  EXPECT_FALSE(feed(pe, cut));
  RecordBuilder bad_comm(PERF_RECORD_COMM);
  bad_comm.u32(1);
  EXPECT_FALSE(feed(pe, bad_comm.build()));
  EXPECT_EQ(pe.stats().mappings, 0u);
}

}  // namespace
}  // namespace tracekit::perf

// A small report with known contents, for the renderers' golden tests: what
// `profile -F 99 -d` on a host called "testhost" could have gathered from
// the cpuratio workload (func_a:func_b 1:3), plus a kernel-only stack, a
// missed user stack and a record whose frames need escaping in every format.
#pragma once

#include <string>
#include <vector>

#include "report/report.hpp"

namespace tracekit::report::testing {

// Frames leaf first, as the tools hold them.
inline Report sample_report(Unit unit = Unit::kSamples) {
  Report r;
  r.tool = "profile";
  r.command = "profile -F 99 -d -o out.svg 5";
  r.host = "testhost";
  r.unit = unit;
  r.period_ns = unit == Unit::kSamples ? 10101010 : 0;  // 1e9 / 99
  r.start_unix_ns = 1795000000000000000;                // 2026-11-18T...
  r.duration_ns = 5000000000;
  r.style.delimiter = true;
  r.mappings = {
      {0x55d0c0de0000, 0x55d0c0de5000, 0x1000, "/usr/bin/cpuratio", "0a1b2c3d4e5f", false},
      {0x7f2c1a200000, 0x7f2c1a3c0000, 0x26000, "/usr/lib/x86_64-linux-gnu/libc.so.6",
       "ffeeddccbbaa99887766", false},
      {0xffffffff81000000, 0xffffffff82000000, 0, "[kernel.kallsyms]", "", true},
  };

  // cpuratio: main -> func_a (100) and main -> func_b (300), user only.
  report::Record a;
  a.comm = "cpuratio";
  a.pid = 4242;
  const report::Frame main{0x55d0c0de11a0, "main", 0x20, 0};
  const report::Frame start{0x7f2c1a229d90, "__libc_start_call_main", 0x80, 1};
  a.user = r.frames.stack({{0x55d0c0de1130, "func_a", 0x10, 0}, main, start});
  a.value = 100;
  report::Record b = a;
  b.user = r.frames.stack({{0x55d0c0de1150, "func_b", 0x10, 0}, main, start});
  b.value = 300;
  // The same stack as a, at another address in func_a: merges with a in
  // the text formats (merge_same_text), stays apart in pprof.
  report::Record a2 = a;
  a2.user = r.frames.stack({{0x55d0c0de1134, "func_a", 0x14, 0}, main, start});
  a2.value = 20;
  // A read from cpuratio that entered the kernel: both sides.
  report::Record k;
  k.comm = "cpuratio";
  k.pid = 4242;
  k.kernel = r.frames.stack({{0xffffffff81400b30, "__clear_user", 0x30, 2},
                      {0xffffffff81401a5e, "iov_iter_zero", 0x5e, 2},
                      {0xffffffff81a0000c, "entry_SYSCALL_64", 0xc, 2}});
  k.user = r.frames.stack({{0x7f2c1a2b3c4d, "read", 0x1d, 1},
                    {0x55d0c0de11a0, "main", 0x20, 0},
                    {0x7f2c1a229d90, "__libc_start_call_main", 0x80, 1}});
  k.value = 7;
  // A kernel thread: kernel side only, one frame unresolved.
  report::Record kt;
  kt.comm = "kworker/0:1";
  kt.pid = 17;
  kt.kernel = r.frames.stack({{0xffffffff81234567, "", 0, 2},
                       {0xffffffff810c0000, "worker_thread", 0x100, 2},
                       {0xffffffff810c8000, "kthread", 0x40, 2}});
  kt.value = 3;
  // A lost user stack, and names that need escaping: '<', '&', '"', ';'
  // and a C++ name with spaces.
  report::Record odd;
  odd.comm = "a<b>&\"c\"";
  odd.pid = 99;
  odd.user = report::Stack{report::StackState::kMissed};
  odd.kernel = r.frames.stack({{0xffffffff81500000, "ns::f<int>(int, char const*)", 0, 2},
                        {0xffffffff81500100, "x;y", 0, 2}});
  odd.value = 1;
  r.records = {a, b, a2, k, kt, odd};
  r.totals.lost_events = 2;
  r.totals.truncated_stacks = 1;
  return r;
}

}  // namespace tracekit::report::testing

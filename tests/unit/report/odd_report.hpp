// A small report whose strings test the JSON writers: control characters in
// a comm, a name, a file and the command line, bytes that are not UTF-8
// (a Latin-1 name, a host name), and well-formed UTF-8 that must pass as it is.
#pragma once

#include "report/report.hpp"
#include "sample_report.hpp"

namespace tracekit::report::testing {

inline Report odd_report() {
  Report r;
  r.tool = "stackcount";
  r.command = "stackcount -P\n\"x\"";
  r.host = "h\xffst";
  r.unit = Unit::kEvents;
  r.start_unix_ns = 1795000000123456789;
  r.duration_ns = 1000000000;
  r.style.frame_indent = 2;
  r.mappings = {
      {0x400000, 0x500000, 0, "/opt/x\x01y", "", false},
      {0xffffffff81000000, 0xffffffff82000000, 0, "[kernel.kallsyms]", "", true},
  };
  report::Record tab;
  tab.comm = "tab\there";
  tab.pid = 1;
  // Leaf first: a Latin-1 name with no mapping, called from an unknown frame.
  tab.user = r.frames.stack({{0x401000, "caf\xe9", 0x8, -1}, {0x401100, "", 0, 0}});
  tab.value = 5;
  report::Record cjk;
  cjk.comm = "\xe6\x97\xa5";  // U+65E5
  cjk.pid = 2;
  cjk.kernel = r.frames.stack({{0xffffffff81000010, "a\x01" "b", 0x10, 1}});
  cjk.value = 2;
  r.records = {tab, cjk};
  return r;
}

}  // namespace tracekit::report::testing

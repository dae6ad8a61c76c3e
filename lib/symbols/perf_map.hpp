// /tmp/perf-PID.map files written by JITs: "START SIZE name" per line, hex
// START and SIZE. Parsing never does I/O; load() reads the file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "symbols/symbol.hpp"

namespace tracekit::symbols {

class PerfMap {
 public:
  // Malformed lines (fewer than three fields, bad hex, zero size) are
  // skipped. Where entries overlap, the later line wins: a JIT that reuses
  // code memory appends the new function after the old one.
  static PerfMap parse(std::istream& in);
  // Reads and parses path, and names it the module (set_path). nullopt when
  // it cannot be opened (no JIT wrote it), or when it is no file the JIT
  // could have written: /tmp is anyone's, so only a regular file (no
  // symlink, FIFO or device: util/safe_file.hpp open_regular) with one link,
  // owned by us or by owner_uid (the process's owner), is read, and of it at
  // most kMaxBytes.
  static std::optional<PerfMap> load(const std::string& path, uid_t owner_uid);
  static constexpr size_t kMaxBytes = size_t{256} << 20;
  // nullopt if addr is in no entry. module is "perf-PID.map" path given at
  // construction by the caller (set_path) or empty.
  std::optional<Resolved> lookup(uint64_t addr) const;
  void set_path(std::string path) { path_ = std::move(path); }
  // Number of disjoint address ranges kept (the valid lines, when none
  // overlap).
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    uint64_t start, end;  // [start, end): what is left of the line's range
    uint64_t sym_start;   // the line's START, which offsets count from
    uint32_t name;        // index into names_
  };
  std::vector<Entry> entries_;      // sorted by start, disjoint
  std::vector<std::string> names_;  // one per valid line
  std::string path_;
};

}  // namespace tracekit::symbols

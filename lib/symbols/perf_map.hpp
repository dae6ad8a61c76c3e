// /tmp/perf-PID.map files written by JITs: "START SIZE name" per line, hex
// START and SIZE. Parsing never does I/O.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "symbols/symbol.hpp"

namespace tracekit::symbols {

class PerfMap {
 public:
  // Malformed lines are skipped.
  static PerfMap parse(std::istream& in);
  // nullopt if addr is in no entry. module is "perf-PID.map" path given at
  // construction by the caller (set_path) or empty.
  std::optional<Resolved> lookup(uint64_t addr) const;
  void set_path(std::string path) { path_ = std::move(path); }
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    uint64_t start, size;
    std::string name;
  };
  std::vector<Entry> entries_;  // sorted by start
  std::string path_;
};

}  // namespace tracekit::symbols

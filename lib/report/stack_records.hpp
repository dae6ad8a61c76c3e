// From aggregated tables to printable records: every key's stacks resolved
// to names, once per unique frame, at report time (never per event).
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <span>
#include <unordered_map>
#include <vector>

#include "aggregate/stack_counts.hpp"
#include "report/files.hpp"
#include "report/mapping_table.hpp"
#include "report/report.hpp"
#include "symbols/kallsyms.hpp"
#include "symbols/user.hpp"

namespace tracekit::report {

// Resolves stacks to named frames, stored in a FrameTable: each distinct
// frame (its process for user frames, its address, whether it is a return
// address) is looked up and stored once, however many stacks hold it.
// Either symbolizer may be null: its frames then print as "[unknown]".
class StackResolver {
 public:
  // with_mappings: also set each frame's mapping (Frame::mapping, for the
  // output files that keep addresses); stdout alone does not need them.
  StackResolver(const symbols::KernelSymbols* kernel, symbols::UserSymbols* user, FrameTable& table,
                bool with_mappings = false)
      : kernel_(kernel),
        user_(user),
        table_(table),
        with_mappings_(with_mappings),
        mappings_(kernel, user) {}

  // A present stack of frames, leaf first; all but the first are return
  // addresses (user frames: but those with symbols::kActivationFrame).
  Stack kernel(std::span<const uint64_t> frames);
  Stack user(uint32_t pid, std::span<const uint64_t> frames);
  // Room for stacks of n frames in all.
  void reserve(size_t n) { table_.reserve(n); }
  // The mappings that the frames' mapping fields index (Report::mappings).
  std::vector<Mapping> take_mappings() { return mappings_.take(); }

 private:
  // A frame as resolved: whose (kKernel for the kernel's), where, and
  // whether a return address (looked up at addr - 1).
  static constexpr uint32_t kKernel = UINT32_MAX;
  struct Key {
    uint64_t addr;
    uint32_t pid;
    bool return_address;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  FrameTable::Id frame(const Key& k);

  const symbols::KernelSymbols* kernel_;
  symbols::UserSymbols* user_;
  FrameTable& table_;
  bool with_mappings_;
  MappingTable mappings_;
  std::unordered_map<Key, FrameTable::Id, KeyHash> ids_;  // the frames stored
  std::vector<FrameTable::Id> stack_;                     // one stack's ids
};

// What the report could not show, for the tool's warnings.
struct Missing {
  uint64_t stacks = 0;  // sides that were collected but not stored (table full)
};

// One record per key of counts, in first-seen order (sort with
// output::sort_by_value), their frames in the resolver's table.
// pid_in_record: whether records carry the key's pid (tools that do not key
// by process pass false and get pid -1). symbol_pid: the process whose
// mappings resolve a key's user stack, when keys hold thread IDs
// (offcputime); by default the key's pid itself.
std::vector<Record> build_records(const aggregate::StackCounts& counts, StackResolver& resolver,
                                  Missing* missing, bool pid_in_record = true,
                                  const std::function<uint32_t(uint32_t)>& symbol_pid = {});

// How output::print_stack_report() prints.
struct PrintOptions {
  Style style;
  bool folded = false;
  bool kernel_symbols = true;  // load /proc/kallsyms (not needed for user stacks only)
  std::function<uint32_t(uint32_t)> symbol_pid;  // see build_records()
  bool pid_in_record = true;  // records show the key's pid (false: keys still
                              // carry one, for user symbols, but it is not shown)
  const char* unit = "samples";  // what a key's value counts, for warnings

  // For the -o files (and the report model): what the run was.
  const OutputOptions* output = nullptr;  // -o files; null: none
  std::string tool;                       // "profile"
  Unit value_unit = Unit::kSamples;
  uint64_t period_ns = 0;      // profile: CPU time per sample
  int64_t start_unix_ns = 0;   // when this report's tracing began
  Totals totals;               // the tool's lost events and cut stacks (the rest is added)
};

// The report model of counts: every key's stacks resolved (see
// build_records) into the report's frame table, with what the run was
// (opts) and what it lost. A warning on err if kernel symbols cannot be
// read. The report holds no reference to counts: a tool may clear them
// before it prints the report (output::print_report).
Report build_report(const aggregate::StackCounts& counts, symbols::UserSymbols* user_syms,
                    const PrintOptions& opts, std::ostream& err);

}  // namespace tracekit::report

// What a symbol lookup returns, for kernel and user addresses alike.
#pragma once

#include <cstdint>
#include <string_view>

namespace tracekit::symbols {

// A resolved address. name and module point into the symbolizer that
// returned it and stay valid until that symbolizer is destroyed (or, for
// UserSymbols, until forget() is called for the process).
struct Resolved {
  std::string_view name;    // demangled function name
  uint64_t offset = 0;      // address - symbol start
  std::string_view module;  // kernel module ("" for vmlinux) or user file path
  uint64_t size = 0;        // the symbol's size where known (kernel: to the next symbol), else 0
};

}  // namespace tracekit::symbols

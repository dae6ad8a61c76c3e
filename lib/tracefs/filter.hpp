// Event filters in the kernel's syntax (events/<sys>/<event>/filter, and the
// "if ..." of a trigger). Pure.
#pragma once

#include <string>
#include <vector>

namespace tracekit::tracefs {

// "field == 1 || field == 2 ..." for the given values (thread IDs, syscall
// numbers); "" for none.
std::string equals_any(const std::string& field, const std::vector<int>& values);

// "(a) && (b)" (either alone when the other is empty).
std::string join_filters(const std::string& a, const std::string& b);

}  // namespace tracekit::tracefs

// Event filters in the kernel's syntax (events/<sys>/<event>/filter, and the
// "if ..." of a trigger). Pure.
#pragma once

#include <string>
#include <vector>

namespace tracekit::tracefs {

// "field == 1 || field == 2 ..." for the given thread IDs; "" for none.
std::string thread_filter(const std::string& field, const std::vector<int>& tids);

// "(a) && (b)" (either alone when the other is empty).
std::string join_filters(const std::string& a, const std::string& b);

}  // namespace tracekit::tracefs

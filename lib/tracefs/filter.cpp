#include "tracefs/filter.hpp"

namespace tracekit::tracefs {

std::string equals_any(const std::string& field, const std::vector<int>& values) {
  std::string f;
  for (int t : values) {
    if (!f.empty()) f += " || ";
    f += field + " == " + std::to_string(t);
  }
  return f;
}

std::string join_filters(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return "(" + a + ") && (" + b + ")";
}

}  // namespace tracekit::tracefs

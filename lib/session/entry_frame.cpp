#include "session/entry_frame.hpp"

#include <algorithm>
#include <cstring>

#include "probe/spec.hpp"
#include "util/strings.hpp"

namespace tracekit::stackcount {

std::unordered_set<int> entry_kprobe_ids(const session::Probes& probes,
                                         const std::vector<probe::Target>& targets) {
  std::unordered_set<int> ids;
  for (const auto& e : probes.events()) {
    const bool entry = std::any_of(targets.begin(), targets.end(), [&](const probe::Target& t) {
      return t.kind == probe::Kind::kKernel && t.function == e.target &&
             t.function.find('+') == std::string::npos;
    });
    if (entry) ids.insert(e.id);
  }
  return ids;
}

uint64_t kprobe_ip(std::span<const uint8_t> record) {
  if (record.size() < 16) return 0;
  uint64_t ip;
  std::memcpy(&ip, record.data() + 8, sizeof ip);
  return ip;
}

FunctionEntry function_entry(std::span<const uint8_t> record) {
  FunctionEntry f;
  if (record.size() < 24) return f;
  std::memcpy(&f.ip, record.data() + 8, sizeof f.ip);
  std::memcpy(&f.parent_ip, record.data() + 16, sizeof f.parent_ip);
  return f;
}

int function_event_id(const std::string& tracing_dir) {
  auto text = read_file(tracing_dir + "/events/ftrace/function/id");
  if (!text) return -1;
  auto id = parse_int<int>(trim(*text));
  return id ? *id : -1;
}

std::span<const uint64_t> with_probed_function(std::span<const uint64_t> stack, uint64_t ip,
                                               const symbols::KernelSymbols& ksyms,
                                               std::vector<uint64_t>& buf, uint64_t parent_ip) {
  while (!stack.empty() && stack.back() == ~uint64_t{0}) stack = stack.first(stack.size() - 1);
  if (ip == 0) return stack;
  auto probed = ksyms.lookup(ip);
  if (!probed) return stack;
  auto in = [&](size_t i, std::string_view name, bool return_address) {
    if (i >= stack.size()) return false;
    auto r = ksyms.lookup(stack[i], return_address);
    return r && r->name == name;
  };
  if (in(0, probed->name, false)) return stack;
  buf.assign(1, ip);
  if (parent_ip)
    if (auto caller = ksyms.lookup(parent_ip, true); caller && !in(0, caller->name, true))
      buf.push_back(parent_ip);
  buf.insert(buf.end(), stack.begin(), stack.end());
  return buf;
}

}  // namespace tracekit::stackcount

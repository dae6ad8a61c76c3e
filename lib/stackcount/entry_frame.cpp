#include "stackcount/entry_frame.hpp"

#include <algorithm>
#include <cstring>

#include "probe/spec.hpp"

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

std::span<const uint64_t> with_probed_function(std::span<const uint64_t> stack, uint64_t ip,
                                               const symbols::KernelSymbols& ksyms,
                                               std::vector<uint64_t>& buf) {
  if (ip == 0) return stack;
  auto probed = ksyms.lookup(ip);
  if (!probed) return stack;
  if (!stack.empty()) {
    auto first = ksyms.lookup(stack[0]);
    if (first && first->name == probed->name) return stack;
  }
  buf.assign(1, ip);
  buf.insert(buf.end(), stack.begin(), stack.end());
  return buf;
}

}  // namespace tracekit::stackcount

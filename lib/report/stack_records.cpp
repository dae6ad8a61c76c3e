#include "report/stack_records.hpp"

#include "symbols/unwind.hpp"

namespace tracekit::report {

size_t StackResolver::KeyHash::operator()(const Key& k) const {
  uint64_t h = (k.addr ^ (uint64_t{k.pid} << 1 | k.return_address)) * 0x9e3779b97f4a7c15ULL;
  return static_cast<size_t>(h ^ h >> 32);
}

FrameTable::Id StackResolver::frame(const Key& k) {
  auto [it, added] = ids_.try_emplace(k, 0);
  if (!added) return it->second;
  Frame f;
  f.addr = k.addr;
  std::optional<symbols::Resolved> r;
  if (k.pid == kKernel) {
    if (kernel_) r = kernel_->lookup(k.addr, k.return_address);
    if (with_mappings_) f.mapping = mappings_.kernel(k.addr);
  } else {
    if (user_) r = user_->lookup(static_cast<pid_t>(k.pid), k.addr, k.return_address);
    if (with_mappings_) f.mapping = mappings_.user(k.pid, k.addr);
  }
  if (r) {
    f.name = std::string(r->name);
    f.offset = r->offset;
  }
  it->second = table_.add(std::move(f));
  return it->second;
}

Stack StackResolver::kernel(std::span<const uint64_t> frames) {
  stack_.clear();
  for (size_t i = 0; i < frames.size(); ++i) stack_.push_back(frame({frames[i], kKernel, i > 0}));
  return table_.stack(stack_);
}

Stack StackResolver::user(uint32_t pid, std::span<const uint64_t> frames) {
  stack_.clear();
  // A frame of an unwound signal frame is looked up at its own address.
  for (size_t i = 0; i < frames.size(); ++i) {
    const uint64_t addr = frames[i] & ~symbols::kActivationFrame;
    stack_.push_back(frame({addr, pid, i > 0 && addr == frames[i]}));
  }
  return table_.stack(stack_);
}

std::vector<Record> build_records(const aggregate::StackCounts& counts, StackResolver& resolver,
                                  Missing* missing, bool pid_in_record,
                                  const std::function<uint32_t(uint32_t)>& symbol_pid) {
  std::vector<Record> records;
  records.reserve(counts.counts.size());
  auto side = [&](aggregate::StackId id, auto&& resolve) {
    Stack s;
    if (id == aggregate::kNoStack) return s;
    if (id == aggregate::kStackLost) {
      s.state = StackState::kMissed;
      if (missing) ++missing->stacks;
      return s;
    }
    return resolve(counts.stacks.frames(id));
  };
  size_t frames = 0;
  counts.counts.for_each([&](const aggregate::StackKey& key, uint64_t) {
    frames += counts.stacks.frames(key.kernel).size() + counts.stacks.frames(key.user).size();
  });
  resolver.reserve(frames);
  counts.counts.for_each([&](const aggregate::StackKey& key, uint64_t total) {
    Record r;
    r.comm = std::string(counts.comms.str(key.comm));
    r.pid = pid_in_record ? static_cast<int64_t>(key.pid) : -1;
    r.kernel = side(key.kernel, [&](auto f) { return resolver.kernel(f); });
    uint32_t owner = symbol_pid ? symbol_pid(key.pid) : key.pid;
    r.user = side(key.user, [&](auto f) { return resolver.user(owner, f); });
    r.value = total;
    records.push_back(std::move(r));
  });
  return records;
}

Report build_report(const aggregate::StackCounts& counts, symbols::UserSymbols* user_syms,
                    const PrintOptions& opts, std::ostream& err) {
  symbols::KernelSymbols ksyms;
  // kallsyms (about 0.2 s and 10 MB to load) only when some kernel stack
  // is there to resolve: none under -U, nor for syscall tracepoints, whose
  // perf samples carry the user registers.
  bool kernel_stacks = false;
  counts.counts.for_each([&](const aggregate::StackKey& k, uint64_t) {
    kernel_stacks = kernel_stacks || k.kernel >= 0;
  });
  if (opts.kernel_symbols && kernel_stacks) {
    auto k = symbols::KernelSymbols::load();
    if (k.ok())
      ksyms = std::move(*k);
    else
      err << "WARNING: kernel symbols unavailable: " << k.error().str() << "\n";
  }
  Report r;
  StackResolver resolver(&ksyms, user_syms, r.frames, opts.output && !opts.output->files.empty());
  Missing missing;
  r.records = build_records(counts, resolver, &missing, opts.pid_in_record, opts.symbol_pid);
  r.mappings = resolver.take_mappings();
  r.tool = opts.tool;
  r.command = opts.output ? opts.output->command : opts.tool;
  r.host = host_name();
  r.unit = opts.value_unit;
  r.period_ns = opts.period_ns;
  r.start_unix_ns = opts.start_unix_ns;
  if (opts.start_unix_ns > 0) r.duration_ns = unix_now_ns() - opts.start_unix_ns;
  r.style = opts.style;
  r.totals = opts.totals;
  r.totals.missed_stacks = missing.stacks;
  r.totals.dropped = counts.counts.dropped();
  return r;
}

}  // namespace tracekit::report

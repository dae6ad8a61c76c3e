// A new signature: its record is staged in the signature table's arena, and
// its stacks are interned by adopting the stack records inside it, so a
// stack seen for the first time is stored once (in the signature record)
// rather than twice. The record is kept if the stack table adopted either
// stack, and entered in the signature table if nothing was lost or dropped.
#include "aggregate/stack_counts.hpp"

namespace tracekit::aggregate {

bool StackCounts::add_new(const Signature& s, uint64_t h, uint64_t value) {
  const SignatureTable::Staged st = signatures.stage(s);
  const size_t stored = stacks.size();
  const StackId kernel = s.kernel.empty() ? kNoStack : stacks.adopt(st.kernel);
  const StackId user = s.user.empty() ? kNoStack : stacks.adopt(st.user);
  const uint32_t key = counts.index(StackKey{s.pid, comms.intern(s.comm), kernel, user});
  if (key != CountTable::kDropped) counts.add_at(key, value);
  if (key != CountTable::kDropped && kernel != kStackLost && user != kStackLost)
    signatures.insert(st, h, key);
  else if (stacks.size() == stored)
    signatures.discard(st);
  return key != CountTable::kDropped;
}

}  // namespace tracekit::aggregate

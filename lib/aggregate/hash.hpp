// The hashes of the aggregation tables: 64x64->128-bit multiplies whose
// product halves are folded together (the wyhash / rapidhash construction,
// with our own constants). Internal to lib/aggregate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

namespace tracekit::aggregate::hash {

// Odd constants whose top 16 bits are neither all zeros nor all ones: no
// canonical x86-64 or arm64 address equals them, so xoring a frame with one
// never feeds the multiply a zero (which would erase the hash so far).
inline constexpr uint64_t kSeed = 0x9e3779b97f4a7c15;
inline constexpr uint64_t kK0 = 0xd6e8feb86659fd93;
inline constexpr uint64_t kK1 = 0x8ebc6af09c88c6e3;
inline constexpr uint64_t kK2 = 0x589965cc75374cc3;
inline constexpr uint64_t kK3 = 0x1d8e4e27c47d124f;
inline constexpr uint64_t kLane1 = 0x4f1bbcdcbfa53e0b;
inline constexpr uint64_t kLane2 = 0x2d358dccaa6c78a5;
inline constexpr uint64_t kLane3 = 0x6a09e667f3bcc909;

inline uint64_t fold_mul(uint64_t a, uint64_t b) {
  const unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

// A stack's hash. Four independent chains over 8-frame blocks so the
// multiplies overlap; the last block is the stack's last 8 frames, even if
// that re-reads some: one loop exit to mispredict instead of three (block,
// pair, odd frame) on stacks whose length varies from event to event. The
// length seeds the hash, so a stack and its prefix ([a,b], [a,b,c]) differ.
inline uint64_t frames(std::span<const uint64_t> frames) {
  const uint64_t* p = frames.data();
  const size_t n = frames.size();
  uint64_t a = kSeed ^ n, b = kLane1, c = kLane2, d = kLane3;
  auto block = [&](const uint64_t* q) {
    a = fold_mul(q[0] ^ kK0, q[1] ^ a);
    b = fold_mul(q[2] ^ kK1, q[3] ^ b);
    c = fold_mul(q[4] ^ kK2, q[5] ^ c);
    d = fold_mul(q[6] ^ kK3, q[7] ^ d);
  };
  if (n > 8) {
    for (size_t i = 0; i + 8 < n; i += 8) block(p + i);
    block(p + n - 8);
  } else if (n >= 4) {
    a = fold_mul(p[0] ^ kK0, p[1] ^ a);
    b = fold_mul(p[2] ^ kK1, p[3] ^ b);
    c = fold_mul(p[n - 4] ^ kK2, p[n - 3] ^ c);
    d = fold_mul(p[n - 2] ^ kK3, p[n - 1] ^ d);
  } else if (n > 0) {
    a = fold_mul(p[0] ^ kK0, p[n - 1] ^ a);
    b = fold_mul(p[n / 2] ^ kK1, b);
  }
  return fold_mul(fold_mul(a ^ c, b ^ d) ^ kK2, n ^ kK3);
}

// The bytes of a string of at most 16 bytes as two words, with loads that
// may overlap but cover every byte and read none outside it: for strings of
// one length, equal words mean equal strings. No call, and one branch on the
// length class instead of a byte count to copy.
inline void short_words(const char* p, size_t n, uint64_t& w0, uint64_t& w1) {
  if (n >= 8) {
    std::memcpy(&w0, p, 8);
    std::memcpy(&w1, p + n - 8, 8);
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    w0 = a;
    w1 = b;
  } else if (n > 0) {
    w0 = uint64_t{static_cast<uint8_t>(p[0])} | uint64_t{static_cast<uint8_t>(p[n / 2])} << 8 |
         uint64_t{static_cast<uint8_t>(p[n - 1])} << 16;
    w1 = 0;
  } else {
    w0 = w1 = 0;
  }
}

// A short string's hash (a process name: at most 15 bytes on Linux, one
// step), seeded with the length; longer strings 16 bytes per step, the last
// step the last 16 bytes.
inline uint64_t bytes(std::string_view s) {
  const size_t n = s.size();
  uint64_t h = kSeed ^ n;
  uint64_t w0, w1;
  if (n <= 16) {
    short_words(s.data(), n, w0, w1);
    return fold_mul(w0 ^ kK2, w1 ^ h ^ kK3);
  }
  for (size_t i = 0; i + 16 < n; i += 16) {
    std::memcpy(&w0, s.data() + i, 8);
    std::memcpy(&w1, s.data() + i + 8, 8);
    h = fold_mul(w0 ^ kK0, w1 ^ h ^ kK1);
  }
  std::memcpy(&w0, s.data() + n - 16, 8);
  std::memcpy(&w1, s.data() + n - 8, 8);
  return fold_mul(w0 ^ kK2, w1 ^ h ^ kK3);
}

}  // namespace tracekit::aggregate::hash

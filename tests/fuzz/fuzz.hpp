// What every fuzz target shares. A target is written once, in
// tests/fuzz/<name>_fuzz.cpp, as
//
//   TRACEKIT_FUZZ_TARGET(name) { ... the body, over data and size ... }
//
// and built two ways:
//  - by `make fuzz`, with clang++ -fsanitize=fuzzer,address,undefined: the
//    body is libFuzzer's LLVMFuzzerTestOneInput, run for FUZZ_SECONDS on
//    tests/fuzz/corpus/<name>/ and what it finds from there;
//  - into the unit tests: tests/unit/fuzz/<name>_replay_test.cpp defines
//    TRACEKIT_FUZZ_REPLAY and includes the target's .cpp, which makes the
//    body a GoogleTest case that runs it on every file of
//    tests/fuzz/corpus/<name>/ (TRACEKIT_FUZZ_CORPUS overrides
//    tests/fuzz/corpus), so `make check` replays the seeds and the inputs
//    of every crash found and fixed, without clang.
//
// FUZZ_CHECK(cond) states a property the parser's header promises (a span
// inside the record it came from, a sorted list, defaults kept after a
// usage error). A violation is a finding like a crash: abort() under
// libFuzzer, a test failure naming the corpus file on replay.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#ifdef TRACEKIT_FUZZ_REPLAY

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace tracekit::fuzz {

// Runs one(data, size) on every file of the target's corpus directory, each
// in a heap buffer of exactly its size.
inline void replay(const char* name, void (*one)(const uint8_t*, size_t)) {
  const char* env = std::getenv("TRACEKIT_FUZZ_CORPUS");
  std::filesystem::path dir = std::filesystem::path(env ? env : "tests/fuzz/corpus") / name;
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_regular_file()) files.push_back(e.path());
  ASSERT_FALSE(files.empty()) << "no corpus in " << dir << " (run from the repository root)";
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    std::ifstream in(f, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto* buf = new uint8_t[bytes.size() + 1];  // +1: never new[0]
    std::memcpy(buf, bytes.data(), bytes.size());
    one(buf, bytes.size());
    delete[] buf;
  }
}

}  // namespace tracekit::fuzz

#define TRACEKIT_FUZZ_TARGET(name)                                                      \
  static void tracekit_fuzz_one(const uint8_t* data, size_t size);                      \
  TEST(FuzzCorpus, name) { ::tracekit::fuzz::replay(#name, tracekit_fuzz_one); }        \
  static void tracekit_fuzz_one(const uint8_t* data, size_t size)

#define FUZZ_CHECK(cond) \
  ((cond) ? (void)0 : (void)(ADD_FAILURE() << "fuzz property violated: " #cond))

#else  // libFuzzer

#include <cstdio>
#include <cstdlib>

#define TRACEKIT_FUZZ_TARGET(name)                                                    \
  static void tracekit_fuzz_one(const uint8_t* data, size_t size);                    \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {           \
    tracekit_fuzz_one(data, size);                                                    \
    return 0;                                                                         \
  }                                                                                   \
  static void tracekit_fuzz_one(const uint8_t* data, size_t size)

#define FUZZ_CHECK(cond)                                                                    \
  ((cond) ? (void)0                                                                         \
          : (std::fprintf(stderr, "%s:%d: fuzz property violated: %s\n", __FILE__, __LINE__, \
                          #cond),                                                           \
             std::abort()))

#endif

namespace tracekit::fuzz {

// Takes an input apart front to back. Past the end, numbers read as zero and
// byte runs come back short, so every input is usable.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : p_(data), n_(size) {}

  template <class T>
  T take() {
    T v{};
    size_t k = std::min(sizeof v, n_);
    if (k > 0) std::memcpy(&v, p_, k);
    p_ += k;
    n_ -= k;
    return v;
  }
  std::span<const uint8_t> bytes(size_t n) {
    n = std::min(n, n_);
    std::span<const uint8_t> out(p_, n);
    p_ += n;
    n_ -= n;
    return out;
  }
  std::span<const uint8_t> rest() { return bytes(n_); }
  std::string_view text() {
    auto b = rest();
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }
  // The text up to the next NUL (which is consumed), or all that is left.
  std::string_view until_nul() {
    const void* z = n_ ? std::memchr(p_, 0, n_) : nullptr;
    size_t len = z ? static_cast<size_t>(static_cast<const uint8_t*>(z) - p_) : n_;
    std::string_view s(reinterpret_cast<const char*>(p_), len);
    p_ += len;
    n_ -= len;
    if (z) {
      ++p_;
      --n_;
    }
    return s;
  }
  size_t left() const { return n_; }

 private:
  const uint8_t* p_;
  size_t n_;
};

// A copy of bytes in a heap block of exactly their size, so that a read past
// the end is a read past the block (AddressSanitizer sees it).
inline std::vector<uint8_t> exact_copy(std::span<const uint8_t> b) {
  return std::vector<uint8_t>(b.begin(), b.end());
}

// Whether inner lies within outer (an empty inner always does).
template <class A, class B>
bool within(std::span<A> inner, std::span<B> outer) {
  if (inner.empty()) return true;
  auto* i = reinterpret_cast<const uint8_t*>(inner.data());
  auto* o = reinterpret_cast<const uint8_t*>(outer.data());
  return i >= o && i + inner.size_bytes() <= o + outer.size_bytes();
}
inline bool within(std::string_view inner, std::span<const uint8_t> outer) {
  return within(std::span<const char>(inner.data(), inner.size()), outer);
}

}  // namespace tracekit::fuzz

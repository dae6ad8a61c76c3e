// ftrace/decode.hpp Decoder: raw sub-buffers from trace_pipe_raw (page
// header, then records walked by libtraceevent's kbuffer), their events
// paired with the kernel_stack and user_stack records that follow them on
// the same CPU.
// The formats and symbols are the recorded ones of tests/fixtures/ftrace
// (TRACEKIT_FIXTURES overrides tests/fixtures; run from the repository
// root). Input: a flags byte (bit 0: pair kernel stacks, bit 1: strip
// tracing frames by symbol, bit 2: pair user stacks), then pages, each a CPU byte (0-3), a length (u16) and
// that many bytes. Each page sits in a block of its exact size that is freed
// after it is decoded, as the reader reuses its buffer: an event handed out
// later that still pointed into it would be a use after free.
#include <cstdlib>
#include <sstream>
#include <string>

#include "ftrace/decode.hpp"
#include "fuzz.hpp"
#include "symbols/kallsyms.hpp"
#include "util/strings.hpp"

using namespace tracekit;

namespace {

std::string fixture(const std::string& name) {
  const char* dir = std::getenv("TRACEKIT_FIXTURES");
  std::string path = std::string(dir ? dir : "tests/fixtures") + "/ftrace/" + name;
  auto text = read_file(path);
  if (!text) {
    std::fprintf(stderr, "ftrace_decode_fuzz: %s (run from the repository root)\n",
                 text.error().str().c_str());
    std::abort();
  }
  return *text;
}

struct Fixture {
  ftrace::TepPtr tep;
  symbols::KernelSymbols syms;
  Fixture() {
    auto t = ftrace::tep_from_formats(fixture("header_page"),
                                      {{"ftrace", fixture("kernel_stack.format")},
                                       {"ftrace", fixture("user_stack.format")},
                                       {"syscalls", fixture("sys_enter_getppid.format")},
                                       {"syscalls", fixture("sys_exit_getppid.format")}});
    if (!t) std::abort();
    tep = std::move(*t);
    std::istringstream in(fixture("kallsyms"));
    syms = symbols::KernelSymbols::parse(in);
  }
};

const Fixture& fixtures() {
  static const Fixture f;
  return f;
}

}  // namespace

TRACEKIT_FUZZ_TARGET(ftrace_decode) {
  const Fixture& fx = fixtures();
  fuzz::Input in(data, size);
  auto flags = in.take<uint8_t>();
  bool pair = flags & 1, pair_user = flags & 4;
  auto d = ftrace::Decoder::create(fx.tep.get(), ftrace::StackKinds{pair, pair_user},
                                   (flags & 2) ? &fx.syms : nullptr);
  FUZZ_CHECK(d.ok());
  if (!d) return;

  int page_cpu = -1;
  uint64_t sum = 0, handed = 0, seen = 0;
  auto fn = [&](const ftrace::Event& e) {
    ++seen;
    FUZZ_CHECK(page_cpu < 0 || e.cpu == page_cpu);
    FUZZ_CHECK(!e.data.empty());
    FUZZ_CHECK(e.has_stack || e.stack.empty());
    FUZZ_CHECK(e.has_user_stack || e.user_stack.empty());
    FUZZ_CHECK(e.user_stack.size() <= 8);
    if (!pair) FUZZ_CHECK(!e.has_stack);
    if (!pair_user) FUZZ_CHECK(!e.has_user_stack);
    for (uint8_t b : e.data) sum += b;  // every byte still readable
    for (uint8_t b : e.stack_record) sum += b;
    for (uint8_t b : e.user_stack_record) sum += b;
    for (uint64_t f : e.stack) sum += f;
    for (uint64_t f : e.user_stack) sum += f;
  };
  while (in.left() > 0) {
    page_cpu = in.take<uint8_t>() % 4;
    auto len = in.take<uint16_t>();
    auto block = fuzz::exact_copy(in.bytes(len));
    handed += d->decode_page(page_cpu, block, fn);
  }
  page_cpu = -1;
  handed += d->finish(fn);
  FUZZ_CHECK(handed == seen);
  FUZZ_CHECK(pair || pair_user || d->unpaired() == 0);
  (void)sum;
}

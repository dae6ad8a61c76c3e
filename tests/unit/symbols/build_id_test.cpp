#include "symbols/build_id.hpp"

#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace tracekit::symbols {
namespace {

// One ELF note: header, name padded to 4, desc padded to 4 (unless unpadded).
std::string note(uint32_t type, std::string_view name, std::string_view desc, bool pad = true) {
  Elf64_Nhdr n{static_cast<uint32_t>(name.size()), static_cast<uint32_t>(desc.size()), type};
  std::string out(reinterpret_cast<const char*>(&n), sizeof n);
  out.append(name);
  out.resize((out.size() + 3) & ~size_t{3}, '\0');
  out.append(desc);
  if (pad) out.resize((out.size() + 3) & ~size_t{3}, '\0');
  return out;
}

const std::string kGnu("GNU\0", 4);
const std::string kId("\x01\x23\x45\x67\x89\xab\xcd\xef\x00\xff", 10);

TEST(SymbolsBuildIdTest, HexString) {
  const uint8_t bytes[] = {0x00, 0x0f, 0xa0, 0xff};
  EXPECT_EQ(hex_string(bytes), "000fa0ff");
  EXPECT_EQ(hex_string({}), "");
}

TEST(SymbolsBuildIdTest, FindsTheGnuBuildIdNote) {
  struct Case {
    const char* name;
    std::string notes;
    std::string want;
  } cases[] = {
      {"alone", note(NT_GNU_BUILD_ID, kGnu, kId), "0123456789abcdef00ff"},
      {"after others",
       note(1, std::string("Xen\0", 4), "abc") + note(NT_GNU_BUILD_ID + 1, kGnu, "zz") +
           note(NT_GNU_BUILD_ID, kGnu, kId),
       "0123456789abcdef00ff"},
      {"last note unpadded", note(1, kGnu, "q") + note(NT_GNU_BUILD_ID, kGnu, "\x01\x02\x03", false),
       "010203"},
      {"another owner's type 3", note(NT_GNU_BUILD_ID, std::string("Linux\0", 6), kId), ""},
      {"empty", "", ""},
      {"cut header", note(NT_GNU_BUILD_ID, kGnu, kId).substr(0, 8), ""},
      {"cut desc", note(NT_GNU_BUILD_ID, kGnu, kId).substr(0, 20), ""},
      {"huge sizes", std::string("\xff\xff\xff\xff\xff\xff\xff\xff\x03\0\0\0", 12), ""},
  };
  for (const Case& c : cases) EXPECT_EQ(gnu_build_id(c.notes), c.want) << c.name;
}

TEST(SymbolsBuildIdTest, KernelModulesThatDoNotExistHaveNone) {
  EXPECT_EQ(kernel_build_id("no_such_module_here"), "");
  EXPECT_EQ(kernel_build_id("../kernel"), "");
  // The running kernel's, where /sys shows it: 40 hex digits (SHA-1), or
  // nothing on a kernel built without.
  std::string k = kernel_build_id();
  if (!k.empty()) {
    EXPECT_EQ(k.size(), 40u);
    EXPECT_EQ(k.find_first_not_of("0123456789abcdef"), std::string::npos);
  }
}

}  // namespace
}  // namespace tracekit::symbols

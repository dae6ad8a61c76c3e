#include "symbols/build_id.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>

#include "util/strings.hpp"

namespace tracekit::symbols {

std::string hex_string(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xf]);
  }
  return out;
}

std::string gnu_build_id(std::string_view notes) {
  auto align4 = [](size_t n) { return (n + 3) & ~size_t{3}; };
  while (notes.size() >= sizeof(Elf64_Nhdr)) {
    Elf64_Nhdr n;  // the same 3 x 4 bytes in 32- and 64-bit files
    std::memcpy(&n, notes.data(), sizeof n);
    size_t name_at = sizeof n;
    size_t desc_at = name_at + align4(n.n_namesz);
    size_t next = desc_at + align4(n.n_descsz);
    // The sizes are 32-bit: their sums cannot overflow a 64-bit size_t. The
    // last note's padding may be missing.
    if (desc_at + n.n_descsz > notes.size()) return "";
    if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 &&
        notes.substr(name_at, 4) == std::string_view("GNU\0", 4) && n.n_descsz > 0) {
      auto desc = reinterpret_cast<const uint8_t*>(notes.data() + desc_at);
      return hex_string(std::span<const uint8_t>(desc, n.n_descsz));
    }
    notes.remove_prefix(std::min(next, notes.size()));
  }
  return "";
}

std::string kernel_build_id(std::string_view module) {
  std::string path = module.empty() ? std::string("/sys/kernel/notes")
                                    : "/sys/module/" + std::string(module) +
                                          "/notes/.note.gnu.build-id";
  // A module name from kallsyms never holds a '/', but make sure.
  if (module.find('/') != std::string_view::npos || module.starts_with(".")) return "";
  auto text = read_file(path);
  return text ? gnu_build_id(*text) : "";
}

}  // namespace tracekit::symbols

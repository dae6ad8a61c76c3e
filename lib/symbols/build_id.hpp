// GNU build-ids (NT_GNU_BUILD_ID notes): what pprof and debuginfod know a
// binary by. Parsing does no I/O; kernel_build_id() reads /sys.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tracekit::symbols {

// Bytes as lower-case hex, as build-ids are written ("" for none).
std::string hex_string(std::span<const uint8_t> bytes);

// The build-id in a block of ELF notes (a PT_NOTE segment or SHT_NOTE
// section, native byte order, 4-byte aligned), as hex; "" when it has none
// or is malformed.
std::string gnu_build_id(std::string_view notes);

// The running kernel's build-id ("" for vmlinux: /sys/kernel/notes) or a
// loaded module's (/sys/module/NAME/notes/.note.gnu.build-id), as hex; ""
// when it cannot be read (no such module, no build-id, not permitted).
std::string kernel_build_id(std::string_view module = "");

}  // namespace tracekit::symbols

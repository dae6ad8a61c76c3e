// bitesize: a histogram of block I/O request sizes, counted in the kernel
// (perf-tools' bitesize). One perf counter per bucket on the
// block:block_rq_issue tracepoint, each with a filter on the request's size
// ("nr_sector >= 16 && nr_sector < 128"): the kernel counts the requests
// that pass, no ring buffer, no record per I/O; the counters are read once
// at the end.
//
// Sizes as perf-tools counts them: bucket edges are Kbytes, turned into
// 512-byte sectors (an edge of 8 is nr_sector 16), and a request falls in
// [edge, next edge). nr_sector is the field every kernel fills for file
// system I/O; `bytes` held only SCSI pass-through sizes before Linux 4.11
// (0 for everything else). Requests without sectors (flushes, pass-through
// commands) have nr_sector 0: they count below the first edge, as in
// perf-tools. A kernel whose event has no nr_sector (none known) is counted
// on `bytes`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"
#include "session/entry.hpp"

namespace tracekit::tracefs {
class EventFormat;
}

namespace tracekit::bitesize {

inline constexpr std::string_view kSystem = "block";
inline constexpr std::string_view kEvent = "block_rq_issue";

struct Options {
  std::vector<double> buckets{1, 8, 64, 128};  // -b, edges in Kbytes
  std::optional<std::string> device;           // -d, as given
  std::optional<double> duration;              // seconds
};

// "1,8,64" or "1 8 64" (perf-tools' form) -> edges in Kbytes. Error: an edge
// that is not a positive number of whole 512-byte sectors (a multiple of
// 0.5), or a list that does not increase. Pure.
Result<std::vector<double>> parse_buckets(std::string_view text);

// The size field of the event and the bytes in one of its units.
struct SizeField {
  std::string name;   // "nr_sector" or "bytes"
  unsigned unit = 0;  // 512 or 1
};

// nr_sector where the event has it, else bytes. Error: neither.
Result<SizeField> size_field(const tracefs::EventFormat& event);

// One filter per bucket, below the first edge first: "nr_sector < 2",
// "nr_sector >= 2 && nr_sector < 16", ..., "nr_sector >= 256"; each joined
// with also ("dev == 7340035") when that is not empty. Pure.
std::vector<std::string> bucket_filters(const SizeField& field, const std::vector<double>& edges_kb,
                                        const std::string& also = "");

// The kernel's number for a block device, as the tracepoint's dev field
// holds it (major << 20 | minor), from "MAJOR,MINOR" or "MAJOR:MINOR" (pure
// for these), or a device node ("sda1" in /dev, or a path). Error: not a
// block device, or no such node.
Result<uint32_t> device_number(const std::string& device);

// What -d selects: requests are issued to whole disks (the tracepoint's dev
// is the disk's), so a partition is its disk's requests in its sectors.
struct DeviceSelection {
  uint32_t dev = 0;      // the disk's number
  uint64_t first = 0;    // a partition's first sector,
  uint64_t sectors = 0;  // and its size (0: the whole disk)
};

// The selection for a device (as device_number takes it), the partition
// found from sysfs (<sysfs>/dev/block/M:m/partition, start, size, and the
// disk's ../dev). Error: as device_number, or an unreadable sysfs file.
Result<DeviceSelection> select_device(const std::string& device, const std::string& sysfs = "/sys");

// "dev == N", and for a partition "dev == N && sector >= S && sector < E".
// Pure.
std::string device_filter(const DeviceSelection& d);

// "Tracing block I/O size (bytes), for 10 seconds...\n" (perf-tools' words;
// " until Ctrl-C" without a duration, " of DEVICE" with -d). Pure.
std::string header_line(const Options& o);

// Sets the run up (session/entry.hpp): the counters open, one per bucket.
session::Outcome set_up(const Options& o);

}  // namespace tracekit::bitesize

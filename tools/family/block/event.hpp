// Block request events (block:block_rq_insert, _issue, _requeue, _complete)
// decoded from raw records by field name, so that every kernel's layout
// reads: `cmd` is empty since 4.11, `errors` became `error` in 4.12, `bytes`
// and `comm` are absent from completions. Device names as iosnoop's -d takes
// them ("202,1", "loop0", "/dev/loop0") become the tracepoints' dev_t
// encoding (major << 20 | minor).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tracefs/event_format.hpp"
#include "util/result.hpp"

namespace tracekit::block {

enum class Kind { kInsert, kIssue, kRequeue, kComplete };

// The tracepoint of each kind ("block_rq_issue", ...).
const char* event_name(Kind k);

struct Event {
  Kind kind = Kind::kIssue;
  uint64_t ts = 0;   // ns, the ring buffer's clock
  uint32_t dev = 0;  // the kernel's dev_t: major << 20 | minor
  uint64_t sector = 0;
  uint32_t nr_sector = 0;
  uint32_t bytes = 0;  // insert/issue only (0 where the kernel has no such field)
  std::string rwbs;    // "R", "WS", "FF", ...
  int pid = 0;         // common_pid: the task on CPU
  std::string comm;    // insert/issue: the task's name, "" where absent
};

// "MAJOR,MINOR" of a dev_t in the tracepoints' encoding.
std::string device_text(uint32_t dev);

// A device as -d takes it: "MAJOR,MINOR", a block device name from
// /sys/class/block ("loop0", "vda1") or a path to a block device node. sys
// is where /sys is (tests point it elsewhere). Error: not a number pair, no
// such device (hint: lsblk), not a block device.
Result<uint32_t> parse_device(const std::string& text, const std::string& sys = "/sys");

// Error where the disk of dev (a partition's disk) takes bios rather than
// requests: no <sys>/dev/block/M:m/mq and "none" in queue/scheduler (a
// request queue has blk-mq's mq/ or an elevator). The block_rq_*
// tracepoints never fire for such a disk; its I/O shows only as
// block:block_bio_queue. Measured on 3.10, whose NVMe driver is bio-based
// (blk-mq NVMe came in 3.19): iosnoop and iolatency printed nothing,
// bitesize zeros. Unknown (sysfs unreadable): no error. name: as -d named it.
Status check_request_queue(uint32_t dev, const std::string& name, const std::string& sys = "/sys");

// The dev_t encoding of a "MAJOR:MINOR" line as /sys/class/block/X/dev holds.
std::optional<uint32_t> parse_major_minor(std::string_view text, char sep);

class Decoder {
 public:
  // Formats of the kinds wanted; fails when one lacks dev, sector,
  // nr_sector or rwbs (the message names the event and the field).
  static Result<Decoder> make(std::vector<std::pair<Kind, tracefs::EventFormat>> formats);

  Decoder(Decoder&&) noexcept = default;
  Decoder& operator=(Decoder&&) noexcept = default;

  // The event of a raw record of one of the formats (by its id); nullopt
  // for other ids or a short record.
  std::optional<Event> decode(int id, uint64_t ts, int pid, std::span<const uint8_t> raw) const;

 private:
  struct Format {
    Kind kind;
    tracefs::EventFormat fmt;
    const tep_format_field *dev, *sector, *nr_sector, *rwbs, *bytes, *comm;
  };
  Decoder() = default;
  std::vector<Format> formats_;
};

}  // namespace tracekit::block

#include "family/block/event.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <fstream>

namespace tracekit::block {

namespace {

constexpr uint32_t kMinorBits = 20;
constexpr uint32_t kMinorMask = (1u << kMinorBits) - 1;

std::optional<uint32_t> number(std::string_view s) {
  uint32_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

const char* event_name(Kind k) {
  switch (k) {
    case Kind::kInsert:
      return "block_rq_insert";
    case Kind::kIssue:
      return "block_rq_issue";
    case Kind::kRequeue:
      return "block_rq_requeue";
    case Kind::kComplete:
      return "block_rq_complete";
  }
  return "";
}

std::string device_text(uint32_t dev) {
  return std::to_string(dev >> kMinorBits) + "," + std::to_string(dev & kMinorMask);
}

std::optional<uint32_t> parse_major_minor(std::string_view text, char sep) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  auto at = text.find(sep);
  if (at == std::string_view::npos) return std::nullopt;
  auto major = number(text.substr(0, at)), minor = number(text.substr(at + 1));
  if (!major || !minor || *major >= (1u << 12) || *minor > kMinorMask) return std::nullopt;
  return *major << kMinorBits | *minor;
}

Result<uint32_t> parse_device(const std::string& text, const std::string& sys) {
  if (text.find(',') != std::string::npos) {
    if (auto d = parse_major_minor(text, ',')) {
      // A number no device has would trace nothing, quietly: the kernel
      // lists each block device in sys/dev/block/MAJOR:MINOR.
      const std::string path = sys + "/dev/block/" + std::to_string(*d >> kMinorBits) + ":" +
                               std::to_string(*d & kMinorMask);
      if (::access(path.c_str(), F_OK) != 0)
        return Error{ENODEV, "no block device " + text, path,
                     "see lsblk for the devices' MAJ:MIN"};
      return *d;
    }
    return Error{
        EINVAL, "invalid device \"" + text + "\"", {}, "give MAJOR,MINOR (e.g. 202,1) or a name"};
  }
  if (text.find('/') != std::string::npos) {
    struct stat st {};
    if (::stat(text.c_str(), &st) != 0) return Error::from_errno("cannot find device", text);
    if (!S_ISBLK(st.st_mode))
      return Error{ENOTBLK, "not a block device", text, "see lsblk for block devices"};
    return major(st.st_rdev) << kMinorBits | minor(st.st_rdev);
  }
  const std::string path = sys + "/class/block/" + text + "/dev";
  std::ifstream in(path);
  std::string line;
  if (text.empty() || text.find("..") != std::string::npos || !std::getline(in, line))
    return Error{ENODEV, "no block device named \"" + text + "\"", path,
                 "see lsblk, or give MAJOR,MINOR"};
  if (auto d = parse_major_minor(line, ':')) return *d;
  return Error{EINVAL, "cannot read the device number", path, {}};
}

Result<Decoder> Decoder::make(std::vector<std::pair<Kind, tracefs::EventFormat>> formats) {
  Decoder d;
  for (auto& [kind, fmt] : formats) {
    Format f{kind, std::move(fmt), nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
    f.dev = f.fmt.field("dev");
    f.sector = f.fmt.field("sector");
    f.nr_sector = f.fmt.field("nr_sector");
    f.rwbs = f.fmt.field("rwbs");
    f.bytes = f.fmt.field("bytes");
    f.comm = f.fmt.field("comm");
    for (auto [field, name] : {std::pair{f.dev, "dev"},
                               {f.sector, "sector"},
                               {f.nr_sector, "nr_sector"},
                               {f.rwbs, "rwbs"}})
      if (!field)
        return Error{ENOENT,
                     std::string("block:") + event_name(kind) + " has no field " + name,
                     {},
                     "this kernel's block tracepoints are not the known ones"};
    d.formats_.push_back(std::move(f));
  }
  return d;
}

std::optional<Event> Decoder::decode(int id, uint64_t ts, int pid,
                                     std::span<const uint8_t> raw) const {
  for (const auto& f : formats_) {
    if (f.fmt.id() != id) continue;
    auto dev = f.fmt.number(f.dev, raw), sector = f.fmt.number(f.sector, raw),
         nr = f.fmt.number(f.nr_sector, raw);
    if (!dev || !sector || !nr) return std::nullopt;
    Event e;
    e.kind = f.kind;
    e.ts = ts;
    e.pid = pid;
    e.dev = static_cast<uint32_t>(*dev);
    e.sector = *sector;
    e.nr_sector = static_cast<uint32_t>(*nr);
    e.rwbs = f.fmt.string(f.rwbs, raw);
    if (f.bytes)
      if (auto b = f.fmt.number(f.bytes, raw)) e.bytes = static_cast<uint32_t>(*b);
    if (f.comm) e.comm = f.fmt.string(f.comm, raw);
    return e;
  }
  return std::nullopt;
}

Status check_request_queue(uint32_t dev, const std::string& name, const std::string& sys) {
  std::string dir = sys + "/dev/block/" + std::to_string(dev >> 20) + ":" +
                    std::to_string(dev & ((1u << 20) - 1));
  if (::access((dir + "/partition").c_str(), F_OK) == 0) dir += "/..";
  if (::access((dir + "/mq").c_str(), F_OK) == 0) return {};
  std::ifstream in(dir + "/queue/scheduler");
  std::string line;
  if (!in || !std::getline(in, line) || line != "none") return {};
  return Error{0,
               name + " takes bios, not requests (no mq and no I/O scheduler in " + dir +
                   "): the block_rq_* tracepoints never fire for its I/O",
               {},
               "its I/O shows only as block:block_bio_queue (tpoint); request-based disks: "
               "NVMe from Linux 3.19 (blk-mq), SCSI and SATA disks, virtio-blk"};
}

}  // namespace tracekit::block

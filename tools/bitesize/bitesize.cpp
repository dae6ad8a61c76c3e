#include "bitesize/bitesize.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "bitesize/render.hpp"
#include "cli/command.hpp"
#include "family/block/event.hpp"
#include "perf/bucket_counters.hpp"
#include "session/bucket_histogram.hpp"
#include "tracefs/event_format.hpp"
#include "util/strings.hpp"

namespace tracekit::bitesize {

namespace {

constexpr unsigned kSector = 512;

// An edge in whole sectors (edges are checked to be whole when parsed).
uint64_t sectors(double kb) { return static_cast<uint64_t>(std::llround(kb * 2)); }

}  // namespace

Result<std::vector<double>> parse_buckets(std::string_view text) {
  std::vector<double> edges;
  std::string list(text);
  for (char& c : list)
    if (c == ' ' || c == '\t') c = ',';
  for (auto field : split(list, ',')) {
    if (field.empty()) continue;
    const std::string s(field);
    double kb = 0;
    char* end = nullptr;
    errno = 0;
    kb = std::strtod(s.c_str(), &end);
    if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(kb) || kb <= 0 ||
        kb > 4.0 * 1024 * 1024 * 1024 || kb * 2 != std::floor(kb * 2))
      return Error{
          EINVAL,
          "invalid bucket '" + s + "': edges are Kbytes of whole 512-byte sectors (1, 8, 0.5, 2.5)",
          {},
          {}};
    if (!edges.empty() && sectors(kb) <= sectors(edges.back()))
      return Error{EINVAL, "bucket list must increase in size", {}, {}};
    edges.push_back(kb);
  }
  if (edges.empty()) return Error{EINVAL, "no bucket edges in '" + std::string(text) + "'", {}, {}};
  return edges;
}

Result<SizeField> size_field(const tracefs::EventFormat& event) {
  if (event.field("nr_sector")) return SizeField{"nr_sector", kSector};
  if (event.field("bytes")) return SizeField{"bytes", 1};
  return Error{
      ENOENT, "block:block_rq_issue has neither nr_sector nor bytes", {}, "see its format file"};
}

std::vector<std::string> bucket_filters(const SizeField& field, const std::vector<double>& edges_kb,
                                        const std::string& also) {
  std::vector<int64_t> edges;
  for (double kb : edges_kb)
    edges.push_back(static_cast<int64_t>(sectors(kb) * kSector / field.unit));
  return perf::bucket_filters(field.name, edges, also);
}

Result<uint32_t> device_number(const std::string& device) {
  const auto sep = device.find_first_of(",:");
  if (sep != std::string::npos) {
    auto major = parse_int<uint32_t>(std::string_view(device).substr(0, sep));
    auto minor = parse_int<uint32_t>(std::string_view(device).substr(sep + 1));
    if (!major || !minor || *major >= (1u << 12) || *minor >= (1u << 20))
      return Error{EINVAL,
                   "invalid device '" + device + "'",
                   {},
                   "MAJOR,MINOR as in /proc/partitions, or a name in /dev"};
    return (*major << 20) | *minor;
  }
  const std::string path = device.find('/') == std::string::npos ? "/dev/" + device : device;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Error::from_errno("no such block device", path, "see /proc/partitions");
  if (!S_ISBLK(st.st_mode))
    return Error{ENOTBLK, "not a block device", path, "see /proc/partitions"};
  return (static_cast<uint32_t>(major(st.st_rdev)) << 20) |
         static_cast<uint32_t>(minor(st.st_rdev));
}

namespace {

// A sysfs number file ("2048\n").
Result<uint64_t> read_number(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  auto n = parse_int<uint64_t>(trim(*text));
  if (!n) return Error{EINVAL, "not a number", path, {}};
  return *n;
}

}  // namespace

Result<DeviceSelection> select_device(const std::string& device, const std::string& sysfs) {
  auto dev = device_number(device);
  if (!dev) return dev.error();
  DeviceSelection d;
  d.dev = *dev;
  const std::string dir = sysfs + "/dev/block/" + std::to_string(*dev >> 20) + ":" +
                          std::to_string(*dev & ((1u << 20) - 1));
  if (::access((dir + "/partition").c_str(), F_OK) != 0) return d;
  auto first = read_number(dir + "/start");
  if (!first) return first.error();
  auto size = read_number(dir + "/size");
  if (!size) return size.error();
  auto disk = read_file(dir + "/../dev");
  if (!disk) return disk.error();
  auto whole = device_number(std::string(trim(*disk)));
  if (!whole) return whole.error();
  d.dev = *whole;
  d.first = *first;
  d.sectors = *size;
  return d;
}

std::string device_filter(const DeviceSelection& d) {
  std::string f = "dev == " + std::to_string(d.dev);
  if (d.sectors)
    f += " && sector >= " + std::to_string(d.first) + " && sector < " +
         std::to_string(d.first + d.sectors);
  return f;
}

std::string header_line(const Options& o) {
  std::ostringstream h;
  h << "Tracing block I/O size (bytes)";
  if (o.device) h << " of " << *o.device;
  h << session::histogram_header_end(o.duration);
  return h.str();
}

session::Outcome set_up(const Options& o) {
  std::string also;
  if (o.device) {
    auto dev = select_device(*o.device);
    if (!dev) return dev.error();
    if (auto st = block::check_request_queue(dev->dev, *o.device); !st) return st.error();
    also = device_filter(*dev);
  }
  auto event =
      session::counted_event(std::string(kSystem), std::string(kEvent),
                             "CONFIG_BLOCK with CONFIG_EVENT_TRACING brings the block tracepoints");
  if (!event) return event.error();
  auto field = size_field(*event);
  if (!field) return field.error();
  auto counters = perf::BucketCounters::open(event->id(), bucket_filters(*field, o.buckets, also));
  if (!counters) return counters.error();
  return session::histogram_run(
      "bitesize", std::move(*counters),
      [buckets = o.buckets](const std::vector<uint64_t>& counts) {
        return output::bitesize_histogram(buckets, counts);
      },
      header_line(o), o.duration);
}

}  // namespace tracekit::bitesize

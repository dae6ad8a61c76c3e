// Writes the seed corpora of the perf fuzz targets from real records of
// this kernel (root): a cpu-clock event with callchains, the side-band
// records ProcessEvents asks for (COMM, FORK, EXIT, MMAP2, with sample_id_all)
// and context switches, and a sched:sched_switch tracepoint with
// PERF_SAMPLE_RAW, all on CPU 0 while this process, pinned there, forks
// children that exec /bin/true. Each ring is mmap'ed here (not through
// perf::Ring) so that the data area itself can be saved.
//   perf_record/     sample_type, flags byte 0, one record
//   perf_ring/       data_tail, data_head - data_tail (u32), the data area
//   process_events/  sample_type, flags byte 1 (sample_id_all), records
//   event_format/    sched_switch's format text, NUL, a RAW payload
// Built and run by `make fuzz-corpus` (with tests/fuzz/make-corpus.sh):
//   build/fuzz/make-perf-corpus [CORPUS_DIR]   (default tests/fuzz/corpus)
#include <linux/perf_event.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "perf/event.hpp"
#include "perf/process_events.hpp"
#include "perf/sample.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/strings.hpp"

using namespace tracekit;

namespace {

std::string g_dir = "tests/fuzz/corpus";

void write_seed(const std::string& target, const std::string& name,
                const std::vector<uint8_t>& bytes) {
  std::filesystem::create_directories(g_dir + "/" + target);
  std::ofstream out(g_dir + "/" + target + "/" + name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

template <class T>
void put(std::vector<uint8_t>& v, T x) {
  auto* p = reinterpret_cast<const uint8_t*>(&x);
  v.insert(v.end(), p, p + sizeof x);
}

// One event on CPU 0 and its ring of 2^k data pages, mapped here.
struct Mapped {
  perf::Fd fd;
  void* base = nullptr;
  size_t size = 0, page = 0;

  perf_event_mmap_page* control() const { return static_cast<perf_event_mmap_page*>(base); }
  const uint8_t* data() const { return static_cast<const uint8_t*>(base) + page; }
  uint64_t data_size() const { return size - page; }
  ~Mapped() {
    if (base) munmap(base, size);
  }
};

bool open_mapped(Mapped& m, perf_event_attr attr, size_t pages) {
  auto fd = perf::open_event(attr, -1, 0);
  if (!fd) {
    std::fprintf(stderr, "make-perf-corpus: %s\n", fd.error().str().c_str());
    return false;
  }
  m.fd = std::move(*fd);
  m.page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  m.size = (1 + pages) * m.page;
  m.base = mmap(nullptr, m.size, PROT_READ | PROT_WRITE, MAP_SHARED, m.fd.get(), 0);
  if (m.base == MAP_FAILED) {
    m.base = nullptr;
    std::perror("make-perf-corpus: mmap");
    return false;
  }
  return true;
}

// The records available in the ring, in order, each copied out whole.
std::vector<std::vector<uint8_t>> records(const Mapped& m) {
  std::vector<std::vector<uint8_t>> out;
  uint64_t head = __atomic_load_n(&m.control()->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = m.control()->data_tail, mask = m.data_size() - 1;
  while (tail < head) {
    perf_event_header h;
    for (size_t i = 0; i < sizeof h; ++i)
      reinterpret_cast<uint8_t*>(&h)[i] = m.data()[(tail + i) & mask];
    if (h.size < sizeof h) break;
    std::vector<uint8_t> rec(h.size);
    for (size_t i = 0; i < h.size; ++i) rec[i] = m.data()[(tail + i) & mask];
    out.push_back(std::move(rec));
    tail += h.size;
  }
  return out;
}

// The ring as the perf_ring target takes it.
std::vector<uint8_t> ring_image(const Mapped& m) {
  std::vector<uint8_t> v;
  uint64_t head = __atomic_load_n(&m.control()->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = m.control()->data_tail;
  put<uint64_t>(v, tail);
  put<uint32_t>(v, static_cast<uint32_t>(head - tail));
  v.insert(v.end(), m.data(), m.data() + m.data_size());
  return v;
}

void workload() {
  for (int i = 0; i < 4; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/true", "true", static_cast<char*>(nullptr));
      _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    volatile uint64_t x = 0;
    for (int j = 0; j < 20'000'000; ++j) x = x + static_cast<uint64_t>(j);
    usleep(2000);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) g_dir = argv[1];
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) std::perror("make-perf-corpus: affinity");

  // cpu-clock samples with callchains, side-band records and switches.
  perf_event_attr clock{};
  clock.type = PERF_TYPE_SOFTWARE;
  clock.config = PERF_COUNT_SW_CPU_CLOCK;
  clock.freq = 1;
  clock.sample_freq = 999;
  clock.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                      PERF_SAMPLE_CALLCHAIN;
  perf::request_process_events(clock);
  clock.context_switch = 1;
  clock.disabled = 1;

  // sched_switch with RAW, for the event_format and perf_record targets.
  auto tdir = tracefs::tracing_dir();
  if (!tdir) {
    std::fprintf(stderr, "make-perf-corpus: %s\n", tdir.error().str().c_str());
    return 1;
  }
  auto id_text = read_file(*tdir + "/events/sched/sched_switch/id");
  auto format = read_file(*tdir + "/events/sched/sched_switch/format");
  if (!id_text || !format) {
    std::fprintf(stderr, "make-perf-corpus: cannot read sched_switch's id and format\n");
    return 1;
  }
  perf_event_attr tp{};
  tp.type = PERF_TYPE_TRACEPOINT;
  tp.config = parse_int<uint64_t>(trim(*id_text)).value_or(0);
  tp.sample_period = 1;
  tp.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                   PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW;
  tp.disabled = 1;

  Mapped big, small, sw;
  if (!open_mapped(big, clock, 64) || !open_mapped(small, clock, 1) || !open_mapped(sw, tp, 16))
    return 1;
  for (Mapped* m : {&big, &small, &sw}) ioctl(m->fd.get(), PERF_EVENT_IOC_ENABLE, 0);
  workload();
  for (Mapped* m : {&big, &small, &sw}) ioctl(m->fd.get(), PERF_EVENT_IOC_DISABLE, 0);

  // perf_record: a few of each record type, sample_type first.
  auto one = [](uint64_t sample_type, const std::vector<uint8_t>& rec) {
    std::vector<uint8_t> v;
    put<uint64_t>(v, sample_type);
    v.push_back(0);
    v.insert(v.end(), rec.begin(), rec.end());
    return v;
  };
  std::map<uint32_t, int> kept;
  std::map<uint32_t, const char*> names = {
      {PERF_RECORD_SAMPLE, "sample"},          {PERF_RECORD_COMM, "comm"},
      {PERF_RECORD_FORK, "fork"},              {PERF_RECORD_EXIT, "exit"},
      {PERF_RECORD_MMAP2, "mmap2"},            {PERF_RECORD_LOST, "lost"},
      {PERF_RECORD_SWITCH_CPU_WIDE, "switch"}, {PERF_RECORD_MMAP, "mmap"}};
  auto all = records(big);
  std::vector<uint8_t> stream;
  put<uint64_t>(stream, clock.sample_type);
  stream.push_back(1);
  size_t in_stream = 0;
  for (const auto& rec : all) {
    perf_event_header h;
    std::memcpy(&h, rec.data(), sizeof h);
    auto n = names.find(h.type);
    if (n != names.end() && kept[h.type] < 4) {
      write_seed("perf_record", std::string(n->second) + "_" + std::to_string(kept[h.type]++),
                 one(clock.sample_type, rec));
    }
    // process_events: the side-band records in arrival order, in streams of
    // up to 40 records.
    if (h.type != PERF_RECORD_SAMPLE && h.type != PERF_RECORD_SWITCH_CPU_WIDE) {
      stream.insert(stream.end(), rec.begin(), rec.end());
      if (++in_stream % 40 == 0) {
        write_seed("process_events", "stream_" + std::to_string(in_stream / 40), stream);
        stream.resize(9);
      }
    }
  }
  if (stream.size() > 9) write_seed("process_events", "stream_last", stream);

  // The tracepoint's samples: for perf_record, and their RAW payloads after
  // the format text for event_format.
  int raws = 0;
  for (const auto& rec : records(sw)) {
    perf::Sample s;
    if (!perf::decode_sample(tp.sample_type, rec, s) || raws >= 4) continue;
    write_seed("perf_record", "raw_sample_" + std::to_string(raws), one(tp.sample_type, rec));
    std::vector<uint8_t> v(format->begin(), format->end());
    v.push_back(0);
    v.insert(v.end(), s.raw.begin(), s.raw.end());
    write_seed("event_format", "sched_switch_raw_" + std::to_string(raws), v);
    ++raws;
  }

  // perf_ring: the data areas as they are (the small one has wrapped).
  write_seed("perf_ring", "ring_64_pages_start", [&] {
    auto v = ring_image(big);
    // Only the first 16 KiB of records: the data area is cut to a power of
    // two by the target, and seeds should stay small.
    uint32_t ahead;
    std::memcpy(&ahead, v.data() + 8, 4);
    ahead = std::min<uint32_t>(ahead, 16384);
    uint64_t tail = 0;
    std::memcpy(v.data(), &tail, 8);
    std::memcpy(v.data() + 8, &ahead, 4);
    v.resize(12 + 16384);
    return v;
  }());
  write_seed("perf_ring", "ring_1_page_wrapped", ring_image(small));
  std::printf("make-perf-corpus: %zu records, %d raw samples, in %s\n", all.size(), raws,
              g_dir.c_str());
  return 0;
}

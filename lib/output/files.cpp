#include "output/files.hpp"

#include <cstdio>

#include "cli/output.hpp"
#include "output/flamegraph.hpp"
#include "output/json_report.hpp"
#include "output/pprof.hpp"
#include "output/speedscope.hpp"
#include "output/stack_report.hpp"
#include "util/safe_file.hpp"

namespace tracekit::output {

namespace {

std::string human_size(uint64_t bytes) {
  char buf[32];
  if (bytes < 10 * 1024)
    std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
  else if (bytes < 10 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%llu KiB", static_cast<unsigned long long>(bytes / 1024));
  else
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

// The records as the text formats print them: merged by text, biggest last.
std::vector<report::Record> text_records(const report::Report& r, const report::Style& style) {
  std::vector<report::Record> records = r.records;
  merge_same_text(records, r.frames, style);
  sort_by_value(records);
  return records;
}

std::string stacks_note(size_t n) { return std::to_string(n) + (n == 1 ? " stack" : " stacks"); }

}  // namespace

std::string render(std::ostream& out, const report::Report& r, report::Format f) {
  switch (f) {
    case report::Format::kText: {
      auto records = text_records(r, r.style);
      render_multiline(out, records, r.frames, r.style);
      return stacks_note(records.size());
    }
    case report::Format::kFolded: {
      report::Style style = r.style;
      style.addresses = false;  // folded lines never carry addresses
      auto records = text_records(r, style);
      render_folded(out, records, r.frames, style);
      return stacks_note(records.size());
    }
    case report::Format::kPprof:
      // Not merged: pprof keeps each address as a location of its own.
      write_pprof(out, r);
      return stacks_note(r.records.size());
    case report::Format::kSpeedscope:
      write_speedscope(out, r);
      return stacks_note(text_records(r, r.style).size());
    case report::Format::kJson:
      write_json(out, r);
      return stacks_note(text_records(r, r.style).size());
    case report::Format::kSvg: {
      FlameStats st = write_flamegraph(out, r);
      std::string note =
          stacks_note(st.stacks) + ", " + std::to_string(st.frames_drawn) + " frames drawn";
      if (st.frames_pruned > 0)
        note += ", " + std::to_string(st.frames_pruned) + " narrower than 0.1 px left out";
      return note;
    }
  }
  return "";
}

bool write_files(const report::Report& r, const std::vector<report::OutputFile>& files,
                 std::ostream& err) {
  bool ok = true;
  for (const report::OutputFile& file : files) {
    // Root on a shared host: no symlink or FIFO another user planted is
    // followed or opened (util/safe_file.hpp); a regular file is replaced
    // by a fresh one renamed over it, a device or FIFO written in place.
    std::string note;
    uint64_t size = 0;
    bool in_place = false;
    Status done = [&]() -> Status {
      auto w = OutputWriter::open(file.path);
      if (!w) return w.error();
      in_place = w->in_place();
      note = render(w->stream(), r, file.format);
      if (auto s = w->commit(); !s) return s;
      size = w->bytes_written();
      return {};
    }();
    if (!done) {
      err << r.tool << ": cannot write " << file.path << ": "
          << report::why_not_written(done.error(), file.path) << "\n";
      cli::note_output_file_failed();
      ok = false;
      continue;
    }
    err << r.tool << ": wrote " << file.path << " (" << report::format_title(file.format) << ", "
        << note;
    if (!in_place) err << ", " << human_size(size);
    err << ")\n";
  }
  return ok;
}

}  // namespace tracekit::output

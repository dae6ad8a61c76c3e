#include "output/print_report.hpp"

#include "output/files.hpp"
#include "output/stack_report.hpp"

namespace tracekit::output {

void print_stack_report(std::ostream& out, std::ostream& err, const aggregate::StackCounts& counts,
                        symbols::UserSymbols* user_syms, const report::PrintOptions& opts) {
  report::Report r = report::build_report(counts, user_syms, opts, err);
  print_report(out, err, r, opts);
}

void print_report(std::ostream& out, std::ostream& err, report::Report& r, const report::PrintOptions& opts) {
  const bool files = opts.output && !opts.output->files.empty();
  // The -o files render from the report's records as built; without files
  // they are merged in place.
  std::vector<report::Record> copy;
  if (files) copy = r.records;
  std::vector<report::Record>& records = files ? copy : r.records;
  merge_same_text(records, r.frames, opts.style);
  sort_by_value(records);
  if (opts.folded)
    render_folded(out, records, r.frames, opts.style);
  else
    render_multiline(out, records, r.frames, opts.style);
  out.flush();
  if (files) std::vector<report::Record>().swap(copy);

  if (r.totals.missed_stacks > 0)
    err << "WARNING: " << r.totals.missed_stacks
        << " stack traces could not be displayed. Consider increasing --stack-storage-size.\n";
  if (r.totals.dropped > 0)
    err << "WARNING: " << r.totals.dropped << " " << opts.unit
        << " dropped: the key table is full. Consider increasing --hash-storage-size.\n";
  if (files) write_files(r, opts.output->files, err);
}

}  // namespace tracekit::output

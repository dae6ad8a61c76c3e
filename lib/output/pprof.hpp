// A stack report as a pprof profile: profile.proto (output/pprof/
// profile.proto), gzipped, as `go tool pprof` and google/pprof read it.
//
// Sample types by the report's unit:
//   samples (profile):      samples/count, cpu/nanoseconds (samples * period_ns);
//                           period_type cpu/nanoseconds, period period_ns
//   microseconds (offcpu):  off-cpu/nanoseconds (value * 1000)
//   events (stackcount):    events/count
// One sample per record (records are not merged: two addresses in one
// function stay two locations of one function), leaf first: kernel frames,
// then user frames. A location per (mapping, address); a caller's address
// is its return address - 1, inside the call instruction, as pprof expects
// of non-leaf frames and as our symbolizers looked it up. A named frame's
// location has one line naming its function (file: the mapping's path); an
// unnamed one has none, so that pprof can symbolize it from the binary. A
// side whose stack was lost is one location named "[Missed User Stack]" or
// "[Missed Kernel Stack]" (the style's markers). Labels: "pid" (numeric),
// "comm", and "stack": which sides the sample has ("user", "kernel",
// "kernel+user"). The command line and host are comments.
#pragma once

#include <ostream>

#include "report/report.hpp"

namespace tracekit::output {

// Writes r to out as a gzipped profile.proto. Errors are the stream's (out's
// failbit); nothing here fails otherwise.
void write_pprof(std::ostream& out, const report::Report& r);

}  // namespace tracekit::output

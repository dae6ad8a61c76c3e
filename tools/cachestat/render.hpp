// cachestat's table, as perf-tools' cachestat prints it: with -t the time
// of day first, with -D the four raw counts last (accessed, buffer dirty,
// added, dirtied):
//
//   TIME         HITS   MISSES  DIRTIES    RATIO   BUFFERS_MB   CACHE_MB  DEBUG
//   14:02:11     2311       37        4    98.4%            1        419  (2352 4 41 4)
#pragma once

#include <ostream>
#include <string>

#include "cachestat/cachestat.hpp"

namespace tracekit::output {

void cachestat_columns(std::ostream& out, bool timestamp, bool debug);
// time: "HH:MM:SS" with -t, else empty; calls: with -D, else null.
void cachestat_row(std::ostream& out, const std::string& time, const cachestat::Stats& s,
                   const cachestat::Memory& m, const cachestat::Calls* calls);

}  // namespace tracekit::output

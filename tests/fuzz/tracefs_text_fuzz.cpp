// The small parsers of tracefs and /proc text, all fed the same input:
// probe definition lines as dynamic_events/kprobe_events/uprobe_events list
// them and the owner pid in our group names (tracefs/leftovers.hpp), event
// names made from function names (tracefs/dynamic_events.hpp probe_name),
// trigger lines and error_log and per-CPU stats text
// (tracefs/instance.hpp), /proc/mounts (tracefs/tracing_dir.hpp), and the
// prev_state letters of sched_switch's print format (offcpu state_bits).
#include <string>

#include "fuzz.hpp"
#include "offcputime/task_state.hpp"
#include "tracefs/dynamic_events.hpp"
#include "tracefs/instance.hpp"
#include "tracefs/leftovers.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/strings.hpp"

using namespace tracekit;

TRACEKIT_FUZZ_TARGET(tracefs_text) {
  std::string_view text(reinterpret_cast<const char*>(data), size);

  for (auto line : split(text, '\n')) {
    auto p = tracefs::parse_probe_line(line);
    FUZZ_CHECK(p.group.empty() == p.event.empty());
    FUZZ_CHECK(p.group.find('/') == std::string::npos);

    int pid = tracefs::owner_pid(std::string(line));
    FUZZ_CHECK(pid == -1 || pid > 0);
    if (pid > 0) FUZZ_CHECK(line.rfind("tracekit_", 0) == 0);

    std::string cmd = tracefs::trigger_removal(line);
    FUZZ_CHECK(cmd.empty() || cmd[0] == '!');
    FUZZ_CHECK(cmd.find('\n') == std::string::npos);
  }

  std::string name = tracefs::probe_name(text);
  FUZZ_CHECK(!name.empty() && name.size() <= 49);
  FUZZ_CHECK(!(name[0] >= '0' && name[0] <= '9'));
  for (char c : name)
    FUZZ_CHECK((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_');

  std::string err = tracefs::parse_last_error_log(text);
  FUZZ_CHECK(err.find('\n') == std::string::npos);  // one line
  (void)tracefs::parse_dropped_events(text);
  (void)tracefs::find_in_mounts(text);
  (void)offcpu::state_bits(text);
}

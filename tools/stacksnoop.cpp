// stacksnoop: print the kernel stack trace of every event.
#include <cerrno>
#include <csignal>
#include <iostream>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/signals.hpp"
#include "output/snoop.hpp"
#include "probe/spec.hpp"
#include "stacksnoop/stacksnoop.hpp"
#include "tools.hpp"

namespace tracekit::tools {

namespace {

std::optional<int> parse(int argc, char** argv, stacksnoop::Options& o) {
  int pid = 0;
  double secs = 0;
  cli::Command cmd("stacksnoop", "[-h] [-p PID] [-s] [-v] [-d SECS] spec");
  cmd.option("p,pid", &pid, "PID", "trace this PID only (filtered in the kernel)")
      .flag("s,offset", &o.offset, "show address offsets")
      .flag("v,verbose", &o.verbose, "print more fields: COMM, PID, CPU")
      .option("d,duration", &secs, "SECS",
              "buffered: trace SECS seconds into the kernel buffer, then print once")
      .required("spec", &o.spec, "func, p::func, t:cat:event, lib:func (see stackcount)")
      .example("stacksnoop ext4_sync_fs", "print kernel stack traces for ext4_sync_fs")
      .example("stacksnoop -s ext4_sync_fs", "... also show symbol offsets")
      .example("stacksnoop -v ext4_sync_fs", "... show extra columns")
      .example("stacksnoop -p 185 ext4_sync_fs", "... only when PID 185 is on-CPU")
      .example("stacksnoop -d 5 t:block:block_rq_issue", "buffered for 5 seconds, read once");
  if (auto code = cmd.parse(argc, argv)) return code;
  if (cmd.given("pid")) {
    if (pid <= 0) return cmd.usage_error("invalid PID " + std::to_string(pid));
    o.pid = pid;
  }
  auto spec = probe::parse_spec(o.spec);
  if (!spec) return cmd.usage_error(spec.error().str());
  if (auto ok = probe::check_patterns(*spec, false); !ok) return cmd.usage_error(ok.error().str());
  if (cmd.given("duration")) {
    if (!(secs > 0)) return cmd.usage_error("-d needs a positive number of seconds");
    o.buffered_secs = secs;
  }
  return std::nullopt;
}

}  // namespace

int stacksnoop_main(int argc, char** argv) {
  stacksnoop::Options o;
  if (auto code = parse(argc, argv, o)) return *code;

  cli::install_stop_handlers();
  auto snooper = stacksnoop::Snooper::start(o, std::cerr);
  if (!snooper) {
    if (snooper.error().err == EINTR && cli::stop_requested())
      return cli::kExitOk;  // Ctrl-C in setup
    std::cerr << "stacksnoop: " << snooper.error().str() << "\n";
    return cli::kExitFailure;
  }
  // A first stop signal ends the tracing, and what was read is still printed
  // (to a slow reader too: cli::StdoutGuard retries the write it cut short);
  // a closed stdout, a failed write or a second signal ends the printing.
  if (o.buffered_secs) {
    std::cout << "Tracing \"" << o.spec << "\" for " << *o.buffered_secs
              << " seconds (buffered)..." << std::endl;
    cli::Deadline end(o.buffered_secs);
    while (!cli::stop_requested() && !end.expired() && !cli::output_failed())
      cli::sleep_unless_stopped(end.poll_timeout_ms(1000));
    if (cli::stop_signal() == SIGPIPE || cli::output_failed()) return cli::kExitOk;
    output::snoop_header(std::cout, o.verbose);
    snooper->finish(std::cout);
  } else {
    output::snoop_header(std::cout, o.verbose);
    std::cout.flush();
    while (!cli::stop_requested() && !cli::stdout_closed() && !cli::output_failed())
      snooper->poll(250, std::cout);
    // After a failed write, finish() still reads what is left, to count it.
    if (cli::stop_signal() != SIGPIPE && !cli::stdout_closed()) snooper->finish(std::cout);
  }
  // The cause follows from StdoutGuard::finish, except for a closed pipe,
  // which is no error.
  if (uint64_t n = snooper->unprinted(cli::output_written()))
    std::cerr << "stacksnoop: " << n << " of the " << snooper->read() << " events read were not printed"
              << (cli::output_error() == EPIPE ? ": stdout was closed" : "") << ".\n";
  if (uint64_t d = snooper->dropped())
    std::cerr << "WARNING: " << d << " events lost: the kernel buffer was full"
              << (o.buffered_secs ? " (try a shorter -d)" : "") << ".\n";
  return cli::kExitOk;
}

}  // namespace tracekit::tools

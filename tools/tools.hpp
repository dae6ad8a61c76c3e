// Entry points of the tools linked into the multi-call binary. Each
// tools/<tool>.cpp defines one; tools/tracekit.cpp dispatches on argv[0] (or
// on argv[1] after "tracekit").
#pragma once

namespace tracekit::tools {

int profile_main(int argc, char** argv);
int offcputime_main(int argc, char** argv);
int stackcount_main(int argc, char** argv);
int stacksnoop_main(int argc, char** argv);
int tpoint_main(int argc, char** argv);
int kprobe_main(int argc, char** argv);
int uprobe_main(int argc, char** argv);
int opensnoop_main(int argc, char** argv);
int execsnoop_main(int argc, char** argv);
int syscount_main(int argc, char** argv);
int tcpretrans_main(int argc, char** argv);
int iosnoop_main(int argc, char** argv);
int iolatency_main(int argc, char** argv);
int killsnoop_main(int argc, char** argv);
int funccount_main(int argc, char** argv);
int bitesize_main(int argc, char** argv);
int cachestat_main(int argc, char** argv);
int functrace_main(int argc, char** argv);
int funcgraph_main(int argc, char** argv);
int funcslower_main(int argc, char** argv);
int reset_tracing_main(int argc, char** argv);
int features_main(int argc, char** argv);    // tracekit features (no symlink)
int flamegraph_main(int argc, char** argv);  // tracekit flamegraph (no symlink)

}  // namespace tracekit::tools

// Replays tests/fuzz/corpus/perf_map/ through the perf_map fuzz target (see
// tests/fuzz/fuzz.hpp).
#define TRACEKIT_FUZZ_REPLAY
#include "../../fuzz/perf_map_fuzz.cpp"

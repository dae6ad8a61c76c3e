// Replays tests/fuzz/corpus/perf_record/ through the perf_record fuzz target (see
// tests/fuzz/fuzz.hpp).
#define TRACEKIT_FUZZ_REPLAY
#include "../../fuzz/perf_record_fuzz.cpp"

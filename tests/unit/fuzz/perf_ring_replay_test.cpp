// Replays tests/fuzz/corpus/perf_ring/ through the perf_ring fuzz target (see
// tests/fuzz/fuzz.hpp).
#define TRACEKIT_FUZZ_REPLAY
#include "../../fuzz/perf_ring_fuzz.cpp"

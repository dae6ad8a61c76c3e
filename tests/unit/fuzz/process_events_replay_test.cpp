// Replays tests/fuzz/corpus/process_events/ through the process_events fuzz target (see
// tests/fuzz/fuzz.hpp).
#define TRACEKIT_FUZZ_REPLAY
#include "../../fuzz/process_events_fuzz.cpp"

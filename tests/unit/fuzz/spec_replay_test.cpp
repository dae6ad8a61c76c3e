// Replays tests/fuzz/corpus/spec/ through the spec fuzz target (see
// tests/fuzz/fuzz.hpp).
#define TRACEKIT_FUZZ_REPLAY
#include "../../fuzz/spec_fuzz.cpp"

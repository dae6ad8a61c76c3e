// Replays tests/fuzz/corpus/ldconfig/ through the ldconfig fuzz target (see
// tests/fuzz/fuzz.hpp).
#define TRACEKIT_FUZZ_REPLAY
#include "../../fuzz/ldconfig_fuzz.cpp"

// Replays tests/fuzz/corpus/match/ through the match fuzz target (see
// tests/fuzz/fuzz.hpp).
#define TRACEKIT_FUZZ_REPLAY
#include "../../fuzz/match_fuzz.cpp"

// Replays tests/fuzz/corpus/strings/ through the strings fuzz target (see
// tests/fuzz/fuzz.hpp).
#define TRACEKIT_FUZZ_REPLAY
#include "../../fuzz/strings_fuzz.cpp"

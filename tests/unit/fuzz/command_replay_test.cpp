// Replays tests/fuzz/corpus/command/ through the command fuzz target (see
// tests/fuzz/fuzz.hpp).
#define TRACEKIT_FUZZ_REPLAY
#include "../../fuzz/command_fuzz.cpp"

// Replays tests/fuzz/corpus/definition/ through the definition fuzz target (see
// tests/fuzz/fuzz.hpp).
#define TRACEKIT_FUZZ_REPLAY
#include "../../fuzz/definition_fuzz.cpp"

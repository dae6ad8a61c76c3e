// Replays tests/fuzz/corpus/kallsyms/ through the kallsyms fuzz target (see
// tests/fuzz/fuzz.hpp).
#define TRACEKIT_FUZZ_REPLAY
#include "../../fuzz/kallsyms_fuzz.cpp"

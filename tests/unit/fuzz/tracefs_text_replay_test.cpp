// Replays tests/fuzz/corpus/tracefs_text/ through the tracefs_text fuzz target (see
// tests/fuzz/fuzz.hpp).
#define TRACEKIT_FUZZ_REPLAY
#include "../../fuzz/tracefs_text_fuzz.cpp"

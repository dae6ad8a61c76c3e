// Replays tests/fuzz/corpus/event_text/ through the event_text fuzz target (see
// tests/fuzz/fuzz.hpp).
#define TRACEKIT_FUZZ_REPLAY
#include "../../fuzz/event_text_fuzz.cpp"

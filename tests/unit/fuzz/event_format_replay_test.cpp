// Replays tests/fuzz/corpus/event_format/ through the event_format fuzz target (see
// tests/fuzz/fuzz.hpp).
#define TRACEKIT_FUZZ_REPLAY
#include "../../fuzz/event_format_fuzz.cpp"

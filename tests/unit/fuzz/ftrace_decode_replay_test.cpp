// Replays tests/fuzz/corpus/ftrace_decode/ through the ftrace_decode fuzz target (see
// tests/fuzz/fuzz.hpp).
#define TRACEKIT_FUZZ_REPLAY
#include "../../fuzz/ftrace_decode_fuzz.cpp"

// Replays tests/fuzz/corpus/kernel_functions/ through the kernel_functions fuzz target (see
// tests/fuzz/fuzz.hpp).
#define TRACEKIT_FUZZ_REPLAY
#include "../../fuzz/kernel_functions_fuzz.cpp"

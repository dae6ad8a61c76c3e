// libtraceevent's kbuffer.h (the ring buffer sub-buffer parser) for C++:
// the header has no extern "C" of its own, so its functions would otherwise
// be looked up under C++ mangled names and fail to link. Include this, never
// <traceevent/kbuffer.h> directly.
#pragma once

extern "C" {
#include <traceevent/kbuffer.h>
}

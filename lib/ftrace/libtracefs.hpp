// libtracefs 1.6.4 (and kbuffer) for C++: include this, never <tracefs.h>
// directly. Two problems with the plain header, fixed here in one place:
//
// - tracefs.h has no extern "C": its functions would be looked up under C++
//   mangled names and fail to link.
// - tracefs.h defines an inline tracefs_hist_start() that passes a plain 0
//   to the enum tracefs_hist_command parameter of tracefs_hist_command(),
//   which C++ rejects. The shim below is a C++ overload taking an int,
//   declared before the header so that call resolves to it; it converts and
//   calls the real (C linkage) function.
//
// tracefs.h includes <event-parse.h> without its directory, so the build
// must add `pkg-config --cflags libtracefs` (-I/usr/include/tracefs
// -I/usr/include/traceevent) to CPPFLAGS.
#pragma once

#if !__has_include(<event-parse.h>)
#error "tracefs.h needs $(pkg-config --cflags libtracefs) (-I/usr/include/traceevent) in CPPFLAGS"
#endif

#include "ftrace/kbuffer.hpp"

struct tracefs_instance;
struct tracefs_hist;

// The shim for tracefs_hist_start(): C++ linkage, an int command.
inline int tracefs_hist_command(tracefs_instance* instance, tracefs_hist* hist, int command);

extern "C" {
#include <tracefs/tracefs.h>
}

inline int tracefs_hist_command(tracefs_instance* instance, tracefs_hist* hist, int command) {
  return tracefs_hist_command(instance, hist, static_cast<enum tracefs_hist_command>(command));
}

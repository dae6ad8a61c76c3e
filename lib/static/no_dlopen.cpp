// Linked into build/static/tracekit only (make static): dlopen() always
// fails there.
//
// Why: in a static glibc binary dlopen() still works, by loading the host's
// libc.so.6 and ld.so beside the glibc linked in, whose internal structures
// must then be those of the same glibc version (the linker's warning:
// "Using 'dlopen' in statically linked applications requires at runtime the
// shared libraries from the glibc version used for linking"). On the hosts
// this binary is for (other distributions, older releases) they are not.
// Two callers are linked in:
//  - libdw's debuginfod client (libdwfl/debuginfod-client.c, elfutils 0.188):
//    whenever dwfl_standard_find_debuginfo finds no local debuginfo for a
//    module, it dlopen()s libdebuginfod.so.1, unconditionally (the library
//    then reads DEBUGINFOD_URLS). Measured on the build machine with a
//    static test program: libdebuginfod.so.1, libcurl-gnutls, libcrypto,
//    the Kerberos libraries and libc.so.6 + ld-linux-x86-64.so.2 were
//    mapped. With this stub nothing is loaded and libdwfl carries on without
//    debuginfod, as it does on a host without libdebuginfod.
//  - libtraceevent's plugin loader (tep_load_plugins), which tracekit never
//    calls.
// glibc's own loading (iconv's gconv modules, NSS) goes through
// __libc_dlopen_mode, not this symbol; tracekit uses neither.
#include <dlfcn.h>

extern "C" void* dlopen(const char* /*file*/, int /*mode*/) noexcept {
  return nullptr;
}

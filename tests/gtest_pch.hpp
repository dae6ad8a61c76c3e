// Precompiled for every test object (Makefile: PCH): GoogleTest and
// GoogleMock, which every test includes, parsed once per build instead of
// once per file.
// (No include guard: it is only ever the precompiled header, or included once with -include.)

#include <gmock/gmock.h>
#include <gtest/gtest.h>

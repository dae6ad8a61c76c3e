// Recorded inputs for unit tests: files under tests/fixtures (the directory
// TRACEKIT_FIXTURES names instead, when set; tests run from the repository
// root).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "util/strings.hpp"

namespace tracekit::testing {

// tests/fixtures/<name>'s text; "" (and a failed expectation) when unreadable.
inline std::string fixture(const std::string& name) {
  const char* dir = std::getenv("TRACEKIT_FIXTURES");
  std::string path = std::string(dir ? dir : "tests/fixtures") + "/" + name;
  auto text = read_file(path);
  EXPECT_TRUE(text.ok()) << path << " (run from the repository root)";
  return text ? *text : std::string();
}

}  // namespace tracekit::testing

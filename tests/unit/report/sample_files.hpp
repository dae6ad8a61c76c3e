// TRACEKIT_WRITE_SAMPLES=DIR: the renderers' golden tests also write what they
// rendered into DIR, so that checks that need a real reader can read exactly
// the text the goldens pin (tests/browser: speedscope's own importer in
// Chromium, a JSON schema check). Unset, nothing is written.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace tracekit::report::testing {

// The line of text that holds key, without its indent.
inline std::string line_with(const std::string& text, const std::string& key) {
  size_t at = text.find(key);
  if (at == std::string::npos) return "";
  size_t begin = text.rfind('\n', at) + 1;
  size_t end = text.find('\n', at);
  std::string line = text.substr(begin, end - begin);
  return line.substr(line.find_first_not_of(' '));
}

inline void write_sample_file(const std::string& name, const std::string& text) {
  const char* dir = std::getenv("TRACEKIT_WRITE_SAMPLES");
  if (dir == nullptr || *dir == '\0') return;
  std::string path = std::string(dir) + "/" + name;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  EXPECT_TRUE(f) << "cannot write " << path;
}

}  // namespace tracekit::report::testing

// A fake tracefs tree for the tracefs unit tests: a temp directory with
// instances/ and events/ in it (the two directories Instance::create and
// ProbeGroup::open need), whose control files a test creates with put().
// Every write made while it lives is recorded (record_writes) in log.
// Removed at the end.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tracefs/instance.hpp"

namespace tracekit::tracefs {

class FakeTree {
 public:
  FakeTree() {
    char tmpl[] = "/tmp/tracekit_fake_XXXXXX";
    dir_ = mkdtemp(tmpl);
    std::filesystem::create_directories(dir_ + "/instances");
    std::filesystem::create_directories(dir_ + "/events");
    record_writes(&log);
  }
  ~FakeTree() {
    record_writes(nullptr);
    std::filesystem::remove_all(dir_);
  }
  FakeTree(const FakeTree&) = delete;
  FakeTree& operator=(const FakeTree&) = delete;

  const std::string& dir() const { return dir_; }
  // Creates dir/rel (and its parents) holding content.
  void put(const std::string& rel, const std::string& content) const {
    std::filesystem::create_directories(std::filesystem::path(dir_ + "/" + rel).parent_path());
    std::ofstream(dir_ + "/" + rel) << content;
  }
  // Creates the directory dir/rel (and its parents).
  void mkdir(const std::string& rel) const {
    std::filesystem::create_directories(dir_ + "/" + rel);
  }
  std::string get(const std::string& rel) const {
    std::ifstream in(dir_ + "/" + rel);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  bool has(const std::string& rel) const { return std::filesystem::exists(dir_ + "/" + rel); }
  // The log with dir() replaced by "T", so expectations read short.
  std::vector<std::string> writes() const {
    std::vector<std::string> out;
    for (auto l : log) {
      for (size_t p; (p = l.find(dir_)) != std::string::npos;) l.replace(p, dir_.size(), "T");
      out.push_back(l);
    }
    return out;
  }
  std::vector<std::string> log;  // as recorded, with the real paths

 private:
  std::string dir_;
};

}  // namespace tracekit::tracefs

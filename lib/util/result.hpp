// Error values for library code. Library functions never print or exit: they
// return a Result<T> (a value or an Error) and only a tool's main decides what
// to print and which exit code to use. Errors carry errno, the file touched
// and a hint.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace tracekit {

// What kind of failure an Error is, where a caller acts on it (not only
// prints it).
enum class ErrorKind {
  kFailure,  // anything else
  kNoMatch,  // a pattern matched nothing (probe::no_match_error: "0 functions matched by ...")
};

struct Error {
  int err = 0;          // errno value, 0 when the failure is not a system error
  std::string message;  // what failed, e.g. "cannot open perf event"
  std::string path;     // the file or object touched, may be empty
  std::string hint;     // what the user can do, e.g. "run as root", may be empty
  ErrorKind kind = ErrorKind::kFailure;

  // "message: path: strerror(err) (hint)", leaving out the empty parts.
  std::string str() const;

  // Builds an Error from the current errno.
  static Error from_errno(std::string message, std::string path = {}, std::string hint = {});
};

// A value or an Error. Accessing value() of an error (or error() of a value)
// is a programming mistake and asserts.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error e) : v_(std::move(e)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<1>(v_);
  }

 private:
  std::variant<T, Error> v_;
};

// Success or an Error, for operations with nothing to return.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error e) : e_(std::move(e)) {}

  bool ok() const { return !e_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    assert(!ok());
    return *e_;
  }

 private:
  std::optional<Error> e_;
};

using Status = Result<void>;

}  // namespace tracekit

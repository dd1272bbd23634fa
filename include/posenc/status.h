// posenc/status.h: the result of every public call.
//
// A call either succeeds (ok()) or fails before writing anything; the message names the offending
// argument and its value, e.g. "rotary_dim = 7: must be even". No public function throws.
#ifndef POSENC_STATUS_H_
#define POSENC_STATUS_H_

#include "posenc/export.h"

#include <string>
#include <utility>

namespace posenc {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument = 1,  // an argument is malformed (null pointer, bad size, bad stride, ...)
  kOutOfRange = 2,       // a position lies outside a table or cache
  kUnsupported = 3,      // well-formed but not implemented (e.g. a dtype not yet supported)
  kInternal = 4,         // an unexpected failure inside the library (e.g. out of memory)
};

// [[nodiscard]]: every ignored Status is a compiler warning (an error with POSENC_WERROR=ON); a
// caller that means to drop one casts it to void and says why.
class [[nodiscard]] Status {
 public:
  Status() = default;
  // Never throws: if the message cannot be stored (out of memory) the Status keeps its code and
  // carries no message.
  Status(StatusCode code, std::string message) noexcept
      : code_(code), message_(NewMessage(std::move(message))) {}
  Status(const Status& other)
      : code_(other.code_),
        message_(other.message_ ? new std::string(*other.message_) : nullptr) {}
  Status(Status&& other) noexcept : code_(other.code_), message_(other.message_) {
    other.code_ = StatusCode::kOk;
    other.message_ = nullptr;
  }
  Status& operator=(const Status& other) {
    if (this != &other) *this = Status(other);
    return *this;
  }
  Status& operator=(Status&& other) noexcept {
    if (this != &other) {
      delete message_;
      code_ = other.code_;
      message_ = other.message_;
      other.code_ = StatusCode::kOk;
      other.message_ = nullptr;
    }
    return *this;
  }
  ~Status() { delete message_; }

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_ ? *message_ : EmptyMessage(); }

 private:
  // The message lives on the heap, and only when it is not empty: a success is a code and a null
  // pointer, so creating, moving, testing and destroying one (every validation step of every
  // call does) costs a store or a compare, where an inline std::string cost about ten
  // instructions each time (docs/performance.md section 3.25).
  // The throwing new (in a try), not new (std::nothrow): a program that replaces the global
  // operator new and delete (as tests/entry_checks_test.cc does) must see this allocation go
  // through its own pair, and sanitizers check that the pair matches.
  static std::string* NewMessage(std::string&& message) noexcept {
    if (message.empty()) return nullptr;
    try {
      return new std::string(std::move(message));
    } catch (...) {
      return nullptr;
    }
  }
  static const std::string& EmptyMessage() noexcept {
    static const std::string empty;
    return empty;
  }
  StatusCode code_ = StatusCode::kOk;
  std::string* message_ = nullptr;
};

// Short name of a code ("ok", "invalid_argument", ...).
POSENC_API const char* StatusCodeName(StatusCode code);

}  // namespace posenc

#endif  // POSENC_STATUS_H_

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
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Short name of a code ("ok", "invalid_argument", ...).
POSENC_API const char* StatusCodeName(StatusCode code);

}  // namespace posenc

#endif  // POSENC_STATUS_H_

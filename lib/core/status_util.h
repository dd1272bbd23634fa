// Internal: building and forwarding Status values, shared by every layer that reports errors
// (lib/api validation, lib/freqs configuration parsing).
#ifndef POSENC_LIB_CORE_STATUS_UTIL_H_
#define POSENC_LIB_CORE_STATUS_UTIL_H_

#include <sstream>

#include "posenc/status.h"

namespace posenc {
namespace core {

// Builds a message from streamable parts: Err(StatusCode::kInvalidArgument, "q.shape[0] = ", n).
// Doubles print with 17 significant digits, so a message names the exact value.
template <typename... Parts>
Status Err(StatusCode code, const Parts&... parts) {
  std::ostringstream os;
  os.precision(17);
  (os << ... << parts);
  return Status(code, os.str());
}

}  // namespace core
}  // namespace posenc

// Returns the Status of `expr` from the enclosing function unless it is ok.
#define POSENC_RETURN_IF_ERROR(expr) \
  do {                               \
    ::posenc::Status _st = (expr);   \
    if (!_st.ok()) return _st;       \
  } while (0)

#endif  // POSENC_LIB_CORE_STATUS_UTIL_H_

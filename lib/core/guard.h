// Internal: the exception barrier of every public entry point. No exception leaves posenc.
#ifndef POSENC_LIB_CORE_GUARD_H_
#define POSENC_LIB_CORE_GUARD_H_

#include <new>
#include <string>

#include "posenc/status.h"

namespace posenc {
namespace core {

// Returns body(), or kInternal when it throws (out of memory, or anything unexpected).
template <class Body>
Status Guarded(const char* what, const Body& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kInternal, std::string("out of memory in ") + what);
  } catch (...) {
    return Status(StatusCode::kInternal, std::string("unexpected exception in ") + what);
  }
}

}  // namespace core

// The public entries (lib/api) and the oracles spell it api::Guarded.
namespace api {
using core::Guarded;
}  // namespace api
}  // namespace posenc

#endif  // POSENC_LIB_CORE_GUARD_H_

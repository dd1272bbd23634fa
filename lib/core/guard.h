// Internal: the exception barrier of every public entry point (C++ and C). No exception leaves
// posenc; this header holds the only try/catch that turns one into a result.
#ifndef POSENC_LIB_CORE_GUARD_H_
#define POSENC_LIB_CORE_GUARD_H_

#include <new>
#include <string>

#include "posenc/status.h"

namespace posenc {
namespace core {

// The kInternal Status "<prefix><what>". Building the message allocates; if that fails too, the
// Status carries no message rather than throw from inside a handler.
inline Status ExceptionStatus(const char* prefix, const char* what) noexcept {
  try {
    return Status(StatusCode::kInternal, std::string(prefix) + what);
  } catch (...) {
    return Status(StatusCode::kInternal, std::string());
  }
}

// Returns body(); when it throws (out of memory, or anything unexpected), returns
// on_exception(the kInternal Status naming `what`) instead. on_exception must not throw.
template <class Body, class OnException>
auto GuardedWith(const char* what, const Body& body, const OnException& on_exception)
    -> decltype(body()) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return on_exception(ExceptionStatus("out of memory in ", what));
  } catch (...) {
    return on_exception(ExceptionStatus("unexpected exception in ", what));
  }
}

// Entries returning Status: body()'s Status, or the kInternal one.
template <class Body>
Status Guarded(const char* what, const Body& body) {
  return GuardedWith(what, body, [](Status st) { return st; });
}

// Entries returning a value with no error channel (target names, lists, sizes): body(), or
// `fallback` (the value the entry documents for failure) when it throws.
template <class T, class Body>
T GuardedOr(const char* what, const T& fallback, const Body& body) {
  return GuardedWith(what, body, [&fallback](const Status&) { return fallback; });
}

}  // namespace core

// The public entries (lib/api) and the oracles spell it api::Guarded.
namespace api {
using core::Guarded;
using core::GuardedOr;
}  // namespace api
}  // namespace posenc

#endif  // POSENC_LIB_CORE_GUARD_H_
